use futures::channel::mpsc;
use futures::{FutureExt as _, StreamExt as _};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::controller::{ReconcileReason, ReconcileRequest};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;

use super::{Gated, KEPT_CAPACITY, Queue, hand_on_limit};

type Item = Result<ReconcileRequest<ConfigMap>, watcher::Error>;
type Sender = mpsc::UnboundedSender<Item>;

/// A queue handing on `limit`, its gated stream, and the sender of its triggers.
fn gated_queue(
    limit: usize,
) -> (
    Sender,
    Queue<ConfigMap>,
    Gated<ConfigMap, mpsc::UnboundedReceiver<Item>>,
) {
    let (sender, receiver) = mpsc::unbounded();
    let queue = Queue::new(limit);
    let gated = queue.gate(receiver);
    (sender, queue, gated)
}

/// Sends a request for each of `names` to the triggers.
fn send(sender: &Sender, names: &[&str]) {
    for name in names {
        sender.unbounded_send(request(name)).expect("send");
    }
}

fn reference(name: &str) -> ObjectRef<ConfigMap> {
    ObjectRef::new(name).within("default")
}

fn request(name: &str) -> Item {
    Ok(ReconcileRequest {
        obj_ref: reference(name),
        reason: ReconcileReason::Unknown,
    })
}

/// The names the gated stream yields now, without waiting.
fn ready_names(
    gated: &mut (impl futures::Stream<Item = Item> + Unpin),
) -> Vec<Result<String, String>> {
    let mut names = Vec::new();
    while let Some(Some(item)) = gated.next().now_or_never() {
        names.push(
            item.map(|request| request.obj_ref.name)
                .map_err(|error| error.to_string()),
        );
    }
    names
}

fn oks(names: &[&str]) -> Vec<Result<String, String>> {
    names.iter().map(|name| Ok((*name).to_owned())).collect()
}

#[test]
fn hands_on_at_most_the_limit_until_reconciles_start_in_order_of_arrival() {
    let (sender, queue, mut gated) = gated_queue(2);
    send(&sender, &["a", "b", "c", "d"]);
    assert_eq!(ready_names(&mut gated), oks(&["a", "b"]));
    queue.started(&reference("b"));
    assert_eq!(ready_names(&mut gated), oks(&["c"]));
    queue.started(&reference("a"));
    queue.started(&reference("c"));
    assert_eq!(ready_names(&mut gated), oks(&["d"]));
}

#[test]
fn a_request_for_a_waiting_or_handed_on_object_is_merged_and_taken_again_once_it_started() {
    let (sender, queue, mut gated) = gated_queue(1);
    send(&sender, &["a", "b", "a", "b", "a"]);
    assert_eq!(ready_names(&mut gated), oks(&["a"]));
    // "a" is handed on, "b" waits once.
    send(&sender, &["a", "b"]);
    assert_eq!(ready_names(&mut gated), oks(&[]));
    queue.started(&reference("a"));
    assert_eq!(ready_names(&mut gated), oks(&["b"]));
    // "a" is being reconciled: a change now is a new request, handed on after "b" started.
    send(&sender, &["a"]);
    assert_eq!(ready_names(&mut gated), oks(&[]));
    queue.started(&reference("b"));
    assert_eq!(ready_names(&mut gated), oks(&["a"]));
    assert_eq!(queue.sizes().0, 0, "nothing waits");
}

#[test]
fn a_failing_watch_is_reported_at_once_even_when_requests_wait() {
    let (sender, _queue, mut gated) = gated_queue(1);
    send(&sender, &["a", "b"]);
    sender
        .unbounded_send(Err(watcher::Error::NoResourceVersion))
        .expect("send");
    let items = ready_names(&mut gated);
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(items.iter().any(|item| item.is_err()), "{items:?}");
    assert!(items.contains(&Ok("a".to_owned())), "{items:?}");
}

#[test]
fn a_burst_is_given_back_once_it_drained_and_the_handed_on_set_stays_at_the_limit() {
    let limit = hand_on_limit(1);
    let (sender, queue, mut gated) = gated_queue(limit);
    for n in 0..5_000 {
        sender
            .unbounded_send(request(&format!("o-{n}")))
            .expect("send");
    }
    let mut seen = 0;
    loop {
        let names = ready_names(&mut gated);
        if names.is_empty() {
            break;
        }
        let (waiting, capacity, handed_on) = queue.sizes();
        assert!(handed_on <= limit, "{handed_on} handed on");
        if seen == 0 {
            assert!(
                waiting >= 5_000 - limit && capacity >= waiting,
                "{waiting}/{capacity}"
            );
        }
        for name in names {
            queue.started(&reference(&name.expect("no error")));
            seen += 1;
        }
    }
    assert_eq!(seen, 5_000);
    let (waiting, capacity, handed_on) = queue.sizes();
    assert_eq!((waiting, handed_on), (0, 0));
    assert!(capacity <= KEPT_CAPACITY, "capacity {capacity} kept");
}

#[test]
fn the_stream_ends_when_its_triggers_end_and_nothing_waits() {
    let (sender, queue, mut gated) = gated_queue(1);
    send(&sender, &["a", "b"]);
    drop(sender);
    assert_eq!(ready_names(&mut gated), oks(&["a"]));
    queue.started(&reference("a"));
    assert_eq!(ready_names(&mut gated), oks(&["b"]));
    assert!(matches!(gated.next().now_or_never(), Some(None)), "ended");
}

#[test]
fn a_request_merged_into_one_whose_object_was_not_found_waits_again_first_in_line() {
    let (sender, queue, mut gated) = gated_queue(1);
    send(&sender, &["late", "gone", "next"]);
    assert_eq!(ready_names(&mut gated), oks(&["late"]));
    // The applier's lookup of "late" missed; its watch then saw it created, and the request for
    // it merged into the handed-on one before the miss was reported.
    send(&sender, &["late"]);
    assert_eq!(ready_names(&mut gated), oks(&[]));
    queue.not_found(&reference("late"));
    assert_eq!(ready_names(&mut gated), oks(&["late"]));
    queue.started(&reference("late"));
    // No request came for "gone" after its miss: it is not asked for again.
    assert_eq!(ready_names(&mut gated), oks(&["gone"]));
    queue.not_found(&reference("gone"));
    assert_eq!(ready_names(&mut gated), oks(&["next"]));
    queue.started(&reference("next"));
    assert_eq!(ready_names(&mut gated), oks(&[]));
    let (waiting, _, handed_on) = queue.sizes();
    assert_eq!(
        (waiting, handed_on),
        (0, 0),
        "nothing waits or is handed on"
    );
}
