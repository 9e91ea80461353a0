//! Watch streams that only pass on relevant changes: an object is emitted when a key computed
//! from the fields a controller cares about changes, or when it is deleted. Unlike
//! `kube::runtime::predicate_filter`, deletions always pass, so a mapper sees the last state of a
//! deleted object (e.g. the Seed a deleted Shoot was on).

use std::collections::HashMap;
use std::fmt::Debug;

use futures::{Stream, StreamExt};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Resource, ResourceExt};
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
    let mut seen: HashMap<String, String> = HashMap::new();
    events.filter_map(move |event| {
        let out = match event {
            Err(error) => Some(Err(error)),
            Ok(Event::Apply(object) | Event::InitApply(object)) => {
                let id = identity(&object);
                let current = key(&object);
                let changed = seen.get(&id) != Some(&current);
                seen.insert(id, current);
                changed.then_some(Ok(object))
            }
            Ok(Event::Delete(object)) => {
                seen.remove(&identity(&object));
                Some(Ok(object))
            }
            Ok(Event::Init | Event::InitDone) => None,
        };
        futures::future::ready(out)
    })
}

/// `namespace/name` (or `name`) of an object.
fn identity<K: Resource>(object: &K) -> String {
    match object.namespace() {
        Some(namespace) => format!("{namespace}/{}", object.name_any()),
        None => object.name_any(),
    }
}

/// A change key from JSON-serialisable parts (`serde_json` of a tuple or struct).
pub fn key_of<T: serde::Serialize>(parts: &T) -> String {
    serde_json::to_string(parts).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_of_differs_when_any_part_differs() {
        assert_eq!(key_of(&("a", 1)), key_of(&("a", 1)));
        assert_ne!(key_of(&("a", 1)), key_of(&("a", 2)));
    }
}
