//! One stale check (spec §3.4): gather the facts (namespace annotation, what is in use), decide
//! ([`super::decide`]) and write the stale timestamps (status merge patch, only on change);
//! delete the project (after the deletion confirmation) once its auto-delete time has come.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupEntry, CredentialsBinding, Project, Quota, SecretBinding, Shoot};
use seedlet_api::names::annotations;
use seedlet_api::security::WorkloadIdentity;
use seedlet_runtime::controller::{Reason, Reconciler};
use serde::de::DeserializeOwned;
use serde_json::json;

use super::decide::{self, Decision, Facts};
use super::in_use::{self, Credential};
use super::{NAME, StaleProjects};

/// Delay before a failed check is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);
/// Namespace annotation that exempts a project.
pub const SKIP_ANNOTATION: &str = "project.gardener.cloud/skip-stale-check";

/// Errors of a stale check.
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
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        "StaleCheckFailed"
    }
}

fn api_error(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let what = what.into();
    move |source| Error::Api { what, source }
}

async fn list<K>(api: Api<K>, what: &str, params: &ListParams) -> Result<Vec<K>, Error>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.list(params).await {
        Ok(list) => Ok(list.items),
        // A kind the garden does not serve holds nothing.
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(Vec::new()),
        Err(source) => Err(Error::Api {
            what: format!("listing {what}"),
            source,
        }),
    }
}

impl Reconciler for StaleProjects {
    type Object = Project;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Runs the check for one project, then requeues after `staleSyncPeriod`.
    async fn reconcile(&self, project: Arc<Project>) -> Result<Action, Error> {
        let result = run(&project, self).await;
        result.map(|()| Action::requeue(self.sync_period))
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn run(project: &Project, ctx: &StaleProjects) -> Result<(), Error> {
    let projects: Api<Project> = Api::all(ctx.client.clone());
    let Some(project) = projects
        .get_opt(&project.name_any())
        .await
        .map_err(api_error("reading project"))?
    else {
        return Ok(());
    };
    let Some(namespace) = project.spec.namespace.clone().filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    if project.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    // Not created yet (the project controller makes it, and the Project changes then):
    // nothing to judge. Upstream returns the NotFound as an error and retries.
    let Some(ns) = Api::<Namespace>::all(ctx.client.clone())
        .get_opt(&namespace)
        .await
        .map_err(api_error(format!("reading namespace {namespace}")))?
    else {
        return Ok(());
    };
    let now = ctx.clock.now();
    let status = project.status.clone().unwrap_or_default();
    let time = |t: &Option<Time>| t.as_ref().map(|t| t.0);
    let mut facts = Facts {
        created: project
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(now, |t| t.0),
        last_activity: time(&status.last_activity_timestamp),
        stale_since: time(&status.stale_since_timestamp),
        auto_delete: time(&status.stale_auto_delete_timestamp),
        skip: ns.annotations().get(SKIP_ANNOTATION).map(String::as_str) == Some("true"),
        in_use: false,
    };
    // Only gather what is in use when it can matter.
    if decide::decide(now, &facts, &ctx.settings) != Decision::NotStale {
        facts.in_use = namespace_in_use(ctx, &namespace).await?;
    }
    let decision = decide::decide(now, &facts, &ctx.settings);
    let (since, auto_delete, delete) = match decision {
        Decision::NotStale => (None, None, false),
        Decision::Stale {
            since,
            auto_delete,
            delete,
        } => (Some(since), auto_delete, delete),
    };
    if (since, auto_delete) != (facts.stale_since, facts.auto_delete) {
        let stamp = |t: Option<Timestamp>| t.map(Time);
        let patch = json!({"status": {
            "staleSinceTimestamp": stamp(since),
            "staleAutoDeleteTimestamp": stamp(auto_delete),
        }});
        projects
            .patch_status(
                &project.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .map_err(api_error("writing stale timestamps"))?;
    }
    if delete {
        tracing::info!(project = %project.name_any(), "deleting stale project");
        let confirm = json!({"metadata": {"annotations": {
            annotations::CONFIRMATION_DELETION: "true",
            annotations::TIMESTAMP: now.to_string(),
        }}});
        match projects
            .patch(
                &project.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&confirm),
            )
            .await
        {
            Err(kube::Error::Api(status)) if status.is_not_found() => return Ok(()),
            other => {
                other.map_err(api_error("confirming deletion"))?;
            }
        }
        match projects
            .delete(&project.name_any(), &Default::default())
            .await
        {
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            other => {
                other.map_err(api_error("deleting project"))?;
            }
        }
    }
    Ok(())
}

/// Step 4: gathers the inputs of [`in_use::in_use`].
async fn namespace_in_use(ctx: &StaleProjects, namespace: &str) -> Result<bool, Error> {
    let client = &ctx.client;
    let one = ListParams::default().limit(1);
    let shoots_here: Vec<Shoot> =
        list(Api::namespaced(client.clone(), namespace), "shoots", &one).await?;
    let entries: Vec<BackupEntry> = list(
        Api::namespaced(client.clone(), namespace),
        "backupentries",
        &one,
    )
    .await?;
    if !shoots_here.is_empty() || !entries.is_empty() {
        return Ok(true);
    }
    let all = ListParams::default();
    let shoots: Vec<Shoot> = list(Api::all(client.clone()), "shoots", &all).await?;
    let secret_bindings: Vec<SecretBinding> =
        list(Api::all(client.clone()), "secretbindings", &all).await?;
    let credentials_bindings: Vec<CredentialsBinding> =
        list(Api::all(client.clone()), "credentialsbindings", &all).await?;
    let labelled = |label: &str| ListParams::default().labels(&format!("{label}=true"));
    let mut credentials: Vec<Credential> = Vec::new();
    for label in [
        "reference.gardener.cloud/secretbinding",
        "reference.gardener.cloud/credentialsbinding",
    ] {
        let secrets: Vec<Secret> = list(
            Api::namespaced(client.clone(), namespace),
            "secrets",
            &labelled(label),
        )
        .await?;
        credentials.extend(secrets.iter().map(|s| Credential {
            api_version: "v1".into(),
            kind: "Secret".into(),
            name: s.name_any(),
            labels: s.labels().clone(),
        }));
    }
    let identities: Vec<WorkloadIdentity> = list(
        Api::namespaced(client.clone(), namespace),
        "workloadidentities",
        &labelled("reference.gardener.cloud/credentialsbinding"),
    )
    .await?;
    credentials.extend(identities.iter().map(|w| Credential {
        api_version: seedlet_api::security::V1ALPHA1.into(),
        kind: "WorkloadIdentity".into(),
        name: w.name_any(),
        labels: w.labels().clone(),
    }));
    let quotas: Vec<String> =
        list::<Quota>(Api::namespaced(client.clone(), namespace), "quotas", &all)
            .await?
            .iter()
            .map(ResourceExt::name_any)
            .collect();
    Ok(in_use::in_use(&in_use::Inputs {
        namespace,
        has_shoots_or_backup_entries: false,
        shoots: &shoots,
        secret_bindings: &secret_bindings,
        credentials_bindings: &credentials_bindings,
        credentials: &credentials,
        quotas: &quotas,
    }))
}
