//! What the two Seed condition checks of gardener-controller-manager share
//! (`seed-extensions-check` → `ExtensionsReady`, `seed-backupbuckets-check` →
//! `BackupBucketsReady`): their settings (parallelism, period, the condition's threshold) and
//! their dependencies ([`Check`], which each check's controller type wraps). Each check keeps its
//! own triggers and decision in its folder.

use std::sync::Arc;
use std::time::Duration;

use seedlet_config::ConditionThreshold;
use seedlet_runtime::clock::Clock;

/// Settings of one check, from its configuration block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Parallel reconciles.
    pub concurrent_syncs: u16,
    /// Check period per Seed.
    pub sync_period: Duration,
    /// How long the condition may stay `Progressing` after a failure, if configured.
    pub threshold: Option<Duration>,
}

impl Settings {
    /// Settings from a check's block (`concurrentSyncs`, `syncPeriod`, `conditionThresholds`),
    /// with the threshold of `condition_type`.
    pub fn from_block(
        concurrent_syncs: impl Into<i64>,
        sync_period: seedlet_config::Duration,
        thresholds: &[ConditionThreshold],
        condition_type: &str,
    ) -> Self {
        Self {
            concurrent_syncs: seedlet_runtime::watch::concurrency(concurrent_syncs.into()),
            sync_period: sync_period.as_std(),
            threshold: seedlet_config::threshold_for(thresholds, condition_type)
                .map(|duration| duration.as_std()),
        }
    }
}

impl Settings {
    /// The pause after a failed check: short, but never longer than the sync period.
    pub fn retry_delay(&self) -> Duration {
        self.sync_period.min(Duration::from_secs(5))
    }
}

/// Dependencies of one check.
pub struct Check {
    /// Garden client.
    pub client: kube::Client,
    /// Timing and threshold.
    pub settings: Settings,
    /// Time source for condition timestamps and the threshold.
    pub clock: Arc<dyn Clock>,
}

impl Check {
    /// The check's dependencies for one leadership term of the garden process.
    pub fn new(garden: &crate::context::GardenContext, settings: Settings) -> Self {
        Self {
            client: garden.client.clone(),
            settings,
            clock: garden.clock.clone(),
        }
    }
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}
