//! Every default value of both configurations, in one place.
//!
//! Plain defaults are `Default` impls that serde uses for missing fields (`#[serde(default)]` on each
//! struct), so an absent block and an empty block mean the same. Defaults that differ per component
//! (lock names, ports) or derive from another field are filled by `apply_*_defaults` after decoding:
//! an empty name, port 0 or zero `shootMonitorPeriod` counts as unset there, as in Gardener.

use crate::common::{ClientConnection, LeaderElection};
use crate::duration::Duration;
use crate::garden::{
    CertificateSigningRequestController, ControllerRegistrationController,
    GardenControllerConfiguration, GardenShootStateController, SeedExtensionsCheckController,
    SeedLifecycleController,
};
use crate::gardenlet::{
    ChartLimits, ControllerInstallationCareController, ControllerInstallationController,
    ControllerInstallationRequiredController, GardenClientConnection, GardenletConfiguration,
    GardenletControllers, KubeconfigValidity, ManagedResourceController, SeedCareController,
    SeedController, ShootCareController, ShootStateController, StaleExtensionHealthChecks,
};

/// Default lock namespace of both components.
pub const LEADER_ELECTION_NAMESPACE: &str = "garden";
/// Default lock name of the agent (gardenlet's).
pub const GARDENLET_LEADER_ELECTION_NAME: &str = "gardenlet-leader-election";
/// Default lock name of the garden controller.
pub const GARDEN_CONTROLLER_LEADER_ELECTION_NAME: &str =
    "seedlet-garden-controller-leader-election";
/// Default agent health probe port (gardenlet's).
pub const GARDENLET_HEALTH_PORT: u16 = 2728;
/// Default agent metrics port (gardenlet's).
pub const GARDENLET_METRICS_PORT: u16 = 2729;
/// Default garden controller health probe port (gardener-controller-manager's).
pub const GARDEN_CONTROLLER_HEALTH_PORT: u16 = 2718;
/// Default garden controller metrics port (gardener-controller-manager's).
pub const GARDEN_CONTROLLER_METRICS_PORT: u16 = 2719;
/// `shootMonitorPeriod` defaults to this multiple of `monitorPeriod`.
pub const SHOOT_MONITOR_PERIOD_FACTOR: u32 = 5;

/// Fills the agent defaults that depend on the component.
pub fn apply_gardenlet_defaults(config: &mut GardenletConfiguration) {
    fill_leader_election(&mut config.leader_election, GARDENLET_LEADER_ELECTION_NAME);
    fill_port(&mut config.server.health_probes, GARDENLET_HEALTH_PORT);
    fill_port(&mut config.server.metrics, GARDENLET_METRICS_PORT);
}

/// Fills the garden controller defaults that depend on the component or on other fields.
pub fn apply_garden_controller_defaults(config: &mut GardenControllerConfiguration) {
    fill_leader_election(
        &mut config.leader_election,
        GARDEN_CONTROLLER_LEADER_ELECTION_NAME,
    );
    fill_port(
        &mut config.server.health_probes,
        GARDEN_CONTROLLER_HEALTH_PORT,
    );
    fill_port(&mut config.server.metrics, GARDEN_CONTROLLER_METRICS_PORT);
    if let Some(webhooks) = &mut config.webhooks {
        webhooks.apply_defaults();
    }
    let lifecycle = &mut config.controllers.seed_lifecycle;
    if lifecycle.shoot_monitor_period.is_zero() {
        lifecycle.shoot_monitor_period = lifecycle
            .monitor_period
            .saturating_mul(SHOOT_MONITOR_PERIOD_FACTOR);
    }
}

fn fill_leader_election(leader_election: &mut LeaderElection, name: &str) {
    if leader_election.resource_name.is_empty() {
        leader_election.resource_name = name.to_owned();
    }
    if leader_election.resource_namespace.is_empty() {
        leader_election.resource_namespace = LEADER_ELECTION_NAMESPACE.to_owned();
    }
}

/// Port 0 means the default, unless the server asks for any free port (`freePort`).
fn fill_port(server: &mut crate::common::Server, default: u16) {
    if server.port == 0 && !server.free_port {
        server.port = default;
    }
}

impl Default for ClientConnection {
    fn default() -> Self {
        ClientConnection {
            kubeconfig: None,
            accept_content_types: String::new(),
            content_type: String::new(),
            qps: 50.0,
            burst: 100,
        }
    }
}

impl Default for LeaderElection {
    fn default() -> Self {
        LeaderElection {
            leader_elect: true,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            resource_lock: "leases".to_owned(),
            resource_name: String::new(),
            resource_namespace: String::new(),
        }
    }
}

impl Default for GardenClientConnection {
    fn default() -> Self {
        let connection = ClientConnection::default();
        GardenClientConnection {
            kubeconfig: None,
            accept_content_types: connection.accept_content_types,
            content_type: connection.content_type,
            qps: connection.qps,
            burst: connection.burst,
            garden_cluster_address: None,
            garden_cluster_ca_cert: None,
            bootstrap_kubeconfig: None,
            bootstrap_kubeconfig_file: None,
            kubeconfig_secret: None,
            kubeconfig_validity: KubeconfigValidity::default(),
            bootstrap_approval_timeout: Duration::from_mins(15),
        }
    }
}

impl Default for KubeconfigValidity {
    fn default() -> Self {
        KubeconfigValidity {
            validity: None,
            auto_rotation_jitter_percentage_min: 70,
            auto_rotation_jitter_percentage_max: 90,
        }
    }
}

impl Default for GardenletControllers {
    fn default() -> Self {
        GardenletControllers {
            cache_sync_timeout: Duration::from_mins(2),
            controller_installation: ControllerInstallationController::default(),
            controller_installation_care: ControllerInstallationCareController::default(),
            controller_installation_required: ControllerInstallationRequiredController::default(),
            seed: SeedController::default(),
            seed_care: SeedCareController::default(),
            shoot_state: ShootStateController::default(),
            shoot_care: ShootCareController::default(),
            managed_resource: ManagedResourceController::default(),
            backup_bucket: None,
            backup_entry: None,
            bastion: None,
            gardenlet: None,
            managed_seed: None,
            network_policy: None,
            shoot: None,
            shoot_secret: None,
            shoot_state_sync: None,
            shoot_migration: None,
            shoot_status: None,
            token_requestor: None,
            token_requestor_workload_identity: None,
            vpa_eviction_requirements: None,
        }
    }
}

impl Default for ControllerInstallationController {
    fn default() -> Self {
        ControllerInstallationController {
            concurrent_syncs: 20,
            chart_limits: ChartLimits::default(),
        }
    }
}

/// The renderer's own defaults (`seedlet_chartrender::Limits::default()`; the agent tests that
/// they agree): real extension charts render well under 1 MiB in milliseconds.
impl Default for ChartLimits {
    fn default() -> Self {
        ChartLimits {
            max_entries: 5_000,
            max_total_bytes: 64 * 1024 * 1024,
            max_file_bytes: 5 * 1024 * 1024,
            max_depth: 8,
            max_value_bytes: 16 * 1024 * 1024,
            max_value_items: 1_000_000,
            max_output_bytes: 64 * 1024 * 1024,
            max_render_time: Duration::from_secs(10),
        }
    }
}

impl Default for ControllerInstallationCareController {
    fn default() -> Self {
        ControllerInstallationCareController {
            concurrent_syncs: 20,
            sync_period: Duration::from_secs(30),
        }
    }
}

impl Default for ControllerInstallationRequiredController {
    fn default() -> Self {
        ControllerInstallationRequiredController {
            concurrent_syncs: 1,
        }
    }
}

impl Default for SeedController {
    fn default() -> Self {
        SeedController {
            sync_period: Duration::from_mins(1),
            lease_resync_seconds: 2,
            lease_resync_miss_threshold: 10,
        }
    }
}

impl Default for SeedCareController {
    fn default() -> Self {
        SeedCareController {
            sync_period: Duration::from_secs(30),
            condition_thresholds: Vec::new(),
        }
    }
}

/// gardenlet's defaults (spec gardenlet-shoot-flow §8): no thresholds, no stuck check.
impl Default for ShootCareController {
    fn default() -> Self {
        ShootCareController {
            concurrent_syncs: 20,
            sync_period: Duration::from_mins(1),
            stale_extension_health_checks: StaleExtensionHealthChecks::default(),
            managed_resource_progressing_threshold: None,
            condition_thresholds: Vec::new(),
            webhook_remediator_enabled: None,
        }
    }
}

impl Default for StaleExtensionHealthChecks {
    fn default() -> Self {
        StaleExtensionHealthChecks {
            enabled: true,
            threshold: Duration::from_mins(5),
        }
    }
}

impl Default for ShootStateController {
    fn default() -> Self {
        ShootStateController {
            concurrent_syncs: 5,
            sync_period: Duration::from_hours(6),
            event_batch_period: Duration::from_millis(100),
        }
    }
}

impl Default for ManagedResourceController {
    fn default() -> Self {
        ManagedResourceController {
            enabled: true,
            concurrent_syncs: 5,
            sync_period: Duration::from_mins(1),
        }
    }
}

impl Default for CertificateSigningRequestController {
    fn default() -> Self {
        CertificateSigningRequestController {
            concurrent_syncs: 5,
        }
    }
}

impl Default for SeedLifecycleController {
    fn default() -> Self {
        SeedLifecycleController {
            concurrent_syncs: 5,
            sync_period: Duration::from_secs(10),
            monitor_period: Duration::from_secs(40),
            // Zero means "derive from monitorPeriod" (see `apply_garden_controller_defaults`).
            shoot_monitor_period: Duration::ZERO,
        }
    }
}

impl Default for ControllerRegistrationController {
    fn default() -> Self {
        ControllerRegistrationController {
            concurrent_syncs: 5,
        }
    }
}

impl Default for SeedExtensionsCheckController {
    fn default() -> Self {
        SeedExtensionsCheckController {
            concurrent_syncs: 5,
            sync_period: Duration::from_secs(30),
            condition_thresholds: Vec::new(),
        }
    }
}

impl Default for GardenShootStateController {
    fn default() -> Self {
        GardenShootStateController {
            concurrent_syncs: 5,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gardenlet_defaults_match_the_spec_table() {
        let mut config = GardenletConfiguration::default();
        apply_gardenlet_defaults(&mut config);
        let garden = &config.garden_client_connection;
        assert_eq!((garden.qps, garden.burst), (50.0, 100));
        assert_eq!(garden.kubeconfig_validity.validity, None);
        assert_eq!(
            garden
                .kubeconfig_validity
                .auto_rotation_jitter_percentage_min,
            70
        );
        assert_eq!(
            garden
                .kubeconfig_validity
                .auto_rotation_jitter_percentage_max,
            90
        );
        assert_eq!(garden.bootstrap_approval_timeout, Duration::from_mins(15));
        let le = &config.leader_election;
        assert!(le.leader_elect);
        assert_eq!(
            (le.lease_duration, le.renew_deadline, le.retry_period),
            (
                Duration::from_secs(15),
                Duration::from_secs(10),
                Duration::from_secs(2)
            )
        );
        assert_eq!(
            (
                le.resource_lock.as_str(),
                le.resource_namespace.as_str(),
                le.resource_name.as_str()
            ),
            ("leases", "garden", "gardenlet-leader-election")
        );
        assert_eq!(
            (config.server.health_probes.port, config.server.metrics.port),
            (2728, 2729)
        );
        let controllers = &config.controllers;
        assert_eq!(controllers.cache_sync_timeout, Duration::from_mins(2));
        assert_eq!(controllers.controller_installation.concurrent_syncs, 20);
        assert_eq!(
            controllers.controller_installation_care.sync_period,
            Duration::from_secs(30)
        );
        assert_eq!(
            controllers
                .controller_installation_required
                .concurrent_syncs,
            1
        );
        assert_eq!(controllers.shoot_state.sync_period, Duration::from_hours(6));
        assert_eq!(controllers.seed.sync_period, Duration::from_mins(1));
        assert_eq!(
            controllers.seed.health_grace_period(),
            Duration::from_secs(20)
        );
        assert_eq!(controllers.seed_care.sync_period, Duration::from_secs(30));
        assert!(controllers.managed_resource.enabled);
        assert_eq!(config.log_level.as_str(), "info");
        assert_eq!(config.log_format.as_str(), "json");
    }

    #[test]
    fn shoot_state_backs_up_every_six_hours_and_batches_events_per_100ms_by_default() {
        let mut config = GardenletConfiguration::default();
        apply_gardenlet_defaults(&mut config);
        let shoot_state = &config.controllers.shoot_state;
        assert_eq!(shoot_state.sync_period, Duration::from_hours(6));
        assert_eq!(shoot_state.event_batch_period, Duration::from_millis(100));
        assert_eq!(shoot_state.concurrent_syncs, 5);
    }

    #[test]
    fn explicit_names_and_ports_survive_defaulting() {
        let mut config = GardenletConfiguration::default();
        config.leader_election.resource_name = "mine".into();
        config.server.metrics.port = 9000;
        apply_gardenlet_defaults(&mut config);
        assert_eq!(config.leader_election.resource_name, "mine");
        assert_eq!(config.server.metrics.port, 9000);
    }

    #[test]
    fn free_port_keeps_port_zero_while_port_zero_alone_means_the_default() {
        let mut config = GardenletConfiguration::default();
        config.server.health_probes.free_port = true;
        apply_gardenlet_defaults(&mut config);
        assert_eq!(
            (config.server.health_probes.port, config.server.metrics.port),
            (0, GARDENLET_METRICS_PORT)
        );
        let mut config = GardenControllerConfiguration::default();
        config.server.metrics.free_port = true;
        apply_garden_controller_defaults(&mut config);
        assert_eq!(
            (config.server.health_probes.port, config.server.metrics.port),
            (GARDEN_CONTROLLER_HEALTH_PORT, 0)
        );
    }

    #[test]
    fn shoot_monitor_period_defaults_to_five_monitor_periods() {
        let mut config = GardenControllerConfiguration::default();
        apply_garden_controller_defaults(&mut config);
        assert_eq!(
            config.controllers.seed_lifecycle.shoot_monitor_period,
            Duration::from_secs(200)
        );

        let mut config = GardenControllerConfiguration::default();
        config.controllers.seed_lifecycle.monitor_period = Duration::from_mins(1);
        apply_garden_controller_defaults(&mut config);
        assert_eq!(
            config.controllers.seed_lifecycle.shoot_monitor_period,
            Duration::from_mins(5)
        );
        assert_eq!(
            config.leader_election.resource_name,
            GARDEN_CONTROLLER_LEADER_ELECTION_NAME
        );
        assert_eq!(
            (config.server.health_probes.port, config.server.metrics.port),
            (2718, 2719)
        );
    }
}
