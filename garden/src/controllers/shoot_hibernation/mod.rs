//! Shoot hibernation schedules (`shoot-hibernation`, spec §5): watches Shoots in the garden and
//! sets `spec.hibernation.enabled` when a `spec.hibernation.schedules[]` activation fell due
//! since the last trigger (within the trigger deadline and seven days), then records
//! `status.lastHibernationTriggerTime`. Writes only to the garden.
//!
//! Triggered by a Shoot's first sighting and by changes of its schedules; time advances only by
//! requeue: each run requeues to just after the next activation of any schedule.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod schedule;

use std::sync::Arc;

use jiff::SignedDuration;
use seedlet_api::core::{HibernationSchedule, Shoot};
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;

pub use reconcile::Error;

use crate::caches::{GardenCaches, controller_on_transitions};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-hibernation";
/// Component of the Events this controller records.
pub const EVENT_COMPONENT: &str = "shoot-hibernation-controller";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct Hibernation {
    /// Garden client.
    pub client: kube::Client,
    /// Activations older than this before now are no longer acted upon.
    pub trigger_deadline: SignedDuration,
    /// Time source of every decision.
    pub clock: Arc<dyn Clock>,
    /// `Hibernated` / `WokenUp` Events on the Shoot.
    pub events: seedlet_runtime::events::Recorder,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for Hibernation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hibernation")
            .field("trigger_deadline", &self.trigger_deadline)
            .finish_non_exhaustive()
    }
}

impl GardenReconciler for Hibernation {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let config = &garden.config.controllers.shoot_hibernation;
        Some(Self {
            client: garden.client.clone(),
            trigger_deadline: SignedDuration::try_from(config.trigger_deadline_duration.as_std())
                .unwrap_or(SignedDuration::MAX),
            clock: garden.clock.clone(),
            events: garden.events.named(EVENT_COMPONENT),
            concurrency: concurrency(i64::from(config.concurrent_syncs)),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Shoot> {
        controller_on_transitions(&caches.all::<Shoot>(), schedules_of, schedules_changed)
    }
}

/// The Shoot's hibernation schedules.
pub fn schedules_of(shoot: &Shoot) -> Vec<HibernationSchedule> {
    shoot
        .spec
        .hibernation
        .as_ref()
        .map(|hibernation| hibernation.schedules.clone())
        .unwrap_or_default()
}

/// The trigger: a first sighting with schedules, or schedules that changed and are not empty.
pub fn schedules_changed(
    previous: Option<&Vec<HibernationSchedule>>,
    current: &Vec<HibernationSchedule>,
) -> bool {
    !current.is_empty() && previous != Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_passes_new_non_empty_schedules_only() {
        let one = vec![HibernationSchedule {
            start: Some("0 20 * * *".into()),
            ..Default::default()
        }];
        let other = vec![HibernationSchedule {
            end: Some("0 8 * * *".into()),
            ..Default::default()
        }];
        assert!(schedules_changed(None, &one));
        assert!(!schedules_changed(None, &Vec::new()));
        assert!(!schedules_changed(Some(&one), &one));
        assert!(schedules_changed(Some(&one), &other));
        assert!(!schedules_changed(Some(&one), &Vec::new()));
    }
}
