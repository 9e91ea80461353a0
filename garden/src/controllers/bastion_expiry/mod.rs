//! Bastion expiry (gardener-controller-manager `bastion`, spec §6.2): deletes an
//! `operations.gardener.cloud` Bastion when its Shoot is gone, being deleted or scheduled to
//! another seed, when `status.expirationTimestamp` passed (no keep-alive), or when it is older
//! than `controllers.bastion.maxLifetime`; otherwise checks again at the earlier deadline.
//!
//! Triggers: Bastion creation and generation changes; Shoot deletions and `spec.seedName`
//! changes (→ the Bastions of that Shoot).

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;
use std::time::Duration;

use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use seedlet_api::core::Shoot;
use seedlet_api::operations::Bastion;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::key_of;
use seedlet_runtime::watch::concurrency;

use crate::caches::{GardenCaches, changes, controller_on_changes};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

pub use reconcile::{Error, Verdict, verdict};

/// Controller name (logs, metrics label).
pub const NAME: &str = "bastion";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct BastionExpiry {
    /// Garden client.
    pub client: kube::Client,
    /// Parallel reconciles.
    pub concurrency: u16,
    /// `controllers.bastion.maxLifetime`.
    pub max_lifetime: Duration,
    /// Time source.
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for BastionExpiry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BastionExpiry")
            .field("max_lifetime", &self.max_lifetime)
            .finish_non_exhaustive()
    }
}

impl GardenReconciler for BastionExpiry {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let config = &garden.config.controllers.bastion;
        Some(Self {
            client: garden.client.clone(),
            concurrency: concurrency(i64::from(config.concurrent_syncs)),
            max_lifetime: config.max_lifetime.as_std(),
            clock: garden.clock.clone(),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Bastion> {
        let bastion_informer = caches.all::<Bastion>();
        let shoots = changes(&caches.all::<Shoot>(), |shoot: &Shoot| {
            key_of(&(
                shoot.metadata.deletion_timestamp.is_some(),
                &shoot.spec.seed_name,
            ))
        });
        let store = bastion_informer.store();
        controller_on_changes(&bastion_informer, |bastion: &Bastion| {
            key_of(&(bastion.uid(), bastion.metadata.generation))
        })
        .watches_stream(shoots, move |shoot: Shoot| {
            bastions_of_shoot(&store, &shoot)
        })
    }
}

/// Mapper: the Bastions in the Shoot's namespace that point at it.
pub fn bastions_of_shoot(bastions: &Store<Bastion>, shoot: &Shoot) -> Vec<ObjectRef<Bastion>> {
    bastions
        .state()
        .iter()
        .filter(|b| b.namespace() == shoot.namespace() && b.spec.shoot_ref.name == shoot.name_any())
        .map(|b| ObjectRef::from_obj(b.as_ref()))
        .collect()
}
