//! Table tests of the constraints, from spec §7.6 and §7.9.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use serde_json::json;

use super::*;

fn now() -> Timestamp {
    "2025-01-01T00:00:00Z".parse().unwrap()
}

fn observed(hibernated: bool) -> Observed {
    Observed {
        hibernated,
        manual_in_place_pending: Vec::new(),
        ignored_managed_resources: Ok(Vec::new()),
        ca_certificates: Ok(Vec::new()),
    }
}

fn seen(constraints: &[Condition]) -> Vec<(String, String, String)> {
    constraints
        .iter()
        .map(|c| (c.type_.clone(), c.status.to_string(), c.reason.clone()))
        .collect()
}

fn triples(expected: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    expected
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

fn succeeded() -> LastOperation {
    serde_json::from_value(
        json!({"type": "Reconcile", "state": "Succeeded", "progress": 100,
        "description": "", "lastUpdateTime": "2025-01-01T00:00:00Z"}),
    )
    .unwrap()
}

#[test]
fn without_findings_only_the_webhook_constraints_appear_and_do_not_block_hibernation() {
    let written = constraints(&[], &observed(false), Some(&succeeded()), false, now());
    assert_eq!(
        seen(&written),
        triples(&[
            ("HibernationPossible", "True", "ConstraintNotChecked"),
            (
                "MaintenancePreconditionsSatisfied",
                "True",
                "ConstraintNotChecked"
            ),
        ])
    );
    assert!(
        written[0]
            .message
            .contains("no client for the shoot's API server")
    );
}

#[test]
fn findings_show_as_false_optional_constraints() {
    let mut inputs = observed(false);
    inputs.manual_in_place_pending = vec!["pool-a".into()];
    inputs.ignored_managed_resources = Ok(vec!["extension-x".into()]);
    inputs.ca_certificates = Ok(vec![
        CaCertificate {
            name: "ca".into(),
            valid_until: now()
                .checked_add(SignedDuration::from_hours(24 * 30))
                .unwrap(),
        },
        CaCertificate {
            name: "ca-etcd".into(),
            valid_until: now()
                .checked_add(SignedDuration::from_hours(24 * 3650))
                .unwrap(),
        },
    ]);
    let written = constraints(&[], &inputs, Some(&succeeded()), false, now());
    assert_eq!(
        seen(&written)[2..],
        triples(&[
            (
                "HasIgnoredManagedResources",
                "False",
                "ManagedResourcesIgnored"
            ),
            (
                "CACertificateValiditiesAcceptable",
                "False",
                "ExpiringCACertificates"
            ),
            (
                "ManualInPlaceWorkersUpdated",
                "False",
                "WorkerPoolsWithManualInPlaceUpdateStrategyPending"
            ),
        ])
    );
    assert!(written[3].message.contains("\"ca\""));
    assert!(!written[3].message.contains("ca-etcd"));
    // While the shoot is being created the failures are pardoned.
    let pardoned = constraints(&[], &inputs, None, false, now());
    assert!(
        pardoned[2..]
            .iter()
            .all(|c| c.status == ConditionStatus::Progressing)
    );
}

#[test]
fn a_hibernated_shoot_has_its_webhook_constraints_true_and_no_true_optional_ones() {
    let mut inputs = observed(true);
    inputs.manual_in_place_pending = vec!["pool-a".into()];
    let written = constraints(&[], &inputs, Some(&succeeded()), false, now());
    assert_eq!(
        seen(&written),
        triples(&[
            ("HibernationPossible", "True", "ConstraintNotChecked"),
            (
                "MaintenancePreconditionsSatisfied",
                "True",
                "ConstraintNotChecked"
            ),
        ])
    );
    assert_eq!(written[0].message, "Shoot cluster has been hibernated.");
    inputs.ignored_managed_resources = Ok(vec!["x".into()]);
    let written = constraints(&[], &inputs, Some(&succeeded()), false, now());
    assert_eq!(written[2].type_, "HasIgnoredManagedResources");
}

#[test]
fn read_failures_make_their_constraint_unknown() {
    let mut inputs = observed(false);
    inputs.ca_certificates = Err("listing CA Secrets failed: boom".into());
    let written = constraints(&[], &inputs, Some(&succeeded()), false, now());
    assert_eq!(
        seen(&written)[2],
        (
            "CACertificateValiditiesAcceptable".into(),
            "Unknown".into(),
            "ConditionCheckError".into()
        )
    );
    assert_eq!(written[2].message, "listing CA Secrets failed: boom");
}

#[test]
fn ca_certificates_are_the_secrets_holding_a_ca_with_a_valid_until_label() {
    let secret = |name: &str, keys: &[&str], valid_until: Option<&str>| -> Secret {
        let mut labels = BTreeMap::from([("name".to_owned(), format!("{name}-label"))]);
        if let Some(until) = valid_until {
            labels.insert("valid-until-time".into(), until.into());
        }
        let mut secret = Secret::default();
        secret.metadata.name = Some(name.into());
        secret.metadata.labels = Some(labels);
        secret.data = Some(
            keys.iter()
                .map(|key| ((*key).to_owned(), ByteString(b"x".to_vec())))
                .collect(),
        );
        secret
    };
    let found = ca_certificates(&[
        secret("ca", &["ca.crt", "ca.key"], Some("1767225600")),
        secret("leaf", &["tls.crt", "tls.key"], None),
    ])
    .unwrap();
    assert_eq!(
        found,
        [CaCertificate {
            name: "ca-label".into(),
            valid_until: Timestamp::from_second(1_767_225_600).unwrap(),
        }]
    );
    let error = ca_certificates(&[secret("bad", &["ca.crt", "ca.key"], Some("soon"))]).unwrap_err();
    assert!(error.contains("\"bad\""), "{error}");
}
