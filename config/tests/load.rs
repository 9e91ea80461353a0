//! Loading whole files: the shipped examples, Gardener's own gardenlet example, and rejected documents.

use std::path::{Path, PathBuf};

use seedlet_config::{
    AnyConfig, ConfigError, Duration, LogFormat, load, load_garden_controller, load_gardenlet,
    parse,
};

fn crate_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn problems(text: &str) -> Vec<String> {
    match parse(text, "test.yaml") {
        Err(error @ ConfigError::Invalid { .. }) => {
            error.problems().iter().map(ToString::to_string).collect()
        }
        other => panic!("expected an invalid configuration, got {other:?}"),
    }
}

const GARDENLET_HEADER: &str =
    "apiVersion: gardenlet.config.gardener.cloud/v1alpha1\nkind: GardenletConfiguration\n";

/// A valid `seedConfig`, required in every agent configuration.
const SEED: &str = "seedConfig:
  metadata:
    name: local
  spec:
    provider: {type: local, region: local}
    networks: {pods: 10.1.0.0/16, services: 10.2.0.0/16}
";

#[test]
fn every_example_loads_and_validates() {
    let mut kinds = Vec::new();
    for entry in std::fs::read_dir(crate_file("examples")).unwrap() {
        let path = entry.unwrap().path();
        let config = load(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        assert!(
            config.ignored_fields().is_empty(),
            "{}: {:?}",
            path.display(),
            config.ignored_fields()
        );
        kinds.push(config.kind());
    }
    kinds.sort_unstable();
    assert_eq!(
        kinds,
        [
            "GardenControllerConfiguration",
            "GardenletConfiguration",
            "GardenletConfiguration"
        ]
    );
}

#[test]
fn bootstrap_token_example_carries_bootstrap_and_rotation_settings() {
    let config = load_gardenlet(crate_file("examples/agent-bootstrap-token.yaml")).unwrap();
    let garden = &config.garden_client_connection;
    assert_eq!(
        garden.bootstrap_kubeconfig.as_ref().unwrap().to_string(),
        "garden/gardenlet-kubeconfig-bootstrap"
    );
    assert_eq!(
        garden.kubeconfig_secret.as_ref().unwrap().to_string(),
        "garden/gardenlet-kubeconfig"
    );
    assert_eq!(
        garden.kubeconfig_validity.validity,
        Some(Duration::from_hours(24))
    );
    assert_eq!(config.seed_name(), Some("local"));
    assert_eq!(
        config.seed_config.unwrap().spec["provider"]["type"],
        "local"
    );
}

#[test]
fn static_kubeconfig_example_uses_files_and_disables_managed_resources() {
    let config = load_gardenlet(crate_file("examples/agent-static-kubeconfig.yaml")).unwrap();
    assert_eq!(
        config.garden_client_connection.kubeconfig.as_deref(),
        Some(Path::new("/etc/seedlet/garden-kubeconfig.yaml"))
    );
    assert!(config.garden_client_connection.kubeconfig_secret.is_none());
    assert!(!config.controllers.managed_resource.enabled);
    assert_eq!(config.log_format, LogFormat::Text);
    assert_eq!(
        config.server.metrics.socket_addr().unwrap().to_string(),
        "127.0.0.1:2729"
    );
}

#[test]
fn garden_controller_example_sets_the_lifecycle_periods() {
    let config = load_garden_controller(crate_file("examples/garden-controller.yaml")).unwrap();
    let lifecycle = &config.controllers.seed_lifecycle;
    assert_eq!(lifecycle.monitor_period, Duration::from_secs(40));
    assert_eq!(lifecycle.shoot_monitor_period, Duration::from_secs(200));
    let thresholds = &config
        .controllers
        .seed_extensions_check
        .condition_thresholds;
    assert_eq!(
        seedlet_config::threshold_for(thresholds, "ExtensionsReady"),
        Some(Duration::from_mins(1))
    );
}

#[test]
fn gardeners_gardenlet_example_passes_with_a_seed_config_and_reports_what_seedlet_ignores() {
    let path = crate_file("tests/fixtures/20-componentconfig-gardenlet.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    // Gardener's example leaves `seedConfig` commented out; the agent needs it.
    assert_eq!(
        problems(&text),
        ["seedConfig: required (the Seed this agent registers)"]
    );
    let config = parse(&format!("{text}\n{SEED}"), &path).unwrap();
    let AnyConfig::Gardenlet(gardenlet) = &config else {
        panic!("wrong kind {}", config.kind())
    };
    assert_eq!(gardenlet.garden_client_connection.qps, 100.0);
    assert_eq!(
        gardenlet.controllers.seed.sync_period,
        Duration::from_hours(1)
    );
    assert_eq!(gardenlet.controllers.seed.lease_resync_seconds, 2);
    assert_eq!(
        gardenlet.controllers.shoot_state.sync_period,
        Duration::from_hours(6)
    );
    assert_eq!(
        gardenlet.resources.as_ref().unwrap().capacity["shoots"].as_str(),
        "200"
    );
    assert_eq!(
        config.ignored_fields(),
        [
            "shootClientConnection",
            "debugging",
            "logging",
            "etcdConfig",
            "nodeToleration",
            "controllers.gardenlet",
            "controllers.managedSeed",
            "controllers.shootCare.webhookRemediatorEnabled",
            "controllers.shootStatus",
            "controllers.tokenRequestor",
            "controllers.tokenRequestorWorkloadIdentity",
            "controllers.vpaEvictionRequirements",
        ]
    );
}

#[test]
fn unknown_fields_are_all_reported_with_their_paths() {
    let text = format!(
        "{GARDENLET_HEADER}\
gardenClientConnection:
  kubeconfigValidty: {{}}
controllers:
  seedCare:
    conditionThresholds:
    - type: SeedSystemComponentsHealthy
      duration: 1m
      severity: high
  shoot:
    concurrentSynks: 3
etcdConfig:
  etcdController:
    worker: 3
seedConfig:
  metadata:
    name: local
    lables: {{}}
  spec:
    provider: {{type: local, region: local}}
    networks: {{pods: 10.1.0.0/16, services: 10.2.0.0/16}}
unknownTopLevel: true
"
    );
    assert_eq!(
        problems(&text),
        [
            "gardenClientConnection.kubeconfigValidty: unknown field",
            "controllers.seedCare.conditionThresholds[0].severity: unknown field",
            "controllers.shoot.concurrentSynks: unknown field",
            "etcdConfig.etcdController.worker: unknown field",
            "seedConfig.metadata.lables: unknown field",
            "unknownTopLevel: unknown field",
        ]
    );
}

#[test]
fn a_bad_duration_names_its_path_and_the_reason() {
    let text = format!(
        "{GARDENLET_HEADER}{SEED}controllers:\n  seedCare:\n    conditionThresholds:\n    - type: X\n      duration: 5 minutes\n"
    );
    let found = problems(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(
            "controllers.seedCare.conditionThresholds[0].duration: invalid duration \"5 minutes\""
        ),
        "{found:?}"
    );
}

#[test]
fn a_number_where_a_duration_belongs_is_rejected() {
    let text = format!("{GARDENLET_HEADER}{SEED}controllers:\n  seed:\n    syncPeriod: 60\n");
    let found = problems(&text);
    assert_eq!(
        found,
        [
            "controllers.seed.syncPeriod: invalid type: number 60, expected a Go duration string such as \"1m30s\""
        ]
    );
}

#[test]
fn unknown_fields_and_rule_violations_are_reported_together() {
    let text = format!(
        "{GARDENLET_HEADER}\
gardenClientConnection:
  kubeconfigValidity:
    validity: 5m
    autoRotationJitterPercentageMin: 95
controllers:
  seedCare:
    conditionThresholds:
    - type: SeedSystemComponentsHealthy
      duration: 0s
  typoController: {{}}
server:
  metrics:
    bindAddress: everywhere
seedConfig:
  metadata:
    labels: {{a: b}}
  spec: {{}}
"
    );
    assert_eq!(
        problems(&text),
        [
            "controllers.typoController: unknown field",
            "gardenClientConnection.kubeconfigValidity.validity: must be at least 10m",
            "gardenClientConnection.kubeconfigValidity.autoRotationJitterPercentageMin: must be less than autoRotationJitterPercentageMax",
            "controllers.seedCare.conditionThresholds[0].duration: must be > 0",
            "server.metrics.bindAddress: \"everywhere\" is not an IP address",
            "seedConfig.metadata.name: required",
            "seedConfig.spec.provider: required",
            "seedConfig.spec.networks: required",
        ]
    );
}

#[test]
fn out_of_range_ports_and_unknown_log_levels_are_type_errors_at_their_path() {
    let port = problems(&format!(
        "{GARDENLET_HEADER}{SEED}server:\n  healthProbes:\n    port: 70000\n"
    ));
    assert_eq!(
        port,
        ["server.healthProbes.port: 70000 is out of range, expected an integer from 0 to 65535"]
    );
    let level = problems(&format!("{GARDENLET_HEADER}{SEED}logLevel: warn\n"));
    assert_eq!(
        level,
        ["logLevel: unknown value warn, expected one of debug, info, error"]
    );
}

#[test]
fn garden_controller_unknown_fields_are_reported() {
    let text = "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenControllerConfiguration\n\
controllers:\n  seedLifecycle:\n    monitorPeriod: 1m\n    gracePeriod: 1m\n  shootBananas: {}\n";
    assert_eq!(
        problems(text),
        [
            "controllers.seedLifecycle.gracePeriod: unknown field",
            "controllers.shootBananas: unknown field"
        ]
    );
}

#[test]
fn other_kinds_and_missing_type_information_are_refused() {
    let error = parse(
        "apiVersion: operator.config.gardener.cloud/v1alpha1\nkind: OperatorConfiguration\n",
        "operator.yaml",
    )
    .unwrap_err();
    assert!(
        matches!(error, ConfigError::UnknownKind { ref kind, .. } if kind == "OperatorConfiguration")
    );
    assert!(error.to_string().contains(
        "or controllermanager.config.gardener.cloud/v1alpha1 ControllerManagerConfiguration"
    ));
    assert!(
        error
            .to_string()
            .contains("expected gardenlet.config.gardener.cloud/v1alpha1 GardenletConfiguration")
    );
    assert!(matches!(
        parse("logLevel: info\n", "x.yaml"),
        Err(ConfigError::UnknownKind { .. })
    ));
    assert!(matches!(
        parse("a: [", "x.yaml"),
        Err(ConfigError::Yaml { .. })
    ));
    assert!(matches!(
        load("/nonexistent/seedlet.yaml"),
        Err(ConfigError::Read { .. })
    ));
}

#[test]
fn typed_loaders_refuse_the_other_kind() {
    let error = load_gardenlet(crate_file("examples/garden-controller.yaml")).unwrap_err();
    assert!(matches!(
        error,
        ConfigError::WrongKind {
            found: "GardenControllerConfiguration",
            ..
        }
    ));
    let error =
        load_garden_controller(crate_file("examples/agent-static-kubeconfig.yaml")).unwrap_err();
    assert!(matches!(
        error,
        ConfigError::WrongKind {
            found: "GardenletConfiguration",
            ..
        }
    ));
}

#[test]
fn a_loaded_configuration_serialises_back_to_an_equal_one() {
    let config = load_gardenlet(crate_file("examples/agent-bootstrap-token.yaml")).unwrap();
    let text = serde_yaml::to_string(&config).unwrap();
    assert!(text.contains("syncPeriod: 1m0s"), "{text}");
    let AnyConfig::Gardenlet(again) = parse(&text, "round-trip.yaml").unwrap() else {
        panic!("wrong kind")
    };
    assert_eq!(*again, config);
}

#[test]
fn free_port_asks_for_any_port_where_port_zero_means_the_default() {
    let text = format!(
        "{GARDENLET_HEADER}{SEED}server:\n  healthProbes:\n    bindAddress: 127.0.0.1\n    freePort: true\n  metrics:\n    bindAddress: 127.0.0.1\n    port: 0\n"
    );
    let config = match parse(&text, "test.yaml").expect("valid") {
        AnyConfig::Gardenlet(config) => config,
        other => panic!("unexpected kind {}", other.kind()),
    };
    let (health, metrics) = config.server.addresses().expect("addresses");
    assert_eq!(health.to_string(), "127.0.0.1:0", "any free port");
    assert_eq!(metrics.to_string(), "127.0.0.1:2729", "0 is the default");
    assert_eq!(
        problems(&format!(
            "{GARDENLET_HEADER}{SEED}server:\n  metrics:\n    port: 9000\n    freePort: true\n"
        )),
        ["server.metrics.freePort: asks for any free port but port is 9000; set one of them"]
    );
}

#[test]
fn gardeners_controller_manager_example_passes_unchanged_and_reports_what_seedlet_ignores() {
    let path = crate_file("tests/fixtures/20-componentconfig-gardener-controller-manager.yaml");
    let config = load(&path).unwrap();
    assert_eq!(config.kind(), "GardenControllerConfiguration");
    assert_eq!(config.file_kind(), "ControllerManagerConfiguration");
    assert_eq!(
        config.ignored_fields(),
        ["controllers.controllerDeployment", "debugging"]
    );
    let AnyConfig::GardenController(garden) = config else {
        panic!("wrong kind")
    };
    assert_eq!(garden.garden_client_connection.qps, 100.0);
    assert_eq!(garden.garden_client_connection.burst, 130);
    let controllers = &garden.controllers;
    assert_eq!(
        controllers.seed_lifecycle.sync_period,
        Duration::from_secs(10)
    );
    // Unset: Gardener's defaults.
    assert_eq!(
        controllers.seed_lifecycle.monitor_period,
        Duration::from_secs(40)
    );
    assert_eq!(
        controllers.seed_lifecycle.shoot_monitor_period,
        Duration::from_secs(200)
    );
    assert_eq!(
        seedlet_config::threshold_for(
            &controllers.seed_extensions_check.condition_thresholds,
            "ExtensionsReady"
        ),
        Some(Duration::from_mins(1))
    );
    assert_eq!(controllers.project.minimum_lifetime_days, 30);
    assert_eq!(
        controllers.project.stale_sync_period,
        Duration::from_hours(12)
    );
    assert!(controllers.project.quotas.is_empty());
    let event = controllers.event.as_ref().expect("event block present");
    assert_eq!(event.ttl_non_shoot_events, Duration::from_hours(1));
    assert_eq!(controllers.shoot_reference.concurrent_syncs, 5);
    // The shoot lifecycle blocks map one to one.
    assert_eq!(
        controllers.shoot_hibernation.trigger_deadline_duration,
        Duration::from_hours(2)
    );
    assert_eq!(controllers.shoot_quota.sync_period, Duration::from_mins(60));
    assert_eq!(
        controllers.managed_seed_set.sync_period,
        Duration::from_mins(30)
    );
    assert_eq!(
        garden.leader_election.resource_name,
        "gardener-controller-manager-leader-election"
    );
    assert_eq!(garden.leader_election.resource_namespace, "garden");
    assert_eq!(garden.log_format, LogFormat::Text);
    assert_eq!(garden.server.health_probes.port, 2718);
    assert_eq!(garden.server.metrics.port, 2719);
}

#[test]
fn controller_manager_unknown_fields_and_bad_values_name_their_path() {
    let text = "apiVersion: controllermanager.config.gardener.cloud/v1alpha1
kind: ControllerManagerConfiguration
controllers:
  project:
    staleSyncPeriod: soon
    quotaz: []
  seed:
    syncPeriod: 0s
  cloudProfile:
    concurentSyncs: 5
  event:
    ttlNonShootEvents: 0s
topLevel: true
";
    assert_eq!(
        problems(text),
        [
            "controllers.project.staleSyncPeriod: invalid duration \"soon\": expected numbers with units such as \"1m30s\"",
            "controllers.project.quotaz: unknown field",
            "controllers.cloudProfile.concurentSyncs: unknown field",
            "topLevel: unknown field",
        ]
    );
    let valid_syntax = "apiVersion: controllermanager.config.gardener.cloud/v1alpha1
kind: ControllerManagerConfiguration
controllers:
  seed:
    syncPeriod: 0s
  event:
    ttlNonShootEvents: 0s
";
    assert_eq!(
        problems(valid_syntax),
        [
            "controllers.seed.syncPeriod: must be > 0",
            "controllers.event.ttlNonShootEvents: must be > 0",
        ]
    );
}
