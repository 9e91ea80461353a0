//! Heartbeat: every `leaseResyncSeconds`, on its own task so busy controllers cannot delay it,
//! probe the seed API server, renew the seed Lease in the garden
//! (`gardener-system-seed-lease/<seed>`) and keep the Seed's `GardenletReady` condition current;
//! feeds the health manager and the lease metrics, and the systemd watchdog when there is one.
//!
//! Renewals follow a fixed schedule (tick `n` at `start + n × period`), so slow beats do not make
//! later ones drift; a beat is bounded by one period and a missed tick is skipped, not bunched.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod settings;

pub use settings::Settings;

use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

use crate::context::AgentContext;
use seedlet_runtime::repeated::{Failure, RepeatedFailures};

/// Controller name (metrics label, logs).
pub const NAME: &str = "heartbeat";

/// What one heartbeat uses.
pub struct Ctx {
    /// Name of our Seed.
    pub seed_name: String,
    /// Client of the seed cluster (probed through `/healthz`).
    pub seed: kube::Client,
    /// Hot-swappable garden client (the Lease and the Seed's condition).
    pub garden: seedlet_bootstrap::GardenClient,
    /// Heartbeat timing.
    pub settings: Settings,
    /// Time source for the renewal time and condition timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("seed", &self.seed_name)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Ctx {
    /// The heartbeat's part of `agent`.
    pub fn of(agent: &AgentContext) -> Self {
        Self {
            seed_name: agent.seed_name.clone(),
            seed: agent.seed.clone(),
            garden: agent.garden.clone(),
            settings: agent.heartbeat,
            clock: agent.clock.clone(),
        }
    }
}

/// Errors of one heartbeat.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the Seed from the garden failed.
    #[error("reading seed {seed}")]
    ReadSeed {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The Seed does not exist (yet).
    #[error("seed {seed} not found")]
    SeedNotFound {
        /// Seed name.
        seed: String,
    },
    /// The seed API server failed its `/healthz` check.
    #[error("seed api server health check")]
    SeedUnhealthy {
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the Lease failed.
    #[error("renewing lease {}/{seed}", seedlet_api::names::namespaces::SEED_LEASE)]
    RenewLease {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Building the Lease object failed.
    #[error("encoding lease for seed {seed}")]
    EncodeLease {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
    /// Writing `GardenletReady` failed (the Lease was renewed).
    #[error("patching GardenletReady of seed {seed}")]
    PatchCondition {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The beat did not finish within one period.
    #[error("heartbeat did not finish within {0:?}")]
    Timeout(Duration),
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::ReadSeed { .. } => "SeedReadError",
            Error::SeedNotFound { .. } => "SeedNotFound",
            Error::SeedUnhealthy { .. } => reconcile::SEED_API_SERVER_UNHEALTHY,
            Error::RenewLease { .. } => "LeaseRenewError",
            Error::EncodeLease { .. } => "LeaseEncodeError",
            Error::PatchCondition { .. } => "ConditionPatchError",
            Error::Timeout(_) => "HeartbeatTimeout",
        }
    }

    /// Whether this failure means the agent is unhealthy (the Lease could not be renewed).
    ///
    /// A missing Seed leaves health alone (stuck detection catches it), a failed condition write
    /// happens after a successful renewal.
    pub fn affects_health(&self) -> bool {
        !matches!(
            self,
            Error::SeedNotFound { .. } | Error::PatchCondition { .. }
        )
    }
}

/// Runs heartbeats until `ctx.stop` is cancelled.
pub async fn run(ctx: Arc<AgentContext>) {
    let period = ctx.heartbeat.period;
    let mut ticker = tokio::time::interval_at(Instant::now(), period);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut failures = RepeatedFailures::new();
    let beat_ctx = Ctx::of(&ctx);
    let mut yielding = false;
    loop {
        let scheduled = tokio::select! {
            () = ctx.stop.cancelled() => return,
            scheduled = ticker.tick() => scheduled,
        };
        if yield_to_another_agent(&ctx, &mut yielding) {
            continue;
        }
        let started = Instant::now();
        let beat = seedlet_runtime::budget::scoped(NAME, reconcile::beat(&beat_ctx));
        let result = match tokio::time::timeout(period, beat).await {
            Ok(result) => result,
            Err(_) => Err(Error::Timeout(period)),
        };
        let took = started.elapsed();
        match result {
            Ok(beat) => {
                ctx.health.set(true);
                if let Some(watchdog) = &ctx.watchdog {
                    watchdog.keepalive(period);
                }
                ctx.metrics.lease_renewed(
                    beat.renewed_at,
                    beat.renew_started.saturating_duration_since(scheduled),
                );
                ctx.metrics.reconciled(NAME, took, true);
                tracing::trace!(seed = %ctx.seed_name, condition_written = beat.condition_written, "heartbeat");
                if let Some(failures) = failures.succeeded() {
                    tracing::info!(seed = %ctx.seed_name, failures, "heartbeat succeeded again");
                }
            }
            Err(error) => {
                if error.affects_health() {
                    ctx.health.set(false);
                    ctx.metrics.lease_renewal_failed();
                } else if matches!(error, Error::PatchCondition { .. }) {
                    ctx.metrics.lease_renewed(
                        ctx.clock.now(),
                        started.saturating_duration_since(scheduled),
                    );
                }
                ctx.metrics.reconciled(NAME, took, false);
                log_failure(&mut failures, &error, &ctx.seed_name);
            }
        }
    }
}

/// Whether to skip this beat because another agent holds the Seed (see
/// [`crate::seed_claim`]): its Lease is the other agent's to renew. The process itself is fine,
/// so it stays healthy and feeds the systemd watchdog (a restart would change nothing); the change is logged once each way
/// (the Seed controller reports the clash itself as an ERROR).
fn yield_to_another_agent(ctx: &AgentContext, yielding: &mut bool) -> bool {
    let claimed = ctx.seed_claim.claimed_by_another();
    if claimed != *yielding {
        *yielding = claimed;
        if claimed {
            tracing::warn!(seed = %ctx.seed_name, "another agent holds the seed: not renewing its lease");
        } else {
            tracing::info!(seed = %ctx.seed_name, "seed no longer held by another agent: renewing its lease again");
        }
    }
    if claimed {
        ctx.health.set(true);
        if let Some(watchdog) = &ctx.watchdog {
            watchdog.keepalive(ctx.heartbeat.period);
        }
    }
    claimed
}

/// One WARN per distinct failure, not one per beat (every 2 s by default). A lost race on the
/// condition write (409: another writer, the Lease is renewed) is routine and a debug line.
fn log_failure(failures: &mut RepeatedFailures, error: &Error, seed: &str) {
    let message = seedlet_runtime::error_chain(error);
    let conflict = matches!(error, Error::PatchCondition { .. })
        && seedlet_runtime::status::conflict_in_chain(error);
    let reason = error.reason();
    match failures.failed(&message) {
        Failure::New if !conflict => {
            tracing::warn!(error = %message, reason, seed, "heartbeat failed");
        }
        _ => tracing::debug!(error = %message, reason, seed, "heartbeat failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grace_is_period_times_miss_threshold() {
        let settings = Settings::default();
        assert_eq!(settings.grace(), Duration::from_secs(20));
        assert_eq!(settings.lease_duration_seconds(), 2);
    }

    #[test]
    fn lease_duration_is_at_least_one_second_for_subsecond_periods() {
        let settings = Settings {
            period: Duration::from_millis(250),
            miss_threshold: 4,
        };
        assert_eq!(settings.lease_duration_seconds(), 1);
        assert_eq!(settings.grace(), Duration::from_secs(1));
    }

    #[test]
    fn only_renewal_failures_affect_health() {
        assert!(!Error::SeedNotFound { seed: "s".into() }.affects_health());
        assert!(Error::Timeout(Duration::from_secs(2)).affects_health());
    }
}
