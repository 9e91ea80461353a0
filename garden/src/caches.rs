//! The garden process's shared informers ([`seedlet_runtime::cache`]) and the controller
//! builders over them.
//!
//! One [`SharedCaches`] per process, not per leadership term: the seed authorizer's graph
//! (`crate::webhooks::informers`) runs on every replica, leader or not, and reads Seeds, Shoots,
//! Projects, ManagedSeeds, backups, ControllerDeployments and Bastions that the controllers read
//! too. controller-runtime's cache is not leader-gated either: with informers per term the
//! leader would hold each of those kinds twice (once for the graph, once for the controllers),
//! and every new term would re-list what the process already holds. The price is that a replica
//! that lost its leadership keeps the controllers' informers until it stops.
//!
//! Which kinds are shared: every kind a controller keeps a store of, and every kind read by a
//! controller with a store of it and by others (the others then subscribe instead of watching).
//! Kinds that no reader stores stay plain watches (`seedlet_runtime::triggers::changes`), except
//! ControllerInstallations (one per Seed and registration, tens of thousands, read by five
//! readers): a shared store of them would cost more than it saves, so they have one shared watch
//! without a store ([`crate::installations`], [`GardenCaches::installations`]). Every view is
//! `View::slim` (whole objects without `managedFields`), the one view all readers can live with.
//!
//! Change filters stay with each subscriber: [`changes`] filters an informer's events the way
//! `seedlet_runtime::triggers::changes` filters a watch.

use std::fmt::Debug;
use std::sync::Arc;

use futures::Stream;
use kube::Resource;
use kube::runtime::watcher;
use seedlet_runtime::cache::{Informer, SharedCaches};
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::{filter_changes, filter_transitions};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::installations::Installations;

/// The informers of the garden process: one per kind, cluster-wide, slim.
#[derive(Debug)]
pub struct GardenCaches {
    caches: SharedCaches,
    installations: Installations,
}

impl GardenCaches {
    /// Informers over `client`, watching until `stop` is cancelled (or this is dropped).
    pub fn new(client: kube::Client, stop: &CancellationToken) -> Self {
        Self {
            installations: Installations::new(client.clone(), stop),
            caches: SharedCaches::new(client, stop),
        }
    }

    /// The shared store-less watch of every ControllerInstallation, started on first use.
    pub fn installations(&self) -> &Installations {
        &self.installations
    }

    /// The informer of every `K` in the garden, started on first use.
    pub fn all<K>(&self) -> Arc<Informer<K>>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.caches.all()
    }

    /// The client the informers watch with.
    pub fn client(&self) -> &kube::Client {
        self.caches.client()
    }
}

/// A controller of the objects of `informer`, triggered by every change of them.
pub fn controller<K>(informer: &Informer<K>) -> Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    Triggers::for_stream(informer.applied_objects(), informer.store())
}

/// A controller of the objects of `informer`, triggered when `key` of one changes (and by every
/// first sighting and deletion; see `seedlet_runtime::triggers::filter_changes`).
pub fn controller_on_changes<K, F>(informer: &Informer<K>, key: F) -> Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    F: Fn(&K) -> String + Send + Sync + 'static,
{
    Triggers::for_stream(filter_changes(informer.events(), key), informer.store())
}

/// A controller of the objects of `informer`, triggered by the transitions `pass` accepts
/// between two `view`s of an object (see `seedlet_runtime::triggers::filter_transitions`).
pub fn controller_on_transitions<K, T, V, P>(
    informer: &Informer<K>,
    view: V,
    pass: P,
) -> Triggers<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    T: Send + 'static,
    V: Fn(&K) -> T + Send + Sync + 'static,
    P: Fn(Option<&T>, &T) -> bool + Send + Sync + 'static,
{
    Triggers::for_stream(
        filter_transitions(informer.events(), view, pass),
        informer.store(),
    )
}

/// The objects of `informer` whose `key` changed since last seen, plus deleted ones: a
/// subscriber-side change filter for `Triggers::watches_stream`.
pub fn changes<K, F>(
    informer: &Informer<K>,
    key: F,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + use<K, F>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    F: Fn(&K) -> String + Send + Sync + 'static,
{
    filter_changes(informer.events(), key)
}
