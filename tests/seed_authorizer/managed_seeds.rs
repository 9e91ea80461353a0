//! Managed seeds and Gardenlets under the seed authorizer and SeedRestriction: the seed labels
//! of Shoots, ManagedSeeds and Seeds, the parent's rights, Gardenlet bootstrap tokens.

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use seedlet_api::core::{Seed, Shoot};
use seedlet_testkit as common;
use serde_json::json;

use super::{TIMEOUT, create, forbidden_because, outcome, seed_client, start};

/// Creates an empty Secret `name` through `secrets`.
async fn create_as(secrets: &Api<Secret>, name: &str) -> Result<Secret, kube::Error> {
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("secret");
    secrets.create(&PostParams::default(), &secret).await
}

/// The garden controller keeps the `name.seed.gardener.cloud/<seed>` labels gardener-apiserver
/// would: a seed lists Shoots, ManagedSeeds and Seeds with its own label selector and sees what
/// it hosts, another seed's selector gets no opinion (403), and a managed seed's labels follow
/// the seed its Shoot moves to; the parent seed may create the managed seed's backup credentials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_selected_lists_follow_the_seed_labels() {
    use seedlet_api::seedmanagement::ManagedSeed;
    let env = start().await;
    let admin = env.garden.client();
    create::<Shoot>(
        Api::namespaced(admin.clone(), "garden"),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "child"},
            "spec": {"seedName": "a", "region": "local", "provider": {"type": "local"},
                     "cloudProfile": {"name": "local"}}
        }),
    )
    .await;
    create::<ManagedSeed>(
        Api::namespaced(admin.clone(), "garden"),
        json!({
            "apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "ManagedSeed",
            "metadata": {"name": "child"},
            "spec": {"shoot": {"name": "child"}, "gardenlet": {"config": {"seedConfig": {"spec": {
                "backup": {"credentialsRef": {"apiVersion": "v1", "kind": "Secret",
                                              "namespace": "garden", "name": "child-backup"}}}}}}}
        }),
    )
    .await;
    create::<Seed>(
        Api::all(admin.clone()),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
            "metadata": {"name": "child"},
            "spec": {"provider": {"type": "local", "region": "local"},
                     "networks": {"pods": "10.3.0.0/16", "services": "10.4.0.0/16"}}
        }),
    )
    .await;
    let a = seed_client(&env.garden, "a").await;
    let own = ListParams::default().labels("name.seed.gardener.cloud/a=true");
    let names = |list: Vec<String>| {
        let mut list = list;
        list.sort();
        list
    };
    common::wait_until("a's label selector finds its objects", TIMEOUT, || async {
        let shoots = Api::<Shoot>::all(a.clone()).list(&own).await;
        let managed = Api::<ManagedSeed>::all(a.clone()).list(&own).await;
        let seeds = Api::<Seed>::all(a.clone()).list(&own).await;
        match (shoots, managed, seeds) {
            (Ok(shoots), Ok(managed), Ok(seeds)) => {
                names(
                    shoots
                        .items
                        .iter()
                        .map(|s| s.metadata.name.clone().unwrap_or_default())
                        .collect(),
                ) == ["child", "shoot-a"]
                    && managed.items.len() == 1
                    && names(
                        seeds
                            .items
                            .iter()
                            .map(|s| s.metadata.name.clone().unwrap_or_default())
                            .collect(),
                    ) == ["a", "child"]
            }
            _ => false,
        }
    })
    .await;
    let theirs = ListParams::default().labels("name.seed.gardener.cloud/b=true");
    forbidden_because(
        outcome(Api::<Shoot>::all(a.clone()).list(&theirs).await),
        "",
    );

    // SeedRestriction: the parent seed creates its managed seed's backup credentials, nothing
    // else in `garden`.
    let secrets: Api<Secret> = Api::namespaced(a.clone(), "garden");
    outcome(create_as(&secrets, "child-backup").await).expect("the child's backup secret");
    forbidden_because(
        outcome(create_as(&secrets, "unrelated").await),
        "object does not belong to seed \"a\"",
    );

    // The managed seed's Shoot moves to b: its ManagedSeed and Seed follow.
    Api::<Shoot>::namespaced(admin.clone(), "garden")
        .patch(
            "child",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"seedName": "b"}})),
        )
        .await
        .expect("shoot moved");
    let seeds: Api<Seed> = Api::all(admin.clone());
    common::wait_until("Seed child carries b's label", TIMEOUT, || async {
        seeds.get("child").await.is_ok_and(|seed| {
            let labels = seed.metadata.labels.unwrap_or_default();
            labels.contains_key("name.seed.gardener.cloud/b")
                && !labels.contains_key("name.seed.gardener.cloud/a")
        })
    })
    .await;
    let managed = Api::<ManagedSeed>::all(a).list(&own).await.expect("list");
    assert!(
        managed.items.is_empty(),
        "a no longer hosts the managed seed"
    );
    env.shutdown.cancel();
}

/// SeedRestriction's Gardenlet rule through the real webhook: a seed creates a bootstrap token for
/// its own Gardenlet only while it asks to renew its kubeconfig, never for another seed's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gardenlet_bootstrap_tokens_only_while_renewing() {
    use seedlet_api::seedmanagement::Gardenlet;
    let env = start().await;
    let admin = env.garden.client();
    create::<Gardenlet>(
        Api::namespaced(admin.clone(), "garden"),
        json!({"apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "Gardenlet",
               "metadata": {"name": "a"}, "spec": {}}),
    )
    .await;
    let a = seed_client(&env.garden, "a").await;
    let tokens: Api<Secret> = Api::namespaced(a.clone(), "kube-system");
    let token = |id: &str, target: &str| -> Secret {
        serde_json::from_value(json!({
            "metadata": {"name": format!("bootstrap-token-{id}")},
            "type": "bootstrap.kubernetes.io/token",
            "stringData": {"token-id": id, "token-secret": "0123456789abcdef",
                "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
                "description": format!("A bootstrap token for the Gardenlet for seedmanagement.gardener.cloud/v1alpha1.Gardenlet resource {target}.")}
        }))
        .expect("token")
    };
    let denied = |message: &str| {
        format!(
            "admission webhook \"seed-restriction.gardener.cloud\" denied the request: {message}"
        )
    };
    // The authorizer's graph and the webhook need a moment after start: retry until answered.
    common::wait_until("SeedRestriction answers", TIMEOUT, || async {
        matches!(
            outcome(tokens.create(&PostParams::default(), &token("aaaaa1", "garden/a")).await),
            Err((400, message)) if message == denied("gardenlet garden/a is already bootstrapped")
        )
    })
    .await;
    match outcome(
        tokens
            .create(&PostParams::default(), &token("aaaaa2", "garden/b"))
            .await,
    ) {
        Err((403, message)) => {
            assert_eq!(
                message,
                denied("gardenlet garden/b does not belong to seed \"a\"")
            )
        }
        other => panic!("a must not bootstrap b's gardenlet: {other:?}"),
    }
    Api::<Gardenlet>::namespaced(admin, "garden")
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"annotations": {"gardener.cloud/operation": "renew-kubeconfig"}}})),
        )
        .await
        .expect("renewal asked for");
    common::wait_until("renewal lets a create its token", TIMEOUT, || async {
        outcome(
            tokens
                .create(&PostParams::default(), &token("aaaaa3", "garden/a"))
                .await,
        )
        .is_ok()
    })
    .await;
    env.shutdown.cancel();
}
