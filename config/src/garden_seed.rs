//! The garden controller's seed-side controllers (gardener-controller-manager's names):
//! `controllers.seedSecrets` (the `seed-<name>` namespace and its mirrored Secrets),
//! `controllers.seedBackupBucketsCheck` (`BackupBucketsReady`) and `controllers.bastion` (Bastion
//! expiry); their defaults and validation.

use serde::{Deserialize, Serialize};

use crate::common::ConditionThreshold;
use crate::duration::Duration;
use crate::validate::Checker;

/// `controllers.seedSecrets` (GCM runs it with `controllers.seed.concurrentSyncs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SeedSecretsController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
}

impl Default for SeedSecretsController {
    fn default() -> Self {
        SeedSecretsController {
            concurrent_syncs: 5,
        }
    }
}

/// `controllers.seedBackupBucketsCheck`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SeedBackupBucketsCheckController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Check period per Seed (also the reconcile timeout).
    pub sync_period: Duration,
    /// How long `BackupBucketsReady` may stay `Progressing` before turning `False`/`Unknown`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub condition_thresholds: Vec<ConditionThreshold>,
}

impl Default for SeedBackupBucketsCheckController {
    fn default() -> Self {
        SeedBackupBucketsCheckController {
            concurrent_syncs: 5,
            sync_period: Duration::from_secs(30),
            condition_thresholds: Vec::new(),
        }
    }
}

/// `controllers.bastion` of the garden side (expiry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GardenBastionController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Maximum age of a Bastion regardless of heartbeats.
    pub max_lifetime: Duration,
}

impl Default for GardenBastionController {
    fn default() -> Self {
        GardenBastionController {
            concurrent_syncs: 5,
            max_lifetime: Duration::from_hours(24),
        }
    }
}

/// Validates the blocks.
pub(crate) fn validate(
    checker: &mut Checker,
    secrets: &SeedSecretsController,
    buckets: &SeedBackupBucketsCheckController,
) {
    checker.at_least(
        "controllers.seedSecrets.concurrentSyncs",
        secrets.concurrent_syncs,
        1,
    );
    checker.at_least(
        "controllers.seedBackupBucketsCheck.concurrentSyncs",
        buckets.concurrent_syncs,
        1,
    );
    checker.positive_duration(
        "controllers.seedBackupBucketsCheck.syncPeriod",
        buckets.sync_period,
    );
    checker.condition_thresholds(
        "controllers.seedBackupBucketsCheck.conditionThresholds",
        &buckets.condition_thresholds,
    );
}

/// Validates `controllers.bastion`.
pub(crate) fn validate_bastion(checker: &mut Checker, bastion: &GardenBastionController) {
    checker.at_least(
        "controllers.bastion.concurrentSyncs",
        bastion.concurrent_syncs,
        1,
    );
    checker.positive_duration("controllers.bastion.maxLifetime", bastion.max_lifetime);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_gcms_and_zero_values_are_reported() {
        let mut checker = Checker::default();
        validate(
            &mut checker,
            &SeedSecretsController::default(),
            &SeedBackupBucketsCheckController::default(),
        );
        validate_bastion(&mut checker, &GardenBastionController::default());
        assert!(checker.into_problems().is_empty());
        assert_eq!(
            GardenBastionController::default().max_lifetime,
            Duration::from_hours(24)
        );
        let mut checker = Checker::default();
        validate(
            &mut checker,
            &SeedSecretsController {
                concurrent_syncs: 0,
            },
            &SeedBackupBucketsCheckController {
                sync_period: Duration::ZERO,
                ..Default::default()
            },
        );
        validate_bastion(
            &mut checker,
            &GardenBastionController {
                max_lifetime: Duration::ZERO,
                ..Default::default()
            },
        );
        let problems: Vec<String> = checker
            .into_problems()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(problems.len(), 3, "{problems:?}");
    }
}
