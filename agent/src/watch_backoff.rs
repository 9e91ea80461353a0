//! The backoff of every watch and controller trigger stream of the agent and the garden
//! controller. kube-runtime's default (0.8 s doubling to 30 s with jitter, reset only after 120 s
//! without errors) suits controllers sharing a struggling API server; a seed agent runs about
//! twenty watches and must catch up within seconds after a garden or seed outage. A restarted API
//! server answers the first re-watch with `410 Gone`, one more failure on top of those during the
//! outage, so with the default a 4 s outage took anywhere from 1 s to over a minute to recover
//! from, depending on where each watch was in its doubling.

use std::fmt::Debug;
use std::time::Duration;

use kube::runtime::controller::Controller;
use kube::runtime::utils::{Backoff, ResetTimerBackoff};
use kube::runtime::watcher;
use kube::{Api, Resource};
use rand::Rng;
use serde::de::DeserializeOwned;

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

/// A controller over `api` whose own watch backs off with [`watch_backoff`] and that adds no
/// backoff of its own on top (see [`NoTriggerBackoff`]); use it instead of `Controller::new`.
/// Its cache keeps whole objects; [`crate::cache::controller`] keeps a view.
pub fn controller<K>(api: Api<K>, config: watcher::Config) -> Controller<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    crate::cache::controller(api, config, |_| {})
}

/// The trigger backoff of every controller: none. kube-runtime applies a controller's trigger
/// backoff to the merged stream of all its triggers, so one failing watch stalls every other
/// trigger of that controller for the whole delay, and the stalls compound with each watch's own
/// backoff: after a 4 s garden outage the fault suite saw catch-up take up to 25 s. Every trigger
/// stream here is a watch with its own [`watch_backoff`], which is where backing off belongs.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTriggerBackoff;

impl Iterator for NoTriggerBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        Some(Duration::ZERO)
    }
}

impl Backoff for NoTriggerBackoff {
    fn reset(&mut self) {}
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
