//! The Shoot controller on a real seed: with the simulated provider of
//! `landscape::shoot_provider` answering the extension objects in the real seed, a Shoot with a
//! worker pool reaches `lastOperation` Create Succeeded 100 % through the agent process (under its
//! chart's RBAC and the seed authorizer), and its deletion runs the delete flow until the Shoot,
//! its Cluster and its namespace are gone.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use seedlet_api::core::Shoot;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::checks::{create, wait_state};
use super::landscape::SeedCluster;

const PROJECT_NAMESPACE: &str = "garden-dev";
/// Creation and deletion each: the flows poll extension objects from 250 ms up to 5–10 s.
const FLOW_TIMEOUT: Duration = Duration::from_secs(120);

/// Creates Shoot `flow` on `seed` (Project `dev` and CloudProfile `local` exist), waits for
/// Create Succeeded 100 %, deletes it and waits until it, its Cluster and namespace are gone.
/// Returns (creation, deletion) durations.
pub async fn create_and_delete(garden: &kube::Client, seed: &SeedCluster) -> (Duration, Duration) {
    let stop = CancellationToken::new();
    let releases = seedlet_landscape::shoot_provider::Releases::default();
    tokio::spawn(seedlet_landscape::shoot_provider::run_recording(
        seed.admin.clone(),
        stop.clone(),
        releases.clone(),
    ));
    let agent = [&seed.agent];
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let started = Instant::now();
    create::<Shoot>(
        shoots.clone(),
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "flow", "namespace": PROJECT_NAMESPACE},
            "spec": {"cloudProfile": {"name": "local"}, "region": "local", "seedName": seed.name,
                "kubernetes": {"version": "1.32.0"},
                "networking": {"type": "calico", "pods": "10.3.0.0/16", "services": "10.4.0.0/16"},
                "provider": {"type": "local", "workers": [{"name": "pool-a", "minimum": 1, "maximum": 2,
                    "machine": {"type": "local", "image": {"name": "local", "version": "1.0.0"}}}]}}}),
    )
    .await;
    wait_state(
        "Shoot flow: Create Succeeded 100 %",
        FLOW_TIMEOUT,
        &agent,
        || async {
            let shoot = shoots.get("flow").await.map_err(|e| e.to_string())?;
            let operation = shoot.last_operation().cloned();
            match operation {
                Some(op)
                    if format!("{:?}/{:?}/{}", op.type_, op.state, op.progress)
                        == "Create/Succeeded/100" =>
                {
                    Ok(())
                }
                other => Err(format!("{other:?}")),
            }
        },
    )
    .await;
    let created = started.elapsed();

    let deleting = Instant::now();
    shoots
        .delete("flow", &Default::default())
        .await
        .expect("shoot deleted");
    let namespaces: Api<Namespace> = Api::all(seed.admin.clone());
    wait_state(
        "Shoot flow: Shoot and namespace gone",
        FLOW_TIMEOUT,
        &agent,
        || async {
            let shoot = shoots.get_opt("flow").await.map_err(|e| e.to_string())?;
            let namespace = namespaces
                .get_opt("shoot--dev--flow")
                .await
                .map_err(|e| e.to_string())?;
            match (shoot, namespace) {
                (None, None) => Ok(()),
                (shoot, namespace) => Err(format!(
                    "shoot: {:?}, namespace present: {}",
                    shoot.and_then(|s| s.status).and_then(|s| s.last_operation),
                    namespace.is_some()
                )),
            }
        },
    )
    .await;
    let deleted = deleting.elapsed();
    stop.cancel();
    let released = releases.lock().expect("releases").clone();
    assert!(
        released
            .iter()
            .all(|r| r.confirmed && !r.namespace_terminating),
        "every extension object deleted with confirmation before the namespace: {released:?}"
    );
    let position = |kind: &str| {
        released
            .iter()
            .position(|r| r.kind == kind)
            .unwrap_or_else(|| panic!("no {kind} released: {released:?}"))
    };
    assert!(
        position("Worker") < position("Infrastructure"),
        "{released:?}"
    );
    (created, deleted)
}
