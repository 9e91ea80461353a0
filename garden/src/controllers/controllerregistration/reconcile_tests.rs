//! Reconcile tests against an in-process garden sandbox: registrations, deployments and Seeds are
//! real objects, the caches are listed by shared informers, the controller's `reconcile` is
//! called directly and the Seed's ControllerInstallations are read back.

use std::sync::Arc;

use kube::api::{DeleteParams, ListParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{
    ControllerDeployment, ControllerInstallation, ControllerRegistration, Seed,
};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::{Value, json};

use super::{Caches, Error, Scheduling};
use crate::caches::GardenCaches;
use crate::testing::{self, Env, create};

const SEED: &str = "local";

/// A controller context whose caches hold what the garden holds now: the stores of shared
/// informers, listed, then stopped (a store keeps its contents when its watch ends).
async fn ctx(env: &Env) -> Arc<Scheduling> {
    let stop = tokio_util::sync::CancellationToken::new();
    let shared = GardenCaches::new(env.client.clone(), &stop);
    let caches = Caches::of(&shared);
    assert!(caches.ready().await, "the caches list");
    drop(shared);
    Arc::new(Scheduling {
        client: env.client.clone(),
        caches,
        concurrency: 1,
    })
}

async fn registration(env: &Env, name: &str, policy: &str, resources: Value) {
    create::<ControllerRegistration>(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerRegistration",
               "metadata": {"name": name},
               "spec": {"resources": resources,
                        "deployment": {"policy": policy, "deploymentRefs": [{"name": name}]}}}),
    )
    .await;
    create::<ControllerDeployment>(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1", "kind": "ControllerDeployment",
               "metadata": {"name": name}, "helm": {"rawChart": "AA==", "values": {"x": 1}}}),
    )
    .await;
}

/// The provider registration every Seed of type `local` needs.
async fn provider_local(env: &Env) {
    registration(
        env,
        "provider-local",
        "OnDemand",
        json!([{"kind": "ControlPlane", "type": "local"},
               {"kind": "Infrastructure", "type": "local"},
               {"kind": "Worker", "type": "local"}]),
    )
    .await;
}

async fn installations(env: &Env) -> Vec<ControllerInstallation> {
    let mut items = Api::<ControllerInstallation>::all(env.client.clone())
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    items.sort_by(|a, b| {
        a.spec
            .registration_ref
            .name
            .cmp(&b.spec.registration_ref.name)
    });
    items
}

fn registrations_of(installations: &[ControllerInstallation]) -> Vec<String> {
    installations
        .iter()
        .map(|ci| ci.spec.registration_ref.name.clone())
        .collect()
}

async fn the_seed(env: &Env) -> Arc<Seed> {
    Arc::new(
        Api::<Seed>::all(env.client.clone())
            .get(SEED)
            .await
            .unwrap(),
    )
}

/// An installation of `registration` on our Seed written by someone else (e.g. an older run).
async fn installation(env: &Env, name: &str, registration: &str, finalizers: &[&str]) {
    create::<ControllerInstallation>(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerInstallation",
               "metadata": {"name": name, "finalizers": finalizers},
               "spec": {"registrationRef": {"name": registration},
                        "deploymentRef": {"name": registration}, "seedRef": {"name": SEED}}}),
    )
    .await;
}

#[tokio::test]
async fn the_seed_gets_installations_of_its_provider_and_of_always_registrations_only() {
    let env = Env::start().await;
    testing::seed(&env.client, SEED).await;
    provider_local(&env).await;
    registration(&env, "monitoring", "Always", json!([])).await;
    registration(
        &env,
        "dns-other",
        "OnDemand",
        json!([{"kind": "DNSRecord", "type": "other"}]),
    )
    .await;
    let ctx = ctx(&env).await;

    let action = ctx.clone().reconcile(the_seed(&env).await).await.unwrap();
    assert_eq!(action, Action::await_change(), "purely event driven");
    let written = installations(&env).await;
    assert_eq!(registrations_of(&written), ["monitoring", "provider-local"]);
    let provider = &written[1];
    assert!(provider.name_any().starts_with("provider-local-"));
    assert_eq!(provider.seed_name(), Some(SEED));
    let seed = the_seed(&env).await;
    assert_eq!(
        provider
            .spec
            .seed_ref
            .as_ref()
            .and_then(|r| r.resource_version.clone()),
        seed.resource_version()
    );
    assert_eq!(
        provider
            .spec
            .deployment_ref
            .as_ref()
            .map(|r| r.name.as_str()),
        Some("provider-local")
    );
    for label in [
        "seed-spec-hash",
        "registration-spec-hash",
        "deployment-hash",
    ] {
        assert!(provider.labels().contains_key(label), "{label}");
    }

    // A second pass finds everything up to date and writes nothing.
    ctx.reconcile(seed).await.unwrap();
    let again = installations(&env).await;
    assert_eq!(
        again
            .iter()
            .map(|ci| ci.resource_version())
            .collect::<Vec<_>>(),
        written
            .iter()
            .map(|ci| ci.resource_version())
            .collect::<Vec<_>>()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn installations_of_registrations_no_longer_wanted_are_deleted() {
    let env = Env::start().await;
    testing::seed(&env.client, SEED).await;
    provider_local(&env).await;
    registration(
        &env,
        "dns-other",
        "OnDemand",
        json!([{"kind": "DNSRecord", "type": "other"}]),
    )
    .await;
    installation(&env, "dns-other-old", "dns-other", &[]).await;

    ctx(&env)
        .await
        .reconcile(the_seed(&env).await)
        .await
        .unwrap();
    assert_eq!(
        registrations_of(&installations(&env).await),
        ["provider-local"]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_wanted_kind_without_registration_fails_and_writes_nothing() {
    let env = Env::start().await;
    testing::seed(&env.client, SEED).await;
    registration(&env, "monitoring", "Always", json!([])).await;
    let ctx = ctx(&env).await;

    let error = ctx.reconcile(the_seed(&env).await).await.unwrap_err();
    assert_eq!(error.reason(), "NoControllerRegistration");
    let chain = seedlet_runtime::error_chain(&error).to_string();
    assert!(chain.contains("ControlPlane/local"), "{chain}");
    assert!(installations(&env).await.is_empty());
    env.shutdown().await;
}

#[tokio::test]
async fn an_installation_of_an_unknown_registration_stops_the_pass() {
    let env = Env::start().await;
    testing::seed(&env.client, SEED).await;
    provider_local(&env).await;
    installation(&env, "ghost-1", "ghost", &[]).await;

    let error = ctx(&env)
        .await
        .reconcile(the_seed(&env).await)
        .await
        .unwrap_err();
    assert!(matches!(&error, Error::UnknownRegistration(name) if name == "ghost"));
    assert_eq!(error.reason(), "RegistrationNotFound");
    assert_eq!(registrations_of(&installations(&env).await), ["ghost"]);
    env.shutdown().await;
}

#[tokio::test]
async fn a_wanted_registration_waits_while_its_old_installation_is_deleting() {
    let env = Env::start().await;
    testing::seed(&env.client, SEED).await;
    provider_local(&env).await;
    installation(&env, "provider-local-old", "provider-local", &["test/hold"]).await;
    Api::<ControllerInstallation>::all(env.client.clone())
        .delete("provider-local-old", &DeleteParams::default())
        .await
        .unwrap();

    let error = ctx(&env)
        .await
        .reconcile(the_seed(&env).await)
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "DeletionPending");
    let names: Vec<String> = installations(&env)
        .await
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    assert_eq!(names, ["provider-local-old"], "no second installation");
    env.shutdown().await;
}

#[tokio::test]
async fn a_lost_write_race_is_requeued_at_once_and_other_errors_after_five_seconds() {
    // The controller's own writes are unguarded merge patches and generateName creates, so the
    // garden never answers them 409; a 409 from anywhere in the chain (e.g. an admission webhook
    // racing it) is still routine for the shared policy.
    let env = Env::start().await;
    let ctx = ctx(&env).await;
    let seed = Arc::new(testing::seed(&env.client, SEED).await);
    let conflict = Error::WriteInstallation {
        registration: "r".into(),
        seed: SEED.into(),
        source: kube::Error::Api(
            kube::core::Status::failure("modified", "Conflict")
                .with_code(409)
                .boxed(),
        ),
    };
    assert_eq!(
        ctx.clone().error_policy(&seed.clone(), &conflict),
        Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE)
    );
    let pending = Error::DeletionPending {
        registration: "r".into(),
    };
    assert_eq!(
        ctx.error_policy(&seed, &pending),
        Action::requeue(std::time::Duration::from_secs(5))
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_seed_selector_limits_a_registration_to_matching_seeds() {
    let env = Env::start().await;
    testing::seed(&env.client, SEED).await;
    provider_local(&env).await;
    for (name, selector) in [("for-prod", "prod"), ("for-local", "local")] {
        create::<ControllerRegistration>(
            &env.client,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerRegistration",
                   "metadata": {"name": name},
                   "spec": {"deployment": {"policy": "Always",
                                           "seedSelector": {"matchLabels": {"env": selector}}}}}),
        )
        .await;
    }
    Api::<Seed>::all(env.client.clone())
        .patch(
            SEED,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"labels": {"env": "local"}}})),
        )
        .await
        .unwrap();

    ctx(&env)
        .await
        .reconcile(the_seed(&env).await)
        .await
        .unwrap();
    assert_eq!(
        registrations_of(&installations(&env).await),
        ["for-local", "provider-local"]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_required_installation_stays_while_the_seed_no_longer_needs_its_registration() {
    let env = Env::start().await;
    testing::seed(&env.client, SEED).await;
    provider_local(&env).await;
    registration(
        &env,
        "dns-other",
        "OnDemand",
        json!([{"kind": "DNSRecord", "type": "other"}]),
    )
    .await;
    installation(&env, "dns-other-1", "dns-other", &[]).await;
    // The agent still sees objects of the extension in the seed.
    let required = json!({"status": {"conditions": [{
        "type": "Required", "status": "True", "reason": "ExtensionObjectsExist",
        "message": "extension objects still exist in the seed: [DNSRecord/other]",
        "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z"}]}});
    Api::<ControllerInstallation>::all(env.client.clone())
        .patch_status(
            "dns-other-1",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&required),
        )
        .await
        .unwrap();

    ctx(&env)
        .await
        .reconcile(the_seed(&env).await)
        .await
        .unwrap();
    // Without Required=True it would be deleted (see the test of unwanted installations).
    assert_eq!(
        registrations_of(&installations(&env).await),
        ["dns-other", "provider-local"]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_deleting_seed_wants_no_installations_any_more() {
    let env = Env::start().await;
    testing::seed(&env.client, SEED).await;
    provider_local(&env).await;
    registration(&env, "monitoring", "Always", json!([])).await;
    ctx(&env)
        .await
        .reconcile(the_seed(&env).await)
        .await
        .unwrap();
    assert_eq!(installations(&env).await.len(), 2);
    let seeds = Api::<Seed>::all(env.client.clone());
    seeds
        .patch(
            SEED,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"finalizers": ["test/hold"]}})),
        )
        .await
        .unwrap();
    seeds.delete(SEED, &DeleteParams::default()).await.unwrap();

    ctx(&env)
        .await
        .reconcile(the_seed(&env).await)
        .await
        .unwrap();
    assert!(installations(&env).await.is_empty());
    env.shutdown().await;
}
