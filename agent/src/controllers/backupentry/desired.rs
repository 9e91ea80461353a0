//! Pure decisions of the BackupEntry controller (spec §2): which seed is responsible, which
//! entries the controller sees, the extension spec, the deletion grace period and the texts.

use jiff::{SignedDuration, Timestamp};
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::{BackupBucket, BackupEntry};
use seedlet_api::names::{annotations, namespaces};
use serde_json::{Value, json};

/// Annotation forcing an immediate deletion.
pub const FORCE_DELETION: &str = "backupentry.core.gardener.cloud/force-deletion";
/// The shoot purpose annotation on an entry.
pub const SHOOT_PURPOSE: &str = "shoot.gardener.cloud/purpose";

/// `entry-<name>`: the credentials copy in the seed's `garden` namespace.
pub fn seed_secret_name(entry: &str) -> String {
    format!("entry-{entry}")
}

/// The seed responsible for an entry: nobody without `spec.seedName`; `status.seedName` while it
/// differs (the source prepares the migration); else `spec.seedName`.
pub fn responsible_seed(entry: &BackupEntry) -> Option<&str> {
    let spec = entry.spec.seed_name.as_deref()?;
    match entry.status.as_ref().and_then(|s| s.seed_name.as_deref()) {
        Some(status) if status != spec => Some(status),
        _ => Some(spec),
    }
}

/// Whether `spec.seedName` and `status.seedName` are both set and differ (migration).
pub fn migrating(entry: &BackupEntry) -> bool {
    matches!(
        (entry.spec.seed_name.as_deref(), entry.status.as_ref().and_then(|s| s.seed_name.as_deref())),
        (Some(spec), Some(status)) if spec != status
    )
}

/// The entry filter: responsible is `seed`, and not a finished migration unless `restore` is asked.
pub fn is_ours(entry: &BackupEntry, seed: &str) -> bool {
    if responsible_seed(entry) != Some(seed) {
        return false;
    }
    let migrated = entry
        .status
        .as_ref()
        .and_then(|s| s.last_operation.as_ref())
        .is_some_and(|op| {
            op.type_ == LastOperationType::Migrate && op.state == LastOperationState::Succeeded
        });
    !migrated || has_operation(entry, annotations::OPERATION_RESTORE)
}

/// Whether the entry carries `gardener.cloud/operation=<operation>`.
pub fn has_operation(entry: &BackupEntry, operation: &str) -> bool {
    entry
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::OPERATION))
        .is_some_and(|value| value == operation)
}

/// Start description per operation type.
pub fn started(type_: LastOperationType) -> &'static str {
    match type_ {
        LastOperationType::Restore => "Restoration of BackupEntry state initialized.",
        LastOperationType::Migrate => "Migration of BackupEntry state initialized.",
        LastOperationType::Delete => "Deletion of BackupEntry state initialized.",
        // BackupEntries are never live-migrated; reported like a reconcile should one say so.
        LastOperationType::Create
        | LastOperationType::Reconcile
        | LastOperationType::LiveMigrate => "Reconciliation of BackupEntry state initialized.",
    }
}

/// Success description per operation type.
pub fn succeeded(type_: LastOperationType) -> &'static str {
    match type_ {
        LastOperationType::Restore => "Restoration of BackupEntry succeeded.",
        LastOperationType::Migrate => "Migration of BackupEntry succeeded.",
        LastOperationType::Delete => "Deletion of BackupEntry succeeded.",
        LastOperationType::Create
        | LastOperationType::Reconcile
        | LastOperationType::LiveMigrate => "Reconciliation of BackupEntry succeeded.",
    }
}

/// The first bucket health failure (spec §2.3 step 2) as `(description, codes)`, or None.
pub fn bucket_problem(bucket: &BackupBucket) -> Option<(String, Vec<String>)> {
    let status = bucket.status.clone().unwrap_or_default();
    if let Some(error) = &status.last_error {
        return Some((
            format!(
                "error during reconciliation of associated BackupBucket: {}",
                error.description
            ),
            error.codes.clone(),
        ));
    }
    let generation = bucket.metadata.generation.unwrap_or_default();
    let observed = status.observed_generation.unwrap_or_default();
    if observed < generation {
        return Some((
            format!("observed generation outdated ({observed}/{generation})"),
            Vec::new(),
        ));
    }
    let Some(operation) = &status.last_operation else {
        return Some((
            "associated BackupBucket did not record a last operation yet".to_owned(),
            Vec::new(),
        ));
    };
    if !operation.succeeded() {
        return Some((
            format!(
                "associated BackupBucket state is not Succeeded but {:?}",
                operation.state
            ),
            Vec::new(),
        ));
    }
    None
}

/// The extension BackupEntry spec `S`.
pub fn extension_spec(entry: &BackupEntry, bucket: &BackupBucket, name: &str) -> Value {
    let mut spec = json!({
        "type": bucket.spec.provider.type_,
        "region": bucket.spec.provider.region,
        "bucketName": entry.spec.bucket_name,
        "secretRef": {"name": seed_secret_name(name), "namespace": namespaces::GARDEN},
    });
    if let Some(config) = &bucket.spec.provider_config {
        spec["providerConfig"] = config.clone();
    }
    if let Some(provider_status) = bucket
        .status
        .as_ref()
        .and_then(|s| s.provider_status.clone())
    {
        spec["backupBucketProviderStatus"] = provider_status;
    }
    spec
}

/// When an entry deleted at `deleted` may go: at once (`None`) or at the returned time.
/// The grace applies when no purposes are configured, the entry has no purpose, or its purpose is
/// listed; `force` (the force-deletion annotation) skips it.
pub fn deletion_due(
    deleted: Timestamp,
    grace_hours: u64,
    purposes: &[String],
    purpose: Option<&str>,
    force: bool,
) -> Option<Timestamp> {
    if force || grace_hours == 0 {
        return None;
    }
    let applies =
        purposes.is_empty() || purpose.is_none_or(|purpose| purposes.iter().any(|p| p == purpose));
    if !applies {
        return None;
    }
    let hours = i64::try_from(grace_hours).unwrap_or(i64::MAX / 3600);
    deleted.checked_add(SignedDuration::from_hours(hours)).ok()
}

/// Go's default `time.Time` text in UTC (`2025-01-03 10:00:00 +0000 UTC`).
pub fn go_time(at: Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(spec_seed: Option<&str>, status: Value, annotations: Value) -> BackupEntry {
        serde_json::from_value(json!({
            "metadata": {"name": "shoot--p--s--uid", "namespace": "garden-p", "annotations": annotations},
            "spec": {"bucketName": "b", "seedName": spec_seed},
            "status": status,
        }))
        .unwrap()
    }

    fn op(type_: &str, state: &str) -> Value {
        json!({"type": type_, "state": state, "progress": 100, "description": "",
               "lastUpdateTime": "2024-01-01T00:00:00Z"})
    }

    #[test]
    fn responsibility_and_the_entry_filter() {
        let none = json!({});
        let cases = [
            (entry(None, json!({}), none.clone()), None, false),
            (entry(Some("a"), json!({}), none.clone()), Some("a"), false),
            (
                entry(Some("b"), json!({"seedName": "a"}), none.clone()),
                Some("a"),
                true,
            ),
            (
                entry(Some("a"), json!({"seedName": "a"}), none.clone()),
                Some("a"),
                false,
            ),
        ];
        for (entry, responsible, migrates) in &cases {
            assert_eq!(responsible_seed(entry), *responsible);
            assert_eq!(migrating(entry), *migrates);
        }
        let migrated = entry(
            Some("b"),
            json!({"lastOperation": op("Migrate", "Succeeded")}),
            none,
        );
        assert!(!is_ours(&migrated, "b"));
        assert!(!is_ours(&migrated, "a"));
        let restore = entry(
            Some("b"),
            json!({"lastOperation": op("Migrate", "Succeeded")}),
            json!({"gardener.cloud/operation": "restore"}),
        );
        assert!(is_ours(&restore, "b"));
        let failed_migration = entry(
            Some("a"),
            json!({"lastOperation": op("Migrate", "Error")}),
            json!({}),
        );
        assert!(is_ours(&failed_migration, "a"));
    }

    #[test]
    fn deletion_grace_by_purpose_and_force() {
        let at = Timestamp::from_second(1_735_884_000).unwrap(); // 2025-01-03 06:00:00 UTC
        let production = vec!["production".to_owned()];
        let due = deletion_due(at, 4, &production, Some("production"), false).unwrap();
        assert_eq!(go_time(due), "2025-01-03 10:00:00 +0000 UTC");
        assert_eq!(
            deletion_due(at, 4, &production, Some("development"), false),
            None
        );
        assert!(deletion_due(at, 4, &production, None, false).is_some());
        assert!(deletion_due(at, 4, &[], Some("development"), false).is_some());
        assert_eq!(
            deletion_due(at, 4, &production, Some("production"), true),
            None
        );
        assert_eq!(deletion_due(at, 0, &[], None, false), None);
    }

    #[test]
    fn bucket_problems_in_order() {
        let bucket = |status: Value, generation: i64| -> BackupBucket {
            serde_json::from_value(json!({"metadata": {"name": "b", "generation": generation},
                "spec": {"provider": {"type": "t", "region": "r"}}, "status": status}))
            .unwrap()
        };
        let with_error = bucket(
            json!({"lastError": {"description": "x", "codes": ["C"]},
                                       "observedGeneration": 1}),
            1,
        );
        assert_eq!(
            bucket_problem(&with_error),
            Some((
                "error during reconciliation of associated BackupBucket: x".into(),
                vec!["C".into()]
            ))
        );
        let outdated = bucket(json!({"observedGeneration": 1}), 2);
        assert_eq!(
            bucket_problem(&outdated).unwrap().0,
            "observed generation outdated (1/2)"
        );
        let no_op = bucket(json!({"observedGeneration": 2}), 2);
        assert_eq!(
            bucket_problem(&no_op).unwrap().0,
            "associated BackupBucket did not record a last operation yet"
        );
        let processing = bucket(
            json!({"observedGeneration": 2, "lastOperation": op("Create", "Processing")}),
            2,
        );
        assert_eq!(
            bucket_problem(&processing).unwrap().0,
            "associated BackupBucket state is not Succeeded but Processing"
        );
        let fine = bucket(
            json!({"observedGeneration": 2, "lastOperation": op("Create", "Succeeded"),
                                 "providerStatus": {"p": 1}}),
            2,
        );
        assert_eq!(bucket_problem(&fine), None);
        let entry = entry(Some("a"), json!({}), json!({}));
        let spec = extension_spec(&entry, &fine, "e");
        assert_eq!(spec["backupBucketProviderStatus"], json!({"p": 1}));
        assert_eq!(spec["secretRef"]["name"], "entry-e");
        assert_eq!(spec["bucketName"], "b");
    }
}
