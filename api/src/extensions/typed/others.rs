//! Typed kind-specific fields of the smaller extension kinds (BackupBucket, BackupEntry, Bastion, ContainerRuntime, ControlPlane, DNSRecord, Infrastructure, Network, SelfHostedShootExposure).

use k8s_openapi::api::core::v1::LoadBalancerIngress;
use k8s_openapi::api::core::v1::ObjectReference as K8sObjectReference;
use k8s_openapi::api::core::v1::SecretReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Kind-specific spec fields of a `BackupBucket` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackupBucketSpecFields {
    /// Region of the bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Secret with the credentials for the object store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
}

/// Kind-specific status fields of a `BackupBucket` (beside the common conditions, operations and state).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackupBucketStatusFields {
    /// Secret the extension created with access data for the bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_secret_ref: Option<SecretReference>,
}

/// Kind-specific spec fields of a `BackupEntry` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackupEntrySpecFields {
    /// The provider status of the bucket this entry lives in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_object")]
    pub backup_bucket_provider_status: Option<serde_json::Value>,
    /// Name of the bucket this entry lives in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket_name: Option<String>,
    /// Region of the bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Secret with the credentials for the object store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
}

/// Kind-specific spec fields of a `Bastion` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BastionSpecFields {
    /// Who may connect to the bastion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<Vec<BastionIngress>>,
    /// Base64 user data (cloud-init) the bastion machine boots with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<String>,
}

/// A source that may connect to a bastion.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BastionIngress {
    /// Source addresses allowed to connect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_block: Option<BastionIngressIpBlock>,
}

/// A range of source addresses.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BastionIngressIpBlock {
    /// CIDR allowed to connect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cidr: Option<String>,
    /// CIDRs inside `cidr` that are not allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub except: Option<Vec<String>>,
}

/// Kind-specific status fields of a `Bastion` (beside the common conditions, operations and state).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BastionStatusFields {
    /// Address of the bastion host once it is reachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<LoadBalancerIngress>,
}

/// Kind-specific spec fields of a `ContainerRuntime` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRuntimeSpecFields {
    /// Host directory into which the runtime binaries are installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_path: Option<String>,
    /// The worker pool whose nodes get the runtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_pool: Option<ContainerRuntimeWorkerPool>,
}

/// The worker pool a container runtime is installed on.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRuntimeWorkerPool {
    /// Name of the worker pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Labels selecting the nodes of that pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// Kind-specific spec fields of a `ControlPlane` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneSpecFields {
    /// The provider status of the shoot's Infrastructure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::common::schema::raw_object")]
    pub infrastructure_provider_status: Option<serde_json::Value>,
    /// Region of the shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Secret with the provider credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
}

/// Kind-specific spec fields of a `DNSRecord` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DNSRecordSpecFields {
    /// Fully qualified domain name of the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `A`, `AAAA`, `CNAME` or `TXT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_type: Option<String>,
    /// Region of the DNS provider, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Secret with the DNS provider credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
    /// Time to live of the record in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<i64>,
    /// Values of the record (addresses, a target name or texts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// Hosted zone of the record; found from the name when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

/// Kind-specific status fields of a `DNSRecord` (beside the common conditions, operations and state).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DNSRecordStatusFields {
    /// Hosted zone the record was written to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

/// Kind-specific spec fields of an `Infrastructure` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfrastructureSpecFields {
    /// Region of the shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Secret with the provider credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretReference>,
    /// Public SSH key for the worker machines, where the provider needs it here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_public_key: Option<String>,
}

/// Kind-specific status fields of an `Infrastructure` (beside the common conditions, operations and state).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfrastructureStatusFields {
    /// CIDRs that traffic from the shoot's nodes leaves from.
    #[serde(
        rename = "egressCIDRs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub egress_cid_rs: Option<Vec<String>>,
    /// Network ranges the infrastructure chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub networking: Option<InfrastructureStatusNetworking>,
    /// Node CIDR the infrastructure chose, when the shoot left it open.
    #[serde(rename = "nodesCIDR", default, skip_serializing_if = "Option::is_none")]
    pub nodes_cidr: Option<String>,
}

/// Network ranges an infrastructure provides to the shoot.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InfrastructureStatusNetworking {
    /// Node CIDRs the infrastructure provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
    /// Pod CIDRs the infrastructure provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<Vec<String>>,
    /// Service CIDRs the infrastructure provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<Vec<String>>,
}

/// Kind-specific spec fields of a `Network` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkSpecFields {
    /// IP families of the shoot network (`IPv4`, `IPv6`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_families: Option<Vec<String>>,
    /// CIDR of the pod network.
    #[serde(rename = "podCIDR", default, skip_serializing_if = "Option::is_none")]
    pub pod_cidr: Option<String>,
    /// CIDR of the service network.
    #[serde(
        rename = "serviceCIDR",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub service_cidr: Option<String>,
}

/// Kind-specific status fields of a `Network` (beside the common conditions, operations and state).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkStatusFields {
    /// IP families the network plugin runs with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_families: Option<Vec<String>>,
}

/// Kind-specific spec fields of a `SelfHostedShootExposure` (beside the generic `type`, `class` and `providerConfig`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelfHostedShootExposureSpecFields {
    /// Credentials of the provider that exposes the API server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_ref: Option<K8sObjectReference>,
    /// Control-plane nodes whose API servers are exposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<Vec<SelfHostedShootExposureEndpoint>>,
    /// Port the API servers listen on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// A control-plane node whose API server is exposed.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelfHostedShootExposureEndpoint {
    /// Addresses of the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<SelfHostedShootExposureEndpointAddress>>,
    /// Name of the control-plane node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
}

/// An address of a node.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelfHostedShootExposureEndpointAddress {
    /// The address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Kind of address (`InternalIP`, `ExternalIP`, `Hostname`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

/// Kind-specific status fields of a `SelfHostedShootExposure` (beside the common conditions, operations and state).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SelfHostedShootExposureStatusFields {
    /// Addresses the API server is reachable at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<Vec<LoadBalancerIngress>>,
}

/// Kind-specific spec fields of an `Extension`: none besides the generic ones.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ExtensionSpecFields {}
