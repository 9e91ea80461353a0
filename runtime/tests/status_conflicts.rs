//! `status::update_conditions` against a sandbox API server when another writer of the same
//! object wins the race between its read and its guarded write: the lost write is read again and
//! re-merged in place (both writers' conditions survive, the caller sees success), and a race lost
//! on every attempt reaches the caller as the 409 after `CONFLICT_ATTEMPTS` writes. The same for
//! `finalizer::ensure_retrying`, whose guarded finalizer patch loses to a status write, and for
//! `status::retry_on_fresh_copy`, which it runs on: a conflict inside a caller's error is tried again
//! on a fresh copy, and a fresh read that fails leaves the conflict to the caller.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::Method;
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource as _, ResourceExt as _};
use seedlet_api::conditions::Condition;
use seedlet_api::core::{ControllerInstallation, ControllerInstallationSpec};
use seedlet_runtime::status::{self, CONFLICT_ATTEMPTS};
use seedlet_sandbox::Sandbox;
use seedlet_sandbox::setup::observed_client;
use serde_json::json;

const NAME: &str = "ext-a";

fn now() -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_700_000_000).expect("a time in range")
}

/// The other writer: appends a condition of `type_` (read-modify-write, unguarded).
async fn rival_writes(client: &kube::Client, type_: &str) {
    let api: Api<ControllerInstallation> = Api::all(client.clone());
    let mut conditions = api
        .get(NAME)
        .await
        .expect("rival reads")
        .conditions()
        .to_vec();
    conditions.push(Condition::initialized(type_, now()));
    api.patch_status(
        NAME,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"conditions": conditions}})),
    )
    .await
    .expect("rival writes");
}

/// Which writes the rival races: status patches (conditions) or patches of the object itself
/// (finalizers).
#[derive(Clone, Copy)]
enum Raced {
    Status,
    Object,
}

/// A sandbox with the garden CRDs and one ControllerInstallation; the racing client and its
/// patch counter.
async fn racing(races: usize) -> (Sandbox, Api<ControllerInstallation>, Arc<AtomicUsize>) {
    racing_on(Raced::Status, races).await
}

/// Like [`racing`], racing the `raced` patches.
async fn racing_on(
    raced: Raced,
    races: usize,
) -> (Sandbox, Api<ControllerInstallation>, Arc<AtomicUsize>) {
    let sandbox = Sandbox::builder().start().await.expect("sandbox");
    let client = sandbox.client();
    seedlet_sandbox::setup::install_crds(&client, seedlet_api::crds::garden_crds())
        .await
        .expect("garden CRDs");
    let api: Api<ControllerInstallation> = Api::all(client.clone());
    let mut installation = ControllerInstallation::new(NAME, ControllerInstallationSpec::default());
    installation.meta_mut().resource_version = None;
    api.create(&Default::default(), &installation)
        .await
        .expect("installation");
    // Before each of its first `races` raced patches, another writer writes a condition of its
    // own type (`Rival<n>`), so the patch's `resourceVersion` is stale when it arrives.
    let patches = Arc::new(AtomicUsize::new(0));
    let counted = patches.clone();
    let rival = client.clone();
    let racing = observed_client(
        client,
        Arc::new(move |request| {
            let status = request.uri().path().ends_with("/status");
            let counts = request.method() == Method::PATCH
                && match raced {
                    Raced::Status => status,
                    Raced::Object => !status,
                };
            let patch = counts.then(|| counted.fetch_add(1, Ordering::SeqCst));
            let rival = rival.clone();
            Box::pin(async move {
                if let Some(patch) = patch.filter(|patch| *patch < races) {
                    rival_writes(&rival, &format!("Rival{patch}")).await;
                }
            })
        }),
    );
    (sandbox, Api::all(racing), patches)
}

fn types(installation: &ControllerInstallation) -> Vec<&str> {
    let mut types: Vec<_> = installation
        .conditions()
        .iter()
        .map(|c| c.type_.as_str())
        .collect();
    types.sort_unstable();
    types
}

#[tokio::test]
async fn a_lost_race_is_read_again_and_both_writers_conditions_survive() {
    let (sandbox, api, patches) = racing(2).await;
    let wrote = status::update_conditions(&api, NAME, &[Condition::initialized("Valid", now())])
        .await
        .expect("written after two lost races");
    assert!(wrote);
    assert_eq!(
        patches.load(Ordering::SeqCst),
        3,
        "two lost writes, one that landed"
    );
    let stored: Api<ControllerInstallation> = Api::all(sandbox.client());
    assert_eq!(
        types(&stored.get(NAME).await.unwrap()),
        ["Rival0", "Rival1", "Valid"]
    );
    // Nothing left to change: no write at all.
    let wrote = status::update_conditions(&api, NAME, &[Condition::initialized("Valid", now())])
        .await
        .unwrap();
    assert!(!wrote);
    assert_eq!(patches.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_race_lost_on_every_attempt_reaches_the_caller_as_a_conflict() {
    let (sandbox, api, patches) = racing(usize::MAX).await;
    let error = status::update_conditions(&api, NAME, &[Condition::initialized("Valid", now())])
        .await
        .expect_err("every write lost");
    assert!(status::is_conflict(&error), "{error}");
    assert_eq!(patches.load(Ordering::SeqCst), CONFLICT_ATTEMPTS);
    let stored: Api<ControllerInstallation> = Api::all(sandbox.client());
    let stored = stored.get(NAME).await.unwrap();
    assert!(!types(&stored).contains(&"Valid"), "{:?}", types(&stored));
    assert_eq!(types(&stored).len(), CONFLICT_ATTEMPTS);
}

#[tokio::test]
async fn a_finalizer_write_that_lost_a_race_is_read_again_and_written() {
    let (sandbox, api, patches) = racing_on(Raced::Object, 2).await;
    let read = api.get(NAME).await.unwrap();
    let wrote = seedlet_runtime::finalizer::ensure_retrying(&api, &read, "ours")
        .await
        .expect("written after two lost races");
    assert!(wrote);
    assert_eq!(patches.load(Ordering::SeqCst), 3, "two lost, one landed");
    let stored: Api<ControllerInstallation> = Api::all(sandbox.client());
    let stored = stored.get(NAME).await.unwrap();
    assert_eq!(stored.metadata.finalizers, Some(vec!["ours".to_owned()]));
    assert_eq!(
        types(&stored),
        ["Rival0", "Rival1"],
        "the rival's writes stay"
    );

    let (_sandbox, api, patches) = racing_on(Raced::Object, usize::MAX).await;
    let read = api.get(NAME).await.unwrap();
    let error = seedlet_runtime::finalizer::ensure_retrying(&api, &read, "ours")
        .await
        .expect_err("every write lost");
    assert!(status::is_conflict(&error), "{error}");
    assert_eq!(patches.load(Ordering::SeqCst), CONFLICT_ATTEMPTS);
}

/// A caller's error that wraps the API error, as controllers' error enums do.
#[derive(Debug, thiserror::Error)]
#[error("labelling installation")]
struct Labelling(#[source] kube::Error);

/// Labels `installation` with a merge patch guarded by the resourceVersion it was read with.
async fn label_guarded(
    api: &Api<ControllerInstallation>,
    installation: &ControllerInstallation,
) -> Result<String, Labelling> {
    let patch = json!({"metadata": {
        "resourceVersion": installation.meta().resource_version,
        "labels": {"labelled": "yes"},
    }});
    api.patch(NAME, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| {
            installation
                .meta()
                .resource_version
                .clone()
                .unwrap_or_default()
        })
        .map_err(Labelling)
}

#[tokio::test]
async fn a_conflict_in_a_callers_error_is_tried_again_on_a_fresh_copy() {
    let (sandbox, api, patches) = racing_on(Raced::Object, 2).await;
    let read = api.get(NAME).await.unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let written_with = status::retry_on_fresh_copy(&api, &read, |current| {
        let (api, seen) = (api.clone(), seen.clone());
        Box::pin(async move {
            seen.lock()
                .unwrap()
                .push(current.meta().resource_version.clone());
            label_guarded(&api, &current).await
        })
    })
    .await
    .expect("written after two lost races");
    assert_eq!(patches.load(Ordering::SeqCst), 3, "two lost, one landed");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert_eq!(
        seen[0],
        read.meta().resource_version,
        "the caller's copy first"
    );
    assert_ne!(seen[1], seen[0], "then a fresh read");
    assert_ne!(seen[2], seen[1], "and another");
    assert_eq!(Some(written_with), seen[2]);
    let stored: Api<ControllerInstallation> = Api::all(sandbox.client());
    let stored = stored.get(NAME).await.unwrap();
    assert_eq!(
        stored.labels().get("labelled").map(String::as_str),
        Some("yes")
    );
}

#[tokio::test]
async fn a_fresh_read_that_fails_leaves_the_conflict_to_the_caller() {
    let (sandbox, api, _patches) = racing_on(Raced::Object, 0).await;
    let read = api.get(NAME).await.unwrap();
    let attempts = Arc::new(AtomicUsize::new(0));
    let error = status::retry_on_fresh_copy(&api, &read, |_current| {
        let (client, attempts) = (sandbox.client(), attempts.clone());
        Box::pin(async move {
            attempts.fetch_add(1, Ordering::SeqCst);
            // Another writer deletes the object after this attempt read it, and the attempt's
            // guarded write lost: the read that follows answers 404.
            let stored: Api<ControllerInstallation> = Api::all(client);
            stored.delete(NAME, &Default::default()).await.unwrap();
            let conflict = kube::core::Status::failure("changed", "Conflict").with_code(409);
            Err::<(), _>(Labelling(kube::Error::Api(conflict.boxed())))
        })
    })
    .await
    .expect_err("the race is not won");
    assert!(status::conflict_in_chain(&error), "{error}");
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "no copy to try again on"
    );
}
