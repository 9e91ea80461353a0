//! Running a [`Flow`]: start every task whose prerequisites finished, report progress after each
//! completion, stop starting tasks after the first failure or on cancellation.

use std::fmt;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::graph::{Flow, Retry, TaskFn};

/// Progress of a running flow, handed to [`RunOptions::on_progress`] after every task that
/// finished (succeeded; skipped tasks are not reported).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// `100 × succeeded / runnable` (integer division; 100 for a flow with nothing to run).
    pub percent: i32,
    /// Names of the tasks running now, in insertion order.
    pub running: Vec<String>,
    /// The task that just succeeded.
    pub completed: String,
}

/// How to run a flow.
pub struct RunOptions<'a> {
    /// Cancelled: no task starts any more and the running ones are dropped.
    pub cancel: CancellationToken,
    /// Called after each successful task.
    pub on_progress: Box<dyn FnMut(&Progress) + Send + 'a>,
}

impl fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        RunOptions {
            cancel: CancellationToken::new(),
            on_progress: Box::new(|_| {}),
        }
    }
}

/// Why one task failed.
#[derive(Debug)]
pub enum TaskFailure<E> {
    /// The task returned this error (its last attempt's, when retried).
    Failed(E),
    /// A retried task's attempt was still running when its retry timeout passed.
    TimedOut(Duration),
}

impl<E: fmt::Display> fmt::Display for TaskFailure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskFailure::Failed(error) => error.fmt(f),
            TaskFailure::TimedOut(after) => {
                write!(f, "retry timeout exceeded after {}s", after.as_secs())
            }
        }
    }
}

/// The outcome of a flow that did not finish.
#[derive(Debug)]
pub struct FlowError<E> {
    /// The flow's name.
    pub flow: String,
    /// Failed tasks in the order they failed: name and failure.
    pub failures: Vec<(String, TaskFailure<E>)>,
    /// Whether the run was cancelled.
    pub cancelled: bool,
}

impl<E> FlowError<E> {
    /// The first failing task's name and failure.
    pub fn first(&self) -> Option<&(String, TaskFailure<E>)> {
        self.failures.first()
    }
}

impl<E: fmt::Display> fmt::Display for FlowError<E> {
    /// `flow "<name>" encountered task errors: [task "<t>" failed: <err>, ...]`, Gardener's wording.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.failures.is_empty() && self.cancelled {
            return write!(f, "flow {:?} was canceled", self.flow);
        }
        write!(f, "flow {:?} encountered task errors: [", self.flow)?;
        for (index, (task, failure)) in self.failures.iter().enumerate() {
            if index > 0 {
                write!(f, " ")?;
            }
            write!(f, "task {task:?} failed: {failure}")?;
        }
        write!(f, "]")
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for FlowError<E> {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Running,
    Done,
    Failed,
}

/// Runs `flow` to its end, or to the wave of its first failure, or to cancellation.
///
/// # Errors
/// A [`FlowError`] listing the failed tasks (or only `cancelled`).
pub async fn run<E: Send + 'static>(
    flow: Flow<E>,
    mut options: RunOptions<'_>,
) -> Result<(), FlowError<E>> {
    let Flow { name, tasks } = flow;
    let runnable = tasks.iter().filter(|task| !task.skip).count();
    let mut states = vec![State::Pending; tasks.len()];
    let mut succeeded = 0usize;
    let mut failures = Vec::new();
    let mut running = FuturesUnordered::new();
    let mut completed: Option<usize> = None;
    loop {
        if failures.is_empty() && !options.cancel.is_cancelled() {
            start_ready(&tasks, &mut states, &mut running);
        }
        // Reported after the tasks it unblocked started, so `running` names them.
        if let Some(index) = completed.take() {
            let progress = Progress {
                percent: percent(succeeded, runnable),
                running: running_names(&tasks, &states),
                completed: tasks[index].name.clone(),
            };
            (options.on_progress)(&progress);
        }
        if running.is_empty() {
            break;
        }
        let finished = tokio::select! {
            () = options.cancel.cancelled() => {
                return Err(FlowError { flow: name, failures, cancelled: true });
            }
            Some(finished) = running.next() => finished,
        };
        let (index, outcome): (usize, Result<(), TaskFailure<E>>) = finished;
        match outcome {
            Ok(()) => {
                states[index] = State::Done;
                succeeded += 1;
                completed = Some(index);
            }
            Err(failure) => {
                states[index] = State::Failed;
                failures.push((tasks[index].name.clone(), failure));
            }
        }
    }
    let cancelled = options.cancel.is_cancelled() && states.contains(&State::Pending);
    if failures.is_empty() && !cancelled {
        Ok(())
    } else {
        Err(FlowError {
            flow: name,
            failures,
            cancelled,
        })
    }
}

type Running<E> =
    FuturesUnordered<futures::future::BoxFuture<'static, (usize, Result<(), TaskFailure<E>>)>>;

/// Marks ready skipped tasks done (repeatedly, as they unblock others) and starts ready ones.
fn start_ready<E: Send + 'static>(
    tasks: &[super::graph::Task<E>],
    states: &mut [State],
    running: &mut Running<E>,
) {
    loop {
        let mut changed = false;
        for (index, task) in tasks.iter().enumerate() {
            if states[index] != State::Pending
                || !task.dependencies.iter().all(|d| states[d.0] == State::Done)
            {
                continue;
            }
            if task.skip {
                states[index] = State::Done;
                changed = true;
                continue;
            }
            states[index] = State::Running;
            let attempt = attempts(&task.run, task.retry);
            running.push(Box::pin(async move { (index, attempt.await) }));
        }
        if !changed {
            return;
        }
    }
}

/// The task's attempts: one, or retries until the timeout (an attempt still running at the
/// timeout is dropped).
fn attempts<E: Send + 'static>(
    run: &TaskFn<E>,
    retry: Option<Retry>,
) -> futures::future::BoxFuture<'static, Result<(), TaskFailure<E>>> {
    let Some(retry) = retry else {
        let attempt = run();
        return Box::pin(async move { attempt.await.map_err(TaskFailure::Failed) });
    };
    let run = run.clone();
    Box::pin(async move {
        let deadline = Instant::now() + retry.timeout;
        loop {
            match tokio::time::timeout_at(deadline, run()).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(error)) => {
                    if Instant::now() + retry.interval >= deadline {
                        return Err(TaskFailure::Failed(error));
                    }
                }
                Err(_) => return Err(TaskFailure::TimedOut(retry.timeout)),
            }
            tokio::time::sleep(retry.interval).await;
        }
    })
}

fn percent(succeeded: usize, runnable: usize) -> i32 {
    if runnable == 0 {
        return 100;
    }
    i32::try_from(succeeded * 100 / runnable).unwrap_or(100)
}

fn running_names<E>(tasks: &[super::graph::Task<E>], states: &[State]) -> Vec<String> {
    tasks
        .iter()
        .zip(states)
        .filter(|(_, state)| **state == State::Running)
        .map(|(task, _)| task.name.clone())
        .collect()
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
