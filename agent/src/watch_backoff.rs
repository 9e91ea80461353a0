//! The backoff of every watch the agent runs. kube-runtime's default (0.8 s doubling to 30 s,
//! reset only after 120 s without errors) is made for shared controllers that must be kind to a
//! struggling API server; a seed agent watches few resources and must catch up quickly after a
//! garden or seed outage: a restarted API server answers the first re-watch with `410 Gone`,
//! which counts as one more failure, so recovery took 30–40 s with the default.

use std::time::Duration;

use kube::runtime::utils::{Backoff, ResetTimerBackoff};
use rand::Rng;

/// First delay after a failed watch.
pub const MIN_DELAY: Duration = Duration::from_millis(200);
/// Largest delay between attempts.
pub const MAX_DELAY: Duration = Duration::from_secs(5);
/// A watch that kept working this long starts over at [`MIN_DELAY`].
pub const RESET_AFTER: Duration = Duration::from_secs(10);

/// The backoff to pass to `WatchStreamExt::backoff` for every agent watch.
pub fn watch_backoff() -> ResetTimerBackoff<Exponential> {
    ResetTimerBackoff::new(Exponential::default(), RESET_AFTER)
}

/// Doubling delays from [`MIN_DELAY`] to [`MAX_DELAY`], each with up to 20 % jitter so that
/// the agent's watches do not retry in lockstep.
#[derive(Debug, Clone)]
pub struct Exponential {
    next: Duration,
}

impl Default for Exponential {
    fn default() -> Self {
        Self { next: MIN_DELAY }
    }
}

impl Iterator for Exponential {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let base = self.next;
        self.next = (base * 2).min(MAX_DELAY);
        let jitter = rand::rng().random_range(0.0..0.2);
        Some(base.mul_f64(1.0 + jitter))
    }
}

impl Backoff for Exponential {
    fn reset(&mut self) {
        self.next = MIN_DELAY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_maximum_with_bounded_jitter() {
        let mut backoff = Exponential::default();
        let delays: Vec<Duration> = (&mut backoff).take(8).collect();
        for (delay, base_ms) in delays
            .iter()
            .zip([200, 400, 800, 1600, 3200, 5000, 5000, 5000])
        {
            let base = Duration::from_millis(base_ms);
            assert!(
                *delay >= base && *delay <= base.mul_f64(1.2),
                "{delay:?} for {base:?}"
            );
        }
        backoff.reset();
        assert!(
            backoff
                .next()
                .is_some_and(|delay| delay < Duration::from_millis(250))
        );
    }
}
