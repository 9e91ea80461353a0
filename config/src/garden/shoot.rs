//! Configuration of the garden-side shoot lifecycle helpers (`controllers.shootStatusLabel`,
//! `shootHibernation`, `shootMaintenance`, `shootQuota`, `shootRetry`, `shootConditions`,
//! `shootMigration`, `managedSeedSet`), named and defaulted as in gardener-controller-manager's
//! `ControllerManagerConfiguration`.

use serde::{Deserialize, Serialize};

use super::GardenControllers;
use crate::duration::Duration;
use crate::validate::Checker;

/// Default `concurrentSyncs` of every shoot helper.
const CONCURRENT_SYNCS: u32 = 5;

/// `controllers.shootStatusLabel`: keeps the `shoot.gardener.cloud/status` label current.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootStatusLabelController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
}

/// `controllers.shootHibernation`: hibernation schedules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootHibernationController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// How far back a missed schedule activation is still acted upon.
    pub trigger_deadline_duration: Duration,
}

/// `controllers.shootMaintenance`: the maintenance time window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootMaintenanceController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Adds the `restartControlPlanePods` task to maintained shoots.
    pub enable_shoot_control_plane_restarter: bool,
    /// Adds the `restartCoreAddons` task to maintained shoots.
    pub enable_shoot_core_addon_restarter: bool,
}

/// `controllers.shootQuota`: cluster lifetimes from Quotas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootQuotaController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Check period per Shoot; also the reconcile timeout.
    pub sync_period: Duration,
}

/// `controllers.shootRetry`: retries of rate-limited failed shoots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootRetryController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Time after the failure before the retry.
    pub retry_period: Duration,
    /// Upper bound of the random delay added to `retryPeriod`.
    pub retry_jitter_period: Duration,
}

/// `controllers.shootConditions`: managed-seed conditions on their shoots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootConditionsController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
}

/// `controllers.shootMigration`: the `ReadyForMigration` constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootMigrationController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
}

/// `controllers.managedSeedSet`: replicas of Shoot + ManagedSeed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ManagedSeedSetController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Retries of a replica's failed Shoot before the set gives up on it.
    pub max_shoot_retries: u32,
    /// Requeue period per set; also the reconcile timeout.
    pub sync_period: Duration,
}

impl Default for ManagedSeedSetController {
    fn default() -> Self {
        // [QUIRK] upstream defaults syncPeriod only when the whole block is absent; here an
        // unset field gets the default too.
        Self {
            concurrent_syncs: CONCURRENT_SYNCS,
            max_shoot_retries: 3,
            sync_period: Duration::from_mins(30),
        }
    }
}

impl Default for ShootStatusLabelController {
    fn default() -> Self {
        Self {
            concurrent_syncs: CONCURRENT_SYNCS,
        }
    }
}

impl Default for ShootHibernationController {
    fn default() -> Self {
        Self {
            concurrent_syncs: CONCURRENT_SYNCS,
            trigger_deadline_duration: Duration::from_hours(2),
        }
    }
}

impl Default for ShootMaintenanceController {
    fn default() -> Self {
        Self {
            concurrent_syncs: CONCURRENT_SYNCS,
            enable_shoot_control_plane_restarter: true,
            enable_shoot_core_addon_restarter: false,
        }
    }
}

impl Default for ShootQuotaController {
    fn default() -> Self {
        Self {
            concurrent_syncs: CONCURRENT_SYNCS,
            sync_period: Duration::from_mins(60),
        }
    }
}

impl Default for ShootRetryController {
    fn default() -> Self {
        Self {
            concurrent_syncs: CONCURRENT_SYNCS,
            retry_period: Duration::from_mins(10),
            retry_jitter_period: Duration::from_mins(5),
        }
    }
}

impl Default for ShootConditionsController {
    fn default() -> Self {
        Self {
            concurrent_syncs: CONCURRENT_SYNCS,
        }
    }
}

impl Default for ShootMigrationController {
    fn default() -> Self {
        Self {
            concurrent_syncs: CONCURRENT_SYNCS,
        }
    }
}

/// Records every problem of the shoot helpers' blocks.
pub(crate) fn validate(controllers: &GardenControllers, checker: &mut Checker) {
    let counts = [
        (
            "shootStatusLabel",
            controllers.shoot_status_label.concurrent_syncs,
        ),
        (
            "shootHibernation",
            controllers.shoot_hibernation.concurrent_syncs,
        ),
        (
            "shootMaintenance",
            controllers.shoot_maintenance.concurrent_syncs,
        ),
        ("shootQuota", controllers.shoot_quota.concurrent_syncs),
        ("shootRetry", controllers.shoot_retry.concurrent_syncs),
        (
            "shootConditions",
            controllers.shoot_conditions.concurrent_syncs,
        ),
        (
            "shootMigration",
            controllers.shoot_migration.concurrent_syncs,
        ),
        (
            "managedSeedSet",
            controllers.managed_seed_set.concurrent_syncs,
        ),
    ];
    for (block, value) in counts {
        checker.at_least(&format!("controllers.{block}.concurrentSyncs"), value, 1);
    }
    checker.positive_duration(
        "controllers.shootQuota.syncPeriod",
        controllers.shoot_quota.sync_period,
    );
    checker.positive_duration(
        "controllers.shootRetry.retryPeriod",
        controllers.shoot_retry.retry_period,
    );
    checker.positive_duration(
        "controllers.managedSeedSet.syncPeriod",
        controllers.managed_seed_set.sync_period,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(controllers: &GardenControllers) -> Vec<String> {
        let mut checker = Checker::default();
        validate(controllers, &mut checker);
        checker
            .into_problems()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn defaults_match_gardener_controller_manager() {
        let controllers = GardenControllers::default();
        assert!(problems(&controllers).is_empty());
        assert_eq!(
            controllers.shoot_hibernation.trigger_deadline_duration,
            Duration::from_hours(2)
        );
        assert!(
            controllers
                .shoot_maintenance
                .enable_shoot_control_plane_restarter
        );
        assert!(
            !controllers
                .shoot_maintenance
                .enable_shoot_core_addon_restarter
        );
        assert_eq!(controllers.shoot_quota.sync_period, Duration::from_mins(60));
        assert_eq!(
            controllers.shoot_retry.retry_period,
            Duration::from_mins(10)
        );
        assert_eq!(
            controllers.shoot_retry.retry_jitter_period,
            Duration::from_mins(5)
        );
        assert_eq!(controllers.shoot_status_label.concurrent_syncs, 5);
        assert_eq!(controllers.managed_seed_set.max_shoot_retries, 3);
        assert_eq!(
            controllers.managed_seed_set.sync_period,
            Duration::from_mins(30)
        );
    }

    #[test]
    fn blocks_decode_with_gardener_field_names() {
        let controllers: GardenControllers = serde_json::from_value(serde_json::json!({
            "shootHibernation": {"triggerDeadlineDuration": "30m"},
            "shootRetry": {"retryPeriod": "1m", "retryJitterPeriod": "10s"},
            "shootMaintenance": {"enableShootCoreAddonRestarter": true},
        }))
        .expect("decodes");
        assert_eq!(
            controllers.shoot_hibernation.trigger_deadline_duration,
            Duration::from_mins(30)
        );
        assert_eq!(controllers.shoot_hibernation.concurrent_syncs, 5);
        assert_eq!(controllers.shoot_retry.retry_period, Duration::from_mins(1));
        assert!(
            controllers
                .shoot_maintenance
                .enable_shoot_core_addon_restarter
        );
        assert!(
            controllers
                .shoot_maintenance
                .enable_shoot_control_plane_restarter
        );
    }

    #[test]
    fn zero_counts_and_periods_are_reported_with_their_paths() {
        let mut controllers = GardenControllers::default();
        controllers.shoot_status_label.concurrent_syncs = 0;
        controllers.shoot_quota.sync_period = Duration::ZERO;
        controllers.shoot_retry.retry_period = Duration::ZERO;
        assert_eq!(
            problems(&controllers),
            [
                "controllers.shootStatusLabel.concurrentSyncs: must be at least 1",
                "controllers.shootQuota.syncPeriod: must be > 0",
                "controllers.shootRetry.retryPeriod: must be > 0",
            ]
        );
    }
}
