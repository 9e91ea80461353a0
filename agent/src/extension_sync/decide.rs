//! Spec §0.1: given the extension object as read and the spec it should have, decide whether it
//! must be (re-)deployed, whether it reports an error for the core object, or whether it
//! succeeded. Pure; `now` is an argument.

use jiff::{SignedDuration, Timestamp};
use seedlet_api::common::LastOperationState;
use seedlet_api::extensions::ExtensionObject;
use seedlet_api::names::annotations;
use serde_json::Value;

/// What the controller must do about its extension object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Create or patch the object with `operation=reconcile`, then stop (the extension's status
    /// change brings the next reconcile).
    Deploy,
    /// The extension reports a problem (written into the core status); `deploy` asks for a
    /// re-deploy in the same pass.
    Error {
        /// What to write into the core status.
        error: ObservedError,
        /// Whether to deploy as well.
        deploy: bool,
    },
    /// The extension is still working on it (`Processing`/`Pending`): the core status stays
    /// `Processing` until its next status change.
    Waiting,
    /// The extension succeeded (and, for BackupBuckets, within the refresh period).
    Succeeded,
}

/// An error observed on the extension object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedError {
    /// The description for the core status.
    pub description: String,
    /// Codes copied from the extension's lastError.
    pub codes: Vec<String>,
}

/// The credentials side of the decision (BackupBucket, BackupEntry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Credentials {
    /// The seed secret's content changed in this pass.
    pub changed: bool,
    /// The seed secret's `gardener.cloud/timestamp` (None: it has none).
    pub timestamp: Option<Timestamp>,
}

/// Which of the §0.1 rules apply to a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// BackupBucket/BackupEntry: the credentials rules of step 1.
    pub credentials: Option<Credentials>,
    /// BackupBucket/BackupEntry: without lastOperation, re-deploy when the operation annotation is gone.
    pub redeploy_without_annotation: bool,
    /// BackupBucket: a success older than this is re-deployed (12 h).
    pub refresh_after: Option<SignedDuration>,
}

/// The BackupBucket refresh period.
pub const BUCKET_REFRESH: SignedDuration = SignedDuration::from_hours(12);

/// Decides per spec §0.1 for `existing` (None: absent) and the wanted spec `desired`.
pub fn decide<K: ExtensionObject>(
    existing: Option<&K>,
    desired: &Value,
    rules: &Rules,
    now: Timestamp,
) -> Decision {
    let Some(existing) = existing else {
        return Decision::Deploy;
    };
    if !spec_equal(existing, desired) {
        return Decision::Deploy;
    }
    let status = existing.extension_status();
    let last_operation = status.and_then(|s| s.last_operation.as_ref());
    if let Some(credentials) = rules.credentials {
        if credentials.changed {
            return Decision::Deploy;
        }
        match credentials.timestamp {
            None => return Decision::Deploy,
            Some(timestamp) => {
                let secret_second = timestamp.as_second();
                if last_operation
                    .is_some_and(|op| op.last_update_time.0.as_second() < secret_second)
                {
                    return Decision::Deploy;
                }
            }
        }
    }
    let Some(last_operation) = last_operation else {
        let annotated = existing
            .meta()
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(annotations::OPERATION));
        return Decision::Error {
            error: ObservedError {
                description: "extension did not record a last operation yet".to_owned(),
                codes: Vec::new(),
            },
            deploy: rules.redeploy_without_annotation && !annotated,
        };
    };
    let last_error = status.and_then(|s| s.last_error.as_ref());
    let failed = last_operation.state == LastOperationState::Failed;
    if last_error.is_some() || failed || last_operation.state == LastOperationState::Error {
        let error = match last_error {
            Some(error) => ObservedError {
                description: format!("error during reconciliation: {}", error.description),
                codes: error.codes.clone(),
            },
            None => ObservedError {
                description: format!(
                    "extension state is not Succeeded but {:?}",
                    last_operation.state
                ),
                codes: Vec::new(),
            },
        };
        return Decision::Error {
            error,
            deploy: failed,
        };
    }
    if !last_operation.succeeded() {
        // Processing/Pending without an error: the spec lists no rule; the core object keeps
        // the `Processing` it was given at the start of the pass.
        return Decision::Waiting;
    }
    if let Some(refresh) = rules.refresh_after
        && now.duration_since(last_operation.last_update_time.0) > refresh
    {
        return Decision::Deploy;
    }
    Decision::Succeeded
}

/// Whether the object's spec equals `desired` (deep JSON comparison).
pub fn spec_equal<K: ExtensionObject>(existing: &K, desired: &Value) -> bool {
    serde_json::to_value(existing)
        .ok()
        .and_then(|value| value.get("spec").cloned())
        .is_some_and(|spec| &spec == desired)
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedlet_api::extensions::BackupBucket;
    use serde_json::json;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    fn spec() -> Value {
        json!({"type": "local", "region": "r", "secretRef": {"name": "bucket-b", "namespace": "garden"}})
    }

    fn bucket(annotated: bool, status: Value) -> BackupBucket {
        let mut object = json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "BackupBucket",
            "metadata": {"name": "b"}, "spec": spec(), "status": status,
        });
        if annotated {
            object["metadata"]["annotations"] = json!({"gardener.cloud/operation": "reconcile"});
        }
        serde_json::from_value(object).unwrap()
    }

    fn op(state: &str, second: i64) -> Value {
        let time = Timestamp::from_second(second).unwrap().to_string();
        json!({"lastOperation": {"type": "Create", "state": state, "progress": 100,
                                 "description": "", "lastUpdateTime": time}})
    }

    const NOW: i64 = 1_700_000_000;

    fn bucket_rules(changed: bool, timestamp: Option<Timestamp>) -> Rules {
        Rules {
            credentials: Some(Credentials { changed, timestamp }),
            redeploy_without_annotation: true,
            refresh_after: Some(BUCKET_REFRESH),
        }
    }

    fn error(description: &str, codes: &[&str], deploy: bool) -> Decision {
        Decision::Error {
            error: ObservedError {
                description: description.to_owned(),
                codes: codes.iter().map(|c| (*c).to_owned()).collect(),
            },
            deploy,
        }
    }

    #[test]
    fn decisions_follow_the_spec_rules_in_order() {
        let fresh = Some(Timestamp::new(NOW - 100, 700_000_000).unwrap());
        let rules = bucket_rules(false, fresh);
        let failed = {
            let mut status = op("Failed", NOW - 50);
            status["lastError"] =
                json!({"description": "boom", "codes": ["ERR_INFRA_UNAUTHORIZED"]});
            status
        };
        let cases: Vec<(&str, Option<BackupBucket>, Rules, Decision)> = vec![
            ("absent", None, rules, Decision::Deploy),
            (
                "succeeded",
                Some(bucket(false, op("Succeeded", NOW - 50))),
                rules,
                Decision::Succeeded,
            ),
            (
                "credentials changed",
                Some(bucket(false, op("Succeeded", NOW - 50))),
                bucket_rules(true, fresh),
                Decision::Deploy,
            ),
            (
                "secret without timestamp",
                Some(bucket(false, op("Succeeded", NOW - 50))),
                bucket_rules(false, None),
                Decision::Deploy,
            ),
            // Edge case 3: same second as the secret's timestamp → no re-deploy; one earlier → re-deploy.
            (
                "update in the timestamp's second",
                Some(bucket(false, op("Succeeded", NOW - 100))),
                rules,
                Decision::Succeeded,
            ),
            (
                "update a second earlier",
                Some(bucket(false, op("Succeeded", NOW - 101))),
                rules,
                Decision::Deploy,
            ),
            // Edge case 5.
            (
                "no last operation, not annotated",
                Some(bucket(false, json!({}))),
                rules,
                error("extension did not record a last operation yet", &[], true),
            ),
            (
                "no last operation, annotated",
                Some(bucket(true, json!({}))),
                rules,
                error("extension did not record a last operation yet", &[], false),
            ),
            // Edge case 4.
            (
                "failed with codes",
                Some(bucket(false, failed)),
                rules,
                error(
                    "error during reconciliation: boom",
                    &["ERR_INFRA_UNAUTHORIZED"],
                    true,
                ),
            ),
            (
                "error without last error",
                Some(bucket(false, op("Error", NOW - 50))),
                rules,
                error("extension state is not Succeeded but Error", &[], false),
            ),
            (
                "processing",
                Some(bucket(false, op("Processing", NOW - 50))),
                rules,
                Decision::Waiting,
            ),
            // Edge case 6: a success 13 h ago is refreshed.
            (
                "succeeded 13h ago",
                Some(bucket(false, op("Succeeded", NOW - 13 * 3600))),
                bucket_rules(false, Some(at(NOW - 14 * 3600))),
                Decision::Deploy,
            ),
        ];
        for (name, existing, rules, want) in cases {
            assert_eq!(
                decide(existing.as_ref(), &spec(), &rules, at(NOW)),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn spec_change_deploys_and_bastion_rules_never_redeploy_without_operation() {
        let mut other = spec();
        other["region"] = json!("elsewhere");
        let existing = bucket(false, op("Succeeded", NOW - 50));
        let basic = Rules {
            credentials: None,
            redeploy_without_annotation: false,
            refresh_after: None,
        };
        assert_eq!(
            decide(Some(&existing), &other, &basic, at(NOW)),
            Decision::Deploy
        );
        let waiting = bucket(false, json!({}));
        assert_eq!(
            decide(Some(&waiting), &spec(), &basic, at(NOW)),
            error("extension did not record a last operation yet", &[], false)
        );
        let old = bucket(false, op("Succeeded", NOW - 20 * 3600));
        assert_eq!(
            decide(Some(&old), &spec(), &basic, at(NOW)),
            Decision::Succeeded
        );
    }
}
