//! `controllers` of the agent: the ones seedlet runs, plus gardenlet's others, accepted and ignored.

use serde::{Deserialize, Serialize};

use crate::common::ConditionThreshold;
use crate::duration::Duration;
use crate::gardenlet::ignored::{
    BackupEntryController, ConcurrentSyncsController, ManagedSeedController,
    NetworkPolicyController, ShootController, SyncPeriodController,
    TokenRequestorWorkloadIdentityController,
};

/// The `controllers` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GardenletControllers {
    /// How long a controller waits for its caches to sync before giving up.
    pub cache_sync_timeout: Duration,
    /// Installs extension charts for ControllerInstallations of this seed.
    pub controller_installation: ControllerInstallationController,
    /// Reports ControllerInstallation health from their ManagedResources.
    pub controller_installation_care: ControllerInstallationCareController,
    /// Marks ControllerInstallations required when extension objects need them.
    pub controller_installation_required: ControllerInstallationRequiredController,
    /// Seed registration and heartbeat.
    pub seed: SeedController,
    /// Seed system component health.
    pub seed_care: SeedCareController,
    /// Periodic ShootState backups into the garden.
    pub shoot_state: ShootStateController,
    /// Shoot health conditions and constraints from what the seed shows.
    pub shoot_care: ShootCareController,
    /// Seedlet extension: applies ManagedResources of class `seed` itself (off where gardener-resource-manager runs).
    pub managed_resource: ManagedResourceController,

    /// BackupBucket controller: `concurrentSyncs` (default 20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_bucket: Option<ConcurrentSyncsController>,
    /// BackupEntry controller: `concurrentSyncs` (20), `deletionGracePeriodHours`,
    /// `deletionGracePeriodShootPurposes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_entry: Option<BackupEntryController>,
    /// Bastion controller: `concurrentSyncs` (default 20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bastion: Option<ConcurrentSyncsController>,
    /// Ignored by seedlet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gardenlet: Option<SyncPeriodController>,
    /// Ignored by seedlet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managed_seed: Option<ManagedSeedController>,
    /// NetworkPolicy controller: `concurrentSyncs` (default 5) and
    /// `additionalNamespaceSelectors` (namespaces that get every policy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_policy: Option<NetworkPolicyController>,
    /// The Cluster sync takes `syncPeriod` and `concurrentSyncs` from here; the other fields
    /// steer gardenlet's shoot reconciliation and are ignored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shoot: Option<ShootController>,
    /// gardenlet ≤ v1.65's Migration reconciler (removed upstream in v1.66); runs only with
    /// feature gate `ForceRestore`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shoot_migration: Option<super::ShootMigrationController>,
    /// Ignored by seedlet (older gardenlets; seedlet's secret persistence is part of `shootState`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shoot_secret: Option<ConcurrentSyncsController>,
    /// Ignored by seedlet (older gardenlets; seedlet's extension state sync is part of `shootState`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shoot_state_sync: Option<ConcurrentSyncsController>,
    /// Ignored by seedlet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shoot_status: Option<ConcurrentSyncsController>,
    /// Ignored by seedlet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_requestor: Option<ConcurrentSyncsController>,
    /// Ignored by seedlet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_requestor_workload_identity: Option<TokenRequestorWorkloadIdentityController>,
    /// Ignored by seedlet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vpa_eviction_requirements: Option<ConcurrentSyncsController>,
}

/// `controllers.controllerInstallation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ControllerInstallationController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Seedlet extension: bounds on loading and rendering each extension chart.
    pub chart_limits: ChartLimits,
}

/// `controllers.controllerInstallation.chartLimits`: what one extension chart may take to load
/// and render (seedlet renders charts in the agent's process, so a hostile chart must not be able
/// to exhaust its memory or time). Over a bound the ControllerInstallation becomes `Valid=False`
/// with reason `ChartCannotBeRendered`; `docs/limits.md` explains each one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ChartLimits {
    /// Files, directories and headers of the archive, over all nested subchart archives.
    pub max_entries: u64,
    /// Decompressed bytes of the archive, over all nested subchart archives.
    pub max_total_bytes: u64,
    /// Bytes of a single file of the chart.
    pub max_file_bytes: u64,
    /// Nesting of `charts/*.tgz` archives inside archives.
    pub max_depth: u64,
    /// Bytes of any string a template builds.
    pub max_value_bytes: u64,
    /// Elements of any list or map a template builds.
    pub max_value_items: u64,
    /// Bytes of all rendered files of the chart together.
    pub max_output_bytes: u64,
    /// Wall-clock time of one render of the chart.
    pub max_render_time: Duration,
}

/// `controllers.controllerInstallationCare`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ControllerInstallationCareController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Requeue period, reconcile timeout and maximum backoff.
    pub sync_period: Duration,
}

/// `controllers.controllerInstallationRequired`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ControllerInstallationRequiredController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
}

/// `controllers.seed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SeedController {
    /// Requeue period after a successful Seed reconcile.
    pub sync_period: Duration,
    /// Lease renewal period in seconds (also the lease duration and the heartbeat timeout).
    pub lease_resync_seconds: u32,
    /// Missed renewals before the agent reports itself unhealthy.
    pub lease_resync_miss_threshold: u32,
}

impl SeedController {
    /// The lease renewal period.
    pub fn lease_resync_period(&self) -> Duration {
        Duration::from_secs(u64::from(self.lease_resync_seconds))
    }

    /// How long the heartbeat may be stuck before `/healthz` fails (`leaseResyncSeconds × leaseResyncMissThreshold`).
    pub fn health_grace_period(&self) -> Duration {
        self.lease_resync_period()
            .saturating_mul(self.lease_resync_miss_threshold)
    }
}

/// `controllers.seedCare`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SeedCareController {
    /// Health check period.
    pub sync_period: Duration,
    /// How long failing conditions may stay `Progressing`, per condition type.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub condition_thresholds: Vec<ConditionThreshold>,
}

/// `controllers.shootState`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootStateController {
    /// Parallel reconciles; 0 switches the periodic backup off, as in gardenlet.
    pub concurrent_syncs: u32,
    /// Backup interval per shoot.
    pub sync_period: Duration,
    /// Seedlet extension: the event-driven sync (extension `status.state`/`status.resources`
    /// and persisted Secrets) writes each ShootState at most once per this period, so bursts of
    /// changes coalesce into few writes.
    pub event_batch_period: Duration,
}

/// `controllers.shootCare`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootCareController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Health check period, also the reconcile timeout and the maximum backoff.
    pub sync_period: Duration,
    /// When extension health reports count as outdated.
    pub stale_extension_health_checks: StaleExtensionHealthChecks,
    /// How long a ManagedResource may report `ResourcesProgressing=True` before it counts as stuck;
    /// unset tolerates any duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managed_resource_progressing_threshold: Option<Duration>,
    /// How long failing conditions may stay `Progressing`, per condition type.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub condition_thresholds: Vec<ConditionThreshold>,
    /// Ignored by seedlet: it has no shoot API access, so there are no shoot webhooks to remediate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_remediator_enabled: Option<bool>,
}

/// `controllers.shootCare.staleExtensionHealthChecks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StaleExtensionHealthChecks {
    /// Whether an extension's health report counts only while its controller's heartbeat is fresh.
    pub enabled: bool,
    /// Age of the heartbeat after which the report counts as outdated.
    pub threshold: Duration,
}

/// `controllers.managedResource` (seedlet extension).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ManagedResourceController {
    /// Whether the agent applies ManagedResources of class `seed` itself.
    pub enabled: bool,
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Requeue period (re-apply and health check).
    pub sync_period: Duration,
}

impl GardenletControllers {
    /// Names (under `controllers.`) of the configured controllers seedlet does not run.
    pub fn ignored_fields(&self) -> Vec<String> {
        let shoot = self
            .shoot
            .iter()
            .flat_map(ShootController::ignored_fields)
            .map(|field| format!("shoot.{field}"));
        let mut ignored: Vec<String> = [
            ("gardenlet", self.gardenlet.is_some()),
            ("managedSeed", self.managed_seed.is_some()),
            (
                "shootCare.webhookRemediatorEnabled",
                self.shoot_care.webhook_remediator_enabled.is_some(),
            ),
            ("shootSecret", self.shoot_secret.is_some()),
            ("shootStateSync", self.shoot_state_sync.is_some()),
            ("shootStatus", self.shoot_status.is_some()),
            ("tokenRequestor", self.token_requestor.is_some()),
            (
                "tokenRequestorWorkloadIdentity",
                self.token_requestor_workload_identity.is_some(),
            ),
            (
                "vpaEvictionRequirements",
                self.vpa_eviction_requirements.is_some(),
            ),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(name, _)| name.to_owned())
        .chain(shoot)
        .collect();
        ignored.sort();
        ignored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_grace_period_is_resync_times_miss_threshold() {
        let seed = SeedController {
            sync_period: Duration::from_mins(1),
            lease_resync_seconds: 2,
            lease_resync_miss_threshold: 10,
        };
        assert_eq!(seed.lease_resync_period(), Duration::from_secs(2));
        assert_eq!(seed.health_grace_period(), Duration::from_secs(20));
    }
}
