//! Object storage: JSON objects per resource, one global resourceVersion, the event history watches
//! replay, and the live event channels: one for all events (the built-in controllers) and one per
//! watched resource and namespace, so a write wakes only the watches that can want it. Objects are
//! also indexed by label, so lists with `key=value` selectors read only the matching objects.

mod labels;
mod persist;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use labels::LabelIndex;
pub use persist::{PersistError, write_private};

use crate::resources::{Registry, ResourceType};

/// How many events the history keeps for watch replay before answering 410 Gone.
pub const HISTORY_CAPACITY: usize = 20_000;
/// Buffer of the channel of all events; a subscriber lagging further behind must catch up another way
/// (the controllers rebuild their index).
const CHANNEL_CAPACITY: usize = 16_384;
/// Buffer of each watch channel (one resource in one namespace or in all). A watch lagging further
/// behind its own resource is closed and the client re-watches from its last resourceVersion. The
/// buffer is allocated up front, so it is smaller than the all-events one.
const WATCH_CHANNEL_CAPACITY: usize = 4_096;

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Removed.
    Deleted,
}

impl EventType {
    /// The watch event type string.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change to one object.
#[derive(Debug)]
pub struct Event {
    /// The resourceVersion the change got.
    pub rv: u64,
    /// Storage key of the resource (`plural.group`).
    pub resource: String,
    /// What happened.
    pub kind: EventType,
    /// The object after the change (for deletions: the last state, carrying the deletion's resourceVersion).
    pub object: Arc<Value>,
    /// The object before the change (modifications only).
    pub previous: Option<Arc<Value>>,
}

/// Namespace + name of an object.
pub type ObjectKey = (String, String);

/// Everything that is stored; guarded by the store's lock.
pub struct State {
    rv: u64,
    objects: HashMap<String, BTreeMap<ObjectKey, Arc<Value>>>,
    labels: LabelIndex,
    history: VecDeque<Arc<Event>>,
    /// Events with an rv above this are all in `history`.
    history_floor: u64,
    registry: Arc<Registry>,
    rbac_rv: u64,
    sender: broadcast::Sender<Arc<Event>>,
    watch_channels: WatchChannels,
    dirty: bool,
}

/// Live event channels of watched resources: storage key → namespace ("" for watches of all
/// namespaces and of cluster-scoped resources) → sender. Created on the first subscription; dropped
/// once no receiver is left (noticed on the next send to it or the next subscription).
type WatchChannels = HashMap<String, HashMap<String, broadcast::Sender<Arc<Event>>>>;

/// Shared storage handle.
pub struct Store {
    state: Mutex<State>,
    dir: Option<PathBuf>,
}

impl Store {
    /// An empty store (or the one persisted in `dir`), with the given registry.
    pub fn open(
        dir: Option<PathBuf>,
        registry_for: impl Fn(&State) -> Registry,
    ) -> Result<Self, PersistError> {
        let (sender, _) = broadcast::channel(CHANNEL_CAPACITY);
        let mut state = State {
            rv: 1,
            objects: HashMap::new(),
            labels: LabelIndex::default(),
            history: VecDeque::new(),
            history_floor: 1,
            registry: Arc::new(Registry::new(Vec::new())),
            rbac_rv: 0,
            sender,
            watch_channels: HashMap::new(),
            dirty: false,
        };
        if let Some(dir) = &dir
            && let Some((rv, objects)) = persist::load(dir)?
        {
            state.rv = rv;
            state.history_floor = rv;
            for (key, stored) in &objects {
                for (object_key, object) in stored {
                    state.labels.update(key, object_key, None, Some(object));
                }
            }
            state.objects = objects;
        }
        state.registry = Arc::new(registry_for(&state));
        Ok(Store {
            state: Mutex::new(state),
            dir,
        })
    }

    /// Locks the state. A poisoned lock (a panic while holding it) is recovered: every mutation
    /// leaves the maps consistent before it could panic.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes the state to the persistence directory if it changed since the last flush.
    pub fn flush(&self) -> Result<(), PersistError> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let (rv, pointers) = {
            let mut state = self.lock();
            if !state.dirty {
                return Ok(());
            }
            state.dirty = false;
            (state.rv, persist::pointers(&state.objects))
        };
        let snapshot = persist::snapshot(rv, &pointers);
        persist::write(dir, &snapshot)
    }
}

impl State {
    /// The current (latest) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    /// The served types.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.clone()
    }

    /// Replaces the served types (after CRD changes).
    pub fn set_registry(&mut self, registry: Registry) {
        self.registry = Arc::new(registry);
    }

    /// One object.
    pub fn get(&self, rt: &ResourceType, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.get_by_key(&rt.storage_key(), namespace, name)
    }

    /// One object by storage key.
    pub fn get_by_key(&self, key: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.objects
            .get(key)?
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
    }

    /// Objects of a resource, ordered by namespace then name; `namespace` narrows to one namespace.
    pub fn list(&self, key: &str, namespace: Option<&str>) -> Vec<Arc<Value>> {
        let Some(objects) = self.objects.get(key) else {
            return Vec::new();
        };
        match namespace {
            Some(ns) => objects
                .range((ns.to_string(), String::new())..)
                .take_while(|((n, _), _)| n == ns)
                .map(|(_, v)| v.clone())
                .collect(),
            None => objects.values().cloned().collect(),
        }
    }

    /// Visits objects of a resource in list order, from the start of `namespace` (or of
    /// everything) or after `after`, until `visit` returns false; nothing is cloned, so a page
    /// costs what it reads rather than the size of the resource.
    pub fn visit(
        &self,
        key: &str,
        namespace: Option<&str>,
        after: Option<&ObjectKey>,
        mut visit: impl FnMut(&Arc<Value>) -> bool,
    ) {
        let Some(objects) = self.objects.get(key) else {
            return;
        };
        let lower = start_bound(namespace, after);
        for ((object_namespace, _), object) in objects.range((lower, Bound::Unbounded)) {
            match namespace_order(object_namespace, namespace) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Greater => break,
                std::cmp::Ordering::Equal => {}
            }
            if !visit(object) {
                break;
            }
        }
    }

    /// Like [`State::visit`], but only over the objects labelled with every `key=value` of
    /// `equalities`, read from the label index (through the rarest of them) rather than by scanning;
    /// with no equalities it is [`State::visit`]. The caller still checks the rest of its selector.
    pub fn visit_labelled(
        &self,
        key: &str,
        equalities: &[(&str, &str)],
        namespace: Option<&str>,
        after: Option<&ObjectKey>,
        mut visit: impl FnMut(&Arc<Value>) -> bool,
    ) {
        let mut rarest: Option<&std::collections::BTreeSet<ObjectKey>> = None;
        for (label, value) in equalities {
            // No object carries one of the labels: none matches.
            let Some(labelled) = self.labels.objects(key, label, value) else {
                return;
            };
            if rarest.is_none_or(|r| labelled.len() < r.len()) {
                rarest = Some(labelled);
            }
        }
        let Some(rarest) = rarest else {
            return self.visit(key, namespace, after, visit);
        };
        let Some(objects) = self.objects.get(key) else {
            return;
        };
        let lower = start_bound(namespace, after);
        for object_key in rarest.range((lower, Bound::Unbounded)) {
            match namespace_order(&object_key.0, namespace) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Greater => break,
                std::cmp::Ordering::Equal => {}
            }
            let Some(object) = objects.get(object_key) else {
                continue;
            };
            if !equalities
                .iter()
                .all(|(label, value)| label_value(object, label) == Some(*value))
            {
                continue;
            }
            if !visit(object) {
                break;
            }
        }
    }

    /// How many objects of a resource are stored.
    pub fn count(&self, key: &str) -> usize {
        self.objects.get(key).map_or(0, BTreeMap::len)
    }

    /// Storage keys that hold at least one object.
    pub fn resource_keys(&self) -> Vec<String> {
        self.objects
            .iter()
            .filter(|(_, m)| !m.is_empty())
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Whether any object of any namespaced resource is in `namespace`.
    pub fn namespace_has_objects(&self, namespace: &str) -> bool {
        self.objects.values().any(|m| {
            m.range((namespace.to_string(), String::new())..)
                .next()
                .is_some_and(|((n, _), _)| n == namespace)
        })
    }

    /// Stores a new object, assigning the next resourceVersion; returns what was stored.
    pub fn insert(&mut self, key: &str, mut object: Value) -> Arc<Value> {
        let rv = self.next_rv();
        set_rv(&mut object, rv);
        let object = Arc::new(object);
        let stored_key = object_key(&object);
        let previous = self
            .objects
            .entry(key.to_string())
            .or_default()
            .insert(stored_key.clone(), object.clone());
        self.labels
            .update(key, &stored_key, previous.as_deref(), Some(&object));
        self.record(key, EventType::Added, object.clone(), None);
        object
    }

    /// Replaces a stored object, assigning the next resourceVersion; returns what was stored.
    pub fn replace(&mut self, key: &str, mut object: Value) -> Arc<Value> {
        let rv = self.next_rv();
        set_rv(&mut object, rv);
        let object = Arc::new(object);
        let stored_key = object_key(&object);
        let previous = self
            .objects
            .entry(key.to_string())
            .or_default()
            .insert(stored_key.clone(), object.clone());
        self.labels
            .update(key, &stored_key, previous.as_deref(), Some(&object));
        self.record(key, EventType::Modified, object.clone(), previous);
        object
    }

    /// Removes an object; the DELETED event carries its last stored state with the deletion's resourceVersion.
    pub fn remove(&mut self, key: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        let stored_key = (namespace.to_string(), name.to_string());
        let removed = self.objects.get_mut(key)?.remove(&stored_key)?;
        self.labels.update(key, &stored_key, Some(&removed), None);
        let rv = self.next_rv();
        let mut last = (*removed).clone();
        set_rv(&mut last, rv);
        let last = Arc::new(last);
        self.record(key, EventType::Deleted, last.clone(), None);
        Some(last)
    }

    /// Drops every object of a resource without events (used when its CRD is gone and nothing can watch it).
    pub fn drop_resource(&mut self, key: &str) {
        self.objects.remove(key);
        self.labels.drop_resource(key);
        self.dirty = true;
    }

    /// Subscribes to every live event. Call while holding the lock, before reading history, to miss nothing.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.sender.subscribe()
    }

    /// Subscribes to the live events of resource `key` in `namespace` ("" for all namespaces and
    /// for cluster-scoped resources); events of other resources and namespaces are never sent to
    /// it. Call while holding the lock, before reading history or objects, to miss nothing.
    pub fn subscribe_watch(
        &mut self,
        key: &str,
        namespace: &str,
    ) -> broadcast::Receiver<Arc<Event>> {
        // Channels whose watches all ended since the last write to them: dropped here, so
        // their buffers do not outlive their watches by long.
        self.watch_channels.retain(|_, namespaces| {
            namespaces.retain(|_, sender| sender.receiver_count() > 0);
            !namespaces.is_empty()
        });
        self.watch_channels
            .entry(key.to_string())
            .or_default()
            .entry(namespace.to_string())
            .or_insert_with(|| broadcast::channel(WATCH_CHANNEL_CAPACITY).0)
            .subscribe()
    }

    /// How many watch channels are open (for tests).
    #[cfg(test)]
    fn watch_channel_count(&self) -> usize {
        self.watch_channels.values().map(HashMap::len).sum()
    }

    /// Events of `key` after `rv`, or `Err(oldest)` when the history no longer reaches back that far.
    pub fn events_since(&self, key: &str, rv: u64) -> Result<Vec<Arc<Event>>, u64> {
        if rv < self.history_floor {
            return Err(self.history_floor);
        }
        let start = self.history.partition_point(|e| e.rv <= rv);
        Ok(self
            .history
            .iter()
            .skip(start)
            .filter(|e| e.resource == key)
            .cloned()
            .collect())
    }

    /// Drops the watch history, as a restarted server has none: watches from an earlier
    /// resourceVersion than the current one get 410 Gone.
    pub fn forget_history(&mut self) {
        self.history.clear();
        self.history_floor = self.rv;
    }

    /// The resourceVersion of the latest RBAC change (to invalidate cached RBAC snapshots).
    pub fn rbac_version(&self) -> u64 {
        self.rbac_rv
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.dirty = true;
        self.rv
    }

    fn record(
        &mut self,
        key: &str,
        kind: EventType,
        object: Arc<Value>,
        previous: Option<Arc<Value>>,
    ) {
        if key.ends_with(".rbac.authorization.k8s.io") {
            self.rbac_rv = self.rv;
        }
        let event = Arc::new(Event {
            rv: self.rv,
            resource: key.to_string(),
            kind,
            object,
            previous,
        });
        if self.history.len() >= HISTORY_CAPACITY
            && let Some(dropped) = self.history.pop_front()
        {
            self.history_floor = dropped.rv;
        }
        self.history.push_back(event.clone());
        let namespace = event
            .object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(namespaces) = self.watch_channels.get_mut(key) {
            let scopes: &[&str] = if namespace.is_empty() {
                &[""]
            } else {
                &[namespace, ""]
            };
            for scope in scopes {
                // A failed send means every watch of the channel ended: drop it.
                if let Some(sender) = namespaces.get(*scope)
                    && sender.send(event.clone()).is_err()
                {
                    namespaces.remove(*scope);
                }
            }
            if namespaces.is_empty() {
                self.watch_channels.remove(key);
            }
        }
        // No receivers is fine: nobody watches.
        let _ = self.sender.send(event);
    }
}

/// Where a visit in list order starts: after `after`, or at the start of `namespace`, or at the start.
fn start_bound(namespace: Option<&str>, after: Option<&ObjectKey>) -> Bound<ObjectKey> {
    match (after, namespace) {
        (Some(after), _) => Bound::Excluded(after.clone()),
        (None, Some(ns)) => Bound::Included((ns.to_string(), String::new())),
        (None, None) => Bound::Unbounded,
    }
}

/// How an object's namespace orders against the visited one (`Equal` when visiting all).
fn namespace_order(object_namespace: &str, namespace: Option<&str>) -> std::cmp::Ordering {
    namespace.map_or(std::cmp::Ordering::Equal, |ns| object_namespace.cmp(ns))
}

fn label_value<'a>(object: &'a Value, label: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/labels")
        .and_then(|labels| labels.get(label))
        .and_then(Value::as_str)
}

fn set_rv(object: &mut Value, rv: u64) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.insert("resourceVersion".into(), json!(rv.to_string()));
    }
}

/// `(namespace, name)` of an object.
pub fn object_key(object: &Value) -> ObjectKey {
    let metadata = object.get("metadata");
    let field = |f: &str| {
        metadata
            .and_then(|m| m.get(f))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    (field("namespace"), field("name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Store {
        Store::open(None, |_| Registry::new(Vec::new())).expect("memory store opens")
    }

    fn cm(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}})
    }

    #[test]
    fn every_write_gets_a_new_resource_version() {
        let store = store();
        let mut state = store.lock();
        let a = state.insert("configmaps", cm("a"));
        let b = state.replace("configmaps", cm("a"));
        assert_eq!(a["metadata"]["resourceVersion"], "2");
        assert_eq!(b["metadata"]["resourceVersion"], "3");
        assert_eq!(state.list("configmaps", Some("ns")).len(), 1);
    }

    #[test]
    fn history_replays_only_events_after_the_given_version() {
        let store = store();
        let mut state = store.lock();
        state.insert("configmaps", cm("a"));
        state.insert("configmaps", cm("b"));
        state.insert("secrets", cm("c"));
        state.remove("configmaps", "ns", "a");
        let events = state
            .events_since("configmaps", 2)
            .expect("history reaches back");
        let kinds: Vec<EventType> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventType::Added, EventType::Deleted]);
    }

    #[test]
    fn history_answers_too_old_once_events_were_dropped() {
        let store = store();
        let mut state = store.lock();
        for i in 0..HISTORY_CAPACITY + 5 {
            state.insert("configmaps", cm(&format!("c{i}")));
        }
        assert!(state.events_since("configmaps", 3).is_err());
        assert!(
            state
                .events_since("configmaps", state.resource_version() - 1)
                .is_ok()
        );
    }

    fn received(receiver: &mut broadcast::Receiver<Arc<Event>>) -> Vec<ObjectKey> {
        let mut keys = Vec::new();
        while let Ok(event) = receiver.try_recv() {
            keys.push(object_key(&event.object));
        }
        keys
    }

    #[test]
    fn watch_channels_get_only_their_resource_and_namespace() {
        let store = store();
        let mut state = store.lock();
        let mut in_ns = state.subscribe_watch("configmaps", "ns");
        let mut everywhere = state.subscribe_watch("configmaps", "");
        let mut secrets = state.subscribe_watch("secrets", "");
        let mut all = state.subscribe();
        state.insert("configmaps", cm("a"));
        state.insert(
            "configmaps",
            json!({"metadata": {"name": "b", "namespace": "other"}}),
        );
        state.insert("namespaces", json!({"metadata": {"name": "ns"}}));
        state.remove("configmaps", "ns", "a");
        let a = ("ns".to_string(), "a".to_string());
        let b = ("other".to_string(), "b".to_string());
        assert_eq!(received(&mut in_ns), [a.clone(), a.clone()]);
        assert_eq!(received(&mut everywhere), [a.clone(), b, a]);
        assert!(received(&mut secrets).is_empty());
        assert_eq!(
            received(&mut all).len(),
            4,
            "the controllers see everything"
        );
    }

    #[test]
    fn watch_channels_are_dropped_when_their_watches_end() {
        let store = store();
        let mut state = store.lock();
        let first = state.subscribe_watch("configmaps", "ns");
        let second = state.subscribe_watch("configmaps", "ns");
        let other = state.subscribe_watch("secrets", "ns");
        assert_eq!(
            state.watch_channel_count(),
            2,
            "one channel per resource and namespace"
        );
        drop(first);
        state.insert("configmaps", cm("a"));
        assert_eq!(state.watch_channel_count(), 2, "a watch is left");
        drop(second);
        state.insert("configmaps", cm("b"));
        assert_eq!(state.watch_channel_count(), 1, "dropped on the next write");
        drop(other);
        let _new = state.subscribe_watch("leases", "");
        assert_eq!(
            state.watch_channel_count(),
            1,
            "dropped on the next subscription"
        );
    }

    /// The keys `visit_labelled` yields, and those a scan filtered by the same labels yields.
    fn labelled_and_scanned(
        state: &State,
        equalities: &[(&str, &str)],
        namespace: Option<&str>,
        after: Option<&ObjectKey>,
        limit: usize,
    ) -> (Vec<ObjectKey>, Vec<ObjectKey>) {
        let mut labelled = Vec::new();
        state.visit_labelled("configmaps", equalities, namespace, after, |o| {
            labelled.push(object_key(o));
            labelled.len() < limit
        });
        let mut scanned = Vec::new();
        state.visit("configmaps", namespace, after, |o| {
            if equalities
                .iter()
                .all(|(label, value)| label_value(o, label) == Some(*value))
            {
                scanned.push(object_key(o));
            }
            scanned.len() < limit
        });
        (labelled, scanned)
    }

    #[test]
    fn labelled_visits_yield_what_a_filtered_scan_yields() {
        let store = store();
        let mut state = store.lock();
        let object = |i: usize, generation: usize| {
            let namespace = ["a", "b", "c"][i % 3];
            let app = ["web", "db"][(i + generation) % 2];
            let tier = ["x", "y", "z"][(i + generation) % 3];
            json!({"metadata": {
                "name": format!("o{i:02}"),
                "namespace": namespace,
                "labels": {"app": app, "tier": tier},
            }})
        };
        for i in 0..30 {
            state.insert("configmaps", object(i, 0));
        }
        for i in (0..30).step_by(4) {
            state.replace("configmaps", object(i, 1));
        }
        for i in (0..30).step_by(7) {
            let (namespace, name) = object_key(&object(i, 0));
            state.remove("configmaps", &namespace, &name);
        }
        state.insert(
            "secrets",
            json!({"metadata": {"name": "o01", "namespace": "a", "labels": {"app": "web"}}}),
        );
        let after = ("b".to_string(), "o10".to_string());
        let selections: [&[(&str, &str)]; 5] = [
            &[("app", "web")],
            &[("app", "db"), ("tier", "y")],
            &[("tier", "z"), ("app", "web")],
            &[("app", "none")],
            &[],
        ];
        for equalities in selections {
            for namespace in [None, Some("a"), Some("b"), Some("d")] {
                for start in [None, Some(&after)] {
                    for limit in [usize::MAX, 2] {
                        let (labelled, scanned) =
                            labelled_and_scanned(&state, equalities, namespace, start, limit);
                        assert_eq!(
                            labelled, scanned,
                            "{equalities:?} in {namespace:?} after {start:?}, limit {limit}"
                        );
                    }
                }
            }
        }
        let (all_web, _) = labelled_and_scanned(&state, &[("app", "web")], None, None, usize::MAX);
        assert!(all_web.len() > 5, "the cases select something: {all_web:?}");
    }

    #[test]
    fn label_index_is_rebuilt_from_persisted_objects() {
        let dir = tempfile::tempdir().expect("temp dir");
        let open = || {
            Store::open(
                Some(dir.path().to_path_buf()),
                |_| Registry::new(Vec::new()),
            )
            .expect("store opens")
        };
        let store = open();
        store.lock().insert(
            "configmaps",
            json!({"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "web"}}}),
        );
        store.flush().expect("flushed");
        let reopened = open();
        let state = reopened.lock();
        let (labelled, _) = labelled_and_scanned(&state, &[("app", "web")], None, None, usize::MAX);
        assert_eq!(labelled, [("ns".to_string(), "a".to_string())]);
    }

    #[test]
    fn visit_stays_in_its_namespace_and_resumes_after_a_key() {
        let store = store();
        let mut state = store.lock();
        for (ns, name) in [("a", "1"), ("b", "1"), ("b", "2"), ("b", "3"), ("c", "1")] {
            state.insert(
                "configmaps",
                json!({"metadata": {"name": name, "namespace": ns}}),
            );
        }
        let mut seen = Vec::new();
        let after = ("b".to_string(), "1".to_string());
        state.visit("configmaps", Some("b"), Some(&after), |o| {
            seen.push(object_key(o));
            true
        });
        assert_eq!(seen, [("b".into(), "2".into()), ("b".into(), "3".into())]);
        let mut first = Vec::new();
        state.visit("configmaps", None, None, |o| {
            first.push(object_key(o));
            first.len() < 2
        });
        assert_eq!(first, [("a".into(), "1".into()), ("b".into(), "1".into())]);
    }

    #[test]
    fn list_is_ordered_by_namespace_then_name() {
        let store = store();
        let mut state = store.lock();
        for (ns, name) in [("b", "x"), ("a", "z"), ("a", "y")] {
            state.insert(
                "configmaps",
                json!({"metadata": {"name": name, "namespace": ns}}),
            );
        }
        let keys: Vec<ObjectKey> = state
            .list("configmaps", None)
            .iter()
            .map(|o| object_key(o))
            .collect();
        assert_eq!(
            keys,
            [
                ("a".into(), "y".into()),
                ("a".into(), "z".into()),
                ("b".into(), "x".into())
            ]
        );
    }
}
