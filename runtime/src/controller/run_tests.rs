//! [`super::run`] with its queue in front of kube-runtime's applier: every request of a burst is
//! reconciled, a change during a reconcile reconciles again, a request for an object not in the
//! store does not hold up the others.

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
        let name = object.metadata.name.clone().unwrap_or_default();
        let first = {
            let mut reconciles = self.reconciles.lock().expect("reconciles");
            let count = reconciles.entry(name.clone()).or_default();
            *count += 1;
            *count == 1
        };
        if name == "again" && first {
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
