//! Watches on the garden and the seed that timestamp what the agent and garden controller do:
//! first sightings (ControllerInstallation, ManagedResource, Cluster), Lease renewals, and which
//! change ("mark") of an extension state or shoot a ShootState or Cluster reflects.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::workload::mark_of;

/// Label the harness bumps on shoots; the Cluster's embedded shoot carries it.
pub const SHOOT_TICK_LABEL: &str = "scale.seedlet.dev/tick";

/// When each object name was first seen.
#[derive(Clone, Default)]
pub struct FirstSeen(Arc<Mutex<HashMap<String, Instant>>>);

impl FirstSeen {
    fn record(&self, name: String, at: Instant) {
        lock(&self.0).entry(name).or_insert(at);
    }

    /// How many names were seen.
    pub fn count(&self) -> usize {
        lock(&self.0).len()
    }

    /// When `name` was first seen.
    pub fn get(&self, name: &str) -> Option<Instant> {
        lock(&self.0).get(name).copied()
    }

    /// All sightings.
    pub fn snapshot(&self) -> HashMap<String, Instant> {
        lock(&self.0).clone()
    }
}

/// Changes written by the harness and when a watched object first reflected them.
///
/// A key's changes are numbered ("marks"); seeing mark `m` settles every pending mark `≤ m`, so
/// changes coalesced by the agent into one write are measured from their own write time.
#[derive(Clone, Default)]
pub struct MarkTracker(Arc<Mutex<MarkState>>);

#[derive(Default)]
struct MarkState {
    pending: HashMap<String, BTreeMap<u64, Instant>>,
    seen: HashMap<String, u64>,
    latencies: Vec<Duration>,
    written: HashMap<String, u64>,
}

impl MarkTracker {
    /// Records that mark `mark` of `key` was written now.
    pub fn wrote(&self, key: &str, mark: u64) {
        let mut state = lock(&self.0);
        state
            .pending
            .entry(key.to_owned())
            .or_default()
            .insert(mark, Instant::now());
        state.written.insert(key.to_owned(), mark);
    }

    /// Records that the watched copy of `key` shows mark `mark` at `at`.
    pub fn saw(&self, key: &str, mark: u64, at: Instant) {
        let mut state = lock(&self.0);
        let seen = state.seen.entry(key.to_owned()).or_insert(mark);
        *seen = (*seen).max(mark);
        let Some(pending) = state.pending.get_mut(key) else {
            return;
        };
        let settled: Vec<u64> = pending.range(..=mark).map(|(m, _)| *m).collect();
        let mut latencies = Vec::with_capacity(settled.len());
        for settled_mark in settled {
            if let Some(written) = pending.remove(&settled_mark) {
                latencies.push(at.saturating_duration_since(written));
            }
        }
        state.latencies.extend(latencies);
    }

    /// The latencies measured so far.
    pub fn latencies(&self) -> Vec<Duration> {
        lock(&self.0).latencies.clone()
    }

    /// Returns the latencies measured so far and starts a new series (pending marks stay).
    pub fn take_latencies(&self) -> Vec<Duration> {
        std::mem::take(&mut lock(&self.0).latencies)
    }

    /// Keys whose last written mark is not (yet) reflected.
    pub fn lagging(&self) -> Vec<String> {
        let state = lock(&self.0);
        let mut lagging: Vec<String> = state
            .written
            .iter()
            .filter(|(key, mark)| state.seen.get(*key).is_none_or(|seen| seen < *mark))
            .map(|(key, _)| key.clone())
            .collect();
        lagging.sort();
        lagging
    }
}

/// Everything the harness watches, started together and stopped with one token.
#[derive(Clone, Default)]
pub struct Observers {
    /// ControllerInstallations in the garden.
    pub installations: FirstSeen,
    /// ManagedResources in the seed's `garden` namespace.
    pub managed_resources: FirstSeen,
    /// Clusters in the seed.
    pub clusters: FirstSeen,
    /// Extension-state marks reflected in ShootStates (key `Kind/name`).
    pub shoot_states: MarkTracker,
    /// Shoot tick labels reflected in Clusters (key: Cluster name).
    pub cluster_updates: MarkTracker,
    /// ShootState updates seen (each is one write by the agent).
    pub shoot_state_writes: Arc<Mutex<u64>>,
    /// The seed Lease's successive renewTimes (as the agent wrote them).
    pub lease_renewals: Arc<Mutex<Vec<jiff::Timestamp>>>,
}

impl Observers {
    /// Starts every watch; they run until `stop`.
    pub fn start(
        &self,
        garden: &kube::Client,
        seed: &kube::Client,
        seed_name: &str,
        stop: &CancellationToken,
    ) {
        let installation = ApiResource::erase::<seedlet_api::core::ControllerInstallation>(&());
        let managed_resource = ApiResource::erase::<seedlet_api::resources::ManagedResource>(&());
        let cluster = ApiResource::erase::<seedlet_api::extensions::Cluster>(&());
        let shoot_state = ApiResource::erase::<seedlet_api::core::ShootState>(&());
        spawn_first_seen(
            Api::all_with(garden.clone(), &installation),
            self.installations.clone(),
            stop,
        );
        spawn_first_seen(
            Api::namespaced_with(seed.clone(), "garden", &managed_resource),
            self.managed_resources.clone(),
            stop,
        );
        let clusters = self.clusters.clone();
        let cluster_updates = self.cluster_updates.clone();
        spawn_watch(Api::all_with(seed.clone(), &cluster), stop, move |object| {
            let at = Instant::now();
            let name = object.name_any();
            if let Some(tick) = object
                .data
                .pointer(&format!(
                    "/spec/shoot/metadata/labels/{}",
                    SHOOT_TICK_LABEL.replace('/', "~1")
                ))
                .and_then(Value::as_str)
                .and_then(|tick| tick.parse().ok())
            {
                cluster_updates.saw(&name, tick, at);
            }
            clusters.record(name, at);
        });
        let tracker = self.shoot_states.clone();
        let writes = self.shoot_state_writes.clone();
        spawn_watch(
            Api::all_with(garden.clone(), &shoot_state),
            stop,
            move |object| {
                let at = Instant::now();
                *lock(&writes) += 1;
                let entries = object
                    .data
                    .pointer("/spec/extensions")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for entry in entries {
                    let (Some(kind), Some(name)) = (
                        entry.get("kind").and_then(Value::as_str),
                        entry.get("name").and_then(Value::as_str),
                    ) else {
                        continue;
                    };
                    if let Some(mark) = entry.get("state").and_then(mark_of) {
                        tracker.saw(&format!("{kind}/{name}"), mark, at);
                    }
                }
            },
        );
        let renewals = self.lease_renewals.clone();
        let leases: Api<Lease> =
            Api::namespaced(garden.clone(), seedlet_api::names::namespaces::SEED_LEASE);
        let config = watcher::Config::default().fields(&format!("metadata.name={seed_name}"));
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut last = None;
            let mut events = watcher(leases, config).applied_objects().boxed();
            loop {
                let next = tokio::select! {
                    next = events.try_next() => next,
                    _ = stop.cancelled() => return,
                };
                match next {
                    Ok(Some(lease)) => {
                        let renew = lease.spec.and_then(|spec| spec.renew_time).map(|t| t.0);
                        if let Some(renew) = renew
                            && last != Some(renew)
                        {
                            last = Some(renew);
                            lock(&renewals).push(renew);
                        }
                    }
                    Ok(None) => return,
                    Err(error) => tracing::debug!(error = %error, "lease watch restarts"),
                }
            }
        });
    }
}

fn spawn_first_seen(api: Api<DynamicObject>, seen: FirstSeen, stop: &CancellationToken) {
    spawn_watch(api, stop, move |object| {
        seen.record(object.name_any(), Instant::now());
    });
}

/// Runs `on_object` for every object version the watch delivers, until `stop`.
fn spawn_watch<F>(api: Api<DynamicObject>, stop: &CancellationToken, mut on_object: F)
where
    F: FnMut(DynamicObject) + Send + 'static,
{
    let stop = stop.clone();
    tokio::spawn(async move {
        let mut events = watcher(api, watcher::Config::default())
            .applied_objects()
            .boxed();
        loop {
            let next = tokio::select! {
                next = events.try_next() => next,
                _ = stop.cancelled() => return,
            };
            match next {
                Ok(Some(object)) => on_object(object),
                Ok(None) => return,
                Err(error) => tracing::debug!(error = %error, "watch restarts"),
            }
        }
    });
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_mark_settles_every_older_pending_mark() {
        let tracker = MarkTracker::default();
        tracker.wrote("Worker/a", 1);
        tracker.wrote("Worker/a", 2);
        tracker.wrote("Worker/a", 3);
        assert_eq!(tracker.lagging(), ["Worker/a"]);
        tracker.saw("Worker/a", 2, Instant::now());
        assert_eq!(tracker.latencies().len(), 2, "marks 1 and 2 settled");
        assert_eq!(tracker.lagging(), ["Worker/a"], "mark 3 still pending");
        assert_eq!(tracker.take_latencies().len(), 2);
        tracker.saw("Worker/a", 3, Instant::now());
        assert_eq!(tracker.latencies().len(), 1, "a new series after take");
        assert!(tracker.lagging().is_empty());
    }

    #[test]
    fn seeing_an_old_mark_again_changes_nothing() {
        let tracker = MarkTracker::default();
        tracker.wrote("Network/n", 5);
        tracker.saw("Network/n", 5, Instant::now());
        tracker.saw("Network/n", 4, Instant::now());
        assert_eq!(tracker.latencies().len(), 1);
        assert!(tracker.lagging().is_empty());
    }

    #[test]
    fn first_sighting_is_kept() {
        let seen = FirstSeen::default();
        let first = Instant::now();
        seen.record("ext-000".into(), first);
        seen.record("ext-000".into(), first + Duration::from_secs(1));
        assert_eq!(seen.get("ext-000"), Some(first));
        assert_eq!(seen.count(), 1);
    }
}
