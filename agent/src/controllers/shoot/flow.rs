//! The reconcile flow (spec §3.3) as a task graph: the extension steps of gardenlet's flow with
//! their task IDs and relative order. Control-plane components gardenlet deploys itself
//! (etcd, kube-apiserver, gardener-resource-manager, …) are not deployed, so their edges are
//! dropped (spec §3.5 "Seedlet"); DNSRecords are skipped because without a kube-apiserver there
//! is no load-balancer address for them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use seedlet_api::extensions::{
    ContainerRuntime, ControlPlane, Extension, Infrastructure, Network, OperatingSystemConfig,
    Worker,
};
use seedlet_runtime::flow::{Flow, Retry, Task, TaskId};
use serde_json::Value;

use super::desired;
use super::tasks::{self, FlowCtx, TaskError};
use crate::extension_sync::wait::WaitTiming;

/// Retry of most deploy tasks in the reconcile flow (5 s for at most 30 s).
pub const DEFAULT_RETRY: Retry = Retry::new(Duration::from_secs(5), Duration::from_secs(30));

const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Infrastructure: 10 s / 3 min / 10 min.
pub const INFRASTRUCTURE_WAIT: WaitTiming = WaitTiming::new(secs(10), secs(180), secs(600));
/// Network, ControlPlane, OperatingSystemConfig, ContainerRuntime, Extension: 5 s / 30 s / 3 min.
pub const DEFAULT_WAIT: WaitTiming = WaitTiming::new(secs(5), secs(30), secs(180));
/// Worker: 5 s / 30 s / 10 min.
pub const WORKER_WAIT: WaitTiming = WaitTiming::new(secs(5), secs(30), secs(600));

/// Task IDs (= `lastErrors[].taskID`) of the reconcile flow.
pub mod ids {
    /// Control-plane namespace (written by the Cluster sync; checked here).
    pub const NAMESPACE: &str = "Deploying control plane namespace";
    /// `cloudprovider` Secret.
    pub const CLOUDPROVIDER: &str = "Deploying cloud provider account secret";
    /// Infrastructure deploy.
    pub const INFRASTRUCTURE: &str = "Deploying Shoot infrastructure";
    /// Infrastructure wait.
    pub const INFRASTRUCTURE_WAIT: &str = "Waiting until Shoot infrastructure has been reconciled";
    /// Core BackupEntry.
    pub const BACKUP_ENTRY: &str = "Deploying BackupEntry for ETCD data";
    /// Extensions with lifecycle BeforeKubeAPIServer.
    pub const EXTENSIONS_BEFORE: &str = "Deploying extension resources before kube-apiserver";
    /// Their wait.
    pub const EXTENSIONS_BEFORE_WAIT: &str =
        "Waiting until extension resources handled before kube-apiserver are ready";
    /// The control-plane chart's ManagedResource (seedlet's stand-in for the components
    /// gardenlet deploys itself).
    pub const CONTROL_PLANE_CHART: &str = "Deploying control plane chart";
    /// Its health.
    pub const CONTROL_PLANE_CHART_WAIT: &str = "Waiting until control plane chart is healthy";
    /// ControlPlane deploy.
    pub const CONTROL_PLANE: &str = "Deploying shoot control plane components";
    /// ControlPlane wait.
    pub const CONTROL_PLANE_WAIT: &str = "Waiting until shoot control plane has been reconciled";
    /// Extensions with lifecycle AfterKubeAPIServer (the default).
    pub const EXTENSIONS_AFTER: &str = "Deploying extension resources after kube-apiserver";
    /// Their wait.
    pub const EXTENSIONS_AFTER_WAIT: &str =
        "Waiting until extension resources handled after kube-apiserver are ready";
    /// ContainerRuntimes.
    pub const CONTAINER_RUNTIME: &str = "Deploying container runtime resources";
    /// Their wait.
    pub const CONTAINER_RUNTIME_WAIT: &str = "Waiting until container runtime resources are ready";
    /// OperatingSystemConfigs.
    pub const OSC: &str = "Deploying operating system specific configuration for shoot workers";
    /// Their wait.
    pub const OSC_WAIT: &str =
        "Waiting until operating system configurations for worker nodes have been reconciled";
    /// Network.
    pub const NETWORK: &str = "Deploying shoot network plugin";
    /// Its wait.
    pub const NETWORK_WAIT: &str = "Waiting until shoot network plugin has been reconciled";
    /// Worker.
    pub const WORKER: &str = "Configuring worker pools";
    /// Its wait.
    pub const WORKER_WAIT: &str = "Waiting until worker pools have been reconciled";
    /// Extensions with lifecycle AfterWorker.
    pub const EXTENSIONS_AFTER_WORKER: &str = "Deploying extension resources after workers";
    /// Their wait.
    pub const EXTENSIONS_AFTER_WORKER_WAIT: &str =
        "Waiting until extension resources handled after workers are ready";
}

/// When an Extension is reconciled relative to the control plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// `BeforeKubeAPIServer`.
    Before,
    /// `AfterKubeAPIServer` (default).
    After,
    /// `AfterWorker`.
    AfterWorker,
}

/// The wanted Extensions split by reconcile lifecycle.
pub fn extensions_by_lifecycle(ctx: &FlowCtx) -> BTreeMap<String, (Value, Lifecycle)> {
    desired::extensions(&ctx.shoot, &ctx.registrations)
        .into_iter()
        .map(|(type_, spec)| {
            let lifecycle = ctx
                .registrations
                .iter()
                .flat_map(|r| r.spec.resources.iter())
                .find(|r| r.kind == "Extension" && r.type_ == type_)
                .and_then(|r| r.lifecycle.as_ref())
                .and_then(|l| l.reconcile.as_deref());
            let lifecycle = match lifecycle {
                Some("BeforeKubeAPIServer") => Lifecycle::Before,
                Some("AfterWorker") => Lifecycle::AfterWorker,
                _ => Lifecycle::After,
            };
            (type_, (spec, lifecycle))
        })
        .collect()
}

type Body = futures::future::BoxFuture<'static, Result<(), TaskError>>;

pub(super) fn task<F, Fut>(name: &str, ctx: &Arc<FlowCtx>, body: F) -> Task<TaskError>
where
    F: Fn(Arc<FlowCtx>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), TaskError>> + Send + 'static,
{
    let ctx = ctx.clone();
    Task::new(name, move || -> Body { body(ctx.clone()).boxed() })
}

/// What the graph depends on besides the shoot.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Restore phase (extension objects always annotated).
    pub restore: bool,
    /// `shoot.gardener.cloud/skip-readiness`: waits are skipped.
    pub skip_readiness: bool,
}

/// Builds the reconcile flow for `ctx`.
pub fn reconcile(ctx: &Arc<FlowCtx>, name: &str, options: Options) -> Flow<TaskError> {
    let shoot = &ctx.shoot;
    let workerless = shoot.is_workerless();
    let hibernation = shoot.hibernation_enabled();
    let no_credentials =
        shoot.spec.credentials_binding_name.is_none() && shoot.spec.secret_binding_name.is_none();
    let extensions = extensions_by_lifecycle(ctx);
    let has = |lifecycle: Lifecycle| extensions.values().any(|(_, l)| *l == lifecycle);
    let mut flow = Flow::new(name);

    let namespace = flow.add(
        task(ids::NAMESPACE, ctx, |ctx| async move {
            tasks::namespace_present(&ctx).await
        })
        .retry(DEFAULT_RETRY),
    );
    let secret = flow.add(
        task(ids::CLOUDPROVIDER, ctx, |ctx| async move {
            tasks::deploy_cloudprovider_secret(&ctx).await
        })
        .after(&[namespace])
        .skip_if(workerless || no_credentials)
        .retry(DEFAULT_RETRY),
    );
    let restore = options.restore;
    let infrastructure = flow.add(
        task(ids::INFRASTRUCTURE, ctx, move |ctx| async move {
            let spec = desired::infrastructure_spec(&ctx.shoot, &ctx.namespace);
            let trigger = tasks::infrastructure_trigger(&ctx, restore).await?;
            tasks::deploy::<Infrastructure>(
                &ctx,
                desired::shoot_name(&ctx.shoot),
                &spec,
                trigger,
                &BTreeMap::new(),
            )
            .await
        })
        .after(&[namespace, secret])
        .skip_if(workerless),
    );
    let infrastructure_ready = flow.add(
        task(ids::INFRASTRUCTURE_WAIT, ctx, |ctx| async move {
            let ready = tasks::wait_ready::<Infrastructure>(
                &ctx,
                desired::shoot_name(&ctx.shoot),
                INFRASTRUCTURE_WAIT,
            )
            .await?;
            tasks::record_infrastructure(&ctx, &ready);
            Ok(())
        })
        .after(&[infrastructure])
        .skip_if(workerless || options.skip_readiness),
    );
    let entry = desired::backup_entry(shoot, &ctx.seed_object, &ctx.namespace, "");
    let backup_entry = flow.add(
        task(ids::BACKUP_ENTRY, ctx, |ctx| async move {
            let now = crate::extension_sync::operation::timestamp(ctx.clock.now());
            match desired::backup_entry(&ctx.shoot, &ctx.seed_object, &ctx.namespace, &now) {
                Some(entry) => tasks::deploy_backup_entry(&ctx, entry).await,
                None => Ok(()),
            }
        })
        .after(&[namespace])
        .skip_if(entry.is_none()),
    );
    let (before, before_ready) = extension_group(
        &mut flow,
        ctx,
        &extensions,
        Lifecycle::Before,
        (ids::EXTENSIONS_BEFORE, ids::EXTENSIONS_BEFORE_WAIT),
        &[namespace, secret, infrastructure],
        hibernation || !has(Lifecycle::Before),
        options.skip_readiness,
    );
    let _ = before;
    let chart = ctx.control_plane_chart.clone();
    let chart_ready =
        control_plane_chart(&mut flow, ctx, chart, &[namespace, before_ready], options);
    let control_plane = flow.add(
        task(ids::CONTROL_PLANE, ctx, |ctx| async move {
            let spec = desired::control_plane_spec(
                &ctx.shoot,
                &ctx.namespace,
                ctx.infrastructure_status().as_ref(),
            );
            tasks::deploy::<ControlPlane>(
                &ctx,
                desired::shoot_name(&ctx.shoot),
                &spec,
                true,
                &BTreeMap::new(),
            )
            .await
        })
        .after(&[
            secret,
            infrastructure_ready,
            before_ready,
            backup_entry,
            chart_ready,
        ])
        .skip_if(workerless)
        .retry(DEFAULT_RETRY),
    );
    let control_plane_ready = flow.add(
        task(ids::CONTROL_PLANE_WAIT, ctx, |ctx| async move {
            tasks::wait_ready::<ControlPlane>(&ctx, desired::shoot_name(&ctx.shoot), DEFAULT_WAIT)
                .await
                .map(|_| ())
        })
        .after(&[control_plane])
        .skip_if(workerless || options.skip_readiness),
    );
    let (_, after_ready) = extension_group(
        &mut flow,
        ctx,
        &extensions,
        Lifecycle::After,
        (ids::EXTENSIONS_AFTER, ids::EXTENSIONS_AFTER_WAIT),
        &[control_plane_ready],
        !has(Lifecycle::After),
        options.skip_readiness,
    );
    worker_tasks(
        &mut flow,
        ctx,
        &extensions,
        Prerequisites {
            secret,
            infrastructure_ready,
            control_plane_ready,
            after_ready,
        },
        options,
    );
    flow
}

/// Adds the control-plane chart's deploy and health wait (skipped without a chart); returns the
/// wait.
fn control_plane_chart(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    chart: Option<Arc<super::control_plane::ChartSource>>,
    after: &[TaskId],
    options: Options,
) -> TaskId {
    let configured = chart.is_some();
    let deploy = flow.add(
        task(ids::CONTROL_PLANE_CHART, ctx, move |ctx| {
            let chart = chart.clone();
            async move {
                match chart {
                    Some(chart) => super::control_plane::deploy(&ctx, chart).await,
                    None => Ok(()),
                }
            }
        })
        .after(after)
        .skip_if(!configured)
        .retry(DEFAULT_RETRY),
    );
    flow.add(
        task(ids::CONTROL_PLANE_CHART_WAIT, ctx, |ctx| async move {
            super::control_plane::wait_healthy(&ctx, DEFAULT_WAIT).await
        })
        .after(&[deploy])
        .skip_if(!configured || options.skip_readiness),
    )
}

/// Adds the deploy and wait tasks of one Extension lifecycle group.
#[allow(clippy::too_many_arguments)]
fn extension_group(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    extensions: &BTreeMap<String, (Value, Lifecycle)>,
    lifecycle: Lifecycle,
    (deploy_name, wait_name): (&str, &str),
    after: &[TaskId],
    skip: bool,
    skip_readiness: bool,
) -> (TaskId, TaskId) {
    let wanted: Vec<(String, Value)> = extensions
        .iter()
        .filter(|(_, (_, l))| *l == lifecycle)
        .map(|(type_, (spec, _))| (type_.clone(), spec.clone()))
        .collect();
    let names: Vec<String> = wanted.iter().map(|(name, _)| name.clone()).collect();
    let wanted = Arc::new(wanted);
    let deploy = flow.add(
        task(deploy_name, ctx, move |ctx| {
            let wanted = wanted.clone();
            async move {
                for (name, spec) in wanted.iter() {
                    tasks::deploy::<Extension>(&ctx, name, spec, true, &BTreeMap::new()).await?;
                }
                Ok(())
            }
        })
        .after(after)
        .skip_if(skip)
        .retry(DEFAULT_RETRY),
    );
    let names = Arc::new(names);
    let wait = flow.add(
        task(wait_name, ctx, move |ctx| {
            let names = names.clone();
            async move {
                for name in names.iter() {
                    tasks::wait_ready::<Extension>(&ctx, name, DEFAULT_WAIT).await?;
                }
                Ok(())
            }
        })
        .after(&[deploy])
        .skip_if(skip || skip_readiness),
    );
    (deploy, wait)
}

/// Tasks the reconcile flow's first part hands to the worker part.
#[derive(Debug, Clone, Copy)]
struct Prerequisites {
    secret: TaskId,
    infrastructure_ready: TaskId,
    control_plane_ready: TaskId,
    after_ready: TaskId,
}

/// The worker part of the reconcile flow: ContainerRuntimes, OperatingSystemConfigs, Network,
/// Worker and the AfterWorker Extensions.
fn worker_tasks(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    extensions: &BTreeMap<String, (Value, Lifecycle)>,
    prerequisites: Prerequisites,
    options: Options,
) {
    let Prerequisites {
        secret,
        infrastructure_ready,
        control_plane_ready,
        after_ready,
    } = prerequisites;
    let workerless = ctx.shoot.is_workerless();
    let has = |lifecycle: Lifecycle| extensions.values().any(|(_, l)| *l == lifecycle);
    let container_runtime = flow.add(
        task(ids::CONTAINER_RUNTIME, ctx, |ctx| async move {
            for (name, spec) in desired::container_runtimes(&ctx.shoot) {
                tasks::deploy::<ContainerRuntime>(&ctx, &name, &spec, true, &BTreeMap::new())
                    .await?;
            }
            Ok(())
        })
        .after(&[control_plane_ready])
        .skip_if(workerless)
        .retry(DEFAULT_RETRY),
    );
    let container_runtime_ready = flow.add(
        task(ids::CONTAINER_RUNTIME_WAIT, ctx, |ctx| async move {
            for name in desired::container_runtimes(&ctx.shoot).keys() {
                tasks::wait_ready::<ContainerRuntime>(&ctx, name, DEFAULT_WAIT).await?;
            }
            Ok(())
        })
        .after(&[container_runtime])
        .skip_if(workerless || options.skip_readiness),
    );
    let osc = flow.add(
        task(ids::OSC, ctx, |ctx| async move {
            for pair in desired::operating_system_configs(&ctx.shoot) {
                let labels = BTreeMap::from([
                    (desired::osc::POOL_LABEL.to_owned(), pair.pool.clone()),
                    (
                        "provider.extensions.gardener.cloud/mutated-by-controlplane-webhook"
                            .to_owned(),
                        "true".to_owned(),
                    ),
                ]);
                for (name, spec) in [&pair.init, &pair.original] {
                    tasks::deploy::<OperatingSystemConfig>(&ctx, name, spec, true, &labels).await?;
                }
            }
            Ok(())
        })
        .after(&[
            secret,
            infrastructure_ready,
            control_plane_ready,
            after_ready,
        ])
        .skip_if(workerless),
    );
    let osc_ready = flow.add(
        task(ids::OSC_WAIT, ctx, |ctx| async move {
            for pair in desired::operating_system_configs(&ctx.shoot) {
                let init =
                    tasks::wait_ready::<OperatingSystemConfig>(&ctx, &pair.init.0, DEFAULT_WAIT)
                        .await?;
                tasks::record_cloud_config(&ctx, &pair.pool, &init)?;
                tasks::wait_ready::<OperatingSystemConfig>(&ctx, &pair.original.0, DEFAULT_WAIT)
                    .await?;
            }
            Ok(())
        })
        .after(&[osc])
        .skip_if(workerless),
    );
    let network = flow.add(
        task(ids::NETWORK, ctx, |ctx| async move {
            let Some(spec) = desired::network_spec(&ctx.shoot) else {
                return Err(TaskError::plain("shoot has no spec.networking.type"));
            };
            tasks::deploy::<Network>(
                &ctx,
                desired::shoot_name(&ctx.shoot),
                &spec,
                true,
                &BTreeMap::new(),
            )
            .await
        })
        .after(&[infrastructure_ready, control_plane_ready, after_ready])
        .skip_if(workerless)
        .retry(DEFAULT_RETRY),
    );
    let network_ready = flow.add(
        task(ids::NETWORK_WAIT, ctx, |ctx| async move {
            tasks::wait_ready::<Network>(&ctx, desired::shoot_name(&ctx.shoot), DEFAULT_WAIT)
                .await
                .map(|_| ())
        })
        .after(&[network])
        .skip_if(workerless || options.skip_readiness),
    );
    let worker = flow.add(
        task(ids::WORKER, ctx, |ctx| async move {
            let spec = desired::worker_spec(
                &ctx.shoot,
                &ctx.namespace,
                ctx.infrastructure_status().as_ref(),
                &ctx.user_data(),
                None,
            );
            tasks::deploy::<Worker>(
                &ctx,
                desired::shoot_name(&ctx.shoot),
                &spec,
                true,
                &BTreeMap::new(),
            )
            .await
        })
        .after(&[
            secret,
            infrastructure_ready,
            osc_ready,
            container_runtime_ready,
        ])
        .skip_if(workerless),
    );
    let worker_ready = flow.add(
        task(ids::WORKER_WAIT, ctx, |ctx| async move {
            tasks::wait_ready::<Worker>(&ctx, desired::shoot_name(&ctx.shoot), WORKER_WAIT)
                .await
                .map(|_| ())
        })
        .after(&[worker, network_ready])
        .skip_if(workerless || options.skip_readiness),
    );
    extension_group(
        flow,
        ctx,
        extensions,
        Lifecycle::AfterWorker,
        (
            ids::EXTENSIONS_AFTER_WORKER,
            ids::EXTENSIONS_AFTER_WORKER_WAIT,
        ),
        &[worker_ready],
        !has(Lifecycle::AfterWorker),
        options.skip_readiness,
    );
}
