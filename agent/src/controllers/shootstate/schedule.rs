//! Pure timing decisions of the ShootState sync: how long to back off after a failure, and when
//! the periodic full snapshot is due (spec §3.2). The batch period's spacing of writes is
//! [`seedlet_runtime::spacing::Spacing`].

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use seedlet_api::common::LastOperationType;
use seedlet_api::names::annotations;

use crate::cluster_shoot::ShootRef;

/// Requeue of the snapshot while the shoot is being created, migrated or restored.
pub const NOT_READY_DELAY: Duration = Duration::from_secs(600);
/// First retry delay after a failed write; doubled per attempt.
pub const RETRY_BASE: Duration = Duration::from_millis(200);
/// Longest retry delay.
pub const RETRY_MAX: Duration = Duration::from_secs(10);

/// Back-off after `attempt` consecutive failures (0 = first failure).
pub fn retry_delay(attempt: u32) -> Duration {
    RETRY_BASE
        .saturating_mul(1u32 << attempt.min(16))
        .min(RETRY_MAX)
}

/// What the periodic snapshot does for one shoot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backup {
    /// Write a full snapshot now, then look again after the delay.
    Now(Duration),
    /// Look again after the delay.
    Later(Duration),
    /// Never for this shoot (deleting); a change of its Cluster re-evaluates.
    Never,
}

/// Errors of the backup decision.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ShootState's `gardener.cloud/timestamp` is not an RFC 3339 time.
    #[error("parsing annotation {} {value:?}", annotations::TIMESTAMP)]
    Timestamp {
        /// The annotation value.
        value: String,
        /// Cause.
        #[source]
        source: jiff::Error,
    },
}

/// gardenlet's `shoot-state` decision (spec §3.2): no backup while the shoot is deleting; wait
/// 10 minutes while it is being created, migrated or restored; otherwise write when the last
/// backup (`timestamp`, absent = never) is older than `period`, and look again after `period`
/// minus half a jitter window plus `jitter` (in `[0, 1)`) of it. The window is `period / 12`, i.e.
/// gardenlet's ±15 minutes at the 6 h default, and shrinks with the period so short test periods
/// stay meaningful.
///
/// # Errors
/// [`Error::Timestamp`] for an unparsable timestamp.
pub fn backup(
    shoot: &ShootRef,
    timestamp: Option<&str>,
    now: Timestamp,
    period: Duration,
    jitter: f64,
) -> Result<Backup, Error> {
    if shoot.deleting {
        return Ok(Backup::Never);
    }
    let Some(operation) = &shoot.last_operation else {
        return Ok(Backup::Later(NOT_READY_DELAY));
    };
    let not_ready = match operation.type_ {
        LastOperationType::Create | LastOperationType::Restore => !operation.succeeded(),
        // A Shoot on its way to another Seed (either kind of migration) is not backed up here.
        LastOperationType::Migrate | LastOperationType::LiveMigrate => true,
        LastOperationType::Reconcile | LastOperationType::Delete => false,
    };
    if not_ready {
        return Ok(Backup::Later(NOT_READY_DELAY));
    }
    let last = match timestamp {
        Some(value) => value
            .parse::<Timestamp>()
            .map_err(|source| Error::Timestamp {
                value: value.to_owned(),
                source,
            })?,
        None => Timestamp::UNIX_EPOCH,
    };
    let period_signed = signed(period);
    let window = period / 12;
    let offset = signed(window.mul_f64(jitter.clamp(0.0, 1.0))) - signed(window / 2);
    if last.saturating_add(period_signed).unwrap_or(Timestamp::MAX) < now {
        return Ok(Backup::Now(unsigned(period_signed + offset)));
    }
    let due = last
        .saturating_add(period_signed + offset)
        .unwrap_or(Timestamp::MAX);
    Ok(Backup::Later(unsigned(due.duration_since(now))))
}

fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}

fn unsigned(duration: SignedDuration) -> Duration {
    Duration::try_from(duration).unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use seedlet_api::common::{LastOperation, LastOperationState};
    use seedlet_api::extensions::Cluster;

    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);
    const MINUTE: Duration = Duration::from_secs(60);

    fn shoot(operation: Option<(LastOperationType, LastOperationState)>) -> ShootRef {
        ShootRef {
            namespace: "garden-dev".into(),
            name: "foo".into(),
            deleting: false,
            last_operation: operation.map(|(type_, state)| LastOperation {
                description: String::new(),
                last_update_time: Time(Timestamp::UNIX_EPOCH),
                progress: 100,
                state,
                type_,
            }),
        }
    }

    fn now() -> Timestamp {
        "2026-01-01T12:00:00Z".parse().unwrap()
    }

    fn hours_ago(hours: i64) -> String {
        (now() - SignedDuration::from_hours(hours)).to_string()
    }

    fn reconciled() -> ShootRef {
        shoot(Some((
            LastOperationType::Reconcile,
            LastOperationState::Succeeded,
        )))
    }

    #[test]
    fn backup_seven_hours_old_is_written_and_requeued_within_fifteen_minutes_of_six_hours() {
        let old = hours_ago(7);
        for (jitter, expected) in [(0.0, 5 * HOUR + 45 * MINUTE), (0.5, 6 * HOUR)] {
            assert_eq!(
                backup(&reconciled(), Some(&old), now(), 6 * HOUR, jitter).unwrap(),
                Backup::Now(expected)
            );
        }
        let Backup::Now(late) = backup(&reconciled(), Some(&old), now(), 6 * HOUR, 0.999).unwrap()
        else {
            panic!("expected a write");
        };
        assert!(late < 6 * HOUR + 15 * MINUTE && late > 6 * HOUR + 14 * MINUTE);
    }

    #[test]
    fn backup_one_hour_old_waits_about_five_hours() {
        let recent = hours_ago(1);
        assert_eq!(
            backup(&reconciled(), Some(&recent), now(), 6 * HOUR, 0.0).unwrap(),
            Backup::Later(4 * HOUR + 45 * MINUTE)
        );
        assert_eq!(
            backup(&reconciled(), Some(&recent), now(), 6 * HOUR, 0.5).unwrap(),
            Backup::Later(5 * HOUR)
        );
    }

    #[test]
    fn backup_without_timestamp_is_written_now() {
        assert!(matches!(
            backup(&reconciled(), None, now(), 6 * HOUR, 0.3).unwrap(),
            Backup::Now(_)
        ));
    }

    #[test]
    fn backup_with_garbage_timestamp_is_an_error() {
        assert!(backup(&reconciled(), Some("yesterday"), now(), 6 * HOUR, 0.3).is_err());
    }

    #[test]
    fn backup_waits_ten_minutes_while_creating_migrating_or_restoring() {
        use LastOperationState::{Processing, Succeeded};
        use LastOperationType::{Create, Migrate, Restore};
        for operation in [
            None,
            Some((Create, Processing)),
            Some((Migrate, Succeeded)),
            Some((Restore, Processing)),
        ] {
            assert_eq!(
                backup(&shoot(operation), None, now(), 6 * HOUR, 0.3).unwrap(),
                Backup::Later(NOT_READY_DELAY),
                "{operation:?}"
            );
        }
        assert!(matches!(
            backup(
                &shoot(Some((Restore, Succeeded))),
                None,
                now(),
                6 * HOUR,
                0.3
            )
            .unwrap(),
            Backup::Now(_)
        ));
    }

    #[test]
    fn backup_never_happens_for_a_deleting_shoot() {
        let mut deleting = reconciled();
        deleting.deleting = true;
        assert_eq!(
            backup(&deleting, None, now(), 6 * HOUR, 0.3).unwrap(),
            Backup::Never
        );
    }

    #[test]
    fn retry_delay_doubles_up_to_the_cap() {
        assert_eq!(retry_delay(0), Duration::from_millis(200));
        assert_eq!(retry_delay(2), Duration::from_millis(800));
        assert_eq!(retry_delay(40), RETRY_MAX);
    }

    #[test]
    fn shoot_ref_of_cluster_reads_embedded_shoot_metadata_and_operation() {
        let cluster: Cluster = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "shoot--dev--foo"},
            "spec": {
                "cloudProfile": {},
                "shoot": {"metadata": {"name": "foo", "namespace": "garden-dev"},
                          "status": {"lastOperation": {"type": "Migrate", "state": "Processing",
                                     "lastUpdateTime": "2026-01-01T00:00:00Z", "progress": 0, "description": ""}}}
            }
        }))
        .unwrap();
        let (namespace, shoot) = ShootRef::of_cluster(&cluster).unwrap();
        assert_eq!(namespace, "shoot--dev--foo");
        assert_eq!(
            (shoot.namespace.as_str(), shoot.name.as_str()),
            ("garden-dev", "foo")
        );
        assert!(shoot.migrating());
        assert!(!shoot.deleting);
    }
}
