//! The agent's shared informers ([`seedlet_runtime::cache`]): one set over the seed cluster for a
//! leadership term, and one over the garden per garden credential (a rotation swaps the client,
//! and every controller on the garden restarts on the new one; the informers of the old one end
//! with it). The garden kinds several controllers read — this seed's Shoots, its Seed,
//! ControllerRegistrations and ControllerInstallations — are watched and stored once here, and so
//! are the seed's Clusters (in the trimmed view of [`crate::cluster_view`]).

use std::sync::{Arc, Mutex, PoisonError};

use kube::Api;
use kube::runtime::watcher;
use seedlet_api::core::{ControllerInstallation, ControllerRegistration, Seed, Shoot};
use seedlet_api::extensions::Cluster;
use seedlet_runtime::cache::{Informer, SharedCaches, View};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::garden_scope;

/// The informers of one leadership term.
#[derive(Debug)]
pub struct AgentCaches {
    /// Informers over the seed cluster.
    pub seed: SharedCaches,
    seed_name: String,
    stop: CancellationToken,
    garden: Mutex<Option<Arc<GardenCaches>>>,
}

impl AgentCaches {
    /// Caches for the agent of Seed `seed_name`, ending when `stop` is cancelled.
    pub fn new(seed: kube::Client, seed_name: &str, stop: &CancellationToken) -> Self {
        Self {
            seed: SharedCaches::new(seed, stop),
            seed_name: seed_name.to_owned(),
            stop: stop.clone(),
            garden: Mutex::new(None),
        }
    }

    /// The Clusters of the seed, each with only its embedded shoot's identity
    /// ([`crate::cluster_view::identity_view`]): the Cluster teardown and the ShootState sync.
    pub fn clusters(&self) -> Arc<Informer<Cluster>> {
        self.seed.informer(
            Api::all(self.seed.client().clone()),
            &watcher::Config::default(),
            View::new("shoot-identity", crate::cluster_view::identity_view),
        )
    }

    /// The garden informers over `client`, the garden client of credential `generation`: the
    /// same set for every controller of that generation. A newer generation replaces it; the
    /// old set's watches end when the last controller still running on it lets go (stopping
    /// them at once would end that controller's triggers before it sees the swap itself).
    pub fn garden(&self, client: kube::Client, generation: u64) -> Arc<GardenCaches> {
        let mut current = self.garden.lock().unwrap_or_else(PoisonError::into_inner);
        match current.as_ref() {
            Some(caches) if caches.generation == generation => caches.clone(),
            // A controller still starting on an older credential: it is restarted on the new
            // one at once, so it gets informers of its own rather than replacing the newer ones.
            Some(caches) if caches.generation > generation => Arc::new(GardenCaches::new(
                client,
                generation,
                &self.seed_name,
                &self.stop,
            )),
            _ => {
                let caches = Arc::new(GardenCaches::new(
                    client,
                    generation,
                    &self.seed_name,
                    &self.stop,
                ));
                *current = Some(caches.clone());
                caches
            }
        }
    }
}

/// The garden informers of one garden credential.
#[derive(Debug)]
pub struct GardenCaches {
    generation: u64,
    caches: SharedCaches,
    seed_name: String,
    shoot_scope: OnceCell<watcher::Config>,
    installation_scope: OnceCell<watcher::Config>,
}

impl GardenCaches {
    fn new(
        client: kube::Client,
        generation: u64,
        seed_name: &str,
        stop: &CancellationToken,
    ) -> Self {
        Self {
            generation,
            caches: SharedCaches::new(client, stop),
            seed_name: seed_name.to_owned(),
            shoot_scope: OnceCell::new(),
            installation_scope: OnceCell::new(),
        }
    }

    /// The garden client these informers watch with.
    pub fn client(&self) -> &kube::Client {
        self.caches.client()
    }

    /// Every informer of this credential, for kinds only one controller reads.
    pub fn shared(&self) -> &SharedCaches {
        &self.caches
    }

    /// The watch scope of the Shoots this seed may see ([`garden_scope::shoots`], probed once
    /// per credential).
    pub async fn shoot_scope(&self) -> &watcher::Config {
        self.shoot_scope
            .get_or_init(|| garden_scope::shoots(self.client(), &self.seed_name))
            .await
    }

    /// The Shoots this seed may see, in [`GardenCaches::shoot_scope`].
    pub async fn shoots(&self) -> Arc<Informer<Shoot>> {
        let scope = self.shoot_scope().await;
        self.caches
            .informer(Api::all(self.client().clone()), scope, View::slim())
    }

    /// Our Seed.
    pub fn seed(&self) -> Arc<Informer<Seed>> {
        let scope = watcher::Config::default().fields(&format!("metadata.name={}", self.seed_name));
        self.caches
            .informer(Api::all(self.client().clone()), &scope, View::slim())
    }

    /// All ControllerRegistrations.
    pub fn registrations(&self) -> Arc<Informer<ControllerRegistration>> {
        self.caches.all()
    }

    /// The ControllerInstallations of this seed ([`garden_scope::installations`], probed once
    /// per credential; unfiltered where the garden cannot select them, the reader filters).
    pub async fn installations(&self) -> Arc<Informer<ControllerInstallation>> {
        let scope = self
            .installation_scope
            .get_or_init(|| garden_scope::installations(self.client(), &self.seed_name))
            .await;
        self.caches
            .informer(Api::all(self.client().clone()), scope, View::slim())
    }
}
