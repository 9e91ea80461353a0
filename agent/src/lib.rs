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
//! See `docs/architecture.md` for the recipe: a controller is one type implementing
//! [`seedlet_runtime::controller::Reconciler`], its triggers come from the shared informers of
//! [`caches`], and `seedlet_runtime::controller::run` runs it. Its entry point takes the
//! per-leadership-term [`AgentContext`]:
//!
//! ```no_run
//! use std::sync::Arc;
//! use seedlet_agent::{AgentContext, ControllerSpec};
//!
//! async fn run(ctx: Arc<AgentContext>) {
//!     // Build a kube_runtime::Controller over informers of `ctx.caches` (garden kinds inside
//!     // `ctx.run_on_garden(..)`) and hand it to `seedlet_runtime::controller::run` with the
//!     // reconciler, `ctx.stop` and `ctx.metrics.common()`.
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

pub mod caches;
pub mod chart_limits;
pub mod cluster_identity;
pub mod cluster_shoot;
pub mod cluster_view;
pub mod context;
pub mod controllers;
pub mod daemon;
pub mod extension_sync;
pub mod garden_scope;
pub mod gardener_identity;
pub mod managed_manifests;
pub mod merge_patch;
pub mod metrics;
pub mod registration;
pub mod required_extensions;
pub mod resource_health;
pub mod seed_claim;
pub mod shoot_flow_switches;
pub mod shoot_state;
pub mod shoot_teardown;
pub mod sources;
pub mod startup_backoff;
#[cfg(test)]
pub(crate) mod testing;

pub use context::{AgentContext, ControllerSpec, FIELD_MANAGER};
pub use daemon::{Agent, AgentSettings, Error, RunningAgent, run_agent};
pub use seedlet_runtime::process::shutdown_on_signals;
