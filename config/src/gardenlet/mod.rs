//! The agent's configuration: a `GardenletConfiguration` (`gardenlet.config.gardener.cloud/v1alpha1`).
//!
//! Every field gardenlet's v1alpha1 schema knows is accepted; the ones seedlet does not implement are
//! kept (typed where cheap, so that typos inside them are still reported) and listed by
//! [`GardenletConfiguration::ignored_fields`]. Seedlet extensions are marked as such in their docs.

mod backup;
mod controllers;
mod ignored;
mod network_policy;
mod seed_spec;
mod shoot_migration;
mod validate;

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::common::{
    ClientConnection, LeaderElection, LogFormat, LogLevel, SecretReference, ServerConfiguration,
    empty_path_as_none,
};
use crate::duration::Duration;
use crate::quantity::Quantity;

pub use controllers::{
    ChartLimits, ControllerInstallationCareController, ControllerInstallationController,
    ControllerInstallationRequiredController, GardenletControllers, ManagedResourceController,
    SeedCareController, SeedController, ShootCareController, ShootStateController,
    StaleExtensionHealthChecks,
};
pub use ignored::{
    BackupEntryController, ClientConnectionSettings, ConcurrentSyncsController, ControlPlaneChart,
    Debugging, EtcdConfig, ExposureClassHandler, Logging, ManagedSeedController, Monitoring,
    NetworkPolicyController, NodeToleration, ShootController, Sni, SyncPeriodController,
    TokenRequestorWorkloadIdentityController,
};
pub use shoot_migration::{FORCE_RESTORE_FEATURE_GATE, ShootMigrationController};
pub(crate) use validate::validate;

/// `apiVersion` of [`GardenletConfiguration`].
pub const API_VERSION: &str = crate::api_versions::GARDENLET;
/// `kind` of [`GardenletConfiguration`].
pub const KIND: &str = "GardenletConfiguration";

/// The seed agent's configuration, compatible with gardenlet's `GardenletConfiguration`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GardenletConfiguration {
    /// Always [`API_VERSION`].
    pub api_version: String,
    /// Always [`KIND`].
    pub kind: String,
    /// How to reach the garden cluster and obtain credentials for it.
    pub garden_client_connection: GardenClientConnection,
    /// How to reach the seed cluster; `kubeconfig` unset means in-cluster.
    pub seed_client_connection: ClientConnection,
    /// The controllers and their settings.
    pub controllers: GardenletControllers,
    /// Total and reserved seed capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// Leader election among agent replicas (lock in the seed cluster).
    pub leader_election: LeaderElection,
    /// Log threshold.
    pub log_level: LogLevel,
    /// Log format.
    pub log_format: LogFormat,
    /// Health and metrics servers.
    pub server: ServerConfiguration,
    /// Feature gates by name. seedlet has none of its own; like gardenlet it passes the map to
    /// extension charts as `gardener.gardenlet.featureGates`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// The Seed this agent registers and serves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_config: Option<SeedTemplate>,

    /// Ignored by seedlet (no shoot clusters are reconciled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shoot_client_connection: Option<ClientConnectionSettings>,
    /// Ignored by seedlet (profiling endpoints are not served).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debugging: Option<Debugging>,
    /// Ignored by seedlet (no logging stack is deployed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logging: Option<Logging>,
    /// Ignored by seedlet (no ingress gateway is managed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sni: Option<Sni>,
    /// Ignored by seedlet (no etcd-druid is deployed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etcd_config: Option<EtcdConfig>,
    /// Ignored by seedlet (no shoot control planes are exposed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exposure_class_handlers: Vec<ExposureClassHandler>,
    /// Ignored by seedlet (no monitoring stack is deployed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monitoring: Option<Monitoring>,
    /// Ignored by seedlet (no pod tolerations are injected).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_toleration: Option<NodeToleration>,
}

/// The garden connection: gardenlet's `GardenClientConnection` plus two seedlet extensions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GardenClientConnection {
    /// Static garden kubeconfig file; only a fallback when the `kubeconfigSecret` path yields nothing.
    /// Env `GARDEN_KUBECONFIG` overrides it (see [`GardenletConfiguration::apply_environment`]).
    #[serde(
        deserialize_with = "empty_path_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub kubeconfig: Option<PathBuf>,
    /// `Accept` header value for garden requests; empty means the client default.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub accept_content_types: String,
    /// Content type of garden request bodies; empty means the client default.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub content_type: String,
    /// Sustained queries per second towards the garden.
    pub qps: f32,
    /// Burst of queries allowed above `qps`.
    pub burst: i32,
    /// Ignored by seedlet: the garden address used when deploying gardenlets into managed seeds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub garden_cluster_address: Option<String>,
    /// Ignored by seedlet (deprecated upstream): the garden CA is taken from the kubeconfig and refreshed.
    #[serde(
        rename = "gardenClusterCACert",
        skip_serializing_if = "Option::is_none"
    )]
    pub garden_cluster_ca_cert: Option<String>,
    /// Seed-cluster Secret whose `data.kubeconfig` is a bootstrap kubeconfig (token or service account).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_kubeconfig: Option<SecretReference>,
    /// Seedlet extension: a bootstrap kubeconfig read from a file instead of a Secret (plain hosts).
    /// Mutually exclusive with `bootstrapKubeconfig`.
    #[serde(
        deserialize_with = "empty_path_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub bootstrap_kubeconfig_file: Option<PathBuf>,
    /// Seed-cluster Secret that stores the certificate kubeconfig; enables bootstrap and rotation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubeconfig_secret: Option<SecretReference>,
    /// Requested certificate validity and rotation jitter.
    pub kubeconfig_validity: KubeconfigValidity,
    /// Seedlet extension: how long to wait for a bootstrap CSR to be approved and issued (gardenlet: fixed 15m).
    pub bootstrap_approval_timeout: Duration,
}

/// Certificate validity and rotation window (`kubeconfigValidity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KubeconfigValidity {
    /// Sent as CSR `spec.expirationSeconds`; unset leaves it to the signer. At least 10m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validity: Option<Duration>,
    /// Earliest rotation point in percent of the certificate lifetime (1..max).
    pub auto_rotation_jitter_percentage_min: i32,
    /// Latest rotation point in percent of the certificate lifetime (min..=100).
    pub auto_rotation_jitter_percentage_max: i32,
}

/// Total capacity of the seed and the part reserved for Gardener (`resources`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Resources {
    /// Capacity per resource name, e.g. `shoots: 200`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, Quantity>,
    /// Reserved amount per resource name; each needs a capacity and may not exceed it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub reserved: BTreeMap<String, Quantity>,
}

/// The Seed to register (`seedConfig`, a `SeedTemplate`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SeedTemplate {
    /// Name (required), labels and annotations of the Seed.
    pub metadata: ObjectMeta,
    /// The Seed spec as written (`core.gardener.cloud/v1beta1` SeedSpec); its fields are not checked here.
    pub spec: Value,
}

impl Default for GardenletConfiguration {
    fn default() -> Self {
        GardenletConfiguration {
            api_version: API_VERSION.to_owned(),
            kind: KIND.to_owned(),
            garden_client_connection: GardenClientConnection::default(),
            seed_client_connection: ClientConnection::default(),
            controllers: GardenletControllers::default(),
            resources: None,
            leader_election: LeaderElection::default(),
            log_level: LogLevel::default(),
            log_format: LogFormat::default(),
            server: ServerConfiguration::default(),
            feature_gates: BTreeMap::new(),
            seed_config: None,
            shoot_client_connection: None,
            debugging: None,
            logging: None,
            sni: None,
            etcd_config: None,
            exposure_class_handlers: Vec::new(),
            monitoring: None,
            node_toleration: None,
        }
    }
}

impl GardenClientConnection {
    /// The plain client settings (kubeconfig file, rate limits, content types) for building a garden client.
    pub fn connection(&self) -> ClientConnection {
        ClientConnection {
            kubeconfig: self.kubeconfig.clone(),
            accept_content_types: self.accept_content_types.clone(),
            content_type: self.content_type.clone(),
            qps: self.qps,
            burst: self.burst,
        }
    }
}

impl GardenletConfiguration {
    /// The seed name from `seedConfig.metadata.name`, if configured.
    pub fn seed_name(&self) -> Option<&str> {
        self.seed_config
            .as_ref()
            .and_then(|seed| seed.metadata.name.as_deref())
            .filter(|name| !name.is_empty())
    }

    /// Applies gardenlet's environment overrides: a non-empty `GARDEN_KUBECONFIG` replaces
    /// `gardenClientConnection.kubeconfig`, a non-empty `KUBECONFIG` replaces `seedClientConnection.kubeconfig`.
    ///
    /// `lookup` reads one variable (`|name| std::env::var(name).ok()` in the binary).
    pub fn apply_environment(&mut self, lookup: impl Fn(&str) -> Option<String>) {
        if let Some(path) = lookup("GARDEN_KUBECONFIG").filter(|path| !path.is_empty()) {
            self.garden_client_connection.kubeconfig = Some(PathBuf::from(path));
        }
        if let Some(path) = lookup("KUBECONFIG").filter(|path| !path.is_empty()) {
            self.seed_client_connection.kubeconfig = Some(PathBuf::from(path));
        }
    }

    /// Paths of the fields that are set but that seedlet does not implement, for one log line at startup.
    pub fn ignored_fields(&self) -> Vec<String> {
        let mut ignored = Vec::new();
        let garden = &self.garden_client_connection;
        let top_level = [
            (
                "gardenClientConnection.gardenClusterAddress",
                garden.garden_cluster_address.is_some(),
            ),
            (
                "gardenClientConnection.gardenClusterCACert",
                garden.garden_cluster_ca_cert.is_some(),
            ),
            (
                "shootClientConnection",
                self.shoot_client_connection.is_some(),
            ),
            ("debugging", self.debugging.is_some()),
            ("logging", self.logging.is_some()),
            ("sni", self.sni.is_some()),
            ("etcdConfig", self.etcd_config.is_some()),
            (
                "exposureClassHandlers",
                !self.exposure_class_handlers.is_empty(),
            ),
            ("monitoring", self.monitoring.is_some()),
            ("nodeToleration", self.node_toleration.is_some()),
        ];
        ignored.extend(
            top_level
                .iter()
                .filter(|(_, set)| *set)
                .map(|(path, _)| (*path).to_owned()),
        );
        ignored.extend(
            self.controllers
                .ignored_fields()
                .into_iter()
                .map(|name| format!("controllers.{name}")),
        );
        ignored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_environment_overrides_kubeconfig_paths_only_when_non_empty() {
        let mut config = GardenletConfiguration::default();
        config.garden_client_connection.kubeconfig = Some(PathBuf::from("/from/file"));
        config.apply_environment(|name| match name {
            "GARDEN_KUBECONFIG" => Some(String::new()),
            "KUBECONFIG" => Some("/seed".to_owned()),
            _ => None,
        });
        assert_eq!(
            config.garden_client_connection.kubeconfig,
            Some(PathBuf::from("/from/file"))
        );
        assert_eq!(
            config.seed_client_connection.kubeconfig,
            Some(PathBuf::from("/seed"))
        );
        config
            .apply_environment(|name| (name == "GARDEN_KUBECONFIG").then(|| "/garden".to_owned()));
        assert_eq!(
            config.garden_client_connection.kubeconfig,
            Some(PathBuf::from("/garden"))
        );
    }

    #[test]
    fn connection_carries_the_client_settings_of_the_garden_connection() {
        let garden = GardenClientConnection {
            kubeconfig: Some(PathBuf::from("/garden")),
            content_type: "application/json".into(),
            qps: 7.0,
            burst: 9,
            ..GardenClientConnection::default()
        };
        let connection = garden.connection();
        assert_eq!(connection.kubeconfig, Some(PathBuf::from("/garden")));
        assert_eq!(connection.content_type, "application/json");
        assert_eq!((connection.qps, connection.burst), (7.0, 9));
    }

    #[test]
    fn ignored_fields_is_empty_for_a_default_configuration() {
        assert!(
            GardenletConfiguration::default()
                .ignored_fields()
                .is_empty()
        );
    }

    #[test]
    fn ignored_fields_lists_unimplemented_sections_and_controller_fields_but_not_used_ones() {
        let mut config = GardenletConfiguration {
            node_toleration: Some(NodeToleration::default()),
            ..GardenletConfiguration::default()
        };
        config.controllers.shoot = Some(ShootController {
            sync_period: Some(Duration::from_mins(30)),
            retry_duration: Some(Duration::from_mins(10)),
            dns_entry_ttl_seconds: Some(60),
            ..ShootController::default()
        });
        config.controllers.shoot_care.webhook_remediator_enabled = Some(true);
        config.feature_gates.insert("Foo".into(), true);
        assert_eq!(
            config.ignored_fields(),
            [
                "nodeToleration",
                "controllers.shoot.dnsEntryTTLSeconds",
                "controllers.shootCare.webhookRemediatorEnabled"
            ]
        );
    }

    #[test]
    fn seed_name_ignores_an_empty_name() {
        let mut config = GardenletConfiguration::default();
        assert_eq!(config.seed_name(), None);
        config.seed_config = Some(SeedTemplate::default());
        assert_eq!(config.seed_name(), None);
        config.seed_config = Some(SeedTemplate {
            metadata: ObjectMeta {
                name: Some("local".into()),
                ..ObjectMeta::default()
            },
            spec: Value::Null,
        });
        assert_eq!(config.seed_name(), Some("local"));
    }
}
