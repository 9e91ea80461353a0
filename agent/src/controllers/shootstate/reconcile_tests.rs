//! Reconcile tests against in-process garden and seed sandboxes: extension objects and persisted
//! Secrets are real seed objects, the [`Job`]s are built from them the way the watches build
//! their updates, [`run`] writes the ShootState and the test reads it back.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::ShootState;
use seedlet_api::extensions::Extension;
use serde_json::{Value, json};

use super::reconcile::{Ctx, Error, Job, run};
use crate::cluster_shoot::ShootRef;
use crate::shoot_state::entries::{ExtensionItem, SecretItem};
use crate::testing::{Env, FIELD_MANAGER, create, ensure_namespace};

/// The shoot's control-plane namespace in the seed.
const CONTROL_PLANE: &str = "shoot--dev--foo";
/// The shoot's project namespace in the garden (= ShootState namespace).
const PROJECT: &str = "garden-dev";

fn ctx(env: &Env) -> Ctx {
    Ctx::new(
        env.seed.clone(),
        env.garden.clone(),
        Env::metrics(),
        env.clock(),
        FIELD_MANAGER,
    )
}

fn shoot(deleting: bool) -> ShootRef {
    ShootRef {
        namespace: PROJECT.to_owned(),
        name: "foo".to_owned(),
        deleting,
        last_operation: None,
    }
}

async fn namespaces(env: &Env) {
    ensure_namespace(&env.seed, CONTROL_PLANE).await;
    ensure_namespace(&env.garden, PROJECT).await;
}

/// Extension `name` in the control plane whose status holds `state` and `resources`.
async fn extension(env: &Env, name: &str, state: Value, resources: Value) -> Extension {
    create::<Extension>(
        &env.seed,
        json!({"apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Extension",
               "metadata": {"name": name, "namespace": CONTROL_PLANE},
               "spec": {"type": "test"}}),
    )
    .await;
    let status = json!({"status": {"state": state, "resources": resources}});
    Api::<Extension>::namespaced(env.seed.clone(), CONTROL_PLANE)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap()
}

/// Secret `name` in the control plane, labelled `persist=true` when `persisted`.
async fn secret(env: &Env, name: &str, persisted: bool) -> Secret {
    let labels = if persisted {
        json!({"persist": "true"})
    } else {
        json!({})
    };
    create(
        &env.seed,
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": name, "namespace": CONTROL_PLANE, "labels": labels},
               "stringData": {"key": format!("value of {name}")}}),
    )
    .await
}

fn reference(name: &str, secret: &str) -> Value {
    json!([{"name": name, "resourceRef": {"apiVersion": "v1", "kind": "Secret", "name": secret}}])
}

fn job(
    extensions: Vec<(&str, Option<ExtensionItem>)>,
    secrets: Vec<(&str, Option<SecretItem>)>,
) -> Job {
    Job {
        namespace: CONTROL_PLANE.to_owned(),
        shoot: shoot(false),
        extensions: extensions
            .into_iter()
            .map(|(name, item)| (("Extension", name.to_owned()), item.map(|item| item.data)))
            .collect(),
        secrets: secrets
            .into_iter()
            .map(|(name, item)| (name.to_owned(), item))
            .collect(),
        snapshot: false,
    }
}

async fn shoot_state(env: &Env) -> Option<ShootState> {
    Api::<ShootState>::namespaced(env.garden.clone(), PROJECT)
        .get_opt("foo")
        .await
        .unwrap()
}

fn extension_names(state: &ShootState) -> Vec<String> {
    state
        .spec
        .extensions
        .iter()
        .filter_map(|entry| entry.name.clone())
        .collect()
}

fn gardener_names(state: &ShootState) -> Vec<String> {
    state.spec.gardener.iter().map(|g| g.name.clone()).collect()
}

#[tokio::test]
async fn a_batch_creates_the_shoot_state_then_updates_and_removes_single_entries() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    namespaces(&env).await;
    secret(&env, "referenced", false).await;
    let ext = extension(
        &env,
        "ext-a",
        json!({"phase": 1}),
        reference("r", "referenced"),
    )
    .await;
    let persisted = secret(&env, "ca", true).await;
    let batch = job(
        vec![("ext-a", ExtensionItem::of(&ext))],
        vec![("ca", SecretItem::of(&persisted))],
    );

    let outcome = run(&ctx, &batch).await.unwrap();
    assert!(outcome.wrote);
    assert!(outcome.failed.is_empty());
    let state = shoot_state(&env).await.expect("created");
    assert_eq!(extension_names(&state), ["ext-a"]);
    assert_eq!(state.spec.extensions[0].state, Some(json!({"phase": 1})));
    assert_eq!(gardener_names(&state), ["ca"]);
    assert_eq!(state.spec.gardener[0].type_, "secret");
    let copies: Vec<_> = state
        .spec
        .resources
        .iter()
        .map(|r| (r.kind.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(copies, [("Secret", "referenced")]);

    // The same batch again changes nothing, so nothing is written.
    let outcome = run(&ctx, &batch).await.unwrap();
    assert!(!outcome.wrote);
    assert_eq!(
        shoot_state(&env).await.unwrap().resource_version(),
        state.resource_version()
    );

    // The Secret is gone: only its entry leaves.
    let outcome = run(&ctx, &job(vec![], vec![("ca", None)])).await.unwrap();
    assert!(outcome.wrote);
    let state = shoot_state(&env).await.unwrap();
    assert!(gardener_names(&state).is_empty());
    assert_eq!(extension_names(&state), ["ext-a"]);
    env.shutdown().await;
}

#[tokio::test]
async fn an_extension_whose_referenced_object_is_missing_is_reported_and_the_rest_written() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    namespaces(&env).await;
    let ext = extension(&env, "ext-a", json!({"phase": 1}), reference("r", "absent")).await;
    let persisted = secret(&env, "ca", true).await;

    let outcome = run(
        &ctx,
        &job(
            vec![("ext-a", ExtensionItem::of(&ext))],
            vec![("ca", SecretItem::of(&persisted))],
        ),
    )
    .await
    .unwrap();
    assert!(outcome.wrote);
    let failed: Vec<_> = outcome
        .failed
        .iter()
        .map(|((kind, name), error)| (*kind, name.as_str(), error.reason()))
        .collect();
    assert_eq!(failed, [("Extension", "ext-a", "ResourceMissing")]);
    let state = shoot_state(&env).await.unwrap();
    assert!(extension_names(&state).is_empty(), "left as it was");
    assert_eq!(gardener_names(&state), ["ca"]);
    env.shutdown().await;
}

#[tokio::test]
async fn no_shoot_state_is_created_for_a_deleting_shoot() {
    let env = Env::start().await;
    namespaces(&env).await;
    let persisted = secret(&env, "ca", true).await;
    let mut batch = job(vec![], vec![("ca", SecretItem::of(&persisted))]);
    batch.shoot = shoot(true);

    let outcome = run(&ctx(&env), &batch).await.unwrap();
    assert!(!outcome.wrote);
    assert!(shoot_state(&env).await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_snapshot_replaces_the_spec_from_fresh_lists_and_stamps_the_time() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    namespaces(&env).await;
    let old = extension(&env, "ext-old", json!({"phase": 0}), json!([])).await;
    run(
        &ctx,
        &job(vec![("ext-old", ExtensionItem::of(&old))], vec![]),
    )
    .await
    .unwrap();
    // The old extension leaves the seed without an event; a new one and a Secret appear.
    Api::<Extension>::namespaced(env.seed.clone(), CONTROL_PLANE)
        .delete("ext-old", &Default::default())
        .await
        .unwrap();
    extension(&env, "ext-new", json!({"phase": 2}), json!([])).await;
    secret(&env, "ca", true).await;
    secret(&env, "not-persisted", false).await;
    let mut snapshot = job(vec![], vec![]);
    snapshot.snapshot = true;

    let outcome = run(&ctx, &snapshot).await.unwrap();
    assert!(outcome.wrote);
    assert_eq!(outcome.timestamp.as_deref(), Some("2025-01-01T00:00:00Z"));
    let state = shoot_state(&env).await.unwrap();
    assert_eq!(extension_names(&state), ["ext-new"]);
    assert_eq!(gardener_names(&state), ["ca"]);
    assert_eq!(
        state
            .annotations()
            .get("gardener.cloud/timestamp")
            .map(String::as_str),
        Some("2025-01-01T00:00:00Z")
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_project_namespace_fails_the_write_with_its_reason() {
    let env = Env::start().await;
    ensure_namespace(&env.seed, CONTROL_PLANE).await;
    let persisted = secret(&env, "ca", true).await;

    let error = run(
        &ctx(&env),
        &job(vec![], vec![("ca", SecretItem::of(&persisted))]),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, Error::WriteShootState { .. }), "{error}");
    assert_eq!(error.reason(), "ShootStateWriteError");
    let chain = seedlet_runtime::error_chain(&error).to_string();
    assert!(chain.contains("garden-dev/foo"), "{chain}");
    env.shutdown().await;
}

#[tokio::test]
async fn a_write_guarded_by_a_stale_resource_version_is_a_conflict() {
    // A job reads the ShootState and patches it guarded by the version it read; the patch the
    // job sends carries that version, so a writer in between makes it fail with 409 (the queue
    // then re-marks the job's entries and retries on fresh state).
    let env = Env::start().await;
    let ctx = ctx(&env);
    namespaces(&env).await;
    let persisted = secret(&env, "ca", true).await;
    run(&ctx, &job(vec![], vec![("ca", SecretItem::of(&persisted))]))
        .await
        .unwrap();
    let read = shoot_state(&env).await.unwrap();
    let api = Api::<ShootState>::namespaced(env.garden.clone(), PROJECT);
    api.patch(
        "foo",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
    )
    .await
    .unwrap();
    let patch = crate::shoot_state::entries::spec_patch(
        &read.spec,
        read.metadata.resource_version.as_deref(),
        &Default::default(),
    );
    let error = api
        .patch("foo", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_err();
    assert!(seedlet_runtime::status::is_conflict(&error), "{error}");

    // The next job reads fresh state and writes.
    let outcome = run(&ctx, &job(vec![], vec![("ca", None)])).await.unwrap();
    assert!(outcome.wrote);
    assert!(gardener_names(&shoot_state(&env).await.unwrap()).is_empty());
    env.shutdown().await;
}
