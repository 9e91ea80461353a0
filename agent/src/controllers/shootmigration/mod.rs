//! The legacy Migration reconciler of gardenlet ≤ v1.65 (`shoot-migration`, spec
//! `gardenlet-shoot-flow.md` §6.5). Gardener removed it in v1.66 together with its feature gate;
//! seedlet keeps it behind the same switch — it runs only with `featureGates.ForceRestore: true`
//! and takes `controllers.shootMigration` (`concurrentSyncs` 5, `syncPeriod` 1m, `gracePeriod`
//! 2h, `lastOperationStaleDuration` 10m). It watches the garden Shoots migrating **to** this seed,
//! records `status.migrationStartTime`, and when the shoot carries
//! `shoot.gardener.cloud/force-restore=true` or the grace period is over while the source seed
//! makes no progress, aborts the migration in the Shoot's status so that this seed's Shoot
//! controller restores it from the ShootState (the source seed's objects are then torn down
//! without being migrated). Requeues every `syncPeriod` while a migration is watched.
//!
//! Not carried over: upstream also required owner checks on the seeds; seedlet has none.

pub mod decide;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;

use seedlet_config::gardenlet::{FORCE_RESTORE_FEATURE_GATE, ShootMigrationController};

pub use reconcile::Error;

use crate::caches::GardenCaches;
use crate::context::AgentContext;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot-migration";

/// The controller (one per garden client): what its reconcile needs.
pub struct ShootMigration {
    /// Parallel reconciles (`controllers.shootMigration.concurrentSyncs`).
    pub concurrency: u16,
    /// Our Seed's name.
    pub seed_name: String,
    /// Garden client of this run.
    pub garden: kube::Client,
    /// Time source.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// `controllers.shootMigration`.
    pub settings: decide::Settings,
}

impl std::fmt::Debug for ShootMigration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShootMigration")
            .field("seed", &self.seed_name)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Whether the reconciler runs: feature gate `ForceRestore` set to true (default off).
pub fn enabled(config: &seedlet_config::GardenletConfiguration) -> bool {
    config
        .feature_gates
        .get(FORCE_RESTORE_FEATURE_GATE)
        .copied()
        .unwrap_or(false)
}

/// The decision settings of `controllers.shootMigration` (defaults when unset).
pub fn settings(config: &seedlet_config::GardenletConfiguration) -> decide::Settings {
    let block = config
        .controllers
        .shoot_migration
        .clone()
        .unwrap_or_default();
    decide::Settings {
        sync_period: block.sync_period.as_std(),
        grace_period: block.grace_period.as_std(),
        last_operation_stale_duration: block.last_operation_stale_duration.as_std(),
    }
}

/// Runs the controller until the leadership term ends (restarting it when the garden client is
/// swapped); switched off, it only waits for the end of the term.
pub async fn run(agent: Arc<AgentContext>) {
    if !enabled(&agent.config) {
        tracing::debug!("shoot migration reconciler off (feature gate ForceRestore)");
        agent.stop.cancelled().await;
        return;
    }
    agent
        .run_on_garden(|caches| run_on(agent.clone(), caches))
        .await;
}

async fn run_on(agent: Arc<AgentContext>, caches: Arc<GardenCaches>) {
    let garden = caches.client().clone();
    let block: ShootMigrationController = agent
        .config
        .controllers
        .shoot_migration
        .clone()
        .unwrap_or_default();
    let informer = caches.shoots().await;
    let controller = seedlet_runtime::controller::Triggers::for_stream(
        informer.applied_objects(),
        informer.store(),
    );
    let reconciler = Arc::new(ShootMigration {
        concurrency: seedlet_runtime::watch::concurrency(i64::from(block.concurrent_syncs)),
        seed_name: agent.seed_name.clone(),
        garden,
        clock: agent.clock.clone(),
        settings: settings(&agent.config),
    });
    seedlet_runtime::controller::run(
        controller,
        reconciler,
        agent.stop.clone(),
        agent.metrics.common(),
    )
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reconciler_is_off_unless_its_feature_gate_is_on() {
        let mut config = seedlet_config::GardenletConfiguration::default();
        assert!(!enabled(&config));
        config.feature_gates.insert("ForceRestore".into(), false);
        assert!(!enabled(&config));
        config.feature_gates.insert("ForceRestore".into(), true);
        assert!(enabled(&config));
        assert_eq!(
            settings(&config).grace_period,
            std::time::Duration::from_secs(7200)
        );
    }

    #[test]
    fn a_forced_restore_aborts_the_migration_and_clears_the_seed() {
        let status = reconcile::forced_restore(Some(4), "2026-01-01T00:00:00Z");
        assert_eq!(status["lastOperation"]["type"], "Migrate");
        assert_eq!(status["lastOperation"]["state"], "Aborted");
        assert_eq!(status["observedGeneration"], 4);
        assert!(status["seedName"].is_null() && status["migrationStartTime"].is_null());
    }
}
