//! A tokio runtime of its own for each component sharing the demo's process (agent, garden
//! controller): its threads are marked with the component's name, so that every log line of the
//! component (including those of kube-runtime and other shared crates, and of tasks it spawns)
//! names it and can go to the component's own log file.

use std::future::Future;

use crate::Error;

/// Worker threads per component runtime.
const WORKER_THREADS: usize = 2;

/// A component's runtime; shut down in the background when dropped.
#[derive(Debug)]
pub(crate) struct ComponentRuntime {
    name: &'static str,
    handle: tokio::runtime::Handle,
    runtime: Option<tokio::runtime::Runtime>,
}

impl ComponentRuntime {
    /// A runtime whose threads log as `name`.
    ///
    /// # Errors
    /// [`Error::Runtime`] when its threads cannot be started.
    pub(crate) fn new(name: &'static str) -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKER_THREADS)
            .thread_name(format!("seedlet-{name}"))
            .on_thread_start(move || seedlet_runtime::logging::set_thread_component(name))
            .enable_all()
            .build()
            .map_err(|source| Error::Runtime { name, source })?;
        Ok(Self {
            name,
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
        })
    }

    /// Starts `work` on the component's runtime in the background.
    pub(crate) fn spawn<F>(&self, work: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(work)
    }

    /// Runs `work` on the component's runtime and waits for its result.
    ///
    /// # Errors
    /// [`Error::ComponentPanicked`] when `work` panicked.
    pub(crate) async fn run<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let name = self.name;
        self.handle
            .spawn(work)
            .await
            .map_err(|source| Error::ComponentPanicked { name, source })
    }
}

impl Drop for ComponentRuntime {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which is not allowed on an async thread; the components'
        // tasks have ended (or are abandoned on an error path) when this runs.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_runs_on_a_thread_named_after_the_component() {
        let runtime = ComponentRuntime::new("agent").expect("runtime");
        let thread = runtime
            .run(async { std::thread::current().name().map(str::to_owned) })
            .await
            .expect("ran");
        assert_eq!(thread.as_deref(), Some("seedlet-agent"));
    }
}
