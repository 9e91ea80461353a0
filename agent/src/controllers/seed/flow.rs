//! Pure parts of the Seed reconcile (spec §5.2): the minimum Kubernetes version, capacity and
//! allocatable, the labels of the seed's `garden` namespace, and the core BackupBucket for
//! `spec.backup`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::{Resource, ResourceExt};
use seedlet_api::core::Seed;
use seedlet_api::names::{annotations, labels};
use serde_json::{Value, json};

/// The minimum seed Kubernetes version (major, minor).
pub const MINIMUM_VERSION: (u64, u64) = (1, 32);
/// Environment variable that disables the version check (`true`).
pub const DISABLE_VERSION_CHECK_ENV: &str = "EXPERIMENTAL_DISABLE_KUBERNETES_VERSION_CHECK";

/// Reconcile start description.
pub const RECONCILE_STARTED: &str = "Reconciliation of Seed cluster initialized.";
/// Reconcile success description.
pub const RECONCILE_SUCCEEDED: &str = "Seed cluster has been successfully reconciled.";
/// Deletion start description.
pub const DELETE_STARTED: &str = "Deletion of Seed cluster in progress.";

/// Checks a `gitVersion` (`v1.33.1`, `v1.32.0-gke.1`) against [`MINIMUM_VERSION`].
///
/// # Errors
/// The spec's message when the version is older or cannot be read.
pub fn check_version(git_version: &str) -> Result<(), String> {
    let (major, minor) = MINIMUM_VERSION;
    let message = || {
        format!(
            "the Kubernetes version of the Seed cluster must be at least {major}.{minor}, but is {git_version}"
        )
    };
    let trimmed = git_version.trim_start_matches('v');
    let mut parts = trimmed.split(['.', '-', '+']);
    let parsed_major: u64 = parts
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or_else(message)?;
    let parsed_minor: u64 = parts
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or_else(message)?;
    if (parsed_major, parsed_minor) < (major, minor) {
        return Err(message());
    }
    Ok(())
}

/// `allocatable = capacity − reserved` per resource (reserved without capacity is ignored; the
/// configuration validation rejects it).
pub fn allocatable(
    capacity: &BTreeMap<String, seedlet_config::Quantity>,
    reserved: &BTreeMap<String, seedlet_config::Quantity>,
) -> BTreeMap<String, Quantity> {
    capacity
        .iter()
        .map(|(name, total)| {
            let value = match reserved.get(name) {
                None => total.as_str().to_owned(),
                Some(taken) => match (total.value(), taken.value()) {
                    (Ok(total), Ok(taken)) => format_number(total - taken),
                    _ => total.as_str().to_owned(),
                },
            };
            (name.clone(), Quantity(value))
        })
        .collect()
}

fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

/// The capacity as API quantities.
pub fn capacity(
    capacity: &BTreeMap<String, seedlet_config::Quantity>,
) -> BTreeMap<String, Quantity> {
    capacity
        .iter()
        .map(|(name, total)| (name.clone(), Quantity(total.as_str().to_owned())))
        .collect()
}

/// The merge patch of the seed's `garden` namespace: `role=garden`, and unless the seed is the
/// garden also pod security `privileged`, the HA opt-in, `gardener.cloud/role=garden` and the
/// zones annotation.
pub fn garden_namespace_patch(seed: &Seed, seed_is_garden: bool) -> Value {
    let mut namespace_labels = json!({"role": "garden"});
    let mut namespace_annotations = json!({});
    if !seed_is_garden {
        namespace_labels[labels::POD_SECURITY_ENFORCE] = json!("privileged");
        namespace_labels[labels::HA_CONSIDER] = json!("true");
        namespace_labels[labels::ROLE] = json!("garden");
        namespace_annotations[annotations::HA_ZONES] = json!(seed.spec.provider.zones.join(","));
    }
    json!({"metadata": {"labels": namespace_labels, "annotations": namespace_annotations}})
}

/// The core BackupBucket for `spec.backup`: named after the Seed UID, owned by the Seed,
/// re-annotated `operation=reconcile` with `timestamp` on each sync; the region defaults to the
/// seed's.
pub fn backup_bucket(seed: &Seed, timestamp: &str) -> Option<(String, Value)> {
    let backup = seed.spec.backup.as_ref()?;
    let uid = seed.uid()?;
    let owner = seed.controller_owner_ref(&())?;
    let region = backup
        .region
        .clone()
        .unwrap_or_else(|| seed.spec.provider.region.clone());
    let mut spec = json!({
        "provider": {"type": backup.provider, "region": region},
        "seedName": seed.name_any(),
    });
    if let Some(config) = &backup.provider_config {
        spec["providerConfig"] = config.clone();
    }
    if let Some(credentials) = &backup.credentials_ref {
        spec["credentialsRef"] = json!(credentials);
    } else if let Some(secret) = &backup.secret_ref {
        spec["secretRef"] = json!(secret);
    }
    let bucket = json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "BackupBucket",
        "metadata": {
            "name": uid,
            "annotations": {
                annotations::OPERATION: annotations::OPERATION_RECONCILE,
                annotations::TIMESTAMP: timestamp,
            },
            "ownerReferences": [owner],
        },
        "spec": spec,
    });
    Some((uid, bucket))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_check_needs_1_32() {
        assert!(check_version("v1.32.0").is_ok());
        assert!(check_version("v1.33.4-gke.100").is_ok());
        assert!(check_version("v2.0.0").is_ok());
        assert_eq!(
            check_version("v1.31.9").unwrap_err(),
            "the Kubernetes version of the Seed cluster must be at least 1.32, but is v1.31.9"
        );
        assert!(check_version("garbage").is_err());
    }

    #[test]
    fn allocatable_subtracts_reserved() {
        let capacity = BTreeMap::from([
            ("shoots".to_owned(), seedlet_config::Quantity::new("250")),
            ("other".to_owned(), seedlet_config::Quantity::new("1k")),
        ]);
        let reserved = BTreeMap::from([("shoots".to_owned(), seedlet_config::Quantity::new("10"))]);
        let result = allocatable(&capacity, &reserved);
        assert_eq!(result["shoots"].0, "240");
        assert_eq!(result["other"].0, "1k");
    }

    fn seed(backup: Value) -> Seed {
        serde_json::from_value(json!({
            "metadata": {"name": "s", "uid": "u-1"},
            "spec": {"provider": {"type": "local", "region": "r1", "zones": ["a", "b"]},
                     "networks": {"pods": "10.0.0.0/16", "services": "10.1.0.0/16"},
                     "backup": backup},
        }))
        .unwrap()
    }

    #[test]
    fn backup_bucket_defaults_the_region_and_is_owned_by_the_seed() {
        let with_backup = seed(json!({"provider": "local",
            "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "c", "namespace": "garden"}}));
        let (name, bucket) = backup_bucket(&with_backup, "t").unwrap();
        assert_eq!(name, "u-1");
        assert_eq!(
            bucket["spec"]["provider"],
            json!({"type": "local", "region": "r1"})
        );
        assert_eq!(bucket["spec"]["seedName"], "s");
        assert_eq!(bucket["spec"]["credentialsRef"]["name"], "c");
        assert_eq!(
            bucket["metadata"]["annotations"]["gardener.cloud/timestamp"],
            "t"
        );
        assert_eq!(bucket["metadata"]["ownerReferences"][0]["kind"], "Seed");
        assert_eq!(bucket["metadata"]["ownerReferences"][0]["controller"], true);
        let mut without = with_backup.clone();
        without.spec.backup = None;
        assert!(backup_bucket(&without, "t").is_none());
    }

    #[test]
    fn garden_namespace_gets_the_zones_unless_the_seed_is_the_garden() {
        let patch = garden_namespace_patch(&seed(Value::Null), false);
        assert_eq!(patch["metadata"]["labels"]["gardener.cloud/role"], "garden");
        assert_eq!(
            patch["metadata"]["annotations"]["high-availability-config.resources.gardener.cloud/zones"],
            "a,b"
        );
        let garden = garden_namespace_patch(&seed(Value::Null), true);
        assert_eq!(garden["metadata"]["labels"], json!({"role": "garden"}));
    }
}
