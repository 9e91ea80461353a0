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
fn the_predicate_fires_on_generation_changes_and_the_hand_over_only() {
    let before = shoot(
        "b",
        json!({"seedName": "a", "lastOperation": op("Migrate", "Processing")}),
    );
    let progress = shoot(
        "b",
        json!({"seedName": "a", "lastOperation": op("Migrate", "Error")}),
    );
    let handed = shoot(
        "b",
        json!({"seedName": "b", "lastOperation": op("Migrate", "Succeeded")}),
    );
    let restoring = shoot(
        "b",
        json!({"seedName": "b", "lastOperation": op("Restore", "Processing")}),
    );
    let key = generation_or_hand_over;
    assert_eq!(
        key(&before),
        key(&progress),
        "status-only writes do not trigger"
    );
    assert_ne!(key(&before), key(&handed), "the hand-over triggers");
    assert_eq!(
        key(&before),
        key(&restoring),
        "the restore's own writes do not trigger"
    );
    let forced = shoot("b", json!({"lastOperation": op("Migrate", "Aborted")}));
    assert_ne!(key(&before), key(&forced), "a forced restore triggers");
    let mut bumped = before.clone();
    bumped.metadata.generation = Some(4);
    assert_ne!(key(&before), key(&bumped));
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
