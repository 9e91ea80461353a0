//! Reconcile tests against an in-process garden sandbox: ResourceQuotas in project and other
//! namespaces are real objects, the controller's `reconcile` is called directly and the limits and annotations
//! are read back.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ResourceQuota;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_runtime::controller::Reconciler as _;
use serde_json::{Value, json};

use super::{Error, ProjectResourceQuotas, RETRY_DELAY};
use crate::testing::{self, Env, create};

const SECRETS_PER_SHOOT: &str = "quota.gardener.cloud/secrets-per-shoot";
const CONFIGMAPS_PER_SHOOT: &str = "quota.gardener.cloud/configmaps-per-shoot";

fn ctx(env: &Env) -> Arc<ProjectResourceQuotas> {
    Arc::new(ProjectResourceQuotas {
        client: env.client.clone(),
        concurrency: 1,
    })
}

async fn namespace(env: &Env, name: &str, project: bool) {
    let labels = if project {
        json!({"gardener.cloud/role": "project"})
    } else {
        json!({})
    };
    create::<k8s_openapi::api::core::v1::Namespace>(
        &env.client,
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": name, "labels": labels}}),
    )
    .await;
}

async fn quota(env: &Env, namespace: &str, hard: Value, annotations: Value) -> Arc<ResourceQuota> {
    Arc::new(
        create(
            &env.client,
            json!({"apiVersion": "v1", "kind": "ResourceQuota",
                   "metadata": {"name": "gardener", "namespace": namespace,
                                "annotations": annotations},
                   "spec": {"hard": hard}}),
        )
        .await,
    )
}

async fn stored(env: &Env, namespace: &str) -> ResourceQuota {
    Api::<ResourceQuota>::namespaced(env.client.clone(), namespace)
        .get("gardener")
        .await
        .unwrap()
}

fn hard(quota: &ResourceQuota) -> BTreeMap<String, String> {
    quota
        .spec
        .as_ref()
        .and_then(|s| s.hard.as_ref())
        .map(|hard| hard.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_project_quota_is_raised_to_the_per_shoot_needs_and_annotated_once() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    namespace(&env, "garden-dev", true).await;
    let created = quota(
        &env,
        "garden-dev",
        json!({"count/shoots.core.gardener.cloud": "10", "count/secrets": "30"}),
        json!({}),
    )
    .await;

    let action = ctx.clone().reconcile(created.clone()).await.unwrap();
    assert_eq!(action, Action::await_change());
    let raised = stored(&env, "garden-dev").await;
    assert_eq!(hard(&raised)["count/secrets"], "40");
    assert!(
        !hard(&raised).contains_key("count/configmaps"),
        "absent keys stay absent"
    );
    assert_eq!(raised.annotations()[SECRETS_PER_SHOOT], "4");
    assert_eq!(raised.annotations()[CONFIGMAPS_PER_SHOOT], "2");

    // Everything is recorded: the next pass writes nothing.
    ctx.reconcile(created).await.unwrap();
    assert_eq!(
        stored(&env, "garden-dev").await.resource_version(),
        raised.resource_version()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn without_a_shoot_limit_the_shoots_in_the_namespace_count() {
    let env = Env::start().await;
    namespace(&env, "garden-dev", true).await;
    testing::shoot(&env.client, "garden-dev", "a").await;
    testing::shoot(&env.client, "garden-dev", "b").await;
    let created = quota(
        &env,
        "garden-dev",
        json!({"count/configmaps": "1"}),
        json!({}),
    )
    .await;

    ctx(&env).reconcile(created).await.unwrap();
    assert_eq!(
        hard(&stored(&env, "garden-dev").await)["count/configmaps"],
        "4"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn quotas_outside_project_namespaces_are_left_alone() {
    let env = Env::start().await;
    namespace(&env, "team", false).await;
    let created = quota(
        &env,
        "team",
        json!({"count/shoots.core.gardener.cloud": "10", "count/secrets": "30"}),
        json!({}),
    )
    .await;

    ctx(&env).reconcile(created.clone()).await.unwrap();
    let untouched = stored(&env, "team").await;
    assert_eq!(untouched.resource_version(), created.resource_version());
    assert_eq!(hard(&untouched)["count/secrets"], "30");
    env.shutdown().await;
}

#[tokio::test]
async fn a_recorded_value_that_is_no_integer_fails_and_is_retried_later() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    namespace(&env, "garden-dev", true).await;
    let created = quota(
        &env,
        "garden-dev",
        json!({"count/secrets": "30"}),
        json!({SECRETS_PER_SHOOT: "four"}),
    )
    .await;

    let error = ctx.clone().reconcile(created.clone()).await.unwrap_err();
    assert!(matches!(error, Error::Value(_)), "{error}");
    assert!(error.to_string().contains("\"four\""), "{error}");
    assert_eq!(
        ctx.error_policy(&created, &error),
        Action::requeue(RETRY_DELAY)
    );
    assert_eq!(
        hard(&stored(&env, "garden-dev").await)["count/secrets"],
        "30"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_lost_write_race_is_requeued_at_once() {
    // The patch carries the resourceVersion read in the same pass, so a writer in between makes
    // it fail with 409; the policy retries at once on fresh state.
    let env = Env::start().await;
    namespace(&env, "garden-dev", true).await;
    let created = quota(
        &env,
        "garden-dev",
        json!({"count/secrets": "30"}),
        json!({}),
    )
    .await;
    let conflict = Error::Api {
        what: "patching ResourceQuota garden-dev/gardener".into(),
        source: kube::Error::Api(
            kube::core::Status::failure("modified", "Conflict")
                .with_code(409)
                .boxed(),
        ),
    };
    assert_eq!(
        ctx(&env).error_policy(&created, &conflict),
        Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE)
    );
    env.shutdown().await;
}
