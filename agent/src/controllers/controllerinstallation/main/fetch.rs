//! The reads of an install: the Seed, the ControllerDeployment (v1, falling back to v1beta1), the
//! data it references, whether the seed hosts the garden, and the garden's cluster identity.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::ListParams;
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use seedlet_api::core::{
    ControllerDeployment, ControllerDeploymentV1beta1, ControllerRegistration, Seed,
};
use seedlet_api::names::{labels, namespaces, objects};
use seedlet_runtime::retry::{self, RetryPolicy};

use super::conditions::{Conditions, seed_or_condition};
use super::values::ResourceData;
use super::{Error, Installer};

/// Our Seed, or the `Valid` condition and error when it is missing or unreadable.
///
/// # Errors
/// [`Error::SeedNotFound`], [`Error::ReadSeed`].
pub async fn read_seed(ctx: &Installer, conditions: &mut Conditions) -> Result<Seed, Error> {
    seed_or_condition(fetch_seed(ctx).await, &ctx.seed_name, conditions)
}

/// Our Seed from the shared store, else from the garden (retried in place on 500). A stored
/// Seed without `status.clusterIdentity` is read again from the garden: the identity is written
/// right after registration, and the store may not have seen that write yet.
pub async fn fetch_seed(ctx: &Installer) -> Result<Option<Seed>, kube::Error> {
    if let Some(seed) = ctx
        .cached_seed()
        .filter(crate::cluster_identity::has_identity)
    {
        return Ok(Some(seed));
    }
    let seeds = Api::<Seed>::all(ctx.garden());
    retry::idempotent(&RetryPolicy::RECONCILE, || seeds.get_opt(&ctx.seed_name)).await
}

/// A ControllerRegistration from the shared store, else from the garden (retried in place on 500).
pub async fn fetch_registration(
    ctx: &Installer,
    name: &str,
) -> Result<Option<ControllerRegistration>, kube::Error> {
    if let Some(registration) = ctx.cached_registration(name) {
        return Ok(Some(registration));
    }
    let registrations = Api::<ControllerRegistration>::all(ctx.garden());
    retry::idempotent(&RetryPolicy::RECONCILE, || registrations.get_opt(name)).await
}

/// The ControllerDeployment through v1, falling back to v1beta1 when the garden does not serve v1.
pub async fn read_deployment(
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
pub async fn referenced_data(
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
pub async fn seed_hosts_garden(ctx: &Installer) -> Result<bool, Error> {
    let gvk = GroupVersionKind::gvk("operator.gardener.cloud", "v1alpha1", "Garden");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "gardens");
    let api: Api<DynamicObject> = Api::all_with(ctx.seed.clone(), &resource);
    match api.list(&ListParams::default().limit(1)).await {
        Ok(list) => Ok(!list.items.is_empty()),
        // An unknown group answers 404 without a Status body (no reason `NotFound`).
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(source) => Err(Error::ReadGardens { source }),
    }
}

/// Reads the garden cluster identity (`kube-system/cluster-identity`); empty when unreadable.
pub async fn garden_identity(garden: kube::Client) -> Option<String> {
    let api: Api<ConfigMap> = Api::namespaced(garden, namespaces::KUBE_SYSTEM);
    match api.get_opt(objects::CLUSTER_IDENTITY).await {
        Ok(config_map) => config_map
            .and_then(|cm| cm.data)
            .and_then(|mut data| data.remove(objects::CLUSTER_IDENTITY_KEY)),
        Err(error) => {
            tracing::debug!(error = %seedlet_runtime::error_chain(&error), "reading garden cluster identity failed");
            None
        }
    }
}
