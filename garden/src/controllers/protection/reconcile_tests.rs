//! Reconcile tests against an in-process garden sandbox: [`reconcile`] is called directly on a
//! real SecretBinding, its Secret and a Shoot using it.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Event, Secret};
use kube::api::DeleteParams;
use kube::{Api, ResourceExt};
use seedlet_api::core::{SecretBinding, Shoot};
use serde_json::json;

use super::{Ctx, reconcile};
use crate::testing::{Env, create, ensure_namespace};

const NS: &str = "garden-dev";

fn ctx(env: &Env) -> Arc<Ctx> {
    Arc::new(Ctx {
        client: env.client.clone(),
        events: env.events(),
        clock: env.clock(),
        metrics: Env::metrics(),
    })
}

async fn binding(env: &Env) -> Arc<SecretBinding> {
    ensure_namespace(&env.client, NS).await;
    let _: Secret = create(
        &env.client,
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "creds", "namespace": NS,
                            "finalizers": ["gardener.cloud/gardener"]}}),
    )
    .await;
    Arc::new(
        create(
            &env.client,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "SecretBinding",
                   "metadata": {"name": "b1", "namespace": NS},
                   "secretRef": {"name": "creds", "namespace": NS},
                   "provider": {"type": "aws,gcp"}}),
        )
        .await,
    )
}

fn bindings(env: &Env) -> Api<SecretBinding> {
    Api::namespaced(env.client.clone(), NS)
}

async fn secret(env: &Env) -> Secret {
    Api::<Secret>::namespaced(env.client.clone(), NS)
        .get("creds")
        .await
        .unwrap()
}

#[tokio::test]
async fn a_secret_binding_gets_its_finalizer_and_protects_and_labels_its_secret() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let b1 = binding(&env).await;

    // Pass 1 only adds the finalizer (its watch event brings the next pass).
    reconcile(b1.clone(), ctx.clone()).await.unwrap();
    assert_eq!(
        bindings(&env).get("b1").await.unwrap().finalizers(),
        ["gardener"]
    );
    assert_eq!(secret(&env).await.finalizers(), ["gardener.cloud/gardener"]);

    reconcile(b1, ctx).await.unwrap();
    let protected = secret(&env).await;
    assert_eq!(protected.finalizers(), ["gardener.cloud/secretbinding"]);
    let mut labels: Vec<_> = protected
        .labels()
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    labels.sort();
    assert_eq!(
        labels,
        [
            "provider.shoot.gardener.cloud/aws=true",
            "provider.shoot.gardener.cloud/gcp=true",
            "reference.gardener.cloud/secretbinding=true",
        ]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn deletion_is_blocked_while_a_shoot_uses_the_binding_and_releases_the_secret_after() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let b1 = binding(&env).await;
    reconcile(b1.clone(), ctx.clone()).await.unwrap();
    reconcile(b1.clone(), ctx.clone()).await.unwrap();
    let _: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": NS},
               "spec": {"region": "local", "secretBindingName": "b1",
                        "provider": {"type": "aws", "workers": []}}}),
    )
    .await;
    bindings(&env)
        .delete("b1", &DeleteParams::default())
        .await
        .unwrap();

    let error = reconcile(b1.clone(), ctx.clone()).await.unwrap_err();
    assert_eq!(error.reason(), "ResourceReferenced");
    assert_eq!(
        error.to_string(),
        "Cannot delete SecretBinding, because the following Shoots are still referencing it: [garden-dev/s]"
    );
    assert_eq!(
        bindings(&env).get("b1").await.unwrap().finalizers(),
        ["gardener"]
    );
    let events = Api::<Event>::namespaced(env.client.clone(), NS)
        .list(&Default::default())
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("ResourceReferenced")
                && e.involved_object.name.as_deref() == Some("b1"))
    );

    Api::<Shoot>::namespaced(env.client.clone(), NS)
        .delete("s", &DeleteParams::default())
        .await
        .unwrap();
    reconcile(b1, ctx).await.unwrap();
    assert!(bindings(&env).get_opt("b1").await.unwrap().is_none());
    let released = secret(&env).await;
    assert!(
        released.finalizers().is_empty(),
        "{:?}",
        released.finalizers()
    );
    assert!(
        !released
            .labels()
            .contains_key("reference.gardener.cloud/secretbinding")
    );
    env.shutdown().await;
}
