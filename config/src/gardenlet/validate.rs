//! Validation of a decoded and defaulted [`GardenletConfiguration`]; returns every problem with its path.

use crate::duration::Duration;
use crate::error::Problem;
use crate::gardenlet::{
    ChartLimits, GardenClientConnection, GardenletConfiguration, GardenletControllers, Resources,
    SeedTemplate,
};
use crate::validate::Checker;

/// The shortest client certificate validity gardenlet accepts.
const MINIMUM_VALIDITY: Duration = Duration::from_mins(10);

/// Every problem of `config`, in field order.
pub(crate) fn validate(config: &GardenletConfiguration) -> Vec<Problem> {
    let mut checker = Checker::default();
    garden_client_connection(&mut checker, &config.garden_client_connection);
    let seed = &config.seed_client_connection;
    checker.rate_limits("seedClientConnection", seed.qps, seed.burst);
    controllers(&mut checker, &config.controllers);
    if let Some(resources) = &config.resources {
        resources_rules(&mut checker, resources);
    }
    checker.leader_election("leaderElection", &config.leader_election);
    checker.servers("server", &config.server);
    match &config.seed_config {
        Some(seed_config) => seed_template(&mut checker, seed_config),
        None => checker.report("seedConfig", "required (the Seed this agent registers)"),
    }
    checker.into_problems()
}

fn garden_client_connection(checker: &mut Checker, garden: &GardenClientConnection) {
    const PATH: &str = "gardenClientConnection";
    checker.rate_limits(PATH, garden.qps, garden.burst);
    if let Some(reference) = &garden.bootstrap_kubeconfig {
        checker.secret_reference(&format!("{PATH}.bootstrapKubeconfig"), reference);
        if garden.bootstrap_kubeconfig_file.is_some() {
            checker.report(
                format!("{PATH}.bootstrapKubeconfigFile"),
                "must not be set together with bootstrapKubeconfig",
            );
        }
    }
    let bootstraps =
        garden.bootstrap_kubeconfig.is_some() || garden.bootstrap_kubeconfig_file.is_some();
    if bootstraps && garden.kubeconfig_secret.is_none() {
        let field = if garden.bootstrap_kubeconfig.is_some() {
            "bootstrapKubeconfig"
        } else {
            "bootstrapKubeconfigFile"
        };
        checker.report(
            format!("{PATH}.{field}"),
            "requires kubeconfigSecret (where the issued kubeconfig is stored)",
        );
    }
    if let Some(reference) = &garden.kubeconfig_secret {
        checker.secret_reference(&format!("{PATH}.kubeconfigSecret"), reference);
    }
    let validity = &garden.kubeconfig_validity;
    if let Some(value) = validity.validity
        && value < MINIMUM_VALIDITY
    {
        checker.report(
            format!("{PATH}.kubeconfigValidity.validity"),
            "must be at least 10m",
        );
    }
    let (min, max) = (
        validity.auto_rotation_jitter_percentage_min,
        validity.auto_rotation_jitter_percentage_max,
    );
    if min < 1 {
        checker.report(
            format!("{PATH}.kubeconfigValidity.autoRotationJitterPercentageMin"),
            "must be at least 1",
        );
    }
    if max > 100 {
        checker.report(
            format!("{PATH}.kubeconfigValidity.autoRotationJitterPercentageMax"),
            "must be at most 100",
        );
    }
    if min >= max {
        checker.report(
            format!("{PATH}.kubeconfigValidity.autoRotationJitterPercentageMin"),
            "must be less than autoRotationJitterPercentageMax",
        );
    }
    checker.positive_duration(
        &format!("{PATH}.bootstrapApprovalTimeout"),
        garden.bootstrap_approval_timeout,
    );
}

/// Every chart limit must allow something: a zero would fail every chart.
fn chart_limits(checker: &mut Checker, limits: &ChartLimits) {
    let prefix = "controllers.controllerInstallation.chartLimits";
    for (field, value) in [
        ("maxEntries", limits.max_entries),
        ("maxTotalBytes", limits.max_total_bytes),
        ("maxFileBytes", limits.max_file_bytes),
        ("maxDepth", limits.max_depth),
        ("maxValueBytes", limits.max_value_bytes),
        ("maxValueItems", limits.max_value_items),
        ("maxOutputBytes", limits.max_output_bytes),
    ] {
        if value == 0 {
            checker.report(format!("{prefix}.{field}"), "must be at least 1");
        }
    }
    checker.positive_duration(&format!("{prefix}.maxRenderTime"), limits.max_render_time);
}

fn controllers(checker: &mut Checker, controllers: &GardenletControllers) {
    checker.positive_duration(
        "controllers.cacheSyncTimeout",
        controllers.cache_sync_timeout,
    );
    checker.at_least(
        "controllers.controllerInstallation.concurrentSyncs",
        controllers.controller_installation.concurrent_syncs,
        1,
    );
    chart_limits(checker, &controllers.controller_installation.chart_limits);
    let care = &controllers.controller_installation_care;
    checker.at_least(
        "controllers.controllerInstallationCare.concurrentSyncs",
        care.concurrent_syncs,
        1,
    );
    checker.positive_duration(
        "controllers.controllerInstallationCare.syncPeriod",
        care.sync_period,
    );
    checker.at_least(
        "controllers.controllerInstallationRequired.concurrentSyncs",
        controllers
            .controller_installation_required
            .concurrent_syncs,
        1,
    );
    let seed = &controllers.seed;
    checker.positive_duration("controllers.seed.syncPeriod", seed.sync_period);
    checker.at_least(
        "controllers.seed.leaseResyncSeconds",
        seed.lease_resync_seconds,
        1,
    );
    checker.at_least(
        "controllers.seed.leaseResyncMissThreshold",
        seed.lease_resync_miss_threshold,
        1,
    );
    checker.positive_duration(
        "controllers.seedCare.syncPeriod",
        controllers.seed_care.sync_period,
    );
    checker.condition_thresholds(
        "controllers.seedCare.conditionThresholds",
        &controllers.seed_care.condition_thresholds,
    );
    checker.positive_duration(
        "controllers.shootState.syncPeriod",
        controllers.shoot_state.sync_period,
    );
    shoot_care_rules(checker, &controllers.shoot_care);
    if let Some(chart) = controllers
        .shoot
        .as_ref()
        .and_then(|shoot| shoot.control_plane_chart.as_ref())
    {
        for (field, message) in super::ignored::control_plane_chart_problems(chart) {
            checker.report(field, message);
        }
    }
    super::backup::validate_backup_entry(checker, controllers.backup_entry.as_ref());
    super::network_policy::validate_network_policy(checker, controllers.network_policy.as_ref());
    let managed = &controllers.managed_resource;
    if managed.enabled {
        checker.at_least(
            "controllers.managedResource.concurrentSyncs",
            managed.concurrent_syncs,
            1,
        );
        checker.positive_duration(
            "controllers.managedResource.syncPeriod",
            managed.sync_period,
        );
    }
}

fn shoot_care_rules(checker: &mut Checker, care: &super::ShootCareController) {
    checker.at_least(
        "controllers.shootCare.concurrentSyncs",
        care.concurrent_syncs,
        1,
    );
    checker.positive_duration("controllers.shootCare.syncPeriod", care.sync_period);
    if care.stale_extension_health_checks.enabled {
        checker.positive_duration(
            "controllers.shootCare.staleExtensionHealthChecks.threshold",
            care.stale_extension_health_checks.threshold,
        );
    }
    if let Some(threshold) = care.managed_resource_progressing_threshold {
        checker.positive_duration(
            "controllers.shootCare.managedResourceProgressingThreshold",
            threshold,
        );
    }
    checker.condition_thresholds(
        "controllers.shootCare.conditionThresholds",
        &care.condition_thresholds,
    );
}

fn resources_rules(checker: &mut Checker, resources: &Resources) {
    for (name, quantity) in resources
        .capacity
        .iter()
        .map(|(name, q)| (format!("resources.capacity.{name}"), q))
    {
        if let Err(error) = quantity.value() {
            checker.report(name, error.to_string());
        }
    }
    for (resource, reserved) in &resources.reserved {
        let path = format!("resources.reserved.{resource}");
        let reserved_value = match reserved.value() {
            Ok(value) => value,
            Err(error) => {
                checker.report(path, error.to_string());
                continue;
            }
        };
        match resources
            .capacity
            .get(resource)
            .map(|capacity| capacity.value())
        {
            None => checker.report(path, "reserved without a capacity for this resource"),
            Some(Ok(capacity)) if reserved_value > capacity => {
                checker.report(
                    path,
                    format!("must not exceed capacity {}", resources.capacity[resource]),
                );
            }
            Some(_) => {}
        }
    }
}

fn seed_template(checker: &mut Checker, seed: &SeedTemplate) {
    match seed.metadata.name.as_deref() {
        None | Some("") => checker.report("seedConfig.metadata.name", "required"),
        Some(name) => checker.dns_subdomain("seedConfig.metadata.name", name),
    }
    super::seed_spec::check(checker, &seed.spec);
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde_json::json;

    use super::*;
    use crate::common::{ConditionThreshold, SecretReference};
    use crate::defaults::apply_gardenlet_defaults;
    use crate::quantity::Quantity;

    fn valid() -> GardenletConfiguration {
        let mut config = GardenletConfiguration::default();
        apply_gardenlet_defaults(&mut config);
        config.seed_config = Some(SeedTemplate {
            metadata: ObjectMeta {
                name: Some("local".into()),
                ..ObjectMeta::default()
            },
            spec: json!({
                "provider": {"type": "local", "region": "local"},
                "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
            }),
        });
        config
    }

    fn messages(config: &GardenletConfiguration) -> Vec<String> {
        validate(config).iter().map(ToString::to_string).collect()
    }

    fn reference(name: &str, namespace: &str) -> SecretReference {
        SecretReference {
            name: name.into(),
            namespace: namespace.into(),
        }
    }

    #[test]
    fn defaults_are_valid() {
        assert!(messages(&valid()).is_empty());
    }

    #[test]
    fn validity_must_be_at_least_ten_minutes() {
        let mut config = valid();
        config.garden_client_connection.kubeconfig_validity.validity = Some(Duration::from_mins(5));
        assert_eq!(
            messages(&config),
            ["gardenClientConnection.kubeconfigValidity.validity: must be at least 10m"]
        );
        config.garden_client_connection.kubeconfig_validity.validity =
            Some(Duration::from_mins(10));
        assert!(messages(&config).is_empty());
    }

    #[test]
    fn jitter_min_must_be_positive_and_below_max_and_max_at_most_100() {
        let mut config = valid();
        let validity = &mut config.garden_client_connection.kubeconfig_validity;
        validity.auto_rotation_jitter_percentage_min = 90;
        validity.auto_rotation_jitter_percentage_max = 90;
        assert_eq!(
            messages(&config),
            [
                "gardenClientConnection.kubeconfigValidity.autoRotationJitterPercentageMin: must be less than autoRotationJitterPercentageMax"
            ]
        );
        let validity = &mut config.garden_client_connection.kubeconfig_validity;
        validity.auto_rotation_jitter_percentage_min = 0;
        validity.auto_rotation_jitter_percentage_max = 101;
        assert_eq!(
            messages(&config),
            [
                "gardenClientConnection.kubeconfigValidity.autoRotationJitterPercentageMin: must be at least 1",
                "gardenClientConnection.kubeconfigValidity.autoRotationJitterPercentageMax: must be at most 100",
            ]
        );
    }

    #[test]
    fn bootstrap_sources_are_exclusive_and_need_a_kubeconfig_secret() {
        let mut config = valid();
        config.garden_client_connection.bootstrap_kubeconfig = Some(reference("boot", "garden"));
        config.garden_client_connection.bootstrap_kubeconfig_file = Some("/boot".into());
        assert_eq!(
            messages(&config),
            [
                "gardenClientConnection.bootstrapKubeconfigFile: must not be set together with bootstrapKubeconfig",
                "gardenClientConnection.bootstrapKubeconfig: requires kubeconfigSecret (where the issued kubeconfig is stored)",
            ]
        );
        config.garden_client_connection.bootstrap_kubeconfig = None;
        config.garden_client_connection.kubeconfig_secret = Some(reference("kc", ""));
        assert_eq!(
            messages(&config),
            ["gardenClientConnection.kubeconfigSecret.namespace: required"]
        );
    }

    #[test]
    fn chart_limits_must_allow_something() {
        let mut config = valid();
        let limits = &mut config.controllers.controller_installation.chart_limits;
        limits.max_value_bytes = 0;
        limits.max_depth = 0;
        limits.max_render_time = Duration::ZERO;
        assert_eq!(
            messages(&config),
            [
                "controllers.controllerInstallation.chartLimits.maxDepth: must be at least 1",
                "controllers.controllerInstallation.chartLimits.maxValueBytes: must be at least 1",
                "controllers.controllerInstallation.chartLimits.maxRenderTime: must be > 0",
            ]
        );
    }

    #[test]
    fn periods_and_counts_of_run_controllers_must_be_positive() {
        let mut config = valid();
        let controllers = &mut config.controllers;
        controllers.cache_sync_timeout = Duration::ZERO;
        controllers.controller_installation.concurrent_syncs = 0;
        controllers.controller_installation_care.concurrent_syncs = 0;
        controllers.controller_installation_care.sync_period = Duration::ZERO;
        controllers
            .controller_installation_required
            .concurrent_syncs = 0;
        controllers.seed.sync_period = Duration::ZERO;
        controllers.seed.lease_resync_seconds = 0;
        controllers.seed.lease_resync_miss_threshold = 0;
        controllers.seed_care.sync_period = Duration::ZERO;
        controllers.shoot_state.sync_period = Duration::ZERO;
        controllers.shoot_state.concurrent_syncs = 0;
        controllers.shoot_care.concurrent_syncs = 0;
        controllers
            .shoot_care
            .stale_extension_health_checks
            .threshold = Duration::ZERO;
        controllers
            .shoot_care
            .managed_resource_progressing_threshold = Some(Duration::ZERO);
        controllers.managed_resource.concurrent_syncs = 0;
        controllers.managed_resource.sync_period = Duration::ZERO;
        controllers.seed_care.condition_thresholds = vec![ConditionThreshold {
            condition_type: "SeedSystemComponentsHealthy".into(),
            duration: Duration::ZERO,
        }];
        assert_eq!(
            messages(&config),
            [
                "controllers.cacheSyncTimeout: must be > 0",
                "controllers.controllerInstallation.concurrentSyncs: must be at least 1",
                "controllers.controllerInstallationCare.concurrentSyncs: must be at least 1",
                "controllers.controllerInstallationCare.syncPeriod: must be > 0",
                "controllers.controllerInstallationRequired.concurrentSyncs: must be at least 1",
                "controllers.seed.syncPeriod: must be > 0",
                "controllers.seed.leaseResyncSeconds: must be at least 1",
                "controllers.seed.leaseResyncMissThreshold: must be at least 1",
                "controllers.seedCare.syncPeriod: must be > 0",
                "controllers.seedCare.conditionThresholds[0].duration: must be > 0",
                "controllers.shootState.syncPeriod: must be > 0",
                "controllers.shootCare.concurrentSyncs: must be at least 1",
                "controllers.shootCare.staleExtensionHealthChecks.threshold: must be > 0",
                "controllers.shootCare.managedResourceProgressingThreshold: must be > 0",
                "controllers.managedResource.concurrentSyncs: must be at least 1",
                "controllers.managedResource.syncPeriod: must be > 0",
            ]
        );
        config.controllers.managed_resource.enabled = false;
        assert!(
            !messages(&config)
                .iter()
                .any(|m| m.starts_with("controllers.managedResource."))
        );
    }

    #[test]
    fn reserved_needs_a_capacity_and_may_not_exceed_it() {
        let mut config = valid();
        let mut resources = Resources::default();
        resources
            .capacity
            .insert("shoots".into(), Quantity::new("200"));
        resources
            .capacity
            .insert("disk".into(), Quantity::new("lots"));
        resources
            .reserved
            .insert("shoots".into(), Quantity::new("201"));
        resources
            .reserved
            .insert("memory".into(), Quantity::new("1Gi"));
        config.resources = Some(resources);
        let found = messages(&config);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].starts_with("resources.capacity.disk: invalid quantity \"lots\""));
        assert_eq!(
            found[1],
            "resources.reserved.memory: reserved without a capacity for this resource"
        );
        assert_eq!(
            found[2],
            "resources.reserved.shoots: must not exceed capacity 200"
        );
    }

    #[test]
    fn seed_config_needs_a_name_and_provider_type_and_region() {
        let mut config = valid();
        config.seed_config = None;
        assert_eq!(
            messages(&config),
            ["seedConfig: required (the Seed this agent registers)"]
        );
        config.seed_config = Some(SeedTemplate::default());
        assert_eq!(
            messages(&config),
            [
                "seedConfig.metadata.name: required",
                "seedConfig.spec: required (a Seed spec object)"
            ]
        );
        config.seed_config = Some(SeedTemplate {
            metadata: ObjectMeta {
                name: Some("Local".into()),
                ..ObjectMeta::default()
            },
            spec: json!({
                "provider": {"type": "local"},
                "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
            }),
        });
        let found = messages(&config);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("seedConfig.metadata.name: \"Local\" must be"));
        assert_eq!(found[1], "seedConfig.spec.provider.region: required");
    }
}
