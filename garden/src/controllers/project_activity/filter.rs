//! Which watch events of a source count as project activity (spec §3.5): a first sighting only
//! when the object is at most an hour old (so a restart does not count everything), an update
//! when the generation (workloads) or, for labelled sources, anything changed while either
//! version carries a binding label, and every deletion (labelled sources: of labelled objects).

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use jiff::{SignedDuration, Timestamp};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Resource, ResourceExt};
use seedlet_runtime::clock::Clock;
use serde::de::DeserializeOwned;

/// How old a newly seen object may be to count.
pub const FRESH: SignedDuration = SignedDuration::from_hours(1);
/// Labels that make a Secret or Quota a source.
pub const LABELS: [&str; 2] = [
    "reference.gardener.cloud/secretbinding",
    "reference.gardener.cloud/credentialsbinding",
];

/// The watch events of a source (a shared informer's or a watch's own) and its kind of
/// filtering.
pub struct Source<K: Resource> {
    events: BoxStream<'static, Result<Event<K>, watcher::Error>>,
    labelled: bool,
}

impl<K: Resource> Source<K> {
    /// Shoots and BackupEntries.
    pub fn workload(
        events: impl Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
    ) -> Self {
        Self {
            events: events.boxed(),
            labelled: false,
        }
    }

    /// Secrets and Quotas used by bindings.
    pub fn labelled(
        events: impl Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
    ) -> Self {
        Self {
            events: events.boxed(),
            labelled: true,
        }
    }
}

/// The events of a watch of every `K` of `api`, for a source no shared informer holds.
pub fn watch<K>(
    api: Api<K>,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    watcher::watcher(api, watcher::Config::default())
        .backoff(seedlet_runtime::watch::watch_backoff())
}

/// What the filter remembers of an object: resourceVersion, generation, labelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// `metadata.resourceVersion`.
    pub resource_version: Option<String>,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// Carries a binding label.
    pub labelled: bool,
}

/// [`Seen`] of `object`.
pub fn seen<K: Resource>(object: &K) -> Seen {
    Seen {
        resource_version: object.resource_version(),
        generation: object.meta().generation,
        labelled: LABELS
            .iter()
            .any(|l| object.labels().get(*l).map(String::as_str) == Some("true")),
    }
}

/// Whether an applied object counts: `old` is what was seen before (None: first sighting),
/// `created` its creation time.
pub fn counts(
    labelled_source: bool,
    old: Option<&Seen>,
    new: &Seen,
    created: Option<Timestamp>,
    now: Timestamp,
) -> bool {
    match old {
        None => {
            let fresh = created.is_some_and(|c| c.saturating_add(FRESH).is_ok_and(|t| t >= now));
            fresh && (!labelled_source || new.labelled)
        }
        Some(old) if labelled_source => {
            old.resource_version != new.resource_version && (old.labelled || new.labelled)
        }
        Some(old) => {
            old.resource_version != new.resource_version && old.generation != new.generation
        }
    }
}

/// The events of `source` that count as activity.
pub fn activity<K>(
    clock: Arc<dyn Clock>,
    source: Source<K>,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let labelled_source = source.labelled;
    let mut known: HashMap<String, Seen> = HashMap::new();
    source.events.filter_map(move |event| {
        let out = match event {
            Err(error) => Some(Err(error)),
            Ok(Event::Apply(object) | Event::InitApply(object)) => {
                let key = format!(
                    "{}/{}",
                    object.namespace().unwrap_or_default(),
                    object.name_any()
                );
                let current = seen(&object);
                let created = object.meta().creation_timestamp.as_ref().map(|t| t.0);
                let relevant = counts(
                    labelled_source,
                    known.get(&key),
                    &current,
                    created,
                    clock.now(),
                );
                known.insert(key, current);
                relevant.then_some(Ok(object))
            }
            Ok(Event::Delete(object)) => {
                let key = format!(
                    "{}/{}",
                    object.namespace().unwrap_or_default(),
                    object.name_any()
                );
                known.remove(&key);
                (!labelled_source || seen(&object).labelled).then_some(Ok(object))
            }
            Ok(Event::Init | Event::InitDone) => None,
        };
        std::future::ready(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(rv: &str, generation: i64, labelled: bool) -> Seen {
        Seen {
            resource_version: Some(rv.into()),
            generation: Some(generation),
            labelled,
        }
    }

    #[test]
    fn which_changes_count() {
        let now = Timestamp::from_second(10_000).expect("t");
        let recent = Some(Timestamp::from_second(10_000 - 3600).expect("t"));
        let old = Some(Timestamp::from_second(10_000 - 3601).expect("t"));
        let cases = [
            // (labelled source, old, new, created, counts)
            (false, None, s("1", 1, false), recent, true),
            (false, None, s("1", 1, false), old, false),
            (
                false,
                Some(s("1", 1, false)),
                s("2", 1, false),
                recent,
                false,
            ),
            (false, Some(s("1", 1, false)), s("2", 2, false), old, true),
            (true, None, s("1", 0, false), recent, false),
            (true, None, s("1", 0, true), recent, true),
            (true, Some(s("1", 0, true)), s("2", 0, false), old, true),
            (true, Some(s("1", 0, false)), s("2", 0, false), old, false),
            (true, Some(s("1", 0, true)), s("1", 0, true), old, false),
        ];
        for (labelled, before, after, created, expected) in cases {
            assert_eq!(
                counts(labelled, before.as_ref(), &after, created, now),
                expected,
                "{labelled} {before:?} {after:?} {created:?}"
            );
        }
    }
}
