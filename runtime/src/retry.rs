//! Bounded in-place retry of idempotent API requests on transient server errors, so that one
//! failed request does not throw away (and later redo) the work of a whole reconcile.
//!
//! What kube's client already does: every client the agent builds (`runtime::client::build` on a
//! kubeconfig, `default_retry` on) retries 429, 503 and 504 itself, up to 15 times, with an
//! exponential backoff from 5 ms that waits at least the server's `Retry-After`. A throttled error
//! that still reaches the caller means the server kept refusing for a long while, so
//! [`RetryPolicy::RECONCILE`] does not retry those again (that would multiply the load the server
//! asked to shed); it retries what the client does not: 500 (`InternalError`, `ServerTimeout`).
//! A policy for a client without that layer sets `retry_throttled` and then honours
//! `Retry-After` (`status.details.retryAfterSeconds`) up to a cap.
//!
//! Only for requests that may run twice: GET/LIST, server-side apply, merge patches that set
//! fields to fixed values, DELETE with NotFound treated as done. Conflicts (409) are never
//! retried here: the reconcile returns them and reads fresh state on its next run.

use std::future::Future;
use std::time::Duration;

/// How often and how long to retry one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first one included (1 = no retry).
    pub attempts: u32,
    /// Delay before the first retry; it doubles for every further retry.
    pub initial_delay: Duration,
    /// Upper bound of the doubling delay (before jitter).
    pub max_delay: Duration,
    /// Whether 429, 503 and 504 are retried too (only for clients that do not retry them).
    pub retry_throttled: bool,
    /// Upper bound of an honoured `Retry-After` (with `retry_throttled`).
    pub max_retry_after: Duration,
}

impl RetryPolicy {
    /// Requests inside a reconcile: 4 attempts, 100 → 200 → 400 ms apart (each ±25 % jitter, at
    /// most 0.9 s in all), 500s only. At 30 % failed requests a request then fails for good with
    /// 0.3⁴ ≈ 0.8 % probability, so a ten-request reconcile completes in about 92 % of the runs
    /// (3 % without retries).
    pub const RECONCILE: RetryPolicy = RetryPolicy {
        attempts: 4,
        initial_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(400),
        retry_throttled: false,
        max_retry_after: Duration::from_secs(2),
    };
}

/// How an error bears on retrying the request that caused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A server error that may not happen again (500).
    Transient,
    /// The server asked to back off (429, 503, 504), possibly saying for how long.
    Throttled {
        /// The server's `Retry-After` hint, when it gave one.
        retry_after: Option<Duration>,
    },
    /// Anything else: the same request would fail the same way (4xx, decoding, transport).
    Permanent,
}

/// Classifies `error` for retrying.
pub fn classify(error: &kube::Error) -> Failure {
    let kube::Error::Api(status) = error else {
        return Failure::Permanent;
    };
    match status.code {
        500 => Failure::Transient,
        429 | 503 | 504 => Failure::Throttled {
            retry_after: status
                .details
                .as_ref()
                .map(|details| details.retry_after_seconds)
                .filter(|seconds| *seconds > 0)
                .map(|seconds| Duration::from_secs(u64::from(seconds))),
        },
        _ => Failure::Permanent,
    }
}

/// The `n`-th pause (1 = the first) of a back-off that starts at `first` and doubles up to `max`:
/// the one doubling schedule of the agent's start-up loops, second-agent clashes and request
/// retries.
pub fn doubled(first: Duration, n: u32, max: Duration) -> Duration {
    let doublings = n.saturating_sub(1).min(31);
    first.saturating_mul(1u32 << doublings).min(max)
}

/// The delay before retry number `retry` (1 = the second attempt) after a request failed with
/// `failure`, or `None` to give up: not retryable under `policy`, or the attempts are used up.
/// `jitter` in `[0, 1)` scales the backoff by 0.75..1.25; an honoured `Retry-After` is a lower
/// bound of the delay.
pub fn retry_delay(
    policy: &RetryPolicy,
    failure: Failure,
    retry: u32,
    jitter: f64,
) -> Option<Duration> {
    if retry == 0 || retry >= policy.attempts {
        return None;
    }
    let backoff = doubled(policy.initial_delay, retry, policy.max_delay)
        .mul_f64(0.75 + 0.5 * jitter.clamp(0.0, 1.0));
    match failure {
        Failure::Transient => Some(backoff),
        Failure::Throttled { retry_after } if policy.retry_throttled => Some(
            retry_after
                .map(|after| after.min(policy.max_retry_after))
                .map_or(backoff, |after| after.max(backoff)),
        ),
        Failure::Throttled { .. } | Failure::Permanent => None,
    }
}

/// Runs `request` until it succeeds, fails with an error `policy` does not retry, or the attempts
/// are used up; returns the last outcome. `request` must be idempotent (see the module docs).
///
/// # Errors
/// The error of the last attempt.
pub async fn idempotent<T, F, Fut>(policy: &RetryPolicy, mut request: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let mut retry = 0;
    loop {
        let error = match request().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        retry += 1;
        let Some(delay) = retry_delay(policy, classify(&error), retry, rand::random::<f64>())
        else {
            return Err(error);
        };
        tracing::debug!(error = %crate::error_chain(&error), retry, delay_ms = delay.as_millis(), "retrying transient api error");
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use kube::core::Status;

    use super::*;

    /// An API error as kube decodes it from the server's Status body.
    fn api_error(code: u16, retry_after_seconds: u32) -> kube::Error {
        let status: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure",
            "code": code,
            "reason": "Injected",
            "message": "injected",
            "details": {"retryAfterSeconds": retry_after_seconds},
        }))
        .unwrap();
        kube::Error::Api(status.boxed())
    }

    const THROTTLED: RetryPolicy = RetryPolicy {
        retry_throttled: true,
        ..RetryPolicy::RECONCILE
    };

    #[test]
    fn server_errors_are_transient_and_throttling_carries_retry_after() {
        assert_eq!(classify(&api_error(500, 0)), Failure::Transient);
        assert_eq!(
            classify(&api_error(429, 3)),
            Failure::Throttled {
                retry_after: Some(Duration::from_secs(3))
            }
        );
        assert_eq!(
            classify(&api_error(503, 0)),
            Failure::Throttled { retry_after: None }
        );
        for code in [400, 403, 404, 409, 410, 422, 501] {
            assert_eq!(classify(&api_error(code, 0)), Failure::Permanent, "{code}");
        }
        let decoding = kube::Error::SerdeError(serde_json::from_str::<u8>("x").unwrap_err());
        assert_eq!(classify(&decoding), Failure::Permanent);
    }

    #[test]
    fn reconcile_backoff_doubles_from_100_to_400_ms_then_gives_up() {
        let policy = RetryPolicy::RECONCILE;
        let delays: Vec<_> = (1..=4)
            .map(|retry| retry_delay(&policy, Failure::Transient, retry, 0.5))
            .collect();
        assert_eq!(
            delays,
            [
                Some(Duration::from_millis(100)),
                Some(Duration::from_millis(200)),
                Some(Duration::from_millis(400)),
                None
            ]
        );
    }

    #[test]
    fn jitter_scales_the_backoff_by_a_quarter_either_way() {
        let policy = RetryPolicy::RECONCILE;
        assert_eq!(
            retry_delay(&policy, Failure::Transient, 1, 0.0),
            Some(Duration::from_millis(75))
        );
        assert_eq!(
            retry_delay(&policy, Failure::Transient, 3, 1.0),
            Some(Duration::from_millis(500))
        );
    }

    #[test]
    fn doubling_is_capped_at_the_max_delay_even_for_many_retries() {
        let policy = RetryPolicy {
            attempts: 100,
            ..RetryPolicy::RECONCILE
        };
        assert_eq!(
            retry_delay(&policy, Failure::Transient, 60, 0.5),
            Some(Duration::from_millis(400))
        );
    }

    #[test]
    fn throttling_is_left_to_the_client_unless_the_policy_retries_it() {
        let throttled = Failure::Throttled {
            retry_after: Some(Duration::from_secs(1)),
        };
        assert_eq!(
            retry_delay(&RetryPolicy::RECONCILE, throttled, 1, 0.5),
            None
        );
        assert_eq!(
            retry_delay(&THROTTLED, throttled, 1, 0.5),
            Some(Duration::from_secs(1))
        );
    }

    #[test]
    fn retry_after_is_capped_and_never_shortens_the_backoff() {
        let after = |seconds| Failure::Throttled {
            retry_after: Some(Duration::from_secs(seconds)),
        };
        assert_eq!(
            retry_delay(&THROTTLED, after(60), 1, 0.5),
            Some(Duration::from_secs(2))
        );
        let short = RetryPolicy {
            max_retry_after: Duration::from_millis(50),
            ..THROTTLED
        };
        assert_eq!(
            retry_delay(&short, after(1), 2, 0.5),
            Some(Duration::from_millis(200))
        );
        assert_eq!(
            retry_delay(&THROTTLED, Failure::Throttled { retry_after: None }, 1, 0.5),
            Some(Duration::from_millis(100))
        );
    }

    #[test]
    fn permanent_errors_and_retry_zero_are_never_retried() {
        assert_eq!(retry_delay(&THROTTLED, Failure::Permanent, 1, 0.5), None);
        assert_eq!(retry_delay(&THROTTLED, Failure::Transient, 0, 0.5), None);
    }

    #[tokio::test]
    async fn idempotent_retries_server_errors_until_success() {
        let calls = AtomicU32::new(0);
        let result = idempotent(&RetryPolicy::RECONCILE, || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0 | 1 => Err(api_error(500, 0)),
                _ => Ok("done"),
            }
        })
        .await;
        assert_eq!(result.ok(), Some("done"));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn idempotent_returns_the_last_error_after_the_attempts() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = idempotent(&RetryPolicy::RECONCILE, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(api_error(500, 0))
        })
        .await;
        assert!(matches!(result, Err(kube::Error::Api(status)) if status.code == 500));
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn idempotent_gives_up_at_once_on_a_conflict() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = idempotent(&RetryPolicy::RECONCILE, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(api_error(409, 0))
        })
        .await;
        assert!(matches!(result, Err(kube::Error::Api(status)) if status.code == 409));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
