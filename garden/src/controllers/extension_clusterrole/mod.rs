//! Extension ClusterRoles (`controllerregistration-extension-clusterrole`, spec §2.9): a
//! ClusterRole labelled `authorization.gardener.cloud/custom-extensions-permissions=true` is
//! bound (ClusterRoleBinding of the same name, owned by it) to the extension ServiceAccounts its
//! selector annotation matches. Triggered by such ClusterRoles and by extension ServiceAccounts
//! (→ each ClusterRole whose selector matches their labels). Always 5 workers, as upstream.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod subjects;

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::triggers::{changes, filter_changes, key_of};

pub use reconcile::Error;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name.
pub const NAME: &str = "controllerregistration-extension-clusterrole";
/// Parallel reconciles (not configurable upstream).
pub const CONCURRENT_SYNCS: u16 = 5;

/// The controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct ExtensionClusterRoles {
    /// Garden client.
    pub client: kube::Client,
}

impl std::fmt::Debug for ExtensionClusterRoles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionClusterRoles")
            .finish_non_exhaustive()
    }
}

impl GardenReconciler for ExtensionClusterRoles {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
        })
    }

    fn triggers(&self, _caches: &GardenCaches) -> Triggers<ClusterRole> {
        // Only this controller reads these ClusterRoles and ServiceAccounts: watches of its own.
        let client = self.client.clone();
        let (reader, writer) = kube::runtime::reflector::store();
        let roles = filter_changes(
            watcher::watcher(
                Api::<ClusterRole>::all(client.clone()),
                watcher::Config::default().labels(&format!("{}=true", subjects::ROLE_LABEL)),
            )
            .backoff(seedlet_runtime::watch::watch_backoff())
            .modify(seedlet_runtime::watch::slim::<ClusterRole>)
            .reflect(writer),
            |role: &ClusterRole| {
                key_of(&(
                    role.annotations(),
                    role.metadata.deletion_timestamp.is_some(),
                ))
            },
        );
        let accounts = changes(
            Api::<ServiceAccount>::all(client),
            watcher::Config::default(),
            |sa: &ServiceAccount| key_of(sa.labels()),
        );
        let store = reader.clone();
        Triggers::for_stream(roles, reader).watches_stream(accounts, move |sa: ServiceAccount| {
            let namespace = sa.namespace().unwrap_or_default();
            if !subjects::is_extension_service_account(&namespace, &sa.name_any()) {
                return Vec::new();
            }
            store
                .state()
                .into_iter()
                .filter(|role| {
                    subjects::selector(role).is_ok_and(|selector| {
                        crate::selector::matches(Some(&selector), sa.labels())
                    })
                })
                .map(|role| ObjectRef::from_obj(role.as_ref()))
                .collect::<Vec<_>>()
        })
    }
}
