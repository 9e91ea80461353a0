//! Automatic credential rotations started by maintenance (spec §6.2 step 3): the SSH keypair and
//! observability passwords once their `rotationPeriod` has passed since the last completed
//! rotation (or the Shoot's creation), and the etcd encryption key likewise when the Shoot is not
//! hibernated and no rotation is in progress.

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::run::Outcome;

/// Operation starting an SSH keypair rotation.
pub const SSH_KEYPAIR: &str = "rotate-ssh-keypair";
/// Operation starting an observability credentials rotation.
pub const OBSERVABILITY: &str = "rotate-observability-credentials";
/// Operation starting an etcd encryption key rotation.
pub const ETCD_ENCRYPTION_KEY: &str = "rotate-etcd-encryption-key";

/// The rotations due for a Shoot with `spec` and `status` (JSON) created at `created`, by
/// operation key, in key order.
pub fn due_rotations(
    spec: &Value,
    status: Option<&Value>,
    created: Timestamp,
    now: Timestamp,
) -> Vec<(&'static str, Outcome)> {
    let period = |credential: &str| {
        spec.pointer(&format!(
            "/maintenance/autoRotation/credentials/{credential}/rotationPeriod"
        ))
        .and_then(Value::as_str)
        .and_then(|text| text.parse::<seedlet_config::Duration>().ok())
        .and_then(|d| SignedDuration::try_from(d.as_std()).ok())
        .filter(|d| d.is_positive())
    };
    let rotation = |credential: &str, field: &str| {
        status.and_then(|s| s.pointer(&format!("/credentials/rotation/{credential}/{field}")))
    };
    let due = |credential: &str, period: SignedDuration| {
        let last = rotation(credential, "lastCompletionTime")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok())
            .unwrap_or(created);
        now.saturating_sub(period)
            .is_ok_and(|threshold| last < threshold)
    };
    let ok = |description: &str, reason: &str| Outcome::Updated {
        description: description.to_owned(),
        reason: reason.to_owned(),
    };
    let mut out = Vec::new();
    if let Some(period) = period("etcdEncryptionKey") {
        let hibernated = status
            .and_then(|s| s.get("hibernated"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if !hibernated && due("etcdEncryptionKey", period) {
            let phase = rotation("etcdEncryptionKey", "phase")
                .and_then(Value::as_str)
                .unwrap_or("");
            let outcome = if phase.is_empty() || phase == "Completed" {
                ok(
                    "ETCD Encryption key rotation started",
                    "Automatic rotation of etcd encryption key configured",
                )
            } else {
                Outcome::Failed {
                    error: "ETCD encryption key rotation is already in progress".to_owned(),
                    reason: "Could not start ETCD encryption key rotation".to_owned(),
                }
            };
            out.push((ETCD_ENCRYPTION_KEY, outcome));
        }
    }
    if let Some(period) = period("observability")
        && due("observability", period)
    {
        out.push((
            OBSERVABILITY,
            ok(
                "Observability passwords rotation started",
                "Automatic rotation of observability passwords configured",
            ),
        ));
    }
    let workers = spec
        .pointer("/provider/workers")
        .and_then(Value::as_array)
        .is_some_and(|workers| !workers.is_empty());
    let ssh_enabled = spec
        .pointer("/provider/workersSettings/sshAccess/enabled")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if let Some(period) = period("sshKeypair")
        && workers
        && ssh_enabled
        && due("sshKeypair", period)
    {
        out.push((
            SSH_KEYPAIR,
            ok(
                "SSH keypair rotation started",
                "Automatic rotation of SSH keypair configured",
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(value: &str) -> Timestamp {
        value.parse().expect("time")
    }

    fn spec(periods: &str, workers: bool, ssh: Option<bool>) -> Value {
        let mut spec = serde_json::json!({
            "maintenance": {"autoRotation": {"credentials": {
                "sshKeypair": {"rotationPeriod": periods},
                "observability": {"rotationPeriod": periods},
                "etcdEncryptionKey": {"rotationPeriod": periods},
            }}},
            "provider": {"workers": if workers { serde_json::json!([{"name": "w"}]) } else { serde_json::json!([]) }},
        });
        if let Some(ssh) = ssh {
            spec["provider"]["workersSettings"] =
                serde_json::json!({"sshAccess": {"enabled": ssh}});
        }
        spec
    }

    fn keys(rotations: &[(&'static str, Outcome)]) -> Vec<(&'static str, bool)> {
        rotations
            .iter()
            .map(|(key, outcome)| (*key, matches!(outcome, Outcome::Updated { .. })))
            .collect()
    }

    #[test]
    fn rotations_start_once_their_period_passed() {
        let created = at("2025-01-01T00:00:00Z");
        let now = at("2025-01-10T00:00:00Z");
        // A week's period, nine days old: all three.
        assert_eq!(
            keys(&due_rotations(
                &spec("168h", true, None),
                None,
                created,
                now
            )),
            [
                (ETCD_ENCRYPTION_KEY, true),
                (OBSERVABILITY, true),
                (SSH_KEYPAIR, true)
            ]
        );
        // Ten days' period: none yet.
        assert!(due_rotations(&spec("240h", true, None), None, created, now).is_empty());
        // Recently completed rotations count from their completion.
        let status = serde_json::json!({"credentials": {"rotation": {
            "sshKeypair": {"lastCompletionTime": "2025-01-09T00:00:00Z"},
            "observability": {"lastCompletionTime": "2025-01-09T00:00:00Z"},
        }}});
        assert_eq!(
            keys(&due_rotations(
                &spec("168h", true, None),
                Some(&status),
                created,
                now
            )),
            [(ETCD_ENCRYPTION_KEY, true)]
        );
    }

    #[test]
    fn ssh_needs_workers_with_ssh_and_etcd_needs_an_awake_idle_shoot() {
        let created = at("2025-01-01T00:00:00Z");
        let now = at("2025-01-10T00:00:00Z");
        assert_eq!(
            keys(&due_rotations(
                &spec("168h", false, None),
                None,
                created,
                now
            )),
            [(ETCD_ENCRYPTION_KEY, true), (OBSERVABILITY, true)]
        );
        assert_eq!(
            keys(&due_rotations(
                &spec("168h", true, Some(false)),
                None,
                created,
                now
            )),
            [(ETCD_ENCRYPTION_KEY, true), (OBSERVABILITY, true)]
        );
        let hibernated = serde_json::json!({"hibernated": true});
        assert_eq!(
            keys(&due_rotations(
                &spec("168h", true, None),
                Some(&hibernated),
                created,
                now
            )),
            [(OBSERVABILITY, true), (SSH_KEYPAIR, true)]
        );
        let in_progress = serde_json::json!({"credentials": {"rotation": {"etcdEncryptionKey": {"phase": "Preparing"}}}});
        assert_eq!(
            keys(&due_rotations(
                &spec("168h", true, None),
                Some(&in_progress),
                created,
                now
            ))[0],
            (ETCD_ENCRYPTION_KEY, false)
        );
    }
}
