//! Tests of the flow runner. They use real time with millisecond delays (the workspace's tokio
//! has no `test-util`, so time cannot be paused); every bound is generous against slow machines.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;

use super::*;
use crate::flow::{Flow, Retry, Task, TaskId};

type Log = Arc<Mutex<Vec<String>>>;

fn recording(log: &Log, name: &str) -> Task<String> {
    let log = log.clone();
    let owned = name.to_owned();
    Task::new(name, move || {
        let log = log.clone();
        let name = owned.clone();
        async move {
            log.lock().unwrap().push(name);
            Ok(())
        }
        .boxed()
    })
}

fn failing(name: &str, message: &str) -> Task<String> {
    let message = message.to_owned();
    Task::new(name, move || {
        let message = message.clone();
        async move { Err(message) }.boxed()
    })
}

#[tokio::test]
async fn tasks_run_after_their_dependencies_and_progress_counts_runnable_tasks() {
    let log = Log::default();
    let mut flow = Flow::new("demo");
    let a = flow.add(recording(&log, "a"));
    let b = flow.add(recording(&log, "b").after(&[a]));
    let skipped = flow.add(recording(&log, "skipped").after(&[a]).skip_if(true));
    flow.add(recording(&log, "c").after(&[b, skipped]));
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = reports.clone();
    let options = RunOptions {
        on_progress: Box::new(move |progress| sink.lock().unwrap().push(progress.clone())),
        ..RunOptions::default()
    };
    run(flow, options).await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["a", "b", "c"]);
    let reports = reports.lock().unwrap();
    let percents: Vec<i32> = reports.iter().map(|p| p.percent).collect();
    assert_eq!(percents, [33, 66, 100]);
    assert_eq!(reports[0].completed, "a");
    assert_eq!(
        reports[0].running,
        ["b"],
        "the tasks the completion unblocked"
    );
}

#[tokio::test]
async fn a_failure_stops_dependents_and_names_the_task() {
    let log = Log::default();
    let mut flow = Flow::new("Shoot cluster reconciliation");
    let a = flow.add(failing("Deploying infra", "boom"));
    flow.add(recording(&log, "after").after(&[a]));
    let error = run(flow, RunOptions::default()).await.unwrap_err();
    assert!(log.lock().unwrap().is_empty());
    assert_eq!(error.first().unwrap().0, "Deploying infra");
    assert_eq!(
        error.to_string(),
        "flow \"Shoot cluster reconciliation\" encountered task errors: [task \"Deploying infra\" failed: boom]"
    );
    assert!(!error.cancelled);
}

#[tokio::test]
async fn independent_tasks_of_the_failing_wave_finish_but_nothing_new_starts() {
    let log = Log::default();
    let mut flow = Flow::new("f");
    let slow_log = log.clone();
    let slow = flow.add(Task::new("slow", move || {
        let log = slow_log.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            log.lock().unwrap().push("slow".into());
            Ok(())
        }
        .boxed()
    }));
    flow.add(failing("fast", "no"));
    flow.add(recording(&log, "later").after(&[slow]));
    let error = run(flow, RunOptions::default()).await.unwrap_err();
    assert_eq!(*log.lock().unwrap(), ["slow"]);
    assert_eq!(error.failures.len(), 1);
}

#[tokio::test]
async fn retried_tasks_succeed_once_an_attempt_succeeds() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = attempts.clone();
    let mut flow = Flow::new("f");
    flow.add(
        Task::new("flaky", move || {
            let counter = counter.clone();
            async move {
                if counter.fetch_add(1, Ordering::SeqCst) < 2 {
                    Err("not yet".to_owned())
                } else {
                    Ok(())
                }
            }
            .boxed()
        })
        .retry(Retry::new(Duration::from_millis(5), Duration::from_secs(5))),
    );
    run(flow, RunOptions::default()).await.unwrap();
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn retried_tasks_give_up_with_the_last_error_at_the_timeout() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = attempts.clone();
    let mut flow = Flow::new("f");
    flow.add(
        Task::new("hopeless", move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move { Err(format!("attempt {n}")) }.boxed()
        })
        .retry(Retry::new(
            Duration::from_millis(10),
            Duration::from_millis(60),
        )),
    );
    let error = run(flow, RunOptions::default()).await.unwrap_err();
    let made = attempts.load(Ordering::SeqCst);
    assert!((2..=7).contains(&made), "{made} attempts");
    let (_, failure) = error.first().unwrap();
    assert_eq!(failure.to_string(), format!("attempt {}", made - 1));
}

#[tokio::test]
async fn a_retried_attempt_hanging_past_the_timeout_times_out() {
    let mut flow = Flow::new("f");
    flow.add(
        Task::new("hangs", || {
            async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok::<(), String>(())
            }
            .boxed()
        })
        .retry(Retry::new(
            Duration::from_millis(5),
            Duration::from_millis(30),
        )),
    );
    let error = run(flow, RunOptions::default()).await.unwrap_err();
    assert!(matches!(error.first().unwrap().1, TaskFailure::TimedOut(_)));
}

#[tokio::test]
async fn cancellation_stops_the_run() {
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut flow = Flow::new("f");
    let trigger = cancel.clone();
    let first = flow.add(Task::new("cancels", move || {
        let trigger = trigger.clone();
        async move {
            trigger.cancel();
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok::<(), String>(())
        }
        .boxed()
    }));
    let log = Log::default();
    flow.add(recording(&log, "never").after(&[first]));
    let options = RunOptions {
        cancel,
        ..RunOptions::default()
    };
    let error = tokio::time::timeout(Duration::from_secs(5), run(flow, options))
        .await
        .expect("cancellation ends the run")
        .unwrap_err();
    assert!(error.cancelled);
    assert!(log.lock().unwrap().is_empty());
    assert_eq!(error.to_string(), "flow \"f\" was canceled");
}

#[test]
fn dependencies_on_unknown_tasks_are_dropped_and_an_empty_flow_is_complete() {
    let mut flow: Flow<String> = Flow::new("f");
    let id = flow.add(Task::new("a", || async { Ok(()) }.boxed()).after(&[TaskId(7)]));
    assert_eq!(id, TaskId(0));
    assert!(flow.tasks[0].dependencies.is_empty());
    assert_eq!(percent(0, 0), 100);
    assert_eq!(percent(1, 3), 33);
}
