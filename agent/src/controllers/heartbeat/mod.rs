//! Heartbeat: every `leaseResyncSeconds`, on its own task so busy controllers cannot delay it,
//! probe the seed API server, renew the seed Lease in the garden
//! (`gardener-system-seed-lease/<seed>`) and keep the Seed's `GardenletReady` condition current;
//! feeds the health manager and the lease metrics, and the systemd watchdog when there is one.
//!
//! A periodic task on the runtime ([`seedlet_runtime::periodic`]): renewals follow a fixed
//! schedule (tick `n` at `start + n × period`), so slow beats do not make later ones drift; a
//! beat is bounded by one period and a missed tick is skipped, not bunched.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod settings;

pub use settings::Settings;

use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::{AtomicBool, Ordering};

use seedlet_runtime::controller::Reason;
use seedlet_runtime::health::HealthManager;
use seedlet_runtime::periodic::{self, Periodic};
use seedlet_runtime::systemd::Watchdog;
use tokio::time::Instant;

use crate::context::AgentContext;
use crate::metrics::AgentMetrics;
use crate::seed_claim::SeedClaim;

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

impl Reason for Error {
    fn reason(&self) -> &'static str {
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
}

impl Error {
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

/// The heartbeat as a periodic task: one [`reconcile::beat`] per round, and what its outcome
/// means for the agent's health, the systemd watchdog and the lease metrics.
pub struct Heartbeat {
    beat: Ctx,
    health: HealthManager,
    watchdog: Option<Arc<Watchdog>>,
    metrics: Arc<AgentMetrics>,
    seed_claim: Arc<SeedClaim>,
    /// Whether the last round was skipped because another agent holds the Seed.
    yielding: AtomicBool,
}

impl std::fmt::Debug for Heartbeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heartbeat")
            .field("beat", &self.beat)
            .finish_non_exhaustive()
    }
}

impl Heartbeat {
    /// The heartbeat of `agent`.
    pub fn of(agent: &AgentContext) -> Self {
        Self {
            beat: Ctx::of(agent),
            health: agent.health.clone(),
            watchdog: agent.watchdog.clone(),
            metrics: agent.metrics.clone(),
            seed_claim: agent.seed_claim.clone(),
            yielding: AtomicBool::new(false),
        }
    }

    fn keep_watchdog_fed(&self) {
        if let Some(watchdog) = &self.watchdog {
            watchdog.keepalive(self.beat.settings.period);
        }
    }
}

impl Periodic for Heartbeat {
    type Output = reconcile::Beat;
    type Error = Error;
    const NAME: &'static str = NAME;

    fn period(&self) -> Duration {
        self.beat.settings.period
    }

    async fn round(&self) -> Result<reconcile::Beat, Error> {
        reconcile::beat(&self.beat).await
    }

    fn timed_out(&self, period: Duration) -> Error {
        Error::Timeout(period)
    }

    /// Skips the beat while another agent holds the Seed (see [`crate::seed_claim`]): its Lease
    /// is the other agent's to renew. The process itself is fine, so it stays healthy and feeds
    /// the systemd watchdog (a restart would change nothing); the change is logged once each way
    /// (the Seed controller reports the clash itself as an ERROR).
    fn skip(&self) -> bool {
        let claimed = self.seed_claim.claimed_by_another();
        let seed = &self.beat.seed_name;
        if self.yielding.swap(claimed, Ordering::Relaxed) != claimed {
            if claimed {
                tracing::warn!(%seed, "another agent holds the seed: not renewing its lease");
            } else {
                tracing::info!(%seed, "seed no longer held by another agent: renewing its lease again");
            }
        }
        if claimed {
            self.health.set(true);
            self.keep_watchdog_fed();
        }
        claimed
    }

    fn succeeded(&self, beat: reconcile::Beat, scheduled: Instant) {
        self.health.set(true);
        self.keep_watchdog_fed();
        self.metrics.lease_renewed(
            beat.renewed_at,
            beat.renew_started.saturating_duration_since(scheduled),
        );
        tracing::trace!(seed = %self.beat.seed_name, condition_written = beat.condition_written, "heartbeat");
    }

    fn failed(&self, error: &Error, scheduled: Instant, started: Instant) {
        if error.affects_health() {
            self.health.set(false);
            self.metrics.lease_renewal_failed();
        } else if matches!(error, Error::PatchCondition { .. }) {
            // The Lease was renewed before the condition write failed.
            self.metrics.lease_renewed(
                self.beat.clock.now(),
                started.saturating_duration_since(scheduled),
            );
        }
    }

    /// A lost race on the condition write (409: another writer, the Lease is renewed) is
    /// routine.
    fn is_routine(&self, error: &Error) -> bool {
        matches!(error, Error::PatchCondition { .. })
            && seedlet_runtime::status::conflict_in_chain(error)
    }
}

/// Runs heartbeats until `ctx.stop` is cancelled.
pub async fn run(ctx: Arc<AgentContext>) {
    let heartbeat = Arc::new(Heartbeat::of(&ctx));
    periodic::run(heartbeat, ctx.stop.clone(), ctx.metrics.common()).await;
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
