//! Helpers of the shoot-state tests: a garden with a Project, CloudProfile and Shoots scheduled
//! to the seed, an agent with short ShootState timers, Cluster reads, and a watch that records
//! every ShootState version the garden serves.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use seedlet_agent::RunningAgent;
use seedlet_api::core::{CloudProfile, Project, Shoot, ShootState};
use seedlet_api::extensions::{Cluster, Infrastructure};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::{Clusters, SEED, ensure_namespace, wait_for, wait_until};

pub const PROJECT_NAMESPACE: &str = "garden-dev";
pub const CONTROL_PLANE: &str = "shoot--dev--foo";
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Starts an agent like `common::start_agent`, with the ShootState snapshot period set.
pub async fn start_agent(
    clusters: &Clusters,
    snapshot_period: Duration,
    shutdown: CancellationToken,
) -> RunningAgent {
    let period = u64::try_from(snapshot_period.as_millis()).expect("period");
    crate::start_agent_with(clusters, shutdown, |config| {
        config.controllers.shoot_state.sync_period = seedlet_config::Duration::from_millis(period);
    })
    .await
}

pub use crate::create_object as create;

pub fn operation(type_: &str, state: &str) -> Value {
    json!({"type": type_, "state": state, "progress": 100, "description": "",
           "lastUpdateTime": "2026-01-01T00:00:00Z"})
}

/// Project `dev`, its namespace, CloudProfile `local` and Shoot `name` on our seed with a
/// succeeded reconcile.
pub async fn garden_with_shoot(garden: &kube::Client, name: &str, status: Value) {
    ensure_namespace(garden, PROJECT_NAMESPACE).await;
    let projects: Api<Project> = Api::all(garden.clone());
    if projects
        .get_opt("dev")
        .await
        .expect("get project")
        .is_none()
    {
        create::<Project>(
            Api::all(garden.clone()),
            json!({
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
                "metadata": {"name": "dev"}, "spec": {"namespace": PROJECT_NAMESPACE}
            }),
        )
        .await;
    }
    let profiles: Api<CloudProfile> = Api::all(garden.clone());
    if profiles
        .get_opt("local")
        .await
        .expect("get profile")
        .is_none()
    {
        create::<CloudProfile>(
            Api::all(garden.clone()),
            json!({
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
                "metadata": {"name": "local"},
                "spec": {"type": "local", "kubernetes": {"versions": [{"version": "1.33.0"}]}}
            }),
        )
        .await;
    }
    create::<Shoot>(
        Api::namespaced(garden.clone(), PROJECT_NAMESPACE),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": name, "namespace": PROJECT_NAMESPACE},
            "spec": {"cloudProfile": {"name": "local"}, "provider": {"type": "local"},
                     "region": "local", "networking": {"type": "calico"}}
        }),
    )
    .await;
    // Status first, then scheduling (as the scheduler would): the agent never sees the shoot
    // without the status the test gives it, e.g. a legacy technical ID.
    let mut status = status;
    status["lastOperation"] = operation("Reconcile", "Succeeded");
    status["uid"] = json!(format!("uid-{name}"));
    let shoots = Api::<Shoot>::namespaced(garden.clone(), PROJECT_NAMESPACE);
    shoots
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": status})),
        )
        .await
        .expect("shoot status");
    shoots
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"seedName": SEED}})),
        )
        .await
        .expect("schedule shoot");
}

pub async fn cluster(seed: &kube::Client, name: &str) -> Option<Cluster> {
    Api::<Cluster>::all(seed.clone())
        .get_opt(name)
        .await
        .expect("get cluster")
}

/// Waits until Cluster `name` satisfies `check`.
pub async fn cluster_where(
    seed: &kube::Client,
    name: &str,
    what: &str,
    check: impl Fn(&Cluster) -> bool,
) -> Cluster {
    wait_for(what, TIMEOUT, || async {
        cluster(seed, name).await.filter(|c| check(c))
    })
    .await
}

/// What a watch on the ShootState observed most recently.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    pub spec: Value,
    /// Distinct resourceVersions seen (= writes).
    pub writes: u64,
}

/// Watches ShootState `garden-dev/foo` and publishes each version.
pub fn observe_shoot_state(garden: &kube::Client) -> watch::Receiver<Observed> {
    let (sender, receiver) = watch::channel(Observed::default());
    let api: Api<ShootState> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    tokio::spawn(async move {
        let mut last_version = None;
        let stream = watcher::watcher(api, watcher::Config::default().fields("metadata.name=foo"))
            .default_backoff()
            .applied_objects();
        let mut stream = std::pin::pin!(stream);
        while let Some(Ok(state)) = stream.next().await {
            if state.metadata.resource_version == last_version {
                continue;
            }
            last_version = state.metadata.resource_version.clone();
            let spec = serde_json::to_value(&state.spec).expect("spec");
            sender.send_modify(|observed| {
                observed.spec = spec;
                observed.writes += 1;
            });
        }
    });
    receiver
}

/// The `state` of extension entry (kind, name), if any.
pub fn entry_state(spec: &Value, kind: &str, name: &str) -> Option<Value> {
    spec["extensions"]
        .as_array()?
        .iter()
        .find(|e| e["kind"] == json!(kind) && e["name"] == json!(name))
        .map(|e| e["state"].clone())
}

pub fn gardener_entry(spec: &Value, name: &str) -> Option<Value> {
    spec["gardener"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == json!(name))
        .cloned()
}

pub async fn wait_observed(
    observed: &mut watch::Receiver<Observed>,
    what: &str,
    check: impl Fn(&Observed) -> bool,
) -> Observed {
    let outcome = tokio::time::timeout(TIMEOUT, observed.wait_for(|o| check(o)))
        .await
        .map(|result| result.map(|o| o.clone()));
    match outcome {
        Ok(Ok(observed)) => observed,
        Ok(Err(_)) => panic!("shootstate observer stopped"),
        Err(_) => panic!("timed out waiting for {what}: {:?}", observed.borrow().spec),
    }
}

pub async fn set_infrastructure_state(seed: &kube::Client, n: i64) {
    Api::<Infrastructure>::namespaced(seed.clone(), CONTROL_PLANE)
        .patch_status(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"state": {"n": n}}})),
        )
        .await
        .expect("infrastructure state");
}

pub fn infrastructure_n(observed: &Observed) -> Option<i64> {
    entry_state(&observed.spec, "Infrastructure", "foo")?["n"].as_i64()
}

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// A shoot on our seed with its control-plane namespace ready in the seed.
pub async fn shoot_on_seed(clusters: &Clusters) {
    garden_with_shoot(&clusters.garden.client(), "foo", json!({})).await;
    let seed = clusters.seed.client();
    wait_until("control-plane namespace", TIMEOUT, || async {
        Api::<Namespace>::all(seed.clone())
            .get_opt(CONTROL_PLANE)
            .await
            .expect("ns")
            .is_some()
    })
    .await;
}
