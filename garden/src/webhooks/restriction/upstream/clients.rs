//! Upstream's tables that differ between gardenlets and extensions: CertificateSigningRequests,
//! ClusterRoleBindings, Gardenlets (gardenlets only), Leases and ServiceAccounts.

use base64::Engine as _;
use serde_json::{Value, json};

use super::*;

const CSRS: (&str, &str) = ("certificates.k8s.io", "certificatesigningrequests");
const BINDINGS: (&str, &str) = ("rbac.authorization.k8s.io", "clusterrolebindings");
const LEASES: (&str, &str) = ("coordination.k8s.io", "leases");
const ACCOUNTS: (&str, &str) = ("", "serviceaccounts");

/// The two operations every one of these rules refuses.
fn unexpected_operations(
    client: Client,
    resource: (&str, &str),
    namespace: &str,
    name: &str,
) -> Vec<Case> {
    ["UPDATE", "DELETE"]
        .into_iter()
        .map(|operation| {
            let request = client.request(operation, resource, namespace, name, Value::Null);
            (
                operation.to_lowercase(),
                request,
                Objects::default(),
                unexpected(operation),
            )
        })
        .collect()
}

/// A CertificateSigningRequest object for a client certificate of seed `seed_name`.
fn certificate_signing_request(seed_name: &str, usages: &[&str]) -> Value {
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name.push(
        rcgen::DnType::OrganizationName,
        "gardener.cloud:system:seeds",
    );
    params.distinguished_name.push(
        rcgen::DnType::CommonName,
        format!("gardener.cloud:system:seed:{seed_name}"),
    );
    let key = rcgen::KeyPair::generate().expect("a key pair");
    let pem = params
        .serialize_request(&key)
        .expect("a request")
        .pem()
        .expect("PEM");
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
           "spec": {"request": base64::engine::general_purpose::STANDARD.encode(pem), "usages": usages}})
}

#[tokio::test]
async fn certificate_signing_requests() {
    let client_usages = ["key encipherment", "digital signature", "client auth"];
    let request = |client: Client, object: Value| client.request("CREATE", CSRS, "", "foo", object);
    let mut cases = unexpected_operations(Client::Gardenlet, CSRS, "", "foo");
    cases.extend([
        (
            "no client usages".into(),
            request(Client::Gardenlet, certificate_signing_request("myseed", &[])),
            Objects::default(),
            denied(403, "can only create CSRs for seed clusters: key usages are not set to [key encipherment digital signature client auth]"),
        ),
        ("another seed".into(), request(Client::Gardenlet, certificate_signing_request("myseed", &client_usages)), Objects::default(), mismatch()),
        ("own seed".into(), request(Client::Gardenlet, certificate_signing_request(SEED, &client_usages)), Objects::default(), allowed()),
    ]);
    cases.extend(unexpected_operations(Client::Extension, CSRS, "", "foo"));
    cases.push((
        "extension creates".into(),
        request(Client::Extension, Value::Null),
        Objects::default(),
        denied(
            403,
            "extension client may not create CertificateSigningRequests",
        ),
    ));
    check(cases).await;
}

#[tokio::test]
async fn cluster_role_bindings() {
    let mut cases = unexpected_operations(Client::Gardenlet, BINDINGS, "", "foo");
    cases.push((
        "not a bootstrapper binding".into(),
        Client::Gardenlet.request("CREATE", BINDINGS, "", "foo", json!({})),
        Objects::default(),
        mismatch(),
    ));
    let binding = |role: Value| {
        Client::Gardenlet.request(
            "CREATE",
            BINDINGS,
            "",
            "gardener.cloud:system:seed-bootstrapper:ms1ns:ms1name",
            json!({"roleRef": role}),
        )
    };
    cases.push((
        "binds another role".into(),
        binding(json!({"apiGroup": "", "kind": "", "name": "cluster-admin"})),
        Objects::default(),
        denied(403, "can only bindings referring to the bootstrapper role"),
    ));
    let bootstrapper = binding(
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gardener.cloud:system:seed-bootstrapper"}),
    );
    cases.extend(managed_seed_bootstrap_cases(
        "bootstrapper binding",
        &bootstrapper,
        false,
    ));
    cases.extend(unexpected_operations(
        Client::Extension,
        BINDINGS,
        "",
        "foo",
    ));
    cases.push((
        "extension creates".into(),
        Client::Extension.request("CREATE", BINDINGS, "", "foo", json!({})),
        Objects::default(),
        denied(403, "extension client may not create ClusterRoleBindings"),
    ));
    check(cases).await;
}

#[tokio::test]
async fn gardenlets() {
    let resource = (MANAGEMENT, "gardenlets");
    let request = |namespace: &str, name: &str| {
        Client::Gardenlet.request("CREATE", resource, namespace, name, json!({}))
    };
    let mut cases = unexpected_operations(Client::Gardenlet, resource, "garden", SEED);
    cases.extend([
        (
            "another seed's".into(),
            request("garden", "some-other-name"),
            Objects::default(),
            mismatch(),
        ),
        (
            "outside garden".into(),
            request("bar", SEED),
            Objects::default(),
            denied(400, "object must be in namespace: \"garden\""),
        ),
        (
            "own".into(),
            request("garden", SEED),
            Objects::default(),
            allowed(),
        ),
    ]);
    check(cases).await;
}

#[tokio::test]
async fn leases() {
    let request = |client: Client, namespace: &str, name: &str| {
        client.request("CREATE", LEASES, namespace, name, json!({}))
    };
    let outside = denied(
        403,
        "extension client can only create leases in the namespace for seed \"seed\"",
    );
    let mut cases = unexpected_operations(Client::Gardenlet, LEASES, "bar", "foo");
    cases.extend([
        (
            "another seed's lease".into(),
            request(Client::Gardenlet, "bar", "some-different-seed"),
            Objects::default(),
            mismatch(),
        ),
        (
            "leader election".into(),
            request(Client::Gardenlet, "bar", "gardenlet-leader-election"),
            Objects::default(),
            allowed(),
        ),
        (
            "own seed lease".into(),
            request(Client::Gardenlet, "gardener-system-seed-lease", SEED),
            Objects::default(),
            allowed(),
        ),
    ]);
    cases.extend(unexpected_operations(
        Client::Extension,
        LEASES,
        "bar",
        "foo",
    ));
    cases.extend([
        (
            "extension: leader election".into(),
            request(Client::Extension, "bar", "gardenlet-leader-election"),
            Objects::default(),
            outside.clone(),
        ),
        (
            "extension: seed lease".into(),
            request(Client::Extension, "gardener-system-seed-lease", SEED),
            Objects::default(),
            outside,
        ),
        (
            "extension: seed namespace".into(),
            request(Client::Extension, "seed-seed", SEED),
            Objects::default(),
            allowed(),
        ),
    ]);
    check(cases).await;
}

#[tokio::test]
async fn service_accounts() {
    // Upstream names these requests `bar` without a namespace (its test sets the name twice).
    let request = |client: Client, namespace: &str, name: &str| {
        client.request("CREATE", ACCOUNTS, namespace, name, json!({}))
    };
    let mut cases = unexpected_operations(Client::Gardenlet, ACCOUNTS, "", "bar");
    cases.extend([
        (
            "seed namespace".into(),
            request(Client::Gardenlet, "seed-seed", "bar"),
            Objects::default(),
            allowed(),
        ),
        (
            "not a bootstrap account".into(),
            request(Client::Gardenlet, "", "bar"),
            Objects::default(),
            mismatch(),
        ),
    ]);
    cases.extend(managed_seed_bootstrap_cases(
        "bootstrap account",
        &request(Client::Gardenlet, "ms1ns", "gardenlet-bootstrap-ms1name"),
        false,
    ));
    cases.extend(unexpected_operations(
        Client::Extension,
        ACCOUNTS,
        "",
        "bar",
    ));
    cases.push((
        "extension creates".into(),
        request(Client::Extension, "", "bar"),
        Objects::default(),
        denied(403, "extension client may not create ServiceAccounts"),
    ));
    check(cases).await;
}
