//! Reconcile tests against an in-process garden sandbox: `garden` Secrets and Seeds are real
//! objects, the controller type's `reconcile` is called directly (through the `Reconciler` trait)
//! and the Seed's namespace and mirrored Secrets are read back.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Seed;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::json;

use super::{Error, SeedSecrets};
use crate::testing::{self, Env, create};

fn ctx(env: &Env) -> Arc<SeedSecrets> {
    Arc::new(SeedSecrets {
        client: env.client.clone(),
        concurrency: 1,
    })
}

async fn garden_secret(env: &Env, name: &str, role: Option<&str>, value: &str) {
    let labels = role.map_or_else(|| json!({}), |role| json!({"gardener.cloud/role": role}));
    create::<Secret>(
        &env.client,
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": name, "namespace": "garden", "labels": labels},
               "stringData": {"value": value}}),
    )
    .await;
}

async fn mirrors(env: &Env) -> Vec<(String, String)> {
    let mut out: Vec<_> = Api::<Secret>::namespaced(env.client.clone(), "seed-local")
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|s| {
            (
                s.name_any(),
                s.data
                    .as_ref()
                    .and_then(|data| data.get("value"))
                    .map(|v| String::from_utf8_lossy(&v.0).into_owned())
                    .unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

fn pair(name: &str, value: &str) -> (String, String) {
    (name.to_owned(), value.to_owned())
}

#[tokio::test]
async fn the_seed_namespace_gets_copies_of_the_selected_garden_secrets_only() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    garden_secret(&env, "domain", Some("default-domain"), "example.com").await;
    garden_secret(&env, "ssh", Some("ssh-keypair"), "key").await;
    garden_secret(&env, "plain", None, "x").await;
    let seed = Arc::new(testing::seed(&env.client, "local").await);

    let action = ctx.clone().reconcile(seed.clone()).await.unwrap();
    assert_eq!(action, Action::await_change());
    let namespace = Api::<Namespace>::all(env.client.clone())
        .get("seed-local")
        .await
        .unwrap();
    assert_eq!(namespace.labels()["gardener.cloud/role"], "seed");
    assert_eq!(mirrors(&env).await, [pair("domain", "example.com")]);

    // A changed source is copied again, a deleted one pruned, a new one mirrored.
    let secrets = Api::<Secret>::namespaced(env.client.clone(), "garden");
    secrets
        .patch(
            "domain",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"value": "example.org"}})),
        )
        .await
        .unwrap();
    garden_secret(
        &env,
        "internal",
        Some("internal-domain"),
        "internal.example",
    )
    .await;
    ctx.clone().reconcile(seed.clone()).await.unwrap();
    assert_eq!(
        mirrors(&env).await,
        [
            pair("domain", "example.org"),
            pair("internal", "internal.example")
        ]
    );
    secrets
        .delete("domain", &DeleteParams::default())
        .await
        .unwrap();
    ctx.reconcile(seed).await.unwrap();
    assert_eq!(mirrors(&env).await, [pair("internal", "internal.example")]);
    env.shutdown().await;
}

#[tokio::test]
async fn a_seed_namespace_controlled_by_another_object_fails_with_its_reason() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    garden_secret(&env, "domain", Some("default-domain"), "example.com").await;
    let other = testing::seed(&env.client, "other").await;
    create::<Namespace>(
        &env.client,
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": "seed-local", "ownerReferences": [{
                   "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed", "name": "other",
                   "uid": other.uid().unwrap(), "controller": true}]}}),
    )
    .await;
    let seed = Arc::new(testing::seed(&env.client, "local").await);

    let error = ctx.clone().reconcile(seed.clone()).await.unwrap_err();
    assert!(matches!(error, Error::Namespace(_)), "{error}");
    assert_eq!(error.reason(), "NamespaceNotControlled");
    assert_eq!(
        ctx.error_policy(&seed, &error),
        Action::requeue(Duration::from_secs(15))
    );
    assert!(mirrors(&env).await.is_empty());
    env.shutdown().await;
}

#[tokio::test]
async fn a_deleting_seed_gets_nothing() {
    let env = Env::start().await;
    garden_secret(&env, "domain", Some("default-domain"), "example.com").await;
    let mut seed: Seed = testing::seed(&env.client, "local").await;
    seed.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        env.clock.now(),
    ));

    ctx(&env).reconcile(Arc::new(seed)).await.unwrap();
    assert!(
        Api::<Namespace>::all(env.client.clone())
            .get_opt("seed-local")
            .await
            .unwrap()
            .is_none()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_lost_write_race_is_requeued_at_once() {
    // A mirror is replaced with the resourceVersion listed in the same pass, so a writer in
    // between makes the replace a 409; the policy retries at once on fresh state.
    let env = Env::start().await;
    let seed = Arc::new(testing::seed(&env.client, "local").await);
    let conflict = Error::Api {
        step: "writing secret seed-local/domain".into(),
        source: kube::Error::Api(
            kube::core::Status::failure("modified", "Conflict")
                .with_code(409)
                .boxed(),
        ),
    };
    assert_eq!(
        ctx(&env).error_policy(&seed, &conflict),
        Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE)
    );
    env.shutdown().await;
}
