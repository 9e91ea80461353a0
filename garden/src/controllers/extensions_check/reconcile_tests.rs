//! Reconcile tests against an in-process garden sandbox: the controller type's `reconcile` is
//! called directly (through the `Reconciler` trait) on a real Seed with real
//! ControllerInstallations and `ExtensionsReady` is read back.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use seedlet_api::core::{ControllerInstallation, Seed};
use serde_json::{Value, json};

use super::{ExtensionsCheck, Settings};
use crate::controllers::seed_check::Check;
use crate::testing::{Env, assert_unselectable, create, seed};
use seedlet_runtime::controller::Reconciler as _;

fn ctx(env: &Env) -> Arc<ExtensionsCheck> {
    Arc::new(ExtensionsCheck::new(Check {
        client: env.client.clone(),
        settings: Settings {
            concurrent_syncs: 1,
            sync_period: Duration::from_secs(30),
            threshold: None,
        },
        clock: env.clock(),
    }))
}

async fn ready(env: &Env) -> Option<(String, String, String)> {
    let seed = Api::<Seed>::all(env.client.clone())
        .get("s1")
        .await
        .unwrap();
    seedlet_api::conditions::find(seed.conditions(), "ExtensionsReady")
        .map(|c| (c.status.to_string(), c.reason.clone(), c.message.clone()))
}

fn condition(type_: &str, status: &str) -> Value {
    json!({"type": type_, "status": status, "reason": "r", "message": format!("{type_} is {status}"),
           "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z"})
}

async fn installation(env: &Env, seed: &str, healthy: &str) {
    let name = format!("ci-{seed}");
    let _: ControllerInstallation = create(
        &env.client,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerInstallation",
               "metadata": {"name": name},
               "spec": {"registrationRef": {"name": "ext"}, "deploymentRef": {"name": "ext"},
                        "seedRef": {"name": seed}}}),
    )
    .await;
    let status = json!({"status": {"conditions": [
        condition("Valid", "True"), condition("Installed", "True"),
        condition("Healthy", healthy), condition("Progressing", "False")]}});
    Api::<ControllerInstallation>::all(env.client.clone())
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

#[tokio::test]
async fn the_seeds_installations_decide_extensions_ready() {
    installations_decide_extensions_ready(Env::start().await).await;
}

/// Kubernetes < 1.31 serves the garden's CRDs without `selectableFields`: the check lists all
/// installations and keeps the Seed's.
#[tokio::test]
async fn the_seeds_installations_decide_extensions_ready_when_the_garden_cannot_select_them() {
    let env = Env::start_without_selectable_fields().await;
    assert_unselectable::<ControllerInstallation>(&env.client, "spec.seedRef.name").await;
    installations_decide_extensions_ready(env).await;
}

async fn installations_decide_extensions_ready(env: Env) {
    let s1 = Arc::new(seed(&env.client, "s1").await);
    installation(&env, "s1", "True").await;
    // Another seed's failing installation does not count.
    installation(&env, "s2", "False").await;
    let ctx = ctx(&env);

    ctx.clone().reconcile(s1.clone()).await.unwrap();
    let (status, reason, _) = ready(&env).await.unwrap();
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "AllExtensionsReady")
    );

    let unhealthy = json!({"status": {"conditions": [
        condition("Valid", "True"), condition("Installed", "True"),
        condition("Healthy", "False"), condition("Progressing", "False")]}});
    Api::<ControllerInstallation>::all(env.client.clone())
        .patch_status("ci-s1", &PatchParams::default(), &Patch::Merge(&unhealthy))
        .await
        .unwrap();
    // Within a second of the last check the Seed waits for the rest of that second.
    let action = ctx.clone().reconcile(s1.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(Duration::from_secs(1)));
    assert_eq!(
        ready(&env).await.unwrap().0,
        "True",
        "not checked again yet"
    );
    env.clock.advance(SignedDuration::from_millis(400));
    let action = ctx.clone().reconcile(s1.clone()).await.unwrap();
    assert_eq!(action, Action::requeue(Duration::from_millis(600)));
    env.clock.advance(SignedDuration::from_millis(600));
    let action = ctx.reconcile(s1).await.unwrap();
    assert_eq!(action, Action::requeue(Duration::from_secs(30)));
    let (status, reason, message) = ready(&env).await.unwrap();
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "NotAllExtensionsHealthy")
    );
    assert!(message.contains("ci-s1"), "{message}");
    assert!(!message.contains("ci-s2"), "{message}");
    env.shutdown().await;
}
