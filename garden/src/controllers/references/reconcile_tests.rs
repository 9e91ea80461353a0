//! Reconcile tests against an in-process garden sandbox: each kind's controller is called
//! through [`Reconciler::reconcile`](seedlet_runtime::controller::Reconciler::reconcile) on real
//! Shoots and Seeds and the `gardener.cloud/reference-protection` finalizers are read back.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::{Value, json};

use super::{Error, REFERENCE_PROTECTION, References, Referrer};
use crate::testing::{Env, create, ensure_namespace};

const NS: &str = "garden-dev";

fn ctx(env: &Env) -> kube::Client {
    env.client.clone()
}

/// One reconcile of `object` by the reference controller of its kind.
async fn reconcile<K: Referrer>(object: Arc<K>, client: kube::Client) -> Result<Action, Error> {
    References::<K>::new(client, 1).reconcile(object).await
}

fn resource(name: &str, target: &str) -> Value {
    json!({"name": name, "resourceRef": {"apiVersion": "v1", "kind": "Secret", "name": target}})
}

async fn secret(env: &Env, namespace: &str, name: &str) {
    let _: Secret = create(
        &env.client,
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": name, "namespace": namespace}}),
    )
    .await;
}

async fn protected<K>(api: &Api<K>, name: &str) -> bool
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.get(name)
        .await
        .unwrap()
        .finalizers()
        .iter()
        .any(|f| f == REFERENCE_PROTECTION)
}

#[tokio::test]
async fn a_shoot_protects_what_it_references_and_itself_once_all_exist() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    ensure_namespace(&env.client, NS).await;
    for name in ["a", "dns"] {
        secret(&env, NS, name).await;
    }
    let _: ConfigMap = create(
        &env.client,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "audit", "namespace": NS}}),
    )
    .await;
    let shoot: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": NS},
               "spec": {"provider": {"type": "local", "workers": []}, "region": "local",
                        "dns": {"providers": [{"type": "aws", "credentialsRef":
                            {"apiVersion": "v1", "kind": "Secret", "name": "dns"}}]},
                        "kubernetes": {"kubeAPIServer": {"auditConfig": {"auditPolicy":
                            {"configMapRef": {"name": "audit"}}}}},
                        "resources": [resource("r1", "a"), resource("r2", "b")]}}),
    )
    .await;
    let shoot = Arc::new(shoot);
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), NS);
    let shoots: Api<Shoot> = Api::namespaced(env.client.clone(), NS);

    // `b` is missing: the others are protected, the shoot is not, the error names `b`.
    let error = reconcile(shoot.clone(), ctx.clone()).await.unwrap_err();
    assert_eq!(error.reason(), "ReadError");
    assert_eq!(error.to_string(), "reading secret b");
    assert!(protected(&secrets, "a").await);
    assert!(protected(&secrets, "dns").await);
    assert!(
        protected(
            &Api::<ConfigMap>::namespaced(env.client.clone(), NS),
            "audit"
        )
        .await
    );
    assert!(!protected(&shoots, "s").await);

    secret(&env, NS, "b").await;
    reconcile(shoot.clone(), ctx.clone()).await.unwrap();
    assert!(protected(&secrets, "b").await);
    assert!(protected(&shoots, "s").await);

    // Dropping a reference releases that secret only.
    let patch = json!({"spec": {"resources": [resource("r2", "b")]}});
    shoots
        .patch("s", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    reconcile(shoot, ctx).await.unwrap();
    assert!(!protected(&secrets, "a").await);
    assert!(protected(&secrets, "b").await);
    env.shutdown().await;
}

#[tokio::test]
async fn a_released_seed_keeps_a_secret_a_shoot_in_garden_still_references() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    secret(&env, "garden", "shared").await;
    let seed: Seed = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
               "metadata": {"name": "s1"},
               "spec": {"provider": {"type": "local", "region": "local"},
                        "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
                        "resources": [resource("r", "shared")]}}),
    )
    .await;
    let shoot: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": "garden"},
               "spec": {"provider": {"type": "local", "workers": []}, "region": "local",
                        "resources": [resource("r", "shared")]}}),
    )
    .await;
    let seed = Arc::new(seed);
    reconcile(seed.clone(), ctx.clone()).await.unwrap();
    reconcile(Arc::new(shoot), ctx.clone()).await.unwrap();
    let seeds: Api<Seed> = Api::all(env.client.clone());
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), "garden");
    assert!(protected(&seeds, "s1").await);
    assert!(protected(&secrets, "shared").await);

    // The seed is deleted (no `gardener` finalizer: released) and lets go; the shoot in `garden`
    // still references the secret, so it stays protected.
    seeds.delete("s1", &DeleteParams::default()).await.unwrap();
    reconcile(seed, ctx).await.unwrap();
    assert!(seeds.get_opt("s1").await.unwrap().is_none());
    assert!(protected(&secrets, "shared").await);
    env.shutdown().await;
}
