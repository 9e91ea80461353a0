//! Finalizer controllers of the garden (spec §3.2): Seeds and ControllerRegistrations carry
//! `core.gardener.cloud/controllerregistration`, ControllerDeployments
//! `core.gardener.cloud/controllerdeployment`; each is removed only when nothing references the
//! object any more (ControllerInstallations of the Seed or of the registration; registrations
//! listing the deployment). The Seed controller also keeps the Seed's garden namespace
//! `seed-<name>` (owned by the Seed, label `gardener.cloud/role=seed`), which the agent waits for
//! during registration.
//!
//! Triggered by changes of the object's finalizers/deletion and by ControllerInstallation (→ Seed,
//! registration) and ControllerRegistration (→ deployment) events; live objects are re-checked
//! every [`RESYNC_PERIOD`] as a safety net (e.g. a deleted `seed-<name>` namespace).

pub mod deployment;
pub mod registration;
pub mod seed;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::Api;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use seedlet_api::core::{
    ControllerDeployment, ControllerInstallation, ControllerRegistration, Seed,
};
use seedlet_runtime::metrics::Metrics;
use tokio_util::sync::CancellationToken;

use crate::controllerregistration::error_chain;
use crate::controllerregistration::triggers::{changes, filter_changes, key_of};

/// Name of the three controllers together (logs).
pub const NAME: &str = "controller-finalizers";
/// Seed finalizer controller (metrics label).
pub const SEED_NAME: &str = "seed-controllerregistration-finalizer";
/// ControllerRegistration finalizer controller (metrics label).
pub const REGISTRATION_NAME: &str = "controllerregistration-finalizer";
/// ControllerDeployment finalizer controller (metrics label).
pub const DEPLOYMENT_NAME: &str = "controllerdeployment-finalizer";
/// Re-check period of live objects.
pub const RESYNC_PERIOD: Duration = Duration::from_secs(600);
/// Delay before a failed (or blocked) reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// Dependencies of the finalizer controllers.
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

/// Starts the finalizer controllers for one leadership term of the garden process.
pub async fn start(garden: Arc<crate::context::GardenContext>) {
    let ctx = Arc::new(Ctx {
        client: garden.client.clone(),
        metrics: garden.metrics.clone(),
    });
    run(ctx, garden.stop.clone()).await;
}

/// Runs the three finalizer controllers until `shutdown` is cancelled.
pub async fn run(ctx: Arc<Ctx>, shutdown: CancellationToken) {
    tokio::join!(
        run_seeds(ctx.clone(), shutdown.clone()),
        run_registrations(ctx.clone(), shutdown.clone()),
        run_deployments(ctx, shutdown),
    );
}

async fn run_seeds(ctx: Arc<Ctx>, shutdown: CancellationToken) {
    let client = ctx.client.clone();
    let (reader, writer) = reflector::store::<Seed>();
    let events = watcher::watcher(Api::<Seed>::all(client.clone()), watcher::Config::default())
        .backoff(seedlet_runtime::watch::watch_backoff())
        .reflect(writer);
    Controller::for_stream(filter_changes(events, lifecycle_key), reader)
        .trigger_backoff(seedlet_runtime::watch::NoTriggerBackoff)
        .with_config(controller::Config::default().concurrency(5))
        .watches_stream(
            changes(
                Api::<ControllerInstallation>::all(client),
                watcher::Config::default(),
                |ci| key_of(&ci.seed_name()),
            ),
            installation_seed,
        )
        .graceful_shutdown_on(shutdown.cancelled_owned())
        .run(seed::reconcile, error_policy, ctx)
        .for_each(|_| futures::future::ready(()))
        .await;
}

async fn run_registrations(ctx: Arc<Ctx>, shutdown: CancellationToken) {
    let client = ctx.client.clone();
    seedlet_runtime::watch::controller(
        Api::<ControllerRegistration>::all(client.clone()),
        watcher::Config::default(),
    )
    .with_config(controller::Config::default().concurrency(5))
    .watches_stream(
        changes(
            Api::<ControllerInstallation>::all(client),
            watcher::Config::default(),
            |ci| key_of(&ci.spec.registration_ref.name),
        ),
        installation_registration,
    )
    .graceful_shutdown_on(shutdown.cancelled_owned())
    .run(registration::reconcile, error_policy, ctx)
    .for_each(|_| futures::future::ready(()))
    .await;
}

async fn run_deployments(ctx: Arc<Ctx>, shutdown: CancellationToken) {
    let client = ctx.client.clone();
    seedlet_runtime::watch::controller(
        Api::<ControllerDeployment>::all(client.clone()),
        watcher::Config::default(),
    )
    .with_config(controller::Config::default().concurrency(5))
    .watches_stream(
        changes(
            Api::<ControllerRegistration>::all(client),
            watcher::Config::default(),
            |r| key_of(&r.deployment_name()),
        ),
        registration_deployments,
    )
    .graceful_shutdown_on(shutdown.cancelled_owned())
    .run(deployment::reconcile, error_policy, ctx)
    .for_each(|_| futures::future::ready(()))
    .await;
}

/// Change key for finalizer work: whether the object is deleting and its finalizers.
pub fn lifecycle_key<K: Resource>(object: &K) -> String {
    key_of(&(
        object.meta().deletion_timestamp.is_some(),
        object.finalizers(),
    ))
}

/// The Seed of a ControllerInstallation.
pub fn installation_seed(installation: ControllerInstallation) -> Option<ObjectRef<Seed>> {
    installation.seed_name().map(ObjectRef::new)
}

/// The registration of a ControllerInstallation.
pub fn installation_registration(
    installation: ControllerInstallation,
) -> Option<ObjectRef<ControllerRegistration>> {
    Some(ObjectRef::new(&installation.spec.registration_ref.name))
}

/// The deployments a ControllerRegistration references.
pub fn registration_deployments(
    registration: ControllerRegistration,
) -> Vec<ObjectRef<ControllerDeployment>> {
    registration
        .spec
        .deployment
        .iter()
        .flat_map(|deployment| &deployment.deployment_refs)
        .map(|reference| ObjectRef::new(&reference.name))
        .collect()
}

/// Errors of the finalizer controllers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Listing referencing objects failed.
    #[error("listing {kind}")]
    List {
        /// Kind listed.
        kind: &'static str,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The object is still referenced; the finalizer stays.
    #[error("cannot remove finalizer of {kind} {name:?} because still found {referrers}: [{}]", names.join(" "))]
    StillReferenced {
        /// Kind of the object.
        kind: &'static str,
        /// Its name.
        name: String,
        /// Kind of the referrers.
        referrers: &'static str,
        /// Names of the referrers.
        names: Vec<String>,
    },
    /// Reading or writing the Seed's garden namespace failed.
    #[error("ensuring namespace {namespace}")]
    Namespace {
        /// Namespace name.
        namespace: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The object lacks a name or uid.
    #[error("{0} without name or uid")]
    MissingIdentity(&'static str),
    /// Adding or removing the finalizer failed (or cleanup was refused).
    #[error("finalizer of {kind} {name}")]
    Finalizer {
        /// Kind of the object.
        kind: &'static str,
        /// Its name.
        name: String,
        /// Cause.
        #[source]
        source: Box<kube::runtime::finalizer::Error<Error>>,
    },
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::List { .. } => "ListError",
            Error::StillReferenced { .. } => "StillReferenced",
            Error::Namespace { .. } => "NamespaceError",
            Error::MissingIdentity(_) => "InvalidObject",
            Error::Finalizer { .. } => "FinalizerError",
        }
    }
}

/// Retries after [`RETRY_DELAY`] and logs the error once (blocked deletions at debug level: they
/// are expected while references exist).
pub fn error_policy<K: Resource>(object: Arc<K>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    let blocked = matches!(error, Error::Finalizer { source, .. }
        if matches!(**source, kube::runtime::finalizer::Error::CleanupFailed(Error::StillReferenced { .. })));
    if blocked {
        tracing::debug!(name = %object.name_any(), error = %error_chain(error), "deletion blocked by references");
    } else {
        tracing::warn!(name = %object.name_any(), reason = error.reason(), error = %error_chain(error), "finalizer reconcile failed");
    }
    Action::requeue(RETRY_DELAY)
}

/// Names of the referrers, or `Ok` when there are none.
///
/// # Errors
/// [`Error::StillReferenced`] listing the referrers.
pub fn ensure_unreferenced(
    kind: &'static str,
    name: &str,
    referrers: &'static str,
    names: Vec<String>,
) -> Result<(), Error> {
    if names.is_empty() {
        return Ok(());
    }
    Err(Error::StillReferenced {
        kind,
        name: name.to_owned(),
        referrers,
        names,
    })
}

/// Lists all objects of `K`.
pub(crate) async fn list_all<K>(client: &kube::Client, kind: &'static str) -> Result<Vec<K>, Error>
where
    K: Resource<Scope = kube::core::ClusterResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    Api::<K>::all(client.clone())
        .list(&Default::default())
        .await
        .map(|list| list.items)
        .map_err(|source| Error::List { kind, source })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn still_referenced_message_lists_referrers_like_upstream() {
        let error = ensure_unreferenced(
            "ControllerRegistration",
            "ext",
            "ControllerInstallations",
            vec!["ext-a".into(), "ext-b".into()],
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot remove finalizer of ControllerRegistration \"ext\" because still found ControllerInstallations: [ext-a ext-b]"
        );
        assert!(
            ensure_unreferenced(
                "ControllerRegistration",
                "ext",
                "ControllerInstallations",
                vec![]
            )
            .is_ok()
        );
    }

    #[test]
    fn registration_maps_to_its_deployments() {
        let registration: ControllerRegistration =
            serde_json::from_value(json!({"metadata": {"name": "r"},
            "spec": {"deployment": {"deploymentRefs": [{"name": "d"}]}}}))
            .unwrap();
        let refs: Vec<String> = registration_deployments(registration)
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(refs, ["d"]);
    }

    #[test]
    fn lifecycle_key_changes_with_deletion_and_finalizers_only() {
        let mut seed = Seed::default();
        let base = lifecycle_key(&seed);
        seed.metadata.resource_version = Some("5".into());
        assert_eq!(lifecycle_key(&seed), base);
        seed.metadata.finalizers = Some(vec!["x".into()]);
        assert_ne!(lifecycle_key(&seed), base);
    }
}
