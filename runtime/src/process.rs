//! The process skeleton both daemons share: shutdown on signals, supervised controllers with the
//! restart metric, the leadership loop around leader election, and building a client from a
//! kubeconfig file.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::leader_election::{self, LeaderElector};
use crate::metrics::Metrics;

/// Pause before a controller that returned early is started again.
pub const CONTROLLER_RESTART_DELAY: Duration = Duration::from_secs(5);

/// A token cancelled on SIGTERM or SIGINT (Ctrl-C), for the process entry points. Must be called
/// inside a tokio runtime. The token is cancelled before anything is logged, so a closed stderr
/// can never keep the process from shutting down; a second signal exits at once with status 130,
/// as controller-runtime's signal handler does.
pub fn shutdown_on_signals() -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        cancel.cancel();
        tracing::info!("shutdown signal received, stopping (a second signal exits at once)");
        wait_for_signal().await;
        std::process::exit(130);
    });
    token
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(error) => {
            tracing::warn!(error = %crate::error_chain(&error), "cannot listen for SIGTERM, only Ctrl-C stops the process");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

/// Sleeps for `delay`; returns `true` when `token` was cancelled first.
pub async fn sleep_or_cancel(delay: Duration, token: &CancellationToken) -> bool {
    tokio::select! {
        () = token.cancelled() => true,
        () = tokio::time::sleep(delay) => false,
    }
}

/// A task handle that aborts the task when dropped, so that aborting a process's main task (a
/// simulated kill) takes every helper task down with it.
#[derive(Debug)]
pub struct AbortOnDrop<T>(pub tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    /// Spawns `future` as a task aborted when the handle is dropped.
    pub fn spawn(future: impl Future<Output = T> + Send + 'static) -> Self
    where
        T: Send + 'static,
    {
        Self(tokio::spawn(future))
    }

    /// Waits for the task.
    ///
    /// # Errors
    /// The task panicked or was aborted.
    pub async fn join(mut self) -> Result<T, tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A boxed controller future.
pub type ControllerFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A controller a daemon runs while it leads, started with the daemon's per-term context `C`.
pub struct ControllerSpec<C> {
    /// Name, used in logs and as the `controller` metrics label.
    pub name: &'static str,
    start: Box<dyn Fn(Arc<C>) -> ControllerFuture + Send + Sync>,
}

impl<C> ControllerSpec<C> {
    /// A controller named `name` started by `start` once per leadership term (and again if it
    /// returns before the term ends). The future must return once the term's stop token is
    /// cancelled.
    pub fn new(
        name: &'static str,
        start: impl Fn(Arc<C>) -> ControllerFuture + Send + Sync + 'static,
    ) -> Self {
        Self {
            name,
            start: Box::new(start),
        }
    }

    /// Starts one run of the controller.
    pub fn start(&self, ctx: Arc<C>) -> ControllerFuture {
        (self.start)(ctx)
    }
}

impl<C> std::fmt::Debug for ControllerSpec<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Runs every controller of `specs` with `ctx` until `stop` is cancelled, each supervised: one
/// that returns early is counted in `seedlet_controller_restarts_total` and started again after
/// [`CONTROLLER_RESTART_DELAY`]. Returns once all have stopped.
pub async fn run_controllers<C: Send + Sync + 'static>(
    specs: &[Arc<ControllerSpec<C>>],
    ctx: Arc<C>,
    stop: &CancellationToken,
    metrics: &Arc<Metrics>,
) {
    let mut tasks = JoinSet::new();
    for spec in specs {
        tasks.spawn(supervise(
            spec.clone(),
            ctx.clone(),
            stop.clone(),
            metrics.clone(),
        ));
    }
    while let Some(result) = tasks.join_next().await {
        if let Err(error) = result {
            tracing::warn!(error = %crate::error_chain(&error), "controller task ended abnormally");
        }
    }
}

async fn supervise<C>(
    spec: Arc<ControllerSpec<C>>,
    ctx: Arc<C>,
    stop: CancellationToken,
    metrics: Arc<Metrics>,
) {
    loop {
        tokio::select! {
            () = spec.start(ctx.clone()) => {}
            () = stop.cancelled() => return,
        }
        if stop.is_cancelled() {
            return;
        }
        tracing::error!(
            controller = spec.name,
            "controller stopped unexpectedly, restarting"
        );
        metrics.controller_restarted(spec.name);
        if sleep_or_cancel(CONTROLLER_RESTART_DELAY, &stop).await {
            return;
        }
    }
}

/// Leader election as a sequence of terms: [`Leadership::next_term`] waits until this replica
/// leads and hands out a token cancelled when the term ends (leadership lost or shutdown).
/// Without election settings the replica always leads.
#[derive(Debug)]
pub struct Leadership {
    leading: watch::Receiver<bool>,
    elector_stop: CancellationToken,
    elector: AbortOnDrop<()>,
}

/// One leadership term; dropping it stops watching for the loss of leadership.
#[derive(Debug)]
pub struct Term {
    /// Cancelled when the term ends.
    pub stop: CancellationToken,
    _watcher: AbortOnDrop<()>,
}

impl Leadership {
    /// Starts campaigning for the lock of `settings` with `client` (`None`: always lead).
    pub fn start(client: kube::Client, settings: Option<leader_election::Settings>) -> Self {
        let elector_stop = CancellationToken::new();
        let (tx, leading) = watch::channel(false);
        let elector = match settings {
            Some(settings) => {
                let elector = LeaderElector::new(client, settings);
                AbortOnDrop::spawn(elector.run(elector_stop.clone(), tx))
            }
            None => {
                tx.send_replace(true);
                let stop = elector_stop.clone();
                // Keep the sender alive so the receiver never reports a closed channel.
                AbortOnDrop::spawn(async move {
                    stop.cancelled().await;
                    drop(tx);
                })
            }
        };
        Self {
            leading,
            elector_stop,
            elector,
        }
    }

    /// Waits until this replica leads; `None` when `shutdown` was cancelled first or the elector
    /// is gone. The term's token is a child of `shutdown`.
    pub async fn next_term(&mut self, shutdown: &CancellationToken) -> Option<Term> {
        tokio::select! {
            () = shutdown.cancelled() => return None,
            result = self.leading.wait_for(|leading| *leading) => result.ok()?,
        };
        let stop = shutdown.child_token();
        let term = stop.clone();
        let mut leading = self.leading.clone();
        let watcher = AbortOnDrop::spawn(async move {
            // An error means the elector is gone: end the term as well.
            let _ = leading.wait_for(|leading| !*leading).await;
            term.cancel();
        });
        Some(Term {
            stop,
            _watcher: watcher,
        })
    }

    /// Stops campaigning, releasing the lock when held; call after the last term's controllers
    /// have stopped.
    pub async fn stop(self) {
        self.elector_stop.cancel();
        if let Err(error) = self.elector.join().await {
            tracing::warn!(error = %crate::error_chain(&error), "leader election task ended abnormally");
        }
    }
}

/// Errors building a client from a kubeconfig.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Reading the kubeconfig file failed.
    #[error("reading kubeconfig {path}")]
    ReadKubeconfig {
        /// File path.
        path: String,
        /// Cause.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Building the client configuration failed.
    #[error("building client configuration")]
    Config(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Building the client failed.
    #[error("building client")]
    Build(#[source] kube::Error),
}

/// Builds a client from the kubeconfig at `path`, or from `KUBECONFIG`/in-cluster configuration
/// without one.
///
/// # Errors
/// See [`ClientError`].
pub async fn client_from_kubeconfig(path: Option<&Path>) -> Result<kube::Client, ClientError> {
    crate::client::build(client_config(path).await?).map_err(ClientError::Build)
}

/// The client configuration from the kubeconfig at `path`, or from `KUBECONFIG`/in-cluster
/// configuration without one (its `cluster_url` says which server a client will talk to).
///
/// # Errors
/// [`ClientError::ReadKubeconfig`], [`ClientError::Config`].
pub async fn client_config(path: Option<&Path>) -> Result<kube::Config, ClientError> {
    Ok(match path {
        Some(path) => {
            let kubeconfig =
                Kubeconfig::read_from(path).map_err(|source| ClientError::ReadKubeconfig {
                    path: path.display().to_string(),
                    source,
                })?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| ClientError::Config(Box::new(e)))?
        }
        None => kube::Config::infer()
            .await
            .map_err(|e| ClientError::Config(Box::new(e)))?,
    })
}
