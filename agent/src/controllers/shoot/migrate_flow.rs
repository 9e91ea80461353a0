//! The migrate flow (spec §6.2, gardenlet's `Shoot cluster preparation for migration`) as a task
//! graph with upstream's task IDs and order, for the extension objects a seedlet seed holds:
//! ContainerRuntimes, Network, OperatingSystemConfigs and Worker are migrated together, then
//! the ShootState is persisted, then they are deleted; Extensions migrate before or after the
//! (absent) kube-apiserver by their `lifecycle.migrate`; ControlPlane, Infrastructure and the
//! DNSRecords follow; the core BackupEntry moves to the destination; the namespace goes last.
//!
//! Steps for components seedlet does not deploy (etcd, kube-apiserver, gardener-resource-manager,
//! machine-controller-manager, ManagedResources, machine objects) are left out, like their
//! edges in the reconcile flow (spec §3.5 "Seedlet"). One deliberate difference: upstream
//! deletes the ControlPlane right after annotating it (no `WaitMigrate`), relying on the
//! extension to honour `migrate` before the deletion; here "Migrating shoot control plane"
//! also waits for the succeeded `Migrate`, so no extension can mistake the DELETE for a full
//! deletion.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use seedlet_api::extensions::{
    ContainerRuntime, ControlPlane, DNSRecord, Extension, Infrastructure, Network,
    OperatingSystemConfig, Worker,
};
use seedlet_runtime::flow::{Flow, Retry, Task, TaskId};

use super::flow::{DEFAULT_WAIT, INFRASTRUCTURE_WAIT, WORKER_WAIT, extensions_by_lifecycle};
use super::migrate_tasks as t;
use super::tasks::{FlowCtx, TaskError};
use crate::extension_sync::wait::WaitTiming;
use crate::shoot_state;

/// Retry of the migrate flow's deploy and destroy tasks (5 s for at most 10 min).
pub const MIGRATE_RETRY: Retry = Retry::new(Duration::from_secs(5), Duration::from_secs(600));
/// DNSRecord waits: 5 s / 15 s / 2 min.
pub const DNS_RECORD_WAIT: WaitTiming = WaitTiming::new(
    Duration::from_secs(5),
    Duration::from_secs(15),
    Duration::from_secs(120),
);
/// Core BackupEntry and namespace waits: 5 s / 10 min.
pub const LONG_WAIT: WaitTiming = WaitTiming::new(
    Duration::from_secs(5),
    Duration::from_secs(600),
    Duration::from_secs(600),
);

/// Task IDs (= `lastErrors[].taskID`) of the migrate flow.
pub mod ids {
    /// The control-plane namespace (present; the Cluster sync wrote it).
    pub const NAMESPACE: &str = "Deploying Shoot namespace in Seed";
    /// Migrate ContainerRuntimes, Network, OSCs and Worker.
    pub const MIGRATE_EXTENSION_RESOURCES: &str = "Migrating extension resources";
    /// Their wait.
    pub const WAIT_EXTENSION_RESOURCES_MIGRATED: &str =
        "Waiting until extension resources have been migrated";
    /// Extensions with migrate lifecycle BeforeKubeAPIServer.
    pub const MIGRATE_EXTENSIONS_BEFORE: &str = "Migrating extensions before kube-apiserver";
    /// Their wait.
    pub const WAIT_EXTENSIONS_BEFORE_MIGRATED: &str =
        "Waiting until extensions that should be handled before kube-apiserver have been migrated";
    /// The ShootState upsert.
    pub const PERSIST_SHOOT_STATE: &str = "Persisting ShootState in garden cluster";
    /// Delete ContainerRuntimes, Network, OSCs and Worker.
    pub const DELETE_EXTENSION_RESOURCES: &str =
        "Deleting extension resources from the Shoot namespace";
    /// Their wait.
    pub const WAIT_EXTENSION_RESOURCES_DELETED: &str =
        "Waiting until extension resources have been deleted";
    /// Delete the BeforeKubeAPIServer Extensions.
    pub const DELETE_EXTENSIONS_BEFORE: &str = "Deleting extensions before kube-apiserver";
    /// Their wait.
    pub const WAIT_EXTENSIONS_BEFORE_DELETED: &str =
        "Waiting until extensions that should be handled before kube-apiserver have been deleted";
    /// Extensions no longer wanted.
    pub const DELETE_STALE_EXTENSIONS: &str = "Deleting stale extensions";
    /// Their wait.
    pub const WAIT_STALE_EXTENSIONS_DELETED: &str =
        "Waiting until all stale extensions have been deleted";
    /// ControlPlane migrate.
    pub const MIGRATE_CONTROL_PLANE: &str = "Migrating shoot control plane";
    /// ControlPlane delete.
    pub const DELETE_CONTROL_PLANE: &str = "Deleting shoot control plane";
    /// Its wait.
    pub const WAIT_CONTROL_PLANE_DELETED: &str =
        "Waiting until shoot control plane has been deleted";
    /// Extensions with migrate lifecycle AfterKubeAPIServer.
    pub const MIGRATE_EXTENSIONS_AFTER: &str = "Migrating extensions after kube-apiserver";
    /// Their wait.
    pub const WAIT_EXTENSIONS_AFTER_MIGRATED: &str =
        "Waiting until extensions that should be handled after kube-apiserver have been migrated";
    /// Their deletion.
    pub const DELETE_EXTENSIONS_AFTER: &str = "Deleting extensions after kube-apiserver";
    /// Its wait.
    pub const WAIT_EXTENSIONS_AFTER_DELETED: &str =
        "Waiting until extensions that should be handled after kube-apiserver have been deleted";
    /// Every Extension gone.
    pub const WAIT_EXTENSIONS_DELETED: &str = "Waiting until all extensions have been deleted";
    /// Infrastructure migrate.
    pub const MIGRATE_INFRASTRUCTURE: &str = "Migrating shoot infrastructure";
    /// Its wait.
    pub const WAIT_INFRASTRUCTURE_MIGRATED: &str =
        "Waiting until shoot infrastructure has been migrated";
    /// Infrastructure delete.
    pub const DELETE_INFRASTRUCTURE: &str = "Deleting shoot infrastructure";
    /// Its wait.
    pub const WAIT_INFRASTRUCTURE_DELETED: &str =
        "Waiting until shoot infrastructure has been deleted";
    /// Ingress DNSRecord.
    pub const MIGRATE_INGRESS_DNS: &str = "Migrating nginx ingress DNS record";
    /// External DNSRecord.
    pub const MIGRATE_EXTERNAL_DNS: &str = "Migrating external domain DNS record";
    /// Internal DNSRecord.
    pub const MIGRATE_INTERNAL_DNS: &str = "Migrating internal domain DNS record";
    /// All DNSRecords deleted.
    pub const DELETE_DNS_RECORDS: &str = "Deleting DNSRecords from the Shoot namespace";
    /// Core BackupEntry to the destination.
    pub const MIGRATE_BACKUP_ENTRY: &str = "Migrating BackupEntry to new seed";
    /// Its wait.
    pub const WAIT_BACKUP_ENTRY: &str = "Waiting for BackupEntry to be migrated to new seed";
    /// Namespace deletion.
    pub const DELETE_NAMESPACE: &str = "Deleting shoot namespace in Seed";
    /// Its wait.
    pub const WAIT_NAMESPACE_DELETED: &str =
        "Waiting until shoot namespace in Seed has been deleted";
}

type Body = futures::future::BoxFuture<'static, Result<(), TaskError>>;

fn task<F, Fut>(name: &str, ctx: &Arc<FlowCtx>, body: F) -> Task<TaskError>
where
    F: Fn(Arc<FlowCtx>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), TaskError>> + Send + 'static,
{
    let ctx = ctx.clone();
    Task::new(name, move || -> Body { body(ctx.clone()).boxed() })
}

/// Migrates (or, with `wait`, waits for) the four kinds migrated together.
async fn extension_resources(ctx: Arc<FlowCtx>, wait: bool) -> Result<(), TaskError> {
    macro_rules! each {
        ($kind:ty, $timing:expr) => {{
            let names = t::names::<$kind>(&ctx).await?;
            if wait {
                t::wait_migrated::<$kind>(&ctx, &names, $timing).await?;
            } else {
                t::migrate::<$kind>(&ctx, &names).await?;
            }
        }};
    }
    each!(ContainerRuntime, DEFAULT_WAIT);
    each!(Network, DEFAULT_WAIT);
    each!(OperatingSystemConfig, DEFAULT_WAIT);
    each!(Worker, WORKER_WAIT);
    Ok(())
}

/// Deletes (or, with `wait`, waits for the deletion of) the four kinds migrated together.
async fn delete_extension_resources(ctx: Arc<FlowCtx>, wait: bool) -> Result<(), TaskError> {
    macro_rules! each {
        ($kind:ty, $timing:expr) => {{
            let names = t::names::<$kind>(&ctx).await?;
            if wait {
                t::wait_gone::<$kind>(&ctx, &names, $timing).await?;
            } else {
                t::destroy::<$kind>(&ctx, &names).await?;
            }
        }};
    }
    each!(ContainerRuntime, DEFAULT_WAIT);
    each!(Network, DEFAULT_WAIT);
    each!(OperatingSystemConfig, DEFAULT_WAIT);
    each!(Worker, WORKER_WAIT);
    Ok(())
}

/// What an Extension step does.
#[derive(Debug, Clone, Copy)]
enum Step {
    Migrate,
    WaitMigrated,
    Delete,
    WaitDeleted,
}

/// One step over the Extensions of one migrate lifecycle group.
async fn extensions(ctx: Arc<FlowCtx>, before: bool, step: Step) -> Result<(), TaskError> {
    let names = t::extensions(&ctx, before).await?;
    match step {
        Step::Migrate => t::migrate::<Extension>(&ctx, &names).await,
        Step::WaitMigrated => t::wait_migrated::<Extension>(&ctx, &names, DEFAULT_WAIT).await,
        Step::Delete => t::destroy::<Extension>(&ctx, &names).await,
        Step::WaitDeleted => t::wait_gone::<Extension>(&ctx, &names, DEFAULT_WAIT).await,
    }
}

/// The Extension objects whose type is no longer wanted (stale).
async fn stale_extensions(ctx: &FlowCtx) -> Result<Vec<String>, TaskError> {
    let wanted = extensions_by_lifecycle(ctx);
    Ok(t::names::<Extension>(ctx)
        .await?
        .into_iter()
        .filter(|name| !wanted.contains_key(name))
        .collect())
}

/// Migrates and waits for, or deletes and waits for, every object of one kind.
async fn whole_kind<K>(ctx: Arc<FlowCtx>, step: Step, timing: WaitTiming) -> Result<(), TaskError>
where
    K: seedlet_api::extensions::ExtensionObject
        + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let names = t::names::<K>(&ctx).await?;
    match step {
        Step::Migrate => t::migrate::<K>(&ctx, &names).await,
        Step::WaitMigrated => t::wait_migrated::<K>(&ctx, &names, timing).await,
        Step::Delete => t::destroy::<K>(&ctx, &names).await,
        Step::WaitDeleted => t::wait_gone::<K>(&ctx, &names, timing).await,
    }
}

/// Migrates one named DNSRecord (`<shoot>-<suffix>`) and waits for it, if it exists.
async fn dns_record(ctx: Arc<FlowCtx>, suffix: &'static str) -> Result<(), TaskError> {
    let wanted = format!("{}-{suffix}", super::desired::shoot_name(&ctx.shoot));
    let names: Vec<String> = t::names::<DNSRecord>(&ctx)
        .await?
        .into_iter()
        .filter(|name| *name == wanted)
        .collect();
    t::migrate::<DNSRecord>(&ctx, &names).await?;
    t::wait_migrated::<DNSRecord>(&ctx, &names, DNS_RECORD_WAIT).await
}

/// What the graph depends on besides the shoot.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    /// The control-plane namespace exists and is not terminating.
    pub namespace_alive: bool,
}

/// Builds the migrate flow for `ctx`; `state` writes the ShootState.
pub fn migrate(
    ctx: &Arc<FlowCtx>,
    name: &str,
    facts: Facts,
    state: Arc<shoot_state::io::Ctx>,
) -> Flow<TaskError> {
    let workerless = ctx.shoot.is_workerless();
    let mut flow = Flow::new(name);
    let namespace = flow.add(
        task(ids::NAMESPACE, ctx, |ctx| async move {
            super::tasks::namespace_present(&ctx).await
        })
        .skip_if(!facts.namespace_alive)
        .retry(MIGRATE_RETRY),
    );
    let migrate_resources = flow.add(
        task(ids::MIGRATE_EXTENSION_RESOURCES, ctx, |ctx| {
            extension_resources(ctx, false)
        })
        .after(&[namespace]),
    );
    let resources_migrated = flow.add(
        task(ids::WAIT_EXTENSION_RESOURCES_MIGRATED, ctx, |ctx| {
            extension_resources(ctx, true)
        })
        .after(&[migrate_resources]),
    );
    let migrate_before = flow.add(
        task(ids::MIGRATE_EXTENSIONS_BEFORE, ctx, |ctx| {
            extensions(ctx, true, Step::Migrate)
        })
        .after(&[namespace]),
    );
    let before_migrated = flow.add(
        task(ids::WAIT_EXTENSIONS_BEFORE_MIGRATED, ctx, |ctx| {
            extensions(ctx, true, Step::WaitMigrated)
        })
        .after(&[migrate_before]),
    );
    let persist = flow.add(
        task(ids::PERSIST_SHOOT_STATE, ctx, move |ctx| {
            let state = state.clone();
            async move {
                let shoot_namespace = ctx.shoot.metadata.namespace.clone().unwrap_or_default();
                let shoot_name = super::desired::shoot_name(&ctx.shoot).to_owned();
                shoot_state::persist::persist(&state, &shoot_namespace, &shoot_name, &ctx.namespace)
                    .await
                    .map_err(|error| TaskError::plain(seedlet_runtime::error_chain(&error)))
            }
        })
        .after(&[resources_migrated])
        .retry(MIGRATE_RETRY),
    );
    let delete_resources = flow.add(
        task(ids::DELETE_EXTENSION_RESOURCES, ctx, |ctx| {
            delete_extension_resources(ctx, false)
        })
        .after(&[persist])
        .retry(MIGRATE_RETRY),
    );
    let resources_deleted = flow.add(
        task(ids::WAIT_EXTENSION_RESOURCES_DELETED, ctx, |ctx| {
            delete_extension_resources(ctx, true)
        })
        .after(&[delete_resources]),
    );
    let delete_before = flow.add(
        task(ids::DELETE_EXTENSIONS_BEFORE, ctx, |ctx| {
            extensions(ctx, true, Step::Delete)
        })
        .after(&[resources_deleted, before_migrated])
        .retry(MIGRATE_RETRY),
    );
    let before_deleted = flow.add(
        task(ids::WAIT_EXTENSIONS_BEFORE_DELETED, ctx, |ctx| {
            extensions(ctx, true, Step::WaitDeleted)
        })
        .after(&[delete_before]),
    );
    let delete_stale = flow.add(
        task(ids::DELETE_STALE_EXTENSIONS, ctx, |ctx| async move {
            let names = stale_extensions(&ctx).await?;
            t::destroy::<Extension>(&ctx, &names).await
        })
        .after(&[resources_migrated])
        .retry(MIGRATE_RETRY),
    );
    let stale_deleted = flow.add(
        task(ids::WAIT_STALE_EXTENSIONS_DELETED, ctx, |ctx| async move {
            let names = stale_extensions(&ctx).await?;
            t::wait_gone::<Extension>(&ctx, &names, DEFAULT_WAIT).await
        })
        .after(&[delete_stale]),
    );
    let control_plane_deleted = control_plane_tasks(
        &mut flow,
        ctx,
        &[resources_deleted, before_deleted, stale_deleted],
        workerless,
    );
    let sync_point = after_control_plane(&mut flow, ctx, control_plane_deleted, workerless);
    finish(&mut flow, ctx, sync_point, delete_resources, facts);
    flow
}

/// ControlPlane: migrate (and wait), delete, wait; returns the last task.
fn control_plane_tasks(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    after: &[TaskId],
    workerless: bool,
) -> TaskId {
    let migrate = flow.add(
        task(ids::MIGRATE_CONTROL_PLANE, ctx, |ctx| async move {
            whole_kind::<ControlPlane>(ctx.clone(), Step::Migrate, DEFAULT_WAIT).await?;
            whole_kind::<ControlPlane>(ctx, Step::WaitMigrated, DEFAULT_WAIT).await
        })
        .after(after)
        .skip_if(workerless),
    );
    let delete = flow.add(
        task(ids::DELETE_CONTROL_PLANE, ctx, |ctx| {
            whole_kind::<ControlPlane>(ctx, Step::Delete, DEFAULT_WAIT)
        })
        .after(&[migrate])
        .skip_if(workerless)
        .retry(MIGRATE_RETRY),
    );
    flow.add(
        task(ids::WAIT_CONTROL_PLANE_DELETED, ctx, |ctx| {
            whole_kind::<ControlPlane>(ctx, Step::WaitDeleted, DEFAULT_WAIT)
        })
        .after(&[delete])
        .skip_if(workerless),
    )
}

/// The steps upstream runs once kube-apiserver is gone: AfterKubeAPIServer Extensions,
/// Infrastructure and the DNSRecords' migration. Returns the tasks the rest waits for.
fn after_control_plane(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    control_plane_deleted: TaskId,
    workerless: bool,
) -> Vec<TaskId> {
    let gone = [control_plane_deleted];
    let migrate_after = flow.add(
        task(ids::MIGRATE_EXTENSIONS_AFTER, ctx, |ctx| {
            extensions(ctx, false, Step::Migrate)
        })
        .after(&gone),
    );
    let after_migrated = flow.add(
        task(ids::WAIT_EXTENSIONS_AFTER_MIGRATED, ctx, |ctx| {
            extensions(ctx, false, Step::WaitMigrated)
        })
        .after(&[migrate_after]),
    );
    let delete_after = flow.add(
        task(ids::DELETE_EXTENSIONS_AFTER, ctx, |ctx| {
            extensions(ctx, false, Step::Delete)
        })
        .after(&[after_migrated])
        .retry(MIGRATE_RETRY),
    );
    let after_deleted = flow.add(
        task(ids::WAIT_EXTENSIONS_AFTER_DELETED, ctx, |ctx| {
            extensions(ctx, false, Step::WaitDeleted)
        })
        .after(&[delete_after]),
    );
    let all_deleted = flow.add(
        task(ids::WAIT_EXTENSIONS_DELETED, ctx, |ctx| {
            whole_kind::<Extension>(ctx, Step::WaitDeleted, DEFAULT_WAIT)
        })
        .after(&[after_migrated]),
    );
    let migrate_infrastructure = flow.add(
        task(ids::MIGRATE_INFRASTRUCTURE, ctx, |ctx| {
            whole_kind::<Infrastructure>(ctx, Step::Migrate, INFRASTRUCTURE_WAIT)
        })
        .after(&gone)
        .skip_if(workerless),
    );
    let infrastructure_migrated = flow.add(
        task(ids::WAIT_INFRASTRUCTURE_MIGRATED, ctx, |ctx| {
            whole_kind::<Infrastructure>(ctx, Step::WaitMigrated, INFRASTRUCTURE_WAIT)
        })
        .after(&[migrate_infrastructure])
        .skip_if(workerless),
    );
    let delete_infrastructure = flow.add(
        task(ids::DELETE_INFRASTRUCTURE, ctx, |ctx| {
            whole_kind::<Infrastructure>(ctx, Step::Delete, INFRASTRUCTURE_WAIT)
        })
        .after(&[infrastructure_migrated])
        .skip_if(workerless),
    );
    let infrastructure_deleted = flow.add(
        task(ids::WAIT_INFRASTRUCTURE_DELETED, ctx, |ctx| {
            whole_kind::<Infrastructure>(ctx, Step::WaitDeleted, INFRASTRUCTURE_WAIT)
        })
        .after(&[delete_infrastructure])
        .skip_if(workerless),
    );
    let mut sync_point = vec![after_deleted, all_deleted, infrastructure_deleted];
    for (id, suffix) in [
        (ids::MIGRATE_INGRESS_DNS, "ingress"),
        (ids::MIGRATE_EXTERNAL_DNS, "external"),
        (ids::MIGRATE_INTERNAL_DNS, "internal"),
    ] {
        sync_point.push(flow.add(task(id, ctx, move |ctx| dns_record(ctx, suffix)).after(&gone)));
    }
    sync_point
}

/// DNSRecords deleted, the BackupEntry moved, the namespace deleted.
fn finish(
    flow: &mut Flow<TaskError>,
    ctx: &Arc<FlowCtx>,
    sync_point: Vec<TaskId>,
    delete_resources: TaskId,
    facts: Facts,
) {
    let dns_deleted = flow.add(
        task(ids::DELETE_DNS_RECORDS, ctx, |ctx| async move {
            whole_kind::<DNSRecord>(ctx.clone(), Step::Delete, DNS_RECORD_WAIT).await?;
            whole_kind::<DNSRecord>(ctx, Step::WaitDeleted, DNS_RECORD_WAIT).await
        })
        .after(&sync_point)
        .skip_if(!facts.namespace_alive),
    );
    let migrate_entry = flow.add(
        task(ids::MIGRATE_BACKUP_ENTRY, ctx, |ctx| async move {
            t::migrate_backup_entry(&ctx).await
        })
        .after(&sync_point),
    );
    let entry_migrated = flow.add(
        task(ids::WAIT_BACKUP_ENTRY, ctx, |ctx| async move {
            t::wait_backup_entry(&ctx, LONG_WAIT).await
        })
        .after(&[migrate_entry]),
    );
    let mut before_namespace = sync_point;
    before_namespace.extend([entry_migrated, delete_resources, dns_deleted]);
    let delete_namespace = flow.add(
        task(ids::DELETE_NAMESPACE, ctx, |ctx| async move {
            t::delete_namespace(&ctx).await
        })
        .after(&before_namespace)
        .retry(MIGRATE_RETRY),
    );
    flow.add(
        task(ids::WAIT_NAMESPACE_DELETED, ctx, |ctx| async move {
            t::wait_namespace_gone(&ctx, LONG_WAIT).await
        })
        .after(&[delete_namespace]),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn flow_for(shoot: serde_json::Value, namespace_alive: bool) -> Flow<TaskError> {
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("url"));
        let client = kube::Client::try_from(config).expect("client");
        let seed: seedlet_api::core::Seed =
            serde_json::from_value(json!({"metadata": {"name": "b"}, "spec": {"networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}, "provider": {"type": "local", "region": "r"}}})).expect("seed");
        let ctx = Arc::new(FlowCtx {
            seed: client.clone(),
            garden: client.clone(),
            shoot: Arc::new(serde_json::from_value(shoot).expect("shoot")),
            seed_object: Arc::new(seed),
            registrations: Vec::new(),
            namespace: "shoot--dev--s".into(),
            field_manager: "test",
            clock: Arc::new(seedlet_runtime::clock::SystemClock),
            shared: std::sync::Mutex::default(),
            control_plane_chart: None,
        });
        let state = Arc::new(shoot_state::io::Ctx::new(
            client.clone(),
            client,
            Arc::new(crate::metrics::AgentMetrics::default()),
            Arc::new(seedlet_runtime::clock::SystemClock),
            "test",
        ));
        migrate(
            &ctx,
            "Shoot cluster preparation for migration",
            Facts { namespace_alive },
            state,
        )
    }

    fn shoot(workers: serde_json::Value) -> serde_json::Value {
        json!({"metadata": {"name": "s", "namespace": "garden-dev"},
               "spec": {"region": "r", "seedName": "b", "provider": {"type": "local", "workers": workers}},
               "status": {"seedName": "a", "technicalID": "shoot--dev--s"}})
    }

    #[tokio::test]
    async fn the_shoot_state_is_persisted_after_the_migration_and_before_any_deletion() {
        let flow = flow_for(
            shoot(json!([{"name": "p", "machine": {"type": "m"}}])),
            true,
        );
        let names: Vec<&str> = flow.task_names().collect();
        let at = |id: &str| names.iter().position(|n| *n == id).expect(id);
        assert!(at(ids::WAIT_EXTENSION_RESOURCES_MIGRATED) < at(ids::PERSIST_SHOOT_STATE));
        for deletion in [
            ids::DELETE_EXTENSION_RESOURCES,
            ids::DELETE_EXTENSIONS_BEFORE,
            ids::DELETE_CONTROL_PLANE,
            ids::DELETE_INFRASTRUCTURE,
            ids::DELETE_NAMESPACE,
        ] {
            assert!(at(ids::PERSIST_SHOOT_STATE) < at(deletion), "{deletion}");
        }
        assert_eq!(names.last(), Some(&ids::WAIT_NAMESPACE_DELETED));
        assert_eq!(flow.runnable(), names.len());
    }

    #[tokio::test]
    async fn workerless_shoots_and_gone_namespaces_skip_their_steps() {
        let full = flow_for(
            shoot(json!([{"name": "p", "machine": {"type": "m"}}])),
            true,
        );
        let workerless = flow_for(shoot(json!([])), true);
        // ControlPlane (3) and Infrastructure (4) tasks are skipped without workers.
        assert_eq!(full.runnable() - workerless.runnable(), 7);
        let no_namespace = flow_for(
            shoot(json!([{"name": "p", "machine": {"type": "m"}}])),
            false,
        );
        // The namespace check and the DNSRecord deletion need a live namespace.
        assert_eq!(full.runnable() - no_namespace.runnable(), 2);
    }
}
