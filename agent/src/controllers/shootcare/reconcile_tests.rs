//! Reconcile tests against in-process garden and seed sandboxes: [`reconcile`] is called directly
//! on a Shoot of our seed whose control-plane namespace holds a Worker reporting health, its
//! controller's heartbeat Lease and a ManagedResource; the conditions and constraints written to
//! the Shoot are read back as the reports, the heartbeat, the clock and the hibernation change.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use seedlet_api::core::{ControllerInstallation, ControllerRegistration, Shoot};
use seedlet_api::extensions::Worker;
use seedlet_api::resources::ManagedResource;
use seedlet_runtime::clock::Clock;
use serde_json::{Value, json};

use super::ShootCare;
use crate::testing::{Env, FIELD_MANAGER, SEED, create, ensure_namespace};
use seedlet_runtime::controller::Reconciler as _;

const SYNC: Duration = Duration::from_secs(60);
const NAMESPACE: &str = "shoot--dev--s";
const INSTALLATION: &str = "provider-local-x1";

/// A store holding `object` (as the controller's garden watch would).
fn store_of<K>(object: K) -> Store<K>
where
    K: kube::Resource<DynamicType = ()> + Clone + std::fmt::Debug + Send + Sync + 'static,
{
    let (reader, mut writer) = reflector::store();
    writer.apply_watcher_event(&watcher::Event::Apply(object));
    reader
}

fn ctx(env: &Env, thresholds: BTreeMap<String, Duration>) -> Arc<ShootCare> {
    let registration: ControllerRegistration = serde_json::from_value(json!({
        "metadata": {"name": "provider-local"},
        "spec": {"resources": [{"kind": "Worker", "type": "local"}]}}))
    .unwrap();
    let installation: ControllerInstallation = serde_json::from_value(json!({
        "metadata": {"name": INSTALLATION},
        "spec": {"registrationRef": {"name": "provider-local"}, "seedRef": {"name": SEED}}}))
    .unwrap();
    Arc::new(ShootCare {
        clock: env.clock(),
        field_manager: FIELD_MANAGER,
        concurrency: 1,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        garden: env.garden.clone(),
        installations: store_of(installation),
        registrations: store_of(registration),
        sync_period: SYNC,
        stale_after: Some(Duration::from_secs(300)),
        progressing_threshold: None,
        thresholds,
    })
}

fn condition(type_: &str, status: &str, reason: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": format!("{type_} {status}"),
           "lastTransitionTime": "2024-01-01T00:00:00Z", "lastUpdateTime": "2024-01-01T00:00:00Z"})
}

fn shoots(env: &Env) -> Api<Shoot> {
    Api::namespaced(env.garden.clone(), "garden-dev")
}

/// Shoot `garden-dev/s` on our seed, reconciled long ago, with a foreign constraint; its
/// control-plane namespace with a Worker, the heartbeat Lease and a healthy ManagedResource.
async fn landscape(env: &Env) -> Arc<Shoot> {
    ensure_namespace(&env.garden, "garden-dev").await;
    let _: Shoot = create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": "garden-dev"},
               "spec": {"region": "local", "cloudProfileName": "local", "seedName": SEED,
                        "kubernetes": {"version": "1.31.1"},
                        "provider": {"type": "local", "workers": [{"name": "pool", "minimum": 1, "maximum": 1, "machine": {"type": "m"}}]}}}),
    )
    .await;
    let status = json!({"status": {
        "seedName": SEED, "technicalID": NAMESPACE,
        "lastOperation": {"type": "Reconcile", "state": "Succeeded", "progress": 100,
                          "description": "done", "lastUpdateTime": "2024-01-01T00:00:00Z"},
        "constraints": [condition("ReadyForMigration", "True", "DestinationSeedReady")]}});
    let shoot = shoots(env)
        .patch_status("s", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    ensure_namespace(&env.seed, NAMESPACE).await;
    ensure_namespace(&env.seed, &format!("extension-{INSTALLATION}")).await;
    let _: Worker = create(
        &env.seed,
        json!({"apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Worker",
               "metadata": {"name": "s", "namespace": NAMESPACE},
               "spec": {"type": "local", "region": "local", "secretRef": {"name": "x", "namespace": NAMESPACE},
                        "pools": []}}),
    )
    .await;
    report_worker(env, "True").await;
    renew_heartbeat(env).await;
    let _: ManagedResource = create(
        &env.seed,
        json!({"apiVersion": "resources.gardener.cloud/v1alpha1", "kind": "ManagedResource",
               "metadata": {"name": "control-plane", "namespace": NAMESPACE},
               "spec": {"class": "seed", "secretRefs": []}}),
    )
    .await;
    set_managed_resource_health(env, "True").await;
    Arc::new(shoot)
}

async fn report_worker(env: &Env, status: &str) {
    let patch =
        json!({"status": {"conditions": [condition("EveryNodeReady", status, "HealthCheck")]}});
    Api::<Worker>::namespaced(env.seed.clone(), NAMESPACE)
        .patch_status("s", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

async fn renew_heartbeat(env: &Env) {
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "gardener-extension-heartbeat", "namespace": format!("extension-{INSTALLATION}")},
        "spec": {"renewTime": env.clock.now().strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()}});
    Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(
        env.seed.clone(),
        &format!("extension-{INSTALLATION}"),
    )
    .patch(
        "gardener-extension-heartbeat",
        &PatchParams::apply("test").force(),
        &Patch::Apply(&lease),
    )
    .await
    .unwrap();
}

async fn set_managed_resource_health(env: &Env, healthy: &str) {
    let api = Api::<ManagedResource>::namespaced(env.seed.clone(), NAMESPACE);
    let generation = api.get("control-plane").await.unwrap().metadata.generation;
    let reason = if healthy == "True" {
        "ResourcesHealthy"
    } else {
        "DeploymentUnhealthy"
    };
    let status = json!({"status": {"observedGeneration": generation, "conditions": [
        condition("ResourcesApplied", "True", "ApplySucceeded"),
        condition("ResourcesHealthy", healthy, reason),
        condition("ResourcesProgressing", "False", "ResourcesRolledOut"),
    ]}});
    api.patch_status(
        "control-plane",
        &PatchParams::default(),
        &Patch::Merge(&status),
    )
    .await
    .unwrap();
}

/// `(type, status, reason)` of the stored conditions and constraints, and the resourceVersion.
async fn stored(
    env: &Env,
) -> (
    Vec<(String, String, String)>,
    Vec<(String, String, String)>,
    Shoot,
) {
    let shoot = shoots(env).get("s").await.unwrap();
    let status = shoot.status.clone().unwrap_or_default();
    let seen = |list: &[seedlet_api::Condition]| {
        list.iter()
            .map(|c| (c.type_.clone(), c.status.to_string(), c.reason.clone()))
            .collect()
    };
    (seen(&status.conditions), seen(&status.constraints), shoot)
}

fn triple(type_: &str, status: &str, reason: &str) -> (String, String, String) {
    (type_.to_owned(), status.to_owned(), reason.to_owned())
}

#[tokio::test]
async fn conditions_follow_extension_reports_and_are_written_only_on_change() {
    let env = Env::start().await;
    let shoot = landscape(&env).await;
    let ctx = ctx(&env, BTreeMap::new());

    let action = ctx.clone().reconcile(shoot.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    let (conditions, constraints, written) = stored(&env).await;
    assert_eq!(
        conditions,
        [
            triple("APIServerAvailable", "Unknown", "ConditionCheckError"),
            triple("ControlPlaneHealthy", "True", "ControlPlaneRunning"),
            triple(
                "ObservabilityComponentsHealthy",
                "True",
                "ObservabilityComponentsRunning"
            ),
            triple("EveryNodeReady", "Unknown", "ConditionCheckError"),
            triple("SystemComponentsHealthy", "Unknown", "ConditionCheckError"),
        ]
    );
    assert_eq!(
        constraints,
        [
            triple("ReadyForMigration", "True", "DestinationSeedReady"),
            triple("HibernationPossible", "True", "ConstraintNotChecked"),
            triple(
                "MaintenancePreconditionsSatisfied",
                "True",
                "ConstraintNotChecked"
            ),
        ]
    );
    let status = written.status.clone().unwrap();
    assert_eq!(
        status.last_operation.unwrap().description,
        "done",
        "lastOperation untouched"
    );

    // Nothing changed: no write.
    ctx.clone().reconcile(shoot.clone()).await.unwrap();
    assert_eq!(
        stored(&env).await.2.metadata.resource_version,
        written.metadata.resource_version
    );

    // The Worker reports failing nodes: EveryNodeReady fails (no threshold: False).
    report_worker(&env, "False").await;
    ctx.clone().reconcile(shoot.clone()).await.unwrap();
    assert_eq!(
        stored(&env).await.0[3],
        triple("EveryNodeReady", "False", "WorkerUnhealthyReport")
    );

    // Its controller stops renewing the heartbeat: the report is outdated.
    env.clock.advance(SignedDuration::from_mins(6));
    ctx.clone().reconcile(shoot.clone()).await.unwrap();
    assert_eq!(
        stored(&env).await.0[3],
        triple(
            "EveryNodeReady",
            "Unknown",
            "WorkerOutdatedHealthCheckReport"
        )
    );

    // Hibernated: nothing is checked.
    let hibernate = json!({"spec": {"hibernation": {"enabled": true}}});
    shoots(&env)
        .patch("s", &PatchParams::default(), &Patch::Merge(&hibernate))
        .await
        .unwrap();
    ctx.reconcile(shoot).await.unwrap();
    let (conditions, constraints, _) = stored(&env).await;
    assert!(
        conditions
            .iter()
            .all(|(_, status, reason)| status == "True" && reason == "ConditionNotChecked"),
        "{conditions:?}"
    );
    assert_eq!(
        constraints[1],
        triple("HibernationPossible", "True", "ConstraintNotChecked")
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_threshold_holds_a_failing_condition_progressing_before_it_turns_false() {
    let env = Env::start().await;
    let shoot = landscape(&env).await;
    let thresholds = BTreeMap::from([("ControlPlaneHealthy".to_owned(), Duration::from_secs(60))]);
    let ctx = ctx(&env, thresholds);
    ctx.clone().reconcile(shoot.clone()).await.unwrap();

    set_managed_resource_health(&env, "False").await;
    ctx.clone().reconcile(shoot.clone()).await.unwrap();
    assert_eq!(
        stored(&env).await.0[1],
        triple("ControlPlaneHealthy", "Progressing", "DeploymentUnhealthy")
    );
    env.clock.advance(SignedDuration::from_secs(30));
    renew_heartbeat(&env).await;
    ctx.clone().reconcile(shoot.clone()).await.unwrap();
    assert_eq!(
        stored(&env).await.0[1].1,
        "Progressing",
        "within the threshold"
    );

    env.clock.advance(SignedDuration::from_secs(31));
    ctx.clone().reconcile(shoot.clone()).await.unwrap();
    assert_eq!(
        stored(&env).await.0[1],
        triple("ControlPlaneHealthy", "False", "DeploymentUnhealthy")
    );

    set_managed_resource_health(&env, "True").await;
    ctx.reconcile(shoot).await.unwrap();
    assert_eq!(
        stored(&env).await.0[1],
        triple("ControlPlaneHealthy", "True", "ControlPlaneRunning")
    );
    env.shutdown().await;
}

#[tokio::test]
async fn shoots_of_other_seeds_or_without_seed_name_are_left_alone() {
    let env = Env::start().await;
    let shoot = landscape(&env).await;
    let ctx = ctx(&env, BTreeMap::new());
    let elsewhere = json!({"status": {"seedName": "other"}});
    shoots(&env)
        .patch_status("s", &PatchParams::default(), &Patch::Merge(&elsewhere))
        .await
        .unwrap();
    assert_eq!(
        ctx.clone().reconcile(shoot.clone()).await.unwrap(),
        Action::await_change()
    );
    let unset = json!({"status": {"seedName": null}});
    shoots(&env)
        .patch_status("s", &PatchParams::default(), &Patch::Merge(&unset))
        .await
        .unwrap();
    assert_eq!(
        ctx.reconcile(shoot).await.unwrap(),
        Action::requeue(super::reconcile::WAIT_FOR_SEED_NAME)
    );
    assert!(stored(&env).await.0.is_empty());
    env.shutdown().await;
}
