//! Deleting a Shoot in a CRD-served garden with the seed authorizer on: nothing but the agent
//! puts gardenlet's `gardener` finalizer on the Shoot, and that finalizer keeps the Shoot (and
//! with it the seed's graph edges to its ShootState) until the agent has removed everything of
//! it: the garden Bastion (via the garden's bastion controller and the agent's), the extension
//! objects with the control-plane namespace, the Cluster and the garden ShootState.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot, ShootState};
use seedlet_api::extensions::{self, Cluster, Infrastructure};
use seedlet_api::operations::Bastion;
use seedlet_sandbox::Sandbox;
use seedlet_testkit as common;
use serde_json::json;

use super::{TIMEOUT, create, seed_client, start};

const CONTROL_PLANE: &str = "shoot--dev--doomed";
/// How long the whole seed side may take to go once the Shoot is deleted.
const DELETION_BOUND: Duration = Duration::from_secs(30);

/// `seedlet_reconcile_errors_total` of the agent's two Cluster controllers together.
fn cluster_errors(agent: &seedlet_agent::RunningAgent) -> u64 {
    let text = agent.metrics.encode(jiff::Timestamp::now());
    ["cluster", "cluster-cleanup"]
        .iter()
        .map(|controller| {
            let prefix = format!("seedlet_reconcile_errors_total{{controller=\"{controller}\"}} ");
            text.lines()
                .find_map(|line| line.strip_prefix(&prefix))
                .map_or(0, |n| n.trim().parse::<u64>().expect("counter"))
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deleting_a_shoot_removes_its_seed_side_and_shoot_state_before_the_shoot_goes() {
    let env = start().await;
    let admin = env.garden.client();
    let seed_cluster = Sandbox::builder()
        .name("seed-a")
        .start()
        .await
        .expect("seed");
    let seed = seed_cluster.client();
    common::prepare_seed(&seed).await;
    let garden_identity = seed_client(&env.garden, "a").await;
    let config = common::agent_config(&common::AGENT_CONFIG.replace("name: local", "name: a"));
    let agent = common::start_agent_from(
        config,
        seed.clone(),
        Some(garden_identity),
        env.shutdown.clone(),
        |_| {},
    )
    .await;
    // As the other agent tests: the agent works (the authorizer has synced) before the shoot
    // comes.
    let seeds: Api<Seed> = Api::all(admin.clone());
    common::wait_until("seed a ready", Duration::from_secs(30), || async {
        common::condition_of(&seeds, "a", "GardenletReady", |s: &Seed| s.conditions())
            .await
            .is_some_and(|(status, _, _)| status == "True")
    })
    .await;
    let shoots: Api<Shoot> = Api::namespaced(admin.clone(), "garden-dev");
    create::<Shoot>(
        shoots.clone(),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "doomed"},
            "spec": {"seedName": "a", "region": "local", "provider": {"type": "local"},
                     "cloudProfile": {"name": "local"}, "networking": {"type": "calico"}}
        }),
    )
    .await;

    // The agent holds the Shoot with gardenlet's finalizer and builds its seed side.
    common::wait_until(
        "finalizer, Cluster and namespace",
        Duration::from_secs(60),
        || async {
            let held = shoots
                .get_opt("doomed")
                .await
                .expect("shoot")
                .is_some_and(|shoot| shoot.finalizers().iter().any(|f| f == "gardener"));
            let cluster = Api::<Cluster>::all(seed.clone())
                .get_opt(CONTROL_PLANE)
                .await
                .expect("cluster");
            let namespace = Api::<Namespace>::all(seed.clone())
                .get_opt(CONTROL_PLANE)
                .await
                .expect("namespace");
            held && cluster.is_some() && namespace.is_some()
        },
    )
    .await;
    // Extension state reaches the garden ShootState through the seed's own writes.
    let infrastructures: Api<Infrastructure> = Api::namespaced(seed.clone(), CONTROL_PLANE);
    create::<Infrastructure>(
        infrastructures.clone(),
        json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Infrastructure",
            "metadata": {"name": "doomed"}, "spec": {"type": "local"}
        }),
    )
    .await;
    infrastructures
        .patch_status(
            "doomed",
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"state": {"vpc": "v-1"}}})),
        )
        .await
        .expect("infrastructure state");
    let states: Api<ShootState> = Api::namespaced(admin.clone(), "garden-dev");
    common::wait_until("shootstate written by the seed", TIMEOUT, || async {
        states.get_opt("doomed").await.expect("state").is_some()
    })
    .await;
    // A Bastion of the shoot, with its extension object in the control-plane namespace.
    let bastions: Api<Bastion> = Api::namespaced(admin.clone(), "garden-dev");
    create::<Bastion>(
        bastions.clone(),
        json!({
            "apiVersion": "operations.gardener.cloud/v1alpha1", "kind": "Bastion",
            "metadata": {"name": "doomed-bastion"},
            "spec": {"shootRef": {"name": "doomed"}, "seedName": "a",
                     "sshPublicKey": "c3NoLWVkMjU1MTkgQUFBQQ=="}
        }),
    )
    .await;
    let extension_bastions: Api<extensions::Bastion> = Api::namespaced(seed.clone(), CONTROL_PLANE);
    common::wait_until("extension bastion", TIMEOUT, || async {
        extension_bastions
            .get_opt("doomed-bastion")
            .await
            .expect("extension bastion")
            .is_some()
    })
    .await;

    let started = Instant::now();
    shoots
        .delete("doomed", &DeleteParams::default())
        .await
        .expect("delete shoot");
    let clusters: Api<Cluster> = Api::all(seed.clone());
    let namespaces: Api<Namespace> = Api::all(seed.clone());
    common::wait_until("everything of the shoot gone", DELETION_BOUND, || async {
        shoots.get_opt("doomed").await.expect("shoot").is_none()
            && bastions
                .get_opt("doomed-bastion")
                .await
                .expect("bastion")
                .is_none()
            && states.get_opt("doomed").await.expect("state").is_none()
            && clusters
                .get_opt(CONTROL_PLANE)
                .await
                .expect("cluster")
                .is_none()
            && namespaces
                .get_opt(CONTROL_PLANE)
                .await
                .expect("namespace")
                .is_none()
    })
    .await;
    println!("shoot deletion finished in {:?}", started.elapsed());
    // The namespace took the extension objects along.
    assert!(
        Api::<Infrastructure>::all(seed.clone())
            .list(&Default::default())
            .await
            .expect("infrastructures")
            .items
            .is_empty()
    );
    assert!(
        Api::<extensions::Bastion>::all(seed.clone())
            .list(&Default::default())
            .await
            .expect("extension bastions")
            .items
            .is_empty()
    );
    // Once gone, the shoot's 403 is no failure that repeats: no error loop.
    let errors = cluster_errors(&agent);
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert_eq!(
        cluster_errors(&agent),
        errors,
        "no Cluster reconcile keeps failing after the shoot is gone"
    );
    // The other shoot of the seed is untouched.
    assert!(
        clusters
            .get_opt("shoot--dev--shoot-a")
            .await
            .expect("cluster")
            .is_some()
    );
    drop(agent);
    env.shutdown.cancel();
}
