//! Least privilege in the demo garden: the garden controller serves the seed authorizer and
//! SeedRestriction over a certificate from the garden's CA, and the garden sandbox calls them as
//! a kube-apiserver configured by gardener-operator would (RBAC first, then the authorizer with
//! `failurePolicy: Deny` and uncached answers; SeedRestriction as a ValidatingWebhookConfiguration
//! for seed identities). No `gardener.cloud:system:seeds` role is bound: the agent works with what
//! the authorizer grants it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use kube::Api;
use kube::api::{Patch, PatchParams};
use seedlet_sandbox::Sandbox;
use seedlet_sandbox::authz::webhook::{FailurePolicy, WebhookConfig};
use serde_json::json;

use crate::Error;
use crate::files::StateDir;

/// Directory (in the state directory) with the webhooks' `tls.crt` and `tls.key`.
pub const TLS_DIR: &str = "webhooks";

/// Writes the webhooks' serving certificate (key 0600) and returns its directory.
///
/// # Errors
/// [`Error::StateDir`] or [`Error::Sandbox`].
pub fn write_serving_certificate(state: &StateDir, garden: &Sandbox) -> Result<PathBuf, Error> {
    let dir = state.path(TLS_DIR);
    std::fs::create_dir_all(&dir).map_err(|source| Error::StateDir {
        path: dir.clone(),
        source,
    })?;
    let (chain, key) = garden
        .issue_serving_certificate("seedlet-garden-webhooks", &["127.0.0.1"])
        .map_err(|source| Error::Sandbox {
            name: "garden",
            source,
        })?;
    state.write_config(&format!("{TLS_DIR}/tls.crt"), &chain)?;
    state.write_kubeconfig(&format!("{TLS_DIR}/tls.key"), &key)?;
    Ok(dir)
}

/// Points the garden at the webhooks served on `address`; returns the step's detail.
///
/// # Errors
/// [`Error::StateDir`], [`Error::Sandbox`] or [`Error::Prepare`].
pub async fn enable(
    state: &StateDir,
    garden: &Sandbox,
    address: SocketAddr,
) -> Result<String, Error> {
    enable_in(garden, &state.path(TLS_DIR), address).await?;
    Ok(format!(
        "https://{address}: /webhooks/auth/seed, /webhooks/admission/seedrestriction"
    ))
}

/// [`enable`] with the authorizer's kubeconfig written into `dir` (tests use a temporary one).
///
/// # Errors
/// As [`enable`].
pub async fn enable_in(garden: &Sandbox, dir: &Path, address: SocketAddr) -> Result<(), Error> {
    call_authorizer(garden, dir, address)?;
    let name = "seedlet-garden-seed-restriction";
    let ca = base64::engine::general_purpose::STANDARD.encode(garden.ca_cert_pem());
    Api::<ValidatingWebhookConfiguration>::all(garden.client())
        .patch(
            name,
            &PatchParams::apply("seedlet-sandbox").force(),
            &Patch::Apply(&seed_restriction(name, address, &ca)),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: format!("register ValidatingWebhookConfiguration {name}"),
            source,
        })?;
    Ok(())
}

/// Makes the garden sandbox ask the authorizer on `address` after RBAC, with gardener-operator's
/// settings (uncached answers, `failurePolicy: Deny`); its kubeconfig is written into `dir`.
///
/// # Errors
/// [`Error::StateDir`] when the kubeconfig cannot be written, [`Error::Sandbox`] when the garden
/// refuses it.
pub fn call_authorizer(garden: &Sandbox, dir: &Path, address: SocketAddr) -> Result<(), Error> {
    let ca = base64::engine::general_purpose::STANDARD.encode(garden.ca_cert_pem());
    let kubeconfig = json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "seed-authorizer", "cluster": {
            "server": format!("https://{address}/webhooks/auth/seed"),
            "certificate-authority-data": ca,
        }}],
        "users": [{"name": "seed-authorizer", "user": {}}],
        "contexts": [{"name": "seed-authorizer", "context": {"cluster": "seed-authorizer", "user": "seed-authorizer"}}],
        "current-context": "seed-authorizer",
    });
    let path = dir.join("seed-authorizer-kubeconfig.yaml");
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, kubeconfig.to_string()))
        .map_err(|source| Error::StateDir {
            path: path.clone(),
            source,
        })?;
    garden
        .set_authorization_webhook(Some(&WebhookConfig {
            authorized_ttl: Duration::from_nanos(1),
            unauthorized_ttl: Duration::from_nanos(1),
            failure_policy: Some(FailurePolicy::Deny),
            ..WebhookConfig::new(&path)
        }))
        .map_err(|source| Error::Sandbox {
            name: "garden",
            source,
        })
}

/// SeedRestriction's ValidatingWebhookConfiguration `name` for the server on `address` (rules of
/// spec §4.1, `Fail`, 10 s), with a match condition on seed identities so that no other user
/// depends on the webhook being up (the garden chart registers the same).
fn seed_restriction(name: &str, address: SocketAddr, ca: &str) -> serde_json::Value {
    let rule = |group: &str, version: &str, resources: &[&str], operations: &[&str]| json!({"apiGroups": [group], "apiVersions": [version], "resources": resources, "operations": operations});
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{
            "name": "seed-restriction.gardener.cloud",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "timeoutSeconds": 10,
            "matchConditions": [{"name": "seed-identities", "expression":
                "'gardener.cloud:system:seeds' in request.userInfo.groups || request.userInfo.groups.exists(g, g.startsWith('system:serviceaccounts:seed-'))"}],
            "clientConfig": {"url": format!("https://{address}/webhooks/admission/seedrestriction"), "caBundle": ca},
            "rules": [
                rule("", "v1", &["configmaps", "secrets", "serviceaccounts"], &["CREATE"]),
                rule("rbac.authorization.k8s.io", "v1", &["clusterrolebindings"], &["CREATE"]),
                rule("coordination.k8s.io", "v1", &["leases"], &["CREATE"]),
                rule("certificates.k8s.io", "v1", &["certificatesigningrequests"], &["CREATE"]),
                rule("core.gardener.cloud", "v1beta1", &["backupentries", "internalsecrets", "shootstates"], &["CREATE"]),
                rule("core.gardener.cloud", "v1beta1", &["backupbuckets"], &["CREATE", "DELETE"]),
                rule("core.gardener.cloud", "v1beta1", &["seeds"], &["CREATE", "UPDATE", "DELETE"]),
                rule("operations.gardener.cloud", "v1alpha1", &["bastions"], &["CREATE"]),
            ],
        }],
    })
}
