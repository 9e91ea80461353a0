//! Pure retry decisions: whether a Shoot failed for its current generation, whether the failure
//! was a provider rate limit, and when to retry it.

use jiff::{SignedDuration, Timestamp};
use seedlet_api::core::Shoot;
use seedlet_api::names::shoot_lifecycle;

/// What the view of a Shoot says about retrying it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// Last operation `Failed` for the current generation.
    pub failed: bool,
    /// Failed with `ERR_INFRA_RATE_LIMITS_EXCEEDED` among the last errors' codes.
    pub rate_limited: bool,
}

/// What to do with a Shoot now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Not a rate-limited failure: nothing.
    Ignore,
    /// The retry period passed: annotate `gardener.cloud/operation: retry`.
    RetryNow,
    /// Come back after this delay.
    RequeueAfter(SignedDuration),
}

/// The failure view of `shoot`.
pub fn failure(shoot: &Shoot) -> Failure {
    let Some(status) = shoot.status.as_ref() else {
        return Failure {
            failed: false,
            rate_limited: false,
        };
    };
    let failed = status.last_operation.as_ref().is_some_and(|op| op.failed())
        && shoot.metadata.generation == status.observed_generation;
    let rate_limited = failed
        && status.last_errors.iter().any(|error| {
            error
                .codes
                .iter()
                .any(|code| code == shoot_lifecycle::ERR_INFRA_RATE_LIMITS_EXCEEDED)
        });
    Failure {
        failed,
        rate_limited,
    }
}

/// The trigger: a first sighting, or a Shoot that became rate-limited from not failed.
pub fn became_rate_limited(previous: Option<&Failure>, current: &Failure) -> bool {
    match previous {
        None => true,
        Some(previous) => current.rate_limited && !previous.failed,
    }
}

/// Retry at `lastOperation.lastUpdateTime + period`; before that, requeue to that instant plus
/// `jitter` (a random sample in `[0, retryJitterPeriod)` chosen by the caller).
pub fn decide(
    shoot: &Shoot,
    now: Timestamp,
    period: SignedDuration,
    jitter: SignedDuration,
) -> Decision {
    if !failure(shoot).rate_limited {
        return Decision::Ignore;
    }
    let Some(failed_at) = shoot.last_operation().map(|op| op.last_update_time.0) else {
        return Decision::Ignore;
    };
    let retry_at = failed_at.saturating_add(period).unwrap_or(Timestamp::MAX);
    if now > retry_at {
        Decision::RetryNow
    } else {
        Decision::RequeueAfter(retry_at.duration_since(now) + jitter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shoot(state: &str, codes: &[&str], observed: i64) -> Shoot {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "s", "namespace": "garden-dev", "generation": 2},
            "spec": {"region": "r", "provider": {"type": "local"}},
            "status": {
                "observedGeneration": observed,
                "lastOperation": {
                    "type": "Reconcile", "state": state, "description": "", "progress": 0,
                    "lastUpdateTime": "2025-01-06T10:00:00Z",
                },
                "lastErrors": [{"description": "too many requests", "codes": codes}],
            },
        }))
        .expect("shoot")
    }

    const TEN_MINUTES: SignedDuration = SignedDuration::from_mins(10);
    const JITTER: SignedDuration = SignedDuration::from_secs(90);

    fn at(value: &str) -> Timestamp {
        value.parse().expect("time")
    }

    #[test]
    fn rate_limited_failures_are_retried_after_the_period_plus_jitter() {
        let limited = shoot("Failed", &["ERR_INFRA_RATE_LIMITS_EXCEEDED"], 2);
        // (now, expected)
        let table = [
            (
                "2025-01-06T10:05:00Z",
                Decision::RequeueAfter(SignedDuration::from_mins(5) + JITTER),
            ),
            ("2025-01-06T10:10:00Z", Decision::RequeueAfter(JITTER)),
            ("2025-01-06T10:11:00Z", Decision::RetryNow),
        ];
        for (now, expected) in table {
            assert_eq!(
                decide(&limited, at(now), TEN_MINUTES, JITTER),
                expected,
                "{now}"
            );
        }
    }

    #[test]
    fn other_failures_outdated_generations_and_other_states_are_ignored() {
        let now = at("2025-01-06T11:00:00Z");
        let table = [
            shoot("Failed", &["ERR_INFRA_QUOTA_EXCEEDED"], 2),
            shoot("Failed", &["ERR_INFRA_RATE_LIMITS_EXCEEDED"], 1),
            shoot("Error", &["ERR_INFRA_RATE_LIMITS_EXCEEDED"], 2),
        ];
        for shoot in table {
            assert_eq!(decide(&shoot, now, TEN_MINUTES, JITTER), Decision::Ignore);
        }
    }

    #[test]
    fn trigger_passes_first_sightings_and_rate_limits_after_no_failure_only() {
        let ok = Failure {
            failed: false,
            rate_limited: false,
        };
        let failed = Failure {
            failed: true,
            rate_limited: false,
        };
        let limited = Failure {
            failed: true,
            rate_limited: true,
        };
        assert!(became_rate_limited(None, &ok));
        assert!(became_rate_limited(Some(&ok), &limited));
        assert!(!became_rate_limited(Some(&failed), &limited));
        assert!(!became_rate_limited(Some(&limited), &limited));
        assert!(!became_rate_limited(Some(&ok), &failed));
    }
}
