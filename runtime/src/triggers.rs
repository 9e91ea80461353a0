//! Watch streams that only pass on relevant changes: an object is emitted when a key computed
//! from the fields a controller cares about changes, or when it is deleted. Unlike
//! `kube::runtime::predicate_filter`, deletions always pass, so a mapper sees the last state of a
//! deleted object (e.g. the Seed a deleted Shoot was on).

use std::collections::HashMap;
use std::fmt::Debug;

use futures::{Stream, StreamExt};
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

/// Objects of `api` (watched with `config`) whose `key` changed since last seen, plus deleted
/// objects. The first sighting of every object passes (so a restart re-evaluates everything).
pub fn changes<K, F>(
    api: Api<K>,
    config: watcher::Config,
    key: F,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    F: Fn(&K) -> String + Send + Sync + 'static,
{
    filter_changes(
        watcher::watcher(api, config).backoff(crate::watch::watch_backoff()),
        key,
    )
}

/// [`changes`] over an existing event stream (e.g. one feeding a reflector).
pub fn filter_changes<K, F, S>(
    events: S,
    key: F,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    F: Fn(&K) -> String + Send + Sync + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
{
    filter_events(events, key, |event| event)
}

/// [`filter_changes`] for a controller whose store keeps less of an object than its change key
/// reads: the key is taken from the whole object, then `view` trims it, `writer` stores the
/// trimmed object, and the trimmed objects that pass go on to the controller. (A
/// `.modify(view).reflect(writer)` in front of [`filter_changes`] would let the key read only
/// what the store keeps.)
pub fn filter_changes_and_store<K, F, S>(
    events: S,
    key: F,
    view: fn(&mut K),
    mut writer: Writer<K>,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
    F: Fn(&K) -> String + Send + Sync + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
{
    filter_events(events, key, move |event| {
        let event = event.modify(view);
        writer.apply_watcher_event(&event);
        event
    })
}

/// The objects of `events` whose change key passes ([`ChangeKeys::passes`], keyed on each event as
/// it comes), as `then` leaves each event (a view of it; the key has been taken by then).
fn filter_events<K, F, S, M>(
    events: S,
    key: F,
    mut then: M,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    F: Fn(&K) -> String + Send + Sync + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
    M: FnMut(Event<K>) -> Event<K> + Send + 'static,
{
    let mut seen = ChangeKeys::default();
    events.filter_map(move |event| {
        let out = match event {
            Err(error) => Some(Err(error)),
            Ok(event) => {
                let passes = seen.passes(&event, &key);
                passed_object(then(event), passes).map(Ok)
            }
        };
        futures::future::ready(out)
    })
}

/// What [`filter_changes`] keeps of each object it saw: hashes of its identity and of its key
/// (keys can be whole specs, a Seed's, and a garden controller filters tens of thousands of
/// objects in several watches).
#[derive(Debug, Default)]
struct ChangeKeys {
    seen: HashMap<ObjectId, u64>,
}

impl ChangeKeys {
    /// Records `event` and says whether its object passes: an applied object whose key changed
    /// since it was last seen (or that was never seen), and every deleted object.
    fn passes<K: Resource>(&mut self, event: &Event<K>, key: impl Fn(&K) -> String) -> bool {
        match event {
            Event::Apply(object) | Event::InitApply(object) => {
                let current = hash_of(&key(object));
                self.seen.insert(id_of(object), current) != Some(current)
            }
            Event::Delete(object) => {
                self.seen.remove(&id_of(object));
                true
            }
            Event::Init | Event::InitDone => false,
        }
    }
}

/// The object of `event` if it `passes` (markers carry none).
fn passed_object<K>(event: Event<K>, passes: bool) -> Option<K> {
    match event {
        Event::Apply(object) | Event::InitApply(object) | Event::Delete(object) if passes => {
            Some(object)
        }
        _ => None,
    }
}

/// Objects of `events` for which `pass(previous view, current view)` holds, where a view is what
/// `view` extracts from an object (`None` at its first sighting), plus deleted objects. Unlike
/// [`filter_changes`] this can accept only some transitions, e.g. an annotation newly listing a
/// value but not its removal.
pub fn filter_transitions<K, T, V, P, S>(
    events: S,
    view: V,
    pass: P,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    T: Send + 'static,
    V: Fn(&K) -> T + Send + Sync + 'static,
    P: Fn(Option<&T>, &T) -> bool + Send + Sync + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
{
    let mut seen: HashMap<ObjectId, T> = HashMap::new();
    events.filter_map(move |event| {
        let out = match event {
            Err(error) => Some(Err(error)),
            Ok(Event::Apply(object) | Event::InitApply(object)) => {
                let current = view(&object);
                let id = id_of(&object);
                let passes = pass(seen.get(&id), &current);
                seen.insert(id, current);
                passes.then_some(Ok(object))
            }
            Ok(Event::Delete(object)) => {
                seen.remove(&id_of(&object));
                Some(Ok(object))
            }
            Ok(Event::Init | Event::InitDone) => None,
        };
        futures::future::ready(out)
    })
}

/// A controller over `api` (cached like [`crate::watch::controller`]) that is triggered only by
/// the transitions [`filter_transitions`] passes; requeues still come from its reconciler.
pub fn controller_on_transitions<K, T, V, P>(
    api: Api<K>,
    config: watcher::Config,
    view: V,
    pass: P,
) -> crate::controller::Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    T: Send + 'static,
    V: Fn(&K) -> T + Send + Sync + 'static,
    P: Fn(Option<&T>, &T) -> bool + Send + Sync + 'static,
{
    let (reader, writer) = kube::runtime::reflector::store();
    let events = watcher::watcher(api, config)
        .backoff(crate::watch::watch_backoff())
        .modify(crate::watch::slim)
        .reflect(writer);
    crate::controller::Triggers::for_stream(filter_transitions(events, view, pass), reader)
}

/// An object's identity as a 64-bit hash of its namespace and name: what the filters here and
/// other per-object bookkeeping keep instead of the names (a collision among the 20 000 objects of
/// a large seed's watch is about as likely as 10⁻¹¹).
pub type ObjectId = u64;

/// The [`ObjectId`] of `namespace`/`name`.
pub fn object_id(namespace: Option<&str>, name: &str) -> ObjectId {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    (namespace, name).hash(&mut hasher);
    hasher.finish()
}

/// The [`ObjectId`] of a stored object (its namespace and name).
pub fn id_of<K: Resource>(object: &K) -> ObjectId {
    let meta = object.meta();
    object_id(
        meta.namespace.as_deref(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

/// A 64-bit hash of a change key (equal keys, equal hashes; a collision between two states of one
/// object is as unlikely as 2^-64).
fn hash_of(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

/// A change key from JSON-serialisable parts (`serde_json` of a tuple or struct).
pub fn key_of<T: serde::Serialize>(parts: &T) -> String {
    serde_json::to_string(parts).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::ResourceExt;

    #[test]
    fn objects_are_told_apart_by_namespace_and_name() {
        assert_ne!(object_id(Some("x"), "a"), object_id(Some("y"), "a"));
        assert_ne!(object_id(None, "a"), object_id(Some(""), "a"));
        assert_ne!(object_id(Some("a"), "b"), object_id(Some("ab"), ""));
        assert_eq!(object_id(Some("x"), "a"), object_id(Some("x"), "a"));
    }

    #[test]
    fn key_of_differs_when_any_part_differs() {
        assert_eq!(key_of(&("a", 1)), key_of(&("a", 1)));
        assert_ne!(key_of(&("a", 1)), key_of(&("a", 2)));
    }

    fn config_map(name: &str, value: &str) -> k8s_openapi::api::core::v1::ConfigMap {
        k8s_openapi::api::core::v1::ConfigMap {
            metadata: kube::api::ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".to_owned()),
                ..Default::default()
            },
            data: Some([("v".to_owned(), value.to_owned())].into()),
            ..Default::default()
        }
    }

    fn only_the_name(config_map: &mut k8s_openapi::api::core::v1::ConfigMap) {
        *config_map = k8s_openapi::api::core::v1::ConfigMap {
            metadata: kube::api::ObjectMeta {
                name: config_map.metadata.name.take(),
                namespace: config_map.metadata.namespace.take(),
                ..Default::default()
            },
            ..Default::default()
        };
    }

    #[tokio::test]
    async fn filter_changes_and_store_keys_the_whole_object_and_stores_the_view() {
        let events = futures::stream::iter(vec![
            Ok(Event::Init),
            Ok(Event::InitApply(config_map("a", "x"))),
            Ok(Event::InitApply(config_map("b", "x"))),
            Ok(Event::InitDone),
            Ok(Event::Apply(config_map("a", "x"))),
            Ok(Event::Apply(config_map("a", "y"))),
            Ok(Event::Delete(config_map("b", "x"))),
        ]);
        let key = |cm: &k8s_openapi::api::core::v1::ConfigMap| key_of(&cm.data);
        let (store, writer) = kube::runtime::reflector::store();
        let passed: Vec<(String, bool)> =
            filter_changes_and_store(events, key, only_the_name, writer)
                .map(|item| {
                    let cm = item.expect("no error");
                    (cm.name_any(), cm.data.is_none())
                })
                .collect()
                .await;
        // The unchanged `a=x` does not pass, its change to `y` does; the objects passed on are
        // the trimmed ones.
        let names: Vec<&str> = passed.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["a", "b", "a", "b"]);
        assert!(passed.iter().all(|(_, trimmed)| *trimmed));
        let stored = store.state();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].name_any(), "a");
        assert!(stored[0].data.is_none(), "the store keeps the view");
    }

    #[tokio::test]
    async fn filter_changes_passes_changed_keys_first_sightings_and_deletions() {
        let events = futures::stream::iter(vec![
            Ok(Event::InitApply(config_map("a", "x"))),
            Ok(Event::InitDone),
            Ok(Event::Apply(config_map("a", "x"))),
            Ok(Event::Apply(config_map("a", "y"))),
            Ok(Event::Delete(config_map("a", "y"))),
            Ok(Event::Apply(config_map("a", "y"))),
        ]);
        let key = |cm: &k8s_openapi::api::core::v1::ConfigMap| key_of(&cm.data);
        let passed: Vec<String> = filter_changes(events, key)
            .map(|item| {
                let cm = item.expect("no error");
                format!("{}={}", cm.name_any(), cm.data.unwrap_or_default()["v"])
            })
            .collect()
            .await;
        // After its deletion, `a` is new again.
        assert_eq!(passed, ["a=x", "a=y", "a=y", "a=y"]);
    }

    #[tokio::test]
    async fn filter_transitions_passes_only_accepted_transitions_and_deletions() {
        let events = futures::stream::iter(vec![
            Ok(Event::InitApply(config_map("a", "x"))),
            Ok(Event::Apply(config_map("a", "x;maintain"))),
            Ok(Event::Apply(config_map("a", "x"))),
            Ok(Event::Apply(config_map("b", "maintain"))),
            Ok(Event::Delete(config_map("a", "x"))),
        ]);
        let view = |cm: &k8s_openapi::api::core::v1::ConfigMap| {
            cm.data
                .as_ref()
                .and_then(|d| d.get("v"))
                .is_some_and(|v| v.contains("maintain"))
        };
        // Pass the first sighting and a newly listed `maintain`, never its removal.
        let pass = |old: Option<&bool>, new: &bool| old.is_none() || (*new && old == Some(&false));
        let passed: Vec<String> = filter_transitions(events, view, pass)
            .map(|item| {
                let cm = item.expect("no error");
                format!("{}={}", cm.name_any(), cm.data.unwrap_or_default()["v"])
            })
            .collect()
            .await;
        assert_eq!(passed, ["a=x", "a=x;maintain", "b=maintain", "a=x"]);
    }
}
