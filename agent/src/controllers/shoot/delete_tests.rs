//! Reconcile tests of the delete path against in-process garden and seed sandboxes: the Shoot
//! controller's [`super::super::reconcile`] runs on a deleting Shoot whose extension objects
//! exist in the seed, while a test provider releases each deleted object (recording the order
//! and whether the deletion was confirmed).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Project, Shoot, ShootState};
use seedlet_api::extensions::{
    Cluster, ContainerRuntime, ControlPlane, DNSRecord, ExtensionObject, Infrastructure, Network,
    OperatingSystemConfig, Worker,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::super::{Shoots, decide};
use crate::testing::{Env, FIELD_MANAGER, SEED, create, ensure_namespace};
use seedlet_runtime::controller::Reconciler as _;

const ID: &str = "shoot--dev--s";
const PROVIDER_FINALIZER: &str = "test.seedlet/provider";

fn ctx(env: &Env) -> Arc<Shoots> {
    let identity = crate::gardener_identity::gardener_info();
    Arc::new(Shoots {
        field_manager: FIELD_MANAGER,
        metrics: Env::metrics(),
        concurrency: 1,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        garden: env.garden.clone(),
        clock: env.clock(),
        settings: decide::Settings {
            sync_period: Duration::from_secs(3600),
            respect_sync_period_overwrite: false,
            reconcile_in_maintenance_only: false,
            version: identity.version.clone(),
        },
        identity,
        retry_duration: Duration::from_secs(3600),
        progress_report_period: None,
        seeds: reflector::store().0,
        registrations: reflector::store().0,
        events: env.events(),
        stop: CancellationToken::new(),
        control_plane_chart: None,
    })
}

/// A ready Seed, Project `dev` and Shoot `garden-dev/s` (one worker pool) held by our finalizer,
/// with `status.uid` when `operated`; the seed has its namespace and Cluster.
async fn landscape(env: &Env, operated: bool) {
    let seed = crate::testing::seed(&env.garden).await;
    let identity = crate::gardener_identity::gardener_info();
    let condition = |type_: &str| {
        json!({"type": type_, "status": "True", "reason": "Ready", "message": "",
               "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z"})
    };
    let ready = json!({"status": {"gardener": identity, "observedGeneration": seed.metadata.generation,
        "conditions": [condition("GardenletReady"), condition("SeedSystemComponentsHealthy")]}});
    Api::<seedlet_api::core::Seed>::all(env.garden.clone())
        .patch_status(SEED, &PatchParams::default(), &Patch::Merge(&ready))
        .await
        .expect("seed status");
    ensure_namespace(&env.garden, "garden-dev").await;
    let _: Project = create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
               "metadata": {"name": "dev"}, "spec": {"namespace": "garden-dev"}}),
    )
    .await;
    let shoot: Shoot = create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": "garden-dev", "finalizers": ["gardener"]},
               "spec": {"region": "local", "cloudProfileName": "local", "seedName": SEED,
                        "kubernetes": {"version": "1.31.1"}, "networking": {"type": "calico"},
                        "provider": {"type": "local", "workers": [{"name": "pool-a", "minimum": 1,
                            "maximum": 2, "machine": {"type": "local"}}]}}}),
    )
    .await;
    let mut status = json!({"technicalID": ID, "seedName": SEED});
    if operated {
        status["uid"] = json!(shoot.metadata.uid);
        status["lastOperation"] = crate::testing::last_operation(
            "Create",
            "Succeeded",
            "2025-01-01T00:00:00Z".parse().unwrap(),
        );
    }
    shoots(env)
        .patch_status(
            "s",
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": status})),
        )
        .await
        .expect("shoot status");
    ensure_namespace(&env.seed, ID).await;
    let _: ShootState = create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootState",
               "metadata": {"name": "s", "namespace": "garden-dev"}, "spec": {}}),
    )
    .await;
    let _: Cluster = create(
        &env.seed,
        json!({"apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Cluster",
               "metadata": {"name": ID},
               "spec": {"cloudProfile": {"metadata": {"name": "local"}},
                        "seed": {"metadata": {"name": SEED}},
                        "shoot": {"metadata": {"name": "s", "namespace": "garden-dev"}}}}),
    )
    .await;
}

fn shoots(env: &Env) -> Api<Shoot> {
    Api::namespaced(env.garden.clone(), "garden-dev")
}

/// Creates extension object `name` of `kind` held by the test provider's finalizer.
async fn extension_object(env: &Env, kind: &str, name: &str, spec: Value) {
    let gvk = kube::core::GroupVersionKind::gvk("extensions.gardener.cloud", "v1alpha1", kind);
    let resource = kube::core::ApiResource::from_gvk(&gvk);
    let object: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": kind,
        "metadata": {"name": name, "namespace": ID, "finalizers": [PROVIDER_FINALIZER]},
        "spec": spec}))
    .expect("object");
    Api::<kube::api::DynamicObject>::namespaced_with(env.seed.clone(), ID, &resource)
        .create(&Default::default(), &object)
        .await
        .expect("create extension object");
}

async fn every_extension_object(env: &Env) {
    let secret_ref = json!({"name": "cloudprovider", "namespace": ID});
    extension_object(
        env,
        "Infrastructure",
        "s",
        json!({"type": "local", "region": "local", "secretRef": secret_ref}),
    )
    .await;
    extension_object(
        env,
        "ControlPlane",
        "s",
        json!({"type": "local", "region": "local", "secretRef": secret_ref}),
    )
    .await;
    extension_object(
        env,
        "Network",
        "s",
        json!({"type": "calico", "podCIDR": "10.3.0.0/16", "serviceCIDR": "10.4.0.0/16"}),
    )
    .await;
    extension_object(
        env,
        "Worker",
        "s",
        json!({"type": "local", "region": "local", "secretRef": secret_ref, "pools": []}),
    )
    .await;
    for name in ["osc-init", "osc-original"] {
        extension_object(
            env,
            "OperatingSystemConfig",
            name,
            json!({"type": "local", "purpose": "provision"}),
        )
        .await;
    }
    extension_object(
        env,
        "ContainerRuntime",
        "gvisor-pool-a",
        json!({"type": "gvisor", "binaryPath": "/var/bin/containerruntimes",
               "workerPool": {"name": "pool-a", "selector": {}}}),
    )
    .await;
}

/// What the test provider saw: `Kind/name` per released object, in order, and the objects
/// deleted without the deletion confirmation.
#[derive(Debug, Default)]
struct Seen {
    released: Vec<String>,
    unconfirmed: Vec<String>,
}

async fn release<K>(seed: &kube::Client, seen: &Mutex<Seen>, failing: Option<&str>)
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let api: Api<K> = Api::namespaced(seed.clone(), ID);
    let Ok(list) = api.list(&ListParams::default()).await else {
        return;
    };
    let kind = K::kind(&()).into_owned();
    for object in list.items {
        if object.meta().deletion_timestamp.is_none() {
            continue;
        }
        let confirmed = object
            .annotations()
            .get("confirmation.gardener.cloud/deletion")
            .is_some_and(|v| v == "true");
        let label = format!("{kind}/{}", object.name_any());
        if !confirmed {
            seen.lock().unwrap().unconfirmed.push(label.clone());
        }
        if let Some(code) = failing
            .filter(|k| *k == kind)
            .map(|_| "ERR_INFRA_DEPENDENCIES")
        {
            let error = json!({"status": {"lastError": {"description": "dependency still in use",
                "codes": [code], "lastUpdateTime": "2025-01-01T00:00:00Z"}}});
            let _ = api
                .patch_status(
                    &object.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&error),
                )
                .await;
            continue;
        }
        if seedlet_runtime::finalizer::remove(&api, &object, PROVIDER_FINALIZER)
            .await
            .is_ok()
        {
            seen.lock().unwrap().released.push(label);
        }
    }
}

/// Releases deleted extension objects every 50 ms until `stop`; objects of kind `failing`
/// report an error instead.
fn provider(env: &Env, failing: Option<&'static str>, stop: CancellationToken) -> Arc<Mutex<Seen>> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (seed, record) = (env.seed.clone(), seen.clone());
    tokio::spawn(async move {
        while !stop.is_cancelled() {
            release::<Network>(&seed, &record, failing).await;
            release::<Worker>(&seed, &record, failing).await;
            release::<OperatingSystemConfig>(&seed, &record, failing).await;
            release::<ContainerRuntime>(&seed, &record, failing).await;
            release::<ControlPlane>(&seed, &record, failing).await;
            release::<Infrastructure>(&seed, &record, failing).await;
            release::<DNSRecord>(&seed, &record, failing).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    seen
}

async fn deleting(env: &Env) -> Arc<Shoot> {
    shoots(env)
        .delete("s", &DeleteParams::default())
        .await
        .expect("delete");
    Arc::new(shoots(env).get("s").await.expect("deleting shoot"))
}

fn position(seen: &Seen, label: &str) -> usize {
    seen.released
        .iter()
        .position(|l| l == label)
        .unwrap_or_else(|| panic!("{label} not released: {seen:?}"))
}

#[tokio::test]
async fn a_deleted_shoot_destroys_its_extension_objects_in_order_then_goes() {
    let env = Env::start().await;
    landscape(&env, true).await;
    every_extension_object(&env).await;
    let stop = CancellationToken::new();
    let seen = provider(&env, None, stop.clone());
    let shoot = deleting(&env).await;

    let action = ctx(&env).reconcile(shoot).await.expect("delete flow");
    stop.cancel();
    assert_eq!(action, Action::await_change());
    {
        let seen = seen.lock().expect("lock");
        assert!(seen.unconfirmed.is_empty(), "{seen:?}");
        assert_eq!(seen.released.len(), 7, "{seen:?}");
        let worker = position(&seen, "Worker/s");
        assert!(worker < position(&seen, "OperatingSystemConfig/osc-init"));
        assert!(worker < position(&seen, "Infrastructure/s"));
        assert!(position(&seen, "ControlPlane/s") < position(&seen, "Infrastructure/s"));
        assert!(position(&seen, "Network/s") < position(&seen, "ControlPlane/s"));
        assert!(
            position(&seen, "ContainerRuntime/gvisor-pool-a") < position(&seen, "ControlPlane/s")
        );
    }
    assert!(
        Api::<Namespace>::all(env.seed.clone())
            .get_opt(ID)
            .await
            .unwrap()
            .is_none(),
        "the namespace went last"
    );
    assert!(
        Api::<Cluster>::all(env.seed.clone())
            .get_opt(ID)
            .await
            .unwrap()
            .is_none()
    );
    let states: Api<ShootState> = Api::namespaced(env.garden.clone(), "garden-dev");
    assert!(states.get_opt("s").await.unwrap().is_none());
    assert!(
        shoots(&env).get_opt("s").await.unwrap().is_none(),
        "finalizer removed"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_shoot_deleted_before_its_first_operation_goes_quickly() {
    let env = Env::start().await;
    landscape(&env, false).await;
    let shoot = deleting(&env).await;
    let started = std::time::Instant::now();

    let action = ctx(&env).reconcile(shoot).await.expect("delete flow");
    assert_eq!(action, Action::await_change());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(shoots(&env).get_opt("s").await.unwrap().is_none());
    assert!(
        Api::<Cluster>::all(env.seed.clone())
            .get_opt(ID)
            .await
            .unwrap()
            .is_none()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn an_extension_error_on_deletion_keeps_the_shoot_with_the_task_and_code() {
    let env = Env::start().await;
    landscape(&env, true).await;
    extension_object(
        &env,
        "DNSRecord",
        "s-internal",
        json!({"type": "local", "name": "api.s.dev.internal.example.com", "recordType": "A",
               "values": ["10.0.0.1"], "secretRef": {"name": "dnsrecord-s-internal", "namespace": ID}}),
    )
    .await;
    let stop = CancellationToken::new();
    provider(&env, Some("DNSRecord"), stop.clone());
    let shoot = deleting(&env).await;

    let error = ctx(&env)
        .reconcile(shoot)
        .await
        .expect_err("the flow fails");
    stop.cancel();
    assert!(
        error
            .to_string()
            .contains("Destroying internal domain DNS record"),
        "{error}"
    );
    let stored = shoots(&env).get("s").await.expect("the shoot stays");
    assert_eq!(stored.finalizers(), ["gardener"]);
    let status = stored.status.expect("status");
    let operation = status.last_operation.expect("operation");
    assert_eq!(format!("{:?}", operation.type_), "Delete");
    assert_eq!(
        format!("{:?}", operation.state),
        "Failed",
        "ERR_INFRA_DEPENDENCIES is final"
    );
    let last = status
        .last_errors
        .iter()
        .find(|e| e.task_id.as_deref() == Some("Destroying internal domain DNS record"))
        .expect("the task's error");
    assert_eq!(last.codes, ["ERR_INFRA_DEPENDENCIES"]);
    assert!(
        last.description.contains("dependency still in use"),
        "{}",
        last.description
    );
    assert!(
        Api::<Namespace>::all(env.seed.clone())
            .get_opt(ID)
            .await
            .unwrap()
            .is_some(),
        "the namespace stays while an extension object cannot go"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_force_deleted_shoot_deletes_every_extension_object_at_once_then_goes() {
    let env = Env::start().await;
    landscape(&env, true).await;
    every_extension_object(&env).await;
    let force = json!({"metadata": {"annotations": {"confirmation.gardener.cloud/force-deletion": "true"}}});
    shoots(&env)
        .patch("s", &PatchParams::default(), &Patch::Merge(&force))
        .await
        .expect("annotate");
    let stop = CancellationToken::new();
    let seen = provider(&env, None, stop.clone());
    let shoot = deleting(&env).await;
    // The running tasks the flow reports as progress.
    let descriptions = Arc::new(Mutex::new(Vec::<String>::new()));
    let (watch, record, api) = (stop.clone(), descriptions.clone(), shoots(&env));
    tokio::spawn(async move {
        while !watch.is_cancelled() {
            if let Ok(Some(shoot)) = api.get_opt("s").await
                && let Some(op) = shoot.last_operation()
            {
                record.lock().unwrap().push(op.description.clone());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });

    let action = ctx(&env).reconcile(shoot).await.expect("force delete flow");
    stop.cancel();
    assert_eq!(action, Action::await_change());
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(seen.released.len(), 7, "{seen:?}");
    assert!(seen.unconfirmed.is_empty(), "{seen:?}");
    let descriptions = std::mem::take(&mut *descriptions.lock().unwrap());
    assert!(
        descriptions.iter().any(|d| d
            .contains("Waiting until extension resources have been deleted")
            || d.contains("Deleting Cluster resource")
            || d.contains("Deleting shoot namespace")),
        "force-delete tasks reported: {descriptions:?}"
    );
    assert!(
        !descriptions
            .iter()
            .any(|d| d.contains("Destroying shoot workers")),
        "no ordered delete flow: {descriptions:?}"
    );
    assert!(
        Api::<Namespace>::all(env.seed.clone())
            .get_opt(ID)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<Cluster>::all(env.seed.clone())
            .get_opt(ID)
            .await
            .unwrap()
            .is_none()
    );
    assert!(shoots(&env).get_opt("s").await.unwrap().is_none());
    env.shutdown().await;
}
