//! End-to-end shoot care: the agent and the garden controller run against in-process garden and
//! seed sandboxes with a Shoot scheduled to the seed. A Worker in the control-plane namespace
//! reports health, its controller's heartbeat Lease is renewed (or not), and a ManagedResource
//! turns healthy and unhealthy; the Shoot's conditions follow (a threshold holds a Progressing
//! state first), the garden's `shoot.gardener.cloud/status` label follows the conditions, and a
//! quiet shoot is not written. Prints the writes counted while nothing changed (`--nocapture`).

use seedlet_testkit as common;

use std::time::Duration;

use common::{Clusters, SEED, ensure_namespace, wait_for};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerInstallation, Shoot};
use seedlet_api::extensions::Worker;
use seedlet_api::resources::ManagedResource;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const PROJECT_NAMESPACE: &str = "garden-dev";
const CONTROL_PLANE: &str = "shoot--dev--care";
const TIMEOUT: Duration = Duration::from_secs(20);
const HEARTBEAT: &str = "gardener-extension-heartbeat";

fn condition(type_: &str, status: &str, reason: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": format!("{type_} is {status}"),
           "lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:00Z"})
}

async fn apply(client: &kube::Client, object: Value) {
    let (namespace, name) = (
        object["metadata"]["namespace"].as_str().map(str::to_owned),
        object["metadata"]["name"]
            .as_str()
            .expect("name")
            .to_owned(),
    );
    let dynamic: kube::api::DynamicObject = serde_json::from_value(object.clone()).expect("object");
    let types = dynamic.types.clone().expect("types");
    let (group, version) = types
        .api_version
        .split_once('/')
        .unwrap_or(("", types.api_version.as_str()));
    let resource = kube::discovery::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
        group,
        version,
        &types.kind,
    ));
    let api: Api<kube::api::DynamicObject> = match &namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    api.patch(
        &name,
        &PatchParams::apply("test").force(),
        &Patch::Apply(&object),
    )
    .await
    .unwrap_or_else(|error| panic!("apply {}/{name}: {error}", types.kind));
}

/// Project `dev`, CloudProfile `local`, a registration for what the shoot needs and Shoot
/// `garden-dev/care` with one worker pool, reconciled, then scheduled to our seed.
async fn garden_objects(garden: &kube::Client) {
    ensure_namespace(garden, PROJECT_NAMESPACE).await;
    apply(
        garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
        "metadata": {"name": "dev"}, "spec": {"namespace": PROJECT_NAMESPACE}}),
    )
    .await;
    apply(
        garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
        "metadata": {"name": "local"},
        "spec": {"type": "local", "kubernetes": {"versions": [{"version": "1.33.0"}]}}}),
    )
    .await;
    apply(
        garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerRegistration",
        "metadata": {"name": "provider-local"},
        "spec": {"resources": [
            {"kind": "ControlPlane", "type": "local"}, {"kind": "Infrastructure", "type": "local"},
            {"kind": "Worker", "type": "local"}, {"kind": "Network", "type": "calico"}]}}),
    )
    .await;
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let shoot: Shoot = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
        "metadata": {"name": "care", "namespace": PROJECT_NAMESPACE},
        "spec": {"cloudProfile": {"name": "local"}, "region": "local",
                 "networking": {"type": "calico"}, "kubernetes": {"version": "1.33.0"},
                 "provider": {"type": "local", "workers": [
                     {"name": "pool", "minimum": 1, "maximum": 1, "machine": {"type": "m"}}]}},
    }))
    .expect("shoot");
    shoots
        .create(&PostParams::default(), &shoot)
        .await
        .expect("create shoot");
    let status = json!({"status": {"seedName": SEED, "uid": "uid-care",
        "lastOperation": {"type": "Reconcile", "state": "Succeeded", "progress": 100,
                          "description": "done", "lastUpdateTime": "2026-01-01T00:00:00Z"}}});
    shoots
        .patch_status("care", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("shoot status");
    let schedule = json!({"spec": {"seedName": SEED}});
    shoots
        .patch("care", &PatchParams::default(), &Patch::Merge(&schedule))
        .await
        .expect("schedule shoot");
}

/// Sets the heartbeat Lease of the Worker's controller to `renewed`.
async fn heartbeat(seed: &kube::Client, namespace: &str, renewed: jiff::Timestamp) {
    apply(
        seed,
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": HEARTBEAT, "namespace": namespace},
        "spec": {"renewTime": renewed.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()}}),
    )
    .await;
}

async fn report(seed: &kube::Client, type_: &str, status: &str) {
    let patch = json!({"status": {"conditions": [condition(type_, status, "HealthCheck")]}});
    Api::<Worker>::namespaced(seed.clone(), CONTROL_PLANE)
        .patch_status("care", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("worker status");
}

async fn managed_resource_health(seed: &kube::Client, healthy: &str) {
    let api = Api::<ManagedResource>::namespaced(seed.clone(), CONTROL_PLANE);
    let generation = api
        .get("control-plane")
        .await
        .expect("mr")
        .metadata
        .generation;
    let reason = if healthy == "True" {
        "ResourcesHealthy"
    } else {
        "DeploymentUnhealthy"
    };
    let status = json!({"status": {"observedGeneration": generation, "conditions": [
        condition("ResourcesApplied", "True", "ApplySucceeded"),
        condition("ResourcesHealthy", healthy, reason),
        condition("ResourcesProgressing", "False", "ResourcesRolledOut")]}});
    api.patch_status(
        "control-plane",
        &PatchParams::default(),
        &Patch::Merge(&status),
    )
    .await
    .expect("mr status");
}

/// Waits until the Shoot's condition `type_` has `status` and `reason`.
async fn wait_condition(garden: &kube::Client, type_: &str, status: &str, reason: &str) -> Shoot {
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    wait_for(&format!("{type_}={status} {reason}"), TIMEOUT, || async {
        let shoot = shoots.get("care").await.ok()?;
        let found = shoot
            .status
            .as_ref()?
            .conditions
            .iter()
            .any(|c| c.type_ == type_ && c.status.as_str() == status && c.reason == reason);
        found.then_some(shoot)
    })
    .await
}

async fn wait_label(garden: &kube::Client, value: &str) {
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    wait_for(&format!("status label {value}"), TIMEOUT, || async {
        let shoot = shoots.get("care").await.ok()?;
        (shoot
            .labels()
            .get("shoot.gardener.cloud/status")
            .map(String::as_str)
            == Some(value))
        .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shoot_conditions_and_status_label_follow_extension_reports_and_managed_resources() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let shutdown = CancellationToken::new();
    let _garden_controller = common::start_garden(&clusters, shutdown.clone()).await;
    let _agent = common::start_agent_with(&clusters, shutdown.clone(), |config| {
        let care = &mut config.controllers.shoot_care;
        care.sync_period = seedlet_config::Duration::from_secs(1);
        care.stale_extension_health_checks.threshold = seedlet_config::Duration::from_mins(1);
        care.condition_thresholds = vec![seedlet_config::ConditionThreshold {
            condition_type: "ControlPlaneHealthy".into(),
            duration: seedlet_config::Duration::from_secs(3),
        }];
        // The test sets the ManagedResource's conditions itself.
        config.controllers.managed_resource.enabled = false;
    })
    .await;
    garden_objects(&garden).await;

    // The garden schedules an installation for Worker/local; its controller's heartbeat Lease
    // lives in the installation's namespace.
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    let installation = wait_for("installation of provider-local", TIMEOUT, || async {
        installations
            .list(&Default::default())
            .await
            .ok()?
            .items
            .into_iter()
            .find(|ci| ci.spec.registration_ref.name == "provider-local")
    })
    .await;
    let lease_namespace = format!("extension-{}", installation.name_any());
    ensure_namespace(&seed, &lease_namespace).await;
    heartbeat(&seed, &lease_namespace, jiff::Timestamp::now()).await;

    wait_for("control-plane namespace", TIMEOUT, || async {
        Api::<k8s_openapi::api::core::v1::Namespace>::all(seed.clone())
            .get_opt(CONTROL_PLANE)
            .await
            .ok()?
    })
    .await;
    apply(
        &seed,
        json!({"apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Worker",
        "metadata": {"name": "care", "namespace": CONTROL_PLANE},
        "spec": {"type": "local", "region": "local",
                 "secretRef": {"name": "cloudprovider", "namespace": CONTROL_PLANE}, "pools": []}}),
    )
    .await;
    report(&seed, "EveryNodeReady", "True").await;
    apply(
        &seed,
        json!({"apiVersion": "resources.gardener.cloud/v1alpha1", "kind": "ManagedResource",
        "metadata": {"name": "control-plane", "namespace": CONTROL_PLANE},
        "spec": {"class": "seed", "secretRefs": []}}),
    )
    .await;
    managed_resource_health(&seed, "True").await;

    // Healthy as far as the seed shows; what needs the shoot's API server is Unknown.
    let shoot = wait_condition(
        &garden,
        "ControlPlaneHealthy",
        "True",
        "ControlPlaneRunning",
    )
    .await;
    let status = shoot.status.clone().expect("status");
    let seen: Vec<(&str, &str)> = status
        .conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("APIServerAvailable", "Unknown"),
            ("ControlPlaneHealthy", "True"),
            ("ObservabilityComponentsHealthy", "True"),
            ("EveryNodeReady", "Unknown"),
            ("SystemComponentsHealthy", "Unknown"),
        ]
    );
    assert_eq!(
        status.last_operation.expect("last operation").description,
        "done"
    );
    wait_label(&garden, "unknown").await;

    // Quiet: over three sync periods nothing is written.
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    // Other garden controllers may write the Shoot meanwhile (maintenance, label), so care's
    // writes are judged by its own lists, whose timestamps change with every write it makes.
    let owned = |shoot: Shoot| {
        let status = shoot.status.unwrap_or_default();
        serde_json::to_string(&(status.conditions, status.constraints)).expect("json")
    };
    // Settled first: a pass that listed the ManagedResources just before the test set their
    // status may still write its (older) view once; the next pass corrects it. Quiet is judged
    // only from two equal samples a second apart on.
    let mut before = owned(shoots.get("care").await.expect("shoot"));
    let settle_until = std::time::Instant::now() + TIMEOUT;
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let again = owned(shoots.get("care").await.expect("shoot"));
        if again == before && again.contains(r#""ControlPlaneHealthy","status":"True""#) {
            break;
        }
        assert!(
            std::time::Instant::now() < settle_until,
            "care's lists settle: {again}"
        );
        before = again;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = owned(shoots.get("care").await.expect("shoot"));
    println!(
        "shoot care writes over 3 quiet sync periods: {}",
        u8::from(before != after)
    );
    assert_eq!(before, after, "no write without a change");

    // The ManagedResource turns unhealthy: Progressing within the 3 s threshold, then False.
    managed_resource_health(&seed, "False").await;
    wait_condition(
        &garden,
        "ControlPlaneHealthy",
        "Progressing",
        "DeploymentUnhealthy",
    )
    .await;
    wait_condition(
        &garden,
        "ControlPlaneHealthy",
        "False",
        "DeploymentUnhealthy",
    )
    .await;
    wait_label(&garden, "unhealthy").await;
    managed_resource_health(&seed, "True").await;
    wait_condition(
        &garden,
        "ControlPlaneHealthy",
        "True",
        "ControlPlaneRunning",
    )
    .await;
    wait_label(&garden, "unknown").await;

    // The Worker reports failing nodes, then its controller's heartbeat goes stale.
    report(&seed, "EveryNodeReady", "False").await;
    let failed = wait_condition(&garden, "EveryNodeReady", "False", "WorkerUnhealthyReport").await;
    let message = failed
        .status
        .expect("status")
        .conditions
        .into_iter()
        .find(|c| c.type_ == "EveryNodeReady")
        .expect("condition")
        .message;
    assert_eq!(
        message,
        format!(
            "Worker extension ({CONTROL_PLANE}/care) reports failing health check: EveryNodeReady is False"
        )
    );
    wait_label(&garden, "unhealthy").await;
    let an_hour_ago = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1);
    heartbeat(&seed, &lease_namespace, an_hour_ago).await;
    // The Lease is read on the next periodic pass.
    wait_condition(
        &garden,
        "EveryNodeReady",
        "Unknown",
        "WorkerOutdatedHealthCheckReport",
    )
    .await;

    // Hibernated: nothing is checked, every condition is True and the label healthy.
    let hibernate = json!({"spec": {"hibernation": {"enabled": true}}});
    shoots
        .patch("care", &PatchParams::default(), &Patch::Merge(&hibernate))
        .await
        .expect("hibernate");
    wait_condition(&garden, "EveryNodeReady", "True", "ConditionNotChecked").await;
    wait_condition(&garden, "APIServerAvailable", "True", "ConditionNotChecked").await;
    wait_label(&garden, "healthy").await;

    shutdown.cancel();
    clusters.shutdown().await;
}
