//! Shoot status label (`shoot-statuslabel`, spec §4): watches Shoots in the garden and keeps their
//! label `shoot.gardener.cloud/status` equal to the health computed from last operation, last
//! errors and conditions ([`label::shoot_health`]), with a merge patch of that one label.
//!
//! Triggered by every Shoot's first sighting and by updates where the label is missing or differs
//! from the computed value; no periodic requeue (every input is on the watched object).

pub mod label;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use kube::ResourceExt;
use seedlet_api::core::Shoot;
use seedlet_api::names::shoot_lifecycle;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;

pub use label::{Health, shoot_health};

use crate::caches::{GardenCaches, controller_on_transitions};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;
pub use reconcile::Error;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-statuslabel";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct StatusLabel {
    /// Garden client.
    pub client: kube::Client,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for StatusLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusLabel").finish_non_exhaustive()
    }
}

impl GardenReconciler for StatusLabel {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
            concurrency: concurrency(i64::from(
                garden
                    .config
                    .controllers
                    .shoot_status_label
                    .concurrent_syncs,
            )),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Shoot> {
        controller_on_transitions(&caches.all::<Shoot>(), label_state, label_outdated)
    }
}

/// The stored label and the computed one.
pub fn label_state(shoot: &Shoot) -> (Option<String>, Health) {
    (
        shoot.labels().get(shoot_lifecycle::STATUS_LABEL).cloned(),
        shoot_health(shoot.status.as_ref()),
    )
}

/// The trigger: the first sighting (a create, or every Shoot at start-up), and updates whose
/// label is missing or differs from the computed value.
pub fn label_outdated(
    previous: Option<&(Option<String>, Health)>,
    (stored, computed): &(Option<String>, Health),
) -> bool {
    previous.is_none() || stored.as_deref() != Some(computed.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_passes_first_sightings_and_outdated_labels_only() {
        let current = (Some("healthy".to_owned()), Health::Healthy);
        assert!(label_outdated(None, &current));
        assert!(!label_outdated(Some(&current), &current));
        let missing = (None, Health::Healthy);
        assert!(label_outdated(Some(&current), &missing));
        let differs = (Some("healthy".to_owned()), Health::Unhealthy);
        assert!(label_outdated(Some(&current), &differs));
    }
}
