//! `ControllerRegistration`, `ControllerDeployment` (v1beta1 and v1) and `ControllerInstallation`
//! (all cluster-scoped): how extension controllers are registered, packaged and installed on seeds.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::common::{Extra, LocalReference, NamedResourceReference, ObjectReference, schema};
use crate::conditions::Condition;
use crate::names::annotations;

/// Spec of a ControllerRegistration.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "ControllerRegistration",
    derive = "PartialEq",
    derive = "Default",
    shortname = "ctrlreg",
    doc = "A ControllerRegistration registers an extension controller for kind/type combinations.",
    // The whole list: kube-apiserver prints only the first match of a JSONPath such as
    // `.spec.resources[*].kind`, so one kind of many would show.
    printcolumn(name = "Resources", type_ = "string", json_path = ".spec.resources"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ControllerRegistrationSpec {
    /// Kind/type combinations the controller is responsible for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ControllerResource>,
    /// How the controller is deployed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<ControllerRegistrationDeployment>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// `spec.resources[]`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControllerResource {
    /// Extension kind (`Infrastructure`, `Extension`, ...).
    pub kind: String,
    /// Extension type (`aws`, `calico`, ...).
    #[serde(rename = "type")]
    pub type_: String,
    /// Whether the controller is primarily responsible (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<bool>,
    /// Deprecated predecessor of `autoEnable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub globally_enabled: Option<bool>,
    /// Kind `Extension`: cluster types that get the extension automatically (`shoot`, `seed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auto_enable: Vec<String>,
    /// Kind `Extension`: cluster types the extension supports (default `[shoot]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_compatibility: Vec<String>,
    /// Kind `Extension`: reconcile timeout as Go duration (default `3m0s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconcile_timeout: Option<String>,
    /// Kind `Extension`: ordering relative to kube-apiserver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<ControllerResourceLifecycle>,
    /// Kind `Extension`: supported for workerless shoots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workerless_supported: Option<bool>,
    /// Kind `SelfHostedShootExposure`: continuous endpoint updates (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuous_endpoint_update: Option<bool>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl ControllerResource {
    /// `primary`, defaulting to `true`.
    pub fn is_primary(&self) -> bool {
        self.primary.unwrap_or(true)
    }

    /// Whether this resource auto-enables for `cluster_type` (`shoot` also honours the deprecated
    /// `globallyEnabled`).
    pub fn auto_enabled_for(&self, cluster_type: &str) -> bool {
        self.auto_enable.iter().any(|entry| entry == cluster_type)
            || (cluster_type == "shoot" && self.globally_enabled == Some(true))
    }
}

/// `spec.resources[].lifecycle` (`BeforeKubeAPIServer` / `AfterKubeAPIServer`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControllerResourceLifecycle {
    /// Reconcile strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconcile: Option<String>,
    /// Delete strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<String>,
    /// Migrate strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrate: Option<String>,
}

/// Deployment policy of a ControllerRegistration.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ControllerDeploymentPolicy {
    /// Installed only where needed (default).
    #[default]
    OnDemand,
    /// Installed on every (selected) seed.
    Always,
    /// Installed on every seed with at least one shoot.
    AlwaysExceptNoShoots,
}

/// `spec.deployment`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControllerRegistrationDeployment {
    /// Deployment policy (default `OnDemand`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub policy: Option<ControllerDeploymentPolicy>,
    /// Seeds eligible for the controller; absent = all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_selector: Option<LabelSelector>,
    /// The ControllerDeployment to use (at most one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deployment_refs: Vec<LocalReference>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl ControllerRegistration {
    /// The effective deployment policy.
    pub fn policy(&self) -> ControllerDeploymentPolicy {
        self.spec
            .deployment
            .as_ref()
            .and_then(|deployment| deployment.policy)
            .unwrap_or_default()
    }

    /// The name of the referenced ControllerDeployment, if any.
    pub fn deployment_name(&self) -> Option<&str> {
        let deployment = self.spec.deployment.as_ref()?;
        deployment
            .deployment_refs
            .first()
            .map(|reference| reference.name.as_str())
    }
}

/// `core.gardener.cloud/v1` ControllerDeployment fields (no `spec`: they sit at the top level).
///
/// `type` and `providerConfig` are the v1beta1 shape. Gardener's API server never serves them in
/// v1; they are modelled so that a development garden serving this kind from one CRD for both
/// versions (no conversion webhook) can still be read through v1, see
/// [`ControllerDeployment::helm_deployment`].
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1",
    kind = "ControllerDeployment",
    no_spec,
    derive = "PartialEq",
    derive = "Default",
    shortname = "ctrldeploy",
    doc = "A ControllerDeployment describes how an extension controller is deployed (Helm chart).",
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ControllerDeploymentFields {
    /// The Helm chart and values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm: Option<HelmControllerDeployment>,
    /// Inject a garden kubeconfig into the controller's workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject_garden_kubeconfig: Option<bool>,
    /// Secrets/ConfigMaps in `garden` referenced by value templates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<NamedResourceReference>,
    /// v1beta1 deployment type (`helm`), see the type docs.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// v1beta1 provider config (`{chart, values, ociRepository}` for `helm`), see the type docs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
}

/// `helm` of a v1 ControllerDeployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HelmControllerDeployment {
    /// The chart archive (`.tgz`), base64 on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub raw_chart: Option<ByteString>,
    /// Chart values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_object")]
    pub values: Option<serde_json::Value>,
    /// OCI location of the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci_repository: Option<OciRepository>,
}

/// `helm.ociRepository`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OciRepository {
    /// Full reference; excludes `repository`, `tag` and `digest`.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Repository (with `tag` and/or `digest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    /// Tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Digest (`sha256:...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Pull Secret in `garden` (label `gardener.cloud/role=helm-pull-secret`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_secret_ref: Option<LocalReference>,
    /// CA bundle Secret in `garden` (label `gardener.cloud/role=oci-ca-bundle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle_secret_ref: Option<LocalReference>,
}

impl OciRepository {
    /// The reference to pull: `ref`, else `repository@digest` (tag ignored), else
    /// `repository:tag`; a leading `oci://` is stripped. `None` if neither form is complete.
    pub fn pull_reference(&self) -> Option<String> {
        let url = match (&self.reference, &self.repository, &self.digest, &self.tag) {
            (Some(reference), _, _, _) => reference.clone(),
            (None, Some(repository), Some(digest), _) => format!("{repository}@{digest}"),
            (None, Some(repository), None, Some(tag)) => format!("{repository}:{tag}"),
            _ => return None,
        };
        Some(url.strip_prefix("oci://").map(str::to_owned).unwrap_or(url))
    }
}

/// Deployment type of v1beta1 ControllerDeployments that carry a Helm chart.
pub const HELM_DEPLOYMENT_TYPE: &str = "helm";

impl ControllerDeployment {
    /// The Helm deployment: `.helm`, or, for an object stored in the v1beta1 shape (`type: helm`),
    /// the converted `providerConfig` (`chart` → `rawChart`). `None` for non-Helm deployments,
    /// which gardenlet ignores.
    ///
    /// # Errors
    /// When a v1beta1 `providerConfig` does not have the Helm shape.
    pub fn helm_deployment(&self) -> Result<Option<HelmControllerDeployment>, serde_json::Error> {
        if let Some(helm) = &self.spec.helm {
            return Ok(Some(helm.clone()));
        }
        if self.spec.type_.as_deref() != Some(HELM_DEPLOYMENT_TYPE) {
            return Ok(None);
        }
        let config = self
            .spec
            .provider_config
            .clone()
            .unwrap_or_else(|| serde_json::json!({}));
        let config: HelmProviderConfig = serde_json::from_value(config)?;
        Ok(Some(config.into()))
    }
}

/// Fields of a v1beta1 ControllerDeployment (no `spec`).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "ControllerDeployment",
    root = "ControllerDeploymentV1beta1",
    no_spec,
    derive = "PartialEq",
    derive = "Default",
    doc = "A v1beta1 ControllerDeployment: deployment type plus provider config."
)]
#[serde(rename_all = "camelCase")]
pub struct ControllerDeploymentV1beta1Fields {
    /// Deployment type (`helm`).
    #[serde(rename = "type")]
    pub type_: String,
    /// Type-specific configuration (`{chart, values, ociRepository}` for `helm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_config: Option<serde_json::Value>,
    /// Inject a garden kubeconfig into the controller's workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject_garden_kubeconfig: Option<bool>,
}

/// The v1beta1 `providerConfig` of `type: helm`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HelmProviderConfig {
    /// The chart archive, base64 on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ByteString>,
    /// Chart values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<serde_json::Value>,
    /// OCI location of the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci_repository: Option<OciRepository>,
}

impl From<HelmProviderConfig> for HelmControllerDeployment {
    fn from(config: HelmProviderConfig) -> Self {
        HelmControllerDeployment {
            raw_chart: config.chart,
            values: config.values,
            oci_repository: config.oci_repository,
        }
    }
}

impl ControllerDeploymentV1beta1 {
    /// Gardener's strict v1beta1 → v1 conversion: a `helm` provider config becomes `.helm`; any
    /// other type is kept in the `migration.controllerdeployment.gardener.cloud/*` annotations.
    ///
    /// # Errors
    /// When a `helm` provider config does not have the Helm shape (e.g. `chart` is not base64),
    /// like the API server's conversion.
    pub fn try_into_v1(self) -> Result<ControllerDeployment, serde_json::Error> {
        let helm = helm_of(&self.spec)?;
        Ok(assemble(self, helm))
    }
}

impl From<ControllerDeploymentV1beta1> for ControllerDeployment {
    /// Lenient v1beta1 → v1 conversion: like [`ControllerDeploymentV1beta1::try_into_v1`], but a
    /// `helm` provider config that does not decode is kept (verbatim) in the migration annotations
    /// instead, so the result has no `.helm` and is ignored like any non-Helm deployment. Nothing
    /// is lost; use `try_into_v1` to surface the decoding error instead.
    fn from(old: ControllerDeploymentV1beta1) -> Self {
        let helm = helm_of(&old.spec).ok().flatten();
        assemble(old, helm)
    }
}

/// The Helm deployment of a v1beta1 `type: helm` provider config; `None` for other types.
fn helm_of(
    fields: &ControllerDeploymentV1beta1Fields,
) -> Result<Option<HelmControllerDeployment>, serde_json::Error> {
    if fields.type_ != HELM_DEPLOYMENT_TYPE {
        return Ok(None);
    }
    let config = fields
        .provider_config
        .clone()
        .unwrap_or_else(|| serde_json::json!({}));
    Ok(Some(
        serde_json::from_value::<HelmProviderConfig>(config)?.into(),
    ))
}

/// The v1 object: `.helm` if given, else the type and provider config in migration annotations.
fn assemble(
    old: ControllerDeploymentV1beta1,
    helm: Option<HelmControllerDeployment>,
) -> ControllerDeployment {
    let mut metadata = old.metadata;
    let fields = old.spec;
    if helm.is_none() {
        let annotations_map = metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations_map.insert(
            annotations::MIGRATION_CONTROLLER_DEPLOYMENT_TYPE.to_owned(),
            fields.type_.clone(),
        );
        if let Some(config) = &fields.provider_config {
            annotations_map.insert(
                annotations::MIGRATION_CONTROLLER_DEPLOYMENT_PROVIDER_CONFIG.to_owned(),
                config.to_string(),
            );
        }
    }
    ControllerDeployment {
        metadata,
        spec: ControllerDeploymentFields {
            helm,
            inject_garden_kubeconfig: fields.inject_garden_kubeconfig,
            ..ControllerDeploymentFields::default()
        },
    }
}

/// Spec of a ControllerInstallation.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "core.gardener.cloud",
    version = "v1beta1",
    kind = "ControllerInstallation",
    status = "ControllerInstallationStatus",
    derive = "PartialEq",
    derive = "Default",
    shortname = "ctrlinst",
    doc = "A ControllerInstallation requests an extension controller on a seed.",
    printcolumn(
        name = "Registration",
        type_ = "string",
        json_path = ".spec.registrationRef.name"
    ),
    printcolumn(name = "Seed", type_ = "string", json_path = ".spec.seedRef.name"),
    printcolumn(
        name = "Valid",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Valid\")].status"
    ),
    printcolumn(
        name = "Installed",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Installed\")].status"
    ),
    printcolumn(
        name = "Healthy",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Healthy\")].status"
    ),
    printcolumn(
        name = "Progressing",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Progressing\")].status"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ControllerInstallationSpec {
    /// The ControllerRegistration (immutable).
    pub registration_ref: ObjectReference,
    /// The ControllerDeployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_ref: Option<ObjectReference>,
    /// The Seed (one of seedRef/shootRef).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_ref: Option<ObjectReference>,
    /// The self-hosted Shoot (one of seedRef/shootRef).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shoot_ref: Option<ObjectReference>,
    /// Mirrors of the deployment's `resources` (`{kind, name, namespace, resourceVersion}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_refs: Vec<ObjectReference>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

/// Status of a ControllerInstallation.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControllerInstallationStatus {
    /// `Valid`, `Installed`, `Healthy`, `Progressing`, `Required`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Provider status (unused by gardenlet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::raw_any")]
    pub provider_status: Option<serde_json::Value>,
    /// Fields of newer Gardener versions, round-tripped but not in the schema.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Extra,
}

impl crate::conditions::WithConditions for ControllerInstallation {
    fn conditions(&self) -> &[Condition] {
        ControllerInstallation::conditions(self)
    }
}

impl ControllerInstallation {
    /// The conditions of the status (empty without status).
    pub fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|status| status.conditions.as_slice())
            .unwrap_or_default()
    }

    /// The seed name, if the installation targets a seed.
    pub fn seed_name(&self) -> Option<&str> {
        self.spec
            .seed_ref
            .as_ref()
            .map(|reference| reference.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oci_pull_reference_prefers_ref_then_digest_then_tag() {
        let repo = |reference: Option<&str>,
                    repository: Option<&str>,
                    tag: Option<&str>,
                    digest: Option<&str>| {
            OciRepository {
                reference: reference.map(Into::into),
                repository: repository.map(Into::into),
                tag: tag.map(Into::into),
                digest: digest.map(Into::into),
                ..OciRepository::default()
            }
        };
        let cases = [
            (
                repo(Some("oci://r.io/a:1"), None, None, None),
                Some("r.io/a:1"),
            ),
            (
                repo(None, Some("r.io/a"), Some("1"), Some("sha256:ab")),
                Some("r.io/a@sha256:ab"),
            ),
            (
                repo(None, Some("oci://r.io/a"), Some("1"), None),
                Some("r.io/a:1"),
            ),
            (repo(None, Some("r.io/a"), None, None), None),
            (repo(None, None, Some("1"), None), None),
        ];
        for (repository, expected) in cases {
            assert_eq!(
                repository.pull_reference().as_deref(),
                expected,
                "{repository:?}"
            );
        }
    }

    #[test]
    fn helm_deployment_falls_back_to_v1beta1_shape() {
        let cd: ControllerDeployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "core.gardener.cloud/v1",
            "kind": "ControllerDeployment",
            "metadata": {"name": "x"},
            "type": "helm",
            "providerConfig": {"chart": "aGVsbG8=", "values": {"a": 1}}
        }))
        .unwrap();
        let helm = cd.helm_deployment().unwrap().unwrap();
        assert_eq!(helm.raw_chart.unwrap().0, b"hello");
        assert_eq!(helm.values, Some(serde_json::json!({"a": 1})));
    }

    #[test]
    fn helm_deployment_is_none_for_other_types() {
        let mut cd = ControllerDeployment::default();
        cd.spec.type_ = Some("custom".into());
        assert_eq!(cd.helm_deployment().unwrap(), None);
    }

    #[test]
    fn v1beta1_non_helm_type_converts_to_migration_annotations() {
        let old = ControllerDeploymentV1beta1 {
            spec: ControllerDeploymentV1beta1Fields {
                type_: "custom".into(),
                provider_config: Some(serde_json::json!({"k": "v"})),
                inject_garden_kubeconfig: Some(true),
            },
            ..ControllerDeploymentV1beta1::default()
        };
        let new = old.try_into_v1().unwrap();
        assert!(new.spec.helm.is_none());
        let annotations = new.metadata.annotations.unwrap();
        assert_eq!(
            annotations[annotations::MIGRATION_CONTROLLER_DEPLOYMENT_TYPE],
            "custom"
        );
        assert_eq!(
            annotations[annotations::MIGRATION_CONTROLLER_DEPLOYMENT_PROVIDER_CONFIG],
            r#"{"k":"v"}"#
        );
        assert_eq!(new.spec.inject_garden_kubeconfig, Some(true));
    }

    #[test]
    fn v1beta1_helm_conversion_with_invalid_chart_is_strict_or_lossless() {
        let old = ControllerDeploymentV1beta1 {
            spec: ControllerDeploymentV1beta1Fields {
                type_: "helm".into(),
                provider_config: Some(serde_json::json!({"chart": "not base64!"})),
                inject_garden_kubeconfig: None,
            },
            ..ControllerDeploymentV1beta1::default()
        };
        assert!(old.clone().try_into_v1().is_err());
        let lenient = ControllerDeployment::from(old);
        assert!(lenient.spec.helm.is_none());
        let annotations = lenient.metadata.annotations.unwrap();
        assert_eq!(
            annotations[annotations::MIGRATION_CONTROLLER_DEPLOYMENT_TYPE],
            "helm"
        );
        assert_eq!(
            annotations[annotations::MIGRATION_CONTROLLER_DEPLOYMENT_PROVIDER_CONFIG],
            r#"{"chart":"not base64!"}"#
        );
    }

    #[test]
    fn controller_resource_primary_defaults_to_true() {
        let resource = ControllerResource::default();
        assert!(resource.is_primary());
        let resource = ControllerResource {
            primary: Some(false),
            ..ControllerResource::default()
        };
        assert!(!resource.is_primary());
    }
}
