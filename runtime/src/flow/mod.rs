//! A small task-graph runner for long operations (a Gardener "flow"): tasks with IDs,
//! dependencies and skip conditions run as soon as their prerequisites finished, each optionally
//! retried until a deadline; the run reports progress in percent of finished tasks and ends with
//! the errors of the tasks that failed. Nothing here knows Gardener types.
//!
//! Once a task fails no further task starts; tasks already running finish, so the reported
//! errors are those of one "wave". Cancellation stops starting tasks and drops running ones.

mod graph;
mod run;

pub use graph::{Flow, Retry, Task, TaskId};
pub use run::{FlowError, Progress, RunOptions, TaskFailure, run};
