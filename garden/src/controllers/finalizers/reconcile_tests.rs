//! Reconcile tests against an in-process garden sandbox for the three finalizer controllers:
//! Seeds, ControllerRegistrations and ControllerDeployments are real objects, the reconcilers are
//! called directly, and finalizers, the Seed's namespace and the returned action or error are
//! checked.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{
    ControllerDeployment, ControllerInstallation, ControllerRegistration, Seed,
};
use seedlet_api::names::finalizers;
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::json;

use super::{
    DeploymentFinalizer, Error, RESYNC_PERIOD, RETRY_DELAY, RegistrationFinalizer, SeedFinalizer,
};
use crate::testing::{self, Env, create};

/// The three controllers on the sandbox.
struct Finalizers {
    seeds: SeedFinalizer,
    registrations: RegistrationFinalizer,
    deployments: DeploymentFinalizer,
}

fn ctx(env: &Env) -> Arc<Finalizers> {
    Arc::new(Finalizers {
        seeds: SeedFinalizer::new(env.client.clone()),
        registrations: RegistrationFinalizer::new(env.client.clone()),
        deployments: DeploymentFinalizer::new(env.client.clone()),
    })
}

async fn installation(env: &Env, name: &str, registration: &str, seed: &str) {
    create::<ControllerInstallation>(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerInstallation",
               "metadata": {"name": name},
               "spec": {"registrationRef": {"name": registration}, "seedRef": {"name": seed}}}),
    )
    .await;
}

async fn delete_installation(env: &Env, name: &str) {
    Api::<ControllerInstallation>::all(env.client.clone())
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

async fn registration_object(env: &Env, name: &str, deployment: &str) -> ControllerRegistration {
    create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerRegistration",
               "metadata": {"name": name},
               "spec": {"resources": [{"kind": "Extension", "type": name}],
                        "deployment": {"deploymentRefs": [{"name": deployment}]}}}),
    )
    .await
}

/// Reads `name` of `K` fresh, `None` once it is gone.
async fn get<K>(env: &Env, name: &str) -> Option<K>
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    Api::<K>::all(env.client.clone())
        .get_opt(name)
        .await
        .unwrap()
}

async fn delete<K>(env: &Env, name: &str) -> Arc<K>
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    Api::<K>::all(env.client.clone())
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
    Arc::new(get::<K>(env, name).await.expect("held by its finalizer"))
}

#[tokio::test]
async fn a_live_seed_gets_the_finalizer_and_its_garden_namespace() {
    let env = Env::start().await;
    let created = Arc::new(testing::seed(&env.client, "local").await);

    let action = ctx(&env).seeds.reconcile(created).await.unwrap();
    assert_eq!(action, Action::requeue(RESYNC_PERIOD));
    let stored = get::<Seed>(&env, "local").await.unwrap();
    assert_eq!(stored.finalizers(), [finalizers::CONTROLLER_REGISTRATION]);
    let namespace = Api::<Namespace>::all(env.client.clone())
        .get("seed-local")
        .await
        .unwrap();
    assert_eq!(namespace.labels()["gardener.cloud/role"], "seed");
    let owner = &namespace.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Seed", "local")
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_deleting_seed_is_held_while_installations_reference_it() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let created = Arc::new(testing::seed(&env.client, "local").await);
    ctx.clone().seeds.reconcile(created).await.unwrap();
    installation(&env, "ext-local", "ext", "local").await;
    installation(&env, "ext-other", "ext", "other").await;
    let deleting = delete::<Seed>(&env, "local").await;

    let error = ctx
        .clone()
        .seeds
        .reconcile(deleting.clone())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::StillReferenced { names, .. } if names == &["ext-local"]),
        "{error}"
    );
    assert_eq!(
        ctx.seeds.error_policy(&deleting, &error),
        Action::requeue(RETRY_DELAY)
    );
    assert!(get::<Seed>(&env, "local").await.is_some());

    delete_installation(&env, "ext-local").await;
    let deleting = Arc::new(get::<Seed>(&env, "local").await.unwrap());
    assert_eq!(
        ctx.seeds.reconcile(deleting).await.unwrap(),
        Action::await_change()
    );
    assert!(get::<Seed>(&env, "local").await.is_none(), "released");
    env.shutdown().await;
}

#[tokio::test]
async fn a_deleting_registration_is_held_while_installations_reference_it() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let created = Arc::new(registration_object(&env, "ext", "ext").await);
    assert_eq!(
        ctx.clone().registrations.reconcile(created).await.unwrap(),
        Action::requeue(RESYNC_PERIOD)
    );
    installation(&env, "ext-local", "ext", "local").await;
    let deleting = delete::<ControllerRegistration>(&env, "ext").await;
    assert_eq!(deleting.finalizers(), [finalizers::CONTROLLER_REGISTRATION]);

    let error = ctx
        .clone()
        .registrations
        .reconcile(deleting)
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "StillReferenced");

    delete_installation(&env, "ext-local").await;
    let deleting = Arc::new(get::<ControllerRegistration>(&env, "ext").await.unwrap());
    ctx.registrations.reconcile(deleting).await.unwrap();
    assert!(get::<ControllerRegistration>(&env, "ext").await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_deleting_deployment_is_held_while_registrations_list_it() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let created: ControllerDeployment = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1", "kind": "ControllerDeployment",
               "metadata": {"name": "ext"}, "helm": {"rawChart": "AA=="}}),
    )
    .await;
    ctx.clone()
        .deployments
        .reconcile(Arc::new(created))
        .await
        .unwrap();
    registration_object(&env, "uses-ext", "ext").await;
    let deleting = delete::<ControllerDeployment>(&env, "ext").await;

    let error = ctx
        .clone()
        .deployments
        .reconcile(deleting)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::StillReferenced { names, .. } if names == &["uses-ext"]),
        "{error}"
    );

    Api::<ControllerRegistration>::all(env.client.clone())
        .delete("uses-ext", &DeleteParams::default())
        .await
        .unwrap();
    let deleting = Arc::new(get::<ControllerDeployment>(&env, "ext").await.unwrap());
    ctx.deployments.reconcile(deleting).await.unwrap();
    assert!(get::<ControllerDeployment>(&env, "ext").await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_deleting_object_without_our_finalizer_is_left_alone() {
    let env = Env::start().await;
    create::<ControllerRegistration>(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerRegistration",
               "metadata": {"name": "ext", "finalizers": ["test/hold"]},
               "spec": {"resources": [{"kind": "Extension", "type": "ext"}]}}),
    )
    .await;
    installation(&env, "ext-local", "ext", "local").await;
    let deleting = delete::<ControllerRegistration>(&env, "ext").await;

    assert_eq!(
        ctx(&env).registrations.reconcile(deleting).await.unwrap(),
        Action::await_change()
    );
    let stored = get::<ControllerRegistration>(&env, "ext").await.unwrap();
    assert_eq!(stored.finalizers(), ["test/hold"]);
    env.shutdown().await;
}

#[tokio::test]
async fn a_stale_copy_loses_the_finalizer_write_with_a_conflict_and_is_requeued_at_once() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let stale = Arc::new(registration_object(&env, "ext", "ext").await);
    Api::<ControllerRegistration>::all(env.client.clone())
        .patch(
            "ext",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();

    let error = ctx
        .clone()
        .registrations
        .reconcile(stale.clone())
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Finalizer { .. }), "{error}");
    assert_eq!(
        ctx.registrations.error_policy(&stale, &error),
        Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE)
    );
    assert!(
        get::<ControllerRegistration>(&env, "ext")
            .await
            .unwrap()
            .finalizers()
            .is_empty()
    );

    let fresh = Arc::new(get::<ControllerRegistration>(&env, "ext").await.unwrap());
    ctx.registrations.reconcile(fresh).await.unwrap();
    assert_eq!(
        get::<ControllerRegistration>(&env, "ext")
            .await
            .unwrap()
            .finalizers(),
        [finalizers::CONTROLLER_REGISTRATION]
    );
    env.shutdown().await;
}
