//! The Shoot controller end to end on the sandboxes: with the simulated provider of
//! `landscape::shoot_provider` answering the extension objects, a new Shoot reaches
//! `Create Succeeded 100 %` with every extension object written, hibernates and wakes; a
//! classified error an extension reports ends in `Failed` with the code in `lastErrors`, and the
//! garden's retry of it runs the flow again. A deleted Shoot runs the delete flow: every extension
//! object goes (confirmed, the Worker before the Infrastructure, all before the namespace),
//! `lastOperation` Delete with progress, then the Shoot; an extension failing its deletion keeps
//! the Shoot with the task and code in `lastErrors`.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_api::extensions::{
    ContainerRuntime, ControlPlane, Infrastructure, Network, OperatingSystemConfig, Worker,
};
use seedlet_garden::controllers::entry::run_alone;
use seedlet_garden::controllers::shoot_retry;
use seedlet_testkit as common;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use common::{Clusters, SEED};
use seedlet_landscape::shoot_provider::Releases;

const PROJECT_NAMESPACE: &str = "garden-dev";
/// Generous: a flow waits up to 15 s for the Seed to be ready and an extension error is
/// tolerated for its severe threshold (30 s) before the flow gives up.
const TIMEOUT: Duration = Duration::from_secs(150);

async fn garden_basics(garden: &kube::Client) {
    common::create_project_and_cloud_profile(garden, PROJECT_NAMESPACE).await;
}

async fn create_shoot(garden: &kube::Client, name: &str, annotations: Value) {
    common::create_object::<Shoot>(
        Api::namespaced(garden.clone(), PROJECT_NAMESPACE),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": name, "namespace": PROJECT_NAMESPACE, "annotations": annotations},
            "spec": {"cloudProfile": {"name": "local"}, "region": "local", "seedName": SEED,
                "kubernetes": {"version": "1.32.0"},
                "networking": {"type": "calico", "pods": "10.3.0.0/16", "services": "10.4.0.0/16"},
                "provider": {"type": "local", "workers": [{"name": "pool-a", "minimum": 1, "maximum": 2,
                    "machine": {"type": "local", "image": {"name": "local", "version": "1.0"}},
                    "cri": {"name": "containerd", "containerRuntimes": [{"type": "gvisor"}]}}]}},
        }),
    )
    .await;
}

/// The shoot once `done` holds for it; on timeout the panic shows its last status.
async fn wait_operation(
    shoots: &Api<Shoot>,
    name: &str,
    what: &str,
    done: impl Fn(&Shoot) -> bool,
) -> Shoot {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let shoot = shoots.get_opt(name).await.expect("get shoot");
        if let Some(shoot) = shoot.as_ref().filter(|shoot| done(shoot)) {
            return shoot.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}; last status: {}",
            serde_json::to_string(&shoot.and_then(|s| s.status)).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn operation(shoot: &Shoot) -> Option<(String, String, i32)> {
    shoot.last_operation().map(|op| {
        (
            format!("{:?}", op.type_),
            format!("{:?}", op.state),
            op.progress,
        )
    })
}

/// The demo control-plane chart `seedlet sandbox` configures.
const DEMO_CHART: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/charts/control-plane-demo");

async fn start(
    clusters: &Clusters,
    stop: &CancellationToken,
    chart: bool,
) -> (seedlet_agent::RunningAgent, Releases) {
    let agent = common::start_agent_with(clusters, stop.clone(), |config| {
        if let Some(shoot) = config.controllers.shoot.as_mut() {
            shoot.enabled = Some(true);
            shoot.control_plane_chart =
                chart.then(|| seedlet_config::gardenlet::ControlPlaneChart {
                    path: Some(DEMO_CHART.to_owned()),
                    raw_chart: None,
                });
        }
    })
    .await;
    let releases = Releases::default();
    tokio::spawn(seedlet_landscape::shoot_provider::run_recording(
        clusters.seed.client(),
        stop.clone(),
        releases.clone(),
    ));
    (agent, releases)
}

/// Deletes shoot `name` and waits until it is gone; returns the `lastOperation` progress values
/// of type Delete seen on the way.
async fn delete_and_watch(shoots: &Api<Shoot>, name: &str) -> Vec<i32> {
    shoots
        .delete(name, &Default::default())
        .await
        .expect("delete shoot");
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let mut progress = Vec::new();
    while let Some(shoot) = shoots.get_opt(name).await.expect("get shoot") {
        if let Some(("Delete", _, percent)) = operation(&shoot)
            .as_ref()
            .map(|(t, s, p)| (t.as_str(), s.as_str(), *p))
            && progress.last() != Some(&percent)
        {
            progress.push(percent);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for the shoot to go; last status: {}",
            serde_json::to_string(&shoot.status).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    progress
}

/// `spec.replicas` of the demo chart's kube-apiserver Deployment.
async fn kube_apiserver_replicas(seed: &kube::Client, namespace: &str) -> Option<i32> {
    Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(seed.clone(), namespace)
        .get_opt("kube-apiserver")
        .await
        .expect("read kube-apiserver")
        .and_then(|deployment| deployment.spec)
        .and_then(|spec| spec.replicas)
}

fn released(releases: &Releases, key: &str) -> usize {
    let releases = releases.lock().expect("releases");
    releases
        .iter()
        .position(|r| format!("{}/{}", r.kind, r.key) == key)
        .unwrap_or_else(|| panic!("{key} not released: {releases:?}"))
}

#[tokio::test]
async fn a_new_shoot_is_created_hibernated_and_woken_through_its_extension_objects() {
    // Simulated workload status: the chart's kube-apiserver Deployment becomes ready.
    let clusters = Clusters::start(true).await;
    let stop = CancellationToken::new();
    let (_agent, releases) = start(&clusters, &stop, true).await;
    let garden = clusters.garden.client();
    garden_basics(&garden).await;
    create_shoot(&garden, "foo", json!({})).await;
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);

    let created = wait_operation(&shoots, "foo", "Create Succeeded", |shoot| {
        operation(shoot).is_some_and(|(_, state, _)| state == "Succeeded")
    })
    .await;
    assert_eq!(
        operation(&created),
        Some(("Create".into(), "Succeeded".into(), 100))
    );
    let status = created.status.as_ref().expect("status");
    assert_eq!(status.observed_generation, created.metadata.generation);
    assert_eq!(status.seed_name.as_deref(), Some(SEED));
    assert_eq!(status.technical_id.as_deref(), Some("shoot--dev--foo"));
    assert_eq!(status.hibernated, Some(false));
    assert!(status.last_errors.is_empty());
    assert_eq!(
        status.gardener.as_ref().map(|g| g.name.as_str()),
        Some("seedlet-agent")
    );

    let seed = clusters.seed.client();
    let ns = "shoot--dev--foo";
    assert!(
        Api::<Infrastructure>::namespaced(seed.clone(), ns)
            .get_opt("foo")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        Api::<ControlPlane>::namespaced(seed.clone(), ns)
            .get_opt("foo")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        Api::<Network>::namespaced(seed.clone(), ns)
            .get_opt("foo")
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        Api::<ContainerRuntime>::namespaced(seed.clone(), ns)
            .get_opt("gvisor-pool-a")
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        created.last_operation().map(|op| op.description.as_str()),
        Some("Shoot cluster has been successfully reconciled."),
        "with a chart nothing is skipped"
    );
    assert_eq!(kube_apiserver_replicas(&seed, ns).await, Some(1));
    let managed = Api::<seedlet_api::resources::ManagedResource>::namespaced(seed.clone(), ns)
        .get("control-plane")
        .await
        .expect("the chart's ManagedResource");
    assert_eq!(managed.spec.class.as_deref(), Some("seed"));
    let oscs = Api::<OperatingSystemConfig>::namespaced(seed.clone(), ns)
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(oscs.items.len(), 2, "init and original OSC");
    let worker = Api::<Worker>::namespaced(seed.clone(), ns)
        .get("foo")
        .await
        .unwrap();
    let pool = &worker.spec.extra["pools"][0];
    assert_eq!(pool["name"], "pool-a");
    assert!(
        pool["userDataSecretRef"]["name"]
            .as_str()
            .unwrap()
            .starts_with("cloud-config-gardener-node-agent-pool-a-")
    );

    // Hibernation: a generation bump, a new run, `status.hibernated` and a Worker at zero.
    shoots
        .patch(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"hibernation": {"enabled": true}}})),
        )
        .await
        .expect("hibernate");
    let hibernated = wait_operation(&shoots, "foo", "hibernated", |shoot| {
        shoot.status.as_ref().and_then(|s| s.hibernated) == Some(true)
    })
    .await;
    assert_eq!(
        operation(&hibernated),
        Some(("Reconcile".into(), "Succeeded".into(), 100))
    );
    let worker = Api::<Worker>::namespaced(seed.clone(), ns)
        .get("foo")
        .await
        .unwrap();
    let deployments = worker
        .status
        .as_ref()
        .and_then(|s| s.extra.get("machineDeployments"))
        .cloned();
    assert_eq!(deployments.unwrap()[0]["maximum"], 0);
    assert_eq!(
        kube_apiserver_replicas(&seed, ns).await,
        Some(0),
        "the chart scales the control plane down"
    );

    shoots
        .patch(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"hibernation": {"enabled": false}}})),
        )
        .await
        .expect("wake up");
    wait_operation(&shoots, "foo", "woken up", |shoot| {
        shoot.status.as_ref().and_then(|s| s.hibernated) == Some(false)
            && operation(shoot).is_some_and(|(_, state, _)| state == "Succeeded")
    })
    .await;
    assert_eq!(kube_apiserver_replicas(&seed, ns).await, Some(1));

    // Deletion (the Shoot controller's delete flow): every extension object is deleted with
    // the confirmation and released in upstream's order, the namespace only after all of them.
    let progress = delete_and_watch(&shoots, "foo").await;
    assert!(!progress.is_empty(), "lastOperation Delete observed");
    assert!(
        progress.iter().any(|p| *p > 0 && *p < 100),
        "progress between 0 and 100 %: {progress:?}"
    );
    {
        let seen = releases.lock().expect("releases");
        assert!(seen.iter().all(|r| r.confirmed), "{seen:?}");
        assert!(seen.iter().all(|r| !r.namespace_terminating), "{seen:?}");
        assert_eq!(
            seen.len(),
            7,
            "Infrastructure, ControlPlane, Network, Worker, 2 OSCs, ContainerRuntime: {seen:?}"
        );
    }
    let worker = released(&releases, &format!("Worker/{ns}/foo"));
    let infrastructure = released(&releases, &format!("Infrastructure/{ns}/foo"));
    let control_plane = released(&releases, &format!("ControlPlane/{ns}/foo"));
    assert!(
        worker < infrastructure,
        "the Worker before the Infrastructure"
    );
    assert!(worker < control_plane && control_plane < infrastructure);
    assert!(released(&releases, &format!("Network/{ns}/foo")) < control_plane);
    assert!(released(&releases, &format!("ContainerRuntime/{ns}/gvisor-pool-a")) < control_plane);
    assert!(
        Api::<k8s_openapi::api::core::v1::Namespace>::all(seed.clone())
            .get_opt(ns)
            .await
            .unwrap()
            .is_none(),
        "the namespace is gone before the finalizer"
    );
    stop.cancel();
}

#[tokio::test]
async fn an_extension_failing_its_deletion_keeps_the_shoot_with_task_and_code() {
    let clusters = Clusters::start(false).await;
    let stop = CancellationToken::new();
    let (_agent, _) = start(&clusters, &stop, false).await;
    let garden = clusters.garden.client();
    garden_basics(&garden).await;
    create_shoot(
        &garden,
        "baz",
        json!({"seedlet.gardener.cloud/simulate-delete-error": "Network:ERR_INFRA_DEPENDENCIES"}),
    )
    .await;
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    wait_operation(&shoots, "baz", "Create Succeeded", |shoot| {
        operation(shoot).is_some_and(|(_, state, _)| state == "Succeeded")
    })
    .await;
    let created = shoots.get("baz").await.expect("shoot");
    let description = created.last_operation().map(|op| op.description.clone());
    assert_eq!(
        description.as_deref(),
        Some(
            "Shoot cluster has been successfully reconciled. The shoot control plane was not deployed: no controllers.shoot.controlPlaneChart is configured."
        ),
    );
    shoots
        .delete("baz", &Default::default())
        .await
        .expect("delete shoot");
    let task = "Waiting until shoot network plugin has been destroyed";
    let failed = wait_operation(&shoots, "baz", "Delete Failed", |shoot| {
        operation(shoot).is_some_and(|(type_, state, _)| type_ == "Delete" && state == "Failed")
    })
    .await;
    let status = failed.status.as_ref().expect("status");
    let error = status
        .last_errors
        .iter()
        .find(|e| e.task_id.as_deref() == Some(task))
        .expect("the network wait's error");
    assert_eq!(error.codes, ["ERR_INFRA_DEPENDENCIES"]);
    assert!(
        error.description.contains(
            "Failed to delete Network shoot--dev--baz/baz: simulated provider deletion error"
        ),
        "{}",
        error.description
    );
    assert_eq!(failed.finalizers(), ["gardener"]);
    assert!(
        Api::<Infrastructure>::namespaced(clusters.seed.client(), "shoot--dev--baz")
            .get_opt("baz")
            .await
            .unwrap()
            .is_some(),
        "the Infrastructure waits for the Network"
    );

    // The operator confirms a force deletion (ERR_INFRA_DEPENDENCIES allows it). The sandbox
    // garden bumps no generation for it as gardener-apiserver does; the agent takes the request:
    // every extension object goes at once, then the Shoot.
    let force = json!({"metadata": {"annotations": {"confirmation.gardener.cloud/force-deletion": "true"}}});
    shoots
        .patch("baz", &PatchParams::default(), &Patch::Merge(&force))
        .await
        .expect("force deletion confirmed");
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while let Some(shoot) = shoots.get_opt("baz").await.expect("read shoot") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the force-deleted shoot is still there: {:?}",
            shoot.status.and_then(|s| s.last_operation)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    stop.cancel();
}

#[tokio::test]
async fn a_classified_extension_error_fails_the_shoot_with_its_code() {
    let clusters = Clusters::start(false).await;
    let stop = CancellationToken::new();
    let (_agent, _) = start(&clusters, &stop, false).await;
    let garden = clusters.garden.client();
    garden_basics(&garden).await;
    create_shoot(
        &garden,
        "bar",
        json!({"seedlet.gardener.cloud/simulate-error": "Network:ERR_INFRA_RATE_LIMITS_EXCEEDED"}),
    )
    .await;
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let failed = wait_operation(&shoots, "bar", "Create Failed", |shoot| {
        operation(shoot).is_some_and(|(_, state, _)| state == "Failed")
    })
    .await;
    let status = failed.status.as_ref().expect("status");
    let description = &status
        .last_operation
        .as_ref()
        .expect("operation")
        .description;
    assert!(
        description.starts_with("Flow \"Shoot cluster reconciliation\" encountered task errors"),
        "{description}"
    );
    let error = status
        .last_errors
        .iter()
        .find(|e| {
            e.task_id.as_deref() == Some("Waiting until shoot network plugin has been reconciled")
        })
        .expect("the network wait's error");
    assert_eq!(error.codes, ["ERR_INFRA_RATE_LIMITS_EXCEEDED"]);
    assert!(error.description.contains("Error while waiting for Network shoot--dev--bar/bar to become ready: error during reconciliation: simulated provider error"), "{}", error.description);
    assert!(
        status.retry_cycle_start_time.is_none(),
        "Failed ends the retry cycle"
    );

    // The provider recovers; the garden's shoot-retry controller asks for a retry of the
    // rate-limited shoot (`gardener.cloud/operation: retry`). The sandbox garden serves Shoots
    // from a CRD, which bumps no generation for it: the agent takes the request itself, runs the
    // flow again and removes the annotation.
    let recovered =
        json!({"metadata": {"annotations": {"seedlet.gardener.cloud/simulate-error": null}}});
    shoots
        .patch("bar", &PatchParams::default(), &Patch::Merge(&recovered))
        .await
        .expect("simulated error removed");
    let retry = Arc::new(shoot_retry::ShootRetry {
        client: garden.clone(),
        retry_period: jiff::SignedDuration::from_secs(1),
        retry_jitter_period: jiff::SignedDuration::from_millis(100),
        clock: Arc::new(seedlet_runtime::clock::SystemClock),
        concurrency: 1,
    });
    tokio::spawn(run_alone(retry, garden.clone(), stop.clone()));
    let retried = wait_operation(
        &shoots,
        "bar",
        "Create Succeeded after the retry",
        |shoot| {
            operation(shoot)
                .is_some_and(|(type_, state, _)| type_ == "Create" && state == "Succeeded")
        },
    )
    .await;
    assert_eq!(
        retried.annotations().get("gardener.cloud/operation"),
        None,
        "the retry request is removed"
    );
    assert!(
        retried
            .status
            .as_ref()
            .is_some_and(|s| s.last_errors.is_empty()),
        "a successful retry clears lastErrors"
    );
    stop.cancel();
}

#[tokio::test]
async fn an_operation_cut_off_by_a_restart_is_aborted_and_run_again() {
    let clusters = Clusters::start(false).await;
    let garden = clusters.garden.client();
    garden_basics(&garden).await;
    create_shoot(&garden, "cut", json!({})).await;
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    // What a flow left behind when its agent stopped mid-way.
    let processing = json!({"status": {"lastOperation": {"type": "Create", "state": "Processing",
        "progress": 40, "description": "Waiting until shoot infrastructure has been reconciled",
        "lastUpdateTime": "2025-01-06T11:00:00Z"}}});
    shoots
        .patch_status("cut", &PatchParams::default(), &Patch::Merge(&processing))
        .await
        .expect("status");
    let states = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&states);
    let watch = kube::runtime::watcher::watch_object(shoots.clone(), "cut");
    let observer = tokio::spawn(async move {
        futures::pin_mut!(watch);
        while let Some(Ok(Some(shoot))) = futures::StreamExt::next(&mut watch).await {
            if let Some((_, state, _)) = operation(&shoot) {
                let mut seen = seen.lock().expect("lock");
                if seen.last() != Some(&state) {
                    seen.push(state);
                }
            }
        }
    });
    let stop = CancellationToken::new();
    let (_agent, _) = start(&clusters, &stop, false).await;
    wait_operation(&shoots, "cut", "Create Succeeded", |shoot| {
        operation(shoot).is_some_and(|(type_, state, _)| type_ == "Create" && state == "Succeeded")
    })
    .await;
    observer.abort();
    let states = states.lock().expect("lock").clone();
    let aborted = states.iter().position(|s| s == "Aborted");
    assert!(
        aborted.is_some_and(|at| states[..at].iter().all(|s| s == "Processing")),
        "Processing → Aborted before the flow runs again: {states:?}"
    );
    stop.cancel();
}
