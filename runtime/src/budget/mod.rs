//! A write budget per `(controller, object)`: no controller writes one object more than
//! [`RATE`] times a second for long, whatever its reconcile decides. Two writers undoing each
//! other's change (two agents for one Seed, two controllers disagreeing on a field) would
//! otherwise write as fast as the API server answers — once ~860 writes a second, which took the
//! garden from 43 to 615 MB — and none of them would notice.
//!
//! The budget is a token bucket per `(controller, object)`: [`BURST`] writes at once, refilled at
//! [`RATE`] per second. The fastest legitimate writer is far below it: the heartbeat renews its
//! Lease every 2 s, a Seed reconcile writes its status twice and a finalizer once, and a lost race
//! requeues after 200 ms, so a reconcile chain with a few conflicts fits the burst and a
//! steady state needs well under one write a second per object. A write over the budget is not
//! sent: [`admit`] answers a 429 `TooManyRequests` error that the caller returns like any API
//! error, so its controller requeues with its usual delay (the write is delayed, never sent
//! twice); the counter `seedlet_write_budget_exceeded_total{controller}` goes up and one ERROR
//! line names the object, until the object was left alone long enough to fill its bucket again.
//!
//! The controller is the one whose reconcile runs the write: [`crate::watch::Runner`] runs every
//! reconcile inside [`scoped`]; loops outside a controller (the heartbeat) scope themselves.
//! The charge is made by the client itself ([`guarded`]): the daemons wrap every client they
//! are given, so no write path can bypass the budget.

mod guard;

pub use guard::guarded;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use crate::metrics::ControllerLabels;

/// Sustained writes per second one controller may make to one object.
pub const RATE: f64 = 5.0;

/// Writes one controller may make to one object at once, after leaving it alone for a while.
pub const BURST: f64 = 10.0;

/// Buckets kept before idle (full) ones are dropped: bounds the memory of a controller that
/// writes many objects once.
const PRUNE_ABOVE: usize = 4096;

/// Controller name of writes outside [`scoped`].
pub const UNSCOPED: &str = "unscoped";

tokio::task_local! {
    static CONTROLLER: &'static str;
}

/// Runs `work` as a write of `controller`: [`admit`] charges its writes to that controller.
pub async fn scoped<F: Future>(controller: &'static str, work: F) -> F::Output {
    CONTROLLER.scope(controller, work).await
}

/// The controller whose reconcile runs the current task, [`UNSCOPED`] outside one.
pub fn current_controller() -> &'static str {
    CONTROLLER.try_with(|name| *name).unwrap_or(UNSCOPED)
}

/// Lets `controller` write one object up to `writes_per_second` times a second (burst twice that)
/// when that is above [`RATE`]: for a writer whose own design bounds it above the default, such as
/// the ShootState sync (one write per event batch period and ShootState). Never lowers the budget.
pub fn allow_rate(controller: &str, writes_per_second: f64) {
    if writes_per_second.is_finite() && writes_per_second > RATE {
        budget()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .rates
            .insert(controller.to_owned(), writes_per_second);
    }
}

/// Charges one write of `object` (any stable key, see [`key`]) to the current controller's
/// budget.
///
/// # Errors
/// A 429 `TooManyRequests` API error when the budget is used up: the caller does not write and
/// returns it, and its controller requeues.
pub fn admit(object: &str) -> Result<(), kube::Error> {
    admit_through(0, object)
}

/// [`admit`] for a write sent through client `client` (an id [`guard::guarded`] gives each
/// wrapped client): writes to equally named objects of two clusters, such as the Cluster of one
/// shoot in two seeds when two agents share a process in a test, do not share a bucket.
pub(crate) fn admit_through(client: u64, object: &str) -> Result<(), kube::Error> {
    let controller = current_controller();
    let verdict = budget()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .charge(controller, &format!("{client}|{object}"), Instant::now());
    match verdict {
        Verdict::Admitted => Ok(()),
        Verdict::Exceeded { first } => {
            exceeded_counter()
                .get_or_create(&ControllerLabels {
                    controller: controller.to_owned(),
                })
                .inc();
            if first {
                tracing::error!(
                    controller,
                    object,
                    rate = RATE,
                    burst = BURST,
                    "write budget exceeded: the object is written far more often than any \
                     reconcile needs (another writer undoing this controller's change?); \
                     further writes wait for the budget"
                );
            }
            Err(exceeded_error(controller, object))
        }
    }
}

/// The counter family of `seedlet_write_budget_exceeded_total{controller}`, registered with the
/// common series of [`crate::metrics::Metrics`].
pub fn exceeded_counter() -> &'static Family<ControllerLabels, Counter> {
    static EXCEEDED: OnceLock<Family<ControllerLabels, Counter>> = OnceLock::new();
    EXCEEDED.get_or_init(Family::default)
}

fn budget() -> &'static Mutex<Budget> {
    static BUDGET: OnceLock<Mutex<Budget>> = OnceLock::new();
    BUDGET.get_or_init(|| Mutex::new(Budget::new(RATE, BURST)))
}

fn exceeded_error(controller: &str, object: &str) -> kube::Error {
    let message = format!(
        "write budget of controller {controller} for {object} exceeded ({RATE} writes/s, burst \
         {BURST}); write not sent"
    );
    kube::Error::Api(
        kube::core::Status::failure(&message, "TooManyRequests")
            .with_code(429)
            .boxed(),
    )
}

/// What [`Budget::charge`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The write may go out.
    Admitted,
    /// Over budget; `first` when the object was within its budget before (log it).
    Exceeded { first: bool },
}

/// Token buckets per `(controller, object)`.
#[derive(Debug)]
struct Budget {
    rate: f64,
    burst: f64,
    /// Controllers allowed a higher rate ([`allow_rate`]); their burst is twice it.
    rates: HashMap<String, f64>,
    buckets: HashMap<(String, String), Bucket>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
    /// Whether the exceeding was reported (until the bucket is full again).
    reported: bool,
}

impl Budget {
    fn new(rate: f64, burst: f64) -> Self {
        Self {
            rate,
            burst,
            rates: HashMap::new(),
            buckets: HashMap::new(),
        }
    }

    fn charge(&mut self, controller: &str, object: &str, now: Instant) -> Verdict {
        if self.buckets.len() > PRUNE_ABOVE {
            self.prune(now);
        }
        let (rate, burst) = match self.rates.get(controller) {
            Some(&rate) => (rate, 2.0 * rate),
            None => (self.rate, self.burst),
        };
        let bucket = self
            .buckets
            .entry((controller.to_owned(), object.to_owned()))
            .or_insert(Bucket {
                tokens: burst,
                at: now,
                reported: false,
            });
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * rate).min(burst);
        bucket.at = now;
        if bucket.tokens >= burst {
            bucket.reported = false;
        }
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Verdict::Admitted;
        }
        let first = !bucket.reported;
        bucket.reported = true;
        Verdict::Exceeded { first }
    }

    /// Drops the buckets that have refilled (their objects were left alone long enough): a new
    /// bucket starts full, so forgetting them changes no verdict.
    fn prune(&mut self, now: Instant) {
        let refill = Duration::from_secs_f64(self.burst / self.rate);
        self.buckets
            .retain(|_, bucket| now.saturating_duration_since(bucket.at) < refill);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(budget: &mut Budget, object: &str, at: Instant, count: usize) -> Vec<Verdict> {
        (0..count).map(|_| budget.charge("c", object, at)).collect()
    }

    #[test]
    fn a_burst_is_admitted_then_writes_wait_for_the_refill() {
        let mut budget = Budget::new(5.0, 10.0);
        let start = Instant::now();
        let seen = verdicts(&mut budget, "seeds/a", start, 12);
        assert!(
            seen[..10].iter().all(|v| *v == Verdict::Admitted),
            "{seen:?}"
        );
        assert_eq!(seen[10], Verdict::Exceeded { first: true });
        assert_eq!(
            seen[11],
            Verdict::Exceeded { first: false },
            "reported once"
        );
        // 200 ms later one token is back.
        let later = start + Duration::from_millis(200);
        assert_eq!(budget.charge("c", "seeds/a", later), Verdict::Admitted);
        assert_eq!(
            budget.charge("c", "seeds/a", later),
            Verdict::Exceeded { first: false }
        );
    }

    #[test]
    fn budgets_are_per_controller_and_object() {
        let mut budget = Budget::new(5.0, 10.0);
        let now = Instant::now();
        verdicts(&mut budget, "seeds/a", now, 11);
        assert_eq!(budget.charge("c", "seeds/b", now), Verdict::Admitted);
        assert_eq!(budget.charge("d", "seeds/a", now), Verdict::Admitted);
    }

    #[test]
    fn a_flip_flop_is_held_to_the_rate_and_reported_once() {
        let mut budget = Budget::new(5.0, 10.0);
        let start = Instant::now();
        // 860 attempts a second for ten seconds.
        let mut admitted = 0;
        let mut reported = 0;
        for step in 0..8600u32 {
            let at = start + Duration::from_secs(10) * step / 8600;
            match budget.charge("seed-status", "seeds/my-seed", at) {
                Verdict::Admitted => admitted += 1,
                Verdict::Exceeded { first: true } => reported += 1,
                Verdict::Exceeded { first: false } => {}
            }
        }
        assert!(
            (55..=61).contains(&admitted),
            "burst + 10 s × 5/s, got {admitted}"
        );
        assert_eq!(reported, 1);
    }

    #[test]
    fn an_object_left_alone_until_its_bucket_refills_is_reported_again() {
        let mut budget = Budget::new(5.0, 10.0);
        let start = Instant::now();
        verdicts(&mut budget, "x", start, 11);
        let refilled = start + Duration::from_secs(2);
        let seen = verdicts(&mut budget, "x", refilled, 11);
        assert_eq!(seen[10], Verdict::Exceeded { first: true });
    }

    #[test]
    fn idle_buckets_are_pruned_and_busy_ones_kept() {
        let mut budget = Budget::new(5.0, 10.0);
        let start = Instant::now();
        for n in 0..=PRUNE_ABOVE {
            budget.charge("c", &format!("o{n}"), start);
        }
        let later = start + Duration::from_secs(3);
        budget.charge("c", "busy", later - Duration::from_millis(100));
        budget.charge("c", "new", later);
        assert_eq!(budget.buckets.len(), 2, "only the recent buckets remain");
    }

    #[tokio::test]
    async fn admit_charges_the_scoped_controller_and_answers_429_over_budget() {
        assert_eq!(current_controller(), UNSCOPED);
        let object = "/apis/test/v1/things/admit-test";
        let outcomes = scoped("budget-test", async {
            assert_eq!(current_controller(), "budget-test");
            (0..12).map(|_| admit(object)).collect::<Vec<_>>()
        })
        .await;
        assert!(outcomes[..10].iter().all(Result::is_ok));
        let Err(kube::Error::Api(status)) = &outcomes[11] else {
            panic!("expected a 429, got {:?}", outcomes[11]);
        };
        assert_eq!(status.code, 429);
        assert!(status.message.contains(object), "{}", status.message);
        let labels = ControllerLabels {
            controller: "budget-test".into(),
        };
        assert_eq!(exceeded_counter().get_or_create(&labels).get(), 2);
        assert!(
            admit(object).is_ok(),
            "another controller's budget is its own"
        );
    }

    #[test]
    fn a_controller_allowed_a_higher_rate_gets_twice_it_as_burst_and_others_keep_the_default() {
        let mut budget = Budget::new(RATE, BURST);
        budget.rates.insert("fast".to_owned(), 11.0);
        let at = Instant::now();
        let fast = (0..23)
            .filter(|_| budget.charge("fast", "o", at) == Verdict::Admitted)
            .count();
        assert_eq!(fast, 22);
        let slow = (0..12)
            .filter(|_| budget.charge("slow", "o", at) == Verdict::Admitted)
            .count();
        assert_eq!(slow, 10);
        // Refilled at its own rate: half a second gives the fast controller 5 more writes.
        let later = at + Duration::from_millis(500);
        let refilled = (0..10)
            .filter(|_| budget.charge("fast", "o", later) == Verdict::Admitted)
            .count();
        assert_eq!(refilled, 5);
    }
}
