//! Extension ClusterRoles (`controllerregistration-extension-clusterrole`, spec §2.9): a
//! ClusterRole labelled `authorization.gardener.cloud/custom-extensions-permissions=true` is
//! bound (ClusterRoleBinding of the same name, owned by it) to the extension ServiceAccounts its
//! selector annotation matches. Triggered by such ClusterRoles and by extension ServiceAccounts
//! (→ each ClusterRole whose selector matches their labels). Always 5 workers, as upstream.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod subjects;

use std::sync::Arc;

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{Controller, WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::triggers::{changes, filter_changes, key_of};
use seedlet_runtime::watch::{NoTriggerBackoff, RunWith, Runner};
use tokio_util::sync::CancellationToken;

pub use reconcile::{Error, error_policy, reconcile};

use crate::context::GardenContext;

/// Controller name.
pub const NAME: &str = "controllerregistration-extension-clusterrole";
/// Parallel reconciles (not configurable upstream).
pub const CONCURRENT_SYNCS: u32 = 5;

/// Dependencies of the controller.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// Starts the controller for one leadership term.
pub async fn start(garden: Arc<GardenContext>) {
    let ctx = Arc::new(Ctx {
        client: garden.client.clone(),
        metrics: garden.metrics.clone(),
    });
    run(ctx, garden.stop.clone()).await;
}

/// Runs the controller until `shutdown` is cancelled.
pub async fn run(ctx: Arc<Ctx>, shutdown: CancellationToken) {
    let client = ctx.client.clone();
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
    Controller::for_stream(roles, reader)
        .trigger_backoff(NoTriggerBackoff)
        .watches_stream(accounts, move |sa: ServiceAccount| {
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
        .run_with(
            Runner::new(NAME, shutdown).concurrency(CONCURRENT_SYNCS),
            reconcile,
            error_policy,
            ctx,
        )
        .await;
}
