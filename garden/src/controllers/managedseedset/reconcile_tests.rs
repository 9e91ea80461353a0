//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on a real ManagedSeedSet while the test plays
//! the seed agent and gardenlet by writing the status of the replicas' Shoots, ManagedSeeds and
//! Seeds; the fake clock stamps `pendingReplica.since` and the Shoot deletion confirmation. The
//! decisions themselves have table tests in `replica.rs` and `desired.rs`; these read back what one
//! pass writes (objects, status, finalizer, Events, the error's reason).

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Event;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::annotations;
use seedlet_api::seedmanagement::{ManagedSeed, ManagedSeedSet, ManagedSeedSetStatus};
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::{Value, json};

use super::ManagedSeedSets;
use super::replica::PROTECT_FROM_DELETION;
use crate::testing::{self, Env, create};

const NS: &str = "garden";
const SYNC_PERIOD: Duration = Duration::from_secs(60);

fn ctx(env: &Env, max_shoot_retries: i32) -> Arc<ManagedSeedSets> {
    Arc::new(ManagedSeedSets {
        client: env.client.clone(),
        max_shoot_retries,
        sync_period: SYNC_PERIOD,
        clock: env.clock(),
        events: env.events(),
        concurrency: 1,
    })
}

/// Creates ManagedSeedSet `garden/infra` with `replicas`, selecting `set: infra`, whose templates
/// put the replica's name into the DNS and ingress domains.
async fn set(env: &Env, replicas: i32) -> Arc<ManagedSeedSet> {
    Arc::new(
        create(
            &env.client,
            json!({
                "apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "ManagedSeedSet",
                "metadata": {"name": "infra", "namespace": NS},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"set": "infra"}},
                    "shootTemplate": {
                        "metadata": {"labels": {"set": "infra"}},
                        "spec": {"region": "local", "provider": {"type": "local", "workers": []},
                                 "dns": {"domain": "replica-name.example.com"}},
                    },
                    "template": {
                        "metadata": {"labels": {"set": "infra"}},
                        "spec": {"gardenlet": {"config": {"seedConfig": {"spec": {
                            "ingress": {"domain": "in.replica-name.example.com"}}}}}},
                    },
                },
            }),
        )
        .await,
    )
}

fn sets(env: &Env) -> Api<ManagedSeedSet> {
    Api::namespaced(env.client.clone(), NS)
}

fn shoots(env: &Env) -> Api<Shoot> {
    Api::namespaced(env.client.clone(), NS)
}

fn managed_seeds(env: &Env) -> Api<ManagedSeed> {
    Api::namespaced(env.client.clone(), NS)
}

async fn status(env: &Env) -> ManagedSeedSetStatus {
    sets(env)
        .get("infra")
        .await
        .unwrap()
        .status
        .unwrap_or_default()
}

/// The pending replica's name, reason and retries.
fn pending(status: &ManagedSeedSetStatus) -> Option<(&str, &str, Option<i32>)> {
    status
        .pending_replica
        .as_ref()
        .map(|p| (p.name.as_str(), p.reason.as_str(), p.retries))
}

fn since(status: &ManagedSeedSetStatus) -> Option<Timestamp> {
    status
        .pending_replica
        .as_ref()
        .and_then(|p| p.since.as_ref())
        .map(|t| t.0)
}

/// `(reason, message)` of the Events about the set.
async fn events(env: &Env) -> Vec<(String, String)> {
    Api::<Event>::namespaced(env.client.clone(), NS)
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some("infra"))
        .map(|e| (e.reason.unwrap_or_default(), e.message.unwrap_or_default()))
        .collect()
}

async fn has_event(env: &Env, reason: &str, message: &str) -> bool {
    events(env)
        .await
        .contains(&(reason.to_owned(), message.to_owned()))
}

async fn merge<K>(api: &Api<K>, name: &str, patch: Value)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

/// Plays the seed agent: the Shoot's create operation observed in `state`.
async fn shoot_operation(env: &Env, name: &str, state: &str) {
    let shoot = shoots(env).get(name).await.unwrap();
    let status = json!({"status": {
        "observedGeneration": shoot.metadata.generation,
        "lastOperation": {"type": "Create", "state": state, "description": "", "progress": 100,
                          "lastUpdateTime": "2025-01-01T00:00:00Z"}}});
    shoots(env)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

fn condition(type_: &str) -> Value {
    json!({"type": type_, "status": "True", "reason": "Checked", "message": "checked",
           "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z"})
}

/// Plays gardenlet: ManagedSeed `name` registered its Seed.
async fn register(env: &Env, name: &str) {
    let managed_seed = managed_seeds(env).get(name).await.unwrap();
    let status = json!({"status": {"observedGeneration": managed_seed.metadata.generation,
                                   "conditions": [condition("SeedRegistered")]}});
    managed_seeds(env)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// Plays the registered agent: Seed `name`, selected by the set, ready.
async fn ready_seed(env: &Env, name: &str) {
    testing::seed(&env.client, name).await;
    let seeds: Api<Seed> = Api::all(env.client.clone());
    merge(
        &seeds,
        name,
        json!({"metadata": {"labels": {"set": "infra"}}}),
    )
    .await;
    let seed = seeds.get(name).await.unwrap();
    let status = json!({"status": {"observedGeneration": seed.metadata.generation, "conditions": [
        condition("GardenletReady"), condition("SeedSystemComponentsHealthy")]}});
    seeds
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

async fn healthy_shoot(env: &Env, name: &str) {
    let label = json!({"metadata": {"labels": {"shoot.gardener.cloud/status": "healthy"}}});
    merge(&shoots(env), name, label).await;
}

/// Takes the pending replica `name`, whose Shoot the set just created, to ready: Shoot
/// reconciled, one pass creating its ManagedSeed, registered, Seed ready, Shoot healthy.
async fn bring_up(env: &Env, ctx: &Arc<ManagedSeedSets>, set: &Arc<ManagedSeedSet>, name: &str) {
    shoot_operation(env, name, "Succeeded").await;
    ctx.clone().reconcile(set.clone()).await.unwrap();
    assert_eq!(
        pending(&status(env).await),
        Some((name, "ManagedSeedPreparing", None))
    );
    register(env, name).await;
    ready_seed(env, name).await;
    healthy_shoot(env, name).await;
}

#[tokio::test]
async fn replicas_come_up_one_at_a_time_from_the_templates() {
    let env = Env::start().await;
    let set = set(&env, 2).await;
    let ctx = ctx(&env, 3);
    let t0 = env.clock.now();

    let action = ctx.clone().reconcile(set.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC_PERIOD));
    let stored = sets(&env).get("infra").await.unwrap();
    assert_eq!(stored.finalizers(), ["gardener"]);
    let shoot = shoots(&env).get("infra-0").await.unwrap();
    assert_eq!(shoot.labels()["set"], "infra");
    assert_eq!(
        shoot.spec.dns.as_ref().and_then(|d| d.domain.as_deref()),
        Some("infra-0.example.com")
    );
    let owner = &shoot.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("ManagedSeedSet", Some(true))
    );
    assert_eq!(Some(&owner.uid), set.metadata.uid.as_ref());
    let status = status(&env).await;
    assert_eq!(status.observed_generation, stored.metadata.generation);
    assert_eq!(
        (
            status.replicas,
            status.ready_replicas,
            status.next_replica_number
        ),
        (1, Some(0), Some(1))
    );
    assert_eq!(
        pending(&status),
        Some(("infra-0", "ShootReconciling", None))
    );
    assert_eq!(since(&status), Some(t0));
    assert!(has_event(&env, "CreatingShoot", "Creating Shoot garden/infra-0").await);

    // While infra-0 reconciles, the set waits for it; the pending entry keeps its time.
    env.clock.advance(SignedDuration::from_mins(1));
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let status = self::status(&env).await;
    assert_eq!(
        pending(&status),
        Some(("infra-0", "ShootReconciling", None))
    );
    assert_eq!(since(&status), Some(t0));
    assert!(
        has_event(
            &env,
            "WaitingForShootReconciled",
            "Waiting for Shoot garden/infra-0 to be reconciled"
        )
        .await
    );
    assert!(shoots(&env).get_opt("infra-1").await.unwrap().is_none());

    // Reconciled: the ManagedSeed from the template.
    shoot_operation(&env, "infra-0", "Succeeded").await;
    env.clock.advance(SignedDuration::from_mins(1));
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let managed_seed = managed_seeds(&env).get("infra-0").await.unwrap();
    assert_eq!(managed_seed.shoot_name(), Some("infra-0"));
    assert_eq!(managed_seed.labels()["set"], "infra");
    assert_eq!(
        managed_seed.spec.gardenlet.as_ref().unwrap()["config"]["seedConfig"]["spec"]["ingress"]["domain"],
        "in.infra-0.example.com"
    );
    assert_eq!(managed_seed.owner_references()[0].name, "infra");
    let status = self::status(&env).await;
    assert_eq!(
        pending(&status),
        Some(("infra-0", "ManagedSeedPreparing", None))
    );
    assert_eq!(since(&status), Some(env.clock.now()));
    assert!(
        has_event(
            &env,
            "CreatingManagedSeed",
            "Creating ManagedSeed garden/infra-0"
        )
        .await
    );

    // Registered, then its Seed (joined by name and selector) ready, then the Shoot healthy.
    register(&env, "infra-0").await;
    ctx.clone().reconcile(set.clone()).await.unwrap();
    assert_eq!(
        pending(&self::status(&env).await),
        Some(("infra-0", "SeedNotReady", None))
    );
    assert!(
        has_event(
            &env,
            "WaitingForSeedReady",
            "Waiting for Seed infra-0 to be ready"
        )
        .await
    );
    ready_seed(&env, "infra-0").await;
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let status = self::status(&env).await;
    assert_eq!(pending(&status), Some(("infra-0", "ShootNotHealthy", None)));
    assert_eq!(status.ready_replicas, Some(0), "not ready while unhealthy");
    assert!(shoots(&env).get_opt("infra-1").await.unwrap().is_none());

    // Ready: only now the second replica.
    healthy_shoot(&env, "infra-0").await;
    ctx.clone().reconcile(set.clone()).await.unwrap();
    assert!(shoots(&env).get_opt("infra-1").await.unwrap().is_some());
    let status = self::status(&env).await;
    assert_eq!(
        (
            status.replicas,
            status.ready_replicas,
            status.next_replica_number
        ),
        (2, Some(1), Some(2))
    );
    assert_eq!(
        pending(&status),
        Some(("infra-1", "ShootReconciling", None))
    );
    env.shutdown().await;
}

#[tokio::test]
async fn scale_in_deletes_the_not_ready_replica_with_confirmation() {
    let env = Env::start().await;
    let set = set(&env, 2).await;
    let ctx = ctx(&env, 3);
    ctx.clone().reconcile(set.clone()).await.unwrap();
    bring_up(&env, &ctx, &set, "infra-0").await;
    ctx.clone().reconcile(set.clone()).await.unwrap();
    assert_eq!(
        pending(&status(&env).await),
        Some(("infra-1", "ShootReconciling", None))
    );
    // A finalizer of the agent keeps the deleted Shoot visible.
    merge(
        &shoots(&env),
        "infra-1",
        json!({"metadata": {"finalizers": ["test.seedlet/keep"]}}),
    )
    .await;

    merge(&sets(&env), "infra", json!({"spec": {"replicas": 1}})).await;
    env.clock.advance(SignedDuration::from_hours(1));
    let deleted_at = env.clock.now();
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let victim = shoots(&env).get("infra-1").await.unwrap();
    assert!(victim.metadata.deletion_timestamp.is_some());
    assert_eq!(
        victim.annotations()[annotations::CONFIRMATION_DELETION],
        "true"
    );
    assert_eq!(
        victim.annotations()[annotations::TIMESTAMP]
            .parse::<Timestamp>()
            .unwrap(),
        deleted_at
    );
    let kept = shoots(&env).get("infra-0").await.unwrap();
    assert!(kept.metadata.deletion_timestamp.is_none());
    assert!(
        managed_seeds(&env)
            .get_opt("infra-0")
            .await
            .unwrap()
            .is_some()
    );
    let status = status(&env).await;
    assert_eq!(status.observed_generation, Some(2));
    assert_eq!(pending(&status), Some(("infra-1", "ShootDeleting", None)));
    assert_eq!(since(&status), Some(deleted_at));
    assert!(has_event(&env, "DeletingShoot", "Deleting Shoot garden/infra-1").await);

    // It waits for the Shoot to go, then nothing is pending.
    env.clock.advance(SignedDuration::from_mins(1));
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let status = self::status(&env).await;
    assert_eq!(pending(&status), Some(("infra-1", "ShootDeleting", None)));
    assert_eq!(since(&status), Some(deleted_at));
    merge(
        &shoots(&env),
        "infra-1",
        json!({"metadata": {"finalizers": null}}),
    )
    .await;
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let status = self::status(&env).await;
    assert_eq!(pending(&status), None);
    assert_eq!((status.replicas, status.ready_replicas), (1, Some(1)));
    env.shutdown().await;
}

#[tokio::test]
async fn protected_replicas_are_not_scaled_in() {
    let env = Env::start().await;
    let set = set(&env, 1).await;
    let ctx = ctx(&env, 3);
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let protect = json!({"metadata": {"annotations": {PROTECT_FROM_DELETION: "true"}}});
    merge(&shoots(&env), "infra-0", protect).await;
    merge(&sets(&env), "infra", json!({"spec": {"replicas": 0}})).await;

    let error = ctx.clone().reconcile(set.clone()).await.unwrap_err();
    assert_eq!(error.reason(), "NoDeletableReplicas");
    assert_eq!(error.to_string(), "no deletable replicas found");
    assert!(has_event(&env, "ReconcileError", "no deletable replicas found").await);
    let shoot = shoots(&env).get("infra-0").await.unwrap();
    assert!(shoot.metadata.deletion_timestamp.is_none());
    // The status is written on error too.
    let status = status(&env).await;
    assert_eq!(status.observed_generation, Some(2));
    assert_eq!(status.replicas, 1);
    env.shutdown().await;
}

#[tokio::test]
async fn a_failed_shoot_is_retried_max_shoot_retries_times_then_given_up() {
    let env = Env::start().await;
    let set = set(&env, 1).await;
    let ctx = ctx(&env, 3);
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let operation = |shoot: &Shoot| shoot.annotations().get(annotations::OPERATION).cloned();

    for retries in 1..=3 {
        shoot_operation(&env, "infra-0", "Failed").await;
        ctx.clone().reconcile(set.clone()).await.unwrap();
        let shoot = shoots(&env).get("infra-0").await.unwrap();
        assert_eq!(
            operation(&shoot).as_deref(),
            Some("retry"),
            "retry {retries}"
        );
        assert_eq!(
            pending(&status(&env).await),
            Some(("infra-0", "ShootReconciling", Some(retries)))
        );
        // A retry asked for and not yet taken up is not asked again.
        ctx.clone().reconcile(set.clone()).await.unwrap();
        assert_eq!(
            pending(&status(&env).await),
            Some(("infra-0", "ShootReconciling", Some(retries)))
        );
        // The agent takes it up and fails again.
        let taken = json!({"metadata": {"annotations": {annotations::OPERATION: null}}});
        merge(&shoots(&env), "infra-0", taken).await;
    }
    assert!(
        has_event(
            &env,
            "RetryingShootReconciliation",
            "Retrying Shoot garden/infra-0 reconciliation"
        )
        .await
    );

    shoot_operation(&env, "infra-0", "Failed").await;
    env.clock.advance(SignedDuration::from_mins(5));
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let given_up_at = env.clock.now();
    let status = self::status(&env).await;
    assert_eq!(
        pending(&status),
        Some(("infra-0", "ShootReconcileFailed", Some(3)))
    );
    assert_eq!(since(&status), Some(given_up_at));
    assert_eq!(operation(&shoots(&env).get("infra-0").await.unwrap()), None);
    assert!(
        has_event(
            &env,
            "NotRetryingShootReconciliation",
            "Not retrying Shoot garden/infra-0 reconciliation since max retries have been reached"
        )
        .await
    );

    // Later passes do not start another round.
    env.clock.advance(SignedDuration::from_mins(5));
    ctx.clone().reconcile(set.clone()).await.unwrap();
    let status = self::status(&env).await;
    assert_eq!(
        pending(&status),
        Some(("infra-0", "ShootReconcileFailed", Some(3)))
    );
    assert_eq!(since(&status), Some(given_up_at));
    assert_eq!(operation(&shoots(&env).get("infra-0").await.unwrap()), None);
    env.shutdown().await;
}

#[tokio::test]
async fn a_deleting_set_deletes_its_replicas_before_dropping_its_finalizer() {
    let env = Env::start().await;
    let set = set(&env, 1).await;
    let ctx = ctx(&env, 3);
    ctx.clone().reconcile(set.clone()).await.unwrap();
    sets(&env)
        .delete("infra", &DeleteParams::default())
        .await
        .unwrap();

    ctx.clone().reconcile(set.clone()).await.unwrap();
    assert!(shoots(&env).get_opt("infra-0").await.unwrap().is_none());
    assert_eq!(
        pending(&status(&env).await),
        Some(("infra-0", "ShootDeleting", None))
    );
    assert!(sets(&env).get_opt("infra").await.unwrap().is_some());

    ctx.clone().reconcile(set.clone()).await.unwrap();
    assert!(
        sets(&env).get_opt("infra").await.unwrap().is_none(),
        "no replicas left: the finalizer is gone and the set with it"
    );
    env.shutdown().await;
}
