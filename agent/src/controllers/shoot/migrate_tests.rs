//! Table tests of the migrate path's pure decisions: the `ReadyForMigration` gate, the hand-over
//! that triggers the destination, and the operation type on either side.

use seedlet_api::common::LastOperationType;
use serde_json::{Value, json};

use super::*;

fn shoot(spec_seed: &str, status: Value) -> Shoot {
    serde_json::from_value(json!({
        "metadata": {"name": "s", "namespace": "garden-dev", "generation": 3},
        "spec": {"region": "r", "seedName": spec_seed, "provider": {"type": "local"}},
        "status": status,
    }))
    .expect("shoot")
}

fn op(type_: &str, state: &str) -> Value {
    json!({"type": type_, "state": state, "progress": 100, "description": "",
           "lastUpdateTime": "2026-01-01T00:00:00Z"})
}

fn constraint(status: &str, message: &str) -> Value {
    json!([{"type": "ReadyForMigration", "status": status, "reason": "r", "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:00Z"}])
}

#[test]
fn migration_waits_for_the_gardens_confirmation_of_the_destination() {
    let cases = [
        (json!({"seedName": "a"}), Err("waiting for confirmation that destination Seed is available to host the control plane of Shoot s".to_owned())),
        (
            json!({"seedName": "a", "constraints": constraint("False", "seed b is not ready")}),
            Err("destination Seed is not available to host the control plane of Shoot s: seed b is not ready".to_owned()),
        ),
        (json!({"seedName": "a", "constraints": constraint("True", "ok")}), Ok(())),
    ];
    for (status, want) in cases {
        assert_eq!(
            ready_for_migration(&shoot("b", status.clone())),
            want,
            "{status}"
        );
    }
}

#[test]
fn only_a_finished_or_aborted_migration_hands_over() {
    let cases = [
        (op("Migrate", "Succeeded"), json!("b"), Some(Some("b"))),
        (op("Migrate", "Aborted"), json!("b"), Some(Some("b"))),
        (op("Migrate", "Aborted"), Value::Null, Some(None)),
        (op("Migrate", "Processing"), json!("a"), None),
        (op("Migrate", "Error"), json!("a"), None),
        (op("Restore", "Succeeded"), json!("b"), None),
        (op("Create", "Succeeded"), json!("b"), None),
    ];
    for (last, seed, want) in cases {
        let shoot = shoot(
            "b",
            json!({"seedName": seed, "lastOperation": last.clone()}),
        );
        assert_eq!(hand_over(&shoot), want, "{last} {seed}");
    }
}

#[test]
fn events_pass_on_creation_generation_changes_and_entering_the_hand_over_only() {
    let created = shoot("a", json!({}));
    let creating = shoot(
        "a",
        json!({"seedName": "a", "lastOperation": op("Create", "Processing")}),
    );
    let migrating = shoot(
        "b",
        json!({"seedName": "a", "lastOperation": op("Migrate", "Processing")}),
    );
    let mut bumped = migrating.clone();
    bumped.metadata.generation = Some(4);
    let handed = shoot(
        "b",
        json!({"seedName": "b", "lastOperation": op("Migrate", "Succeeded")}),
    );
    let restoring = shoot(
        "b",
        json!({"seedName": "b", "lastOperation": op("Restore", "Processing")}),
    );
    let restored = shoot(
        "b",
        json!({"seedName": "b", "lastOperation": op("Restore", "Succeeded")}),
    );
    let forced = shoot("b", json!({"lastOperation": op("Migrate", "Aborted")}));
    let mut admission = crate::controllers::shoot::trigger::Seen::default();
    let steps = [
        (&created, true, "first sight"),
        (&creating, false, "own status write"),
        (&bumped, true, "new generation"),
        (&bumped, false, "same again"),
    ];
    for (shoot, want, case) in steps {
        assert_eq!(admission.passes(shoot), want, "{case}");
    }
    // The hand-over sequence keeps its generation.
    let mut admission = crate::controllers::shoot::trigger::Seen::default();
    let sequence = [
        (&migrating, true, "first sight"),
        (&handed, true, "entering the hand-over"),
        (&handed, false, "still handed over"),
        (&restoring, false, "leaving it (the restore's start)"),
        (&restored, false, "the restore's success"),
        (&forced, true, "a forced restore enters it again"),
    ];
    for (shoot, want, case) in sequence {
        assert_eq!(admission.passes(shoot), want, "{case}");
    }
}

#[test]
fn the_source_migrates_and_the_destination_restores() {
    let cases = [
        (
            shoot(
                "b",
                json!({"seedName": "a", "lastOperation": op("Create", "Succeeded")}),
            ),
            Some("a"),
            LastOperationType::Migrate,
        ),
        (
            shoot(
                "b",
                json!({"seedName": "a", "lastOperation": op("Migrate", "Error")}),
            ),
            Some("a"),
            LastOperationType::Migrate,
        ),
        (
            shoot(
                "b",
                json!({"seedName": "b", "lastOperation": op("Migrate", "Succeeded")}),
            ),
            Some("b"),
            LastOperationType::Restore,
        ),
        (
            shoot(
                "b",
                json!({"seedName": "b", "lastOperation": op("Restore", "Error")}),
            ),
            Some("b"),
            LastOperationType::Restore,
        ),
        (
            shoot(
                "b",
                json!({"seedName": "b", "lastOperation": op("Restore", "Succeeded")}),
            ),
            Some("b"),
            LastOperationType::Reconcile,
        ),
    ];
    for (shoot, responsible, type_) in cases {
        assert_eq!(decide::responsible_seed(&shoot), responsible);
        assert_eq!(decide::operation_type(&shoot), type_, "{:?}", shoot.status);
    }
}
