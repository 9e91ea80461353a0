//! ShootState finalizer (`shootstate-finalizer`, spec §3.5): keeps `core.gardener.cloud/shootstate`
//! on a ShootState while its shoot migrates or restores (so the state survives until the
//! destination seed has it) and removes it once the restore succeeded or the shoot reconciles.
//!
//! Triggered by ShootState creation and changes, by the shoot last-operation transitions of
//! [`reconcile::is_relevant_transition`] and by a shoot's deletion (→ the ShootState of the same
//! name, which goes with its shoot). No periodic requeue: both inputs are watched.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::collections::HashMap;

use futures::{Stream, StreamExt};
use kube::Api;
use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, Event};
use seedlet_api::common::LastOperation;
use seedlet_api::core::{Shoot, ShootState};
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::watch::concurrency;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

pub use reconcile::{
    Error, FinalizerAction, Step, decide, finalizer_action, is_relevant_transition,
};

/// Controller name (logs, metrics label).
pub const NAME: &str = "shootstate-finalizer";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct ShootStateFinalizer {
    /// Garden client.
    pub client: kube::Client,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for ShootStateFinalizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShootStateFinalizer")
            .finish_non_exhaustive()
    }
}

impl GardenReconciler for ShootStateFinalizer {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
            concurrency: concurrency(i64::from(
                garden.config.controllers.shoot_state.concurrent_syncs,
            )),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<ShootState> {
        // Only this controller reads ShootStates: a watch and store of its own.
        seedlet_runtime::watch::controller(
            Api::<ShootState>::all(self.client.clone()),
            watcher::Config::default(),
        )
        .watches_stream(
            shoot_transitions(caches.all::<Shoot>().events()),
            |shoot: Shoot| {
                let namespace = shoot.namespace()?;
                Some(ObjectRef::<ShootState>::new(&shoot.name_any()).within(&namespace))
            },
        )
    }
}

/// Shoots whose last operation changed in a way [`is_relevant_transition`] accepts (the first
/// sighting only records it), plus shoots that started deleting or are gone (their ShootState is
/// removed with them).
pub fn shoot_transitions(
    events: impl Stream<Item = Result<Event<Shoot>, watcher::Error>> + Send + 'static,
) -> impl Stream<Item = Result<Shoot, watcher::Error>> + Send + 'static {
    // Per shoot: its last operation and whether it was deleting when last seen.
    let mut previous: HashMap<(String, String), (Option<LastOperation>, bool)> = HashMap::new();
    events.filter_map(move |event| {
        let relevant = match event {
            Ok(Event::Apply(shoot) | Event::InitApply(shoot)) => {
                let key = (shoot.namespace().unwrap_or_default(), shoot.name_any());
                let current = shoot.last_operation().cloned();
                let deleting = shoot.metadata.deletion_timestamp.is_some();
                let (old, was_deleting) = previous
                    .insert(key, (current.clone(), deleting))
                    .unwrap_or((None, false));
                let relevant = is_relevant_transition(old.as_ref(), current.as_ref())
                    || (deleting && !was_deleting);
                relevant.then_some(Ok(shoot))
            }
            Ok(Event::Delete(shoot)) => {
                previous.remove(&(shoot.namespace().unwrap_or_default(), shoot.name_any()));
                Some(Ok(shoot))
            }
            Ok(Event::Init | Event::InitDone) => None,
            Err(error) => Some(Err(error)),
        };
        futures::future::ready(relevant)
    })
}
