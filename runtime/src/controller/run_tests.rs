//! [`super::run`] with its queue in front of kube-runtime's applier: every request of a burst is
//! reconciled, a change during a reconcile reconciles again, a request for an object not in the
//! store does not hold up the others, and a reconcile's requeue and a failure's retry come back
//! after their delays.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::mpsc;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::Event;
use tokio_util::sync::CancellationToken;

use super::{Never, Reconciler, Triggers, run};

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// Counts a reconcile of `object` in `reconciles`: its name and how many it has had, this one
/// included.
fn count_reconcile(
    reconciles: &Mutex<BTreeMap<String, usize>>,
    object: &ConfigMap,
) -> (String, usize) {
    let name = object.metadata.name.clone().unwrap_or_default();
    let mut reconciles = reconciles.lock().expect("reconciles");
    let count = reconciles.entry(name.clone()).or_default();
    *count += 1;
    (name, *count)
}

/// Counts its reconciles per object, each taking 10 ms; when it reconciles `again` the first
/// time, it sends one more request for it (a change arriving during the reconcile).
struct Counting {
    reconciles: Mutex<BTreeMap<String, usize>>,
    again: mpsc::UnboundedSender<ObjectRef<ConfigMap>>,
}

impl Reconciler for Counting {
    type Object = ConfigMap;
    type Error = Never;
    const NAME: &'static str = "queue-test";

    async fn reconcile(&self, object: Arc<ConfigMap>) -> Result<Action, Never> {
        let (name, count) = count_reconcile(&self.reconciles, &object);
        if name == "again" && count == 1 {
            let _ = self
                .again
                .unbounded_send(ObjectRef::new("again").within("default"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok(Action::await_change())
    }

    fn retry_after(&self, _: &Never) -> Duration {
        Duration::from_secs(1)
    }

    fn concurrency(&self) -> u16 {
        2
    }
}

#[tokio::test(start_paused = true)]
async fn a_burst_is_reconciled_once_each_a_change_during_a_reconcile_again_and_a_gone_object_holds_nothing_up()
 {
    let (store, mut writer) = reflector::store();
    writer.apply_watcher_event(&Event::Init);
    let names: Vec<String> = (0..300).map(|n| format!("object-{n}")).collect();
    for name in names.iter().map(String::as_str).chain(["again"]) {
        writer.apply_watcher_event(&Event::InitApply(config_map(name)));
    }
    writer.apply_watcher_event(&Event::InitDone);
    let (again, requests) = mpsc::unbounded();
    let counting = Arc::new(Counting {
        reconciles: Mutex::default(),
        again: again.clone(),
    });
    // More missing objects than the queue hands on at once, then the stored ones twice over.
    for n in 0..40 {
        again
            .unbounded_send(ObjectRef::new(&format!("missing-{n}")).within("default"))
            .expect("send");
    }
    for name in names
        .iter()
        .chain(names.iter())
        .map(String::as_str)
        .chain(["again"])
    {
        again
            .unbounded_send(ObjectRef::new(name).within("default"))
            .expect("send");
    }
    let triggers = Triggers::for_stream(futures::stream::pending(), store).reconcile_on(requests);
    let stop = CancellationToken::new();
    let running = tokio::spawn(run(
        triggers,
        counting.clone(),
        stop.clone(),
        Arc::new(crate::metrics::Metrics::new("test")),
    ));
    // 301 objects of 10 ms each, two at a time, plus the second "again": well within 5 s.
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop.cancel();
    running.await.expect("the controller stops");
    let reconciles = counting.reconciles.lock().expect("reconciles").clone();
    assert_eq!(reconciles.len(), 301, "every stored object");
    for (name, count) in &reconciles {
        let expected = if name == "again" { 2 } else { 1 };
        assert_eq!(*count, expected, "{name}");
    }
}

/// Asks for "periodic" again after a second until its third reconcile, and fails "failing" once.
struct Requeueing {
    reconciles: Mutex<BTreeMap<String, usize>>,
}

impl Reconciler for Requeueing {
    type Object = ConfigMap;
    type Error = Never;
    const NAME: &'static str = "requeue-test";

    async fn reconcile(&self, object: Arc<ConfigMap>) -> Result<Action, Never> {
        let (name, count) = count_reconcile(&self.reconciles, &object);
        match name.as_str() {
            "periodic" if count < 3 => Ok(Action::requeue(Duration::from_secs(1))),
            "failing" if count == 1 => Err(Never),
            _ => Ok(Action::await_change()),
        }
    }

    fn retry_after(&self, _: &Never) -> Duration {
        Duration::from_secs(2)
    }
}

#[tokio::test(start_paused = true)]
async fn requeues_and_retries_come_back_through_the_applier() {
    let (store, mut writer) = reflector::store();
    writer.apply_watcher_event(&Event::Init);
    for name in ["periodic", "failing", "quiet"] {
        writer.apply_watcher_event(&Event::InitApply(config_map(name)));
    }
    writer.apply_watcher_event(&Event::InitDone);
    let (requests, triggered) = mpsc::unbounded();
    for name in ["periodic", "failing", "quiet"] {
        requests
            .unbounded_send(ObjectRef::new(name).within("default"))
            .expect("send");
    }
    let requeueing = Arc::new(Requeueing {
        reconciles: Mutex::default(),
    });
    let triggers = Triggers::for_stream(futures::stream::pending(), store).reconcile_on(triggered);
    let stop = CancellationToken::new();
    let running = tokio::spawn(run(
        triggers,
        requeueing.clone(),
        stop.clone(),
        Arc::new(crate::metrics::Metrics::new("test")),
    ));
    let counts = || requeueing.reconciles.lock().expect("reconciles").clone();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        counts(),
        BTreeMap::from([
            ("failing".to_owned(), 1),
            ("periodic".to_owned(), 1),
            ("quiet".to_owned(), 1)
        ])
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(
        counts(),
        BTreeMap::from([
            ("failing".to_owned(), 2),
            ("periodic".to_owned(), 3),
            ("quiet".to_owned(), 1)
        ])
    );
    stop.cancel();
    running.await.expect("the controller stops");
}
