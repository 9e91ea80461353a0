//! Typed kind-specific fields of `OperatingSystemConfig` (files, units, CRI settings, in-place updates).

use k8s_openapi::api::core::v1::SecretReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Kind-specific spec fields of an `OperatingSystemConfig` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigSpecFields {
    /// Container runtime settings of the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cri_config: Option<OperatingSystemConfigCriConfig>,
    /// Files to write on the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<OperatingSystemConfigFile>>,
    /// Versions and rotations for nodes updated in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_updates: Option<OperatingSystemConfigInPlaceUpdates>,
    /// `provision` (first boot) or `reconcile` (kept up to date by the node agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// systemd units to install on the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<Vec<OperatingSystemConfigUnit>>,
}

/// Container runtime settings of the nodes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigCriConfig {
    /// Cgroup driver of the runtime and the kubelet (`cgroupfs` or `systemd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_driver: Option<String>,
    /// Settings specific to containerd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containerd: Option<OperatingSystemConfigCriConfigContainerd>,
    /// Name of the CRI implementation (`containerd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// containerd settings of the nodes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigCriConfigContainerd {
    /// Changes to containerd plugin configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugins: Option<Vec<OperatingSystemConfigCriConfigContainerdPlugin>>,
    /// Registry mirrors and hosts containerd uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registries: Option<Vec<OperatingSystemConfigCriConfigContainerdRegistry>>,
    /// Image of the pod sandbox (pause) container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_image: Option<String>,
}

/// A change to one containerd plugin table.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigCriConfigContainerdPlugin {
    /// `add` or `remove`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// Path of the plugin configuration table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
    /// Values to set at that path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_any")]
    pub values: Option<serde_json::Value>,
}

/// How containerd reaches one upstream registry.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigCriConfigContainerdRegistry {
    /// Hosts to pull from instead of the upstream registry, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<OperatingSystemConfigCriConfigContainerdRegistryHost>>,
    /// Whether node start-up waits until the hosts answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_probe: Option<bool>,
    /// The upstream registry's URL, used when all hosts fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The registry this entry configures (for example `docker.io`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
}

/// A host containerd pulls from instead of the upstream registry.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigCriConfigContainerdRegistryHost {
    /// CA certificate files trusted for this host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_certs: Option<Vec<String>>,
    /// Operations allowed against this host (`pull`, `resolve`, `push`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<String>>,
    /// Whether the URL already holds the full API path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_path: Option<bool>,
    /// URL of the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A file written on the nodes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigFile {
    /// What the file contains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<OperatingSystemConfigFileContent>,
    /// Only write the file on the node with this host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    /// Absolute path of the file on the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// File mode as a number (for example 0644 is 420).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<i32>,
}

/// Where a file's content comes from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigFileContent {
    /// Take the file out of a container image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_ref: Option<OperatingSystemConfigFileContentImageRef>,
    /// The content itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline: Option<OperatingSystemConfigFileContentInline>,
    /// Take the content from a Secret key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<OperatingSystemConfigFileContentSecretRef>,
    /// Whether the content is passed on without base64 encoding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transmit_unencoded: Option<bool>,
}

/// A file taken out of a container image.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigFileContentImageRef {
    /// Path of the file inside the image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path_in_image: Option<String>,
    /// The image reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

/// File content given in place.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigFileContentInline {
    /// The content, encoded as `encoding` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// Encoding of `data` (`b64` or empty for plain text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// File content taken from a Secret key.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigFileContentSecretRef {
    /// Key in the Secret's data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_key: Option<String>,
    /// Name of the Secret (in the shoot namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Target versions and rotations for nodes updated in place.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigInPlaceUpdates {
    /// Credential rotations that nodes must follow in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_rotation: Option<OperatingSystemConfigInPlaceUpdatesCredentialsRotation>,
    /// Kubelet version the nodes should run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<String>,
    /// Operating-system version the nodes should run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operating_system_version: Option<String>,
}

/// Credential rotations nodes follow in place.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigInPlaceUpdatesCredentialsRotation {
    /// Rotation of the certificate authorities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_authorities:
        Option<OperatingSystemConfigInPlaceUpdatesCredentialsRotationCertificateAuthorities>,
    /// Rotation of the service-account signing key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_key:
        Option<OperatingSystemConfigInPlaceUpdatesCredentialsRotationCertificateAuthorities>,
}

/// State of one credential rotation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigInPlaceUpdatesCredentialsRotationCertificateAuthorities {
    /// When the last rotation started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_initiation_time: Option<Time>,
}

/// A systemd unit installed on the nodes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigUnit {
    /// systemctl command run for the unit (`start`, `restart`, `stop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Content of the unit file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Drop-in files of the unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_ins: Option<Vec<OperatingSystemConfigUnitDropIn>>,
    /// Whether the unit is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable: Option<bool>,
    /// Files the unit depends on; it is restarted when they change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_paths: Option<Vec<String>>,
    /// Name of the unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A drop-in file of a systemd unit.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigUnitDropIn {
    /// Content of the drop-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Name of the drop-in file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Kind-specific status fields of an `OperatingSystemConfig` (beside the common conditions, operations and state).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigStatusFields {
    /// The generated user data of the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_config: Option<OperatingSystemConfigStatusCloudConfig>,
    /// Files the extension adds to those of the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_files: Option<Vec<OperatingSystemConfigFile>>,
    /// Units the extension adds to those of the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_units: Option<Vec<OperatingSystemConfigUnit>>,
    /// How the operating system is updated in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_updates: Option<OperatingSystemConfigStatusInPlaceUpdates>,
}

/// The generated user data of the nodes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigStatusCloudConfig {
    /// Secret holding the user data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
}

/// How the operating system is updated in place.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigStatusInPlaceUpdates {
    /// Command that updates the operating system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_update: Option<OperatingSystemConfigStatusInPlaceUpdatesOsUpdate>,
}

/// A command with arguments.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatingSystemConfigStatusInPlaceUpdatesOsUpdate {
    /// Arguments of the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// The command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}
