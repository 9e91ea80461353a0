//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on real Bastions and Shoots while a fake clock
//! stands at chosen times.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use seedlet_api::core::Shoot;
use seedlet_api::operations::Bastion;
use seedlet_runtime::controller::Reconciler as _;
use serde_json::json;

use super::BastionExpiry;
use crate::testing::{Env, create, ensure_namespace};

const NS: &str = "garden-dev";
const MAX_LIFETIME: Duration = Duration::from_secs(24 * 3600);

fn ctx(env: &Env) -> Arc<BastionExpiry> {
    Arc::new(BastionExpiry {
        client: env.client.clone(),
        max_lifetime: MAX_LIFETIME,
        clock: env.clock(),
        concurrency: 1,
    })
}

async fn shoot(env: &Env, seed: &str) {
    ensure_namespace(&env.client, NS).await;
    let _: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": NS},
               "spec": {"region": "local", "seedName": seed,
                        "provider": {"type": "local", "workers": []}}}),
    )
    .await;
}

async fn bastion(env: &Env) -> Bastion {
    ensure_namespace(&env.client, NS).await;
    create(
        &env.client,
        json!({"apiVersion": "operations.gardener.cloud/v1alpha1", "kind": "Bastion",
               "metadata": {"name": "b", "namespace": NS},
               "spec": {"shootRef": {"name": "s"}, "seedName": "local",
                        "sshPublicKey": "ssh-ed25519 AAAA user"}}),
    )
    .await
}

fn bastions(env: &Env) -> Api<Bastion> {
    Api::namespaced(env.client.clone(), NS)
}

#[tokio::test]
async fn a_live_bastion_is_checked_again_at_its_expiration_and_deleted_after_it() {
    let env = Env::start().await;
    shoot(&env, "local").await;
    let created = bastion(&env).await;
    let born = created.metadata.creation_timestamp.clone().unwrap().0;
    let expires = born + SignedDuration::from_mins(60);
    let status = json!({"status": {"expirationTimestamp": expires.to_string()}});
    let with_expiry = bastions(&env)
        .patch_status("b", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let ctx = ctx(&env);

    env.clock.set(born + SignedDuration::from_mins(15));
    let action = ctx
        .clone()
        .reconcile(Arc::new(with_expiry.clone()))
        .await
        .unwrap();
    assert_eq!(action, Action::requeue(Duration::from_secs(45 * 60)));
    assert!(bastions(&env).get_opt("b").await.unwrap().is_some());

    env.clock.set(expires + SignedDuration::from_secs(1));
    ctx.reconcile(Arc::new(with_expiry)).await.unwrap();
    assert!(bastions(&env).get_opt("b").await.unwrap().is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_bastion_whose_shoot_moved_or_is_gone_is_deleted() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let orphan = bastion(&env).await;
    env.clock
        .set(orphan.metadata.creation_timestamp.clone().unwrap().0);
    ctx.clone().reconcile(Arc::new(orphan)).await.unwrap();
    assert!(
        bastions(&env).get_opt("b").await.unwrap().is_none(),
        "shoot is gone"
    );

    shoot(&env, "other").await;
    let moved = bastion(&env).await;
    ctx.reconcile(Arc::new(moved)).await.unwrap();
    assert!(
        bastions(&env).get_opt("b").await.unwrap().is_none(),
        "shoot is on another seed"
    );
    env.shutdown().await;
}
