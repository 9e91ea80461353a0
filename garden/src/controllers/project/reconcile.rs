//! One project reconcile (spec §3.1): live → finalizer, namespace, ResourceQuota, RBAC, stale
//! extension roles, phase; deleting → wait for the namespace's shoots, then release the
//! namespace (keep an adopted one, delete a created one) and drop the finalizer.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleBinding};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use seedlet_api::core::{Project, Shoot};
use seedlet_api::names::finalizers;
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::events::EventType;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::namespace::{self, PROJECT_NAME_LABEL, ROLE_LABEL, Release};
use super::rbac::{self, EXTENSION_ROLE_VALUE};
use super::{NAME, Projects, quota};

/// Delay before a failed reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);
/// Requeue while a released namespace terminates.
pub const TERMINATING_REQUEUE: Duration = Duration::from_secs(60);

/// Project phases.
pub mod phase {
    /// `Pending`.
    pub const PENDING: &str = "Pending";
    /// `Ready`.
    pub const READY: &str = "Ready";
    /// `Failed`.
    pub const FAILED: &str = "Failed";
    /// `Terminating`.
    pub const TERMINATING: &str = "Terminating";
}

/// Errors of a project reconcile; the message is what the Events show.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API call failed.
    #[error("{what}: {source}")]
    Api {
        /// What was done.
        what: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The namespace cannot be adopted.
    #[error(transparent)]
    Adopt(#[from] namespace::AdoptError),
    /// A step failed; the message carries Gardener's Event text.
    #[error("{message}")]
    Step {
        /// Event text.
        message: String,
        /// Cause.
        #[source]
        source: Box<Error>,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Api { .. } => "ApiError",
            Error::Adopt(_) => "NamespaceNotAdoptable",
            Error::Step { .. } => "NamespaceReconcileFailed",
        }
    }
}

fn api_error(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let what = what.into();
    move |source| Error::Api { what, source }
}

impl Reconciler for Projects {
    type Object = Project;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Reconciles one Project; idempotent.
    async fn reconcile(&self, project: Arc<Project>) -> Result<Action, Error> {
        run(&project, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn run(project: &Project, ctx: &Projects) -> Result<Action, Error> {
    let projects: Api<Project> = Api::all(ctx.client.clone());
    let Some(project) = projects
        .get_opt(&project.name_any())
        .await
        .map_err(api_error("reading project"))?
    else {
        return Ok(Action::await_change());
    };
    if project.metadata.deletion_timestamp.is_some() {
        return delete(&project, ctx).await;
    }
    if seedlet_runtime::finalizer::ensure(&projects, &project, finalizers::GARDENER)
        .await
        .map_err(api_error("adding finalizer"))?
    {
        return Ok(Action::await_change());
    }
    if phase_of(&project).is_empty() {
        set_phase(ctx, &project, phase::PENDING).await?;
    }
    let name = namespace::namespace_name(&project);
    if let Err(error) = ensure_namespace(ctx, &project, &name).await {
        return fail(
            ctx,
            &project,
            EventType::Warning,
            "NamespaceReconcileFailed",
            error,
        )
        .await;
    }
    ctx.events
        .publish(
            &project,
            EventType::Normal,
            "NamespaceReconcileSuccessful",
            "Reconcile",
            &format!("Successfully reconciled namespace {name:?} for project"),
        )
        .await;
    let project = if project.spec.namespace.as_deref().is_none_or(str::is_empty) {
        let patch = json!({"spec": {"namespace": name}});
        projects
            .patch(
                &project.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .map_err(api_error("writing spec.namespace"))?
    } else {
        project
    };
    let result = async {
        ensure_quota(ctx, &project, &name)
            .await
            .map_err(|e| step("Error while setting up ResourceQuota", e))?;
        ensure_rbac(ctx, &project, &name).await.map_err(|e| {
            step(
                &format!("Error while reconciling RBAC resources for namespace {name:?}"),
                e,
            )
        })?;
        delete_stale_extension_roles(ctx, &project, &name)
            .await
            .map_err(|e| {
                step(
                    "Error while deleting stale RBAC rules for extension roles",
                    e,
                )
            })
    }
    .await;
    if let Err(error) = result {
        return fail(
            ctx,
            &project,
            EventType::Warning,
            "NamespaceReconcileFailed",
            error,
        )
        .await;
    }
    set_phase(ctx, &project, phase::READY).await?;
    Ok(Action::await_change())
}

fn step(prefix: &str, source: Error) -> Error {
    Error::Step {
        message: format!("{prefix}: {source}"),
        source: Box::new(source),
    }
}

fn phase_of(project: &Project) -> &str {
    project
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

/// Records `error` as an Event, sets `Failed` and returns the error.
async fn fail(
    ctx: &Projects,
    project: &Project,
    kind: EventType,
    reason: &str,
    error: Error,
) -> Result<Action, Error> {
    let action = if project.metadata.deletion_timestamp.is_some() {
        "Delete"
    } else {
        "Reconcile"
    };
    ctx.events
        .publish(project, kind, reason, action, &error.to_string())
        .await;
    set_phase(ctx, project, phase::FAILED).await?;
    Err(error)
}

/// Writes `status.phase` and `status.observedGeneration` when they differ.
async fn set_phase(ctx: &Projects, project: &Project, phase: &str) -> Result<(), Error> {
    let status = project.status.as_ref();
    let observed = status.and_then(|s| s.observed_generation);
    if phase_of(project) == phase && observed == project.metadata.generation {
        return Ok(());
    }
    let patch =
        json!({"status": {"phase": phase, "observedGeneration": project.metadata.generation}});
    Api::<Project>::all(ctx.client.clone())
        .patch_status(
            &project.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .map_err(api_error("writing phase"))?;
    Ok(())
}

async fn ensure_namespace(ctx: &Projects, project: &Project, name: &str) -> Result<(), Error> {
    let api: Api<Namespace> = Api::all(ctx.client.clone());
    match api
        .get_opt(name)
        .await
        .map_err(api_error(format!("reading namespace {name}")))?
    {
        None => {
            api.create(
                &PostParams::default(),
                &namespace::new_namespace(project, name),
            )
            .await
            .map_err(api_error(format!("creating namespace {name}")))?;
        }
        Some(existing) => {
            if let Some(updated) = namespace::adopt(project, &existing)? {
                api.replace(name, &PostParams::default(), &updated)
                    .await
                    .map_err(api_error(format!("updating namespace {name}")))?;
            }
        }
    }
    Ok(())
}

async fn ensure_quota(ctx: &Projects, project: &Project, namespace: &str) -> Result<(), Error> {
    let Some(config) = quota::select(&ctx.quotas, project) else {
        return Ok(());
    };
    let api: Api<ResourceQuota> = Api::namespaced(ctx.client.clone(), namespace);
    let existing = api
        .get_opt(quota::NAME)
        .await
        .map_err(api_error("reading ResourceQuota"))?;
    let desired = quota::desired(&config.config, existing.as_ref(), project, namespace);
    upsert(&api, existing, desired, "ResourceQuota").await
}

/// Creates `desired` or replaces `existing` with it when they differ.
async fn upsert<K>(api: &Api<K>, existing: Option<K>, desired: K, what: &str) -> Result<(), Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug + PartialEq,
{
    let name = desired.name_any();
    match existing {
        None => {
            api.create(&PostParams::default(), &desired)
                .await
                .map_err(api_error(format!("creating {what} {name}")))?;
        }
        Some(existing) if existing != desired => {
            api.replace(&name, &PostParams::default(), &desired)
                .await
                .map_err(api_error(format!("updating {what} {name}")))?;
        }
        Some(_) => {}
    }
    Ok(())
}

/// `desired` on top of `existing`: owner references and labels replaced, `body` copies the
/// kind's content.
async fn apply_rbac<K>(
    api: &Api<K>,
    desired: K,
    what: &str,
    body: fn(&mut K, &K),
) -> Result<(), Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug + PartialEq,
{
    let existing = api
        .get_opt(&desired.name_any())
        .await
        .map_err(api_error(format!("reading {what} {}", desired.name_any())))?;
    let target = match &existing {
        None => desired,
        Some(existing) => {
            let mut updated = existing.clone();
            updated.meta_mut().owner_references = desired.meta().owner_references.clone();
            updated.meta_mut().labels = desired.meta().labels.clone();
            body(&mut updated, &desired);
            updated
        }
    };
    upsert(api, existing, target, what).await
}

async fn ensure_rbac(ctx: &Projects, project: &Project, namespace: &str) -> Result<(), Error> {
    let desired = rbac::desired(project, namespace);
    let roles: Api<ClusterRole> = Api::all(ctx.client.clone());
    let cluster_bindings: Api<ClusterRoleBinding> = Api::all(ctx.client.clone());
    let bindings: Api<RoleBinding> = Api::namespaced(ctx.client.clone(), namespace);
    for role in desired.cluster_roles {
        apply_rbac(&roles, role, "ClusterRole", |target, wanted| {
            target.rules = wanted.rules.clone();
            target.aggregation_rule = wanted.aggregation_rule.clone();
        })
        .await?;
    }
    for binding in desired.cluster_role_bindings {
        recreate_on_new_role(&cluster_bindings, &binding.name_any(), &binding.role_ref).await?;
        apply_rbac(
            &cluster_bindings,
            binding,
            "ClusterRoleBinding",
            |target, wanted| {
                target.role_ref = wanted.role_ref.clone();
                target.subjects = wanted.subjects.clone();
            },
        )
        .await?;
    }
    for binding in desired.role_bindings {
        recreate_on_new_role(&bindings, &binding.name_any(), &binding.role_ref).await?;
        apply_rbac(&bindings, binding, "RoleBinding", |target, wanted| {
            target.role_ref = wanted.role_ref.clone();
            target.subjects = wanted.subjects.clone();
        })
        .await?;
    }
    Ok(())
}

/// `roleRef` is immutable: a binding pointing elsewhere is deleted first.
async fn recreate_on_new_role<K>(
    api: &Api<K>,
    name: &str,
    wanted: &k8s_openapi::api::rbac::v1::RoleRef,
) -> Result<(), Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let existing = api
        .get_opt(name)
        .await
        .map_err(api_error(format!("reading binding {name}")))?;
    let value = existing.map(|e| serde_json::to_value(e).unwrap_or_default());
    if let Some(value) = value
        && value.get("roleRef") != Some(&serde_json::to_value(wanted).unwrap_or_default())
    {
        api.delete(name, &DeleteParams::default())
            .await
            .map_err(api_error(format!("deleting binding {name}")))?;
    }
    Ok(())
}

async fn delete_stale_extension_roles(
    ctx: &Projects,
    project: &Project,
    namespace: &str,
) -> Result<(), Error> {
    let selector = format!(
        "{ROLE_LABEL}={EXTENSION_ROLE_VALUE},{PROJECT_NAME_LABEL}={}",
        project.name_any()
    );
    let params = ListParams::default().labels(&selector);
    let roles: Api<ClusterRole> = Api::all(ctx.client.clone());
    let bindings: Api<RoleBinding> = Api::namespaced(ctx.client.clone(), namespace);
    let role_names: Vec<String> = roles
        .list(&params)
        .await
        .map_err(api_error("listing extension ClusterRoles"))?
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    for name in rbac::stale_extension_objects(project, &role_names) {
        delete_ignoring_missing(&roles, name).await?;
    }
    let binding_names: Vec<String> = bindings
        .list(&params)
        .await
        .map_err(api_error("listing extension RoleBindings"))?
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    for name in rbac::stale_extension_objects(project, &binding_names) {
        delete_ignoring_missing(&bindings, name).await?;
    }
    Ok(())
}

async fn delete_ignoring_missing<K>(api: &Api<K>, name: &str) -> Result<(), Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(Error::Api {
            what: format!("deleting {name}"),
            source,
        }),
    }
}

/// Deletion (spec §3.1 "Deletion").
async fn delete(project: &Project, ctx: &Projects) -> Result<Action, Error> {
    let projects: Api<Project> = Api::all(ctx.client.clone());
    if !project
        .finalizers()
        .iter()
        .any(|f| f == finalizers::GARDENER)
    {
        return Ok(Action::await_change());
    }
    let Some(name) = project.spec.namespace.clone().filter(|n| !n.is_empty()) else {
        seedlet_runtime::finalizer::remove(&projects, project, finalizers::GARDENER)
            .await
            .map_err(api_error("removing finalizer"))?;
        return Ok(Action::await_change());
    };
    let shoots: Api<Shoot> = Api::namespaced(ctx.client.clone(), &name);
    let remaining = shoots
        .list(&ListParams::default().limit(1))
        .await
        .map_err(api_error("listing shoots"))?;
    if !remaining.items.is_empty() {
        ctx.events
            .publish(
                project,
                EventType::Warning,
                "NamespaceNotEmpty",
                "Delete",
                &format!("Cannot release namespace {name:?} because it still contains Shoots"),
            )
            .await;
        set_phase(ctx, project, phase::TERMINATING).await?;
        // The last shoot's deletion triggers the next attempt.
        return Ok(Action::await_change());
    }
    let released = match release_namespace(ctx, project, &name).await {
        Ok(released) => released,
        Err(error) => {
            let error = Error::Step {
                message: format!("Failed to release project namespace {name:?}: {error}"),
                source: Box::new(error),
            };
            return fail(
                ctx,
                project,
                EventType::Warning,
                "NamespaceDeletionFailed",
                error,
            )
            .await;
        }
    };
    if !released {
        ctx.events
            .publish(
                project,
                EventType::Normal,
                "NamespaceMarkedForDeletion",
                "Delete",
                &format!("Successfully marked project namespace {name:?} for deletion"),
            )
            .await;
        set_phase(ctx, project, phase::TERMINATING).await?;
        return Ok(Action::requeue(TERMINATING_REQUEUE));
    }
    seedlet_runtime::finalizer::remove(&projects, project, finalizers::GARDENER)
        .await
        .map_err(api_error("removing finalizer"))?;
    Ok(Action::await_change())
}

/// Whether the namespace is released (gone, not ours, or kept); deletes a created one.
async fn release_namespace(ctx: &Projects, project: &Project, name: &str) -> Result<bool, Error> {
    let api: Api<Namespace> = Api::all(ctx.client.clone());
    let existing = api
        .get_opt(name)
        .await
        .map_err(api_error(format!("reading namespace {name}")))?;
    match namespace::release(project, existing.as_ref()) {
        Release::Released => Ok(true),
        Release::Terminating => Ok(false),
        Release::Keep(kept) => {
            api.replace(name, &PostParams::default(), &kept)
                .await
                .map_err(api_error(format!("updating namespace {name}")))?;
            Ok(true)
        }
        Release::Delete => {
            let params = DeleteParams {
                propagation_policy: Some(PropagationPolicy::Foreground),
                grace_period_seconds: Some(60),
                ..DeleteParams::default()
            };
            match api.delete(name, &params).await {
                Ok(_) => Ok(false),
                Err(kube::Error::Api(status)) if status.is_not_found() => Ok(true),
                Err(source) => Err(Error::Api {
                    what: format!("deleting namespace {name}"),
                    source,
                }),
            }
        }
    }
}
