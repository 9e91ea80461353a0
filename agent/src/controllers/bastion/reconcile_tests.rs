//! Reconcile tests against in-process garden and seed sandboxes: [`reconcile`] is called directly
//! on a real Bastion; the test plays the extension by writing the extension Bastion's status.

use std::sync::Arc;

use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_api::extensions;
use seedlet_api::operations::Bastion;
use seedlet_runtime::clock::Clock;
use serde_json::json;

use super::Bastions;
use super::reconcile::DELETION_POLL;
use crate::testing::{Env, FIELD_MANAGER, SEED, create, ensure_namespace, last_operation};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};

const NS: &str = "garden-dev";
const CONTROL_PLANE: &str = "shoot--dev--s";

fn ctx(env: &Env) -> Arc<Bastions> {
    Arc::new(Bastions {
        clock: env.clock(),
        field_manager: FIELD_MANAGER,
        concurrency: 1,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        garden: env.garden.clone(),
    })
}

/// Bastion `garden-dev/b` for Shoot `s`, which exists (with its technical ID and control-plane
/// namespace in the seed) when `with_shoot`.
async fn bastion(env: &Env, with_shoot: bool) -> Arc<Bastion> {
    ensure_namespace(&env.garden, NS).await;
    if with_shoot {
        let _: Shoot = create(
            &env.garden,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
                   "metadata": {"name": "s", "namespace": NS},
                   "spec": {"region": "local", "seedName": SEED,
                            "provider": {"type": "local", "workers": []}}}),
        )
        .await;
        let status = json!({"status": {"technicalID": CONTROL_PLANE}});
        Api::<Shoot>::namespaced(env.garden.clone(), NS)
            .patch_status("s", &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap();
        ensure_namespace(&env.seed, CONTROL_PLANE).await;
    }
    Arc::new(
        create(
            &env.garden,
            json!({"apiVersion": "operations.gardener.cloud/v1alpha1", "kind": "Bastion",
                   "metadata": {"name": "b", "namespace": NS},
                   "spec": {"shootRef": {"name": "s"}, "seedName": SEED, "providerType": "local",
                            "sshPublicKey": "ssh-ed25519 AAAAC3Nza user@host",
                            "ingress": [{"ipBlock": {"cidr": "192.0.2.0/24"}}]}}),
        )
        .await,
    )
}

fn bastions(env: &Env) -> Api<Bastion> {
    Api::namespaced(env.garden.clone(), NS)
}

fn extensions_api(env: &Env) -> Api<extensions::Bastion> {
    Api::namespaced(env.seed.clone(), CONTROL_PLANE)
}

/// `(status, reason)` of `BastionReady`.
async fn ready(env: &Env) -> Option<(String, String)> {
    let bastion = bastions(env).get("b").await.unwrap();
    seedlet_api::conditions::find(bastion.conditions(), "BastionReady")
        .map(|c| (c.status.to_string(), c.reason.clone()))
}

#[tokio::test]
async fn a_bastion_gets_its_extension_object_and_becomes_ready_with_its_ingress() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let core = bastion(&env, true).await;

    ctx.clone().reconcile(core.clone()).await.unwrap();
    assert_eq!(
        bastions(&env).get("b").await.unwrap().finalizers(),
        ["gardener"]
    );
    let extension = extensions_api(&env).get("b").await.unwrap();
    let spec = serde_json::to_value(&extension.spec).unwrap();
    assert_eq!(spec["type"], "local");
    assert_eq!(
        spec["ingress"],
        json!([{"ipBlock": {"cidr": "192.0.2.0/24"}}])
    );
    assert!(
        spec["userData"]
            .as_str()
            .is_some_and(|data| !data.is_empty())
    );
    assert_eq!(
        extension
            .annotations()
            .get("gardener.cloud/operation")
            .map(String::as_str),
        Some("reconcile")
    );
    assert_eq!(ready(&env).await, None, "waiting for the extension");

    let unannotate = json!({"metadata": {"annotations": {"gardener.cloud/operation": null}}});
    extensions_api(&env)
        .patch("b", &PatchParams::default(), &Patch::Merge(&unannotate))
        .await
        .unwrap();
    let status = json!({"status": {
        "lastOperation": last_operation("Create", "Succeeded", env.clock.now()),
        "ingress": {"ip": "198.51.100.7"}}});
    extensions_api(&env)
        .patch_status("b", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    ctx.reconcile(core).await.unwrap();
    assert_eq!(
        ready(&env).await,
        Some(("True".into(), "SuccessfullyReconciled".into()))
    );
    let stored = serde_json::to_value(bastions(&env).get("b").await.unwrap()).unwrap();
    assert_eq!(stored["status"]["ingress"], json!({"ip": "198.51.100.7"}));
    assert_eq!(
        stored["status"]["observedGeneration"],
        stored["metadata"]["generation"]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_shoot_fails_with_its_reason_and_a_false_condition() {
    let env = Env::start().await;
    let core = bastion(&env, false).await;

    let error = ctx(&env).reconcile(core).await.unwrap_err();
    assert_eq!(error.reason(), "ShootError");
    assert_eq!(
        ready(&env).await,
        Some(("False".into(), "FailedReconciling".into()))
    );
    assert!(
        bastions(&env)
            .get("b")
            .await
            .unwrap()
            .finalizers()
            .is_empty()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn deletion_reports_progress_deletes_the_extension_then_drops_the_finalizer() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    let core = bastion(&env, true).await;
    ctx.clone().reconcile(core.clone()).await.unwrap();
    bastions(&env)
        .delete("b", &DeleteParams::default())
        .await
        .unwrap();

    assert_eq!(
        ctx.clone().reconcile(core.clone()).await.unwrap(),
        Action::requeue(DELETION_POLL)
    );
    assert_eq!(
        ready(&env).await,
        Some(("False".into(), "DeletionInProgress".into()))
    );
    assert!(extensions_api(&env).get_opt("b").await.unwrap().is_none());

    ctx.reconcile(core).await.unwrap();
    assert!(bastions(&env).get_opt("b").await.unwrap().is_none());
    env.shutdown().await;
}
