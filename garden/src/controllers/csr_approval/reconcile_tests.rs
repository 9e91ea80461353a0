//! Reconcile tests against an in-process garden sandbox: CertificateSigningRequests are created
//! by a real requester (its own client certificate), [`Reconciler::reconcile`](seedlet_runtime::controller::Reconciler::reconcile) is called directly and the
//! approval conditions, Events and the returned action or error are read back.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Event;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};
use serde_json::json;

use super::{CsrApproval, Error};
use crate::seed_csr::{APPROVED_REASON, DENIED_REASON};
use crate::testing::{Env, create};

const REQUESTER: &str = "bootstrap-user";
const USAGES: [&str; 3] = ["key encipherment", "digital signature", "client auth"];

fn ctx(env: &Env) -> Arc<CsrApproval> {
    Arc::new(CsrApproval {
        client: env.client.clone(),
        concurrency: 1,
        events: env.events(),
    })
}

/// A PEM certificate request with common name `common_name` and organization `organization`.
fn request(common_name: &str, organization: &str) -> String {
    let mut params = rcgen::CertificateParams::default();
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, organization);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name);
    let key = rcgen::KeyPair::generate().expect("key pair");
    params
        .serialize_request(&key)
        .expect("request")
        .pem()
        .expect("PEM")
}

/// Lets [`REQUESTER`] create CSRs, and also `certificatesigningrequests/seedclient` when
/// `seed_client` (what the SubjectAccessReview asks about).
async fn grant(env: &Env, name: &str, seed_client: bool) {
    let mut resources = vec!["certificatesigningrequests"];
    if seed_client {
        resources.push("certificatesigningrequests/seedclient");
    }
    create::<k8s_openapi::api::rbac::v1::ClusterRole>(
        &env.client,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": name},
               "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": resources,
                          "verbs": ["create", "get"]}]}),
    )
    .await;
    create::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>(
        &env.client,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": REQUESTER}]}),
    )
    .await;
}

/// Creates CSR `name` as [`REQUESTER`] for the kube-apiserver client signer.
async fn csr(env: &Env, name: &str, pem: &str, usages: &[&str]) -> Arc<CertificateSigningRequest> {
    let requester = env.client_for(REQUESTER, &[]).await;
    let encoded = base64::engine::general_purpose::STANDARD.encode(pem);
    Arc::new(
        create(
            &requester,
            json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                   "metadata": {"name": name},
                   "spec": {"request": encoded, "usages": usages,
                            "signerName": "kubernetes.io/kube-apiserver-client"}}),
        )
        .await,
    )
}

async fn stored(env: &Env, name: &str) -> CertificateSigningRequest {
    Api::<CertificateSigningRequest>::all(env.client.clone())
        .get(name)
        .await
        .unwrap()
}

/// `(type, reason)` of each condition.
fn decisions(csr: &CertificateSigningRequest) -> Vec<(String, String)> {
    csr.status
        .iter()
        .flat_map(|status| status.conditions.iter().flatten())
        .map(|c| (c.type_.clone(), c.reason.clone().unwrap_or_default()))
        .collect()
}

async fn event_reasons(env: &Env, name: &str) -> Vec<String> {
    Api::<Event>::all(env.client.clone())
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name))
        .filter_map(|e| e.reason)
        .collect()
}

#[tokio::test]
async fn a_seed_client_request_is_approved_once_the_requester_may_create_seedclient() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    grant(&env, "csr-creator", false).await;
    let pem = request(
        "gardener.cloud:system:seed:local",
        "gardener.cloud:system:seeds",
    );
    let created = csr(&env, "seed-csr", &pem, &USAGES).await;
    assert_eq!(created.spec.username.as_deref(), Some(REQUESTER));

    // Without the seedclient permission the request stays pending and is retried slowly.
    let error = ctx.clone().reconcile(created.clone()).await.unwrap_err();
    assert!(matches!(error, Error::NotAllowed { .. }), "{error}");
    assert_eq!(error.reason(), "NotAllowed");
    assert_eq!(
        ctx.error_policy(&created, &error),
        Action::requeue(Duration::from_secs(30))
    );
    assert!(decisions(&stored(&env, "seed-csr").await).is_empty());

    grant(&env, "seedclient-creator", true).await;
    let action = ctx.clone().reconcile(created).await.unwrap();
    assert_eq!(action, Action::await_change());
    let approved = stored(&env, "seed-csr").await;
    assert_eq!(
        decisions(&approved),
        [("Approved".to_owned(), APPROVED_REASON.to_owned())]
    );
    assert_eq!(event_reasons(&env, "seed-csr").await, [APPROVED_REASON]);

    // Decided requests are final: another pass writes nothing.
    let again = ctx.reconcile(Arc::new(approved.clone())).await.unwrap();
    assert_eq!(again, Action::await_change());
    assert_eq!(
        stored(&env, "seed-csr").await.resource_version(),
        approved.resource_version()
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_request_claiming_the_seed_identity_with_wrong_usages_is_denied_with_the_failed_check() {
    let env = Env::start().await;
    grant(&env, "csr-creator", true).await;
    let pem = request(
        "gardener.cloud:system:seed:local",
        "gardener.cloud:system:seeds",
    );
    let created = csr(
        &env,
        "bad-usages",
        &pem,
        &["digital signature", "client auth"],
    )
    .await;

    let action = ctx(&env).reconcile(created).await.unwrap();
    assert_eq!(action, Action::await_change());
    let denied = stored(&env, "bad-usages").await;
    assert_eq!(
        decisions(&denied),
        [("Denied".to_owned(), DENIED_REASON.to_owned())]
    );
    let message = denied.status.unwrap().conditions.unwrap()[0]
        .message
        .clone()
        .unwrap_or_default();
    assert!(message.contains("usages must be exactly"), "{message}");
    assert_eq!(event_reasons(&env, "bad-usages").await, [DENIED_REASON]);
    env.shutdown().await;
}

#[tokio::test]
async fn requests_that_are_not_seed_clients_or_need_an_operator_are_left_pending() {
    let env = Env::start().await;
    grant(&env, "csr-creator", true).await;
    let other = csr(&env, "other", &request("jane", "developers"), &USAGES).await;
    let manual = csr(
        &env,
        "manual",
        &request("someone", "gardener.cloud:system:seeds"),
        &USAGES,
    )
    .await;

    assert_eq!(
        ctx(&env).reconcile(other).await.unwrap(),
        Action::await_change()
    );
    assert_eq!(
        ctx(&env).reconcile(manual).await.unwrap(),
        Action::await_change()
    );
    assert!(decisions(&stored(&env, "other").await).is_empty());
    assert!(decisions(&stored(&env, "manual").await).is_empty());
    assert!(event_reasons(&env, "other").await.is_empty());
    assert_eq!(
        event_reasons(&env, "manual").await,
        ["ManualApprovalRequired"]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_stale_request_loses_the_approval_write_with_a_conflict_and_is_requeued_at_once() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    grant(&env, "csr-creator", true).await;
    let pem = request(
        "gardener.cloud:system:seed:local",
        "gardener.cloud:system:seeds",
    );
    let stale = csr(&env, "raced", &pem, &USAGES).await;
    // Another writer changes the CSR after the controller's copy was read.
    Api::<CertificateSigningRequest>::all(env.client.clone())
        .patch(
            "raced",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();

    let error = ctx.clone().reconcile(stale.clone()).await.unwrap_err();
    assert!(matches!(error, Error::UpdateApproval { .. }), "{error}");
    assert!(
        seedlet_runtime::status::conflict_in_chain(&error),
        "{error}"
    );
    // A lost race is routine: requeued at once (no WARN), not after the 5 s error delay.
    assert_eq!(
        ctx.error_policy(&stale, &error),
        Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE)
    );
    assert!(decisions(&stored(&env, "raced").await).is_empty());

    // The retry reads fresh state and approves.
    let fresh = Arc::new(stored(&env, "raced").await);
    ctx.reconcile(fresh).await.unwrap();
    assert_eq!(
        decisions(&stored(&env, "raced").await),
        [("Approved".to_owned(), APPROVED_REASON.to_owned())]
    );
    env.shutdown().await;
}

#[tokio::test]
async fn an_undecodable_request_fails_with_its_reason_and_the_slow_retry() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    // The API server validates the request on create; the controller still guards its decoder.
    let mut broken: CertificateSigningRequest = serde_json::from_value(json!({
        "metadata": {"name": "broken"},
        "spec": {"request": base64::engine::general_purpose::STANDARD.encode("not pem"),
                 "signerName": "kubernetes.io/kube-apiserver-client", "usages": USAGES}}))
    .unwrap();
    let error = ctx
        .clone()
        .reconcile(Arc::new(broken.clone()))
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "DecodeRequestError");
    assert_eq!(
        ctx.error_policy(&broken, &error),
        Action::requeue(Duration::from_secs(300))
    );
    broken.metadata.name = None;
    let error = ctx.reconcile(Arc::new(broken)).await.unwrap_err();
    assert_eq!(error.reason(), "MissingName");
    env.shutdown().await;
}
