//! Reconcile tests against an in-process seed sandbox: ManagedResources and their manifest
//! Secrets are real objects, [`reconcile`] is called directly, and the applied objects and the
//! ManagedResource's finalizer, conditions and `status.resources` are read back.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::names::{condition_types, finalizers, managed_resources, reasons};
use seedlet_api::resources::ManagedResource;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Applier, Error, apply, watches};
use crate::testing::{Env, create, put_secret};
use seedlet_runtime::controller::Reconciler as _;

const MR: &str = "ext";
const SYNC: Duration = Duration::from_secs(60);

fn ctx(env: &Env) -> Arc<Applier> {
    let (sender, _receiver) = futures::channel::mpsc::unbounded();
    Arc::new(Applier {
        clock: env.clock(),
        concurrency: 1,
        seed: env.seed.clone(),
        kinds: apply::KindCache::default(),
        watches: watches::Watches::new(env.seed.clone(), sender, CancellationToken::new()),
        sync_period: SYNC,
        field_manager: seedlet_api::names::field_managers::RESOURCE_MANAGER,
    })
}

fn config_map(name: &str, greeting: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: garden\ndata:\n  greeting: {greeting}\n"
    )
}

/// The manifest Secret `garden/<MR>-data` with `objects.yaml`.
async fn manifests(env: &Env, objects: &str) {
    let secrets = Api::<k8s_openapi::api::core::v1::Secret>::namespaced(env.seed.clone(), "garden");
    if secrets.get_opt("ext-data").await.unwrap().is_some() {
        let patch = json!({"stringData": {"objects.yaml": objects}});
        secrets
            .patch("ext-data", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
        return;
    }
    put_secret(
        &env.seed,
        "garden",
        "ext-data",
        &[("objects.yaml", objects)],
        &[],
    )
    .await;
}

async fn managed_resource(
    env: &Env,
    class: Option<&str>,
    annotations: Value,
) -> Arc<ManagedResource> {
    Arc::new(
        create(
            &env.seed,
            json!({"apiVersion": "resources.gardener.cloud/v1alpha1", "kind": "ManagedResource",
                   "metadata": {"name": MR, "namespace": "garden", "annotations": annotations},
                   "spec": {"class": class, "secretRefs": [{"name": "ext-data"}]}}),
        )
        .await,
    )
}

async fn stored(env: &Env) -> Option<ManagedResource> {
    Api::<ManagedResource>::namespaced(env.seed.clone(), "garden")
        .get_opt(MR)
        .await
        .unwrap()
}

async fn fresh(env: &Env) -> Arc<ManagedResource> {
    Arc::new(stored(env).await.expect("managed resource"))
}

/// `(type, status, reason)` of each condition, by type.
fn conditions(mr: &ManagedResource) -> Vec<(String, String, String)> {
    let mut out: Vec<_> = mr
        .conditions()
        .iter()
        .map(|c| {
            let status = serde_json::to_value(&c.status).unwrap();
            (
                c.type_.clone(),
                status.as_str().unwrap_or_default().to_owned(),
                c.reason.clone(),
            )
        })
        .collect();
    out.sort();
    out
}

fn condition<'a>(all: &'a [(String, String, String)], type_: &str) -> (&'a str, &'a str) {
    all.iter()
        .find(|(t, _, _)| t == type_)
        .map(|(_, status, reason)| (status.as_str(), reason.as_str()))
        .unwrap_or_else(|| panic!("no condition {type_} in {all:?}"))
}

async fn config_map_in_seed(env: &Env, name: &str) -> Option<ConfigMap> {
    Api::<ConfigMap>::namespaced(env.seed.clone(), "garden")
        .get_opt(name)
        .await
        .unwrap()
}

fn finalizer() -> String {
    finalizers::resource_manager(Some(managed_resources::CLASS_SEED))
}

#[tokio::test]
async fn objects_are_applied_recorded_and_pruned_when_they_leave_the_manifests() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    manifests(&env, &config_map("first", "hello")).await;
    let created = managed_resource(&env, Some("seed"), json!({})).await;

    let action = ctx.clone().reconcile(created).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    let applied = config_map_in_seed(&env, "first").await.expect("applied");
    assert_eq!(applied.data.as_ref().unwrap()["greeting"], "hello");
    assert_eq!(
        applied.annotations()["resources.gardener.cloud/origin"],
        "garden/ext"
    );
    let mr = stored(&env).await.unwrap();
    assert_eq!(mr.finalizers(), [finalizer()]);
    let all = conditions(&mr);
    assert_eq!(
        condition(&all, condition_types::RESOURCES_APPLIED),
        ("True", reasons::APPLY_SUCCEEDED)
    );
    assert_eq!(
        condition(&all, condition_types::RESOURCES_HEALTHY).0,
        "True"
    );
    assert_eq!(
        condition(&all, condition_types::RESOURCES_PROGRESSING).0,
        "False"
    );
    let status = mr.status.clone().unwrap();
    assert_eq!(status.observed_generation, mr.metadata.generation);
    assert!(status.secrets_data_checksum.is_some());
    let names: Vec<_> = status.resources.iter().map(|r| r.name.clone()).collect();
    assert_eq!(names, [Some("first".to_owned())]);

    // The manifests now hold another object: the first one is pruned before anything new is
    // applied, and the pass comes back for the rest.
    manifests(&env, &config_map("second", "hi")).await;
    let action = ctx.clone().reconcile(fresh(&env).await).await.unwrap();
    assert_eq!(
        action,
        Action::requeue(super::cleanup::DELETION_PENDING_REQUEUE)
    );
    assert!(config_map_in_seed(&env, "first").await.is_none());
    assert!(config_map_in_seed(&env, "second").await.is_none());
    let all = conditions(&stored(&env).await.unwrap());
    assert_eq!(
        condition(&all, condition_types::RESOURCES_APPLIED),
        ("Progressing", reasons::DELETION_PENDING)
    );
    let action = ctx.reconcile(fresh(&env).await).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    assert!(config_map_in_seed(&env, "second").await.is_some());
    let names: Vec<_> = stored(&env)
        .await
        .unwrap()
        .status
        .unwrap()
        .resources
        .iter()
        .map(|r| r.name.clone())
        .collect();
    assert_eq!(names, [Some("second".to_owned())]);
    env.shutdown().await;
}

#[tokio::test]
async fn managed_resources_of_other_classes_are_left_alone() {
    let env = Env::start().await;
    manifests(&env, &config_map("first", "hello")).await;
    let created = managed_resource(&env, None, json!({})).await;

    let action = ctx(&env).reconcile(created).await.unwrap();
    assert_eq!(action, Action::await_change());
    let mr = stored(&env).await.unwrap();
    assert!(mr.finalizers().is_empty());
    assert!(mr.status.is_none());
    assert!(config_map_in_seed(&env, "first").await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn an_ignored_managed_resource_reports_itself_ignored_and_applies_nothing() {
    let env = Env::start().await;
    manifests(&env, &config_map("first", "hello")).await;
    let created = managed_resource(
        &env,
        Some("seed"),
        json!({"resources.gardener.cloud/ignore": "true"}),
    )
    .await;

    assert_eq!(
        ctx(&env).reconcile(created).await.unwrap(),
        Action::requeue(SYNC)
    );
    let all = conditions(&stored(&env).await.unwrap());
    for type_ in [
        condition_types::RESOURCES_APPLIED,
        condition_types::RESOURCES_HEALTHY,
    ] {
        assert_eq!(
            condition(&all, type_),
            ("True", reasons::MANAGED_RESOURCE_IGNORED)
        );
    }
    assert!(config_map_in_seed(&env, "first").await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_manifest_secret_fails_with_its_reason_in_resources_applied() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let created = managed_resource(&env, Some("seed"), json!({})).await;

    let error = ctx.clone().reconcile(created.clone()).await.unwrap_err();
    assert!(matches!(error, Error::ReadSecret { .. }), "{error}");
    assert_eq!(error.reason(), reasons::CANNOT_READ_SECRET);
    assert_eq!(
        ctx.error_policy(&created, &error),
        Action::requeue(Duration::from_secs(2))
    );
    let all = conditions(&stored(&env).await.unwrap());
    assert_eq!(
        condition(&all, condition_types::RESOURCES_APPLIED),
        ("False", reasons::CANNOT_READ_SECRET)
    );
    env.shutdown().await;
}

#[tokio::test]
async fn undecodable_manifests_are_reported_while_the_decodable_ones_are_applied() {
    let env = Env::start().await;
    let objects = format!("{}---\nkind: [unclosed\n", config_map("first", "hello"));
    manifests(&env, &objects).await;
    let created = managed_resource(&env, Some("seed"), json!({})).await;

    ctx(&env).reconcile(created).await.unwrap();
    assert!(config_map_in_seed(&env, "first").await.is_some());
    let all = conditions(&stored(&env).await.unwrap());
    assert_eq!(
        condition(&all, condition_types::RESOURCES_APPLIED),
        ("False", reasons::DECODING_FAILED)
    );
    env.shutdown().await;
}

#[tokio::test]
async fn deletion_removes_the_applied_objects_and_then_the_finalizer() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    manifests(&env, &config_map("first", "hello")).await;
    let created = managed_resource(&env, Some("seed"), json!({})).await;
    ctx.clone().reconcile(created).await.unwrap();
    Api::<ManagedResource>::namespaced(env.seed.clone(), "garden")
        .delete(MR, &DeleteParams::default())
        .await
        .unwrap();

    let mut passes = 0;
    while let Some(deleting) = stored(&env).await {
        assert!(
            passes < 3,
            "the finalizer stays: {:?}",
            conditions(&deleting)
        );
        ctx.clone().reconcile(Arc::new(deleting)).await.unwrap();
        passes += 1;
    }
    assert!(config_map_in_seed(&env, "first").await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_stale_copy_loses_the_finalizer_write_with_a_conflict_and_is_requeued_at_once() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    manifests(&env, &config_map("first", "hello")).await;
    let stale = managed_resource(&env, Some("seed"), json!({})).await;
    // Another writer changes the ManagedResource after the controller's copy was read.
    Api::<ManagedResource>::namespaced(env.seed.clone(), "garden")
        .patch(
            MR,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();

    let error = ctx.clone().reconcile(stale.clone()).await.unwrap_err();
    assert!(matches!(error, Error::Finalizer { .. }), "{error}");
    assert!(seedlet_runtime::status::conflict_in_chain(&error));
    assert_eq!(
        ctx.clone().error_policy(&stale, &error),
        Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE)
    );
    assert!(
        config_map_in_seed(&env, "first").await.is_none(),
        "nothing applied"
    );

    // The retry reads fresh state and goes through.
    assert_eq!(
        ctx.reconcile(fresh(&env).await).await.unwrap(),
        Action::requeue(SYNC)
    );
    assert!(config_map_in_seed(&env, "first").await.is_some());
    env.shutdown().await;
}

#[tokio::test]
async fn deletion_with_keep_objects_leaves_the_applied_objects_and_drops_the_finalizer() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    manifests(&env, &config_map("first", "hello")).await;
    let created: ManagedResource = create(
        &env.seed,
        json!({"apiVersion": "resources.gardener.cloud/v1alpha1", "kind": "ManagedResource",
               "metadata": {"name": MR, "namespace": "garden"},
               "spec": {"class": "seed", "keepObjects": true, "secretRefs": [{"name": "ext-data"}]}}),
    )
    .await;
    ctx.clone().reconcile(Arc::new(created)).await.unwrap();
    Api::<ManagedResource>::namespaced(env.seed.clone(), "garden")
        .delete(MR, &DeleteParams::default())
        .await
        .unwrap();

    assert_eq!(
        ctx.reconcile(fresh(&env).await).await.unwrap(),
        Action::await_change()
    );
    assert!(stored(&env).await.is_none(), "finalizer dropped at once");
    assert!(config_map_in_seed(&env, "first").await.is_some(), "kept");
    env.shutdown().await;
}
