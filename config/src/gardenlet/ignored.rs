//! Sections of gardenlet's schema that seedlet accepts but does not act on, typed so that typos inside are reported.
//!
//! Field types follow gardenlet's v1alpha1 types; leaves whose Go type has no simple Rust counterpart
//! (label selectors, Go `time.Duration` nanosecond integers) are kept as raw JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::duration::Duration;
use crate::quantity::Quantity;

/// `shootClientConnection` (componentbase client connection settings).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientConnectionSettings {
    /// Kubeconfig file path.
    pub kubeconfig: Option<String>,
    /// `Accept` header value.
    pub accept_content_types: Option<String>,
    /// Request content type.
    pub content_type: Option<String>,
    /// Queries per second.
    pub qps: Option<f32>,
    /// Query burst.
    pub burst: Option<i32>,
}

/// `debugging`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Debugging {
    /// Profiling via the web interface.
    pub enable_profiling: Option<bool>,
    /// Lock contention profiling.
    pub enable_contention_profiling: Option<bool>,
}

/// A controller block with only `concurrentSyncs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConcurrentSyncsController {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<i64>,
}

/// A controller block with only `syncPeriod` (`controllers.gardenlet`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncPeriodController {
    /// Requeue period.
    pub sync_period: Option<Duration>,
}

/// `controllers.backupEntry`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupEntryController {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<i64>,
    /// Hours to keep a BackupEntry after deletion.
    pub deletion_grace_period_hours: Option<i64>,
    /// Shoot purposes the grace period applies to.
    pub deletion_grace_period_shoot_purposes: Option<Vec<String>>,
}

/// `controllers.managedSeed`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedSeedController {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<i64>,
    /// Requeue period.
    pub sync_period: Option<Duration>,
    /// Requeue period while waiting.
    pub wait_sync_period: Option<Duration>,
    /// Random delay bound for syncs.
    pub sync_jitter_period: Option<Duration>,
    /// Whether spec updates are jittered too.
    pub jitter_updates: Option<bool>,
}

/// `controllers.networkPolicy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyController {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<i64>,
    /// Label selectors of further namespaces (kept raw).
    pub additional_namespace_selectors: Option<Vec<Value>>,
}

/// `controllers.shoot`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShootController {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<i64>,
    /// How often operation progress is reported.
    pub progress_report_period: Option<Duration>,
    /// Whether shoots reconcile only in their maintenance window.
    pub reconcile_in_maintenance_only: Option<bool>,
    /// Whether owners may override the sync period.
    pub respect_sync_period_overwrite: Option<bool>,
    /// How long failed reconciles are retried.
    pub retry_duration: Option<Duration>,
    /// Requeue period.
    pub sync_period: Option<Duration>,
    /// TTL of DNS entries.
    #[serde(rename = "dnsEntryTTLSeconds")]
    pub dns_entry_ttl_seconds: Option<i64>,
    /// Seedlet addition: whether the Shoot controller runs (default true); the Cluster sync
    /// runs either way.
    pub enabled: Option<bool>,
    /// Seedlet addition: the Helm chart standing in for the control-plane components gardenlet
    /// deploys itself, rendered per Shoot and applied as ManagedResource `control-plane` in the
    /// shoot's control-plane namespace (`docs/configuration.md` lists its values). Unset: the
    /// flows skip the control plane and say so.
    pub control_plane_chart: Option<ControlPlaneChart>,
}

/// `controllers.shoot.controlPlaneChart`: exactly one of a local path (a chart directory or a
/// `.tgz` archive) or the archive inline (base64, like a ControllerDeployment's
/// `helm.rawChart`). Loading and rendering are bounded by
/// `controllers.controllerInstallation.chartLimits`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneChart {
    /// A chart directory or `.tgz` archive on the agent's host, read on every reconcile.
    pub path: Option<String>,
    /// A base64-encoded `.tgz` chart archive.
    pub raw_chart: Option<String>,
}

/// The problems of a `controllers.shoot.controlPlaneChart`: `(field, message)`.
pub fn control_plane_chart_problems(chart: &ControlPlaneChart) -> Vec<(&'static str, String)> {
    const FIELD: &str = "controllers.shoot.controlPlaneChart";
    match (chart.path.as_deref(), chart.raw_chart.as_deref()) {
        (None, None) => vec![(FIELD, "set path or rawChart".to_owned())],
        (Some(_), Some(_)) => vec![(FIELD, "set only one of path and rawChart".to_owned())],
        (Some(""), None) => vec![(
            "controllers.shoot.controlPlaneChart.path",
            "must not be empty".to_owned(),
        )],
        (Some(path), None) => match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() || meta.is_file() => Vec::new(),
            Ok(_) => vec![(
                "controllers.shoot.controlPlaneChart.path",
                format!("{path} is neither a chart directory nor an archive file"),
            )],
            Err(error) => vec![(
                "controllers.shoot.controlPlaneChart.path",
                format!("{path}: {error}"),
            )],
        },
        (None, Some(raw)) if raw.trim().is_empty() => vec![(
            "controllers.shoot.controlPlaneChart.rawChart",
            "must not be empty".to_owned(),
        )],
        (None, Some(_)) => Vec::new(),
    }
}

impl ShootController {
    /// The set fields seedlet ignores: `dnsEntryTTLSeconds` (the Shoot controller writes no
    /// DNSRecords without a kube-apiserver address); the others configure the Cluster sync and
    /// the Shoot controller.
    pub fn ignored_fields(&self) -> Vec<&'static str> {
        [("dnsEntryTTLSeconds", self.dns_entry_ttl_seconds.is_some())]
            .into_iter()
            .filter_map(|(name, set)| set.then_some(name))
            .collect()
    }
}

/// `controllers.tokenRequestorWorkloadIdentity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenRequestorWorkloadIdentityController {
    /// Parallel reconciles.
    pub concurrent_syncs: Option<i64>,
    /// Requested token lifetime (a Go `time.Duration`, kept raw).
    pub token_expiration_duration: Option<Value>,
}

/// `logging`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Logging {
    /// Whether the logging stack is deployed.
    pub enabled: Option<bool>,
    /// Vali settings.
    pub vali: Option<LogStore>,
    /// VictoriaLogs settings.
    pub victoria_logs: Option<LogStore>,
    /// Which shoots get node logging.
    pub shoot_node_logging: Option<ShootNodeLogging>,
    /// Shoot event logger.
    pub shoot_event_logging: Option<Enabled>,
}

/// `logging.vali` and `logging.victoriaLogs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogStore {
    /// Whether the store is deployed.
    pub enabled: Option<bool>,
    /// The central instance in the garden namespace.
    pub garden: Option<GardenStorage>,
}

/// `logging.*.garden`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GardenStorage {
    /// Disk size.
    pub storage: Option<Quantity>,
}

/// `logging.shootNodeLogging`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShootNodeLogging {
    /// Shoot purposes with node logging.
    pub shoot_purposes: Option<Vec<String>>,
}

/// A block with only `enabled`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Enabled {
    /// Whether the feature is on.
    pub enabled: Option<bool>,
}

/// `sni`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sni {
    /// The ingress gateway.
    pub ingress: Option<SniIngress>,
}

/// `sni.ingress`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SniIngress {
    /// Service name.
    pub service_name: Option<String>,
    /// External IP of the load balancer.
    #[serde(rename = "serviceExternalIP")]
    pub service_external_ip: Option<String>,
    /// Namespace.
    pub namespace: Option<String>,
    /// Labels.
    pub labels: Option<BTreeMap<String, String>>,
}

/// `etcdConfig`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EtcdConfig {
    /// etcd controller.
    pub etcd_controller: Option<Workers>,
    /// Custodian controller.
    pub custodian_controller: Option<Workers>,
    /// Backup compaction controller.
    pub backup_compaction_controller: Option<BackupCompactionController>,
    /// Leader election of the backup-restore sidecar.
    pub backup_leader_election: Option<EtcdBackupLeaderElection>,
    /// etcd-druid feature gates.
    pub feature_gates: Option<BTreeMap<String, bool>>,
    /// Retention of delta snapshots.
    pub delta_snapshot_retention_period: Option<Duration>,
}

/// A block with only `workers`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workers {
    /// Worker count.
    pub workers: Option<i64>,
}

/// `etcdConfig.backupCompactionController`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupCompactionController {
    /// Worker count.
    pub workers: Option<i64>,
    /// Whether backups are compacted.
    pub enable_backup_compaction: Option<bool>,
    /// Events before a compaction job.
    pub events_threshold: Option<i64>,
    /// Compaction job deadline.
    pub active_deadline_duration: Option<Duration>,
    /// Wait for metrics scraping after a job.
    pub metrics_scrape_wait_duration: Option<Duration>,
}

/// `etcdConfig.backupLeaderElection`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EtcdBackupLeaderElection {
    /// Leadership check period.
    pub reelection_period: Option<Duration>,
    /// etcd connection timeout.
    pub etcd_connection_timeout: Option<Duration>,
}

/// An entry of `exposureClassHandlers`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExposureClassHandler {
    /// Handler name.
    pub name: Option<String>,
    /// Load balancer settings.
    pub load_balancer_service: Option<LoadBalancerService>,
    /// A dedicated ingress gateway.
    pub sni: Option<Sni>,
}

/// `exposureClassHandlers[].loadBalancerService`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerService {
    /// Service annotations.
    pub annotations: Option<BTreeMap<String, String>>,
    /// Load balancer class.
    pub class: Option<String>,
}

/// `monitoring`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Monitoring {
    /// Shoot monitoring.
    pub shoot: Option<ShootMonitoring>,
}

/// `monitoring.shoot`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShootMonitoring {
    /// Whether the stack is deployed.
    pub enabled: Option<bool>,
    /// Remote write target.
    pub remote_write: Option<RemoteWrite>,
    /// Extra labels on all metrics.
    pub external_labels: Option<BTreeMap<String, String>>,
}

/// `monitoring.shoot.remoteWrite`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteWrite {
    /// Target URL.
    pub url: Option<String>,
    /// Metrics to forward.
    pub keep: Option<Vec<String>>,
}

/// `nodeToleration`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeToleration {
    /// Seconds for the `node.kubernetes.io/not-ready` toleration.
    pub default_not_ready_toleration_seconds: Option<i64>,
    /// Seconds for the `node.kubernetes.io/unreachable` toleration.
    pub default_unreachable_toleration_seconds: Option<i64>,
}
