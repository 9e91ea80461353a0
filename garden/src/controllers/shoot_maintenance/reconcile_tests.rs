//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on real Shoots and a real CloudProfile while a
//! fake clock stands at a fixed time.

use std::sync::Arc;

use jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{CloudProfile, Shoot};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::{Value, json};

use super::Maintenance;
use crate::testing::{Env, create, ensure_namespace};

const NOW: &str = "2025-06-01T21:10:00Z";
/// A window that does not contain [`NOW`].
const OUTSIDE: (&str, &str) = ("100000+0000", "110000+0000");

fn ctx(env: &Env) -> Arc<Maintenance> {
    env.clock.set(NOW.parse::<Timestamp>().unwrap());
    Arc::new(Maintenance {
        client: env.client.clone(),
        restart_control_plane: false,
        restart_core_addons: false,
        disable_nginx_ingress: false,
        clock: env.clock(),
        events: env.events(),
        concurrency: 1,
    })
}

async fn profile(env: &Env) {
    let _: CloudProfile = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
               "metadata": {"name": "local"},
               "spec": {"type": "local",
                        "kubernetes": {"versions": [{"version": "1.31.1"}, {"version": "1.31.2"}]},
                        "machineTypes": [{"name": "small", "cpu": "2", "gpu": "0", "memory": "4Gi"}],
                        "machineImages": [{"name": "gardenlinux", "updateStrategy": "minor",
                                           "versions": [{"version": "1.1.0"}]}]}}),
    )
    .await;
}

/// Shoot `garden-dev/<name>` on Kubernetes 1.31.1 with automatic Kubernetes updates, maintained
/// in [`OUTSIDE`], last reconciled successfully, with `annotations`.
async fn shoot(env: &Env, name: &str, annotations: Value) -> Arc<Shoot> {
    ensure_namespace(&env.client, "garden-dev").await;
    let _: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": name, "namespace": "garden-dev", "annotations": annotations},
               "spec": {"region": "local", "cloudProfileName": "local",
                        "kubernetes": {"version": "1.31.1"},
                        "maintenance": {"timeWindow": {"begin": OUTSIDE.0, "end": OUTSIDE.1},
                                        "autoUpdate": {"kubernetesVersion": true,
                                                       "machineImageVersion": false}},
                        "provider": {"type": "local", "workers": [{"name": "pool",
                            "machine": {"type": "small",
                                        "image": {"name": "gardenlinux", "version": "1.1.0"}}}]}}}),
    )
    .await;
    let status = json!({"status": {"lastOperation": {
        "type": "Reconcile", "state": "Succeeded", "description": "", "progress": 100,
        "lastUpdateTime": "2025-06-01T20:00:00Z"}}});
    Arc::new(
        shoots(env)
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap(),
    )
}

fn shoots(env: &Env) -> Api<Shoot> {
    Api::namespaced(env.client.clone(), "garden-dev")
}

fn version(shoot: &Shoot) -> Option<&str> {
    shoot.spec.kubernetes.as_ref()?.version.as_deref()
}

#[tokio::test]
async fn a_shoot_asked_for_maintenance_gets_the_patch_update_annotations_and_status() {
    let env = Env::start().await;
    profile(&env).await;
    let asked = shoot(
        &env,
        "asked",
        json!({"gardener.cloud/operation": "maintain"}),
    )
    .await;

    ctx(&env).reconcile(asked).await.unwrap();
    let maintained = shoots(&env).get("asked").await.unwrap();
    assert_eq!(version(&maintained), Some("1.31.2"));
    let annotations = maintained.annotations();
    assert_eq!(annotations["gardener.cloud/operation"], "reconcile");
    assert_eq!(
        annotations["shoot.gardener.cloud/tasks"],
        "deployInfrastructure,deployDNSRecordInternal,deployDNSRecordExternal,deployDNSRecordIngress"
    );
    let last = &last_maintenance(&maintained);
    assert_eq!(last["state"], "Succeeded");
    assert_eq!(last["triggeredTime"], NOW);
    let description = last["description"].as_str().unwrap();
    assert!(
        description.starts_with(
            "All maintenance operations successful. Control Plane: Updated Kubernetes version \
             from \"1.31.1\" to \"1.31.2\". Reason: Automatic update of Kubernetes version configured"
        ),
        "{description}"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_shoot_outside_its_window_is_left_alone_and_requeued() {
    let env = Env::start().await;
    profile(&env).await;
    let outside = shoot(&env, "outside", json!({})).await;
    let version_before = outside.metadata.resource_version.clone();

    let action = ctx(&env).reconcile(outside).await.unwrap();
    assert_ne!(
        action,
        Action::await_change(),
        "requeued to the next window"
    );
    let unchanged = shoots(&env).get("outside").await.unwrap();
    assert_eq!(unchanged.metadata.resource_version, version_before);
    assert_eq!(version(&unchanged), Some("1.31.1"));
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_cloud_profile_fails_with_its_reason_and_writes_nothing() {
    let env = Env::start().await;
    let asked = shoot(
        &env,
        "asked",
        json!({"gardener.cloud/operation": "maintain"}),
    )
    .await;
    let version_before = asked.metadata.resource_version.clone();

    let error = ctx(&env).reconcile(asked).await.unwrap_err();
    assert_eq!(error.reason(), "CloudProfileReadError");
    assert!(error.to_string().contains("CloudProfile local"), "{error}");
    assert_eq!(
        shoots(&env)
            .get("asked")
            .await
            .unwrap()
            .metadata
            .resource_version,
        version_before
    );
    env.shutdown().await;
}

/// Edge case §13.15: the dry run is refused (a webhook freezing Shoot specs) → `Failed` with the
/// refusal, spec and tasks untouched, `maintain` dropped; once the freeze is lifted and the user
/// moved the version, the next run is clean → `Succeeded`, `Maintenance succeeded`.
#[tokio::test]
async fn a_refused_dry_run_records_the_failure_and_the_next_clean_run_succeeds() {
    let env = Env::start().await;
    profile(&env).await;
    let freeze = seedlet_sandbox::setup::gate::SpecFreeze::register(
        &env.client,
        "shoot-freeze",
        json!([{"operations": ["UPDATE"], "apiGroups": ["core.gardener.cloud"],
                "apiVersions": ["*"], "resources": ["shoots"]}]),
    )
    .await;
    freeze.close("Kubernetes upgrades are frozen");
    let asked = shoot(
        &env,
        "frozen",
        json!({"gardener.cloud/operation": "maintain"}),
    )
    .await;

    ctx(&env).reconcile(asked).await.unwrap();
    let refused = shoots(&env).get("frozen").await.unwrap();
    assert_eq!(version(&refused), Some("1.31.1"), "spec untouched");
    assert!(
        !refused
            .annotations()
            .contains_key("gardener.cloud/operation")
    );
    assert!(
        !refused
            .annotations()
            .contains_key("shoot.gardener.cloud/tasks")
    );
    assert_eq!(
        last_maintenance(&refused),
        json!({"description": "Maintenance failed", "state": "Failed", "triggeredTime": NOW,
               "failureReason": "Updates to the Shoot failed to be applied: admission webhook \
                                 \"shoot-freeze.seedlet.test\" denied the request: Kubernetes \
                                 upgrades are frozen"})
    );
    assert!(
        freeze
            .reviews()
            .iter()
            .any(|review| review["dryRun"] == true),
        "the refusal came from the dry run"
    );

    freeze.open();
    shoots(&env)
        .patch(
            "frozen",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"gardener.cloud/operation": "maintain"}},
                                 "spec": {"kubernetes": {"version": "1.31.2"}}}),
            ),
        )
        .await
        .unwrap();
    let moved = Arc::new(shoots(&env).get("frozen").await.unwrap());
    ctx(&env).reconcile(moved).await.unwrap();
    let clean = shoots(&env).get("frozen").await.unwrap();
    assert_eq!(
        last_maintenance(&clean),
        json!({"description": "Maintenance succeeded", "state": "Succeeded", "triggeredTime": NOW})
    );
    assert!(
        clean
            .annotations()
            .contains_key("shoot.gardener.cloud/tasks")
    );
    env.shutdown().await;
}

/// §6.2 step 8: with `featureGates.DisableNginxIngressInShoot` an enabled nginx-ingress addon is
/// disabled and reported last.
#[tokio::test]
async fn the_nginx_gate_disables_an_enabled_nginx_ingress_addon() {
    let env = Env::start().await;
    profile(&env).await;
    shoot(
        &env,
        "ingress",
        json!({"gardener.cloud/operation": "maintain"}),
    )
    .await;
    let with_addon = shoots(&env)
        .patch(
            "ingress",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"addons": {"nginxIngress": {"enabled": true}}}})),
        )
        .await
        .unwrap();
    let mut gated = Arc::try_unwrap(ctx(&env)).expect("one owner");
    gated.disable_nginx_ingress = true;

    Arc::new(gated)
        .reconcile(Arc::new(with_addon))
        .await
        .unwrap();
    let maintained = shoots(&env).get("ingress").await.unwrap();
    assert_eq!(
        maintained
            .spec
            .addons
            .as_ref()
            .and_then(|addons| addons.nginx_ingress.as_ref())
            .map(|ingress| ingress.enabled),
        Some(false)
    );
    let last = &last_maintenance(&maintained);
    let description = last["description"].as_str().unwrap();
    assert!(
        description.ends_with(
            ", .spec.addons.nginxIngress was disabled. Reason: nginx ingress addon disallowed \
             by landscape operator"
        ),
        "{description}"
    );
    env.shutdown().await;
}

/// `status.lastMaintenance` as JSON (`null` when unset).
/// The agent writes a busy Shoot's status between the cache's copy and the maintenance writes: the
/// guarded dry run then loses with a 409, which is no refusal. The run reads the Shoot again and
/// maintains it; nothing is recorded as `Failed`.
#[tokio::test]
async fn a_stale_copy_is_read_again_not_recorded_as_a_refused_maintenance() {
    let env = Env::start().await;
    profile(&env).await;
    let stale = shoot(
        &env,
        "busy",
        json!({"gardener.cloud/operation": "maintain"}),
    )
    .await;
    let progress = json!({"status": {"lastOperation": {
        "type": "Reconcile", "state": "Processing", "description": "", "progress": 40,
        "lastUpdateTime": "2025-06-01T21:05:00Z"}}});
    shoots(&env)
        .patch_status("busy", &PatchParams::default(), &Patch::Merge(&progress))
        .await
        .unwrap();

    ctx(&env).reconcile(stale).await.unwrap();
    let maintained = shoots(&env).get("busy").await.unwrap();
    assert_eq!(version(&maintained), Some("1.31.2"));
    assert_eq!(last_maintenance(&maintained)["state"], "Succeeded");
    let operation = maintained
        .status
        .as_ref()
        .and_then(|s| s.last_operation.as_ref());
    assert_eq!(
        operation.map(|o| o.progress),
        Some(40),
        "the other writer's status is kept"
    );
    env.shutdown().await;
}

fn last_maintenance(shoot: &Shoot) -> serde_json::Value {
    let last = shoot
        .status
        .as_ref()
        .and_then(|status| status.last_maintenance.as_ref());
    serde_json::to_value(last).unwrap()
}
