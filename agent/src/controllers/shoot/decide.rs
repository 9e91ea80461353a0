//! When the Shoot controller acts (spec §1.2–§1.5), as pure functions: the responsible seed, the
//! operation type, the reconcile decision (`CalculateControllerInfos`) and the seed gate. `now`
//! and the random fraction used to spread work over a window are arguments.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::conditions::ConditionStatus;
use seedlet_api::core::maintenance_window::Window;
use seedlet_api::core::{GardenerInfo, Seed, Shoot};
use seedlet_api::names::{
    annotations, condition_types, namespaces, parses_as_true, shoot_lifecycle,
};

use crate::shoot_flow_switches::is_migrating;

/// How long after a reconcile inside the window the window counts as used
/// (`MaintenanceTimeWindowDurationMaximum`).
pub const MAINTENANCE_WINDOW_MAXIMUM: SignedDuration = SignedDuration::from_hours(6);
/// Why an emergency-stopped seed does not reconcile.
pub const REASON_EMERGENCY_STOP: &str = "Shoot reconciliation blocked by Seed emergency switch";
/// Why a failed or ignored shoot does not reconcile.
pub const REASON_FAILED_OR_IGNORED: &str = "Shoot is failed or ignored.";
/// Why a confined shoot waits for its window.
pub const REASON_OUTSIDE_WINDOW: &str = "Shoot is not in its effective maintenance time window or was already reconciled during this time window.";

/// The seed responsible for a shoot: none without `spec.seedName`; during a migration
/// (`status.seedName` set and different) the source seed.
pub fn responsible_seed(shoot: &Shoot) -> Option<&str> {
    let spec = shoot.spec.seed_name.as_deref()?;
    match shoot.status.as_ref().and_then(|s| s.seed_name.as_deref()) {
        Some(status) if status != spec => Some(status),
        _ => Some(spec),
    }
}

/// The operation type (§1.3), first match wins.
pub fn operation_type(shoot: &Shoot) -> LastOperationType {
    use LastOperationType as T;
    let last = shoot.last_operation();
    if is_migrating(shoot) {
        return T::Migrate;
    }
    if last.is_some_and(|op| {
        op.type_ == T::Migrate
            && matches!(
                op.state,
                LastOperationState::Succeeded | LastOperationState::Aborted
            )
    }) {
        return T::Restore;
    }
    let operation = shoot
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::OPERATION))
        .map(String::as_str);
    if operation == Some(annotations::OPERATION_MIGRATE) {
        return T::Migrate;
    }
    if shoot.metadata.deletion_timestamp.is_some() {
        return T::Delete;
    }
    if operation == Some(annotations::OPERATION_RESTORE) {
        return T::Restore;
    }
    match last {
        None => T::Create,
        Some(op) if matches!(op.type_, T::Create | T::Migrate | T::Restore) && !op.succeeded() => {
            op.type_
        }
        Some(_) => T::Reconcile,
    }
}

/// The `gardener.cloud/operation` value that asks for a new operation the way gardener-apiserver
/// reads it on a Shoot update (§1.6): `retry` of a `Failed` shoot, or `reconcile` of a shoot with
/// a last operation that has not failed. gardener-apiserver answers both by bumping the generation
/// and removing the annotation, so a gardenlet never sees them; a garden that serves Shoots from
/// a CRD (`seedlet crds --garden`) bumps nothing. The agent then does that part itself: such a
/// request counts as a new generation ([`controller_infos`]) and is removed when the operation
/// starts. Behind gardener-apiserver the result is the same, because the request is gone before
/// the agent could see it. Every other value (and `retry` of a shoot that has not failed, which
/// gardener-apiserver leaves in place) is not a request.
///
/// The same holds for `confirmation.gardener.cloud/force-deletion` on a deleting Shoot whose
/// `lastErrors` carry one of the codes gardener-apiserver accepts it for
/// ([`FORCE_DELETION_CODES`]); that request is never removed (gardener-apiserver refuses to drop
/// the annotation once set), the Shoot is gone when the flow is done.
pub fn operation_request(shoot: &Shoot) -> Option<&'static str> {
    if shoot.metadata.deletion_timestamp.is_some() && force_deletion_allowed(shoot) {
        return Some(annotations::CONFIRMATION_FORCE_DELETION);
    }
    let last = shoot.last_operation()?;
    let failed = last.state == LastOperationState::Failed;
    let wanted = if failed {
        shoot_lifecycle::OPERATION_RETRY
    } else {
        annotations::OPERATION_RECONCILE
    };
    // The value may list several operations separated by `;`.
    annotation(shoot, annotations::OPERATION)?
        .split(';')
        .any(|operation| operation.trim() == wanted)
        .then_some(wanted)
}

/// The error codes gardener-apiserver requires in `status.lastErrors` before it accepts
/// `confirmation.gardener.cloud/force-deletion` (spec §1.6).
pub const FORCE_DELETION_CODES: [&str; 5] = [
    "ERR_INFRA_UNAUTHENTICATED",
    "ERR_INFRA_UNAUTHORIZED",
    "ERR_INFRA_DEPENDENCIES",
    "ERR_CLEANUP_CLUSTER_RESOURCES",
    "ERR_CONFIGURATION_PROBLEM",
];

/// Whether the Shoot carries a truthy force-deletion annotation that gardener-apiserver would
/// have accepted (one of [`FORCE_DELETION_CODES`] in `lastErrors`).
fn force_deletion_allowed(shoot: &Shoot) -> bool {
    parses_as_true(annotation(shoot, annotations::CONFIRMATION_FORCE_DELETION))
        && shoot.status.as_ref().is_some_and(|status| {
            status
                .last_errors
                .iter()
                .flat_map(|error| &error.codes)
                .any(|code| FORCE_DELETION_CODES.contains(&code.as_str()))
        })
}

/// What the decision reads from configuration and the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `controllers.shoot.syncPeriod`.
    pub sync_period: Duration,
    /// `controllers.shoot.respectSyncPeriodOverwrite`.
    pub respect_sync_period_overwrite: bool,
    /// `controllers.shoot.reconcileInMaintenanceOnly`.
    pub reconcile_in_maintenance_only: bool,
    /// The agent's own version (`status.gardener.version`).
    pub version: String,
}

/// The outcome of `CalculateControllerInfos`.
#[derive(Debug, Clone, PartialEq)]
pub struct Infos {
    /// Run the flow now; otherwise the reason why not.
    pub reconcile_now: Result<(), &'static str>,
    /// Failed or ignored: only the Cluster is kept in sync.
    pub only_sync_cluster: bool,
    /// Delay for create events (initial list).
    pub enqueue_after: Duration,
    /// Requeue after success or a skip; `None`: none.
    pub requeue_after: Option<Duration>,
}

/// Computes the reconcile decision of §1.4. `seed` is `None` for the create-event delay (no
/// emergency check); `fraction` in `[0, 1)` places random instants in a window.
pub fn controller_infos(
    shoot: &Shoot,
    seed: Option<&Seed>,
    settings: &Settings,
    now: Timestamp,
    fraction: f64,
) -> Infos {
    let status = shoot.status.as_ref();
    let last = shoot.last_operation();
    let generation = shoot.metadata.generation;
    // A pending operation request stands for the generation bump gardener-apiserver would make.
    let observed = status
        .and_then(|s| s.observed_generation)
        .filter(|_| operation_request(shoot).is_none());
    let own_version = status
        .and_then(|s| s.gardener.as_ref())
        .map(|g| g.version.as_str())
        == Some(settings.version.as_str());
    let failed = last.is_some_and(|op| op.state == LastOperationState::Failed)
        && generation == observed
        && own_version;
    let respect = settings.respect_sync_period_overwrite
        || shoot.metadata.namespace.as_deref() == Some(namespaces::GARDEN);
    let ignored = respect && parses_as_true(annotation(shoot, annotations::SHOOT_IGNORE));
    let up_to_date = generation == observed && last.is_some_and(|op| op.succeeded());
    let maintenance = shoot.spec.maintenance.as_ref();
    let confined = settings.reconcile_in_maintenance_only
        || maintenance
            .and_then(|m| m.confine_spec_update_rollout)
            .unwrap_or(false);
    let time_window = maintenance.and_then(|m| m.time_window.as_ref());
    let window = Window::from_spec(
        time_window.map(|w| w.begin.as_str()),
        time_window.map(|w| w.end.as_str()),
    );
    let already_in_window = last.is_some_and(|op| {
        window.contains(op.last_update_time.0)
            && now.duration_since(op.last_update_time.0) <= MAINTENANCE_WINDOW_MAXIMUM
    });
    let in_window_fresh = window.contains(now) && !already_in_window;
    let sync_period = sync_period(shoot, settings, respect);
    let is_reconcile = operation_type(shoot) == LastOperationType::Reconcile;
    let next_window = to_std(window.next_delay(now, fraction));

    let reconcile_now = if seed.is_some_and(emergency_stopped) {
        Err(REASON_EMERGENCY_STOP)
    } else if failed || ignored {
        Err(REASON_FAILED_OR_IGNORED)
    } else if !is_reconcile || !up_to_date || !confined || in_window_fresh {
        Ok(())
    } else {
        Err(REASON_OUTSIDE_WINDOW)
    };
    let enqueue_after = if failed || ignored || !is_reconcile || !up_to_date || !confined {
        Duration::ZERO
    } else if in_window_fresh {
        to_std(window.delay_within(now, fraction))
    } else {
        next_window
    };
    let requeue_after = if failed || ignored {
        None
    } else if !confined {
        Some(sync_period)
    } else {
        Some(next_window)
    };
    Infos {
        reconcile_now,
        only_sync_cluster: failed || ignored,
        enqueue_after,
        requeue_after,
    }
}

/// The seed gate of §1.5: `Err` with upstream's message when the seed is not ready for shoot
/// work. Skipped (Ok) for a deleting Seed. The identity check compares name and version only:
/// seedlet's instance id changes with every leadership term, and comparing it would hold every
/// shoot back after each agent restart until the Seed status caught up (upstream's behaviour,
/// spec §1.5 "Seedlet").
pub fn seed_gate(seed: &Seed, identity: &GardenerInfo) -> Result<(), String> {
    if seed.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let status = seed.status.as_ref();
    let mut error = None;
    let observed = status.and_then(|s| s.gardener.as_ref());
    if observed.is_none_or(|g| g.name != identity.name || g.version != identity.version) {
        error = Some(format!(
            "seed is not up to date: observing Gardener version not up to date ({}/{})",
            observed.map_or("", |g| g.version.as_str()),
            identity.version
        ));
    } else {
        let observed_generation = status.and_then(|s| s.observed_generation).unwrap_or(0);
        let generation = seed.metadata.generation.unwrap_or(0);
        if observed_generation < generation {
            error = Some(format!(
                "seed is not up to date: observed generation outdated ({observed_generation}/{generation})"
            ));
        }
    }
    let required = [
        condition_types::GARDENLET_READY,
        condition_types::SEED_SYSTEM_COMPONENTS_HEALTHY,
    ];
    let conditions = seed.conditions();
    let mut failing = Vec::new();
    for type_ in required {
        match conditions.iter().find(|c| c.type_ == type_) {
            None if error.is_none() => {
                error = Some(format!(
                    "error in seed conditions: condition {type_:?} is missing"
                ));
            }
            None => {}
            Some(condition) if condition.status != ConditionStatus::True => failing.push(type_),
            Some(_) => {}
        }
    }
    if !failing.is_empty() {
        error = Some(format!(
            "seed has failing conditions: [{}]",
            failing.join(" ")
        ));
    }
    error.map_or(Ok(()), Err)
}

/// Whether the Seed carries `emergency-stop-reconciliations: "true"` (exactly).
pub fn emergency_stopped(seed: &Seed) -> bool {
    seed.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::SEED_EMERGENCY_STOP_RECONCILIATIONS))
        .is_some_and(|value| value == "true")
}

/// The sync period: the configured one, replaced by the `sync-period` annotation when
/// overwrites are respected, it parses and it is not smaller.
fn sync_period(shoot: &Shoot, settings: &Settings, respect: bool) -> Duration {
    if !respect {
        return settings.sync_period;
    }
    annotation(shoot, annotations::SHOOT_SYNC_PERIOD)
        .and_then(|text| text.parse::<seedlet_config::Duration>().ok())
        .map(|d| d.as_std())
        .filter(|d| *d >= settings.sync_period)
        .unwrap_or(settings.sync_period)
}

fn annotation<'a>(shoot: &'a Shoot, key: &str) -> Option<&'a str> {
    shoot
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

fn to_std(duration: SignedDuration) -> Duration {
    Duration::try_from(duration).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
