//! BackupBucket controller (spec `gardenlet-backup-bastion-seed.md` §1): for each core
//! BackupBucket with `spec.seedName` = this seed, puts finalizers on the bucket and its
//! credentials, copies the credentials into the seed (`garden/bucket-<name>`), creates the
//! cluster-scoped `extensions.gardener.cloud` BackupBucket of the same name (re-annotated with
//! `gardener.cloud/operation=reconcile` by §0.1's rules), reports the extension's
//! lastOperation/lastError/providerStatus into the core status and copies a generated secret to
//! the garden (`garden/generated-bucket-<name>`, owned by the bucket). Deletion runs in the spec's
//! order (generated secret, extension object with confirmation, seed secret, finalizers).
//!
//! Triggers: garden BackupBuckets of this seed on creation, deletion and changes of generation or
//! of the `gardener.cloud/timestamp` annotation (gardener-apiserver turns the Seed controller's
//! per-sync `operation=reconcile` patch into a generation bump and strips the annotation; on a
//! CRD-served garden the annotations stay, so the agent strips `operation=reconcile` itself, or
//! the LOC trigger of the BackupEntry controller would drop every later bucket change); seed
//! extension BackupBuckets through the LOC trigger. Workers:
//! `controllers.backupBucket.concurrentSyncs` (20).

pub mod delete;
pub mod desired;
pub mod io;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use futures::TryStreamExt;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_api::core::BackupBucket;
use seedlet_api::extensions;
use seedlet_api::names::annotations;

pub use io::Error;

use crate::context::AgentContext;
use crate::extension_sync::trigger;

/// Controller name (logs, metrics label).
pub const NAME: &str = "backupbucket";
/// Parallel reconciles when `controllers.backupBucket.concurrentSyncs` is unset.
pub const DEFAULT_CONCURRENT_SYNCS: i64 = 20;

/// Dependencies of one run on one garden client.
pub struct BackupBuckets {
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
}

impl std::fmt::Debug for BackupBuckets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackupBuckets")
            .field("seed", &self.seed_name)
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
    let concurrency = agent
        .config
        .controllers
        .backup_bucket
        .as_ref()
        .and_then(|config| config.concurrent_syncs)
        .unwrap_or(DEFAULT_CONCURRENT_SYNCS);
    let seed_name = agent.seed_name.clone();
    let (reader, writer) = reflector::store::<BackupBucket>();
    let buckets = seedlet_runtime::triggers::filter_changes(
        watcher::watcher(
            Api::<BackupBucket>::all(garden.clone()),
            watcher::Config::default(),
        )
        .backoff(seedlet_runtime::watch::watch_backoff())
        .modify(seedlet_runtime::watch::slim)
        .reflect(writer),
        bucket_change,
    )
    .try_filter(move |bucket| {
        futures::future::ready(bucket.spec.seed_name.as_deref() == Some(seed_name.as_str()))
    });
    let extension_events = trigger::changes(
        watcher::watcher(
            Api::<extensions::BackupBucket>::all(agent.seed.clone()),
            watcher::Config::default(),
        )
        .backoff(seedlet_runtime::watch::watch_backoff()),
        |object: &extensions::BackupBucket| {
            trigger::state_of(
                object,
                object
                    .status
                    .as_ref()
                    .and_then(|status| status.last_operation.as_ref()),
            )
        },
    );
    let ctx = Arc::new(BackupBuckets {
        clock: agent.clock.clone(),
        events: agent.events.clone(),
        field_manager: agent.field_manager,
        concurrency: seedlet_runtime::watch::concurrency(concurrency),
        seed: agent.seed.clone(),
        seed_name: agent.seed_name.clone(),
        garden,
    });
    let controller = seedlet_runtime::controller::Triggers::for_stream(buckets, reader)
        .watches_stream(
            futures::StreamExt::map(extension_events, Ok::<_, watcher::Error>),
            |object: extensions::BackupBucket| Some(ObjectRef::new(&object.name_any())),
        );
    seedlet_runtime::controller::run(controller, ctx, agent.stop.clone(), agent.metrics.common())
        .await;
}

/// Change key of a core BackupBucket: identity, generation, deletion and the
/// `gardener.cloud/timestamp` annotation the Seed controller's per-sync patch sets (status
/// writes, and the agent stripping `operation=reconcile`, do not trigger).
pub fn bucket_change(bucket: &BackupBucket) -> String {
    let annotations = bucket.annotations();
    seedlet_runtime::triggers::key_of(&(
        bucket.uid(),
        bucket.metadata.generation,
        bucket.metadata.deletion_timestamp.is_some(),
        annotations.get(annotations::TIMESTAMP),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bucket_change_ignores_status_but_not_generation_or_annotations() {
        let bucket: BackupBucket = serde_json::from_value(json!({
            "metadata": {"name": "b", "uid": "u", "generation": 1},
            "spec": {"provider": {"type": "local", "region": "r"}},
        }))
        .unwrap();
        let mut status = bucket.clone();
        status.status = Some(Default::default());
        assert_eq!(bucket_change(&bucket), bucket_change(&status));
        let mut newer = bucket.clone();
        newer.metadata.generation = Some(2);
        assert_ne!(bucket_change(&bucket), bucket_change(&newer));
        let mut annotated = bucket.clone();
        annotated
            .annotations_mut()
            .insert(annotations::TIMESTAMP.into(), "t".into());
        assert_ne!(bucket_change(&bucket), bucket_change(&annotated));
    }
}
