//! A periodic task as one type, on tokio's paused clock: `periodic::run` starts round `n` at
//! `start + n × period` whatever the rounds before took, ends a round that outlasts its period
//! with the task's timeout error, skips what the task says to skip, charges the round's writes to
//! the task's budget, measures every round and stops when told.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use seedlet_runtime::controller::Reason;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::periodic::{self, Periodic};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const PERIOD: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
enum Error {
    #[error("round {0} fails")]
    Scripted(usize),
    #[error("round took longer than {0:?}")]
    Timeout(Duration),
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Scripted(_) => "Scripted",
            Error::Timeout(_) => "Timeout",
        }
    }
}

/// What happened in one round: when it was due, when it started, how it ended, and the budget
/// its writes were charged to.
#[derive(Debug, Clone, PartialEq)]
struct Round {
    due: Duration,
    started: Duration,
    outcome: &'static str,
    budget: &'static str,
}

/// Round 0 takes 600 ms, rounds 1 and 2 fail, round 3 takes 1.5 periods, round 4 succeeds, round 5
/// is skipped, later rounds succeed at once.
struct Scripted {
    start: Instant,
    rounds: AtomicUsize,
    skip_next: AtomicBool,
    budget: Mutex<Vec<&'static str>>,
    log: Mutex<Vec<Round>>,
}

impl Scripted {
    fn since_start(&self, at: Instant) -> Duration {
        at.duration_since(self.start)
    }

    fn record(&self, scheduled: Instant, started: Instant, outcome: &'static str) {
        let budget = self.budget.lock().expect("budget").pop().unwrap_or("none");
        self.log.lock().expect("log").push(Round {
            due: self.since_start(scheduled),
            started: self.since_start(started),
            outcome,
            budget,
        });
    }
}

impl Periodic for Scripted {
    type Output = Instant;
    type Error = Error;
    const NAME: &'static str = "scripted";

    fn period(&self) -> Duration {
        PERIOD
    }

    async fn round(&self) -> Result<Instant, Error> {
        let started = Instant::now();
        let round = self.rounds.fetch_add(1, Ordering::SeqCst);
        self.budget
            .lock()
            .expect("budget")
            .push(seedlet_runtime::budget::current_controller());
        if round == 4 {
            self.skip_next.store(true, Ordering::SeqCst);
        }
        match round {
            0 => tokio::time::sleep(Duration::from_millis(600)).await,
            1 | 2 => return Err(Error::Scripted(round)),
            3 => tokio::time::sleep(PERIOD + PERIOD / 2).await,
            _ => {}
        }
        Ok(started)
    }

    fn timed_out(&self, period: Duration) -> Error {
        Error::Timeout(period)
    }

    fn skip(&self) -> bool {
        self.skip_next.swap(false, Ordering::SeqCst)
    }

    fn succeeded(&self, started: Instant, scheduled: Instant) {
        self.record(scheduled, started, "ok");
    }

    fn failed(&self, error: &Error, scheduled: Instant, started: Instant) {
        let outcome = match error {
            Error::Scripted(_) => "failed",
            Error::Timeout(_) => "timed out",
        };
        self.record(scheduled, started, outcome);
    }
}

#[tokio::test(start_paused = true)]
async fn rounds_keep_their_schedule_and_are_bounded_by_one_period() {
    let task = Arc::new(Scripted {
        start: Instant::now(),
        rounds: AtomicUsize::new(0),
        skip_next: AtomicBool::new(false),
        budget: Mutex::new(Vec::new()),
        log: Mutex::new(Vec::new()),
    });
    let stop = CancellationToken::new();
    let metrics = Arc::new(Metrics::new("test"));
    let running = tokio::spawn(periodic::run(task.clone(), stop.clone(), metrics.clone()));

    // Rounds are due at 0, 1, …, 7 s; the one due at 5 s is skipped.
    tokio::time::sleep(Duration::from_millis(7_500)).await;
    stop.cancel();
    running
        .await
        .expect("the task stops when its token is cancelled");

    let seconds = Duration::from_secs;
    let round = |due: u64, outcome: &'static str| Round {
        due: seconds(due),
        started: seconds(due),
        outcome,
        budget: "scripted",
    };
    assert_eq!(
        *task.log.lock().expect("log"),
        vec![
            // 600 ms long, yet the next round is due at 1 s, not 1.6 s
            round(0, "ok"),
            round(1, "failed"),
            round(2, "failed"),
            // cut off after one period, with the task's timeout error
            round(3, "timed out"),
            round(4, "ok"),
            round(6, "ok"),
            round(7, "ok"),
        ]
    );

    let text = metrics.encode(jiff::Timestamp::now());
    let count = |series: &str| -> f64 {
        let line = text
            .lines()
            .find(|line| line.contains(&format!("{series}{{controller=\"scripted\"}}")))
            .unwrap_or_else(|| panic!("no {series} of scripted in:\n{text}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(
        count("reconcile_total"),
        7.0,
        "every round that ran is counted"
    );
    assert_eq!(count("reconcile_errors_total"), 3.0, "and every failure");
}
