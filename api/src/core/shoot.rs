//! `core.gardener.cloud/v1beta1` `Shoot` (namespaced): the spec's top level, the CRD and the
//! helpers seedlet's controllers use. The sections live beside it: `shoot_provider.rs` (workers),
//! `shoot_kubernetes.rs`, `shoot_kubelet.rs`, `shoot_autoscaling.rs`, `shoot_settings.rs` (DNS,
//! hibernation, networking, maintenance, ...) and `shoot_status.rs`.
//!
//! Every field of gardener's v1beta1 Shoot is typed, so the generated CRD has a full
//! structural schema; only raw extension blobs (`providerConfig`, `infrastructureConfig`,
//! `controlPlaneConfig`, admission-plugin `config`) keep `x-kubernetes-preserve-unknown-fields`.
//!
//! # Forward compatibility
//! A garden may run a newer Gardener than these types know. Every struct of the Shoot (not the
//! small ones it shares with other kinds: `Extension`, `CloudProfileReference`, the common
//! references, conditions and operations) therefore has a `#[serde(flatten)] extra` map that
//! catches fields it does not model, so that code reading a
//! Shoot and writing it back (maintenance, status patches built from the typed value) does not
//! drop them. The map is `#[schemars(skip)]`: it is a client-side safety net, not part of the
//! API, and leaving it out keeps the CRD's schema exactly gardener's.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, LastOperation, LastOperationType, NamedResourceReference};
use crate::core::{
    Addons, ControlPlane, Extension, Hibernation, Maintenance, Monitoring, Networking,
    ShootAccessRestriction, ShootDns, ShootKubernetes, ShootProvider, ShootSeedSelector,
    ShootStatus, ShootToleration, SystemComponents,
};
use crate::names::technical_id;

/// Spec of a Shoot.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "Shoot",
    namespaced,
    status = "ShootStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "A Shoot is a Kubernetes cluster whose control plane runs in a seed.",
    printcolumn(
        name = "Cloud Profile",
        type_ = "string",
        json_path = ".spec.cloudProfile.name"
    ),
    printcolumn(name = "Provider", type_ = "string", json_path = ".spec.provider.type"),
    printcolumn(name = "Region", type_ = "string", json_path = ".spec.region"),
    printcolumn(
        name = "K8S Version",
        type_ = "string",
        json_path = ".spec.kubernetes.version"
    ),
    // Gardener's own table prints the Seed from `spec.seedName`, "Hibernation" from the observed
    // `status.hibernated` (with the spec: Hibernated, Hibernating, Waking Up, Awake) and "Last
    // Operation" as `<type> <state> (<progress>%)`; a CRD column holds one field each.
    printcolumn(name = "Seed", type_ = "string", json_path = ".spec.seedName"),
    printcolumn(
        name = "Hibernated",
        type_ = "boolean",
        json_path = ".status.hibernated"
    ),
    printcolumn(
        name = "Last Operation",
        type_ = "string",
        json_path = ".status.lastOperation.type"
    ),
    printcolumn(
        name = "Operation State",
        type_ = "string",
        json_path = ".status.lastOperation.state"
    ),
    printcolumn(
        name = "Status",
        type_ = "string",
        json_path = ".metadata.labels.shoot\\.gardener\\.cloud/status"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
// The optional sections of a Shoot are boxed: every agent and garden cache holds one Shoot per
// shoot of the seed or landscape, and inline they made a Shoot 7.5 KB before any field was set
// (1.5 KB boxed; the sections a shoot sets cost what they hold).
pub struct ShootSpec {
    /// Addons Gardener installs into the shoot (deprecated; not allowed from Kubernetes 1.35).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addons: Option<Box<Addons>>,
    /// Name of a CloudProfile (deprecated for `cloudProfile`, which wins when both are set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_profile_name: Option<String>,
    /// DNS settings: the external domain and its providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<Box<ShootDns>>,
    /// Extensions enabled (or disabled) for the shoot, with their configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<Extension>,
    /// Whether, and on which schedules, the shoot is hibernated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hibernation: Option<Box<Hibernation>>,
    /// Kubernetes version and the settings of its components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<Box<ShootKubernetes>>,
    /// Network extension and the pod, service and node CIDRs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub networking: Option<Box<Networking>>,
    /// Maintenance window, automatic updates and credential rotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance: Option<Box<Maintenance>>,
    /// Monitoring settings (alert receivers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitoring: Option<Box<Monitoring>>,
    /// Infrastructure provider, its configuration and the worker pools.
    pub provider: ShootProvider,
    /// Purpose: `evaluation`, `testing`, `development`, `production` or `infrastructure`
    /// (garden namespace only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// Region of the cloud profile the shoot runs in; immutable.
    pub region: String,
    /// SecretBinding with the infrastructure credentials (deprecated for
    /// `credentialsBindingName`; exclusive with it); immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_binding_name: Option<String>,
    /// Seed that runs the control plane; set by the scheduler unless given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_name: Option<String>,
    /// Labels and provider types a seed must have to run the shoot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_selector: Option<Box<ShootSeedSelector>>,
    /// Objects the extension configurations refer to by these names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<NamedResourceReference>,
    /// Seed taints the shoot tolerates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<ShootToleration>,
    /// ExposureClass deciding how the API server is exposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposure_class_name: Option<String>,
    /// Settings of system components in the shoot (CoreDNS, node-local DNS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_components: Option<Box<SystemComponents>>,
    /// Control-plane placement and high availability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<Box<ControlPlane>>,
    /// Scheduler responsible for the shoot; the default scheduler when unset. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// Reference to a CloudProfile or NamespacedCloudProfile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud_profile: Option<CloudProfileReference>,
    /// CredentialsBinding with the infrastructure credentials (exclusive with
    /// `secretBindingName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_binding_name: Option<String>,
    /// Access restrictions of the cluster (e.g. `eu-access-only`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_restrictions: Vec<ShootAccessRestriction>,
    /// Fields newer than these types, kept for round trips (see the module documentation).
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.cloudProfile`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloudProfileReference {
    /// `CloudProfile` (default) or `NamespacedCloudProfile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name of the profile.
    pub name: String,
}

/// Kind of a cloud profile reference without explicit kind.
pub const DEFAULT_CLOUD_PROFILE_KIND: &str = "CloudProfile";

impl CloudProfileReference {
    /// The kind, defaulting to `CloudProfile`.
    pub fn kind_or_default(&self) -> &str {
        self.kind.as_deref().unwrap_or(DEFAULT_CLOUD_PROFILE_KIND)
    }
}

impl Shoot {
    /// The technical ID: the stored `status.technicalID`, else `shoot--<project>--<name>`.
    pub fn technical_id(&self, project_name: &str) -> String {
        let stored = self
            .status
            .as_ref()
            .and_then(|status| status.technical_id.as_deref());
        technical_id::compute(
            stored,
            project_name,
            self.metadata.name.as_deref().unwrap_or(""),
        )
    }

    /// The referenced cloud profile: `spec.cloudProfile` wins over `spec.cloudProfileName`.
    pub fn cloud_profile(&self) -> Option<CloudProfileReference> {
        if let Some(reference) = &self.spec.cloud_profile {
            return Some(reference.clone());
        }
        self.spec
            .cloud_profile_name
            .as_ref()
            .map(|name| CloudProfileReference {
                kind: None,
                name: name.clone(),
            })
    }

    /// The last operation, if any.
    pub fn last_operation(&self) -> Option<&LastOperation> {
        self.status.as_ref()?.last_operation.as_ref()
    }

    /// Whether the last operation is of `type_`.
    pub fn last_operation_is(&self, type_: LastOperationType) -> bool {
        self.last_operation().is_some_and(|op| op.type_ == type_)
    }

    /// Whether the shoot has no worker pools.
    pub fn is_workerless(&self) -> bool {
        self.spec.provider.workers.is_empty()
    }

    /// Whether hibernation is enabled in the spec.
    pub fn hibernation_enabled(&self) -> bool {
        self.spec
            .hibernation
            .as_ref()
            .and_then(|hibernation| hibernation.enabled)
            .unwrap_or(false)
    }
}

/// Serialisation of floating-point fields as Go writes them: integral values without a
/// fraction (`-1`, not `-1.0`), so a Shoot read and written back compares equal.
pub(crate) mod float {
    use serde::Serializer;

    /// Largest magnitude below which every integral `f64` is exact as an `i64`.
    const EXACT: f64 = 9_007_199_254_740_992.0;

    /// Serialises `Some(value)` as an integer when it has no fraction, else as a float.
    pub(crate) fn option<S: Serializer>(
        value: &Option<f64>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            None => serializer.serialize_none(),
            Some(value) if value.fract() == 0.0 && value.abs() < EXACT => {
                // Exact: integral and within the range where f64 holds every integer.
                #[allow(clippy::cast_possible_truncation)]
                let integral = *value as i64;
                serializer.serialize_i64(integral)
            }
            Some(value) => serializer.serialize_f64(*value),
        }
    }
}

/// Schemas of Kubernetes' own value types as CRDs declare them, used where the Shoot holds them.
/// (controller-gen adds `anyOf: [{type: integer}, {type: string}]` as well; kube's schema
/// rewriting strips the branch types, so the flag alone says it.)
pub(crate) mod kube_schema {
    /// What a decimal or binary quantity (`100m`, `1.5Gi`, `2e3`) looks like.
    const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

    /// An `intstr.IntOrString`: an integer or a string such as `25%`.
    pub(crate) fn int_or_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "x-kubernetes-int-or-string": true,
        })
    }

    /// A `resource.Quantity`: an integer or a quantity string.
    pub(crate) fn quantity(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": true,
        })
    }

    /// A `corev1.ResourceList`: resource names to quantities.
    pub(crate) fn resource_list(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let quantity = quantity(generator);
        schemars::json_schema!({
            "type": "object",
            "additionalProperties": quantity,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    #[derive(Serialize)]
    struct Wrapped(#[serde(serialize_with = "super::float::option")] Option<f64>);

    #[test]
    fn floats_serialise_as_go_writes_them() {
        for (value, expected) in [
            (Some(-1.0), "-1"),
            (Some(0.0), "0"),
            (Some(8.0), "8"),
            (Some(0.5), "0.5"),
            (Some(0.15), "0.15"),
            (Some(1e300), "1e+300"),
            (None, "null"),
        ] {
            let written = serde_json::to_string(&Wrapped(value)).unwrap();
            assert_eq!(written, expected, "{value:?}");
        }
    }

    /// Caches keep thousands of Shoots; a section added inline to the spec or status grows every
    /// one of them by its whole size whether set or not (box it, like the others).
    #[test]
    fn an_empty_shoot_stays_small() {
        let size = std::mem::size_of::<super::Shoot>();
        assert!(
            size <= 2048,
            "a Shoot takes {size} bytes before any field is set"
        );
        // nearly every Shoot sets `spec.kubernetes` (at least its version)
        let size = std::mem::size_of::<crate::core::ShootKubernetes>();
        assert!(
            size <= 512,
            "spec.kubernetes takes {size} bytes with only the version set"
        );
        // one per worker pool of every cached Shoot: within jemalloc's 896-byte size class
        let size = std::mem::size_of::<crate::core::Worker>();
        assert!(
            size <= 896,
            "a worker pool takes {size} bytes before any field is set"
        );
    }

    #[test]
    fn boxed_worker_sections_read_and_write_as_before() {
        let pool = serde_json::json!({
            "name": "pool", "machine": {"type": "m"}, "minimum": 1, "maximum": 2,
            "machineControllerManager": {"machineDrainTimeout": "2h", "nodeConditions": ["A"]},
            "clusterAutoscaler": {"scaleDownUtilizationThreshold": 0.5, "maxNodeProvisionTime": "20m"},
        });
        let worker: crate::core::Worker = serde_json::from_value(pool.clone()).unwrap();
        assert_eq!(
            worker
                .machine_controller_manager
                .as_ref()
                .and_then(|settings| settings.machine_drain_timeout.as_deref()),
            Some("2h")
        );
        assert_eq!(serde_json::to_value(&worker).unwrap(), pool);
    }
}
