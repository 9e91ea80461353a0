//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on real Projects and the namespace, quota,
//! RBAC, phase and Events are read back.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Event, Namespace, ResourceQuota};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding};
use kube::api::DeleteParams;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Project, Shoot};
use seedlet_config::garden_projects::ProjectQuota;
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::{Value, json};

use super::Projects;
use super::reconcile::TERMINATING_REQUEUE;
use crate::testing::{self, Env, create};

fn ctx(env: &Env, quotas: Vec<ProjectQuota>) -> Arc<Projects> {
    Arc::new(Projects {
        client: env.client.clone(),
        events: env.events(),
        quotas,
        concurrency: 1,
    })
}

fn user(name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name})
}

async fn project(env: &Env, namespace: &str) -> Arc<Project> {
    let mut member = user("bob");
    member["role"] = json!("viewer");
    Arc::new(
        create(
            &env.client,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
                   "metadata": {"name": "dev"},
                   "spec": {"namespace": namespace, "owner": user("alice"),
                            "members": [member]}}),
        )
        .await,
    )
}

async fn stored(env: &Env) -> Project {
    Api::<Project>::all(env.client.clone())
        .get("dev")
        .await
        .unwrap()
}

fn phase(project: &Project) -> Option<&str> {
    project.status.as_ref().and_then(|s| s.phase.as_deref())
}

fn subjects(subjects: Option<&Vec<k8s_openapi::api::rbac::v1::Subject>>) -> Vec<String> {
    subjects
        .into_iter()
        .flatten()
        .map(|s| s.name.clone())
        .collect()
}

async fn event_reasons(env: &Env) -> Vec<String> {
    Api::<Event>::all(env.client.clone())
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some("dev"))
        .filter_map(|e| e.reason)
        .collect()
}

#[tokio::test]
async fn a_new_project_gets_its_finalizer_then_namespace_quota_rbac_and_ready() {
    let env = Env::start().await;
    let quota: ProjectQuota = serde_json::from_value(json!({
        "config": {"apiVersion": "v1", "kind": "ResourceQuota",
                   "spec": {"hard": {"count/shoots.core.gardener.cloud": "5"}}}}))
    .unwrap();
    let ctx = ctx(&env, vec![quota]);
    let created = project(&env, "garden-dev").await;

    // Pass 1 only adds the finalizer (the write triggers the next pass).
    ctx.clone().reconcile(created.clone()).await.unwrap();
    let first = stored(&env).await;
    assert_eq!(first.finalizers(), ["gardener"]);
    assert_eq!(phase(&first), None);

    ctx.reconcile(created).await.unwrap();
    let ready = stored(&env).await;
    assert_eq!(phase(&ready), Some("Ready"));
    assert_eq!(
        ready.status.as_ref().and_then(|s| s.observed_generation),
        ready.metadata.generation
    );
    let namespace = Api::<Namespace>::all(env.client.clone())
        .get("garden-dev")
        .await
        .unwrap();
    assert_eq!(namespace.labels()["gardener.cloud/role"], "project");
    assert_eq!(namespace.labels()["project.gardener.cloud/name"], "dev");
    assert_eq!(
        namespace.annotations()["namespace.gardener.cloud/project"],
        ready.uid().unwrap()
    );
    let owner = &namespace.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Project", "dev", Some(true))
    );
    let quota = Api::<ResourceQuota>::namespaced(env.client.clone(), "garden-dev")
        .get("gardener")
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(quota.spec.unwrap().hard).unwrap(),
        json!({"count/shoots.core.gardener.cloud": "5"})
    );
    let bindings: Api<ClusterRoleBinding> = Api::all(env.client.clone());
    let admin = bindings
        .get("gardener.cloud:system:project:dev")
        .await
        .unwrap();
    assert_eq!(subjects(admin.subjects.as_ref()), ["alice"]);
    let viewer = bindings
        .get("gardener.cloud:system:project-viewer:dev")
        .await
        .unwrap();
    assert_eq!(subjects(viewer.subjects.as_ref()), ["bob"]);
    let manager = Api::<RoleBinding>::namespaced(env.client.clone(), "garden-dev")
        .get("gardener.cloud:system:project-serviceaccountmanager")
        .await
        .unwrap();
    assert_eq!(subjects(manager.subjects.as_ref()), ["alice"]);
    assert!(
        event_reasons(&env)
            .await
            .contains(&"NamespaceReconcileSuccessful".to_owned())
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_foreign_namespace_is_not_adopted_and_the_project_fails() {
    let env = Env::start().await;
    let _: Namespace = create(
        &env.client,
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": "taken", "labels": {"team": "other"}}}),
    )
    .await;
    let ctx = ctx(&env, Vec::new());
    let created = project(&env, "taken").await;
    ctx.clone().reconcile(created.clone()).await.unwrap();

    let error = ctx.reconcile(created).await.unwrap_err();
    assert_eq!(error.reason(), "NamespaceNotAdoptable");
    assert_eq!(phase(&stored(&env).await), Some("Failed"));
    let namespace = Api::<Namespace>::all(env.client.clone())
        .get("taken")
        .await
        .unwrap();
    assert!(namespace.owner_references().is_empty(), "left unchanged");
    assert!(
        event_reasons(&env)
            .await
            .contains(&"NamespaceReconcileFailed".to_owned())
    );
    env.shutdown().await;
}

/// Spec §13.9: deleting a Project whose namespace still has a Shoot → `Terminating`, a Warning,
/// and no requeue (the shoot's deletion triggers the next pass); without the shoot the namespace
/// is deleted and the Project looks again after a minute.
#[tokio::test]
async fn deletion_waits_for_the_last_shoot_without_requeueing() {
    let env = Env::start().await;
    let ctx = ctx(&env, Vec::new());
    let created = project(&env, "garden-dev").await;
    ctx.clone().reconcile(created.clone()).await.unwrap();
    ctx.clone().reconcile(created.clone()).await.unwrap();
    assert_eq!(phase(&stored(&env).await), Some("Ready"));
    testing::shoot(&env.client, "garden-dev", "s").await;
    let projects: Api<Project> = Api::all(env.client.clone());
    projects
        .delete("dev", &DeleteParams::default())
        .await
        .unwrap();

    assert_eq!(
        ctx.clone().reconcile(created.clone()).await.unwrap(),
        Action::await_change()
    );
    assert_eq!(phase(&stored(&env).await), Some("Terminating"));
    let reasons = event_reasons(&env).await;
    assert!(
        reasons.contains(&"NamespaceNotEmpty".to_owned()),
        "{reasons:?}"
    );
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    let namespace = namespaces.get("garden-dev").await.unwrap();
    assert!(namespace.metadata.deletion_timestamp.is_none());

    Api::<Shoot>::namespaced(env.client.clone(), "garden-dev")
        .delete("s", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        ctx.reconcile(created).await.unwrap(),
        Action::requeue(TERMINATING_REQUEUE)
    );
    assert!(
        event_reasons(&env)
            .await
            .contains(&"NamespaceMarkedForDeletion".to_owned())
    );
    assert_eq!(stored(&env).await.finalizers(), ["gardener"]);
    env.shutdown().await;
}
