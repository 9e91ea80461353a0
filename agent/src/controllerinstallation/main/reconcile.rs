//! Installing one ControllerInstallation (spec §2.2): resolve registration, seed and deployment,
//! render the chart, write namespace, manifest Secret and ManagedResource in the seed, and keep
//! `Valid`/`Installed` in the garden. Deletion is in [`super::delete`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::json;

use seedlet_api::conditions::{Condition, ConditionStatus, find_or_init};
use seedlet_api::core::{
    ControllerDeployment, ControllerDeploymentV1beta1, ControllerInstallation,
    ControllerRegistration, HelmControllerDeployment, Seed,
};
use seedlet_api::names::{
    condition_types, finalizers, labels, managed_resources, namespaces, objects, reasons,
};
use seedlet_api::resources::ManagedResource;
use seedlet_chartrender::{Chart, GardenerInfo, Limits, RenderOptions};

use super::desired;
use super::values::{self, ResourceData};
use super::{Error, Installer};
use seedlet_runtime::finalizer;
use seedlet_runtime::retry::{self, RetryPolicy};
use seedlet_runtime::status::update_conditions;

/// Reconciles one ControllerInstallation of this seed.
///
/// # Errors
/// See [`Error`]; conditions are written on every exit (write failures only logged).
pub async fn reconcile(
    ci: Arc<ControllerInstallation>,
    ctx: Arc<Installer>,
) -> Result<Action, Error> {
    let started = tokio::time::Instant::now();
    let result = dispatch(&ci, &ctx).await;
    ctx.agent
        .metrics
        .reconciled(super::NAME, started.elapsed(), result.is_ok());
    result
}

/// Retry delay by error: short for conflicts and transient reads, capped at 30s.
pub fn error_policy(
    ci: Arc<ControllerInstallation>,
    error: &Error,
    _ctx: Arc<Installer>,
) -> Action {
    if let Error::Finalizer { source, .. } | Error::WriteConditions { source, .. } = error
        && seedlet_runtime::status::is_conflict(source)
    {
        // Main, care and required share the object: losing a write is routine.
        tracing::debug!(controller_installation = %ci.name_any(), "controller installation write lost to another writer, retrying");
        return Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE);
    }
    tracing::warn!(controller_installation = %ci.name_any(), error = %seedlet_runtime::error_chain(error), "reconciling controller installation failed");
    Action::requeue(match error {
        Error::Finalizer { .. } | Error::WriteConditions { .. } => Duration::from_millis(200),
        Error::ClusterIdentityMissing { .. }
        | Error::RegistrationNotFound { .. }
        | Error::SeedNotFound { .. } => Duration::from_secs(5),
        _ => Duration::from_secs(2),
    })
}

async fn dispatch(ci: &ControllerInstallation, ctx: &Installer) -> Result<Action, Error> {
    if ci.seed_name() != Some(ctx.agent.seed_name.as_str()) {
        return Ok(Action::await_change());
    }
    if ci.metadata.deletion_timestamp.is_some() {
        return super::delete::delete(ci, ctx).await;
    }
    let name = ci.name_any();
    let api: Api<ControllerInstallation> = Api::all(ctx.garden());
    finalizer::ensure(&api, ci, finalizers::CONTROLLER_INSTALLATION)
        .await
        .map_err(|source| Error::Finalizer {
            name: name.clone(),
            source,
        })?;

    let now = ctx.agent.clock.now();
    let mut conditions = Conditions::load(ci, now);
    let result = install(ci, ctx, &mut conditions).await;
    let written = conditions.write(&api, &name).await;
    match (result, written) {
        // A lost condition write (e.g. 409 against care/required) is retried via the queue.
        (Ok(_), Err(source)) => Err(Error::WriteConditions { name, source }),
        (result, _) => result,
    }
}

/// `Valid` and `Installed` as this reconcile leaves them.
pub(super) struct Conditions {
    pub(super) valid: Condition,
    pub(super) installed: Condition,
    pub(super) installed_touched: bool,
    pub(super) now: jiff::Timestamp,
}

impl Conditions {
    pub(super) fn load(ci: &ControllerInstallation, now: jiff::Timestamp) -> Self {
        Self {
            valid: find_or_init(ci.conditions(), condition_types::VALID, now),
            installed: find_or_init(ci.conditions(), condition_types::INSTALLED, now),
            installed_touched: false,
            now,
        }
    }

    pub(super) fn valid(&mut self, status: ConditionStatus, reason: &str, message: &str) {
        self.valid = self.valid.updated(status, reason, message, self.now);
    }

    pub(super) fn installed(&mut self, status: ConditionStatus, reason: &str, message: &str) {
        self.installed = self.installed.updated(status, reason, message, self.now);
        self.installed_touched = true;
    }

    /// Writes `Valid` (always) and `Installed` (when this reconcile changed it).
    ///
    /// # Errors
    /// The read or patch error.
    pub(super) async fn write(
        &self,
        api: &Api<ControllerInstallation>,
        name: &str,
    ) -> Result<bool, kube::Error> {
        let mut updates = vec![self.valid.clone()];
        if self.installed_touched {
            updates.push(self.installed.clone());
        }
        update_conditions(api, name, |_| updates).await
    }
}

async fn install(
    ci: &ControllerInstallation,
    ctx: &Installer,
    conditions: &mut Conditions,
) -> Result<Action, Error> {
    let name = ci.name_any();
    let garden = ctx.garden();
    let registration_name = ci.spec.registration_ref.name.clone();

    // The registration, Seed, deployment and Gardens in the seed are independent reads: issue
    // them together (one round trip instead of four; this is most of a first install's latency)
    // and judge them in the order gardenlet does, so conditions and errors stay the same.
    let registrations = Api::<ControllerRegistration>::all(garden.clone());
    let deployment_name = ci.spec.deployment_ref.as_ref().map(|r| r.name.clone());
    let (registration, seed, deployment, hosts_garden) = tokio::join!(
        retry::idempotent(&RetryPolicy::RECONCILE, || {
            registrations.get_opt(&registration_name)
        }),
        fetch_seed(ctx),
        async {
            match &deployment_name {
                Some(name) => read_deployment(ctx, name).await,
                None => Ok(None),
            }
        },
        seed_hosts_garden(ctx),
    );
    match registration {
        Ok(Some(_)) => {}
        Ok(None) => {
            let message = format!(
                "Referenced ControllerRegistration does not exist: controllerregistrations.core.gardener.cloud {registration_name:?} not found"
            );
            conditions.valid(
                ConditionStatus::False,
                reasons::REGISTRATION_NOT_FOUND,
                &message,
            );
            return Err(Error::RegistrationNotFound {
                name: registration_name,
            });
        }
        Err(source) => {
            conditions.valid(
                ConditionStatus::Unknown,
                reasons::REGISTRATION_READ_ERROR,
                &format!("Referenced ControllerRegistration cannot be read: {source}"),
            );
            return Err(Error::ReadRegistration {
                name: registration_name,
                source,
            });
        }
    }
    let seed = seed_or_condition(seed, &ctx.agent.seed_name, conditions)?;

    // Deployment (only Helm deployments are handled).
    let Some(deployment_name) = deployment_name else {
        return Ok(Action::await_change());
    };
    let Some(deployment) = deployment? else {
        return Err(Error::DeploymentNotFound {
            name: deployment_name,
        });
    };
    let helm = match deployment.helm_deployment() {
        Ok(Some(helm)) => helm,
        Ok(None) => return Ok(Action::await_change()),
        Err(source) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::CHART_INFORMATION_INVALID,
                &format!("chart information cannot be decoded: {source}"),
            );
            return Ok(Action::await_change());
        }
    };

    // Values.
    let mut deployment_values = match values::deployment_values(helm.values.as_ref()) {
        Ok(values) => values,
        Err(message) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::CHART_INFORMATION_INVALID,
                &format!("chart values cannot be unmarshalled: {message}"),
            );
            return Ok(Action::await_change());
        }
    };
    if helm.values.is_some() && !deployment.spec.resources.is_empty() {
        let rendered = match referenced_data(ctx, &deployment).await {
            Ok(data) => values::render_value_templates(&deployment_values, &data),
            Err(message) => Err(message),
        };
        match rendered {
            Ok(rendered) => deployment_values = rendered,
            Err(message) => {
                conditions.valid(
                    ConditionStatus::False,
                    reasons::RENDERING_HELM_VALUES_FAILED,
                    &format!("helm values cannot be rendered: {message}"),
                );
                return Ok(Action::await_change());
            }
        }
    }

    // Namespace and identities.
    let hosts_garden = hosts_garden?;
    ensure_namespace(ctx, ci, &registration_name, &seed, hosts_garden).await?;
    let Some(seed_identity) = seed
        .status
        .as_ref()
        .and_then(|s| s.cluster_identity.clone())
    else {
        return Err(Error::ClusterIdentityMissing {
            seed: seed.name_any(),
        });
    };
    if deployment.spec.inject_garden_kubeconfig == Some(true) {
        // Not implemented: the generic garden kubeconfig and token-requestor Secret need a
        // TokenRequestor in the seed, which seedlet does not run (spec §2.6).
        tracing::warn!(controller_installation = %name, "injectGardenKubeconfig is not supported by seedlet, installing without garden access");
    }
    let mut seed_json = serde_json::to_value(&seed).map_err(|source| Error::Encode {
        name: name.clone(),
        source,
    })?;
    seed_json["status"]["clusterIdentity"] = json!(seed_identity);
    let info = GardenerInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        garden_cluster_identity: ctx.garden_identity().await,
        generic_kubeconfig_secret_name: None,
        feature_gates: ctx
            .agent
            .config
            .feature_gates
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect(),
    };
    let chart_values = values::merged(
        &deployment_values,
        &seedlet_chartrender::gardener_values(&seed_json, &info),
    );

    // Chart.
    let bytes = match chart_bytes(&helm) {
        Ok(bytes) => bytes,
        Err((reason, message)) => {
            conditions.valid(ConditionStatus::False, reason, &message);
            return Ok(Action::await_change());
        }
    };
    let extension_namespace = namespaces::extension_namespace(&name);
    let rendered = Chart::from_archive(bytes, &Limits::default())
        .map_err(|error| seedlet_runtime::error_chain(&error))
        .and_then(|chart| {
            let options = RenderOptions {
                release_name: registration_name.clone(),
                namespace: extension_namespace.clone(),
                values: chart_values,
                ..RenderOptions::default()
            };
            ctx.renderer
                .render(&chart, &options)
                .map_err(|error| seedlet_runtime::error_chain(&error))
        });
    let rendered = match rendered {
        Ok(rendered) => rendered,
        Err(message) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::CHART_CANNOT_BE_RENDERED,
                &format!("chart rendering process failed: {message}"),
            );
            return Ok(Action::await_change());
        }
    };
    let data = match desired::secret_data(
        &rendered.templates,
        &extension_namespace,
        &ctx.agent.seed_name,
    ) {
        Ok(data) => data,
        Err(desired::DataError::Yaml { template, message }) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::CHART_CANNOT_BE_RENDERED,
                &format!(
                    "chart rendering process failed: YAML parse error on {template}: {message}"
                ),
            );
            return Ok(Action::await_change());
        }
        Err(error @ desired::DataError::UnsupportedWorkload { .. }) => {
            conditions.valid(
                ConditionStatus::True,
                reasons::REGISTRATION_VALID,
                reasons::REGISTRATION_VALID_MESSAGE,
            );
            conditions.installed(
                ConditionStatus::False,
                reasons::INSTALLATION_FAILED,
                &error.to_string(),
            );
            return Err(Error::Mutate {
                name,
                source: error,
            });
        }
    };
    conditions.valid(
        ConditionStatus::True,
        reasons::REGISTRATION_VALID,
        reasons::REGISTRATION_VALID_MESSAGE,
    );

    // Secret + ManagedResource.
    if let Err(error) = write_managed_resource(ctx, &name, &registration_name, &data).await {
        conditions.installed(
            ConditionStatus::False,
            reasons::INSTALLATION_FAILED,
            &format!(
                "Creation of ManagedResource {name:?} failed: {}",
                seedlet_runtime::error_chain(&error)
            ),
        );
        return Err(error);
    }
    if conditions.installed.status == ConditionStatus::Unknown {
        conditions.installed(
            ConditionStatus::False,
            reasons::INSTALLATION_PENDING,
            &format!("Installation of ManagedResource {name:?} is still pending."),
        );
    }
    // No periodic requeue: changes of the installation, its registration or deployment trigger.
    Ok(Action::await_change())
}

pub(super) async fn read_seed(ctx: &Installer, conditions: &mut Conditions) -> Result<Seed, Error> {
    seed_or_condition(fetch_seed(ctx).await, &ctx.agent.seed_name, conditions)
}

/// Our Seed from the garden (retried in place on 500).
async fn fetch_seed(ctx: &Installer) -> Result<Option<Seed>, kube::Error> {
    let seeds = Api::<Seed>::all(ctx.garden());
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        seeds.get_opt(&ctx.agent.seed_name)
    })
    .await
}

/// The Seed, or the `Valid` condition and error for a missing or unreadable one.
fn seed_or_condition(
    read: Result<Option<Seed>, kube::Error>,
    seed_name: &str,
    conditions: &mut Conditions,
) -> Result<Seed, Error> {
    let seed_name = seed_name.to_owned();
    match read {
        Ok(Some(seed)) => Ok(seed),
        Ok(None) => {
            conditions.valid(ConditionStatus::False, reasons::SEED_NOT_FOUND, &format!("Referenced Seed does not exist: seeds.core.gardener.cloud {seed_name:?} not found"));
            Err(Error::SeedNotFound { name: seed_name })
        }
        Err(source) => {
            conditions.valid(
                ConditionStatus::Unknown,
                reasons::SEED_READ_ERROR,
                &format!("Referenced Seed cannot be read: {source}"),
            );
            Err(Error::ReadSeed {
                name: seed_name,
                source,
            })
        }
    }
}

/// The ControllerDeployment through v1, falling back to v1beta1 when the garden does not serve v1.
async fn read_deployment(
    ctx: &Installer,
    name: &str,
) -> Result<Option<ControllerDeployment>, Error> {
    let read_error = |source| Error::ReadDeployment {
        name: name.to_owned(),
        source,
    };
    let deployments = Api::<ControllerDeployment>::all(ctx.garden());
    match retry::idempotent(&RetryPolicy::RECONCILE, || deployments.get(name)).await {
        Ok(deployment) => Ok(Some(deployment)),
        Err(kube::Error::Api(status)) if status.is_not_found() => {
            // Either the object is missing or v1 is not served: ask v1beta1.
            let old_deployments = Api::<ControllerDeploymentV1beta1>::all(ctx.garden());
            match retry::idempotent(&RetryPolicy::RECONCILE, || old_deployments.get_opt(name)).await
            {
                Ok(old) => Ok(old.map(ControllerDeployment::from)),
                Err(kube::Error::Api(status)) if status.is_not_found() => Ok(None),
                Err(source) => Err(read_error(source)),
            }
        }
        Err(source) => Err(read_error(source)),
    }
}

/// Data of the deployment's referenced Secrets/ConfigMaps (garden namespace `garden`, label
/// `gardener.cloud/role=resource-reference`), by logical name.
async fn referenced_data(
    ctx: &Installer,
    deployment: &ControllerDeployment,
) -> Result<ResourceData, String> {
    let mut out = ResourceData::new();
    for resource in &deployment.spec.resources {
        let reference = &resource.resource_ref;
        if reference.api_version.as_deref().is_some_and(|v| v != "v1") {
            return Err(format!(
                "resource {:?} has unsupported apiVersion {:?}",
                resource.name, reference.api_version
            ));
        }
        let (object_labels, data) = match reference.kind.as_str() {
            "Secret" => {
                let secret = Api::<Secret>::namespaced(ctx.garden(), namespaces::GARDEN)
                    .get(&reference.name)
                    .await
                    .map_err(|e| format!("reading Secret garden/{}: {e}", reference.name))?;
                let data = secret
                    .data
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
                    .collect::<BTreeMap<_, _>>();
                (secret.metadata.labels, data)
            }
            "ConfigMap" => {
                let config_map = Api::<ConfigMap>::namespaced(ctx.garden(), namespaces::GARDEN)
                    .get(&reference.name)
                    .await
                    .map_err(|e| format!("reading ConfigMap garden/{}: {e}", reference.name))?;
                (
                    config_map.metadata.labels,
                    config_map.data.unwrap_or_default(),
                )
            }
            other => {
                return Err(format!(
                    "resource {:?} has unsupported kind {other:?}",
                    resource.name
                ));
            }
        };
        let role = object_labels
            .as_ref()
            .and_then(|l| l.get(labels::ROLE))
            .map(String::as_str);
        if role != Some(labels::ROLE_RESOURCE_REFERENCE) {
            return Err(format!(
                "{} garden/{} is not labelled {}={}",
                reference.kind,
                reference.name,
                labels::ROLE,
                labels::ROLE_RESOURCE_REFERENCE
            ));
        }
        out.insert(resource.name.clone(), data);
    }
    Ok(out)
}

/// Whether the seed also hosts the garden (any `operator.gardener.cloud` Garden; no CRD = no).
async fn seed_hosts_garden(ctx: &Installer) -> Result<bool, Error> {
    let gvk = GroupVersionKind::gvk("operator.gardener.cloud", "v1alpha1", "Garden");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "gardens");
    let api: Api<DynamicObject> = Api::all_with(ctx.agent.seed.clone(), &resource);
    match api.list(&ListParams::default().limit(1)).await {
        Ok(list) => Ok(!list.items.is_empty()),
        // An unknown group answers 404 without a Status body (no reason `NotFound`).
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(source) => Err(Error::ReadGardens { source }),
    }
}

async fn ensure_namespace(
    ctx: &Installer,
    ci: &ControllerInstallation,
    registration: &str,
    seed: &Seed,
    hosts_garden: bool,
) -> Result<(), Error> {
    let name = namespaces::extension_namespace(&ci.name_any());
    let api: Api<Namespace> = Api::all(ctx.agent.seed.clone());
    let namespace_error = |source| Error::Namespace {
        name: name.clone(),
        source,
    };
    let existing = retry::idempotent(&RetryPolicy::RECONCILE, || api.get_opt(&name))
        .await
        .map_err(namespace_error)?;
    let had_access_label = existing
        .as_ref()
        .and_then(|ns| ns.metadata.labels.as_ref())
        .is_some_and(|l| l.contains_key(labels::ACCESS_TARGET_APISERVER));
    let zones = seed.spec.provider.zones.clone();
    let pod_security = ci
        .annotations()
        .get(seedlet_api::names::annotations::POD_SECURITY_ENFORCE)
        .map(String::as_str);
    let desired = desired::desired_namespace(
        &ci.name_any(),
        registration,
        &zones,
        hosts_garden,
        had_access_label,
        pod_security,
    );
    let (params, patch) = (
        PatchParams::apply(crate::FIELD_MANAGER),
        Patch::Apply(&desired),
    );
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        api.patch(&name, &params, &patch)
    })
    .await
    .map_err(namespace_error)?;
    Ok(())
}

/// The chart archive: `rawChart`, or a condition for the other cases.
fn chart_bytes(helm: &HelmControllerDeployment) -> Result<&[u8], (&'static str, String)> {
    if let Some(chart) = &helm.raw_chart {
        return Ok(&chart.0);
    }
    if let Some(repository) = &helm.oci_repository {
        // seedlet does not pull charts from OCI registries: the agent reaches no registry in its
        // supported setups, and a half-working pull is worse than a clear condition.
        let reference = repository
            .pull_reference()
            .unwrap_or_else(|| "<incomplete reference>".to_owned());
        return Err((
            reasons::OCI_CHART_CANNOT_BE_PULLED,
            format!(
                "chart pulling process failed: OCI chart {reference:?} cannot be pulled: OCI charts are not supported by seedlet, use helm.rawChart"
            ),
        ));
    }
    Err((
        reasons::CHART_INFORMATION_INVALID,
        "chart information invalid: neither helm.rawChart nor helm.ociRepository is set".to_owned(),
    ))
}

/// Writes the manifest Secret, marks the previous ones garbage-collectable, applies the
/// ManagedResource and deletes the previous Secrets (no gardener-resource-manager GC runs).
async fn write_managed_resource(
    ctx: &Installer,
    name: &str,
    registration: &str,
    data: &BTreeMap<String, String>,
) -> Result<(), Error> {
    ctx.ensure_garden_namespace().await?;
    let seed = ctx.agent.seed.clone();
    let secrets: Api<Secret> = Api::namespaced(seed.clone(), namespaces::GARDEN);
    let secret_name = desired::secret_name(name, data);
    match secrets
        .create(
            &PostParams::default(),
            &desired::desired_secret(&secret_name, data),
        )
        .await
    {
        Ok(_) => {}
        // Content-addressed and immutable: an existing Secret of this name has this data.
        Err(kube::Error::Api(status)) if status.is_already_exists() => {}
        Err(source) => {
            return Err(Error::WriteSecret {
                name: secret_name,
                source,
            });
        }
    }

    let managed_resources_api: Api<ManagedResource> =
        Api::namespaced(seed.clone(), namespaces::GARDEN);
    let existing = retry::idempotent(&RetryPolicy::RECONCILE, || {
        managed_resources_api.get_opt(name)
    })
    .await
    .map_err(|source| Error::WriteManagedResource {
        name: name.to_owned(),
        source,
    })?;
    let previous: Vec<String> = existing
        .map(|mr| {
            mr.spec
                .secret_refs
                .into_iter()
                .map(|r| r.name)
                .filter(|n| *n != secret_name)
                .collect()
        })
        .unwrap_or_default();
    let gc_label =
        json!({"metadata": {"labels": {managed_resources::GARBAGE_COLLECTABLE_REFERENCE: "true"}}});
    for old in &previous {
        match secrets
            .patch(old, &PatchParams::default(), &Patch::Merge(&gc_label))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(source) => {
                return Err(Error::WriteSecret {
                    name: old.clone(),
                    source,
                });
            }
        }
    }

    // `force`: gardenlet replaces the whole spec, so fields another manager set are taken over.
    let desired = desired::desired_managed_resource(name, registration, &secret_name);
    let params = PatchParams::apply(crate::FIELD_MANAGER).force();
    let patch = Patch::Apply(&desired);
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        managed_resources_api.patch(name, &params, &patch)
    })
    .await
    .map_err(|source| Error::WriteManagedResource {
        name: name.to_owned(),
        source,
    })?;

    // Garbage-collect unreferenced manifest Secrets of this installation.
    let selector = format!("{}=true", managed_resources::GARBAGE_COLLECTABLE_REFERENCE);
    let list = secrets
        .list_metadata(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| Error::WriteSecret {
            name: secret_name.clone(),
            source,
        })?;
    for item in list.items {
        let candidate = item.name_any();
        if candidate != secret_name && is_manifest_secret_of(&candidate, name) {
            match secrets.delete(&candidate, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.is_not_found() => {}
                Err(source) => {
                    return Err(Error::WriteSecret {
                        name: candidate,
                        source,
                    });
                }
            }
        }
    }
    Ok(())
}

/// Whether `secret` is named `<installation>-<8 hex>`.
pub fn is_manifest_secret_of(secret: &str, installation: &str) -> bool {
    secret
        .strip_prefix(installation)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|hash| hash.len() == 8 && hash.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Reads the garden cluster identity (`kube-system/cluster-identity`); empty when unreadable.
pub(super) async fn garden_identity(garden: kube::Client) -> Option<String> {
    let api: Api<ConfigMap> = Api::namespaced(garden, namespaces::KUBE_SYSTEM);
    match api.get_opt(objects::CLUSTER_IDENTITY).await {
        Ok(config_map) => config_map
            .and_then(|cm| cm.data)
            .and_then(|mut data| data.remove(objects::CLUSTER_IDENTITY_KEY)),
        Err(error) => {
            tracing::debug!(error = %error, "reading garden cluster identity failed");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_secrets_are_recognised_by_exact_hash_suffix() {
        assert!(is_manifest_secret_of("ci-0123abcd", "ci"));
        assert!(!is_manifest_secret_of("ci-b-0123abcd", "ci"));
        assert!(!is_manifest_secret_of("ci-0123abcz", "ci"));
        assert!(!is_manifest_secret_of("ci", "ci"));
        assert!(!is_manifest_secret_of("other-0123abcd", "ci"));
    }

    #[test]
    fn chart_bytes_rejects_oci_with_clear_reason() {
        let helm = HelmControllerDeployment {
            oci_repository: Some(seedlet_api::core::OciRepository {
                reference: Some("oci://r.io/c:1".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let (reason, message) = chart_bytes(&helm).unwrap_err();
        assert_eq!(reason, "OCIChartCannotBePulled");
        assert!(
            message.starts_with("chart pulling process failed: "),
            "{message}"
        );
        assert!(message.contains("r.io/c:1"));
        let (reason, _) = chart_bytes(&HelmControllerDeployment::default()).unwrap_err();
        assert_eq!(reason, "ChartInformationInvalid");
    }
}
