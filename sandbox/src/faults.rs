//! Fault injection for resilience tests: failing a fraction of requests (optionally from a seeded,
//! reproducible sequence of decisions), dropping open watches, and the start-up windows of a real
//! control plane ([`Startup`]).

use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// What a client sees while a kube-apiserver starts (or restarts), measured from then:
/// `/healthz`, `/livez` and `/readyz` answer 500 with `poststarthook/rbac/bootstrap-roles` failing
/// until the bootstrap roles are in place, and until the RBAC informers have synced every request
/// that needs RBAC (all but `system:masters`) is forbidden.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Startup {
    /// How long the health checks fail (kube-apiserver: typically 1–2 s).
    pub health_failing: Duration,
    /// How long authorization sees no RBAC objects (typically ~100 ms).
    pub rbac_loading: Duration,
}

impl Default for Startup {
    fn default() -> Self {
        Startup {
            health_failing: Duration::from_millis(1500),
            rbac_loading: Duration::from_millis(100),
        }
    }
}

/// Fault switches of one sandbox; cheap to clone via `Arc`.
///
/// Failures are injected after authentication (like kube-apiserver's priority and fairness, which
/// answers 429 only to authenticated requests), so every injected failure is attributed to a user:
/// [`crate::Sandbox::injected_failures`] counts them next to the served
/// [`crate::Sandbox::request_counts`], and a user's requests sent are the sum of both.
#[derive(Debug)]
pub struct Faults {
    failing: Mutex<Failing>,
    drops: watch::Sender<u64>,
    started: Mutex<Option<(Instant, Startup)>>,
}

/// The failure rule and the generator its decisions are drawn from.
#[derive(Debug)]
struct Failing {
    rule: Option<(f64, FaultKind)>,
    draws: SplitMix64,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            failing: Mutex::new(Failing {
                rule: None,
                draws: SplitMix64(rand::random()),
            }),
            drops: watch::channel(0).0,
            started: Mutex::new(None),
        }
    }
}

impl Faults {
    /// Fails `fraction` (0.0..=1.0) of the following requests with `kind`.
    pub fn fail_requests(&self, fraction: f64, kind: FaultKind) {
        self.lock().rule = Some((fraction.clamp(0.0, 1.0), kind));
    }

    /// Makes the failure decisions reproducible: after this call, whether the n-th request that
    /// reaches the fault check fails depends only on `seed`, n and the fraction in force. Without
    /// it the sequence starts from a random seed. Which request is the n-th one depends on the
    /// order in which concurrent clients arrive, so the same seed gives the same sequence of
    /// decisions, not necessarily the same failed requests.
    pub fn seed(&self, seed: u64) {
        self.lock().draws = SplitMix64(seed);
    }

    /// Stops failing requests.
    pub fn clear(&self) {
        self.lock().rule = None;
    }

    /// Ends every open watch connection now (clients see the stream close and re-watch).
    pub fn drop_watches(&self) {
        self.drops.send_modify(|n| *n += 1);
    }

    /// Starts the [`Startup`] windows now.
    pub fn start_up(&self, startup: Startup) {
        *self
            .started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((Instant::now(), startup));
    }

    /// Whether the health checks fail now.
    pub(crate) fn health_failing(&self) -> bool {
        self.within(|s| s.health_failing)
    }

    /// Whether RBAC is still loading now.
    pub(crate) fn rbac_loading(&self) -> bool {
        self.within(|s| s.rbac_loading)
    }

    fn within(&self, window: impl Fn(&Startup) -> Duration) -> bool {
        self.started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .is_some_and(|(since, startup)| since.elapsed() < window(startup))
    }

    /// The error to answer instead of serving, when this request is picked to fail. Draws one
    /// decision from the sequence while a rule is set (none while cleared).
    pub(crate) fn injected_error(&self) -> Option<ApiError> {
        let kind = {
            let mut failing = self.lock();
            let (fraction, kind) = failing.rule?;
            let draw = failing.draws.next();
            picked(draw, fraction).then_some(kind)?
        };
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Failing> {
        self.failing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whether a request with the 64 random bits `draw` fails at `fraction`: the top 53 bits as a
/// uniform number in `[0, 1)` below the fraction (so 0.0 never and 1.0 always fails).
fn picked(draw: u64, fraction: f64) -> bool {
    let uniform = (draw >> 11) as f64 / (1u64 << 53) as f64;
    uniform < fraction
}

/// The splitmix64 generator: tiny, fast and fully determined by its seed.
#[derive(Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(faults: &Faults, requests: usize) -> Vec<bool> {
        (0..requests)
            .map(|_| faults.injected_error().is_some())
            .collect()
    }

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

    #[test]
    fn same_seed_gives_the_same_failure_pattern() {
        let (a, b) = (Faults::default(), Faults::default());
        for faults in [&a, &b] {
            faults.seed(42);
            faults.fail_requests(0.3, FaultKind::InternalError);
        }
        let first = pattern(&a, 200);
        assert_eq!(first, pattern(&b, 200));
        a.seed(42);
        assert_eq!(first, pattern(&a, 200), "reseeding restarts the sequence");
        b.seed(43);
        assert_ne!(first, pattern(&b, 200), "another seed, another pattern");
    }

    #[test]
    fn failed_share_follows_the_fraction() {
        let faults = Faults::default();
        faults.seed(7);
        faults.fail_requests(0.3, FaultKind::InternalError);
        let failed = pattern(&faults, 10_000).into_iter().filter(|f| *f).count();
        assert!((2_800..3_200).contains(&failed), "{failed} of 10000 failed");
    }

    #[test]
    fn cleared_faults_draw_no_decisions() {
        let (a, b) = (Faults::default(), Faults::default());
        for faults in [&a, &b] {
            faults.seed(9);
        }
        a.fail_requests(0.5, FaultKind::InternalError);
        b.fail_requests(0.5, FaultKind::InternalError);
        b.clear();
        let _ = pattern(&b, 50);
        b.fail_requests(0.5, FaultKind::InternalError);
        assert_eq!(pattern(&a, 50), pattern(&b, 50));
    }

    #[test]
    fn startup_windows_are_off_until_started_and_end_by_themselves() {
        let faults = Faults::default();
        assert!(!faults.health_failing() && !faults.rbac_loading());
        faults.start_up(Startup {
            health_failing: Duration::from_secs(60),
            rbac_loading: Duration::ZERO,
        });
        assert!(faults.health_failing());
        assert!(!faults.rbac_loading(), "a zero window is already over");
    }

    #[test]
    fn picked_uses_the_fraction_as_a_threshold() {
        assert!(!picked(0, 0.0));
        assert!(picked(0, 0.1));
        assert!(picked(u64::MAX, 1.0));
        assert!(!picked(u64::MAX, 0.999));
        assert!(picked(u64::MAX / 2, 0.51));
        assert!(!picked(u64::MAX / 2, 0.49));
    }
}
