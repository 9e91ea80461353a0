//! What the two Seed condition checks of gardener-controller-manager share
//! (`seed-extensions-check` → `ExtensionsReady`, `seed-backupbuckets-check` →
//! `BackupBucketsReady`): their settings (parallelism, period, the condition's threshold) and
//! their dependencies ([`Check`]) and the controller type ([`SeedCheck`]), whose reconcile runs the
//! check and looks again after the sync period. Each check keeps its own triggers and decision in
//! its folder, behind [`Judge`].
//!
//! A Seed is checked at most once per [`MIN_CHECK_SPACING`]: the condition summarises every
//! installation (bucket) of the Seed and its message names the ones not ready, so while an
//! extension rollout creates fifty installations at once it changed with each of them, and the
//! checks rewrote the Seed as often as the write budget let them (which then reported a write
//! storm). A trigger inside the spacing waits for its end instead, so the last change of a burst is
//! judged at most that late and the Seed is written about once per spacing during it.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use kube::ResourceExt as _;
use seedlet_runtime::spacing::Spacing;

use kube::runtime::controller::Action;
use seedlet_api::core::Seed;
use seedlet_runtime::controller::{Reason, Reconciler, Triggers};

use seedlet_config::ConditionThreshold;
use seedlet_runtime::clock::Clock;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

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

/// The least time between two checks of one Seed (see the module docs).
pub const MIN_CHECK_SPACING: Duration = Duration::from_secs(1);

/// One Seed condition check: its name, settings, triggers and the check itself.
pub trait Judge: Send + Sync + 'static {
    /// Controller name (logs, metrics label).
    const NAME: &'static str;
    /// What a check fails with.
    type Error: std::error::Error + Reason + Send + Sync + 'static;

    /// The check's settings from the garden controller configuration.
    fn settings(config: &seedlet_config::GardenControllerConfiguration) -> Settings;

    /// Checks `seed` and writes its condition when it changed.
    fn check(seed: &Seed, check: &Check) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// What triggers a check, over the shared informers `caches`.
    fn triggers(check: &Check, caches: &GardenCaches) -> Triggers<Seed>;
}

/// The controller of the check `J`.
pub struct SeedCheck<J> {
    /// Its dependencies.
    pub check: Check,
    spacing: Mutex<Spacing<Timestamp>>,
    judge: PhantomData<fn() -> J>,
}

impl<J> SeedCheck<J> {
    /// The controller of `J` with `check`.
    pub fn new(check: Check) -> Self {
        Self {
            check,
            spacing: Mutex::new(Spacing::new(MIN_CHECK_SPACING)),
            judge: PhantomData,
        }
    }
}

impl<J: Judge> std::fmt::Debug for SeedCheck<J> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedCheck")
            .field("controller", &J::NAME)
            .field("check", &self.check)
            .finish()
    }
}

impl<J: Judge> Reconciler for SeedCheck<J> {
    type Object = Seed;
    type Error = J::Error;
    const NAME: &'static str = J::NAME;

    /// Checks one Seed (at most once per [`MIN_CHECK_SPACING`]); looks again after the sync
    /// period.
    async fn reconcile(&self, seed: Arc<Seed>) -> Result<Action, J::Error> {
        let wait = self
            .spacing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .wait(&seed.name_any(), self.check.clock.now());
        if let Some(wait) = wait {
            return Ok(Action::requeue(wait));
        }
        J::check(&seed, &self.check).await?;
        Ok(Action::requeue(self.check.settings.sync_period))
    }

    /// Short, but never longer than the sync period.
    fn retry_after(&self, _: &J::Error) -> Duration {
        self.check.settings.retry_delay()
    }

    fn concurrency(&self) -> u16 {
        self.check.settings.concurrent_syncs
    }
}

impl<J: Judge> GardenReconciler for SeedCheck<J> {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        Some(Self::new(Check::new(garden, J::settings(&garden.config))))
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Seed> {
        J::triggers(&self.check, caches)
    }
}
