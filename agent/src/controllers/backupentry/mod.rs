//! BackupEntry controller (spec `gardenlet-backup-bastion-seed.md` §2): for each core
//! BackupEntry this seed is responsible for, waits for a healthy core BackupBucket, copies the
//! bucket's credentials (its generated secret when it has one) into the seed
//! (`garden/entry-<name>`), keeps the cluster-scoped `extensions.gardener.cloud` BackupEntry of
//! the same name by §0.1's rules and reports it into the core status. Migration: the source seed
//! (`status.seedName`) annotates `migrate`, deletes the object once migrated and clears
//! `status.seedName`; the destination restores on `operation=restore` (`wait-for-state`, state
//! copied from the ShootState, then `restore`). Deletion honours
//! `controllers.backupEntry.deletionGracePeriodHours`/`ShootPurposes` and the force-deletion
//! annotation.
//!
//! Triggers: garden BackupEntries passing the entry filter (creation, deletion, generation,
//! operation and force-deletion annotations, seed names); garden BackupBuckets through the LOC
//! trigger (→ entries with that `spec.bucketName`); seed extension BackupEntries through the LOC
//! trigger (→ the core entry of the same name, found in the cache instead of through the
//! shoot's `Cluster`: the names are equal). Workers: `controllers.backupEntry.concurrentSyncs` (20).

pub mod delete;
pub mod desired;
pub mod io;
pub mod migrate;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupBucket, BackupEntry};
use seedlet_api::extensions;
use seedlet_api::names::annotations;

pub use io::Error;

use crate::context::AgentContext;
use crate::extension_sync::trigger;

/// Controller name (logs, metrics label).
pub const NAME: &str = "backupentry";
/// Parallel reconciles when `controllers.backupEntry.concurrentSyncs` is unset.
pub const DEFAULT_CONCURRENT_SYNCS: i64 = 20;

/// Settings from `controllers.backupEntry`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// Deletion grace period in hours.
    pub grace_hours: u64,
    /// Shoot purposes the grace period applies to (empty: all).
    pub grace_purposes: Vec<String>,
}

/// Dependencies of one run on one garden client.
pub struct BackupEntries {
    /// Time source for timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// Events in the garden.
    pub events: seedlet_runtime::events::Recorder,
    /// Field manager of our writes.
    pub field_manager: &'static str,
    /// Parallel reconciles (its `concurrentSyncs`).
    pub concurrency: u16,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Name of our Seed.
    pub seed_name: String,
    /// The garden client of this run.
    pub garden: kube::Client,
    /// Grace period settings.
    pub settings: Settings,
}

impl std::fmt::Debug for BackupEntries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackupEntries")
            .field("seed", &self.seed_name)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Runs the controller until `ctx.stop` is cancelled, restarting its watches when the garden
/// client is swapped.
pub async fn run(agent: Arc<AgentContext>) {
    let garden = agent.garden.clone();
    garden
        .run_with_current(|client| run_on(agent.clone(), client))
        .await;
}

async fn run_on(agent: Arc<AgentContext>, garden: kube::Client) {
    let config = agent
        .config
        .controllers
        .backup_entry
        .clone()
        .unwrap_or_default();
    let concurrency = config.concurrent_syncs.unwrap_or(DEFAULT_CONCURRENT_SYNCS);
    let settings = Settings {
        grace_hours: config.grace_period_hours(),
        grace_purposes: config.grace_period_purposes().to_vec(),
    };
    let seed_name = agent.seed_name.clone();
    let (reader, writer) = reflector::store::<BackupEntry>();
    let filter_seed = seed_name.clone();
    let entries = entry_changes(
        watcher::watcher(
            Api::<BackupEntry>::all(garden.clone()),
            watcher::Config::default(),
        )
        .backoff(seedlet_runtime::watch::watch_backoff())
        .modify(seedlet_runtime::watch::slim)
        .reflect(writer),
    )
    .try_filter(move |entry| futures::future::ready(desired::is_ours(entry, &filter_seed)));
    let bucket_events = trigger::changes(
        watcher::watcher(
            Api::<BackupBucket>::all(garden.clone()),
            watcher::Config::default(),
        )
        .backoff(seedlet_runtime::watch::watch_backoff()),
        |bucket: &BackupBucket| {
            trigger::state_of(
                bucket,
                bucket
                    .status
                    .as_ref()
                    .and_then(|s| s.last_operation.as_ref()),
            )
        },
    );
    let extension_events = trigger::changes(
        watcher::watcher(
            Api::<extensions::BackupEntry>::all(agent.seed.clone()),
            watcher::Config::default(),
        )
        .backoff(seedlet_runtime::watch::watch_backoff()),
        |object: &extensions::BackupEntry| {
            trigger::state_of(
                object,
                object
                    .status
                    .as_ref()
                    .and_then(|s| s.last_operation.as_ref()),
            )
        },
    )
    .filter(|object| futures::future::ready(object.metadata.deletion_timestamp.is_none()));
    let ctx = Arc::new(BackupEntries {
        clock: agent.clock.clone(),
        events: agent.events.clone(),
        field_manager: agent.field_manager,
        concurrency: seedlet_runtime::watch::concurrency(concurrency),
        seed: agent.seed.clone(),
        seed_name: agent.seed_name.clone(),
        garden,
        settings,
    });
    let (by_bucket, bucket_seed) = (reader.clone(), seed_name.clone());
    let (by_name, name_seed) = (reader.clone(), seed_name);
    let controller = seedlet_runtime::controller::Triggers::for_stream(entries, reader)
        .watches_stream(
            bucket_events.map(Ok::<_, watcher::Error>),
            move |bucket: BackupBucket| {
                entries_of_bucket(&by_bucket, &bucket_seed, &bucket.name_any())
            },
        )
        .watches_stream(
            extension_events.map(Ok::<_, watcher::Error>),
            move |object: extensions::BackupEntry| {
                entries_named(&by_name, &name_seed, &object.name_any())
            },
        );
    seedlet_runtime::controller::run(controller, ctx, agent.stop.clone(), agent.metrics.common())
        .await;
}

/// Change key of a core BackupEntry: generation, deletion, the force-deletion annotation and
/// `spec.seedName` — not the status this controller writes itself.
pub fn entry_change(entry: &BackupEntry) -> String {
    seedlet_runtime::triggers::key_of(&(
        entry.uid(),
        entry.metadata.generation,
        entry.metadata.deletion_timestamp.is_some(),
        entry.annotations().get(desired::FORCE_DELETION),
        &entry.spec.seed_name,
    ))
}

/// Whether an entry event triggers: first sightings and deletions, a changed [`entry_change`]
/// key, or a newly set `gardener.cloud/operation` (gardener-apiserver bumps the generation for
/// `reconcile`/`migrate`/`restore`; removing the annotation — as the restore does when it
/// succeeded — does not trigger).
pub fn entry_fires(old: Option<&(String, Option<String>)>, new: &(String, Option<String>)) -> bool {
    match old {
        None => true,
        Some((key, operation)) => key != &new.0 || (new.1.is_some() && operation != &new.1),
    }
}

fn entry_changes<S>(
    events: S,
) -> impl futures::Stream<Item = Result<BackupEntry, watcher::Error>> + Send + 'static
where
    S: futures::Stream<Item = Result<watcher::Event<BackupEntry>, watcher::Error>> + Send + 'static,
{
    let mut seen = std::collections::HashMap::new();
    events.filter_map(move |event| {
        let out = match event {
            Err(error) => Some(Err(error)),
            Ok(watcher::Event::Apply(entry) | watcher::Event::InitApply(entry)) => {
                let id = format!(
                    "{}/{}",
                    entry.namespace().unwrap_or_default(),
                    entry.name_any()
                );
                let state = (
                    entry_change(&entry),
                    entry.annotations().get(annotations::OPERATION).cloned(),
                );
                let fires = entry_fires(seen.get(&id), &state);
                seen.insert(id, state);
                fires.then_some(Ok(entry))
            }
            Ok(watcher::Event::Delete(entry)) => {
                seen.remove(&format!(
                    "{}/{}",
                    entry.namespace().unwrap_or_default(),
                    entry.name_any()
                ));
                Some(Ok(entry))
            }
            Ok(watcher::Event::Init | watcher::Event::InitDone) => None,
        };
        futures::future::ready(out)
    })
}

/// Mapper: the entries of `seed` in `bucket`.
pub fn entries_of_bucket(
    entries: &Store<BackupEntry>,
    seed: &str,
    bucket: &str,
) -> Vec<ObjectRef<BackupEntry>> {
    entries
        .state()
        .iter()
        .filter(|entry| entry.spec.bucket_name == bucket && desired::is_ours(entry, seed))
        .map(|entry| seedlet_runtime::controller::object_ref(entry.as_ref()))
        .collect()
}

/// Mapper: the entries of `seed` named like an extension object.
pub fn entries_named(
    entries: &Store<BackupEntry>,
    seed: &str,
    name: &str,
) -> Vec<ObjectRef<BackupEntry>> {
    entries
        .state()
        .iter()
        .filter(|entry| entry.name_any() == name && desired::is_ours(entry, seed))
        .map(|entry| seedlet_runtime::controller::object_ref(entry.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_annotations_fire_when_set_not_when_removed() {
        let state = |key: &str, op: Option<&str>| (key.to_owned(), op.map(str::to_owned));
        assert!(entry_fires(None, &state("a", None)));
        assert!(!entry_fires(Some(&state("a", None)), &state("a", None)));
        assert!(entry_fires(
            Some(&state("a", None)),
            &state("a", Some("restore"))
        ));
        assert!(!entry_fires(
            Some(&state("a", Some("restore"))),
            &state("a", None)
        ));
        assert!(entry_fires(
            Some(&state("a", Some("restore"))),
            &state("b", None)
        ));
        assert!(entry_fires(
            Some(&state("a", Some("restore"))),
            &state("a", Some("migrate"))
        ));
    }
}
