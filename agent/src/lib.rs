//! The seedlet seed agent: heartbeat, Seed registration, health and metrics server, leader
//! election, and the shared context every agent controller plugs into.
//!
//! # Process
//! [`run_agent`] (used by `seedlet agent --config FILE`) builds the seed client, starts the probe
//! and metrics servers and campaigns for the leader Lease in the seed. While it leads it obtains
//! the garden client (bootstrap, stored kubeconfig or static kubeconfig), registers the Seed,
//! starts the health manager, and runs the heartbeat and every registered controller. Losing
//! leadership stops them and goes back to campaigning; shutdown stops them, then releases the
//! Lease, then stops the servers.
//!
//! # Writing a controller
//! See `docs/architecture.md` for the recipe. A controller is an async fn taking the
//! per-leadership-term [`AgentContext`]:
//!
//! ```no_run
//! use std::sync::Arc;
//! use seedlet_agent::{AgentContext, ControllerSpec};
//!
//! async fn run(ctx: Arc<AgentContext>) {
//!     // Build a kube_runtime::Controller on ctx.seed / ctx.garden.client() and stop it with
//!     // `.graceful_shutdown_on(ctx.stop.clone().cancelled_owned())`; record reconciles with
//!     // `ctx.metrics.reconciled(NAME, took, ok)`.
//!     ctx.stop.cancelled().await;
//! }
//!
//! let spec = ControllerSpec::new("my-controller", |ctx| Box::pin(run(ctx)));
//! ```
//!
//! Add it to [`controllers::builtin`] (one line) so the agent runs it, or pass it to
//! [`Agent::controller`]. Controllers run only while this replica leads; the future should return
//! once `ctx.stop` is cancelled. A controller that returns early is restarted after
//! [`seedlet_runtime::process::CONTROLLER_RESTART_DELAY`].

pub mod cluster;
pub mod controllerinstallation;
pub mod controllers;
pub mod daemon;
pub mod heartbeat;
pub mod managedresource;
pub mod metrics;
pub mod registration;
pub mod seed;
pub mod shootstate;

use std::sync::Arc;

use seedlet_bootstrap::GardenClient;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::health::HealthManager;
use seedlet_runtime::server::Readiness;
use tokio_util::sync::CancellationToken;

pub use daemon::{Agent, AgentSettings, Error, RunningAgent, run_agent};
pub use seedlet_runtime::process::shutdown_on_signals;

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
    /// systemd watchdog fed by successful heartbeats (`None` unless `$WATCHDOG_USEC` asks for one).
    pub watchdog: Option<Arc<seedlet_systemd::Watchdog>>,
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
