//! Operation annotations and tasks of a maintained Shoot (spec §6.5, §6.2): what happens to
//! `gardener.cloud/operation`, `maintenance.gardener.cloud/operation`,
//! `maintenance.shoot.gardener.cloud/needs-retry-operation` and `shoot.gardener.cloud/tasks`.

use std::collections::BTreeMap;

use seedlet_api::common::{LastOperation, LastOperationState};
use seedlet_api::names::{annotations, shoot_lifecycle};

/// Tasks every maintenance asks the agent to run.
pub const TASKS: [&str; 4] = [
    "deployInfrastructure",
    "deployDNSRecordInternal",
    "deployDNSRecordExternal",
    "deployDNSRecordIngress",
];
/// Task restarting control-plane pods (`enableShootControlPlaneRestarter`).
pub const TASK_RESTART_CONTROL_PLANE_PODS: &str = "restartControlPlanePods";
/// A user-requested etcd encryption key rotation; the automatic one is then not added.
const ETCD_ROTATION_START: &str = "rotate-etcd-encryption-key-start";
/// Task restarting core addons (`enableShootCoreAddonRestarter`).
pub const TASK_RESTART_CORE_ADDONS: &str = "restartCoreAddons";

/// Whether a `;`-separated operation annotation lists `value`.
pub fn lists(annotation: Option<&String>, value: &str) -> bool {
    annotation.is_some_and(|ops| ops.split(';').any(|op| op.trim() == value))
}

/// Applies §6.5 to `annotations` in place: drops a `maintain` operation, then (with a last
/// operation) either asks for a retry of a failed Shoot that needs one, or sets the maintenance
/// operations plus `reconcile` plus the started `rotations` (the etcd one only when the user did
/// not ask for `rotate-etcd-encryption-key-start`). Returns the operation set on that last path.
pub fn apply_operation(
    annotations: &mut BTreeMap<String, String>,
    last_operation: Option<&LastOperation>,
    rotations: &[&str],
) -> Option<String> {
    if lists(
        annotations.get(annotations::OPERATION),
        shoot_lifecycle::OPERATION_MAINTAIN,
    ) {
        annotations.remove(annotations::OPERATION);
    }
    let last_operation = last_operation?;
    if last_operation.state == LastOperationState::Failed {
        if annotations
            .get(shoot_lifecycle::NEEDS_RETRY_OPERATION)
            .is_some_and(|value| value == "true")
        {
            annotations.insert(
                annotations::OPERATION.to_owned(),
                shoot_lifecycle::OPERATION_RETRY.to_owned(),
            );
            annotations.remove(shoot_lifecycle::NEEDS_RETRY_OPERATION);
        }
        return None;
    }
    let mut operations: Vec<String> = annotations
        .get(shoot_lifecycle::MAINTENANCE_OPERATION)
        .map(|ops| {
            ops.split(';')
                .map(str::trim)
                .filter(|op| !op.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if !operations
        .iter()
        .any(|op| op == annotations::OPERATION_RECONCILE)
    {
        operations.push(annotations::OPERATION_RECONCILE.to_owned());
    }
    let etcd_started_by_user = operations.iter().any(|op| op == ETCD_ROTATION_START);
    for rotation in rotations {
        if *rotation == super::rotation::ETCD_ENCRYPTION_KEY && etcd_started_by_user {
            continue;
        }
        if !operations.iter().any(|op| op == rotation) {
            operations.push((*rotation).to_owned());
        }
    }
    let operation = operations.join(";");
    annotations.insert(annotations::OPERATION.to_owned(), operation.clone());
    annotations.remove(shoot_lifecycle::MAINTENANCE_OPERATION);
    Some(operation)
}

/// Appends the maintenance tasks to the comma list `shoot.gardener.cloud/tasks` (no duplicates).
pub fn add_tasks(
    annotations: &mut BTreeMap<String, String>,
    restart_control_plane: bool,
    restart_core_addons: bool,
) {
    let mut tasks: Vec<String> = annotations
        .get(annotations::SHOOT_TASKS)
        .map(|tasks| {
            tasks
                .split(',')
                .map(str::trim)
                .filter(|task| !task.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let extra = [
        restart_control_plane.then_some(TASK_RESTART_CONTROL_PLANE_PODS),
        restart_core_addons.then_some(TASK_RESTART_CORE_ADDONS),
    ];
    for task in TASKS.into_iter().chain(extra.into_iter().flatten()) {
        if !tasks.iter().any(|existing| existing == task) {
            tasks.push(task.to_owned());
        }
    }
    annotations.insert(annotations::SHOOT_TASKS.to_owned(), tasks.join(","));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operation(state: &str) -> LastOperation {
        serde_json::from_value(serde_json::json!({
            "type": "Reconcile", "state": state, "description": "", "progress": 100,
            "lastUpdateTime": "2025-01-01T00:00:00Z",
        }))
        .expect("operation")
    }

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn operation_annotation_follows_the_last_operation() {
        let succeeded = operation("Succeeded");
        let failed = operation("Failed");
        // (annotations before, last operation, annotations after)
        type Case<'a> = (
            &'a [(&'a str, &'a str)],
            Option<&'a LastOperation>,
            &'a [(&'a str, &'a str)],
        );
        let table: [Case; 5] = [
            (&[("gardener.cloud/operation", "maintain")], None, &[]),
            (
                &[(
                    "maintenance.gardener.cloud/operation",
                    "rotate-credentials-start",
                )],
                Some(&succeeded),
                &[(
                    "gardener.cloud/operation",
                    "rotate-credentials-start;reconcile",
                )],
            ),
            (
                &[("gardener.cloud/operation", "maintain;foo")],
                Some(&succeeded),
                &[("gardener.cloud/operation", "reconcile")],
            ),
            (
                &[
                    ("gardener.cloud/operation", "maintain"),
                    (
                        "maintenance.shoot.gardener.cloud/needs-retry-operation",
                        "true",
                    ),
                ],
                Some(&failed),
                &[("gardener.cloud/operation", "retry")],
            ),
            (
                &[("maintenance.gardener.cloud/operation", "x")],
                Some(&failed),
                &[("maintenance.gardener.cloud/operation", "x")],
            ),
        ];
        for (before, last_operation, after) in table {
            let mut annotations = map(before);
            let _ = apply_operation(&mut annotations, last_operation, &[]);
            assert_eq!(annotations, map(after), "{before:?}");
        }
    }

    #[test]
    fn started_rotations_join_the_operations_unless_the_user_rotates_etcd() {
        let succeeded = operation("Succeeded");
        let mut annotations = map(&[]);
        apply_operation(
            &mut annotations,
            Some(&succeeded),
            &["rotate-etcd-encryption-key", "rotate-ssh-keypair"],
        );
        assert_eq!(
            annotations["gardener.cloud/operation"],
            "reconcile;rotate-etcd-encryption-key;rotate-ssh-keypair"
        );
        let mut annotations = map(&[(
            "maintenance.gardener.cloud/operation",
            "rotate-etcd-encryption-key-start",
        )]);
        apply_operation(
            &mut annotations,
            Some(&succeeded),
            &["rotate-etcd-encryption-key"],
        );
        assert_eq!(
            annotations["gardener.cloud/operation"],
            "rotate-etcd-encryption-key-start;reconcile"
        );
    }

    #[test]
    fn tasks_are_appended_once() {
        let mut annotations = map(&[("shoot.gardener.cloud/tasks", "deployInfrastructure,custom")]);
        add_tasks(&mut annotations, true, false);
        add_tasks(&mut annotations, true, false);
        assert_eq!(
            annotations["shoot.gardener.cloud/tasks"],
            "deployInfrastructure,custom,deployDNSRecordInternal,deployDNSRecordExternal,deployDNSRecordIngress,restartControlPlanePods"
        );
    }
}
