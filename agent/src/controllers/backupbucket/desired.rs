//! Names, the wanted extension BackupBucket spec, and the core status texts of the BackupBucket
//! controller (spec §1). Pure.

use seedlet_api::core::BackupBucket;
use seedlet_api::names::namespaces;
use serde_json::{Value, json};

/// Finalizer on backup credentials and on the generated secret in the garden.
pub const CREDENTIALS_FINALIZER: &str = "core.gardener.cloud/backupbucket";
/// Legacy credentials finalizer, removed when seen.
pub const LEGACY_CREDENTIALS_FINALIZER: &str = "gardener.cloud/gardener";
/// Annotation on the extension object: where the extension puts its generated secret.
pub const GENERATED_SECRET_NAMESPACE: &str =
    "backupbucket.extensions.gardener.cloud/generated-secret-namespace";

/// Reconcile start description.
pub const RECONCILE_STARTED: &str = "Reconciliation of BackupBucket state initialized.";
/// Reconcile success description.
pub const RECONCILE_SUCCEEDED: &str = "Backup Bucket has been successfully reconciled.";
/// Deletion start description.
pub const DELETE_STARTED: &str = "Deletion of BackupBucket state initialized.";
/// Deletion success description.
pub const DELETE_SUCCEEDED: &str = "Backup Bucket has been successfully deleted.";

/// `bucket-<name>`: the credentials copy in the seed's `garden` namespace.
pub fn seed_secret_name(bucket: &str) -> String {
    format!("bucket-{bucket}")
}

/// `generated-bucket-<name>`: the extension's generated secret copied to the garden.
pub fn generated_secret_name(bucket: &str) -> String {
    format!("generated-bucket-{bucket}")
}

/// The extension BackupBucket spec `S`: type, providerConfig, region and the seed secret.
pub fn extension_spec(bucket: &BackupBucket, name: &str) -> Value {
    let mut spec = json!({
        "type": bucket.spec.provider.type_,
        "region": bucket.spec.provider.region,
        "secretRef": {"name": seed_secret_name(name), "namespace": namespaces::GARDEN},
    });
    if let Some(config) = &bucket.spec.provider_config {
        spec["providerConfig"] = config.clone();
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(spec: Value) -> BackupBucket {
        serde_json::from_value(json!({"metadata": {"name": "b"}, "spec": spec})).unwrap()
    }

    #[test]
    fn extension_spec_points_at_the_seed_secret_and_copies_provider_fields() {
        let with_config = bucket(json!({
            "provider": {"type": "aws", "region": "eu-1"},
            "providerConfig": {"kind": "X"},
            "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "c", "namespace": "garden"},
        }));
        assert_eq!(
            extension_spec(&with_config, "b"),
            json!({"type": "aws", "region": "eu-1", "providerConfig": {"kind": "X"},
                   "secretRef": {"name": "bucket-b", "namespace": "garden"}})
        );
        let plain = bucket(json!({"provider": {"type": "aws", "region": "eu-1"}}));
        assert!(extension_spec(&plain, "b").get("providerConfig").is_none());
    }

    #[test]
    fn credentials_ref_falls_back_to_the_legacy_secret_ref() {
        let legacy = bucket(json!({
            "provider": {"type": "aws", "region": "eu-1"},
            "secretRef": {"name": "old", "namespace": "garden"},
        }));
        let reference = legacy.spec.credentials().unwrap();
        assert_eq!(reference.name, "old");
        assert_eq!(reference.kind.as_deref(), Some("Secret"));
        let none = bucket(json!({"provider": {"type": "aws", "region": "eu-1"}}));
        assert!(none.spec.credentials().is_none());
        assert_eq!(seed_secret_name("x"), "bucket-x");
        assert_eq!(generated_secret_name("x"), "generated-bucket-x");
    }
}
