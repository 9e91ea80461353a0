//! Per-shoot ResourceQuota limits (`project-resourcequota`, spec §3.3): every ResourceQuota in a
//! project namespace (`gardener.cloud/role=project`) gets `count/configmaps` and
//! `count/secrets` raised to what its Shoots need ([`bump`]), with the per-shoot numbers
//! recorded in annotations. Triggered by ResourceQuota changes of their `spec.hard` or
//! annotations; the write is skipped when nothing changes (upstream sends it always).

pub mod bump;
#[cfg(test)]
mod reconcile_tests;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_runtime::controller::{Reason, Reconciler, Triggers};
use seedlet_runtime::error_chain;
use seedlet_runtime::triggers::{filter_changes, key_of};
use seedlet_runtime::watch::concurrency;
use serde_json::json;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name.
pub const NAME: &str = "project-resourcequota";
/// Delay before a failed reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// The controller and what it needs.
pub struct ProjectResourceQuotas {
    /// Garden client.
    pub client: kube::Client,
    /// Parallel reconciles (`controllers.project.concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for ProjectResourceQuotas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectResourceQuotas")
            .finish_non_exhaustive()
    }
}

/// Errors of a reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API call failed.
    #[error("{what}")]
    Api {
        /// What was done.
        what: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// A limit or annotation is not an integer.
    #[error(transparent)]
    Value(#[from] bump::NotAnInteger),
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Api { .. } => "ApiError",
            Error::Value(_) => "InvalidQuantity",
        }
    }
}

impl GardenReconciler for ProjectResourceQuotas {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
            concurrency: concurrency(i64::from(
                garden.config.controllers.project.concurrent_syncs,
            )),
        })
    }

    fn triggers(&self, _caches: &GardenCaches) -> Triggers<ResourceQuota> {
        // Only this controller reads ResourceQuotas: a watch and store of its own.
        let (reader, writer) = kube::runtime::reflector::store();
        let quotas = filter_changes(
            watcher::watcher(
                Api::<ResourceQuota>::all(self.client.clone()),
                watcher::Config::default(),
            )
            .backoff(seedlet_runtime::watch::watch_backoff())
            .modify(seedlet_runtime::watch::slim::<ResourceQuota>)
            .reflect(writer),
            |quota: &ResourceQuota| {
                key_of(&(
                    quota.spec.as_ref().and_then(|s| s.hard.as_ref()),
                    quota.annotations(),
                ))
            },
        );
        Triggers::for_stream(quotas, reader)
    }
}

impl Reconciler for ProjectResourceQuotas {
    type Object = ResourceQuota;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Raises the per-shoot limits of one ResourceQuota; idempotent.
    async fn reconcile(&self, quota: Arc<ResourceQuota>) -> Result<Action, Error> {
        run_one(&quota, self).await.map(|()| Action::await_change())
    }

    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// A lost write race (409) is retried at once (debug line); any other failure is an ERROR
    /// line each time and a retry after [`RETRY_DELAY`].
    fn error_policy(&self, quota: &ResourceQuota, error: &Error) -> Action {
        if let Some(action) = seedlet_runtime::status::conflict_requeue(&quota.name_any(), error) {
            return action;
        }
        tracing::error!(
            controller = NAME,
            resource_quota = %format!("{}/{}", quota.namespace().unwrap_or_default(), quota.name_any()),
            error = %error_chain(error),
            "reconcile failed"
        );
        Action::requeue(RETRY_DELAY)
    }
}

fn api_error(what: String) -> impl FnOnce(kube::Error) -> Error {
    move |source| Error::Api { what, source }
}

async fn run_one(quota: &ResourceQuota, ctx: &ProjectResourceQuotas) -> Result<(), Error> {
    let namespace = quota.namespace().unwrap_or_default();
    let key = format!("{namespace}/{}", quota.name_any());
    let role = Api::<Namespace>::all(ctx.client.clone())
        .get_opt(&namespace)
        .await
        .map_err(api_error(format!("reading namespace {namespace}")))?
        .and_then(|ns| ns.labels().get("gardener.cloud/role").cloned());
    if role.as_deref() != Some("project") {
        return Ok(());
    }
    let api: Api<ResourceQuota> = Api::namespaced(ctx.client.clone(), &namespace);
    let Some(current) = api
        .get_opt(&quota.name_any())
        .await
        .map_err(api_error(format!("reading ResourceQuota {key}")))?
    else {
        return Ok(());
    };
    if current.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let Some(hard) = current.spec.as_ref().and_then(|s| s.hard.as_ref()) else {
        return Ok(());
    };
    let hard: BTreeMap<String, String> =
        hard.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect();
    let shoots = if hard.contains_key(bump::SHOOTS_KEY) {
        0
    } else {
        let list = Api::<Shoot>::namespaced(ctx.client.clone(), &namespace)
            .list(&ListParams::default())
            .await
            .map_err(api_error(format!("listing shoots in {namespace}")))?;
        i64::try_from(list.items.len()).unwrap_or(i64::MAX)
    };
    let (new_hard, new_annotations) = bump::bump(&hard, current.annotations(), shoots)?;
    if new_hard.is_empty() && new_annotations.is_empty() {
        return Ok(());
    }
    let patch = json!({
        "metadata": {"annotations": new_annotations, "resourceVersion": current.resource_version()},
        "spec": {"hard": new_hard},
    });
    api.patch(
        &current.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map_err(api_error(format!("patching ResourceQuota {key}")))?;
    Ok(())
}
