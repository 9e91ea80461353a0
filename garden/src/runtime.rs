//! The `seedlet garden` process: garden client, bootstrapper RBAC, probe/metrics servers, leader
//! election in the garden, the garden-side controllers, graceful shutdown.
//!
//! Controllers plug in through [`GardenControllerSpec`] (add one line to [`builtin_controllers`]);
//! each gets a [`GardenContext`] per leadership term and must return once `ctx.stop` is cancelled.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use seedlet_agent::clock::{Clock, SystemClock};
use seedlet_agent::health::HealthManager;
use seedlet_agent::leader_election::{self, LeaderElector};
use seedlet_agent::metrics::Metrics;
use seedlet_agent::server::{ProbeState, Readiness, Servers, Step};
use seedlet_config::GardenControllerConfiguration;
use seedlet_systemd::{Notifier, State};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::{
    controllerregistration, csr_approval, extensions_check, finalizers, seed_lifecycle,
    shootstate_finalizer,
};

/// Pause before a controller that returned early is started again.
pub const CONTROLLER_RESTART_DELAY: Duration = Duration::from_secs(5);

/// Errors of the garden controller process.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A server address in the configuration is invalid.
    #[error("invalid address in {field}")]
    InvalidAddress {
        /// Field path.
        field: &'static str,
        /// Cause.
        #[source]
        source: std::net::AddrParseError,
    },
    /// Reading the garden kubeconfig failed.
    #[error("reading garden kubeconfig {path}")]
    ReadKubeconfig {
        /// File path.
        path: String,
        /// Cause.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Building the garden client configuration failed.
    #[error("building garden client configuration")]
    ClientConfig(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Building the garden client failed.
    #[error("building garden client")]
    Client(#[source] kube::Error),
    /// Starting the probe or metrics server failed.
    #[error("starting probe servers")]
    Servers(#[source] seedlet_agent::server::Error),
    /// The main task panicked.
    #[error("garden controller task ended abnormally")]
    Join(#[source] tokio::task::JoinError),
}

/// Dependencies of the garden-side controllers, valid for one leadership term.
pub struct GardenContext {
    /// Garden client.
    pub client: kube::Client,
    /// The whole configuration.
    pub config: Arc<GardenControllerConfiguration>,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
    /// Cancelled when this leadership term ends.
    pub stop: tokio_util::sync::CancellationToken,
}

/// A boxed controller future.
pub type ControllerFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A garden-side controller run while this replica leads.
pub struct GardenControllerSpec {
    /// Name for logs.
    pub name: &'static str,
    start: Box<dyn Fn(Arc<GardenContext>) -> ControllerFuture + Send + Sync>,
}

impl GardenControllerSpec {
    /// A controller named `name`, started by `start` once per leadership term.
    pub fn new(
        name: &'static str,
        start: impl Fn(Arc<GardenContext>) -> ControllerFuture + Send + Sync + 'static,
    ) -> Self {
        Self {
            name,
            start: Box::new(start),
        }
    }
}

impl std::fmt::Debug for GardenControllerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GardenControllerSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Every built-in garden-side controller.
pub fn builtin_controllers() -> Vec<GardenControllerSpec> {
    vec![
        GardenControllerSpec::new(controllerregistration::NAME, |ctx| {
            Box::pin(controllerregistration::start(ctx))
        }),
        GardenControllerSpec::new(finalizers::NAME, |ctx| Box::pin(finalizers::start(ctx))),
        GardenControllerSpec::new(shootstate_finalizer::NAME, |ctx| {
            Box::pin(shootstate_finalizer::start(ctx))
        }),
        GardenControllerSpec::new(extensions_check::NAME, |ctx| {
            Box::pin(extensions_check::start(ctx))
        }),
        GardenControllerSpec::new(csr_approval::NAME, |ctx| {
            let csr = Arc::new(csr_approval::Ctx {
                client: ctx.client.clone(),
                concurrent_syncs: u16::try_from(
                    ctx.config
                        .controllers
                        .certificate_signing_request
                        .concurrent_syncs
                        .max(1),
                )
                .unwrap_or(csr_approval::DEFAULT_CONCURRENT_SYNCS),
            });
            Box::pin(csr_approval::run(csr))
        }),
        GardenControllerSpec::new(seed_lifecycle::NAME, |ctx| {
            Box::pin(async move {
                let lifecycle = Arc::new(seed_lifecycle::Ctx {
                    client: ctx.client.clone(),
                    settings: seed_lifecycle::Settings::from_config(&ctx.config),
                    clock: ctx.clock.clone(),
                    metrics: ctx.metrics.clone(),
                });
                seed_lifecycle::run(lifecycle, ctx.stop.clone()).await;
            })
        }),
    ]
}

/// Runs the garden controller described by `config` until `shutdown` is cancelled.
///
/// # Errors
/// Client, address and server binding errors; see [`Error`].
pub async fn run_garden(
    config: GardenControllerConfiguration,
    shutdown: CancellationToken,
) -> Result<(), Error> {
    let client = garden_client(&config).await?;
    let mut garden = Garden::new(config, client)?;
    if let Some(notifier) = Notifier::from_env() {
        garden = garden.with_service_manager(notifier);
    }
    garden.start(shutdown).await?.wait().await
}

/// A configurable garden controller process; [`run_garden`] uses the defaults.
pub struct Garden {
    config: Arc<GardenControllerConfiguration>,
    client: kube::Client,
    controllers: Vec<Arc<GardenControllerSpec>>,
    clock: Arc<dyn Clock>,
    leader_election: Option<leader_election::Settings>,
    health_address: SocketAddr,
    metrics_address: SocketAddr,
    notifier: Option<Notifier>,
}

impl Garden {
    /// A garden controller for `config` using `client`, with the built-in controllers.
    ///
    /// # Errors
    /// [`Error::InvalidAddress`].
    pub fn new(config: GardenControllerConfiguration, client: kube::Client) -> Result<Self, Error> {
        let leader_election = leader_election::Settings::from_config(&config.leader_election);
        let (health_address, metrics_address) = config
            .server
            .addresses()
            .map_err(|(field, source)| Error::InvalidAddress { field, source })?;
        Ok(Self {
            config: Arc::new(config),
            client,
            controllers: builtin_controllers().into_iter().map(Arc::new).collect(),
            clock: Arc::new(SystemClock),
            leader_election,
            health_address,
            metrics_address,
            notifier: None,
        })
    }

    /// Tells the service manager through `notifier` when the controllers have started
    /// (`READY=1`) and when the process stops (`STOPPING=1`).
    #[must_use]
    pub fn with_service_manager(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// Overrides the probe and metrics addresses (tests bind `127.0.0.1:0`).
    #[must_use]
    pub fn with_addresses(mut self, health: SocketAddr, metrics: SocketAddr) -> Self {
        self.health_address = health;
        self.metrics_address = metrics;
        self
    }

    /// Overrides the leader election settings (`None` = always lead).
    #[must_use]
    pub fn with_leader_election(mut self, settings: Option<leader_election::Settings>) -> Self {
        self.leader_election = settings;
        self
    }

    /// Uses `clock` instead of the system clock.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Binds the servers and starts the controllers in the background.
    ///
    /// # Errors
    /// [`Error::Servers`].
    pub async fn start(self, shutdown: CancellationToken) -> Result<RunningGarden, Error> {
        let metrics = Arc::new(Metrics::new("garden"));
        // The garden controller has no heartbeat; its health manager is never started and so
        // stays healthy.
        let health = HealthManager::new(jiff::SignedDuration::from_secs(60), self.clock.clone());
        let readiness = Arc::new(Readiness::default());
        let server_stop = CancellationToken::new();
        let servers = Servers::start(
            self.health_address,
            self.metrics_address,
            ProbeState {
                health,
                readiness: readiness.clone(),
                metrics: metrics.clone(),
                clock: self.clock.clone(),
            },
            server_stop.clone(),
        )
        .await
        .map_err(Error::Servers)?;
        let health_address = servers.health_address;
        let metrics_address = servers.metrics_address;
        let task =
            tokio::spawn(self.run(metrics.clone(), readiness, servers, server_stop, shutdown));
        Ok(RunningGarden {
            health_address,
            metrics_address,
            metrics,
            task,
        })
    }

    async fn run(
        self,
        metrics: Arc<Metrics>,
        readiness: Arc<Readiness>,
        servers: Servers,
        server_stop: CancellationToken,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        readiness.set(Step::Bootstrap, true);

        let elector_stop = CancellationToken::new();
        let (leading_tx, mut leading) = watch::channel(false);
        let elector = match &self.leader_election {
            Some(settings) => {
                let elector = LeaderElector::new(self.client.clone(), settings.clone());
                tokio::spawn(elector.run(elector_stop.clone(), leading_tx))
            }
            None => {
                leading_tx.send_replace(true);
                let stop = elector_stop.clone();
                tokio::spawn(async move {
                    stop.cancelled().await;
                    drop(leading_tx);
                })
            }
        };
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                result = leading.wait_for(|l| *l) => if result.is_err() { break },
            }
            metrics.set_leader(true);
            readiness.set(Step::Caches, true);
            let term = shutdown.child_token();
            let ctx = Arc::new(GardenContext {
                client: self.client.clone(),
                config: self.config.clone(),
                clock: self.clock.clone(),
                metrics: metrics.clone(),
                stop: term.clone(),
            });
            let mut tasks = JoinSet::new();
            tasks.spawn(ensure_rbac(
                self.client.clone(),
                readiness.clone(),
                term.clone(),
            ));
            for spec in &self.controllers {
                tasks.spawn(supervise(spec.clone(), ctx.clone()));
            }
            if let Some(notifier) = &self.notifier {
                notifier.notify_or_log(&[State::Ready, State::Status("controllers started")]);
            }
            tokio::select! {
                () = term.cancelled() => {}
                _ = leading.wait_for(|l| !*l) => term.cancel(),
            }
            while tasks.join_next().await.is_some() {}
            metrics.set_leader(false);
            readiness.set(Step::Caches, false);
            readiness.set(Step::Registration, false);
            if shutdown.is_cancelled() {
                break;
            }
        }
        if let Some(notifier) = &self.notifier {
            notifier.notify_or_log(&[State::Stopping, State::Status("stopping")]);
        }
        elector_stop.cancel();
        if let Err(error) = elector.await {
            tracing::warn!(error = %error, "leader election task ended abnormally");
        }
        server_stop.cancel();
        servers.join().await;
        tracing::info!("garden controller stopped");
        Ok(())
    }
}

/// Ensures the bootstrapper RBAC (spec §0) once per leadership term, retrying until it succeeds;
/// `/readyz` reports the `seed-registration` step done afterwards.
async fn ensure_rbac(client: kube::Client, readiness: Arc<Readiness>, stop: CancellationToken) {
    loop {
        match crate::csr_approval::ensure_bootstrapper_rbac(&client).await {
            Ok(()) => {
                readiness.set(Step::Registration, true);
                return;
            }
            Err(error) => {
                tracing::error!(error = %seedlet_agent::leader_election::error_chain(&error), "ensuring bootstrapper rbac failed");
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(CONTROLLER_RESTART_DELAY) => {}
        }
    }
}

async fn supervise(spec: Arc<GardenControllerSpec>, ctx: Arc<GardenContext>) {
    loop {
        tokio::select! {
            () = (spec.start)(ctx.clone()) => {}
            () = ctx.stop.cancelled() => return,
        }
        if ctx.stop.is_cancelled() {
            return;
        }
        tracing::error!(
            controller = spec.name,
            "controller stopped unexpectedly, restarting"
        );
        tokio::select! {
            () = ctx.stop.cancelled() => return,
            () = tokio::time::sleep(CONTROLLER_RESTART_DELAY) => {}
        }
    }
}

/// A started garden controller.
#[derive(Debug)]
pub struct RunningGarden {
    /// Bound address of `/healthz` and `/readyz`.
    pub health_address: SocketAddr,
    /// Bound address of `/metrics`.
    pub metrics_address: SocketAddr,
    /// The process metrics.
    pub metrics: Arc<Metrics>,
    task: tokio::task::JoinHandle<Result<(), Error>>,
}

impl RunningGarden {
    /// Waits until the process has stopped (after the shutdown token was cancelled).
    ///
    /// # Errors
    /// [`Error::Join`] when the main task panicked.
    pub async fn wait(self) -> Result<(), Error> {
        self.task.await.map_err(Error::Join)?
    }
}

/// Builds the garden client from `gardenClientConnection.kubeconfig`, or `KUBECONFIG`/in-cluster.
async fn garden_client(config: &GardenControllerConfiguration) -> Result<kube::Client, Error> {
    let client_config = match &config.garden_client_connection.kubeconfig {
        Some(path) => {
            let kubeconfig =
                Kubeconfig::read_from(path).map_err(|source| Error::ReadKubeconfig {
                    path: path.display().to_string(),
                    source,
                })?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| Error::ClientConfig(Box::new(e)))?
        }
        None => kube::Config::infer()
            .await
            .map_err(|e| Error::ClientConfig(Box::new(e)))?,
    };
    kube::Client::try_from(client_config).map_err(Error::Client)
}
