//! Building a flow: tasks are added in an order where every dependency already exists, so a
//! flow is acyclic by construction.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

/// Index of a task in its [`Flow`], returned by [`Flow::add`] and used to name dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub(crate) usize);

/// Retry-until-timeout: a failing task is run again every `interval` until `timeout` has passed
/// since its first attempt; the last error is the task's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Pause between attempts.
    pub interval: Duration,
    /// Time after which no new attempt starts.
    pub timeout: Duration,
}

impl Retry {
    /// Every `interval` for at most `timeout`.
    pub const fn new(interval: Duration, timeout: Duration) -> Retry {
        Retry { interval, timeout }
    }
}

/// The body of a task: a fresh future per attempt.
pub type TaskFn<E> = Arc<dyn Fn() -> BoxFuture<'static, Result<(), E>> + Send + Sync>;

/// One node of the graph.
pub struct Task<E> {
    /// Name, unique within the flow (Gardener uses it as the `taskID` of errors).
    pub name: String,
    /// Tasks that must have finished (succeeded or been skipped) first.
    pub dependencies: Vec<TaskId>,
    /// Skipped tasks count as finished at once and are left out of the progress total.
    pub skip: bool,
    /// Retrying, if any.
    pub retry: Option<Retry>,
    /// What the task does.
    pub run: TaskFn<E>,
}

impl<E> Task<E> {
    /// A task named `name` running `run`, without dependencies, retries or skip.
    pub fn new<F>(name: impl Into<String>, run: F) -> Task<E>
    where
        F: Fn() -> BoxFuture<'static, Result<(), E>> + Send + Sync + 'static,
    {
        Task {
            name: name.into(),
            dependencies: Vec::new(),
            skip: false,
            retry: None,
            run: Arc::new(run),
        }
    }

    /// Adds prerequisites.
    #[must_use]
    pub fn after(mut self, dependencies: &[TaskId]) -> Task<E> {
        self.dependencies.extend_from_slice(dependencies);
        self
    }

    /// Skips the task when `skip` is true.
    #[must_use]
    pub fn skip_if(mut self, skip: bool) -> Task<E> {
        self.skip = self.skip || skip;
        self
    }

    /// Retries the task until the timeout.
    #[must_use]
    pub fn retry(mut self, retry: Retry) -> Task<E> {
        self.retry = Some(retry);
        self
    }
}

impl<E> fmt::Debug for Task<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Task")
            .field("name", &self.name)
            .field("dependencies", &self.dependencies)
            .field("skip", &self.skip)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// A named task graph.
pub struct Flow<E> {
    /// Name used in progress descriptions and errors (`Shoot cluster reconciliation`).
    pub name: String,
    pub(crate) tasks: Vec<Task<E>>,
}

impl<E> Flow<E> {
    /// An empty flow.
    pub fn new(name: impl Into<String>) -> Flow<E> {
        Flow {
            name: name.into(),
            tasks: Vec::new(),
        }
    }

    /// Adds `task`; dependencies on IDs this flow did not hand out are dropped (they cannot
    /// exist yet, which is what keeps the graph acyclic).
    pub fn add(&mut self, mut task: Task<E>) -> TaskId {
        let id = TaskId(self.tasks.len());
        task.dependencies.retain(|dependency| dependency.0 < id.0);
        task.dependencies.sort_unstable();
        task.dependencies.dedup();
        self.tasks.push(task);
        id
    }

    /// The task names in insertion order.
    pub fn task_names(&self) -> impl Iterator<Item = &str> {
        self.tasks.iter().map(|task| task.name.as_str())
    }

    /// Number of tasks that will run (not skipped).
    pub fn runnable(&self) -> usize {
        self.tasks.iter().filter(|task| !task.skip).count()
    }
}

impl<E> fmt::Debug for Flow<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flow")
            .field("name", &self.name)
            .field("tasks", &self.tasks)
            .finish()
    }
}
