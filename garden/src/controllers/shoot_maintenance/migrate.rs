//! The SecretBinding → CredentialsBinding migration of a Shoot whose control plane moves to
//! Kubernetes 1.34 or later (spec §6.6): reuse `force-migrated-<binding>` when it matches, else
//! the alphabetically first CredentialsBinding in the namespace that references the same Secret
//! with the same quotas, else create `force-migrated-<binding>`.

use kube::api::{ListParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{CredentialsBinding, QuotaReference, SecretBinding};
use serde_json::{Value, json};

use super::versions::Version;

/// Prefix of the CredentialsBinding the migration creates.
pub const FORCE_MIGRATED_PREFIX: &str = "force-migrated-";
/// Label marking a CredentialsBinding the migration created.
pub const STATUS_LABEL: &str = "credentialsbinding.gardener.cloud/status";
/// Text of a successful migration.
pub const MIGRATED: &str = ".spec.secretBindingName was migrated to .spec.credentialsBindingName. Reason: SecretBinding is deprecated and can no longer be used for Shoot clusters using Kubernetes version 1.34+";

/// Whether the move from `old` to `new` crosses Kubernetes 1.34.
pub fn crosses_1_34(old: &str, new: &str) -> bool {
    let boundary = Version {
        major: 1,
        minor: 34,
        patch: 0,
        pre: None,
    };
    matches!((Version::parse(old), Version::parse(new)), (Some(old), Some(new)) if old < boundary && new >= boundary)
}

/// `(namespace, name)` of the Secret a SecretBinding references (namespace defaults to the
/// binding's).
fn secret_of(binding: &SecretBinding) -> (String, String) {
    let reference = binding.extra.get("secretRef");
    let field = |name: &str| {
        reference
            .and_then(|r| r.get(name))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let namespace = Some(field("namespace"))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| binding.namespace().unwrap_or_default());
    (namespace, field("name"))
}

/// Whether `credentials` references the v1 Secret `(namespace, name)`.
pub fn references_secret(
    credentials: &CredentialsBinding,
    (namespace, name): &(String, String),
) -> bool {
    let reference = credentials.extra.get("credentialsRef");
    let field = |key: &str| reference.and_then(|r| r.get(key)).and_then(Value::as_str);
    field("apiVersion") == Some("v1")
        && field("kind") == Some("Secret")
        && field("name") == Some(name.as_str())
        && field("namespace") == Some(namespace.as_str())
}

/// Whether two quota lists hold the same references, in any order.
pub fn quotas_equal(a: &[QuotaReference], b: &[QuotaReference]) -> bool {
    let key = |q: &QuotaReference| (q.namespace.clone().unwrap_or_default(), q.name.clone());
    let mut a: Vec<_> = a.iter().map(key).collect();
    let mut b: Vec<_> = b.iter().map(key).collect();
    a.sort();
    b.sort();
    a == b
}

/// Migrates Shoot `namespace`'s use of SecretBinding `binding`; returns the CredentialsBinding
/// name to use.
///
/// # Errors
/// The text upstream reports (read failures, a mismatching `force-migrated-` binding, a failed
/// create).
pub async fn migrate(
    client: &kube::Client,
    namespace: &str,
    binding: &str,
) -> Result<String, String> {
    let secret_bindings: Api<SecretBinding> = Api::namespaced(client.clone(), namespace);
    let secret_binding = secret_bindings
        .get(binding)
        .await
        .map_err(|error| format!("failed to get SecretBinding {namespace}/{binding}: {error}"))?;
    let secret = secret_of(&secret_binding);
    let credentials: Api<CredentialsBinding> = Api::namespaced(client.clone(), namespace);
    let migrated = format!("{FORCE_MIGRATED_PREFIX}{binding}");
    match credentials.get_opt(&migrated).await {
        Ok(Some(existing)) => {
            if !references_secret(&existing, &secret) {
                return Err(format!(
                    "existing CredentialsBinding {namespace}/{migrated} does not reference the same Secret as SecretBinding {namespace}/{binding}"
                ));
            }
            if !quotas_equal(&existing.quotas, &secret_binding.quotas) {
                return Err(format!(
                    "existing CredentialsBinding {namespace}/{migrated} does not have the same Quotas as SecretBinding {namespace}/{binding}"
                ));
            }
            return Ok(migrated);
        }
        Ok(None) => {}
        Err(error) => {
            return Err(format!(
                "failed to check for existing CredentialsBinding {namespace}/{migrated}: {error}"
            ));
        }
    }
    let mut matching: Vec<String> = credentials
        .list(&ListParams::default())
        .await
        .map_err(|error| {
            format!("failed to list CredentialsBindings in namespace {namespace}: {error}")
        })?
        .items
        .into_iter()
        .filter(|c| {
            references_secret(c, &secret) && quotas_equal(&c.quotas, &secret_binding.quotas)
        })
        .map(|c| c.name_any())
        .collect();
    matching.sort();
    if let Some(first) = matching.into_iter().next() {
        return Ok(first);
    }
    let provider = secret_binding
        .extra
        .get("provider")
        .and_then(|p| p.get("type"))
        .cloned()
        .unwrap_or(Value::Null);
    let created: CredentialsBinding = serde_json::from_value(json!({
        "apiVersion": "security.gardener.cloud/v1alpha1",
        "kind": "CredentialsBinding",
        "metadata": {"name": migrated, "namespace": namespace, "labels": {STATUS_LABEL: "force-migrated"}},
        "provider": {"type": provider},
        "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "namespace": secret.0, "name": secret.1},
        "quotas": secret_binding.quotas,
    }))
    .map_err(|error| format!("failed to create CredentialsBinding {namespace}/{migrated}: {error}"))?;
    credentials
        .create(&PostParams::default(), &created)
        .await
        .map_err(|error| {
            format!("failed to create CredentialsBinding {namespace}/{migrated}: {error}")
        })?;
    Ok(migrated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(namespace: Option<&str>, name: &str) -> QuotaReference {
        QuotaReference {
            name: name.to_owned(),
            namespace: namespace.map(str::to_owned),
        }
    }

    #[test]
    fn quotas_compare_as_sets_and_secrets_by_full_reference() {
        assert!(quotas_equal(
            &[quota(Some("garden"), "a"), quota(None, "b")],
            &[quota(None, "b"), quota(Some("garden"), "a")]
        ));
        assert!(!quotas_equal(
            &[quota(Some("garden"), "a")],
            &[quota(Some("other"), "a")]
        ));
        assert!(!quotas_equal(&[quota(None, "a")], &[]));
        let binding: CredentialsBinding = serde_json::from_value(json!({
            "metadata": {"name": "c", "namespace": "garden-dev"},
            "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "namespace": "garden-dev", "name": "s"},
        }))
        .expect("binding");
        let secret = ("garden-dev".to_owned(), "s".to_owned());
        assert!(references_secret(&binding, &secret));
        assert!(!references_secret(
            &binding,
            &("garden-dev".to_owned(), "t".to_owned())
        ));
        assert!(crosses_1_34("1.33.5", "1.34.0"));
        assert!(!crosses_1_34("1.34.0", "1.34.1"));
    }
}
