//! Dynamic watches on the kinds the applier has applied: a change of an applied object (spec,
//! labels, annotations or status; not a bare `resourceVersion` bump) or its deletion enqueues the
//! ManagedResource named by its origin annotation, so hand edits are reverted, deleted objects
//! re-created and health re-evaluated without waiting for the sync period.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedSender;
use kube::core::DynamicObject;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use seedlet_api::names::managed_resources;
use seedlet_api::resources::ManagedResource;

use super::apply::{Resolved, parse_origin};

/// The set of running kind watches; dropping it stops them.
pub struct Watches {
    client: Client,
    sender: UnboundedSender<ObjectRef<ManagedResource>>,
    stop: CancellationToken,
    started: Mutex<HashMap<String, tokio::task::JoinHandle<()>>>,
}

impl Watches {
    /// Watches that enqueue into `sender` until `stop` is cancelled (or this value is dropped).
    pub fn new(
        client: Client,
        sender: UnboundedSender<ObjectRef<ManagedResource>>,
        stop: CancellationToken,
    ) -> Self {
        Self {
            client,
            sender,
            stop,
            started: Mutex::new(HashMap::new()),
        }
    }

    /// Starts a cluster-wide watch on `resolved`'s kind unless one runs.
    pub fn ensure(&self, resolved: &Resolved) {
        let key = format!(
            "{}/{}",
            resolved.resource.api_version, resolved.resource.kind
        );
        let mut started = self
            .started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if started.get(&key).is_some_and(|task| !task.is_finished()) {
            return;
        }
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &resolved.resource);
        let task = tokio::spawn(watch_kind(api, self.sender.clone(), self.stop.clone()));
        started.insert(key, task);
    }

    /// Number of kinds watched.
    pub fn len(&self) -> usize {
        self.started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// Whether no kind is watched.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for Watches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watches")
            .field("kinds", &self.len())
            .finish_non_exhaustive()
    }
}

impl Drop for Watches {
    fn drop(&mut self) {
        let started = self
            .started
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for task in started.values() {
            task.abort();
        }
    }
}

async fn watch_kind(
    api: Api<DynamicObject>,
    sender: UnboundedSender<ObjectRef<ManagedResource>>,
    stop: CancellationToken,
) {
    let mut events = std::pin::pin!(
        watcher(api, watcher::Config::default()).backoff(seedlet_runtime::watch::watch_backoff())
    );
    let mut seen: HashMap<String, u64> = HashMap::new();
    loop {
        let event = tokio::select! {
            () = stop.cancelled() => return,
            event = events.next() => event,
        };
        let Some(event) = event else { return };
        let (object, deleted, initial) = match event {
            Ok(watcher::Event::Apply(object)) => (object, false, false),
            Ok(watcher::Event::InitApply(object)) => (object, false, true),
            Ok(watcher::Event::Delete(object)) => (object, true, false),
            Ok(watcher::Event::Init | watcher::Event::InitDone) => continue,
            Err(error) => {
                tracing::debug!(error = %seedlet_runtime::error_chain(&error), "watch of applied kind failed, retrying");
                continue;
            }
        };
        let Some(target) = owner(&object) else {
            continue;
        };
        let uid = object.uid().unwrap_or_else(|| object.name_any());
        if deleted {
            seen.remove(&uid);
            send(&sender, target);
            continue;
        }
        let fingerprint = fingerprint(&object);
        let previous = seen.insert(uid, fingerprint);
        // The initial list only records fingerprints: the applier reconciles every MR on start.
        if !initial && previous != Some(fingerprint) {
            send(&sender, target);
        }
    }
}

fn send(sender: &UnboundedSender<ObjectRef<ManagedResource>>, target: ObjectRef<ManagedResource>) {
    // A closed channel means the controller stopped; the watch ends with the stop token.
    let _ = sender.unbounded_send(target);
}

/// The ManagedResource an applied object belongs to, from its origin annotation.
pub fn owner(object: &DynamicObject) -> Option<ObjectRef<ManagedResource>> {
    let origin = object.annotations().get(managed_resources::ORIGIN)?;
    let (namespace, name) = parse_origin(origin)?;
    Some(ObjectRef::new(name).within(namespace))
}

/// A hash of everything but `resourceVersion` and `managedFields`, so that no-op writes do not
/// enqueue.
pub fn fingerprint(object: &DynamicObject) -> u64 {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("resourceVersion");
        metadata.remove("managedFields");
    }
    let mut hasher = DefaultHasher::new();
    value.to_string().hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(origin: Option<&str>, resource_version: &str, data: &str) -> DynamicObject {
        let mut annotations = serde_json::Map::new();
        if let Some(origin) = origin {
            annotations.insert(managed_resources::ORIGIN.into(), origin.into());
        }
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "n", "resourceVersion": resource_version, "annotations": annotations},
            "data": {"k": data}
        }))
        .unwrap()
    }

    #[test]
    fn owner_maps_origin_annotation_to_managed_resource() {
        let target = owner(&object(Some("garden/ci-1"), "1", "v")).unwrap();
        assert_eq!(target.name, "ci-1");
        assert_eq!(target.namespace.as_deref(), Some("garden"));
        assert!(owner(&object(None, "1", "v")).is_none());
    }

    #[test]
    fn fingerprint_ignores_resource_version_but_not_data() {
        let a = fingerprint(&object(Some("garden/x"), "1", "v"));
        assert_eq!(a, fingerprint(&object(Some("garden/x"), "2", "v")));
        assert_ne!(a, fingerprint(&object(Some("garden/x"), "2", "w")));
    }
}
