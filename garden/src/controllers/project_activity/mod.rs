//! Project activity (`project-activity`, spec §3.5): changes in a project namespace set the
//! Project's `status.lastActivityTimestamp` to now (injected clock), which keeps it from going
//! stale. Sources: Shoots and BackupEntries (created within the last hour, updated with a new
//! generation, deleted) and Secrets and Quotas labelled as used by a binding (created within
//! the last hour, any update where either version is labelled, deleted). Pure filtering in
//! [`filter`].

pub mod filter;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Controller, watcher};
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupEntry, Project, Quota, Shoot};
use seedlet_runtime::clock::Clock;
use seedlet_runtime::error_chain;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::watch::{NoTriggerBackoff, RunWith, Runner};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use filter::Source;

/// Controller name.
pub const NAME: &str = "project-activity";
/// Delay before a failed write is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// Dependencies of the activity controller.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// Errors of an activity write.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Writing the timestamp failed.
    #[error("writing lastActivityTimestamp of project {project}")]
    Write {
        /// Project name.
        project: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

/// Starts the controller for one leadership term.
pub async fn start(garden: Arc<GardenContext>) {
    let ctx = Arc::new(Ctx {
        client: garden.client.clone(),
        clock: garden.clock.clone(),
        metrics: garden.metrics.clone(),
    });
    let concurrency = garden.config.controllers.project.concurrent_syncs;
    run(ctx, &garden.caches, concurrency, garden.stop.clone()).await;
}

/// The Project whose namespace `namespace` is.
fn project_of(projects: &Store<Project>, namespace: Option<String>) -> Option<ObjectRef<Project>> {
    let namespace = namespace?;
    projects
        .state()
        .into_iter()
        .find(|p| p.spec.namespace.as_deref() == Some(namespace.as_str()))
        .map(|p| ObjectRef::from_obj(p.as_ref()))
}

/// Runs the controller until `shutdown` is cancelled.
pub async fn run(
    ctx: Arc<Ctx>,
    caches: &GardenCaches,
    concurrent_syncs: u32,
    shutdown: CancellationToken,
) {
    let client = ctx.client.clone();
    let project_informer = caches.all::<Project>();
    let reader = project_informer.store();
    // The Projects only feed the store: their own changes are no activity.
    let projects = futures::stream::pending::<Result<Project, watcher::Error>>();
    let clock = || ctx.clock.clone();
    let (shoots, entries, secrets, quotas) = (
        filter::activity(clock(), Source::workload(caches.all::<Shoot>().events())),
        filter::activity(
            clock(),
            Source::workload(caches.all::<BackupEntry>().events()),
        ),
        // Every Secret: no other reader keeps them, so a watch of its own (no store).
        filter::activity(
            clock(),
            Source::labelled(filter::watch(Api::<Secret>::all(client))),
        ),
        filter::activity(clock(), Source::labelled(caches.all::<Quota>().events())),
    );
    let (a, b, c, d) = (
        reader.clone(),
        reader.clone(),
        reader.clone(),
        reader.clone(),
    );
    Controller::for_stream(projects, reader)
        .trigger_backoff(NoTriggerBackoff)
        .watches_stream(shoots, move |o: Shoot| project_of(&a, o.namespace()))
        .watches_stream(entries, move |o: BackupEntry| project_of(&b, o.namespace()))
        .watches_stream(secrets, move |o: Secret| project_of(&c, o.namespace()))
        .watches_stream(quotas, move |o: Quota| project_of(&d, o.namespace()))
        .run_with(
            Runner::new(NAME, shutdown).concurrency(concurrent_syncs),
            reconcile,
            error_policy,
            ctx,
        )
        .await;
}

/// Sets `status.lastActivityTimestamp` to now.
///
/// # Errors
/// [`Error::Write`]; a vanished project is not one.
pub async fn reconcile(project: Arc<Project>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let started = Instant::now();
    let patch = json!({"status": {"lastActivityTimestamp": Time(ctx.clock.now())}});
    let result = match Api::<Project>::all(ctx.client.clone())
        .patch_status(
            &project.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(Action::await_change()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(Action::await_change()),
        Err(source) => Err(Error::Write {
            project: project.name_any(),
            source,
        }),
    };
    ctx.metrics
        .reconciled(NAME, started.elapsed(), result.is_ok());
    result
}

/// A lost write race (409) is retried at once (debug line); other errors after [`RETRY_DELAY`],
/// logged once.
pub fn error_policy(project: Arc<Project>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    if let Some(action) = seedlet_runtime::status::conflict_requeue(&project.name_any(), error) {
        return action;
    }
    tracing::error!(
        controller = NAME,
        project = %project.name_any(),
        error = %error_chain(error),
        "recording activity failed"
    );
    Action::requeue(RETRY_DELAY)
}
