//! Reconcile tests against an in-process garden sandbox: [`reconcile`] is called directly on real
//! Shoots and Seeds and the labels are read back.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{Seed, Shoot};
use serde_json::json;

use super::{Ctx, reconcile};
use crate::testing::{Env, create, ensure_namespace, seed};

fn ctx(env: &Env) -> Arc<Ctx> {
    Arc::new(Ctx {
        client: env.client.clone(),
        metrics: Env::metrics(),
    })
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

    reconcile(Arc::new(shoot), ctx(&env)).await.unwrap();
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
    reconcile(Arc::new(seed), ctx(&env)).await.unwrap();
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
