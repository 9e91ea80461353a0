//! Object storage: JSON objects per resource, one global resourceVersion, the event history watches
//! replay, and the live event channels: one for all events (the built-in controllers) and one per
//! watched resource and namespace, so a write wakes only the watches that can want it. Objects are
//! also indexed by label, so lists with `key=value` selectors read only the matching objects.

pub(crate) mod fields;
mod labels;
mod persist;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use fields::FieldIndex;
use labels::LabelIndex;
pub use persist::{PersistError, write_private};

use crate::resources::{Registry, ResourceType};

/// How many events the history keeps for watch replay before answering 410 Gone.
pub const HISTORY_CAPACITY: usize = 20_000;
/// The most bytes (serialized objects) the history keeps: with objects up to 1.5 MiB the count
/// alone would let it hold tens of gigabytes.
pub const HISTORY_MAX_BYTES: usize = 128 * 1024 * 1024;
/// Buffer of the channel of all events; a subscriber lagging further behind must catch up another way
/// (the controllers rebuild their index).
const CHANNEL_CAPACITY: usize = 16_384;
/// Buffer of each watch channel (one resource in one namespace or in all). A watch lagging further
/// behind its own resource is closed and the client re-watches from its last resourceVersion. The
/// buffer is allocated up front, so it is smaller than the all-events one.
const WATCH_CHANNEL_CAPACITY: usize = 1_024;

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
    fields: FieldIndex,
    history: VecDeque<Arc<Event>>,
    /// The serialized size of each event's object in `history`, and their sum.
    history_sizes: VecDeque<usize>,
    history_bytes: usize,
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
            fields: FieldIndex::default(),
            history: VecDeque::new(),
            history_sizes: VecDeque::new(),
            history_bytes: 0,
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
        let registry = registry_for(&state);
        state.set_registry(registry);
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
        self.index_selectable_fields();
    }

    /// Indexes each custom resource by its CRD's `selectableFields` (all versions), following CRD
    /// changes.
    fn index_selectable_fields(&mut self) {
        let mut wanted: HashMap<String, Vec<String>> = HashMap::new();
        for rt in self.registry.types().filter(|rt| rt.custom) {
            let fields = wanted.entry(rt.storage_key()).or_default();
            for field in &rt.selectable_fields {
                if !fields.contains(field) {
                    fields.push(field.clone());
                }
            }
        }
        for (key, mut fields) in wanted {
            fields.sort();
            let objects = self.objects.get(&key);
            self.fields.set_fields(
                &key,
                fields,
                objects.into_iter().flatten().map(|(k, o)| (k, o.as_ref())),
            );
        }
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
    /// `equalities` and carrying every indexed `field=value` of `field_equalities`, read from the
    /// label and field indexes (through the rarest of them) rather than by scanning; with neither it
    /// is [`State::visit`]. Field equalities on fields that are not indexed are ignored here: the
    /// caller still checks its whole selector.
    pub fn visit_labelled(
        &self,
        key: &str,
        equalities: &[(&str, &str)],
        field_equalities: &[(&str, &str)],
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
        for (field, value) in field_equalities {
            if !self.fields.indexes(key, field) {
                continue;
            }
            let Some(selected) = self.fields.objects(key, field, value) else {
                return;
            };
            if rarest.is_none_or(|r| selected.len() < r.len()) {
                rarest = Some(selected);
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
        self.fields
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
        self.fields
            .update(key, &stored_key, previous.as_deref(), Some(&object));
        self.record(key, EventType::Modified, object.clone(), previous);
        object
    }

    /// Removes an object; the DELETED event carries its last stored state with the deletion's resourceVersion.
    pub fn remove(&mut self, key: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        let stored_key = (namespace.to_string(), name.to_string());
        let removed = self.objects.get_mut(key)?.remove(&stored_key)?;
        self.labels.update(key, &stored_key, Some(&removed), None);
        self.fields.update(key, &stored_key, Some(&removed), None);
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
        self.fields.drop_resource(key);
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

    /// Drops the channel of `key` in `namespace` when no watch receives from it any more (called
    /// as a watch ends, after its receiver is gone).
    pub fn release_watch(&mut self, key: &str, namespace: &str) {
        let Some(namespaces) = self.watch_channels.get_mut(key) else {
            return;
        };
        if namespaces
            .get(namespace)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            namespaces.remove(namespace);
        }
        if namespaces.is_empty() {
            self.watch_channels.remove(key);
        }
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
        self.history_sizes.clear();
        self.history_bytes = 0;
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
        let size = crate::registry::limits::json_len(&event.object, usize::MAX).unwrap_or(0);
        while (self.history.len() >= HISTORY_CAPACITY
            || self.history_bytes + size > HISTORY_MAX_BYTES)
            && let Some(dropped) = self.history.pop_front()
        {
            self.history_floor = dropped.rv;
            self.history_bytes -= self.history_sizes.pop_front().unwrap_or(0);
        }
        self.history.push_back(event.clone());
        self.history_sizes.push_back(size);
        self.history_bytes += size;
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
mod tests;
