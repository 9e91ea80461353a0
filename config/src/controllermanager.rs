//! Gardener's own `ControllerManagerConfiguration` (`controllermanager.config.gardener.cloud/v1alpha1`),
//! read unchanged by `seedlet garden` and `seedlet check-config` (spec garden-controllers §1).
//!
//! The file is decoded against Gardener's schema ([`ControllerManagerConfiguration`]: every field
//! of gardener-controller-manager is known, so a typo is an error naming its path), then turned
//! into a [`GardenControllerConfiguration`] ([`into_garden`]): blocks of controllers seedlet runs
//! map onto their seedlet counterparts (`controllers.seed` → `seedLifecycle`, the shoot
//! lifecycle blocks one to one), the rest are listed as ignored. Gardener's defaults apply where they differ from seedlet's own kind: the
//! lock is `gardener-controller-manager-leader-election`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::common::{
    ClientConnection, ConditionThreshold, LeaderElection, LogFormat, LogLevel, ServerConfiguration,
};
use crate::duration::Duration;
use crate::error::Problem;
use crate::garden::GardenControllerConfiguration;
use crate::garden_projects::{ConcurrentSyncs, EventController, ProjectController, ProjectQuota};

/// `apiVersion` of [`ControllerManagerConfiguration`].
pub const API_VERSION: &str = crate::api_versions::CONTROLLER_MANAGER;
/// `kind` of [`ControllerManagerConfiguration`].
pub const KIND: &str = "ControllerManagerConfiguration";
/// gardener-controller-manager's default lock name.
pub const LEADER_ELECTION_NAME: &str = "gardener-controller-manager-leader-election";

/// gardener-controller-manager's configuration, as Gardener defines it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ControllerManagerConfiguration {
    /// [`API_VERSION`].
    pub api_version: String,
    /// [`KIND`].
    pub kind: String,
    /// How to reach the garden.
    pub garden_client_connection: ClientConnection,
    /// The controllers.
    pub controllers: Controllers,
    /// Leader election.
    pub leader_election: Option<LeaderElection>,
    /// Log threshold.
    pub log_level: Option<LogLevel>,
    /// Log format.
    pub log_format: Option<LogFormat>,
    /// Health and metrics servers.
    pub server: ServerConfiguration,
    /// Profiling (ignored).
    pub debugging: Option<Debugging>,
    /// Feature gates (`DisableNginxIngressInShoot` is acted on, the others are ignored).
    pub feature_gates: Option<BTreeMap<String, bool>>,
}

/// `debugging`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Debugging {
    /// Profiling via the web interface.
    pub enable_profiling: Option<bool>,
    /// Lock contention profiling.
    pub enable_contention_profiling: Option<bool>,
}

/// A block with only `concurrentSyncs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Syncs {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
}

/// `concurrentSyncs` and `syncPeriod`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SyncsAndPeriod {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// Period.
    pub sync_period: Option<Duration>,
}

/// `seedExtensionsCheck` and `seedBackupBucketsCheck`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Check {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// Check period.
    pub sync_period: Option<Duration>,
    /// Condition thresholds.
    pub condition_thresholds: Option<Vec<ConditionThreshold>>,
}

/// `bastion`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Bastion {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// Longest life of a Bastion.
    pub max_lifetime: Option<Duration>,
}

/// `event`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Event {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// TTL of non-Shoot events.
    #[serde(rename = "ttlNonShootEvents")]
    pub ttl_non_shoot_events: Option<Duration>,
}

/// `project`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Project {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// Minimum lifetime in days.
    pub minimum_lifetime_days: Option<u32>,
    /// Default ResourceQuotas.
    pub quotas: Option<Vec<QuotaConfiguration>>,
    /// Stale grace period in days.
    pub stale_grace_period_days: Option<u32>,
    /// Stale expiration in days.
    pub stale_expiration_time_days: Option<u32>,
    /// Stale check period.
    pub stale_sync_period: Option<Duration>,
}

/// `project.quotas[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct QuotaConfiguration {
    /// A `v1` ResourceQuota.
    pub config: Value,
    /// Project label selector.
    pub project_selector: Option<Value>,
}

/// `seed`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Seed {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// Lease age after which `GardenletReady` turns `Unknown`.
    pub monitor_period: Option<Duration>,
    /// Time before the seed's shoot conditions turn `Unknown`.
    pub shoot_monitor_period: Option<Duration>,
    /// Check period.
    pub sync_period: Option<Duration>,
}

/// `shootMaintenance`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootMaintenance {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// Restart control-plane pods during maintenance.
    pub enable_shoot_control_plane_restarter: Option<bool>,
    /// Restart core addons during maintenance.
    pub enable_shoot_core_addon_restarter: Option<bool>,
}

/// `shootHibernation`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootHibernation {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// How late a missed schedule may still fire.
    pub trigger_deadline_duration: Option<Duration>,
}

/// `shootRetry`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ShootRetry {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// Retry period.
    pub retry_period: Option<Duration>,
    /// Retry jitter.
    pub retry_jitter_period: Option<Duration>,
}

/// `managedSeedSet`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ManagedSeedSet {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<u32>,
    /// Retries of a failed shoot.
    pub max_shoot_retries: Option<u32>,
    /// Period.
    pub sync_period: Option<Duration>,
}

/// `controllers`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Controllers {
    /// Bastion expiry.
    pub bastion: Option<Bastion>,
    /// CSR approval.
    pub certificate_signing_request: Option<Syncs>,
    /// CloudProfile protection.
    pub cloud_profile: Option<Syncs>,
    /// NamespacedCloudProfile protection and status.
    pub namespaced_cloud_profile: Option<Syncs>,
    /// ControllerDeployment finalizer.
    pub controller_deployment: Option<Syncs>,
    /// ControllerDeployment references.
    pub controller_deployment_reference: Option<Syncs>,
    /// ControllerInstallation scheduling.
    pub controller_registration: Option<Syncs>,
    /// Event TTL.
    pub event: Option<Event>,
    /// ExposureClass protection.
    pub exposure_class: Option<Syncs>,
    /// Projects.
    pub project: Option<Project>,
    /// Quota protection.
    pub quota: Option<Syncs>,
    /// SecretBinding protection.
    pub secret_binding: Option<Syncs>,
    /// CredentialsBinding protection.
    pub credentials_binding: Option<Syncs>,
    /// Seed lifecycle.
    pub seed: Option<Seed>,
    /// Seed `ExtensionsReady`.
    pub seed_extensions_check: Option<Check>,
    /// Seed `BackupBucketsReady`.
    pub seed_backup_buckets_check: Option<Check>,
    /// Seed references.
    pub seed_reference: Option<Syncs>,
    /// Shoot maintenance.
    pub shoot_maintenance: Option<ShootMaintenance>,
    /// Shoot quota.
    pub shoot_quota: Option<SyncsAndPeriod>,
    /// Shoot hibernation.
    pub shoot_hibernation: Option<ShootHibernation>,
    /// Shoot references.
    pub shoot_reference: Option<Syncs>,
    /// Shoot retry.
    pub shoot_retry: Option<ShootRetry>,
    /// Shoot conditions.
    pub shoot_conditions: Option<Syncs>,
    /// Shoot status label.
    pub shoot_status_label: Option<Syncs>,
    /// Shoot migration.
    pub shoot_migration: Option<Syncs>,
    /// ManagedSeedSets.
    pub managed_seed_set: Option<ManagedSeedSet>,
    /// ShootState finalizer.
    pub shoot_state: Option<Syncs>,
    /// Cache sync timeout (ignored).
    pub cache_sync_timeout: Option<Duration>,
}

/// `block.concurrentSyncs` onto `target` when set.
fn syncs(target: &mut u32, block: Option<&Syncs>) {
    if let Some(value) = block.and_then(|b| b.concurrent_syncs) {
        *target = value;
    }
}

fn syncs_block(block: Option<&Syncs>) -> ConcurrentSyncs {
    let mut out = ConcurrentSyncs::default();
    syncs(&mut out.concurrent_syncs, block);
    out
}

/// The seedlet configuration for `config`, and the paths of set fields seedlet does not act on.
pub fn into_garden(
    config: &ControllerManagerConfiguration,
) -> (GardenControllerConfiguration, Vec<String>) {
    let mut out = GardenControllerConfiguration {
        api_version: API_VERSION.to_owned(),
        kind: KIND.to_owned(),
        garden_client_connection: config.garden_client_connection.clone(),
        server: config.server.clone(),
        ..GardenControllerConfiguration::default()
    };
    let mut election = config.leader_election.clone().unwrap_or_default();
    if election.resource_name.is_empty() {
        election.resource_name = LEADER_ELECTION_NAME.to_owned();
    }
    out.leader_election = election;
    if let Some(level) = config.log_level {
        out.log_level = level;
    }
    if let Some(format) = config.log_format {
        out.log_format = format;
    }
    let c = &config.controllers;
    let target = &mut out.controllers;
    syncs(
        &mut target.certificate_signing_request.concurrent_syncs,
        c.certificate_signing_request.as_ref(),
    );
    syncs(
        &mut target.controller_registration.concurrent_syncs,
        c.controller_registration.as_ref(),
    );
    syncs(
        &mut target.shoot_state.concurrent_syncs,
        c.shoot_state.as_ref(),
    );
    if let Some(seed) = &c.seed {
        let lifecycle = &mut target.seed_lifecycle;
        if let Some(value) = seed.concurrent_syncs {
            lifecycle.concurrent_syncs = value;
        }
        if let Some(value) = seed.sync_period {
            lifecycle.sync_period = value;
        }
        if let Some(value) = seed.monitor_period {
            lifecycle.monitor_period = value;
        }
        // Zero: derived from monitorPeriod by the defaults, as upstream.
        lifecycle.shoot_monitor_period = seed.shoot_monitor_period.unwrap_or(Duration::ZERO);
    }
    if let Some(check) = &c.seed_extensions_check {
        let target = &mut target.seed_extensions_check;
        if let Some(value) = check.concurrent_syncs {
            target.concurrent_syncs = value;
        }
        if let Some(value) = check.sync_period {
            target.sync_period = value;
        }
        if let Some(value) = &check.condition_thresholds {
            target.condition_thresholds = value.clone();
        }
    }
    target.cloud_profile = syncs_block(c.cloud_profile.as_ref());
    target.namespaced_cloud_profile = syncs_block(c.namespaced_cloud_profile.as_ref());
    target.secret_binding = syncs_block(c.secret_binding.as_ref());
    target.credentials_binding = syncs_block(c.credentials_binding.as_ref());
    target.quota = syncs_block(c.quota.as_ref());
    target.exposure_class = syncs_block(c.exposure_class.as_ref());
    target.controller_deployment_reference =
        syncs_block(c.controller_deployment_reference.as_ref());
    target.seed_reference = syncs_block(c.seed_reference.as_ref());
    target.shoot_reference = syncs_block(c.shoot_reference.as_ref());
    if let Some(project) = &c.project {
        target.project = project_block(project);
    }
    shoot_blocks(c, target);
    seed_blocks(c, target);
    target.event = c.event.as_ref().map(|event| {
        let mut block = EventController::default();
        if let Some(value) = event.concurrent_syncs {
            block.concurrent_syncs = value;
        }
        if let Some(value) = event.ttl_non_shoot_events {
            block.ttl_non_shoot_events = value;
        }
        block
    });
    if let Some(&disable) = config
        .feature_gates
        .as_ref()
        .and_then(|gates| gates.get(DISABLE_NGINX_INGRESS_IN_SHOOT))
    {
        out.feature_gates.disable_nginx_ingress_in_shoot = disable;
    }
    (out, ignored(config))
}

/// The feature gate seedlet's maintenance acts on.
const DISABLE_NGINX_INGRESS_IN_SHOOT: &str = "DisableNginxIngressInShoot";

/// `value` onto `target` when set.
fn set<T: Clone>(target: &mut T, value: Option<&T>) {
    if let Some(value) = value {
        *target = value.clone();
    }
}

/// The seed-side blocks seedlet's garden controller runs (same names and fields).
fn seed_blocks(c: &Controllers, target: &mut crate::garden::GardenControllers) {
    if let Some(block) = &c.bastion {
        let t = &mut target.bastion;
        set(&mut t.concurrent_syncs, block.concurrent_syncs.as_ref());
        set(&mut t.max_lifetime, block.max_lifetime.as_ref());
    }
    if let Some(block) = &c.seed_backup_buckets_check {
        let t = &mut target.seed_backup_buckets_check;
        set(&mut t.concurrent_syncs, block.concurrent_syncs.as_ref());
        set(&mut t.sync_period, block.sync_period.as_ref());
        set(
            &mut t.condition_thresholds,
            block.condition_thresholds.as_ref(),
        );
    }
}

/// The shoot lifecycle blocks (same names and fields in both formats).
fn shoot_blocks(c: &Controllers, target: &mut crate::garden::GardenControllers) {
    syncs(
        &mut target.shoot_status_label.concurrent_syncs,
        c.shoot_status_label.as_ref(),
    );
    syncs(
        &mut target.shoot_conditions.concurrent_syncs,
        c.shoot_conditions.as_ref(),
    );
    syncs(
        &mut target.shoot_migration.concurrent_syncs,
        c.shoot_migration.as_ref(),
    );
    if let Some(block) = &c.shoot_hibernation {
        let t = &mut target.shoot_hibernation;
        set(&mut t.concurrent_syncs, block.concurrent_syncs.as_ref());
        set(
            &mut t.trigger_deadline_duration,
            block.trigger_deadline_duration.as_ref(),
        );
    }
    if let Some(block) = &c.shoot_maintenance {
        let t = &mut target.shoot_maintenance;
        set(&mut t.concurrent_syncs, block.concurrent_syncs.as_ref());
        set(
            &mut t.enable_shoot_control_plane_restarter,
            block.enable_shoot_control_plane_restarter.as_ref(),
        );
        set(
            &mut t.enable_shoot_core_addon_restarter,
            block.enable_shoot_core_addon_restarter.as_ref(),
        );
    }
    if let Some(block) = &c.shoot_quota {
        let t = &mut target.shoot_quota;
        set(&mut t.concurrent_syncs, block.concurrent_syncs.as_ref());
        set(&mut t.sync_period, block.sync_period.as_ref());
    }
    if let Some(block) = &c.shoot_retry {
        let t = &mut target.shoot_retry;
        set(&mut t.concurrent_syncs, block.concurrent_syncs.as_ref());
        set(&mut t.retry_period, block.retry_period.as_ref());
        set(
            &mut t.retry_jitter_period,
            block.retry_jitter_period.as_ref(),
        );
    }
    if let Some(block) = &c.managed_seed_set {
        let t = &mut target.managed_seed_set;
        set(&mut t.concurrent_syncs, block.concurrent_syncs.as_ref());
        set(&mut t.max_shoot_retries, block.max_shoot_retries.as_ref());
        set(&mut t.sync_period, block.sync_period.as_ref());
    }
}

fn project_block(project: &Project) -> ProjectController {
    let mut block = ProjectController::default();
    if let Some(value) = project.concurrent_syncs {
        block.concurrent_syncs = value;
    }
    if let Some(value) = project.minimum_lifetime_days {
        block.minimum_lifetime_days = value;
    }
    if let Some(value) = project.stale_grace_period_days {
        block.stale_grace_period_days = value;
    }
    if let Some(value) = project.stale_expiration_time_days {
        block.stale_expiration_time_days = value;
    }
    if let Some(value) = project.stale_sync_period {
        block.stale_sync_period = value;
    }
    block.quotas = project
        .quotas
        .iter()
        .flatten()
        .map(|quota| ProjectQuota {
            config: quota.config.clone(),
            project_selector: quota.project_selector.clone(),
        })
        .collect();
    block
}

/// Paths of the set fields seedlet does not act on: controllers it does not run, and process
/// settings it has no counterpart for.
fn ignored(config: &ControllerManagerConfiguration) -> Vec<String> {
    let c = &config.controllers;
    let paths = [
        (
            "controllers.controllerDeployment",
            c.controller_deployment.is_some(),
        ),
        (
            "controllers.cacheSyncTimeout",
            c.cache_sync_timeout.is_some(),
        ),
        ("debugging", config.debugging.is_some()),
    ];
    let gates = config
        .feature_gates
        .iter()
        .flatten()
        .filter(|(gate, _)| *gate != DISABLE_NGINX_INGRESS_IN_SHOOT)
        .map(|(gate, _)| format!("featureGates.{gate}"));
    paths
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(path, _)| path.to_owned())
        .chain(gates)
        .collect()
}

/// Validation problems of the converted configuration, with seedlet's field names turned back
/// into Gardener's (`controllers.seedLifecycle.*` → `controllers.seed.*`).
pub(crate) fn validate(config: &GardenControllerConfiguration) -> Vec<Problem> {
    crate::garden::validate(config)
        .into_iter()
        .map(|problem| {
            let path = match problem.path.strip_prefix("controllers.seedLifecycle") {
                Some(rest) => format!("controllers.seed{rest}"),
                None => problem.path,
            };
            Problem::new(path, problem.message)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_map_onto_seedlet_and_absent_event_stays_off() {
        let config: ControllerManagerConfiguration = serde_json::from_value(serde_json::json!({
            "apiVersion": API_VERSION, "kind": KIND,
            "controllers": {
                "seed": {"syncPeriod": "20s", "monitorPeriod": "1m"},
                "cloudProfile": {"concurrentSyncs": 3},
                "project": {"minimumLifetimeDays": 7, "quotas": [{"config": {"spec": {"hard": {"cpu": "1"}}}}]},
                "shootHibernation": {"triggerDeadlineDuration": "2h"}
            },
            "featureGates": {"X": true, "DisableNginxIngressInShoot": true}
        }))
        .expect("decodes");
        let (garden, ignored) = into_garden(&config);
        assert_eq!(
            garden.controllers.seed_lifecycle.sync_period,
            Duration::from_secs(20)
        );
        assert_eq!(
            garden.controllers.seed_lifecycle.monitor_period,
            Duration::from_secs(60)
        );
        assert_eq!(garden.controllers.cloud_profile.concurrent_syncs, 3);
        assert_eq!(garden.controllers.quota.concurrent_syncs, 5);
        assert_eq!(garden.controllers.project.minimum_lifetime_days, 7);
        assert_eq!(garden.controllers.project.stale_grace_period_days, 14);
        assert_eq!(garden.controllers.project.quotas.len(), 1);
        assert_eq!(garden.controllers.event, None);
        assert_eq!(garden.leader_election.resource_name, LEADER_ELECTION_NAME);
        assert_eq!(ignored, ["featureGates.X"]);
        assert!(garden.feature_gates.disable_nginx_ingress_in_shoot);
        assert_eq!(
            garden
                .controllers
                .shoot_hibernation
                .trigger_deadline_duration,
            Duration::from_hours(2)
        );
    }
}
