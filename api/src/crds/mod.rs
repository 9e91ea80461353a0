//! CustomResourceDefinitions generated from the Rust types: the seed-side set gardenlet installs
//! (Cluster, extension kinds, ManagedResource) and the `core.gardener.cloud` set for development
//! gardens that run without gardener-apiserver; plus multi-document YAML output and a checker for
//! the structural-schema rules.

mod structural;
mod toplevel;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceSubresourceStatus, CustomResourceSubresources,
};
use kube::CustomResourceExt;

pub(crate) use toplevel::{TopLevel, crd as toplevel_crd};

pub use structural::structural_violations;

use crate::{core, extensions, resources, security, seedmanagement};

/// Errors of this module.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A CRD could not be serialised to YAML.
    #[error("serialising CRD {name} to YAML")]
    Serialize {
        /// Name of the CRD.
        name: String,
        /// The cause.
        #[source]
        source: serde_yaml::Error,
    },
}

/// CRDs the agent (like gardenlet) needs in the seed: `Cluster`, the twelve extension kinds and
/// `ManagedResource`.
pub fn seed_crds() -> Vec<CustomResourceDefinition> {
    let mut cluster = extensions::Cluster::crd();
    // Upstream serves a status subresource for Clusters although the type has no status field.
    for version in &mut cluster.spec.versions {
        version.subresources = Some(CustomResourceSubresources {
            status: Some(CustomResourceSubresourceStatus(serde_json::json!({}))),
            scale: None,
        });
    }
    let crds = vec![
        cluster,
        with_status_fields::<extensions::typed::BackupBucketStatusFields>(
            extensions::BackupBucket::crd(),
        ),
        extensions::BackupEntry::crd(),
        with_status_fields::<extensions::typed::BastionStatusFields>(extensions::Bastion::crd()),
        extensions::ContainerRuntime::crd(),
        extensions::ControlPlane::crd(),
        with_status_fields::<extensions::typed::DNSRecordStatusFields>(extensions::DNSRecord::crd()),
        extensions::Extension::crd(),
        with_status_fields::<extensions::typed::InfrastructureStatusFields>(
            extensions::Infrastructure::crd(),
        ),
        with_status_fields::<extensions::typed::NetworkStatusFields>(extensions::Network::crd()),
        with_status_fields::<extensions::typed::OperatingSystemConfigStatusFields>(
            extensions::OperatingSystemConfig::crd(),
        ),
        with_status_fields::<extensions::typed::SelfHostedShootExposureStatusFields>(
            extensions::SelfHostedShootExposure::crd(),
        ),
        with_status_fields::<extensions::typed::WorkerStatusFields>(extensions::Worker::crd()),
        resources::ManagedResource::crd(),
    ];
    crds.into_iter().map(finish).collect()
}

/// CRDs for the `core.gardener.cloud` kinds seedlet reads or writes, for development gardens
/// without gardener-apiserver.
///
/// `ControllerDeployment` is one CRD serving `v1` (storage) and `v1beta1`. Without a conversion
/// webhook the API server converts between them by rewriting `apiVersion` only, so both versions
/// share one schema — the union of both shapes (`helm`, `resources`, `injectGardenKubeconfig`,
/// `type`, `providerConfig`) — and nothing is pruned whichever version an object is written in.
/// seedlet reads v1 and understands both shapes ([`core::ControllerDeployment::helm_deployment`]).
pub fn garden_crds() -> Vec<CustomResourceDefinition> {
    let crds = vec![
        core::Seed::crd(),
        selectable(core::Shoot::crd(), &[".spec.seedName", ".status.seedName"]),
        core::CloudProfile::crd(),
        core::NamespacedCloudProfile::crd(),
        core::ControllerRegistration::crd(),
        controller_deployment_crd(),
        selectable(core::ControllerInstallation::crd(), &[".spec.seedRef.name"]),
        core::ShootState::crd(),
        selectable(core::BackupBucket::crd(), &[".spec.seedName"]),
        selectable(
            core::BackupEntry::crd(),
            &[".spec.seedName", ".spec.bucketName"],
        ),
        core::Project::crd(),
        core::Quota::crd(),
        core::SecretBinding::crd(),
        core::CredentialsBinding::crd(),
        seedmanagement::ManagedSeed::crd(),
        seedmanagement::ManagedSeedSet::crd(),
        seedmanagement::Gardenlet::crd(),
        selectable(crate::operations::Bastion::crd(), &[".spec.seedName"]),
        toplevel::crd::<core::ExposureClass, crate::typed::ExposureClass>(&TopLevel {
            namespaced: false,
            short: &[],
            columns: &[
                ("Handler", "string", ".handler"),
                ("Age", "date", ".metadata.creationTimestamp"),
            ],
        }),
        security::WorkloadIdentity::crd(),
    ];
    crds.into_iter().map(finish).collect()
}

/// The structural schema of `T` as kube's `CustomResource` derive generates it (inlined
/// subschemas, `nullable` for options, structural rewrites), for schemas assembled by hand.
pub(crate) fn schema_of<T: schemars::JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::openapi3()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .with_transform(kube::core::schema::StructuralSchemaRewriter)
        .with_transform(kube::core::schema::OptionalEnum)
        .with_transform(kube::core::schema::OptionalIntOrString)
        .into_generator();
    let mut schema = serde_json::to_value(generator.into_root_schema_for::<T>())
        .unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    if let Some(map) = schema.as_object_mut() {
        map.remove("title");
        map.remove("$schema");
    }
    schema
}

/// `crd` with the kind-specific status fields typed by `S` added to `status`: the extension
/// kinds share one Rust status type ([`extensions::ExtensionStatus`], which round-trips those
/// fields in its flattened `extra`), while each kind's schema lists exactly its own fields.
fn with_status_fields<S: schemars::JsonSchema>(
    mut crd: CustomResourceDefinition,
) -> CustomResourceDefinition {
    let fields = schema_of::<S>();
    let Some(fields) = fields
        .get("properties")
        .and_then(serde_json::Value::as_object)
    else {
        return crd;
    };
    for version in &mut crd.spec.versions {
        let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|schema| schema.open_api_v3_schema.as_mut())
        else {
            continue;
        };
        let Some(status) = schema
            .properties
            .as_mut()
            .and_then(|properties| properties.get_mut("status"))
        else {
            continue;
        };
        let properties = status.properties.get_or_insert_with(Default::default);
        for (name, field) in fields {
            if let Ok(field) = serde_json::from_value(field.clone()) {
                properties.insert(name.clone(), field);
            }
        }
    }
    crd
}

/// Completes a generated CRD like controller-gen does: an explicit `listKind` (`<Kind>List`),
/// which kube-apiserver would default but simpler API servers may not.
fn finish(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    if crd.spec.names.list_kind.is_none() {
        crd.spec.names.list_kind = Some(format!("{}List", crd.spec.names.kind));
    }
    crd
}

/// `crd` with the fields `json_paths` selectable in every version (Kubernetes ≥ 1.31), the field
/// selectors gardener-apiserver offers for these kinds: the seed authorizer lets a seed list only
/// with a field selector on its seed (`spec.seedRef.name` of ControllerInstallations), and the
/// garden controller's per-Seed checks read only that Seed's objects instead of all of them.
fn selectable(mut crd: CustomResourceDefinition, json_paths: &[&str]) -> CustomResourceDefinition {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::SelectableField;
    for version in &mut crd.spec.versions {
        version.selectable_fields = Some(
            json_paths
                .iter()
                .map(|json_path| SelectableField {
                    json_path: (*json_path).to_owned(),
                })
                .collect(),
        );
    }
    crd
}

/// The two-version ControllerDeployment CRD described in [`garden_crds`].
fn controller_deployment_crd() -> CustomResourceDefinition {
    let mut crd = core::ControllerDeployment::crd();
    let mut versions = Vec::with_capacity(2);
    for version in crd.spec.versions.drain(..) {
        let mut v1beta1 = version.clone();
        v1beta1.name = "v1beta1".to_owned();
        v1beta1.storage = false;
        v1beta1.served = true;
        let mut v1 = version;
        v1.storage = true;
        versions.push(v1);
        versions.push(v1beta1);
    }
    crd.spec.versions = versions;
    crd
}

/// The CRDs as one multi-document YAML stream (`---` before each document).
///
/// # Errors
/// When a CRD cannot be serialised (not expected for generated CRDs).
pub fn to_yaml(crds: &[CustomResourceDefinition]) -> Result<String, Error> {
    let mut out = String::new();
    for crd in crds {
        let document = serde_yaml::to_string(crd).map_err(|source| Error::Serialize {
            name: crd.metadata.name.clone().unwrap_or_default(),
            source,
        })?;
        out.push_str("---\n");
        out.push_str(&document);
    }
    Ok(out)
}
