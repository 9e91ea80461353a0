//! The garden controller's configuration: `GardenControllerConfiguration` (`seedlet.gardener.cloud/v1alpha1`).
//!
//! Field names follow gardener-controller-manager's `ControllerManagerConfiguration` where the
//! controllers overlap; `seedLifecycle` is the part of its `seed` controller that watches heartbeats.

use serde::{Deserialize, Serialize};

use crate::common::{
    ClientConnection, ConditionThreshold, LeaderElection, LogFormat, LogLevel, ServerConfiguration,
};
use crate::duration::Duration;
use crate::error::Problem;
use crate::garden_projects::{ConcurrentSyncs, EventController, ProjectController};
use crate::validate::Checker;

pub mod shoot;

/// `apiVersion` of [`GardenControllerConfiguration`].
pub const API_VERSION: &str = crate::api_versions::GARDEN_CONTROLLER;
/// `kind` of [`GardenControllerConfiguration`].
pub const KIND: &str = "GardenControllerConfiguration";

/// The garden-side controller's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GardenControllerConfiguration {
    /// Always [`API_VERSION`].
    pub api_version: String,
    /// Always [`KIND`].
    pub kind: String,
    /// How to reach the garden cluster; `kubeconfig` unset means in-cluster.
    pub garden_client_connection: ClientConnection,
    /// The controllers and their settings.
    pub controllers: GardenControllers,
    /// Leader election among replicas (lock in the garden cluster).
    pub leader_election: LeaderElection,
    /// Log threshold.
    pub log_level: LogLevel,
    /// Log format.
    pub log_format: LogFormat,
    /// Health and metrics servers.
    pub server: ServerConfiguration,
    /// The seed authorizer and SeedRestriction webhooks' HTTPS server; absent means off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<crate::garden_webhooks::GardenWebhooks>,
    /// gardener-controller-manager's feature gates seedlet acts on.
    pub feature_gates: FeatureGates,
    /// Set fields seedlet does not act on, when read from a Gardener `ControllerManagerConfiguration`.
    #[serde(skip)]
    pub ignored: Vec<String>,
}

/// `featureGates`: the gardener-controller-manager feature gates seedlet acts on, named as
/// upstream (an unknown gate is an unknown field).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FeatureGates {
    /// Maintenance disables the nginx-ingress addon of Shoots that enable it (alpha, off).
    #[serde(rename = "DisableNginxIngressInShoot")]
    pub disable_nginx_ingress_in_shoot: bool,
}

/// The `controllers` block of the garden controller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GardenControllers {
    /// Auto-approval of seed client CSRs.
    pub certificate_signing_request: CertificateSigningRequestController,
    /// Seed heartbeat monitoring.
    pub seed_lifecycle: SeedLifecycleController,
    /// ControllerInstallation scheduling from ControllerRegistrations.
    pub controller_registration: ControllerRegistrationController,
    /// The Seed `ExtensionsReady` condition.
    pub seed_extensions_check: SeedExtensionsCheckController,
    /// The ShootState finalizer.
    pub shoot_state: GardenShootStateController,
    /// The `shoot.gardener.cloud/status` label.
    pub shoot_status_label: shoot::ShootStatusLabelController,
    /// Hibernation schedules.
    pub shoot_hibernation: shoot::ShootHibernationController,
    /// Maintenance time windows.
    pub shoot_maintenance: shoot::ShootMaintenanceController,
    /// Cluster lifetimes from Quotas.
    pub shoot_quota: shoot::ShootQuotaController,
    /// Retries of rate-limited shoots.
    pub shoot_retry: shoot::ShootRetryController,
    /// Managed-seed conditions on their shoots.
    pub shoot_conditions: shoot::ShootConditionsController,
    /// The `ReadyForMigration` constraint.
    pub shoot_migration: shoot::ShootMigrationController,
    /// ManagedSeedSets.
    pub managed_seed_set: shoot::ManagedSeedSetController,
    /// The `seed-<name>` namespaces and their mirrored Secrets.
    pub seed_secrets: crate::garden_seed::SeedSecretsController,
    /// The Seed `BackupBucketsReady` condition.
    pub seed_backup_buckets_check: crate::garden_seed::SeedBackupBucketsCheckController,
    /// Bastion expiry.
    pub bastion: crate::garden_seed::GardenBastionController,
    /// CloudProfile reference protection.
    pub cloud_profile: ConcurrentSyncs,
    /// NamespacedCloudProfile protection and status.
    pub namespaced_cloud_profile: ConcurrentSyncs,
    /// SecretBinding protection and Secret labels.
    pub secret_binding: ConcurrentSyncs,
    /// CredentialsBinding protection and credential labels.
    pub credentials_binding: ConcurrentSyncs,
    /// Quota protection.
    pub quota: ConcurrentSyncs,
    /// ExposureClass protection.
    pub exposure_class: ConcurrentSyncs,
    /// Secret/ConfigMap references of ControllerDeployments.
    pub controller_deployment_reference: ConcurrentSyncs,
    /// Secret/ConfigMap references of Seeds.
    pub seed_reference: ConcurrentSyncs,
    /// Secret/ConfigMap references of Shoots.
    pub shoot_reference: ConcurrentSyncs,
    /// Projects: namespace, RBAC, quotas, phase, staleness.
    pub project: ProjectController,
    /// Event TTL for non-Shoot events; absent = off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<EventController>,
}

/// `controllers.certificateSigningRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CertificateSigningRequestController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
}

/// `controllers.seedLifecycle`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SeedLifecycleController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Check period per Seed.
    pub sync_period: Duration,
    /// Lease age after which `GardenletReady` turns `Unknown`.
    pub monitor_period: Duration,
    /// Time after that transition before the seed's shoot conditions turn `Unknown`; defaults to 5 × `monitorPeriod`.
    pub shoot_monitor_period: Duration,
}

/// `controllers.controllerRegistration`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ControllerRegistrationController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
}

/// `controllers.seedExtensionsCheck`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SeedExtensionsCheckController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Check period per Seed.
    pub sync_period: Duration,
    /// How long `ExtensionsReady` may stay `Progressing` before turning `False`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub condition_thresholds: Vec<ConditionThreshold>,
}

/// `controllers.shootState`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GardenShootStateController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
}

impl Default for GardenControllerConfiguration {
    fn default() -> Self {
        GardenControllerConfiguration {
            api_version: API_VERSION.to_owned(),
            kind: KIND.to_owned(),
            garden_client_connection: ClientConnection::default(),
            controllers: GardenControllers::default(),
            leader_election: LeaderElection::default(),
            log_level: LogLevel::default(),
            log_format: LogFormat::default(),
            server: ServerConfiguration::default(),
            webhooks: None,
            feature_gates: FeatureGates::default(),
            ignored: Vec::new(),
        }
    }
}

/// Every problem of a decoded and defaulted garden controller configuration, in field order.
pub(crate) fn validate(config: &GardenControllerConfiguration) -> Vec<Problem> {
    let mut checker = Checker::default();
    let connection = &config.garden_client_connection;
    checker.rate_limits("gardenClientConnection", connection.qps, connection.burst);
    let controllers = &config.controllers;
    checker.at_least(
        "controllers.certificateSigningRequest.concurrentSyncs",
        controllers.certificate_signing_request.concurrent_syncs,
        1,
    );
    let lifecycle = &controllers.seed_lifecycle;
    checker.at_least(
        "controllers.seedLifecycle.concurrentSyncs",
        lifecycle.concurrent_syncs,
        1,
    );
    checker.positive_duration(
        "controllers.seedLifecycle.syncPeriod",
        lifecycle.sync_period,
    );
    checker.positive_duration(
        "controllers.seedLifecycle.monitorPeriod",
        lifecycle.monitor_period,
    );
    if lifecycle.shoot_monitor_period < lifecycle.monitor_period {
        checker.report(
            "controllers.seedLifecycle.shootMonitorPeriod",
            "must not be shorter than monitorPeriod",
        );
    }
    checker.at_least(
        "controllers.controllerRegistration.concurrentSyncs",
        controllers.controller_registration.concurrent_syncs,
        1,
    );
    let extensions = &controllers.seed_extensions_check;
    checker.at_least(
        "controllers.seedExtensionsCheck.concurrentSyncs",
        extensions.concurrent_syncs,
        1,
    );
    checker.positive_duration(
        "controllers.seedExtensionsCheck.syncPeriod",
        extensions.sync_period,
    );
    checker.condition_thresholds(
        "controllers.seedExtensionsCheck.conditionThresholds",
        &extensions.condition_thresholds,
    );
    checker.at_least(
        "controllers.shootState.concurrentSyncs",
        controllers.shoot_state.concurrent_syncs,
        1,
    );
    shoot::validate(controllers, &mut checker);
    crate::garden_seed::validate(
        &mut checker,
        &controllers.seed_secrets,
        &controllers.seed_backup_buckets_check,
    );
    crate::garden_seed::validate_bastion(&mut checker, &controllers.bastion);
    crate::garden_projects::validate(
        &mut checker,
        &crate::garden_projects::Blocks {
            simple: vec![
                ("cloudProfile", &controllers.cloud_profile),
                (
                    "namespacedCloudProfile",
                    &controllers.namespaced_cloud_profile,
                ),
                ("secretBinding", &controllers.secret_binding),
                ("credentialsBinding", &controllers.credentials_binding),
                ("quota", &controllers.quota),
                ("exposureClass", &controllers.exposure_class),
                (
                    "controllerDeploymentReference",
                    &controllers.controller_deployment_reference,
                ),
                ("seedReference", &controllers.seed_reference),
                ("shootReference", &controllers.shoot_reference),
            ],
            project: &controllers.project,
            event: controllers.event.as_ref(),
        },
    );
    checker.leader_election("leaderElection", &config.leader_election);
    checker.servers("server", &config.server);
    if let Some(webhooks) = &config.webhooks {
        webhooks.validate("webhooks", &mut checker);
    }
    checker.into_problems()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::apply_garden_controller_defaults;

    fn valid() -> GardenControllerConfiguration {
        let mut config = GardenControllerConfiguration::default();
        apply_garden_controller_defaults(&mut config);
        config
    }

    fn messages(config: &GardenControllerConfiguration) -> Vec<String> {
        validate(config).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn feature_gates_are_named_as_upstream_and_unknown_ones_refused() {
        let (config, problems) = crate::decode::decode::<GardenControllerConfiguration>(
            &serde_json::json!({"featureGates": {"DisableNginxIngressInShoot": true}}),
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert!(
            config
                .expect("decoded")
                .feature_gates
                .disable_nginx_ingress_in_shoot
        );
        assert!(
            !GardenControllerConfiguration::default()
                .feature_gates
                .disable_nginx_ingress_in_shoot
        );
        let (_, problems) = crate::decode::decode::<GardenControllerConfiguration>(
            &serde_json::json!({"featureGates": {"Foo": true}}),
        );
        let messages: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(messages, ["featureGates.Foo: unknown field"]);
    }

    #[test]
    fn defaults_are_valid_and_match_the_spec() {
        let config = valid();
        assert!(messages(&config).is_empty());
        let lifecycle = &config.controllers.seed_lifecycle;
        assert_eq!(lifecycle.sync_period, Duration::from_secs(10));
        assert_eq!(lifecycle.monitor_period, Duration::from_secs(40));
        assert_eq!(lifecycle.shoot_monitor_period, Duration::from_secs(200));
        assert_eq!(
            config.controllers.seed_extensions_check.sync_period,
            Duration::from_secs(30)
        );
        assert_eq!(
            config
                .controllers
                .certificate_signing_request
                .concurrent_syncs,
            5
        );
    }

    #[test]
    fn every_zero_period_and_count_is_reported() {
        let mut config = valid();
        let controllers = &mut config.controllers;
        controllers.certificate_signing_request.concurrent_syncs = 0;
        controllers.seed_lifecycle.concurrent_syncs = 0;
        controllers.seed_lifecycle.sync_period = Duration::ZERO;
        controllers.seed_lifecycle.shoot_monitor_period = Duration::from_secs(39);
        controllers.controller_registration.concurrent_syncs = 0;
        controllers.seed_extensions_check.concurrent_syncs = 0;
        controllers.seed_extensions_check.sync_period = Duration::ZERO;
        controllers.seed_extensions_check.condition_thresholds = vec![ConditionThreshold {
            condition_type: "ExtensionsReady".into(),
            duration: Duration::ZERO,
        }];
        controllers.shoot_state.concurrent_syncs = 0;
        assert_eq!(
            messages(&config),
            [
                "controllers.certificateSigningRequest.concurrentSyncs: must be at least 1",
                "controllers.seedLifecycle.concurrentSyncs: must be at least 1",
                "controllers.seedLifecycle.syncPeriod: must be > 0",
                "controllers.seedLifecycle.shootMonitorPeriod: must not be shorter than monitorPeriod",
                "controllers.controllerRegistration.concurrentSyncs: must be at least 1",
                "controllers.seedExtensionsCheck.concurrentSyncs: must be at least 1",
                "controllers.seedExtensionsCheck.syncPeriod: must be > 0",
                "controllers.seedExtensionsCheck.conditionThresholds[0].duration: must be > 0",
                "controllers.shootState.concurrentSyncs: must be at least 1",
            ]
        );
    }
}
