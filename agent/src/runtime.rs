//! The `seedlet agent` process: seed client, probe/metrics servers, leader election, garden
//! identity, Seed registration, heartbeat and controllers, graceful shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use seedlet_bootstrap::{
    BootstrapOptions, BootstrapSource, GardenClient, GardenIdentity, JitterRange, SecretRef,
};
use seedlet_config::GardenletConfiguration;
use seedlet_systemd::{Notifier, State, Watchdog};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::clock::{Clock, SystemClock};
use crate::health::HealthManager;
use crate::leader_election::{self, LeaderElector, error_chain};
use crate::metrics::Metrics;
use crate::registration::{self, SeedRegistration};
use crate::server::{ProbeState, Readiness, Servers, Step};
use crate::{AgentContext, ControllerSpec, FIELD_MANAGER, controllers, heartbeat};

/// Pause before a controller that returned early is started again.
pub const CONTROLLER_RESTART_DELAY: Duration = Duration::from_secs(5);
/// Pause between failed attempts to obtain the garden client or register the Seed.
pub const STARTUP_RETRY_DELAY: Duration = Duration::from_secs(5);

/// Errors of the agent process.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration lacks `seedConfig.metadata.name`.
    #[error("seedConfig.metadata.name is required")]
    MissingSeedName,
    /// A server address in the configuration is invalid.
    #[error("invalid address in {field}")]
    InvalidAddress {
        /// Field path.
        field: &'static str,
        /// Cause.
        #[source]
        source: std::net::AddrParseError,
    },
    /// `seedConfig.spec` could not be encoded.
    #[error("encoding seedConfig.spec")]
    EncodeSeedSpec(#[source] serde_json::Error),
    /// Reading the seed kubeconfig failed.
    #[error("reading seed kubeconfig {path}")]
    ReadSeedKubeconfig {
        /// File path.
        path: String,
        /// Cause.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Building the seed client configuration failed.
    #[error("building seed client configuration")]
    SeedClientConfig(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Building the seed client failed.
    #[error("building seed client")]
    SeedClient(#[source] kube::Error),
    /// Starting the probe or metrics server failed.
    #[error("starting probe servers")]
    Servers(#[source] crate::server::Error),
    /// The agent task panicked or was cancelled.
    #[error("agent task ended abnormally")]
    Join(#[source] tokio::task::JoinError),
}

/// Everything the runtime needs, derived from [`GardenletConfiguration`] by
/// [`AgentSettings::from_config`]; tests may adjust fields (e.g. a sub-second heartbeat).
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// The Seed to register.
    pub registration: SeedRegistration,
    /// Seed kubeconfig file; `None` means `KUBECONFIG` / in-cluster configuration.
    pub seed_kubeconfig: Option<PathBuf>,
    /// Where the garden credential comes from.
    pub bootstrap: BootstrapOptions,
    /// Leader election lock; `None` runs without election (always leading).
    pub leader_election: Option<leader_election::Settings>,
    /// Heartbeat timing.
    pub heartbeat: heartbeat::Settings,
    /// `/healthz` and `/readyz` address.
    pub health_address: SocketAddr,
    /// `/metrics` address.
    pub metrics_address: SocketAddr,
}

impl AgentSettings {
    /// Derives the runtime settings from the (defaulted, validated) configuration. Environment
    /// overrides of spec §1.1 apply: `GARDEN_KUBECONFIG` replaces
    /// `gardenClientConnection.kubeconfig`, `KUBECONFIG` replaces `seedClientConnection.kubeconfig`.
    ///
    /// # Errors
    /// [`Error::MissingSeedName`], [`Error::InvalidAddress`], [`Error::EncodeSeedSpec`].
    pub fn from_config(config: &GardenletConfiguration) -> Result<Self, Error> {
        let template = config.seed_config.as_ref().ok_or(Error::MissingSeedName)?;
        let name = template
            .metadata
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .ok_or(Error::MissingSeedName)?;
        let registration = SeedRegistration {
            name: name.clone(),
            labels: template.metadata.labels.clone().unwrap_or_default(),
            annotations: template.metadata.annotations.clone().unwrap_or_default(),
            spec: template.spec.clone(),
        };

        let garden = &config.garden_client_connection;
        let mut bootstrap = BootstrapOptions::new(name);
        bootstrap.kubeconfig_secret = garden
            .kubeconfig_secret
            .as_ref()
            .map(|s| SecretRef::new(&s.namespace, &s.name));
        bootstrap.bootstrap = match (
            &garden.bootstrap_kubeconfig,
            &garden.bootstrap_kubeconfig_file,
        ) {
            (Some(secret), _) => Some(BootstrapSource::Secret(SecretRef::new(
                &secret.namespace,
                &secret.name,
            ))),
            (None, Some(file)) => Some(BootstrapSource::File(file.clone())),
            (None, None) => None,
        };
        bootstrap.static_kubeconfig = env_path(seedlet_api::names::objects::GARDEN_KUBECONFIG_ENV)
            .or_else(|| garden.kubeconfig.clone());
        bootstrap.validity = garden.kubeconfig_validity.validity.map(|v| v.as_std());
        bootstrap.jitter = JitterRange {
            min_percent: percent(
                garden
                    .kubeconfig_validity
                    .auto_rotation_jitter_percentage_min,
            ),
            max_percent: percent(
                garden
                    .kubeconfig_validity
                    .auto_rotation_jitter_percentage_max,
            ),
        };
        bootstrap.approval_timeout = garden.bootstrap_approval_timeout.as_std();

        let leader_election = leader_election::Settings::from_config(&config.leader_election);

        let seed = &config.controllers.seed;
        let heartbeat = heartbeat::Settings {
            period: Duration::from_secs(u64::from(seed.lease_resync_seconds.max(1))),
            miss_threshold: seed.lease_resync_miss_threshold.max(1),
        };
        let (health_address, metrics_address) = config
            .server
            .addresses()
            .map_err(|(field, source)| Error::InvalidAddress { field, source })?;
        Ok(Self {
            registration,
            seed_kubeconfig: env_path("KUBECONFIG")
                .or_else(|| config.seed_client_connection.kubeconfig.clone()),
            bootstrap,
            leader_election,
            heartbeat,
            health_address,
            metrics_address,
        })
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn percent(value: i32) -> u8 {
    u8::try_from(value.clamp(0, 100)).unwrap_or(100)
}

/// Runs the agent described by `config` until `shutdown` is cancelled.
///
/// # Errors
/// Configuration, seed client and server binding errors; see [`Error`].
pub async fn run_agent(
    config: GardenletConfiguration,
    shutdown: CancellationToken,
) -> Result<(), Error> {
    let mut agent = Agent::new(config)?;
    if let Some(notifier) = Notifier::from_env() {
        let watchdog = Watchdog::from_env(&notifier);
        agent = agent.with_service_manager(notifier, watchdog);
    }
    agent.start(shutdown).await?.wait().await
}

/// A token cancelled on SIGTERM or SIGINT (Ctrl-C), for the process entry points. Must be called
/// inside a tokio runtime.
pub fn shutdown_on_signals() -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutdown signal received");
        cancel.cancel();
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
            tracing::warn!(error = %error, "cannot listen for SIGTERM, only Ctrl-C stops the process");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

/// A configurable agent; [`run_agent`] is `Agent::new(config)?.start(shutdown)` plus the
/// service manager notifications of `$NOTIFY_SOCKET`.
pub struct Agent {
    config: Arc<GardenletConfiguration>,
    settings: AgentSettings,
    seed_client: Option<kube::Client>,
    garden_client: Option<GardenClient>,
    controllers: Vec<Arc<ControllerSpec>>,
    clock: Arc<dyn Clock>,
    notifier: Option<Notifier>,
    watchdog: Option<Arc<Watchdog>>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("settings", &self.settings)
            .field("controllers", &self.controllers)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent for `config` with the built-in controllers.
    ///
    /// # Errors
    /// See [`AgentSettings::from_config`].
    pub fn new(config: GardenletConfiguration) -> Result<Self, Error> {
        let settings = AgentSettings::from_config(&config)?;
        Ok(Self {
            config: Arc::new(config),
            settings,
            seed_client: None,
            garden_client: None,
            controllers: controllers::builtin().into_iter().map(Arc::new).collect(),
            clock: Arc::new(SystemClock),
            notifier: None,
            watchdog: None,
        })
    }

    /// The derived settings, for adjustment before [`Agent::start`].
    pub fn settings_mut(&mut self) -> &mut AgentSettings {
        &mut self.settings
    }

    /// Uses `client` for the seed instead of building one from the configuration.
    #[must_use]
    pub fn with_seed_client(mut self, client: kube::Client) -> Self {
        self.seed_client = Some(client);
        self
    }

    /// Uses `garden` instead of obtaining the garden credential from the configuration.
    #[must_use]
    pub fn with_garden_client(mut self, garden: GardenClient) -> Self {
        self.garden_client = Some(garden);
        self
    }

    /// Adds a controller that runs while this replica leads.
    #[must_use]
    pub fn controller(mut self, spec: ControllerSpec) -> Self {
        self.controllers.push(Arc::new(spec));
        self
    }

    /// Uses `clock` instead of the system clock.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Tells the service manager through `notifier` when the agent is ready (`READY=1` once the
    /// garden credential is obtained and the Seed registered) and when it stops (`STOPPING=1`);
    /// with a `watchdog`, every successful heartbeat may send its keepalive.
    #[must_use]
    pub fn with_service_manager(mut self, notifier: Notifier, watchdog: Option<Watchdog>) -> Self {
        self.notifier = Some(notifier);
        self.watchdog = watchdog.map(Arc::new);
        self
    }

    /// Builds the seed client, binds the servers and starts the agent in the background.
    ///
    /// # Errors
    /// [`Error::ReadSeedKubeconfig`], [`Error::SeedClientConfig`], [`Error::SeedClient`],
    /// [`Error::Servers`].
    pub async fn start(self, shutdown: CancellationToken) -> Result<RunningAgent, Error> {
        let seed = match self.seed_client.clone() {
            Some(client) => client,
            None => seed_client(self.settings.seed_kubeconfig.as_deref()).await?,
        };
        let metrics = Arc::new(Metrics::new("agent"));
        let health =
            HealthManager::new(signed(self.settings.heartbeat.grace()), self.clock.clone());
        let readiness = Arc::new(Readiness::default());
        let server_stop = CancellationToken::new();
        let servers = Servers::start(
            self.settings.health_address,
            self.settings.metrics_address,
            ProbeState {
                health: health.clone(),
                readiness: readiness.clone(),
                metrics: metrics.clone(),
                clock: self.clock.clone(),
            },
            server_stop.clone(),
        )
        .await
        .map_err(Error::Servers)?;
        tracing::info!(health = %servers.health_address, metrics = %servers.metrics_address, "probe servers listening");

        let (leading_tx, leading) = watch::channel(false);
        let health_address = servers.health_address;
        let metrics_address = servers.metrics_address;
        let shared = Shared {
            seed,
            health: health.clone(),
            readiness,
            metrics: metrics.clone(),
        };
        let task = tokio::spawn(self.run(shared, servers, server_stop, shutdown, leading_tx));
        Ok(RunningAgent {
            health_address,
            metrics_address,
            metrics,
            health,
            leading,
            task,
        })
    }

    async fn run(
        self,
        shared: Shared,
        servers: Servers,
        server_stop: CancellationToken,
        shutdown: CancellationToken,
        leading_tx: watch::Sender<bool>,
    ) -> Result<(), Error> {
        // The elector has its own token so that it releases the lock only after the controllers
        // have stopped.
        let elector_stop = CancellationToken::new();
        let (elector_tx, mut elector_rx) = watch::channel(false);
        let elector = match &self.settings.leader_election {
            Some(settings) => {
                let elector = LeaderElector::new(shared.seed.clone(), settings.clone());
                AbortOnDrop(tokio::spawn(elector.run(elector_stop.clone(), elector_tx)))
            }
            None => {
                elector_tx.send_replace(true);
                // Keep the sender alive so the receiver never reports a closed channel.
                let keep = elector_tx;
                let stop = elector_stop.clone();
                AbortOnDrop(tokio::spawn(async move {
                    stop.cancelled().await;
                    drop(keep);
                }))
            }
        };

        let mut garden = self.garden_client.clone();
        let mut identity_task: Option<AbortOnDrop<()>> = None;
        loop {
            // Standby until leading or shutdown.
            shared.readiness.set_standby(true);
            tokio::select! {
                () = shutdown.cancelled() => break,
                result = elector_rx.wait_for(|leading| *leading) => {
                    if result.is_err() {
                        break;
                    }
                }
            }
            leading_tx.send_replace(true);
            shared.readiness.set_standby(false);
            shared.metrics.set_leader(true);
            let term = shutdown.child_token();
            let watcher = {
                let term = term.clone();
                let mut rx = elector_rx.clone();
                AbortOnDrop(tokio::spawn(async move {
                    // An error means the elector is gone: end the term as well.
                    let _ = rx.wait_for(|leading| !*leading).await;
                    term.cancel();
                }))
            };
            self.lead(&shared, &mut garden, &mut identity_task, &term)
                .await;
            drop(watcher);
            shared.health.reset();
            shared.readiness.reset();
            shared.metrics.set_leader(false);
            leading_tx.send_replace(false);
            if shutdown.is_cancelled() {
                break;
            }
        }
        if let Some(notifier) = &self.notifier {
            notifier.notify_or_log(&[State::Stopping, State::Status("stopping")]);
        }
        drop(identity_task);
        elector_stop.cancel();
        if let Err(error) = elector.join().await {
            tracing::warn!(error = %error, "leader election task ended abnormally");
        }
        server_stop.cancel();
        servers.join().await;
        tracing::info!("agent stopped");
        Ok(())
    }

    /// One leadership term: garden client, registration, heartbeat and controllers until `term`
    /// is cancelled.
    async fn lead(
        &self,
        shared: &Shared,
        garden: &mut Option<GardenClient>,
        identity_task: &mut Option<AbortOnDrop<()>>,
        term: &CancellationToken,
    ) {
        let client = loop {
            if let Some(client) = garden.clone() {
                break client;
            }
            match GardenIdentity::establish(shared.seed.clone(), self.settings.bootstrap.clone())
                .await
            {
                Ok(identity) => {
                    let client = identity.client();
                    *garden = Some(client.clone());
                    *identity_task = Some(AbortOnDrop(tokio::spawn(identity.run())));
                    break client;
                }
                Err(error) => {
                    tracing::error!(error = %error_chain(&error), "obtaining garden credential failed");
                    if sleep_or_cancel(STARTUP_RETRY_DELAY, term).await {
                        return;
                    }
                }
            }
        };
        shared.readiness.set(Step::Bootstrap, true);
        // Rotation swaps the certificate in place: the expiry metric follows the client for the
        // whole term instead of showing the first certificate's expiry forever.
        let _expiry_metric = AbortOnDrop(tokio::spawn(follow_certificate_expiry(
            client.clone(),
            shared.metrics.clone(),
        )));

        loop {
            match registration::register_seed(&client.client(), &self.settings.registration).await {
                Ok(_) => break,
                Err(error) => {
                    tracing::error!(error = %error_chain(&error), seed = %self.settings.registration.name, "registering seed failed");
                    if sleep_or_cancel(STARTUP_RETRY_DELAY, term).await {
                        return;
                    }
                }
            }
        }
        shared.readiness.set(Step::Registration, true);
        if let Some(notifier) = &self.notifier {
            let status = format!("seed {} registered", self.settings.registration.name);
            notifier.notify_or_log(&[State::Ready, State::Status(&status)]);
        }

        let ctx = Arc::new(AgentContext {
            seed_name: self.settings.registration.name.clone(),
            seed: shared.seed.clone(),
            garden: client,
            config: self.config.clone(),
            heartbeat: self.settings.heartbeat,
            clock: self.clock.clone(),
            metrics: shared.metrics.clone(),
            health: shared.health.clone(),
            readiness: shared.readiness.clone(),
            stop: term.clone(),
            field_manager: FIELD_MANAGER,
            watchdog: self.watchdog.clone(),
        });
        shared.health.start();
        // The agent keeps no shared informer cache of its own; controllers that need one
        // maintain readiness through their own caches.
        shared.readiness.set(Step::Caches, true);

        let mut tasks = JoinSet::new();
        for spec in &self.controllers {
            tasks.spawn(supervise(spec.clone(), ctx.clone()));
        }
        term.cancelled().await;
        shared.health.stop();
        while let Some(result) = tasks.join_next().await {
            if let Err(error) = result {
                tracing::warn!(error = %error, "controller task ended abnormally");
            }
        }
    }
}

/// Keeps `seedlet_garden_client_certificate_expiry_seconds` on the certificate `garden` uses,
/// across rotations, until the garden client is dropped or the task is aborted.
async fn follow_certificate_expiry(garden: GardenClient, metrics: Arc<Metrics>) {
    let mut expiry = garden.subscribe_expiry();
    loop {
        metrics.garden_certificate_not_after(*expiry.borrow_and_update());
        if expiry.changed().await.is_err() {
            return;
        }
    }
}

/// Runs one controller for the term of `ctx`, restarting it after [`CONTROLLER_RESTART_DELAY`]
/// when it returns before the term ends.
async fn supervise(spec: Arc<ControllerSpec>, ctx: Arc<AgentContext>) {
    loop {
        tokio::select! {
            () = spec.start(ctx.clone()) => {}
            () = ctx.stop.cancelled() => return,
        }
        if ctx.stop.is_cancelled() {
            return;
        }
        tracing::error!(
            controller = spec.name,
            "controller stopped unexpectedly, restarting"
        );
        ctx.metrics.controller_restarted(spec.name);
        if sleep_or_cancel(CONTROLLER_RESTART_DELAY, &ctx.stop).await {
            return;
        }
    }
}

/// Sleeps for `delay`; returns `true` when `token` was cancelled first.
async fn sleep_or_cancel(delay: Duration, token: &CancellationToken) -> bool {
    tokio::select! {
        () = token.cancelled() => true,
        () = tokio::time::sleep(delay) => false,
    }
}

/// A task handle that aborts the task when dropped, so that aborting the agent's main task (a
/// simulated kill) takes every helper task down with it.
#[derive(Debug)]
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    async fn join(mut self) -> Result<T, tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Process-wide handles shared by all leadership terms.
struct Shared {
    seed: kube::Client,
    health: HealthManager,
    readiness: Arc<Readiness>,
    metrics: Arc<Metrics>,
}

/// A started agent.
#[derive(Debug)]
pub struct RunningAgent {
    /// Bound address of `/healthz` and `/readyz`.
    pub health_address: SocketAddr,
    /// Bound address of `/metrics`.
    pub metrics_address: SocketAddr,
    /// The agent's metrics.
    pub metrics: Arc<Metrics>,
    /// The agent's health manager.
    pub health: HealthManager,
    leading: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<Result<(), Error>>,
}

impl RunningAgent {
    /// Whether this replica currently leads (and runs the heartbeat and controllers).
    pub fn is_leader(&self) -> bool {
        *self.leading.borrow()
    }

    /// A receiver of leadership changes.
    pub fn leadership(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }

    /// Waits until the agent has stopped (after the shutdown token was cancelled).
    ///
    /// # Errors
    /// [`Error::Join`] when the agent task panicked.
    pub async fn wait(self) -> Result<(), Error> {
        self.task.await.map_err(Error::Join)?
    }

    /// Aborts the agent without any cleanup, like a killed process (for failover tests).
    pub fn abort(&self) {
        self.task.abort();
    }
}

/// Builds the seed client from `path`, or from `KUBECONFIG`/in-cluster configuration.
async fn seed_client(path: Option<&std::path::Path>) -> Result<kube::Client, Error> {
    let config = match path {
        Some(path) => {
            let kubeconfig =
                Kubeconfig::read_from(path).map_err(|source| Error::ReadSeedKubeconfig {
                    path: path.display().to_string(),
                    source,
                })?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| Error::SeedClientConfig(Box::new(e)))?
        }
        None => kube::Config::infer()
            .await
            .map_err(|e| Error::SeedClientConfig(Box::new(e)))?,
    };
    kube::Client::try_from(config).map_err(Error::SeedClient)
}

fn signed(duration: Duration) -> jiff::SignedDuration {
    jiff::SignedDuration::try_from(duration).unwrap_or(jiff::SignedDuration::MAX)
}
