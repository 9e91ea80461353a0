//! Seed backup buckets check (`seed-backupbuckets-check`, gardener-controller-manager, spec
//! §6.1): per Seed, `BackupBucketsReady` from the BackupBuckets with `spec.seedName` = the Seed
//! (any lastError → False, none → Unknown, else True; failures after True pass the configured
//! threshold as `Progressing`), merge-patched into the Seed status when it changed.
//!
//! Triggered by Seed creations and by BackupBucket creations, deletions and changes of
//! `status.lastError` (→ `spec.seedName`); requeued every
//! `controllers.seedBackupBucketsCheck.syncPeriod`.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;
use seedlet_api::core::{BackupBucket, Seed};
use seedlet_api::names::condition_types;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::key_of;

use crate::caches::{GardenCaches, changes, controller_on_changes};

pub use reconcile::{Error, backup_buckets_ready};

/// Controller name (logs, metrics label).
pub const NAME: &str = "seed-backupbuckets-check";

pub use crate::controllers::seed_check::{Check, Judge, SeedCheck, Settings};

/// The settings of this check from the garden controller configuration.
pub fn settings(config: &seedlet_config::GardenControllerConfiguration) -> Settings {
    let check = &config.controllers.seed_backup_buckets_check;
    Settings::from_block(
        check.concurrent_syncs,
        check.sync_period,
        &check.condition_thresholds,
        condition_types::BACKUP_BUCKETS_READY,
    )
}

/// This check's controller.
pub type BackupBucketsCheck = SeedCheck<BackupBucketsReady>;

/// The `BackupBucketsReady` check.
#[derive(Debug)]
pub struct BackupBucketsReady;

impl Judge for BackupBucketsReady {
    const NAME: &'static str = NAME;
    type Error = Error;

    fn settings(config: &seedlet_config::GardenControllerConfiguration) -> Settings {
        settings(config)
    }

    async fn check(seed: &Seed, check: &Check) -> Result<(), Error> {
        reconcile::check(seed, check).await
    }

    fn triggers(_check: &Check, caches: &GardenCaches) -> Triggers<Seed> {
        controller_on_changes(&caches.all::<Seed>(), |seed: &Seed| {
            key_of(&(seed.uid(), seed.metadata.deletion_timestamp.is_some()))
        })
        .watches_stream(
            changes(&caches.all::<BackupBucket>(), bucket_key),
            bucket_seed,
        )
    }
}

/// Change key of a BackupBucket: its Seed and its lastError's description.
pub fn bucket_key(bucket: &BackupBucket) -> String {
    key_of(&(
        &bucket.spec.seed_name,
        bucket
            .status
            .as_ref()
            .and_then(|s| s.last_error.as_ref())
            .map(|e| &e.description),
    ))
}

/// The Seed of a BackupBucket.
pub fn bucket_seed(bucket: BackupBucket) -> Option<ObjectRef<Seed>> {
    bucket.spec.seed_name.as_deref().map(ObjectRef::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bucket_key_follows_seed_and_error_description_only() {
        let bucket: BackupBucket = serde_json::from_value(json!({"metadata": {"name": "b"},
            "spec": {"provider": {"type": "t", "region": "r"}, "seedName": "s"},
            "status": {"lastOperation": {"type": "Create", "state": "Processing", "progress": 0,
                "description": "", "lastUpdateTime": "2024-01-01T00:00:00Z"}}}))
        .unwrap();
        let mut other_op = bucket.clone();
        other_op.status.as_mut().unwrap().last_operation = None;
        assert_eq!(bucket_key(&bucket), bucket_key(&other_op));
        let mut failing = bucket.clone();
        failing.status.as_mut().unwrap().last_error = Some(seedlet_api::common::LastError {
            description: "x".into(),
            task_id: None,
            codes: vec![],
            last_update_time: None,
        });
        assert_ne!(bucket_key(&bucket), bucket_key(&failing));
        assert_eq!(bucket_seed(bucket).unwrap().name, "s");
    }
}
