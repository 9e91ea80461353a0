//! Reconcile tests against an in-process garden sandbox: labelled ClusterRoles and extension
//! ServiceAccounts are real objects, the controller type's `reconcile` is called directly (through
//! the `Reconciler` trait) and the ClusterRoleBinding is read back.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::{Value, json};

use super::subjects::{ROLE_LABEL, SELECTOR_ANNOTATION};
use super::{Error, ExtensionClusterRoles};
use crate::testing::{Env, create, ensure_namespace};

fn ctx(env: &Env) -> Arc<ExtensionClusterRoles> {
    Arc::new(ExtensionClusterRoles {
        client: env.client.clone(),
    })
}

async fn role(env: &Env, annotations: Value) -> Arc<ClusterRole> {
    Arc::new(
        create(
            &env.client,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "metadata": {"name": "ext-permissions", "labels": {ROLE_LABEL: "true"},
                                "annotations": annotations},
                   "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}),
        )
        .await,
    )
}

fn selecting(labels: Value) -> Value {
    json!({SELECTOR_ANNOTATION: json!({"matchLabels": labels}).to_string()})
}

async fn account(env: &Env, namespace: &str, name: &str, labels: Value) {
    ensure_namespace(&env.client, namespace).await;
    create::<ServiceAccount>(
        &env.client,
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": name, "namespace": namespace, "labels": labels}}),
    )
    .await;
}

async fn binding(env: &Env) -> Option<ClusterRoleBinding> {
    Api::<ClusterRoleBinding>::all(env.client.clone())
        .get_opt("ext-permissions")
        .await
        .unwrap()
}

fn subjects(binding: &ClusterRoleBinding) -> Vec<String> {
    let mut out: Vec<String> = binding
        .subjects
        .iter()
        .flatten()
        .map(|s| format!("{}/{}", s.namespace.clone().unwrap_or_default(), s.name))
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn the_role_is_bound_to_the_matching_extension_service_accounts_only() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    account(&env, "seed-local", "extension-a", json!({"ext": "a"})).await;
    account(&env, "seed-local", "unlabelled", json!({})).await;
    account(&env, "garden", "not-an-extension", json!({"ext": "a"})).await;
    let created = role(&env, selecting(json!({"ext": "a"}))).await;

    let action = ctx.clone().reconcile(created.clone()).await.unwrap();
    assert_eq!(action, Action::await_change());
    let written = binding(&env).await.expect("binding");
    assert_eq!(subjects(&written), ["seed-local/extension-a"]);
    assert_eq!(written.role_ref.name, "ext-permissions");
    let owner = &written.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("ClusterRole", "ext-permissions")
    );

    // A second matching account joins on the next pass; an unchanged pass writes nothing.
    account(&env, "seed-other", "extension-b", json!({"ext": "a"})).await;
    ctx.clone().reconcile(created.clone()).await.unwrap();
    let patched = binding(&env).await.unwrap();
    assert_eq!(
        subjects(&patched),
        ["seed-local/extension-a", "seed-other/extension-b"]
    );
    ctx.reconcile(created).await.unwrap();
    assert_eq!(
        binding(&env).await.unwrap().resource_version(),
        patched.resource_version()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_role_without_selector_annotation_fails_with_invalid_selector_and_binds_nothing() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    account(&env, "seed-local", "extension-a", json!({"ext": "a"})).await;
    let created = role(&env, json!({})).await;

    let error = ctx.clone().reconcile(created.clone()).await.unwrap_err();
    assert!(matches!(error, Error::Selector(_)), "{error}");
    assert_eq!(error.reason(), "InvalidSelector");
    assert_eq!(
        ctx.error_policy(&created, &error),
        Action::requeue(super::reconcile::RETRY_DELAY)
    );
    assert!(binding(&env).await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_role_that_is_gone_or_deleting_is_left_alone() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let mut gone: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "ext-permissions", "annotations": selecting(json!({"ext": "a"}))}}))
    .unwrap();
    gone.metadata.labels = Some([(ROLE_LABEL.to_owned(), "true".to_owned())].into());
    assert_eq!(
        ctx.clone().reconcile(Arc::new(gone)).await.unwrap(),
        Action::await_change()
    );

    let mut annotations = selecting(json!({"ext": "a"}));
    annotations["dummy"] = json!("x");
    create::<ClusterRole>(
        &env.client,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "ext-permissions", "labels": {ROLE_LABEL: "true"},
                            "annotations": annotations, "finalizers": ["test/hold"]}}),
    )
    .await;
    let roles = Api::<ClusterRole>::all(env.client.clone());
    roles
        .delete("ext-permissions", &Default::default())
        .await
        .unwrap();
    let deleting = Arc::new(roles.get("ext-permissions").await.unwrap());
    ctx.reconcile(deleting).await.unwrap();
    assert!(binding(&env).await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_lost_write_race_is_requeued_at_once() {
    // The binding is created or merge-patched without a resourceVersion, so the garden does not
    // answer this controller 409 itself; a conflict anywhere in the chain is still retried at
    // once by the shared policy instead of after the 5 s error delay.
    let env = Env::start().await;
    let created = role(&env, selecting(json!({"ext": "a"}))).await;
    let conflict = Error::Api {
        what: "patching ClusterRoleBinding ext-permissions".into(),
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
