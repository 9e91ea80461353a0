//! Reconcile tests against in-process garden and seed sandboxes: [`reconcile`] is called directly
//! on our real Seed and the status, finalizer, seed namespaces, BackupBucket and Events are read
//! back.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace};
use kube::api::DeleteParams;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{BackupBucket, Seed, Shoot};
use serde_json::{Value, json};

use super::SeedStatus;
use super::delete::SHOOTS_REQUEUE;
use crate::testing::{Env, SEED, create, ensure_namespace};
use seedlet_runtime::controller::{Reason, Reconciler};

const SYNC: Duration = Duration::from_secs(60);

fn ctx(env: &Env, kubernetes_version_check: bool) -> Arc<SeedStatus> {
    ctx_with_seed(env, env.seed.clone(), kubernetes_version_check)
}

/// A context whose seed cluster is `seed` instead of the environment's.
fn ctx_with_seed(env: &Env, seed: kube::Client, kubernetes_version_check: bool) -> Arc<SeedStatus> {
    Arc::new(SeedStatus {
        clock: env.clock(),
        config: Arc::new(seedlet_config::GardenletConfiguration::default()),
        events: env.events(),
        kubernetes_version_check,
        seed,
        seed_name: SEED.to_owned(),
        garden: env.garden.clone(),
        sync_period: SYNC,
        gardener: crate::gardener_identity::gardener_info(),
        clashes: Default::default(),
        claim: Default::default(),
    })
}

async fn seed(env: &Env, backup: Option<Value>) -> Arc<Seed> {
    let mut spec = json!({"provider": {"type": "local", "region": "local", "zones": ["a", "b"]},
                          "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}});
    if let Some(backup) = backup {
        spec["backup"] = backup;
    }
    Arc::new(
        create(
            &env.garden,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
                   "metadata": {"name": SEED}, "spec": spec}),
        )
        .await,
    )
}

async fn stored(env: &Env) -> Value {
    serde_json::to_value(
        Api::<Seed>::all(env.garden.clone())
            .get(SEED)
            .await
            .unwrap(),
    )
    .unwrap()
}

#[tokio::test]
async fn a_seed_gets_its_status_finalizer_namespace_labels_and_backup_bucket() {
    let env = Env::start().await;
    ensure_namespace(&env.garden, "seed-local").await;
    let backup = json!({"provider": "local", "credentialsRef":
        {"apiVersion": "v1", "kind": "Secret", "name": "backup", "namespace": "garden"}});
    let created = seed(&env, Some(backup)).await;

    let action = ctx(&env, false).reconcile(created.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    let written = stored(&env).await;
    let status = &written["status"];
    assert_eq!(status["lastOperation"]["type"], "Reconcile");
    assert_eq!(status["lastOperation"]["state"], "Succeeded");
    assert_eq!(
        status["observedGeneration"],
        written["metadata"]["generation"]
    );
    assert_eq!(status["gardener"]["name"], "seedlet-agent");
    assert!(
        status["kubernetesVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("v1."))
    );
    // The cluster identity is created in the seed when missing and reported.
    let identity = Api::<ConfigMap>::namespaced(env.seed.clone(), "kube-system")
        .get("cluster-identity")
        .await
        .unwrap();
    let expected = identity.data.unwrap()["cluster-identity"].clone();
    assert_eq!(status["clusterIdentity"], expected.as_str());
    assert_eq!(written["metadata"]["finalizers"], json!(["gardener"]));
    let garden = Api::<Namespace>::all(env.seed.clone())
        .get("garden")
        .await
        .unwrap();
    assert_eq!(garden.labels()["role"], "garden");
    assert_eq!(garden.labels()["gardener.cloud/role"], "garden");
    let uid = created.uid().unwrap();
    let bucket = Api::<BackupBucket>::all(env.garden.clone())
        .get(&uid)
        .await
        .unwrap();
    assert_eq!(bucket.spec.seed_name.as_deref(), Some(SEED));
    assert_eq!(bucket.spec.provider.region, "local");
    assert_eq!(bucket.owner_references()[0].name, SEED);
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_seed_namespace_and_an_old_kubernetes_fail_the_operation() {
    let env = Env::start().await;
    let created = seed(&env, None).await;
    let error = ctx(&env, false)
        .reconcile(created.clone())
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "SeedNamespaceError");
    let written = stored(&env).await;
    assert_eq!(written["status"]["lastOperation"]["state"], "Error");
    assert!(
        written["status"]["lastOperation"]["description"]
            .as_str()
            .unwrap()
            .ends_with("Operation will be retried."),
        "{}",
        written["status"]["lastOperation"]
    );
    assert!(
        written["metadata"]["finalizers"].is_null(),
        "no finalizer before the checks pass"
    );

    // A seed reporting Kubernetes 1.31 is below the minimum when the check is on.
    ensure_namespace(&env.garden, "seed-local").await;
    let old = seedlet_sandbox::Sandbox::builder()
        .name("old-seed")
        .reported_version("v1.31.4")
        .start()
        .await
        .unwrap();
    // The same seed cluster, upgraded to report 1.31: it keeps the identity the Seed carries.
    let identity = stored(&env).await["status"]["clusterIdentity"].clone();
    ensure_namespace(&old.client(), "kube-system").await;
    let _: ConfigMap = create(
        &old.client(),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cluster-identity", "namespace": "kube-system"},
               "data": {"cluster-identity": identity}}),
    )
    .await;
    let error = ctx_with_seed(&env, old.client(), true)
        .reconcile(created.clone())
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "K8SVersionTooOld");
    let written = stored(&env).await;
    assert_eq!(written["status"]["lastOperation"]["state"], "Error");
    assert!(
        written["status"]["lastOperation"]["description"]
            .as_str()
            .unwrap()
            .contains("v1.31.4"),
        "{}",
        written["status"]["lastOperation"]
    );
    old.shutdown().await;

    // The sandbox itself reports v1.32, which passes the check.
    ctx(&env, true).reconcile(created).await.unwrap();
    env.shutdown().await;
}

#[tokio::test]
async fn deletion_waits_for_the_seeds_shoots() {
    let env = Env::start().await;
    ensure_namespace(&env.garden, "seed-local").await;
    let created = seed(&env, None).await;
    let ctx = ctx(&env, false);
    ctx.clone().reconcile(created.clone()).await.unwrap();
    ensure_namespace(&env.garden, "garden-dev").await;
    let _: Shoot = create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": "garden-dev"},
               "spec": {"region": "local", "seedName": SEED,
                        "provider": {"type": "local", "workers": []}}}),
    )
    .await;
    let seeds = Api::<Seed>::all(env.garden.clone());
    seeds.delete(SEED, &DeleteParams::default()).await.unwrap();

    assert_eq!(
        ctx.clone().reconcile(created.clone()).await.unwrap(),
        Action::requeue(SHOOTS_REQUEUE)
    );
    let written = stored(&env).await;
    assert_eq!(written["status"]["lastOperation"]["type"], "Delete");
    assert_eq!(written["metadata"]["finalizers"], json!(["gardener"]));
    let events = Api::<Event>::all(env.garden.clone())
        .list(&Default::default())
        .await
        .unwrap();
    assert!(events.items.iter().any(|e| e.message.as_deref()
        == Some("Can't delete Seed, because the following objects are still referencing it: Shoots=[garden-dev/s]")));

    Api::<Shoot>::namespaced(env.garden.clone(), "garden-dev")
        .delete("s", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        ctx.reconcile(created).await.unwrap(),
        Action::await_change()
    );
    assert!(seeds.get_opt(SEED).await.unwrap().is_none());
    env.shutdown().await;
}

async fn set_status(env: &Env, status: Value) {
    Api::<Seed>::all(env.garden.clone())
        .patch_status(
            SEED,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&json!({"status": status})),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn a_seed_of_another_seed_cluster_is_left_alone_reported_and_looked_at_ever_later() {
    let env = Env::start().await;
    ensure_namespace(&env.garden, "seed-local").await;
    let created = seed(&env, None).await;
    let theirs = json!({"id": "agent-a-7f3k", "name": "seedlet-agent", "version": "0"});
    set_status(
        &env,
        json!({"clusterIdentity": "cluster-of-agent-a", "gardener": theirs}),
    )
    .await;
    let ctx = ctx(&env, false);
    let before = stored(&env).await;

    let error = ctx.clone().reconcile(created.clone()).await.unwrap_err();
    assert_eq!(error.reason(), "SeedClaimedByAnotherAgent");
    assert!(
        ctx.claim.claimed_by_another(),
        "the heartbeat is told to leave the Lease alone"
    );
    let text = seedlet_runtime::error_chain(&error).to_string();
    assert!(
        text.contains("agent-a-7f3k") && text.contains(&ctx.gardener.id),
        "{text}"
    );
    let after = stored(&env).await;
    assert_eq!(after["status"], before["status"], "nothing written");
    assert_eq!(
        after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
        "not even a no-op write"
    );
    let events = Api::<Event>::all(env.garden.clone())
        .list(&Default::default())
        .await
        .unwrap();
    let warning = events
        .items
        .iter()
        .find(|e| e.reason.as_deref() == Some("SeedClaimedByAnotherAgent"))
        .expect("a Warning Event about the clash");
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    let message = warning.message.as_deref().unwrap_or_default();
    assert!(
        message.contains("agent-a-7f3k") && message.contains(&ctx.gardener.id),
        "{message}"
    );

    let delays: Vec<Action> = (0..4)
        .map(|_| ctx.clone().error_policy(&created.clone(), &error))
        .collect();
    let expected: Vec<Action> = [1, 2, 4, 8]
        .map(|s| Action::requeue(Duration::from_secs(s)))
        .to_vec();
    assert_eq!(delays, expected, "the delay doubles");

    // The other agent is gone and the Seed names this seed cluster again: back to normal.
    let ours = Api::<ConfigMap>::namespaced(env.seed.clone(), "kube-system")
        .get_opt("cluster-identity")
        .await
        .unwrap()
        .and_then(|c| c.data)
        .map(|d| d["cluster-identity"].clone())
        .unwrap();
    set_status(&env, json!({"clusterIdentity": ours})).await;
    ctx.clone().reconcile(created.clone()).await.unwrap();
    assert_eq!(
        stored(&env).await["status"]["gardener"]["id"],
        ctx.gardener.id.as_str()
    );
    assert!(
        !ctx.claim.claimed_by_another(),
        "the heartbeat renews again"
    );
    assert_eq!(
        ctx.error_policy(&created, &error),
        Action::requeue(Duration::from_secs(1)),
        "a normal reconcile ends the streak"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn an_earlier_process_of_this_agent_is_not_another_agent() {
    let env = Env::start().await;
    ensure_namespace(&env.garden, "seed-local").await;
    let created = seed(&env, None).await;
    let first = ctx(&env, false);
    first.clone().reconcile(created.clone()).await.unwrap();
    // A restart (or the other replica after a leader hand-over): same seed cluster, new id.
    let mut restarted = Arc::into_inner(ctx(&env, false)).unwrap();
    restarted.gardener.id = "seedlet-agent-restarted-x9".into();
    Arc::new(restarted).reconcile(created).await.unwrap();
    let status = &stored(&env).await["status"];
    assert_eq!(status["gardener"]["id"], "seedlet-agent-restarted-x9");
    assert_eq!(status["lastOperation"]["state"], "Succeeded");
    env.shutdown().await;
}
