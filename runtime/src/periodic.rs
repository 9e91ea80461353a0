//! A periodic task as one type, the timer-driven sibling of [`crate::controller`]: [`Periodic`]
//! says what one round does and what follows its success or failure; [`run`] owns what every
//! such task does the same way — a fixed schedule (round `n` at `start + n × period`, so slow
//! rounds do not make later ones drift, and a missed round is skipped rather than bunched), a
//! round bounded by one period, the reconcile metrics under the task's name, the write budget
//! charged to it, a failure logged once per distinct message (WARN, then debug while it
//! repeats; a lost write race only at debug), one INFO line when it is over, and graceful stop.
//!
//! The agent's heartbeat (Lease renewal and `GardenletReady`) runs on it: like gardenlet's lease
//! controller it is driven by time, not by changes of an object, and unlike a requeue of a
//! [`crate::controller::Reconciler`] its schedule must not slip by the time each round takes.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use crate::controller::Reason;
use crate::metrics::Metrics;
use crate::repeated::{Failure, RepeatedFailures};

/// One task run every [`Periodic::period`].
pub trait Periodic: Send + Sync + 'static {
    /// What a successful round reports to [`Periodic::succeeded`].
    type Output: Send;
    /// What a round fails with; every variant names the failing step.
    type Error: std::error::Error + Reason + Send + Sync + 'static;
    /// The task's name: logs (`controller` field), the `controller` label of the reconcile
    /// metrics, the write budget.
    const NAME: &'static str;

    /// Time between the starts of two rounds; also the most one round may take.
    fn period(&self) -> Duration;

    /// One round.
    fn round(&self) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;

    /// The error of a round that did not finish within `period`.
    fn timed_out(&self, period: Duration) -> Self::Error;

    /// Whether the round due now is skipped: neither run nor counted.
    fn skip(&self) -> bool {
        false
    }

    /// What follows a successful round that was due at `scheduled`.
    fn succeeded(&self, output: Self::Output, scheduled: Instant) {
        let _ = (output, scheduled);
    }

    /// What follows a failed round that was due at `scheduled` and started at `started`
    /// (logging is [`run`]'s).
    fn failed(&self, error: &Self::Error, scheduled: Instant, started: Instant) {
        let _ = (error, scheduled, started);
    }

    /// Whether `error` is routine — logged at debug level even the first time. The default: a
    /// lost write race (409) anywhere in its chain.
    fn is_routine(&self, error: &Self::Error) -> bool {
        crate::status::conflict_in_chain(error)
    }
}

/// Runs `task` every [`Periodic::period`], the first round at once, until `stop` is cancelled
/// (a round in flight is dropped: each is bounded by one period anyway). Every round is measured
/// in `metrics` and charged to the task's write budget.
pub async fn run<P: Periodic>(task: Arc<P>, stop: CancellationToken, metrics: Arc<Metrics>) {
    let period = task.period();
    let mut ticker = tokio::time::interval_at(Instant::now(), period);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut failures = RepeatedFailures::new();
    loop {
        let scheduled = tokio::select! {
            () = stop.cancelled() => return,
            scheduled = ticker.tick() => scheduled,
        };
        if task.skip() {
            continue;
        }
        let started = Instant::now();
        let round = crate::budget::scoped(P::NAME, task.round());
        let result = tokio::select! {
            () = stop.cancelled() => return,
            result = tokio::time::timeout(period, round) => {
                result.unwrap_or_else(|_| Err(task.timed_out(period)))
            }
        };
        metrics.reconciled(P::NAME, started.elapsed(), result.is_ok());
        match result {
            Ok(output) => {
                task.succeeded(output, scheduled);
                if let Some(failures) = failures.succeeded() {
                    tracing::info!(
                        controller = P::NAME,
                        failures,
                        "periodic task succeeded again"
                    );
                }
            }
            Err(error) => {
                task.failed(&error, scheduled, started);
                log_failure::<P>(&mut failures, &error, task.is_routine(&error));
            }
        }
    }
}

/// One WARN per distinct failure, not one per round.
fn log_failure<P: Periodic>(failures: &mut RepeatedFailures, error: &P::Error, routine: bool) {
    let message = crate::error_chain(error);
    let reason = error.reason();
    match failures.failed(&message) {
        Failure::New if !routine => {
            tracing::warn!(error = %message, reason, controller = P::NAME, "periodic task failed");
        }
        _ => tracing::debug!(error = %message, reason, controller = P::NAME, "failed"),
    }
}
