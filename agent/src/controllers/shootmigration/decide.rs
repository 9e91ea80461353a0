//! The force-restore rules of gardenlet ≤ v1.65's Migration reconciler as a pure function: for a
//! shoot migrating to this seed, when the migration started and whether the restore must be
//! forced (annotation, or grace period over while the source makes no progress).

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::Shoot;
use seedlet_api::names::shoot_lifecycle;

/// Settings of `controllers.shootMigration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Requeue while a migration is watched.
    pub sync_period: Duration,
    /// Time after `migrationStartTime` when a stalled migration is force-restored.
    pub grace_period: Duration,
    /// How long a `Migrate` in `Processing`/`Error` counts as in progress after its last update.
    pub last_operation_stale_duration: Duration,
}

/// What happens to `status.migrationStartTime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartTime {
    /// Left as it is.
    Keep,
    /// Set to now (first reconcile of this migration).
    Set,
    /// Cleared (the shoot no longer migrates here).
    Clear,
}

/// The outcome of one reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The start time write.
    pub start_time: StartTime,
    /// Abort the migration so that this seed restores the shoot.
    pub force_restore: bool,
    /// Remove `shoot.gardener.cloud/force-restore` after forcing.
    pub remove_annotation: bool,
    /// Look again after this long (`None`: wait for a change).
    pub requeue: Option<Duration>,
}

/// Whether `shoot` is being migrated to `seed`: `spec.seedName` is this seed and
/// `status.seedName` another one.
pub fn migrating_to(shoot: &Shoot, seed: &str) -> bool {
    let status = shoot.status.as_ref().and_then(|s| s.seed_name.as_deref());
    shoot.spec.seed_name.as_deref() == Some(seed) && status.is_some_and(|source| source != seed)
}

/// Whether the shoot carries `shoot.gardener.cloud/force-restore=true`.
pub fn force_annotated(shoot: &Shoot) -> bool {
    shoot
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(shoot_lifecycle::FORCE_RESTORE))
        .is_some_and(|value| value == "true")
}

/// Whether the source seed still works on the migration: lastOperation `Migrate` in
/// `Processing` or `Error`, updated no longer than the stale duration ago.
pub fn in_progress(shoot: &Shoot, now: Timestamp, stale: Duration) -> bool {
    shoot.last_operation().is_some_and(|op| {
        op.type_ == LastOperationType::Migrate
            && matches!(
                op.state,
                LastOperationState::Processing | LastOperationState::Error
            )
            && op.last_update_time.0 >= now - signed(stale)
    })
}

/// Decides one reconcile of `shoot` for seed `seed` at `now`.
pub fn plan(shoot: &Shoot, seed: &str, settings: &Settings, now: Timestamp) -> Plan {
    let stored = shoot
        .status
        .as_ref()
        .and_then(|s| s.migration_start_time.as_ref())
        .map(|t| t.0);
    if shoot.metadata.deletion_timestamp.is_some() || !migrating_to(shoot, seed) {
        return Plan {
            start_time: if stored.is_some() {
                StartTime::Clear
            } else {
                StartTime::Keep
            },
            force_restore: false,
            remove_annotation: false,
            requeue: None,
        };
    }
    let start = stored.unwrap_or(now);
    let annotated = force_annotated(shoot);
    let elapsed = now > start + signed(settings.grace_period);
    let force_restore =
        annotated || (elapsed && !in_progress(shoot, now, settings.last_operation_stale_duration));
    Plan {
        start_time: if stored.is_some() {
            StartTime::Keep
        } else {
            StartTime::Set
        },
        force_restore,
        remove_annotation: force_restore && annotated,
        requeue: (!force_restore).then_some(settings.sync_period),
    }
}

fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn settings() -> Settings {
        Settings {
            sync_period: MINUTE,
            grace_period: 120 * MINUTE,
            last_operation_stale_duration: 10 * MINUTE,
        }
    }

    fn shoot(spec_seed: &str, status: Value, annotations: Value, deleting: bool) -> Shoot {
        let mut shoot: Shoot = serde_json::from_value(json!({
            "metadata": {"name": "s", "namespace": "garden-dev", "annotations": annotations},
            "spec": {"region": "r", "seedName": spec_seed, "provider": {"type": "local"}},
            "status": status,
        }))
        .expect("shoot");
        if deleting {
            shoot.metadata.deletion_timestamp = Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::UNIX_EPOCH),
            );
        }
        shoot
    }

    fn op(state: &str, at: &str) -> Value {
        json!({"type": "Migrate", "state": state, "progress": 40, "description": "", "lastUpdateTime": at})
    }

    #[test]
    fn the_restore_is_forced_by_annotation_or_after_the_grace_period_without_progress() {
        let now: Timestamp = "2026-01-01T12:00:00Z".parse().unwrap();
        let started_long_ago = "2026-01-01T09:00:00Z";
        let started_recently = "2026-01-01T11:30:00Z";
        let force = json!({"shoot.gardener.cloud/force-restore": "true"});
        let none = json!({});
        use StartTime::{Clear, Keep, Set};
        #[rustfmt::skip]
        let cases = [
            // (spec seed, status, annotations, deleting) → (start time, force, remove annotation, requeue)
            ("b", json!({"seedName": "a"}), none.clone(), false, (Set, false, false, Some(MINUTE)), "migration seen first"),
            ("b", json!({"seedName": "a"}), force.clone(), false, (Set, true, true, None), "annotation forces at once"),
            ("b", json!({"seedName": "a", "migrationStartTime": started_long_ago}), none.clone(), false, (Keep, true, false, None), "grace period over, no operation"),
            ("b", json!({"seedName": "a", "migrationStartTime": started_long_ago, "lastOperation": op("Processing", "2026-01-01T11:55:00Z")}), none.clone(), false, (Keep, false, false, Some(MINUTE)), "source still working"),
            ("b", json!({"seedName": "a", "migrationStartTime": started_long_ago, "lastOperation": op("Error", "2026-01-01T11:40:00Z")}), none.clone(), false, (Keep, true, false, None), "source stale"),
            ("b", json!({"seedName": "a", "migrationStartTime": started_long_ago, "lastOperation": op("Succeeded", "2026-01-01T11:59:00Z")}), none.clone(), false, (Keep, true, false, None), "succeeded does not count as progress"),
            ("b", json!({"seedName": "a", "migrationStartTime": started_recently}), none.clone(), false, (Keep, false, false, Some(MINUTE)), "within the grace period"),
            ("b", json!({"seedName": "b", "migrationStartTime": started_recently}), none.clone(), false, (Clear, false, false, None), "no longer migrating"),
            ("b", json!({"seedName": "b"}), force.clone(), false, (Keep, false, false, None), "not migrating: annotation ignored"),
            ("a", json!({"seedName": "c"}), none.clone(), false, (Keep, false, false, None), "migrating to another seed"),
            ("b", json!({"seedName": "a", "migrationStartTime": started_recently}), force, true, (Clear, false, false, None), "deleting"),
        ];
        for (spec_seed, status, annotations, deleting, want, case) in cases {
            let shoot = shoot(spec_seed, status, annotations, deleting);
            let plan = plan(&shoot, "b", &settings(), now);
            assert_eq!(
                (
                    plan.start_time,
                    plan.force_restore,
                    plan.remove_annotation,
                    plan.requeue
                ),
                want,
                "{case}"
            );
        }
    }
}
