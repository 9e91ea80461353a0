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
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupEntry, Project, Quota, Shoot};
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::{Reason, Reconciler, Triggers};
use seedlet_runtime::error_chain;
use seedlet_runtime::watch::concurrency;
use serde_json::json;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;
use filter::Source;

/// Controller name.
pub const NAME: &str = "project-activity";
/// Delay before a failed write is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// The activity controller and what it needs.
pub struct ProjectActivity {
    /// Garden client.
    pub client: kube::Client,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Parallel reconciles (`controllers.project.concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for ProjectActivity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectActivity").finish_non_exhaustive()
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

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Write { .. } => "ProjectStatusPatchError",
        }
    }
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

impl GardenReconciler for ProjectActivity {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self {
            client: garden.client.clone(),
            clock: garden.clock.clone(),
            concurrency: concurrency(i64::from(
                garden.config.controllers.project.concurrent_syncs,
            )),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Project> {
        let project_informer = caches.all::<Project>();
        let reader = project_informer.store();
        // The Projects only feed the store: their own changes are no activity.
        let projects = futures::stream::pending::<Result<Project, watcher::Error>>();
        let clock = || self.clock.clone();
        let (shoots, entries, secrets, quotas) = (
            filter::activity(clock(), Source::workload(caches.all::<Shoot>().events())),
            filter::activity(
                clock(),
                Source::workload(caches.all::<BackupEntry>().events()),
            ),
            // Every Secret: no other reader keeps them, so a watch of its own (no store).
            filter::activity(
                clock(),
                Source::labelled(filter::watch(Api::<Secret>::all(self.client.clone()))),
            ),
            filter::activity(clock(), Source::labelled(caches.all::<Quota>().events())),
        );
        let (a, b, c, d) = (
            reader.clone(),
            reader.clone(),
            reader.clone(),
            reader.clone(),
        );
        Triggers::for_stream(projects, reader)
            .watches_stream(shoots, move |o: Shoot| project_of(&a, o.namespace()))
            .watches_stream(entries, move |o: BackupEntry| project_of(&b, o.namespace()))
            .watches_stream(secrets, move |o: Secret| project_of(&c, o.namespace()))
            .watches_stream(quotas, move |o: Quota| project_of(&d, o.namespace()))
    }
}

impl Reconciler for ProjectActivity {
    type Object = Project;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Sets `status.lastActivityTimestamp` to now; a vanished project is no error.
    async fn reconcile(&self, project: Arc<Project>) -> Result<Action, Error> {
        let patch = json!({"status": {"lastActivityTimestamp": Time(self.clock.now())}});
        match Api::<Project>::all(self.client.clone())
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
        }
    }

    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// A lost write race (409) is retried at once (debug line); any other failure is an ERROR
    /// line each time and a retry after [`RETRY_DELAY`].
    fn error_policy(&self, project: &Project, error: &Error) -> Action {
        if let Some(action) = seedlet_runtime::status::conflict_requeue(&project.name_any(), error)
        {
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
}
