//! Reconcile tests against an in-process garden sandbox: each controller's
//! [`Reconciler::reconcile`](seedlet_runtime::controller::Reconciler::reconcile) is called directly on real
//! Shoots and Seeds and the labels are read back.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use seedlet_runtime::controller::Reconciler as _;
use serde_json::json;

use super::{Error, SeedLabels, SeedScoped};
use crate::testing::{Env, create, ensure_namespace, seed};

/// One reconcile of `object` by the controller of its kind.
async fn reconcile<K: SeedScoped>(object: Arc<K>, env: &Env) -> Result<Action, Error> {
    SeedLabels::<K>::new(env.client.clone())
        .reconcile(object)
        .await
}

fn seed_labels<K: kube::Resource>(object: &K) -> Vec<(String, String)> {
    object
        .labels()
        .iter()
        .filter(|(key, _)| key.starts_with("name.seed.gardener.cloud/"))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

#[tokio::test]
async fn a_shoot_gets_the_labels_of_both_its_seeds_and_loses_stale_ones() {
    let env = Env::start().await;
    ensure_namespace(&env.client, "garden-dev").await;
    let _: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "s", "namespace": "garden-dev",
                            "labels": {"name.seed.gardener.cloud/old": "true", "keep": "me"}},
               "spec": {"region": "local", "provider": {"type": "local", "workers": []},
                        "seedName": "target"}}),
    )
    .await;
    let shoots: Api<Shoot> = Api::namespaced(env.client.clone(), "garden-dev");
    let status = json!({"status": {"seedName": "source"}});
    let shoot = shoots
        .patch_status("s", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();

    reconcile(Arc::new(shoot), &env).await.unwrap();
    let written = shoots.get("s").await.unwrap();
    assert_eq!(
        seed_labels(&written),
        [
            ("name.seed.gardener.cloud/source".into(), "true".into()),
            ("name.seed.gardener.cloud/target".into(), "true".into()),
        ]
    );
    assert_eq!(written.labels().get("keep").map(String::as_str), Some("me"));
    env.shutdown().await;
}

#[tokio::test]
async fn a_seed_is_labelled_with_its_own_name() {
    let env = Env::start().await;
    let seed: Seed = seed(&env.client, "local").await;
    reconcile(Arc::new(seed), &env).await.unwrap();
    let written = Api::<Seed>::all(env.client.clone())
        .get("local")
        .await
        .unwrap();
    assert_eq!(
        seed_labels(&written),
        [("name.seed.gardener.cloud/local".into(), "true".into())]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_managed_seed_and_its_seed_follow_the_seed_of_the_managed_seeds_shoot() {
    use seedlet_api::seedmanagement::ManagedSeed;
    let env = Env::start().await;
    ensure_namespace(&env.client, "garden").await;
    let shoot: Shoot = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": "child", "namespace": "garden"},
               "spec": {"region": "local", "provider": {"type": "local", "workers": []},
                        "seedName": "parent"}}),
    )
    .await;
    let managed: ManagedSeed = create(
        &env.client,
        json!({"apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "ManagedSeed",
               "metadata": {"name": "child", "namespace": "garden"},
               "spec": {"shoot": {"name": "child"}}}),
    )
    .await;
    let child: Seed = seed(&env.client, "child").await;
    let unrelated: Seed = seed(&env.client, "unrelated").await;

    reconcile(Arc::new(managed), &env).await.unwrap();
    let managed_seeds: Api<ManagedSeed> = Api::namespaced(env.client.clone(), "garden");
    let seeds: Api<Seed> = Api::all(env.client.clone());
    let managed = managed_seeds.get("child").await.unwrap();
    assert_eq!(
        seed_labels(&managed),
        [("name.seed.gardener.cloud/parent".into(), "true".into())]
    );
    // The ManagedSeed's reconcile labels the Seed it registers, too.
    assert_eq!(
        seed_labels(&seeds.get("child").await.unwrap()),
        [
            ("name.seed.gardener.cloud/child".into(), "true".into()),
            ("name.seed.gardener.cloud/parent".into(), "true".into()),
        ]
    );
    reconcile(Arc::new(unrelated), &env).await.unwrap();
    assert_eq!(
        seed_labels(&seeds.get("unrelated").await.unwrap()),
        [("name.seed.gardener.cloud/unrelated".into(), "true".into())]
    );

    // The Shoot moves: the ManagedSeed and the Seed follow, the stale parent label goes.
    let shoots: Api<Shoot> = Api::namespaced(env.client.clone(), "garden");
    shoots
        .patch(
            &shoot.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"seedName": "other"}})),
        )
        .await
        .unwrap();
    reconcile(Arc::new(managed), &env).await.unwrap();
    assert_eq!(
        seed_labels(&managed_seeds.get("child").await.unwrap()),
        [("name.seed.gardener.cloud/other".into(), "true".into())]
    );
    reconcile(Arc::new(child), &env).await.unwrap();
    assert_eq!(
        seed_labels(&seeds.get("child").await.unwrap()),
        [
            ("name.seed.gardener.cloud/child".into(), "true".into()),
            ("name.seed.gardener.cloud/other".into(), "true".into()),
        ]
    );
    env.shutdown().await;
}
