//! The delete flow (spec §5.2, §5.3) as a task graph: the facts read first, then the extension
//! objects destroyed in gardenlet's reverse order with a wait for each (Network; Worker, then
//! the OperatingSystemConfigs; Extensions deleted before kube-apiserver, stale Extensions,
//! ContainerRuntimes; the ControlPlane; Extensions deleted after kube-apiserver; DNSRecords and
//! the Infrastructure), then the control-plane namespace and the garden ShootState. Task IDs
//! are upstream's, so `lastErrors[].taskID` reads as gardenlet's.
//!
//! Control-plane components gardenlet deploys and deletes itself (etcd, kube-apiserver,
//! gardener-resource-manager, machine-controller-manager, monitoring) and the cleanup of the
//! shoot's API objects have no counterpart on a seedlet seed and are left out; their edges
//! become edges between the remaining steps (spec §3.5 "Seedlet").

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::ListParams;
use kube::{Api, Resource, ResourceExt};
use seedlet_api::extensions::{
    ContainerRuntime, ControlPlane, DNSRecord, Extension, ExtensionObject, Infrastructure, Network,
    OperatingSystemConfig, Worker,
};
use seedlet_api::names::annotations;
use seedlet_runtime::flow::{Flow, TaskId};

use super::desired;
use super::flow::{DEFAULT_RETRY, DEFAULT_WAIT, INFRASTRUCTURE_WAIT, WORKER_WAIT, task};
use super::tasks::{self, FlowCtx, TaskError};
use crate::extension_sync::wait::{self, WaitTiming};
use crate::extension_sync::{object, operation};
use crate::shoot_teardown::{self, Clients};

/// Retry of the force-delete flow's delete tasks (5 s for at most 30 s, as the delete flow's).
pub const DEFAULT_RETRY_FORCE: seedlet_runtime::flow::Retry = DEFAULT_RETRY;

/// DNSRecord: 5 s / 15 s / 2 min.
pub const DNS_RECORD_WAIT: WaitTiming = WaitTiming::new(
    Duration::from_secs(5),
    Duration::from_secs(15),
    Duration::from_secs(120),
);
/// Waiting for the control-plane namespace to go: every 5 s for at most 15 min.
pub const NAMESPACE_WAIT: WaitTiming = WaitTiming::new(
    Duration::from_secs(5),
    Duration::from_secs(900),
    Duration::from_secs(900),
);

/// Task IDs (= `lastErrors[].taskID`) of the delete flow.
pub mod ids {
    /// `cloudprovider` Secret (extensions need the credentials to delete).
    pub const CLOUDPROVIDER: &str = "Deploying cloud provider account secret";
    /// ControlPlane redeploy (only while the control plane still runs).
    pub const CONTROL_PLANE_DEPLOY: &str = "Deploying Shoot control plane";
    /// Its wait.
    pub const CONTROL_PLANE_DEPLOY_WAIT: &str =
        "Waiting until Shoot control plane has been reconciled";
    /// Network.
    pub const NETWORK: &str = "Destroying shoot network plugin";
    /// Its wait.
    pub const NETWORK_WAIT: &str = "Waiting until shoot network plugin has been destroyed";
    /// Worker.
    pub const WORKER: &str = "Destroying shoot workers";
    /// Its wait.
    pub const WORKER_WAIT: &str = "Waiting until shoot worker nodes have been terminated";
    /// Every OperatingSystemConfig.
    pub const OSC: &str = "Deleting operating system config resources";
    /// Their wait.
    pub const OSC_WAIT: &str = "Waiting until all operating system config resources are deleted";
    /// Extensions deleted before kube-apiserver (the default delete lifecycle).
    pub const EXTENSIONS_BEFORE: &str = "Deleting extension resources before kube-apiserver";
    /// Their wait.
    pub const EXTENSIONS_BEFORE_WAIT: &str = "Waiting until extension resources that should be handled before kube-apiserver have been deleted";
    /// Extensions no longer wanted.
    pub const EXTENSIONS_STALE: &str = "Deleting stale extension resources";
    /// Their wait.
    pub const EXTENSIONS_STALE_WAIT: &str =
        "Waiting until all stale extension resources have been deleted";
    /// ContainerRuntimes.
    pub const CONTAINER_RUNTIME: &str = "Deleting container runtime resources";
    /// Their wait (upstream's wording).
    pub const CONTAINER_RUNTIME_WAIT: &str =
        "Waiting until stale container runtime resources are deleted";
    /// ControlPlane.
    pub const CONTROL_PLANE: &str = "Destroying shoot control plane";
    /// Its wait.
    pub const CONTROL_PLANE_WAIT: &str = "Waiting until shoot control plane has been destroyed";
    /// The control-plane chart's ManagedResource (where upstream deletes kube-apiserver).
    pub const CONTROL_PLANE_CHART: &str = "Deleting control plane chart";
    /// Extensions with delete lifecycle AfterKubeAPIServer.
    pub const EXTENSIONS_AFTER: &str = "Deleting extension resources after kube-apiserver";
    /// Their wait.
    pub const EXTENSIONS_AFTER_WAIT: &str = "Waiting until extension resources that should be handled after kube-apiserver have been deleted";
    /// Every Extension gone.
    pub const EXTENSIONS_ALL_WAIT: &str = "Waiting until all extension resources have been deleted";
    /// Ingress DNSRecord.
    pub const DNS_INGRESS: &str = "Destroying nginx ingress DNS record";
    /// External DNSRecord.
    pub const DNS_EXTERNAL: &str = "Destroying external domain DNS record";
    /// Internal DNSRecord.
    pub const DNS_INTERNAL: &str = "Destroying internal domain DNS record";
    /// Infrastructure.
    pub const INFRASTRUCTURE: &str = "Destroying shoot infrastructure";
    /// Its wait.
    pub const INFRASTRUCTURE_WAIT: &str = "Waiting until shoot infrastructure has been deleted";
    /// The control-plane namespace.
    pub const NAMESPACE: &str = "Deleting shoot namespace in Seed";
    /// Its wait.
    pub const NAMESPACE_WAIT: &str = "Waiting until shoot namespace in Seed has been deleted";
    /// The garden ShootState.
    pub const SHOOT_STATE: &str = "Deleting Shoot State";
}

/// What the flow reads before it is built (spec §5.2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The control-plane namespace exists and is not terminating.
    pub namespace_alive: bool,
    /// A Deployment `kube-apiserver` exists in it and is not being deleted.
    pub kube_apiserver_found: bool,
    /// The Infrastructure exists.
    pub infrastructure_found: bool,
    /// The Infrastructure reports a `status.providerStatus`.
    pub infrastructure_provider_status: bool,
    /// The ControlPlane exists.
    pub control_plane_found: bool,
    /// The ControlPlane is being deleted.
    pub control_plane_deleting: bool,
    /// The shoot has no workers.
    pub workerless: bool,
    /// `spec.hibernation.enabled`.
    pub hibernation_enabled: bool,
    /// The shoot references credentials (SecretBinding or CredentialsBinding).
    pub credentials: bool,
}

/// Which optional steps the flow runs, decided from the [`Facts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Re-deploy the `cloudprovider` Secret.
    pub cloudprovider_secret: bool,
    /// Re-deploy the ControlPlane and wait for it (upstream's `controlPlaneDeploymentNeeded`
    /// while the shoot's resources are cleaned up).
    pub redeploy_control_plane: bool,
    /// Destroy the worker-related kinds (Network, Worker, OSC, ContainerRuntime, ControlPlane,
    /// Infrastructure, ingress DNSRecord).
    pub worker_kinds: bool,
    /// Wait for the OSCs to go (skipped while hibernation is enabled [QUIRK]).
    pub osc_wait: bool,
    /// Destroy the DNSRecords (only while the namespace is alive).
    pub dns_records: bool,
}

/// Decides the [`Plan`] (spec §5.2, §5.3): `cleanupShootResources` = namespace alive ∧
/// kube-apiserver found ∧ (Infrastructure found ∨ workerless); the ControlPlane is re-deployed
/// only then, and only if it exists, is not being deleted and the Infrastructure has a
/// provider status.
pub fn plan(facts: &Facts) -> Plan {
    let cleanup = facts.namespace_alive
        && facts.kube_apiserver_found
        && (facts.infrastructure_found || facts.workerless);
    let control_plane_needed = !(facts.control_plane_deleting
        || (!facts.control_plane_found && !facts.kube_apiserver_found))
        && facts.infrastructure_found
        && facts.infrastructure_provider_status;
    Plan {
        cloudprovider_secret: !facts.workerless && facts.namespace_alive && facts.credentials,
        redeploy_control_plane: !facts.workerless && cleanup && control_plane_needed,
        worker_kinds: !facts.workerless,
        osc_wait: !facts.workerless && !facts.hibernation_enabled,
        dns_records: facts.namespace_alive,
    }
}

fn read_error(kind: &str, key: &str) -> impl FnOnce(kube::Error) -> TaskError {
    let text = format!("reading {kind} {key}");
    move |error| TaskError::plain(format!("{text}: {}", seedlet_runtime::error_chain(&error)))
}

/// Reads the [`Facts`] of `ctx`'s shoot; records the Infrastructure's provider status for a
/// ControlPlane re-deploy.
///
/// # Errors
/// Seed API errors other than NotFound.
pub async fn facts(ctx: &FlowCtx) -> Result<Facts, TaskError> {
    let shoot = &ctx.shoot;
    let namespace = Api::<Namespace>::all(ctx.seed.clone())
        .get_opt(&ctx.namespace)
        .await
        .map_err(read_error("Namespace", &ctx.namespace))?;
    let kube_apiserver = Api::<Deployment>::namespaced(ctx.seed.clone(), &ctx.namespace)
        .get_opt("kube-apiserver")
        .await
        .map_err(read_error("Deployment", &ctx.namespace))?;
    let name = desired::shoot_name(shoot);
    let infrastructure = get::<Infrastructure>(ctx, name).await?;
    let control_plane = get::<ControlPlane>(ctx, name).await?;
    if let Some(infrastructure) = &infrastructure {
        tasks::record_infrastructure(ctx, infrastructure);
    }
    Ok(Facts {
        namespace_alive: namespace
            .as_ref()
            .is_some_and(|ns| ns.metadata.deletion_timestamp.is_none()),
        kube_apiserver_found: kube_apiserver
            .as_ref()
            .is_some_and(|d| d.metadata.deletion_timestamp.is_none()),
        infrastructure_found: infrastructure.is_some(),
        infrastructure_provider_status: infrastructure
            .as_ref()
            .and_then(|i| i.extension_status())
            .is_some_and(|s| s.provider_status.as_ref().is_some_and(|p| !p.is_null())),
        control_plane_found: control_plane.is_some(),
        control_plane_deleting: control_plane
            .as_ref()
            .is_some_and(|c| c.meta().deletion_timestamp.is_some()),
        workerless: shoot.is_workerless(),
        hibernation_enabled: shoot.hibernation_enabled(),
        credentials: shoot.spec.credentials_binding_name.is_some()
            || shoot.spec.secret_binding_name.is_some(),
    })
}

async fn get<K>(ctx: &FlowCtx, name: &str) -> Result<Option<K>, TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    match api.get_opt(name).await {
        Ok(found) => Ok(found),
        Err(error) if object::is_gone(&error) => Ok(None),
        Err(error) => Err(read_error(
            &K::kind(&()),
            &format!("{}/{name}", ctx.namespace),
        )(error)),
    }
}

/// Destroys extension object `name` (spec §3.2): confirm with
/// `confirmation.gardener.cloud/deletion=true` and a timestamp, then DELETE; a missing object
/// (or kind) counts as deleted.
///
/// # Errors
/// API errors other than NotFound.
pub async fn destroy<K>(ctx: &FlowCtx, name: &str) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let confirmation = BTreeMap::from([
        (
            annotations::CONFIRMATION_DELETION.to_owned(),
            "true".to_owned(),
        ),
        (
            annotations::TIMESTAMP.to_owned(),
            operation::timestamp(ctx.clock.now()),
        ),
    ]);
    let key = format!("{}/{name}", ctx.namespace);
    let kind = K::kind(&());
    let failed = |step: &str| {
        let text = format!("{step} {kind} {key}");
        move |error: kube::Error| {
            TaskError::plain(format!("{text}: {}", seedlet_runtime::error_chain(&error)))
        }
    };
    object::annotate(&api, name, &confirmation)
        .await
        .map_err(failed("confirming the deletion of"))?;
    object::delete(&api, name, false)
        .await
        .map_err(failed("deleting"))?;
    Ok(())
}

/// Waits until extension object `name` is gone.
///
/// # Errors
/// `Failed to delete …` with the extension's codes.
pub async fn wait_gone<K>(ctx: &FlowCtx, name: &str, timing: WaitTiming) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let key = format!("{}/{name}", ctx.namespace);
    Ok(wait::wait_gone(&api, &key, name, timing).await?)
}

/// The names of the objects of kind `K` in the control-plane namespace (none when the kind is
/// not served).
///
/// # Errors
/// API errors other than NotFound.
pub async fn names<K>(ctx: &FlowCtx) -> Result<Vec<String>, TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    match api.list(&ListParams::default()).await {
        Ok(list) => Ok(list.items.iter().map(ResourceExt::name_any).collect()),
        Err(error) if object::is_gone(&error) => Ok(Vec::new()),
        Err(error) => Err(read_error(&K::kind(&()), &ctx.namespace)(error)),
    }
}

/// Which group of the delete flow removes an Extension object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtensionGroup {
    /// Wanted, delete lifecycle `BeforeKubeAPIServer` (the default).
    Before,
    /// Wanted, delete lifecycle `AfterKubeAPIServer`.
    After,
    /// No longer wanted.
    Stale,
}

/// The group of an Extension of `type_`: stale unless wanted; else by the registration's
/// `lifecycle.delete` (`AfterKubeAPIServer` → after, anything else → before).
pub fn extension_group(wanted: bool, delete_lifecycle: Option<&str>) -> ExtensionGroup {
    match (wanted, delete_lifecycle) {
        (false, _) => ExtensionGroup::Stale,
        (true, Some("AfterKubeAPIServer")) => ExtensionGroup::After,
        (true, _) => ExtensionGroup::Before,
    }
}

/// The Extension objects of the namespace that belong to `group`.
async fn extensions_of(ctx: &FlowCtx, group: ExtensionGroup) -> Result<Vec<String>, TaskError> {
    let wanted = desired::extensions(&ctx.shoot, &ctx.registrations);
    let api: Api<Extension> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let listed = match api.list(&ListParams::default()).await {
        Ok(list) => list.items,
        Err(error) if object::is_gone(&error) => Vec::new(),
        Err(error) => return Err(read_error("Extension", &ctx.namespace)(error)),
    };
    Ok(listed
        .iter()
        .filter(|extension| {
            let type_ = extension.spec_extra().get("type").and_then(|t| t.as_str());
            let type_ = type_.unwrap_or_default();
            let lifecycle = ctx
                .registrations
                .iter()
                .flat_map(|r| r.spec.resources.iter())
                .find(|r| r.kind == "Extension" && r.type_ == type_)
                .and_then(|r| r.lifecycle.as_ref())
                .and_then(|l| l.delete.as_deref());
            extension_group(wanted.contains_key(type_), lifecycle) == group
        })
        .map(ResourceExt::name_any)
        .collect())
}

/// Adds a destroy task for every listed object of kind `K` and a wait for them to go.
fn destroy_all<K, L, Fut>(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    (destroy_name, wait_name): (&str, &str),
    list: L,
    (after, skip, skip_wait): (&[TaskId], bool, bool),
    timing: WaitTiming,
) -> (TaskId, TaskId)
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    L: Fn(Arc<FlowCtx>) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = Result<Vec<String>, TaskError>> + Send + 'static,
{
    let list_for_wait = list.clone();
    let destroy_task = flow.add(
        task(destroy_name, ctx, move |ctx| {
            let list = list.clone();
            async move {
                for name in list(ctx.clone()).await? {
                    destroy::<K>(&ctx, &name).await?;
                }
                Ok(())
            }
        })
        .after(after)
        .skip_if(skip)
        .retry(DEFAULT_RETRY),
    );
    let wait_task = flow.add(
        task(wait_name, ctx, move |ctx| {
            let list = list_for_wait.clone();
            async move {
                for name in list(ctx.clone()).await? {
                    wait_gone::<K>(&ctx, &name, timing).await?;
                }
                Ok(())
            }
        })
        .after(&[destroy_task])
        .skip_if(skip || skip_wait),
    );
    (destroy_task, wait_task)
}

/// Adds destroy and wait of the single object `name` of kind `K`.
fn destroy_one<K>(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    names: (&str, &str),
    object: String,
    placement: (&[TaskId], bool),
    timing: WaitTiming,
) -> (TaskId, TaskId)
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let (after, skip) = placement;
    destroy_all::<K, _, _>(
        flow,
        ctx,
        names,
        move |_| {
            let object = object.clone();
            async move { Ok(vec![object]) }
        },
        (after, skip, false),
        timing,
    )
}

/// A DNSRecord's destroy and wait as one task (as upstream's `Destroy…DNSRecord`).
pub(super) fn destroy_dns_record(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    name: &str,
    suffix: &str,
    (after, skip): (&[TaskId], bool),
) -> TaskId {
    let object = format!("{}-{suffix}", desired::shoot_name(&ctx.shoot));
    flow.add(
        task(name, ctx, move |ctx| {
            let object = object.clone();
            async move {
                destroy::<DNSRecord>(&ctx, &object).await?;
                wait_gone::<DNSRecord>(&ctx, &object, DNS_RECORD_WAIT).await
            }
        })
        .after(after)
        .skip_if(skip),
    )
}

/// Builds the delete flow for `ctx` from the decided `plan`.
pub fn delete(ctx: &Arc<FlowCtx>, name: &str, plan: Plan) -> Flow<TaskError> {
    let mut flow = Flow::new(name);
    let shoot_name = desired::shoot_name(&ctx.shoot).to_owned();
    let secret = flow.add(
        task(ids::CLOUDPROVIDER, ctx, |ctx| async move {
            tasks::deploy_cloudprovider_secret(&ctx).await
        })
        .skip_if(!plan.cloudprovider_secret)
        .retry(DEFAULT_RETRY),
    );
    let redeploy = flow.add(
        task(ids::CONTROL_PLANE_DEPLOY, ctx, |ctx| async move {
            let spec = desired::control_plane_spec(
                &ctx.shoot,
                &ctx.namespace,
                ctx.infrastructure_status().as_ref(),
            );
            let name = desired::shoot_name(&ctx.shoot);
            tasks::deploy::<ControlPlane>(&ctx, name, &spec, true, &BTreeMap::new()).await
        })
        .after(&[secret])
        .skip_if(!plan.redeploy_control_plane)
        .retry(DEFAULT_RETRY),
    );
    let redeployed = flow.add(
        task(ids::CONTROL_PLANE_DEPLOY_WAIT, ctx, |ctx| async move {
            let name = desired::shoot_name(&ctx.shoot);
            tasks::wait_ready::<ControlPlane>(&ctx, name, DEFAULT_WAIT)
                .await
                .map(|_| ())
        })
        .after(&[redeploy])
        .skip_if(!plan.redeploy_control_plane),
    );
    let ready = [secret, redeployed];
    let workers = !plan.worker_kinds;
    let (_, network) = destroy_one::<Network>(
        &mut flow,
        ctx,
        (ids::NETWORK, ids::NETWORK_WAIT),
        shoot_name.clone(),
        (&ready, workers),
        DEFAULT_WAIT,
    );
    let (_, worker) = destroy_one::<Worker>(
        &mut flow,
        ctx,
        (ids::WORKER, ids::WORKER_WAIT),
        shoot_name.clone(),
        (&ready, workers),
        WORKER_WAIT,
    );
    let (osc, osc_gone) = destroy_all::<OperatingSystemConfig, _, _>(
        &mut flow,
        ctx,
        (ids::OSC, ids::OSC_WAIT),
        |ctx| async move { names::<OperatingSystemConfig>(&ctx).await },
        (&[worker], workers, !plan.osc_wait),
        DEFAULT_WAIT,
    );
    let (_, before) = destroy_all::<Extension, _, _>(
        &mut flow,
        ctx,
        (ids::EXTENSIONS_BEFORE, ids::EXTENSIONS_BEFORE_WAIT),
        |ctx| async move { extensions_of(&ctx, ExtensionGroup::Before).await },
        (&[osc_gone, worker], false, false),
        DEFAULT_WAIT,
    );
    let (_, stale) = destroy_all::<Extension, _, _>(
        &mut flow,
        ctx,
        (ids::EXTENSIONS_STALE, ids::EXTENSIONS_STALE_WAIT),
        |ctx| async move { extensions_of(&ctx, ExtensionGroup::Stale).await },
        (&[worker], false, false),
        DEFAULT_WAIT,
    );
    let (_, runtimes) = destroy_all::<ContainerRuntime, _, _>(
        &mut flow,
        ctx,
        (ids::CONTAINER_RUNTIME, ids::CONTAINER_RUNTIME_WAIT),
        |ctx| async move { names::<ContainerRuntime>(&ctx).await },
        (&ready, workers, false),
        DEFAULT_WAIT,
    );
    let cleaned = [osc, worker, network, before, stale, runtimes];
    let (_, control_plane) = destroy_one::<ControlPlane>(
        &mut flow,
        ctx,
        (ids::CONTROL_PLANE, ids::CONTROL_PLANE_WAIT),
        shoot_name.clone(),
        (&cleaned, workers),
        DEFAULT_WAIT,
    );
    finish(&mut flow, ctx, plan, &cleaned, control_plane, shoot_name);
    flow
}

/// The second half: Extensions after kube-apiserver, DNSRecords, Infrastructure, namespace and
/// ShootState.
fn finish(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    plan: Plan,
    cleaned: &[TaskId],
    control_plane: TaskId,
    shoot_name: String,
) {
    let workers = !plan.worker_kinds;
    // Runs with or without a configured chart (a chart removed from the configuration leaves
    // its ManagedResource behind); a terminating namespace takes the ManagedResource with it.
    let chart = flow.add(
        task(ids::CONTROL_PLANE_CHART, ctx, |ctx| async move {
            super::control_plane::destroy(&ctx, DEFAULT_WAIT).await
        })
        .after(&[control_plane])
        .skip_if(!plan.dns_records),
    );
    let (_, after) = destroy_all::<Extension, _, _>(
        flow,
        ctx,
        (ids::EXTENSIONS_AFTER, ids::EXTENSIONS_AFTER_WAIT),
        |ctx| async move { extensions_of(&ctx, ExtensionGroup::After).await },
        (&[control_plane, chart], false, false),
        DEFAULT_WAIT,
    );
    let all_extensions = flow.add(
        task(ids::EXTENSIONS_ALL_WAIT, ctx, |ctx| async move {
            for name in names::<Extension>(&ctx).await? {
                wait_gone::<Extension>(&ctx, &name, DEFAULT_WAIT).await?;
            }
            Ok(())
        })
        .after(&[control_plane]),
    );
    let ingress = destroy_dns_record(
        flow,
        ctx,
        ids::DNS_INGRESS,
        "ingress",
        (cleaned, workers || !plan.dns_records),
    );
    let mut after_cleaned: Vec<TaskId> = cleaned.to_vec();
    after_cleaned.push(control_plane);
    let (_, infrastructure) = destroy_one::<Infrastructure>(
        flow,
        ctx,
        (ids::INFRASTRUCTURE, ids::INFRASTRUCTURE_WAIT),
        shoot_name,
        (&after_cleaned, workers),
        INFRASTRUCTURE_WAIT,
    );
    let external = destroy_dns_record(
        flow,
        ctx,
        ids::DNS_EXTERNAL,
        "external",
        (&after_cleaned, !plan.dns_records),
    );
    let everything = [
        control_plane,
        chart,
        after,
        all_extensions,
        ingress,
        external,
        infrastructure,
    ];
    let internal = destroy_dns_record(
        flow,
        ctx,
        ids::DNS_INTERNAL,
        "internal",
        (&everything, !plan.dns_records),
    );
    let mut before_namespace = everything.to_vec();
    before_namespace.push(internal);
    let namespace = flow.add(
        task(ids::NAMESPACE, ctx, |ctx| async move {
            shoot_teardown::delete_namespace(clients(&ctx), &ctx.namespace)
                .await
                .map(|_| ())
                .map_err(|error| TaskError::plain(seedlet_runtime::error_chain(&error)))
        })
        .after(&before_namespace)
        .retry(DEFAULT_RETRY),
    );
    flow.add(
        task(ids::NAMESPACE_WAIT, ctx, |ctx| async move {
            wait_namespace_gone(&ctx).await
        })
        .after(&[namespace]),
    );
    flow.add(
        task(ids::SHOOT_STATE, ctx, |ctx| async move {
            delete_shoot_state(&ctx).await
        })
        .after(&[namespace]),
    );
}

/// The teardown steps' clients for a flow context.
pub fn clients(ctx: &FlowCtx) -> Clients<'_> {
    Clients {
        seed: &ctx.seed,
        garden: &ctx.garden,
        seed_name: ctx.seed_object.metadata.name.as_deref().unwrap_or_default(),
        field_manager: ctx.field_manager,
        clock: ctx.clock.as_ref(),
    }
}

/// Deletes the garden ShootState of the flow's shoot (confirmed, NotFound is done).
///
/// # Errors
/// Garden API errors.
pub async fn delete_shoot_state(ctx: &FlowCtx) -> Result<(), TaskError> {
    let namespace = ctx.shoot.namespace().unwrap_or_default();
    let name = ctx.shoot.name_any();
    let key = format!("{namespace}/{name}");
    shoot_teardown::delete_shoot_state(clients(ctx), &namespace, &name, &key)
        .await
        .map_err(|error| TaskError::plain(seedlet_runtime::error_chain(&error)))
}

pub(super) async fn wait_namespace_gone(ctx: &FlowCtx) -> Result<(), TaskError> {
    let started = tokio::time::Instant::now();
    let mut pause = wait::FIRST_PAUSE;
    loop {
        if shoot_teardown::delete_namespace(clients(ctx), &ctx.namespace)
            .await
            .map_err(|error| TaskError::plain(seedlet_runtime::error_chain(&error)))?
        {
            return Ok(());
        }
        if started.elapsed() + pause > NAMESPACE_WAIT.timeout {
            return Err(TaskError::plain(format!(
                "namespace {} is still terminating (retry timeout exceeded)",
                ctx.namespace
            )));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(NAMESPACE_WAIT.interval);
    }
}

#[cfg(test)]
#[path = "delete_flow_tests.rs"]
mod tests;
