//! Seed secrets (`seed-secrets`, gardener-controller-manager's seed "Main" reconciler, spec
//! §6.3): per Seed, the namespace `seed-<name>` in the garden (label `gardener.cloud/role=seed`,
//! a controller reference to the Seed; created here or by the `finalizers` controller, which also
//! adopts a pre-existing one; one controlled by something else is an error) and in it a copy of every `garden` Secret with a
//! `gardener.cloud/role` outside the excluded roles; copies without a source are pruned. The
//! agent's default-domain and internal-domain lookups read these copies.
//!
//! Triggered by Seed creations and by creations, deletions and changes of selected Secrets in
//! `garden` (→ every Seed). No periodic resync, as upstream.

pub mod desired;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use seedlet_api::core::Seed;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::{changes, key_of};
use seedlet_runtime::watch::concurrency;

use crate::caches::{GardenCaches, controller_on_changes};
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

pub use reconcile::Error;

/// Controller name (logs, metrics label).
pub const NAME: &str = "seed-secrets";

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct SeedSecrets {
    /// Garden client.
    pub client: kube::Client,
    /// Parallel reconciles.
    pub concurrency: u16,
}

impl std::fmt::Debug for SeedSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedSecrets")
            .field("concurrency", &self.concurrency)
            .finish_non_exhaustive()
    }
}

impl GardenReconciler for SeedSecrets {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
            concurrency: concurrency(i64::from(
                garden.config.controllers.seed_secrets.concurrent_syncs,
            )),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Seed> {
        let seed_informer = caches.all::<Seed>();
        let secrets = changes(
            Api::<Secret>::namespaced(self.client.clone(), seedlet_api::names::namespaces::GARDEN),
            watcher::Config::default().labels(desired::ROLE_EXISTS),
            |secret: &Secret| {
                key_of(&(
                    &secret.metadata.labels,
                    &secret.metadata.annotations,
                    &secret.type_,
                    &secret.data,
                ))
            },
        );
        let all_seeds = seed_informer.store();
        // Creations only (the first sighting of each Seed), as upstream.
        controller_on_changes(&seed_informer, |seed: &Seed| key_of(&seed.uid()))
            .watches_stream(secrets, move |secret: Secret| {
                every_seed(&all_seeds, &secret)
            })
    }
}

/// Mapper: every Seed, when the Secret is one that is mirrored.
fn every_seed(seeds: &Store<Seed>, secret: &Secret) -> Vec<ObjectRef<Seed>> {
    if !desired::selected(secret.labels()) {
        return Vec::new();
    }
    seeds
        .state()
        .iter()
        .map(|seed| ObjectRef::from_obj(seed.as_ref()))
        .collect()
}
