//! Reconcile tests against in-process garden and seed sandboxes: [`reconcile`] and
//! [`ClusterTeardown`] are called directly on a real Shoot and Cluster with empty caches (the
//! controller then reads the garden), and the finalizer, technical ID, Cluster, namespace and
//! ShootState are read back, also through a shoot's deletion.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector;
use kube::{Api, ResourceExt};
use seedlet_api::core::{CloudProfile, Project, Seed, Shoot, ShootState};
use seedlet_api::extensions::Cluster;
use seedlet_api::operations::Bastion;
use serde_json::json;

use super::{ClusterSync, ClusterTeardown};
use crate::shoot_teardown::{BASTION_POLL, NAMESPACE_POLL};
use crate::testing::{Env, FIELD_MANAGER, SEED, create, ensure_namespace};
use seedlet_runtime::controller::Reconciler as _;

const SYNC: Duration = Duration::from_secs(600);
const TECHNICAL_ID: &str = "shoot--dev--s";

fn ctx(env: &Env) -> Arc<ClusterSync> {
    Arc::new(ClusterSync {
        field_manager: FIELD_MANAGER,
        concurrency: 1,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        garden: env.garden.clone(),
        clock: env.clock(),
        shoots: reflector::store().0,
        seeds: reflector::store().0,
        cloud_profiles: reflector::store().0,
        namespaced_cloud_profiles: reflector::store().0,
        projects: reflector::store().0,
        registrations: reflector::store().0,
        sync_period: SYNC,
        shoot_flow_deletes: false,
    })
}

/// Seed `local`, CloudProfile `local`, Project `dev` (namespace `garden-dev`) and Shoot
/// `garden-dev/s` scheduled to our seed.
async fn landscape(env: &Env) -> Arc<Shoot> {
    let _: Seed = crate::testing::seed(&env.garden).await;
    let _: CloudProfile = create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
               "metadata": {"name": "local"},
               "spec": {"type": "local", "kubernetes": {"versions": [{"version": "1.31.1"}]}}}),
    )
    .await;
    ensure_namespace(&env.garden, "garden-dev").await;
    let _: Project = create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
               "metadata": {"name": "dev"}, "spec": {"namespace": "garden-dev"}}),
    )
    .await;
    Arc::new(
        create(
            &env.garden,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
                   "metadata": {"name": "s", "namespace": "garden-dev"},
                   "spec": {"region": "local", "cloudProfileName": "local", "seedName": SEED,
                            "kubernetes": {"version": "1.31.1"},
                            "networking": {"type": "calico"},
                            "provider": {"type": "local", "workers": []}}}),
        )
        .await,
    )
}

fn shoots(env: &Env) -> Api<Shoot> {
    Api::namespaced(env.garden.clone(), "garden-dev")
}

#[tokio::test]
async fn a_scheduled_shoot_gets_its_technical_id_cluster_and_namespace() {
    let env = Env::start().await;
    let shoot = landscape(&env).await;

    let action = ctx(&env).reconcile(shoot).await.unwrap();
    assert_eq!(action, Action::requeue(SYNC));
    let stored = shoots(&env).get("s").await.unwrap();
    assert_eq!(stored.finalizers(), ["gardener"]);
    assert_eq!(
        stored.status.and_then(|s| s.technical_id).as_deref(),
        Some(TECHNICAL_ID)
    );
    let cluster = Api::<Cluster>::all(env.seed.clone())
        .get(TECHNICAL_ID)
        .await
        .unwrap();
    let spec = serde_json::to_value(&cluster.spec).unwrap();
    assert_eq!(spec["shoot"]["metadata"]["name"], "s");
    assert_eq!(spec["seed"]["metadata"]["name"], SEED);
    assert_eq!(spec["cloudProfile"]["metadata"]["name"], "local");
    let namespace = Api::<Namespace>::all(env.seed.clone())
        .get(TECHNICAL_ID)
        .await
        .unwrap();
    let labels = namespace.labels();
    assert_eq!(labels["gardener.cloud/role"], "shoot");
    assert_eq!(labels["seed.gardener.cloud/provider"], "local");
    assert_eq!(labels["shoot.gardener.cloud/provider"], "local");
    assert_eq!(labels["networking.shoot.gardener.cloud/provider"], "calico");
    env.shutdown().await;
}

#[tokio::test]
async fn shoots_of_other_seeds_are_not_synced() {
    let env = Env::start().await;
    let shoot = landscape(&env).await;
    let other = Shoot {
        spec: seedlet_api::core::ShootSpec {
            seed_name: Some("other".into()),
            ..shoot.spec.clone()
        },
        ..(*shoot).clone()
    };
    let action = ctx(&env).reconcile(Arc::new(other)).await.unwrap();
    assert_eq!(action, Action::await_change());
    assert!(shoots(&env).get("s").await.unwrap().status.is_none());
    assert!(
        Api::<Cluster>::all(env.seed.clone())
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_shoot_moved_to_another_seed_loses_namespace_then_cluster() {
    let env = Env::start().await;
    let shoot = landscape(&env).await;
    let ctx = ctx(&env);
    ctx.clone().reconcile(shoot).await.unwrap();
    let clusters = Api::<Cluster>::all(env.seed.clone());
    let cluster = Arc::new(clusters.get(TECHNICAL_ID).await.unwrap());

    // Still ours: kept.
    assert_eq!(
        ClusterTeardown(ctx.clone())
            .reconcile(cluster.clone())
            .await
            .unwrap(),
        Action::requeue(SYNC)
    );

    let moved = json!({"spec": {"seedName": "other"}});
    shoots(&env)
        .patch("s", &PatchParams::default(), &Patch::Merge(&moved))
        .await
        .unwrap();
    assert_eq!(
        ClusterTeardown(ctx.clone())
            .reconcile(cluster.clone())
            .await
            .unwrap(),
        Action::requeue(NAMESPACE_POLL),
        "the namespace goes first"
    );
    assert!(clusters.get_opt(TECHNICAL_ID).await.unwrap().is_some());
    let namespaces = Api::<Namespace>::all(env.seed.clone());
    seedlet_sandbox::setup::wait_until("namespace gone", Duration::from_secs(10), || async {
        namespaces.get_opt(TECHNICAL_ID).await.unwrap().is_none()
    })
    .await;
    assert_eq!(
        ClusterTeardown(ctx).reconcile(cluster).await.unwrap(),
        Action::await_change()
    );
    assert!(clusters.get_opt(TECHNICAL_ID).await.unwrap().is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn the_gardener_finalizer_joins_those_of_other_writers() {
    let env = Env::start().await;
    landscape(&env).await;
    let held = json!({"metadata": {"finalizers": ["test.seedlet/other"]}});
    let shoot = shoots(&env)
        .patch("s", &PatchParams::default(), &Patch::Merge(&held))
        .await
        .unwrap();
    ctx(&env).reconcile(Arc::new(shoot)).await.unwrap();
    assert_eq!(
        shoots(&env).get("s").await.unwrap().finalizers(),
        ["test.seedlet/other", "gardener"]
    );
    env.shutdown().await;
}

/// A ShootState `garden-dev/s` as the ShootState sync writes it.
async fn shoot_state(env: &Env) -> ShootState {
    create(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootState",
               "metadata": {"name": "s", "namespace": "garden-dev"}, "spec": {}}),
    )
    .await
}

/// Deletes shoot `s` (held by our finalizer) and returns it as the watch shows it then.
async fn delete_shoot(env: &Env) -> Arc<Shoot> {
    shoots(env)
        .delete("s", &DeleteParams::default())
        .await
        .unwrap();
    let deleting = shoots(env).get("s").await.unwrap();
    assert!(deleting.metadata.deletion_timestamp.is_some());
    Arc::new(deleting)
}

#[tokio::test]
async fn a_deleting_shoot_keeps_its_finalizer_until_namespace_cluster_and_shoot_state_are_gone() {
    let env = Env::start().await;
    let shoot = landscape(&env).await;
    let ctx = ctx(&env);
    ctx.clone().reconcile(shoot).await.unwrap();
    shoot_state(&env).await;
    let deleting = delete_shoot(&env).await;
    let clusters = Api::<Cluster>::all(env.seed.clone());
    let namespaces = Api::<Namespace>::all(env.seed.clone());
    let states = Api::<ShootState>::namespaced(env.garden.clone(), "garden-dev");

    assert_eq!(
        ctx.clone().reconcile(deleting.clone()).await.unwrap(),
        Action::requeue(NAMESPACE_POLL),
        "the namespace goes first"
    );
    let cluster = clusters.get(TECHNICAL_ID).await.unwrap();
    assert!(
        cluster.spec.shoot["metadata"]["deletionTimestamp"].is_string(),
        "extensions see the deletion in the Cluster"
    );
    assert!(states.get_opt("s").await.unwrap().is_some());
    assert_eq!(
        shoots(&env).get("s").await.unwrap().finalizers(),
        ["gardener"]
    );

    seedlet_sandbox::setup::wait_until("namespace gone", Duration::from_secs(10), || async {
        namespaces.get_opt(TECHNICAL_ID).await.unwrap().is_none()
    })
    .await;
    assert_eq!(
        ctx.reconcile(deleting).await.unwrap(),
        Action::await_change()
    );
    assert!(clusters.get_opt(TECHNICAL_ID).await.unwrap().is_none());
    assert!(states.get_opt("s").await.unwrap().is_none());
    assert!(
        shoots(&env).get_opt("s").await.unwrap().is_none(),
        "the finalizer was the last one: the shoot is gone"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_deleting_shoot_waits_for_its_bastions_before_anything_is_deleted() {
    let env = Env::start().await;
    let shoot = landscape(&env).await;
    let ctx = ctx(&env);
    ctx.clone().reconcile(shoot).await.unwrap();
    let _: Bastion = create(
        &env.garden,
        json!({"apiVersion": "operations.gardener.cloud/v1alpha1", "kind": "Bastion",
               "metadata": {"name": "b", "namespace": "garden-dev"},
               "spec": {"shootRef": {"name": "s"}, "seedName": SEED,
                        "sshPublicKey": "c3NoLWVkMjU1MTkgQUFBQQ=="}}),
    )
    .await;
    let deleting = delete_shoot(&env).await;

    assert_eq!(
        ctx.clone().reconcile(deleting.clone()).await.unwrap(),
        Action::requeue(BASTION_POLL)
    );
    assert!(
        Api::<Namespace>::all(env.seed.clone())
            .get(TECHNICAL_ID)
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_none()
    );
    Api::<Bastion>::namespaced(env.garden.clone(), "garden-dev")
        .delete("b", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        ctx.reconcile(deleting).await.unwrap(),
        Action::requeue(NAMESPACE_POLL),
        "with the bastion gone the flow starts"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_deleting_shoot_without_our_finalizer_is_left_to_the_cluster_teardown() {
    let env = Env::start().await;
    let shoot = landscape(&env).await;
    let ctx = ctx(&env);
    ctx.clone().reconcile(shoot).await.unwrap();
    let held = json!({"metadata": {"finalizers": ["test.seedlet/other"]}});
    shoots(&env)
        .patch("s", &PatchParams::default(), &Patch::Merge(&held))
        .await
        .unwrap();
    let deleting = delete_shoot(&env).await;
    assert_eq!(
        ctx.clone().reconcile(deleting).await.unwrap(),
        Action::await_change()
    );
    let cluster = Api::<Cluster>::all(env.seed.clone())
        .get(TECHNICAL_ID)
        .await
        .unwrap();
    assert_eq!(
        ClusterTeardown(ctx)
            .reconcile(Arc::new(cluster))
            .await
            .unwrap(),
        Action::requeue(NAMESPACE_POLL),
        "the Cluster-side teardown takes over"
    );
    env.shutdown().await;
}
