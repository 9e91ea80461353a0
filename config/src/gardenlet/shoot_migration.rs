//! `controllers.shootMigration` of gardenlet ≤ v1.65: the legacy Migration reconciler that
//! force-restores a shoot whose migration stalled. Gardener removed it in v1.66 (together with
//! its feature gate `ForceRestore`); seedlet keeps it for landscapes that still configure it,
//! and runs it only when `featureGates.ForceRestore` is true.

use serde::{Deserialize, Serialize};

use crate::duration::Duration;

/// The feature gate that switches the reconciler on (off by default, as it was in gardenlet).
pub const FORCE_RESTORE_FEATURE_GATE: &str = "ForceRestore";

/// `controllers.shootMigration` (gardenlet ≤ v1.65 field names and defaults).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootMigrationController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Requeue period while a migration is watched.
    pub sync_period: Duration,
    /// How long after `status.migrationStartTime` a stalled migration is force-restored.
    pub grace_period: Duration,
    /// How long a `Migrate` operation in `Processing`/`Error` counts as still in progress after
    /// its last update.
    pub last_operation_stale_duration: Duration,
}

impl Default for ShootMigrationController {
    fn default() -> Self {
        ShootMigrationController {
            concurrent_syncs: 5,
            sync_period: Duration::from_mins(1),
            grace_period: Duration::from_hours(2),
            last_operation_stale_duration: Duration::from_mins(10),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_fields_take_gardenlets_defaults() {
        let parsed: ShootMigrationController =
            serde_json::from_value(serde_json::json!({"gracePeriod": "30m"})).expect("parse");
        assert_eq!(parsed.grace_period, Duration::from_mins(30));
        assert_eq!(parsed.concurrent_syncs, 5);
        assert_eq!(parsed.sync_period, Duration::from_mins(1));
        assert_eq!(
            parsed.last_operation_stale_duration,
            Duration::from_mins(10)
        );
    }
}
