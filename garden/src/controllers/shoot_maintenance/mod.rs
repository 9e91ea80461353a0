//! Shoot maintenance (`shoot-maintenance`, spec §6): watches Shoots in the garden; inside a
//! Shoot's `spec.maintenance.timeWindow` (or when `gardener.cloud/operation` lists `maintain`)
//! it moves the control-plane and worker Kubernetes versions and the machine image versions as
//! the CloudProfile demands (forced when expired or missing, else when automatic updates are on),
//! sets the operation annotations and tasks, records `status.lastMaintenance` and emits
//! `KubernetesVersionMaintenance` / `MachineImageVersionMaintenance` Events. Writes only to the
//! garden.
//!
//! Before writing, the maintained Shoot goes to the API server as a dry run; a refusal (an
//! admission webhook, validation) is recorded as a `Failed` `lastMaintenance` with the spec
//! untouched (a stale Shoot fails that guarded status write too and is retried).
//!
//! With `featureGates.DisableNginxIngressInShoot` an enabled nginx-ingress addon is disabled.
//!
//! Not done (yet): pruning of unsupported feature gates and admission plugins, machine
//! capabilities and in-place-update pools.
//!
//! Triggered by a Shoot's first sighting, by `maintain` newly listed in
//! `gardener.cloud/operation` and by a changed time window; always requeued to a random instant
//! of the next window.

pub mod cleanups;
pub mod migrate;
pub mod operation;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod rotation;
pub mod run;
pub mod versions;
pub mod window;

use std::sync::Arc;

use kube::ResourceExt;
use seedlet_api::core::Shoot;
use seedlet_api::names::{annotations, shoot_lifecycle};
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;

pub use reconcile::Error;

use crate::caches::{GardenCaches, controller_on_transitions};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-maintenance";
/// Component of the Events this controller records.
pub const EVENT_COMPONENT: &str = "shoot-maintenance-controller";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct Maintenance {
    /// Garden client.
    pub client: kube::Client,
    /// Adds the `restartControlPlanePods` task.
    pub restart_control_plane: bool,
    /// Adds the `restartCoreAddons` task.
    pub restart_core_addons: bool,
    /// Disables an enabled nginx-ingress addon (`featureGates.DisableNginxIngressInShoot`).
    pub disable_nginx_ingress: bool,
    /// Time source of every decision.
    pub clock: Arc<dyn Clock>,
    /// Maintenance Events on the Shoot.
    pub events: seedlet_runtime::events::Recorder,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for Maintenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Maintenance").finish_non_exhaustive()
    }
}

impl GardenReconciler for Maintenance {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let config = &garden.config.controllers.shoot_maintenance;
        Some(Self {
            client: garden.client.clone(),
            restart_control_plane: config.enable_shoot_control_plane_restarter,
            restart_core_addons: config.enable_shoot_core_addon_restarter,
            disable_nginx_ingress: garden.config.feature_gates.disable_nginx_ingress_in_shoot,
            clock: garden.clock.clone(),
            events: garden.events.named(EVENT_COMPONENT),
            concurrency: concurrency(i64::from(config.concurrent_syncs)),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Shoot> {
        controller_on_transitions(&caches.all::<Shoot>(), trigger_view, maintenance_requested)
    }
}

/// What the trigger looks at: whether `maintain` is listed, and the time window.
pub fn trigger_view(shoot: &Shoot) -> (bool, Option<serde_json::Value>) {
    (
        operation::lists(
            shoot.annotations().get(annotations::OPERATION),
            shoot_lifecycle::OPERATION_MAINTAIN,
        ),
        shoot
            .spec
            .maintenance
            .as_ref()
            .and_then(|maintenance| maintenance.time_window.as_ref())
            .and_then(|window| serde_json::to_value(window).ok()),
    )
}

/// The trigger: first sightings, `maintain` newly listed, or a changed time window — not the
/// removal of `maintain` by this controller, which would maintain twice.
pub fn maintenance_requested(
    previous: Option<&(bool, Option<serde_json::Value>)>,
    (maintain, window): &(bool, Option<serde_json::Value>),
) -> bool {
    match previous {
        None => true,
        Some((was_maintain, old_window)) => (*maintain && !was_maintain) || old_window != window,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_passes_new_maintain_requests_and_window_changes_only() {
        let window = Some(serde_json::json!({"begin": "220000+0100", "end": "230000+0100"}));
        let idle = (false, window.clone());
        let asked = (true, window.clone());
        let moved = (
            false,
            Some(serde_json::json!({"begin": "010000+0000", "end": "020000+0000"})),
        );
        assert!(maintenance_requested(None, &idle));
        assert!(maintenance_requested(Some(&idle), &asked));
        assert!(!maintenance_requested(Some(&asked), &idle));
        assert!(!maintenance_requested(Some(&asked), &asked));
        assert!(maintenance_requested(Some(&idle), &moved));
        assert!(!maintenance_requested(Some(&idle), &idle));
    }
}
