//! End-to-end: the garden controller computes a NamespacedCloudProfile's
//! `status.cloudProfileSpec` from its parent and itself (spec garden-controllers §2.3), follows
//! changes of either, leaves the status alone when the parent is gone, and the agent's Cluster
//! sync embeds the result for a shoot using the namespaced profile.

use seedlet_testkit as common;

use common::{Clusters, wait_for};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use seedlet_api::core::{CloudProfile, NamespacedCloudProfile, Shoot};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use seedlet_testkit::shoot_state as support;

use support::{
    CONTROL_PLANE, PROJECT_NAMESPACE, TIMEOUT, cluster_where, create, garden_with_shoot,
};

async fn status_where(
    api: &Api<NamespacedCloudProfile>,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    wait_for(what, TIMEOUT, || async {
        let profile = api.get("custom").await.expect("ncp");
        profile
            .status
            .and_then(|s| s.cloud_profile_spec)
            .filter(|spec| check(spec))
    })
    .await
}

#[tokio::test]
async fn namespaced_profile_status_follows_both_profiles_into_the_cluster() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let shutdown = CancellationToken::new();
    common::start_garden(&clusters, shutdown.clone()).await;
    support::start_agent(
        &clusters,
        std::time::Duration::from_secs(3600),
        shutdown.clone(),
    )
    .await;
    garden_with_shoot(&garden, "foo", json!({})).await;

    let profiles: Api<NamespacedCloudProfile> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    create::<NamespacedCloudProfile>(
        profiles.clone(),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "NamespacedCloudProfile",
            "metadata": {"name": "custom", "namespace": PROJECT_NAMESPACE},
            "spec": {
                "parent": {"kind": "CloudProfile", "name": "local"},
                "kubernetes": {"versions": [{"version": "1.33.0", "expirationDate": "2030-01-01T00:00:00Z"}]},
                "machineTypes": [{"name": "big", "cpu": "8", "gpu": "0", "memory": "32Gi"}],
                "caBundle": "NCP\n"
            }
        }),
    )
    .await;
    let spec = status_where(&profiles, "merged status", |spec| {
        spec["caBundle"] == "NCP\n"
    })
    .await;
    assert_eq!(
        spec,
        json!({
            "type": "local",
            "kubernetes": {"versions": [{"version": "1.33.0", "expirationDate": "2030-01-01T00:00:00Z"}]},
            "machineTypes": [{"name": "big", "cpu": "8", "gpu": "0", "memory": "32Gi", "architecture": "amd64"}],
            "caBundle": "NCP\n"
        })
    );
    let profile = profiles.get("custom").await.expect("ncp");
    assert_eq!(
        profile.status.as_ref().and_then(|s| s.observed_generation),
        profile.metadata.generation
    );

    // The shoot switches to the namespaced profile: its Cluster embeds the merged spec.
    Api::<Shoot>::namespaced(garden.clone(), PROJECT_NAMESPACE)
        .patch(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"cloudProfile": {"kind": "NamespacedCloudProfile", "name": "custom"}}})),
        )
        .await
        .expect("use ncp");
    cluster_where(&seed, CONTROL_PLANE, "cluster with merged profile", |c| {
        c.spec.cloud_profile["spec"]["caBundle"] == json!("NCP\n")
    })
    .await;

    // A parent change flows through the status into the Cluster.
    let parents: Api<CloudProfile> = Api::all(garden.clone());
    parents
        .patch(
            "local",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"caBundle": "PARENT\n"}})),
        )
        .await
        .expect("patch parent");
    status_where(&profiles, "parent bundle first", |spec| {
        spec["caBundle"] == "PARENT\nNCP\n"
    })
    .await;
    cluster_where(&seed, CONTROL_PLANE, "cluster follows the parent", |c| {
        c.spec.cloud_profile["spec"]["caBundle"] == json!("PARENT\nNCP\n")
    })
    .await;

    // An NCP change too; fields it no longer yields disappear from the status.
    profiles
        .patch(
            "custom",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"caBundle": null, "machineTypes": null}})),
        )
        .await
        .expect("patch ncp");
    let spec = status_where(&profiles, "ncp change", |spec| {
        spec["caBundle"] == "PARENT\n"
    })
    .await;
    assert!(spec.get("machineTypes").is_none(), "{spec}");

    // Parent gone (after the NCP lets it go): the status stays as it was.
    Api::<Shoot>::namespaced(garden.clone(), PROJECT_NAMESPACE)
        .patch(
            "foo",
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"spec": {"cloudProfile": {"kind": "CloudProfile", "name": "local"}}}),
            ),
        )
        .await
        .expect("back to the parent");
    let before = profiles.get("custom").await.expect("ncp").status;
    profiles
        .patch(
            "custom",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"parent": {"kind": "CloudProfile", "name": "gone"}}})),
        )
        .await
        .expect("dangling parent");
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let after = profiles.get("custom").await.expect("ncp").status;
    assert_eq!(
        before.and_then(|s| s.cloud_profile_spec),
        after.and_then(|s| s.cloud_profile_spec)
    );
    profiles
        .delete("custom", &DeleteParams::default())
        .await
        .expect("delete ncp");
    shutdown.cancel();
    clusters.shutdown().await;
}
