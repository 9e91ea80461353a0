//! The `seedlet agent` process: seed client, probe/metrics servers, leader election, garden
//! identity, Seed registration, heartbeat and controllers, graceful shutdown.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use seedlet_bootstrap::{
    BootstrapOptions, BootstrapSource, GardenClient, GardenIdentity, JitterRange, SecretRef,
};
use seedlet_config::GardenletConfiguration;
use seedlet_runtime::clock::{Clock, SystemClock};
use seedlet_runtime::error_chain;
use seedlet_runtime::events::{EventType, Recorder};
use seedlet_runtime::health::HealthManager;
use seedlet_runtime::leader_election;
use seedlet_runtime::process::{
    AbortOnDrop, ClientError, Leadership, client_config, run_controllers, sleep_or_cancel,
};
use seedlet_runtime::repeated::{Failure, RepeatedFailures};
use seedlet_runtime::server::{ProbeState, Readiness, Servers, Step};
use seedlet_runtime::systemd::{Notifier, State, Watchdog};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::context::{AgentContext, ControllerSpec, FIELD_MANAGER};
use crate::controllers::{self, heartbeat};
use crate::metrics::AgentMetrics;
use crate::registration::{self, SeedRegistration};
use crate::sources::{self, ClientSource, Origin};
use crate::startup_backoff;

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
    /// Building the seed client failed.
    #[error("seed client")]
    SeedClient(#[source] ClientError),
    /// Starting the probe or metrics server failed.
    #[error("starting probe servers")]
    Servers(#[source] seedlet_runtime::server::Error),
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
    /// Where the seed client's configuration comes from (logged once at start-up).
    pub seed_origin: Origin,
    /// Where the garden credential comes from (logged once at start-up).
    pub garden_origin: Origin,
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
    /// Whether the Seed controller enforces the minimum seed Kubernetes version (off with
    /// `EXPERIMENTAL_DISABLE_KUBERNETES_VERSION_CHECK=true`).
    pub kubernetes_version_check: bool,
    /// The seed API server URL the network policies resolve a host name in; when unset, the one
    /// of the seed client configuration (none for a client passed in).
    pub seed_server: Option<String>,
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
        let garden_origin = Origin::of(
            seedlet_api::names::objects::GARDEN_KUBECONFIG_ENV,
            env_path(seedlet_api::names::objects::GARDEN_KUBECONFIG_ENV),
            "gardenClientConnection.kubeconfig",
            garden.kubeconfig.as_deref(),
        )
        .unwrap_or(Origin::Bootstrap);
        bootstrap.static_kubeconfig = garden_origin.path().map(Path::to_owned);
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
        let seed_origin = Origin::of(
            "KUBECONFIG",
            env_path("KUBECONFIG"),
            "seedClientConnection.kubeconfig",
            config.seed_client_connection.kubeconfig.as_deref(),
        )
        .unwrap_or(Origin::InCluster);
        Ok(Self {
            registration,
            seed_kubeconfig: seed_origin.path().map(Path::to_owned),
            seed_origin,
            garden_origin,
            bootstrap,
            leader_election,
            heartbeat,
            health_address,
            metrics_address,
            kubernetes_version_check: std::env::var(
                crate::controllers::seed::flow::DISABLE_VERSION_CHECK_ENV,
            )
            .map_or(true, |value| value != "true"),
            seed_server: None,
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
    /// [`Error::SeedClient`], [`Error::Servers`].
    pub async fn start(self, shutdown: CancellationToken) -> Result<RunningAgent, Error> {
        let (seed, seed_server) = match self.seed_client.clone() {
            Some(client) => (client, None),
            None => {
                let config = client_config(self.settings.seed_kubeconfig.as_deref())
                    .await
                    .map_err(Error::SeedClient)?;
                let server = config.cluster_url.to_string();
                self.log_client_sources(Some(server.clone()));
                let client = seedlet_runtime::client::build(config)
                    .map_err(|source| Error::SeedClient(ClientError::Build(source)))?;
                (client, Some(server))
            }
        };
        // Every write to the seed goes through the write budget (the garden client's writes do
        // too, see `GardenClient`).
        let seed = seedlet_runtime::budget::guarded(seed);
        let metrics = Arc::new(AgentMetrics::new());
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
                metrics: metrics.common(),
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
            seed_server,
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
        // The elector stops only after the controllers have, so that it releases the lock last.
        let mut leadership =
            Leadership::start(shared.seed.clone(), self.settings.leader_election.clone());
        let mut garden = self.garden_client.clone();
        let mut identity_task: Option<AbortOnDrop<()>> = None;
        loop {
            shared.readiness.set_standby(true);
            let Some(term) = leadership.next_term(&shutdown).await else {
                break;
            };
            leading_tx.send_replace(true);
            shared.readiness.set_standby(false);
            shared.metrics.set_leader(true);
            self.lead(&shared, &mut garden, &mut identity_task, &term.stop)
                .await;
            drop(term);
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
        leadership.stop().await;
        server_stop.cancel();
        servers.join().await;
        tracing::info!("agent stopped");
        Ok(())
    }

    /// The garden's server when a kubeconfig file names it (not for a bootstrapped credential).
    fn garden_server(&self) -> Option<String> {
        self.settings
            .garden_origin
            .path()
            .and_then(sources::kubeconfig_server)
    }

    /// Says once where the seed and garden clients come from and which servers they talk to.
    fn log_client_sources(&self, seed_server: Option<String>) {
        let seed = ClientSource {
            origin: self.settings.seed_origin.clone(),
            server: seed_server,
        };
        let garden = ClientSource {
            origin: self.settings.garden_origin.clone(),
            server: self.garden_server(),
        };
        for (warning, line) in sources::describe(&seed, &garden) {
            if warning {
                tracing::warn!("{line}");
            } else {
                tracing::info!("{line}");
            }
        }
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
        let mut credential_failures = RepeatedFailures::new();
        let mut credential_backoff = startup_backoff::Backoff::default();
        let client = loop {
            if let Some(client) = garden.clone() {
                break client;
            }
            match GardenIdentity::establish(shared.seed.clone(), self.settings.bootstrap.clone())
                .await
            {
                Ok(identity) => {
                    if let Some(failures) = credential_failures.succeeded() {
                        tracing::info!(
                            failures,
                            "obtained the garden credential after failed attempts"
                        );
                    }
                    let client = identity.client();
                    *garden = Some(client.clone());
                    *identity_task = Some(AbortOnDrop::spawn(identity.run()));
                    break client;
                }
                Err(error) => {
                    let message = error_chain(&error);
                    let delay = credential_backoff.failed();
                    // Once per distinct failure; the same failure again is a debug line.
                    match credential_failures.failed(&message) {
                        Failure::New => tracing::error!(
                            error = %message,
                            seed_server = shared.seed_server.as_deref().unwrap_or("injected client"),
                            retry_seconds = delay.as_secs(),
                            "obtaining garden credential failed"
                        ),
                        Failure::Repeated => {
                            tracing::debug!(error = %message, retry_seconds = delay.as_secs(), "obtaining garden credential failed again")
                        }
                    }
                    if sleep_or_cancel(delay, term).await {
                        return;
                    }
                }
            }
        };
        shared.readiness.set(Step::Bootstrap, true);
        // Rotation swaps the certificate in place: the expiry metric follows the client for the
        // whole term instead of showing the first certificate's expiry forever.
        let _expiry_metric = AbortOnDrop::spawn(follow_certificate_expiry(
            client.clone(),
            shared.metrics.clone(),
        ));

        let events = garden_events(&client, &self.clock);
        let mut registration_failures = RepeatedFailures::new();
        let mut registration_backoff = startup_backoff::Backoff::default();
        loop {
            match registration::register_seed(&client.client(), &self.settings.registration).await {
                Ok(seed) => {
                    if let Some(failures) = registration_failures.succeeded() {
                        tracing::info!(failures, "registered the seed after failed attempts");
                    }
                    publish_cluster_identity(&client.client(), &shared.seed, &seed).await;
                    let note = registered_note(self.settings.leader_election.as_ref());
                    events
                        .publish(
                            &seed,
                            EventType::Normal,
                            SEED_REGISTERED,
                            "Reconcile",
                            &note,
                        )
                        .await;
                    break;
                }
                Err(error) => {
                    let message = error_chain(&error);
                    let delay = registration_backoff.failed();
                    match registration_failures.failed(&message) {
                        Failure::New => tracing::error!(
                            error = %message,
                            seed = %self.settings.registration.name,
                            garden_server = self.garden_server().as_deref().unwrap_or("from the garden credential"),
                            retry_seconds = delay.as_secs(),
                            "registering seed failed"
                        ),
                        Failure::Repeated => {
                            tracing::debug!(error = %message, retry_seconds = delay.as_secs(), "registering seed failed again")
                        }
                    }
                    if sleep_or_cancel(delay, term).await {
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
            events,
            watchdog: self.watchdog.clone(),
            kubernetes_version_check: self.settings.kubernetes_version_check,
            seed_server: self
                .settings
                .seed_server
                .clone()
                .or_else(|| shared.seed_server.clone()),
            seed_claim: Arc::default(),
            caches: crate::caches::AgentCaches::new(
                shared.seed.clone(),
                &self.settings.registration.name,
                term,
            ),
        });
        shared.health.start();
        // The shared informers start when a controller first asks for a kind, and each
        // controller's queue fills as its informers list; readiness does not wait for them
        // (a garden that serves no kind of an optional controller must not hold it back).
        shared.readiness.set(Step::Caches, true);

        let common = shared.metrics.common();
        let health = shared.health.clone();
        let stopped = term.clone();
        tokio::join!(
            run_controllers(&self.controllers, ctx, term, &common),
            async move {
                // The health manager stops with the term, before the controllers finish.
                stopped.cancelled().await;
                health.stop();
            }
        );
    }
}

/// Keeps `seedlet_garden_client_certificate_expiry_seconds` on the certificate `garden` uses,
/// across rotations, until the garden client is dropped or the task is aborted.
async fn follow_certificate_expiry(garden: GardenClient, metrics: Arc<AgentMetrics>) {
    let mut expiry = garden.subscribe_expiry();
    loop {
        metrics.garden_certificate_not_after(*expiry.borrow_and_update());
        if expiry.changed().await.is_err() {
            return;
        }
    }
}

/// Process-wide handles shared by all leadership terms.
struct Shared {
    seed: kube::Client,
    /// The seed's server, for error lines (`None` for an injected client).
    seed_server: Option<String>,
    health: HealthManager,
    readiness: Arc<Readiness>,
    metrics: Arc<AgentMetrics>,
}

/// A started agent.
#[derive(Debug)]
pub struct RunningAgent {
    /// Bound address of `/healthz` and `/readyz`.
    pub health_address: SocketAddr,
    /// Bound address of `/metrics`.
    pub metrics_address: SocketAddr,
    /// The agent's metrics.
    pub metrics: Arc<AgentMetrics>,
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

fn signed(duration: Duration) -> jiff::SignedDuration {
    jiff::SignedDuration::try_from(duration).unwrap_or(jiff::SignedDuration::MAX)
}

/// `source.component` of the agent's Events, gardenlet's own name so that tools filtering on it
/// find seedlet's Events too.
pub const EVENT_COMPONENT: &str = "gardenlet";

/// Event reason on the Seed each time an agent took the lead and registered it.
pub const SEED_REGISTERED: &str = "SeedRegistered";

/// The message of the [`SEED_REGISTERED`] Event: the agent's version and the leader, named by
/// its leader-election identity (the holder of the Lease), or by the host name when the agent
/// runs without leader election.
fn registered_note(leader_election: Option<&leader_election::Settings>) -> String {
    let leader = leader_election.map_or_else(leader_election::host_name, |settings| {
        settings.identity.clone()
    });
    format!(
        "Seed registered by seedlet agent {} (leader {leader})",
        env!("CARGO_PKG_VERSION")
    )
}

/// The agent's Event recorder: it writes to the garden with whatever credential is current.
fn garden_events(client: &GardenClient, clock: &Arc<dyn Clock>) -> Recorder {
    let client = client.clone();
    Recorder::from_source(Arc::new(move || client.client()), EVENT_COMPONENT)
        .with_clock(clock.clone())
}

/// Publishes the seed cluster's identity on a freshly registered Seed that has none (see
/// [`crate::cluster_identity::publish_if_unset`]). A failure only delays installations: the Seed
/// controller writes the identity in its first reconcile and reports its own errors, so it is
/// logged at debug level here.
async fn publish_cluster_identity(
    garden: &kube::Client,
    seed_client: &kube::Client,
    seed: &seedlet_api::core::Seed,
) {
    if crate::cluster_identity::has_identity(seed) {
        return;
    }
    let published = match crate::cluster_identity::ensure(seed_client).await {
        Ok(identity) => crate::cluster_identity::publish_if_unset(garden, seed, &identity).await,
        Err(error) => Err(error),
    };
    match published {
        Ok(true) => {
            tracing::debug!(seed = %kube::ResourceExt::name_any(seed), "published the seed cluster identity")
        }
        Ok(false) => {}
        Err(error) => {
            tracing::debug!(seed = %kube::ResourceExt::name_any(seed), error = %error_chain(&error), "publishing the seed cluster identity failed, the Seed controller will")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registration_note_names_the_lease_holder_or_the_host() {
        let election = seedlet_config::LeaderElection {
            leader_elect: true,
            ..Default::default()
        };
        let mut settings =
            leader_election::Settings::from_config(&election).expect("leader election on");
        settings.identity = "agent-0_00000000000000ff".to_owned();
        let note = registered_note(Some(&settings));
        assert!(
            note.ends_with("(leader agent-0_00000000000000ff)"),
            "{note}"
        );
        let alone = registered_note(None);
        assert!(
            alone.ends_with(&format!("(leader {})", leader_election::host_name())),
            "{alone}"
        );
        assert!(!alone.contains("unknown"), "{alone}");
    }
}
