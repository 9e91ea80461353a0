//! Fault injection for resilience tests: failing a fraction of requests and dropping open watches.

use std::sync::Mutex;

use tokio::sync::watch;

use crate::status::ApiError;

/// How injected failures answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// 500 InternalError.
    InternalError,
    /// 429 TooManyRequests with `Retry-After`.
    TooManyRequests {
        /// Seconds in the `Retry-After` header.
        retry_after_seconds: u64,
    },
}

/// Fault switches of one sandbox; cheap to clone via `Arc`.
#[derive(Debug)]
pub struct Faults {
    failing: Mutex<Option<(f64, FaultKind)>>,
    drops: watch::Sender<u64>,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            failing: Mutex::new(None),
            drops: watch::channel(0).0,
        }
    }
}

impl Faults {
    /// Fails `fraction` (0.0..=1.0) of the following requests with `kind`.
    pub fn fail_requests(&self, fraction: f64, kind: FaultKind) {
        *self
            .failing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((fraction.clamp(0.0, 1.0), kind));
    }

    /// Stops failing requests.
    pub fn clear(&self) {
        *self
            .failing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// Ends every open watch connection now (clients see the stream close and re-watch).
    pub fn drop_watches(&self) {
        self.drops.send_modify(|n| *n += 1);
    }

    /// The error to answer instead of serving, when this request is picked to fail.
    pub(crate) fn injected_error(&self) -> Option<ApiError> {
        let (fraction, kind) = (*self
            .failing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner))?;
        if rand::random::<f64>() >= fraction {
            return None;
        }
        Some(match kind {
            FaultKind::InternalError => ApiError::internal("injected fault"),
            FaultKind::TooManyRequests {
                retry_after_seconds,
            } => {
                let mut error = ApiError::status(
                    429,
                    "TooManyRequests",
                    "the server has received too many requests and has asked us to try again later",
                    Some(serde_json::json!({"retryAfterSeconds": retry_after_seconds})),
                );
                error.retry_after = Some(retry_after_seconds);
                error
            }
        })
    }

    /// A receiver that changes whenever watches are to be dropped.
    pub(crate) fn watch_drops(&self) -> watch::Receiver<u64> {
        self.drops.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_fraction_fails_every_request_with_retry_after() {
        let faults = Faults::default();
        faults.fail_requests(
            1.0,
            FaultKind::TooManyRequests {
                retry_after_seconds: 2,
            },
        );
        let error = faults.injected_error().expect("always fails");
        assert_eq!((error.code, error.retry_after), (429, Some(2)));
        faults.clear();
        assert!(faults.injected_error().is_none());
    }

    #[test]
    fn zero_fraction_never_fails() {
        let faults = Faults::default();
        faults.fail_requests(0.0, FaultKind::InternalError);
        assert!((0..100).all(|_| faults.injected_error().is_none()));
    }
}
