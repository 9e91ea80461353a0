//! What an agent controller may use during one leadership term of the `seedlet agent` process.

use std::future::Future;
use std::sync::Arc;

use seedlet_bootstrap::GardenClient;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::health::HealthManager;
use seedlet_runtime::server::Readiness;
use tokio_util::sync::CancellationToken;

use crate::caches::{AgentCaches, GardenCaches};
use crate::controllers::heartbeat::settings as heartbeat;
use crate::metrics::AgentMetrics;

/// Field manager of every object the agent writes.
pub const FIELD_MANAGER: &str = seedlet_api::names::field_managers::AGENT;

/// Dependencies of the agent's controllers, valid for one leadership term.
pub struct AgentContext {
    /// Name of our Seed (`seedConfig.metadata.name`).
    pub seed_name: String,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Hot-swappable garden client: call `.client()` per request, or `run_with_current` for watches.
    pub garden: GardenClient,
    /// The whole component configuration.
    pub config: Arc<seedlet_config::GardenletConfiguration>,
    /// Heartbeat timing.
    pub heartbeat: heartbeat::Settings,
    /// Time source; use it for every condition timestamp.
    pub clock: Arc<dyn Clock>,
    /// Process metrics.
    pub metrics: Arc<AgentMetrics>,
    /// Health manager (the heartbeat feeds it).
    pub health: HealthManager,
    /// Readiness steps behind `/readyz`.
    pub readiness: Arc<Readiness>,
    /// Cancelled when this leadership term ends (leadership lost or shutdown).
    pub stop: CancellationToken,
    /// Field manager for server-side apply and patches.
    pub field_manager: &'static str,
    /// Kubernetes Events in the garden (on the Seed, ControllerInstallations, …), written with
    /// the current garden credential.
    pub events: seedlet_runtime::events::Recorder,
    /// systemd watchdog fed by successful heartbeats (`None` unless `$WATCHDOG_USEC` asks for one).
    pub watchdog: Option<Arc<seedlet_runtime::systemd::Watchdog>>,
    /// Whether the Seed controller enforces the minimum seed Kubernetes version.
    pub kubernetes_version_check: bool,
    /// The seed API server URL, when known (the network policies resolve a host name in it).
    pub seed_server: Option<String>,
    /// Whether another agent holds our Seed (the heartbeat then stops renewing its Lease).
    pub seed_claim: Arc<crate::seed_claim::SeedClaim>,
    /// The shared informers of this term.
    pub caches: AgentCaches,
}

impl AgentContext {
    /// Runs `work` with the garden informers of the current garden credential; when the
    /// credential is swapped, the running future is dropped and `work` starts again on the new
    /// one's informers.
    pub async fn run_on_garden<F, Fut, T>(&self, mut work: F) -> T
    where
        F: FnMut(Arc<GardenCaches>) -> Fut,
        Fut: Future<Output = T>,
    {
        self.garden
            .run_with_current_generation(|client, generation| {
                work(self.caches.garden(client, generation))
            })
            .await
    }
}

impl std::fmt::Debug for AgentContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentContext")
            .field("seed_name", &self.seed_name)
            .field("garden", &self.garden)
            .field("heartbeat", &self.heartbeat)
            .field("stopped", &self.stop.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// A controller the agent runs while it leads.
pub type ControllerSpec = seedlet_runtime::process::ControllerSpec<AgentContext>;
