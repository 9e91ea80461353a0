//! The `seedlet garden` process: garden client, bootstrapper RBAC, probe/metrics servers, leader
//! election in the garden, the garden-side controllers, graceful shutdown.
//!
//! Controllers plug in through [`GardenControllerSpec`] (add one line to
//! [`crate::controllers::builtin`]); each gets a [`GardenContext`] per leadership term and must
//! return once `ctx.stop` is cancelled.

use std::net::SocketAddr;
use std::sync::Arc;

use seedlet_config::GardenControllerConfiguration;
use seedlet_runtime::clock::{Clock, SystemClock};
use seedlet_runtime::events::Recorder;
use seedlet_runtime::health::HealthManager;
use seedlet_runtime::leader_election;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::process::{
    CONTROLLER_RESTART_DELAY, ClientError, Leadership, client_from_kubeconfig, run_controllers,
    sleep_or_cancel,
};
use seedlet_runtime::server::{ProbeState, Readiness, Servers, Step};
use seedlet_runtime::systemd::{Notifier, State};
use tokio_util::sync::CancellationToken;

use crate::caches::GardenCaches;
use crate::context::{GardenContext, GardenControllerSpec};

/// `source.component` of the garden controller's Events unless a controller names itself.
pub const EVENT_COMPONENT: &str = "seedlet-garden";

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
    /// Building the garden client failed.
    #[error("garden client")]
    Client(#[source] ClientError),
    /// Starting the probe or metrics server failed.
    #[error("starting probe servers")]
    Servers(#[source] seedlet_runtime::server::Error),
    /// The webhook server cannot start.
    #[error("starting the webhook server")]
    Webhooks(#[source] crate::webhooks::ServerError),
    /// The main task panicked.
    #[error("garden controller task ended abnormally")]
    Join(#[source] tokio::task::JoinError),
}

/// Runs the garden controller described by `config` until `shutdown` is cancelled.
///
/// # Errors
/// Client, address and server binding errors; see [`Error`].
pub async fn run_garden(
    config: GardenControllerConfiguration,
    shutdown: CancellationToken,
) -> Result<(), Error> {
    let client = client_from_kubeconfig(config.garden_client_connection.kubeconfig.as_deref())
        .await
        .map_err(Error::Client)?;
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
            // Every write of the garden controller goes through the write budget.
            client: seedlet_runtime::budget::guarded(client),
            controllers: crate::controllers::builtin()
                .into_iter()
                .map(Arc::new)
                .collect(),
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
        let mut metrics = Metrics::builder("garden");
        // The webhooks' series only where the webhooks run.
        let webhooks = self.config.webhooks.as_ref().map(|config| {
            let series = crate::webhooks::metrics::WebhookMetrics::register(metrics.registry());
            (config, series)
        });
        let metrics = Arc::new(metrics.build());
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
        // One set of informers for the whole process (see `crate::caches`): they end with
        // the servers.
        let caches = Arc::new(GardenCaches::new(self.client.clone(), &server_stop));
        let health_address = servers.health_address;
        let metrics_address = servers.metrics_address;
        let webhook_address = match webhooks {
            Some((webhooks, webhook_metrics)) => Some(
                crate::webhooks::start(
                    caches.clone(),
                    webhooks,
                    self.clock.clone(),
                    webhook_metrics,
                    server_stop.clone(),
                )
                .await
                .map_err(|error| {
                    server_stop.cancel();
                    Error::Webhooks(error)
                })?,
            ),
            None => None,
        };
        let task = tokio::spawn(self.run(
            metrics.clone(),
            caches,
            readiness,
            servers,
            server_stop,
            shutdown,
        ));
        Ok(RunningGarden {
            health_address,
            metrics_address,
            webhook_address,
            metrics,
            task,
        })
    }

    async fn run(
        self,
        metrics: Arc<Metrics>,
        caches: Arc<GardenCaches>,
        readiness: Arc<Readiness>,
        servers: Servers,
        server_stop: CancellationToken,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        readiness.set(Step::Bootstrap, true);

        let mut leadership = Leadership::start(self.client.clone(), self.leader_election.clone());
        while let Some(term) = leadership.next_term(&shutdown).await {
            metrics.set_leader(true);
            readiness.set(Step::Caches, true);
            let ctx = Arc::new(GardenContext {
                client: self.client.clone(),
                caches: caches.clone(),
                config: self.config.clone(),
                clock: self.clock.clone(),
                metrics: metrics.clone(),
                events: Recorder::new(self.client.clone(), EVENT_COMPONENT)
                    .with_clock(self.clock.clone()),
                stop: term.stop.clone(),
            });
            if let Some(notifier) = &self.notifier {
                notifier.notify_or_log(&[State::Ready, State::Status("controllers started")]);
            }
            tokio::join!(
                ensure_rbac(self.client.clone(), readiness.clone(), term.stop.clone()),
                run_controllers(&self.controllers, ctx, &term.stop, &metrics),
            );
            drop(term);
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
        leadership.stop().await;
        server_stop.cancel();
        drop(caches);
        servers.join().await;
        tracing::info!("garden controller stopped");
        Ok(())
    }
}

/// Ensures the bootstrapper RBAC (spec §0) and the garden's cluster identity once per leadership
/// term, retrying until both succeed;
/// `/readyz` reports the `seed-registration` step done afterwards.
async fn ensure_rbac(client: kube::Client, readiness: Arc<Readiness>, stop: CancellationToken) {
    loop {
        let ensured = match crate::controllers::csr_approval::ensure_bootstrapper_rbac(&client).await
        {
            Ok(()) => crate::cluster_identity::ensure(&client).await.map(|_| ()).map_err(|error| {
                tracing::error!(error = %seedlet_runtime::error_chain(&error), "ensuring the garden cluster identity failed");
            }),
            Err(error) => {
                tracing::error!(error = %seedlet_runtime::error_chain(&error), "ensuring bootstrapper rbac failed");
                Err(())
            }
        };
        if ensured.is_ok() {
            readiness.set(Step::Registration, true);
            return;
        }
        if sleep_or_cancel(CONTROLLER_RESTART_DELAY, &stop).await {
            return;
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
    /// Bound address of the webhook server, when `webhooks` is configured.
    pub webhook_address: Option<SocketAddr>,
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
