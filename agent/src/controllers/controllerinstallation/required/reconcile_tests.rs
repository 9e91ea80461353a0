//! Reconcile tests against in-process garden and seed sandboxes: a real ControllerInstallation
//! and its registration live in the garden, the kinds' type sets are recorded the way the seed
//! watches record them, [`reconcile`] is called directly and `Required` is read back.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kube::Api;
use kube::runtime::controller::Action;
use seedlet_api::core::ControllerInstallation;
use seedlet_api::names::reasons;
use seedlet_bootstrap::GardenClient;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Error, KindTypes, Required};
use crate::testing::{Env, SEED, create};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};

const NAME: &str = "ext-1";

fn ctx(env: &Env, kinds: Arc<KindTypes>) -> Arc<Required> {
    Arc::new(Required {
        clock: env.clock(),
        garden: GardenClient::new(env.garden.clone(), None),
        concurrency: 1,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        stop: CancellationToken::new(),
        kinds,
    })
}

async fn registration(env: &Env) {
    create::<seedlet_api::core::ControllerRegistration>(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerRegistration",
               "metadata": {"name": "ext"},
               "spec": {"resources": [{"kind": "Extension", "type": "small"},
                                      {"kind": "Network", "type": "calico"}]}}),
    )
    .await;
}

async fn installation(env: &Env, seed: &str) -> Arc<ControllerInstallation> {
    Arc::new(
        create(
            &env.garden,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerInstallation",
                   "metadata": {"name": NAME},
                   "spec": {"registrationRef": {"name": "ext"}, "seedRef": {"name": seed}}}),
        )
        .await,
    )
}

/// `(status, reason, message)` of `Required`, if set.
async fn required(env: &Env) -> Option<(String, String, String)> {
    let ci = Api::<ControllerInstallation>::all(env.garden.clone())
        .get(NAME)
        .await
        .unwrap();
    ci.conditions()
        .iter()
        .find(|c| c.type_ == "Required")
        .map(|c| {
            let status = serde_json::to_value(&c.status).unwrap();
            (
                status.as_str().unwrap_or_default().to_owned(),
                c.reason.clone(),
                c.message.clone(),
            )
        })
}

fn types(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

#[tokio::test]
async fn required_follows_the_extension_objects_of_the_registrations_kinds() {
    let env = Env::start().await;
    let kinds = Arc::new(KindTypes::default());
    let ctx = ctx(&env, kinds.clone());
    registration(&env).await;
    let ci = installation(&env, SEED).await;
    kinds.store("Extension", types(&["small", "other"]));
    kinds.store("Network", types(&[]));

    assert_eq!(
        ctx.clone().reconcile(ci.clone()).await.unwrap(),
        Action::await_change()
    );
    let (status, reason, message) = required(&env).await.expect("Required");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", reasons::EXTENSION_OBJECTS_EXIST)
    );
    assert!(message.contains("Extension/small"), "{message}");

    // The last object of the type left the seed.
    kinds.store("Extension", types(&["other"]));
    ctx.reconcile(ci).await.unwrap();
    let (status, reason, _) = required(&env).await.unwrap();
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", reasons::NO_EXTENSION_OBJECTS)
    );
    env.shutdown().await;
}

#[tokio::test]
async fn nothing_is_written_while_a_kind_is_not_known_yet() {
    let env = Env::start().await;
    let kinds = Arc::new(KindTypes::default());
    registration(&env).await;
    let ci = installation(&env, SEED).await;
    kinds.store("Network", types(&[]));

    ctx(&env, kinds).reconcile(ci).await.unwrap();
    assert_eq!(required(&env).await, None, "Extension is still undecided");
    env.shutdown().await;
}

#[tokio::test]
async fn installations_of_other_seeds_are_left_alone() {
    let env = Env::start().await;
    let kinds = Arc::new(KindTypes::default());
    kinds.store("Extension", types(&["small"]));
    kinds.store("Network", types(&[]));
    registration(&env).await;
    let ci = installation(&env, "other").await;

    ctx(&env, kinds).reconcile(ci).await.unwrap();
    assert_eq!(required(&env).await, None);
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_registration_fails_with_its_reason_and_a_short_retry() {
    let env = Env::start().await;
    let ctx = ctx(&env, Arc::new(KindTypes::default()));
    let ci = installation(&env, SEED).await;

    let error = ctx.clone().reconcile(ci.clone()).await.unwrap_err();
    assert!(matches!(error, Error::ReadRegistration { .. }), "{error}");
    assert_eq!(error.reason(), "RegistrationReadError");
    assert_eq!(
        ctx.clone().error_policy(&ci.clone(), &error),
        Action::requeue(Duration::from_secs(5))
    );

    // Main and care write the same list: a lost guarded write comes back at once.
    let conflict = Error::WriteCondition {
        name: NAME.into(),
        source: kube::Error::Api(
            kube::core::Status::failure("modified", "Conflict")
                .with_code(409)
                .boxed(),
        ),
    };
    assert_eq!(
        ctx.error_policy(&ci, &conflict),
        Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE)
    );
    env.shutdown().await;
}
