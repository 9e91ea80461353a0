//! The writes of an install in the seed: the extension namespace (applied while the chart
//! renders), then the manifest Secret and
//! the ManagedResource `garden/<installation>` (through [`crate::managed_manifests::apply`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerInstallation, Seed};
use seedlet_api::names::{labels, namespaces};
use seedlet_runtime::retry::{self, RetryPolicy};

use super::desired;
use super::{Error, Installer};
use crate::managed_manifests::{self, apply};

/// Applies the extension namespace `extension-<installation>` with its labels.
///
/// # Errors
/// [`Error::Namespace`].
pub async fn ensure_namespace(
    ctx: &Installer,
    ci: &ControllerInstallation,
    registration: &str,
    seed: &Seed,
    hosts_garden: bool,
) -> Result<(), Error> {
    let name = namespaces::extension_namespace(&ci.name_any());
    let api: Api<Namespace> = Api::all(ctx.seed.clone());
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
        PatchParams::apply(crate::context::FIELD_MANAGER),
        Patch::Apply(&desired),
    );
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        api.patch(&name, &params, &patch)
    })
    .await
    .map_err(namespace_error)?;
    Ok(())
}

/// Writes the manifest Secret, marks the previous ones garbage-collectable, applies the
/// ManagedResource and deletes the previous Secrets (no gardener-resource-manager GC runs).
pub async fn write_managed_resource(
    ctx: &Installer,
    name: &str,
    registration: &str,
    data: &BTreeMap<String, String>,
) -> Result<(), Error> {
    ctx.ensure_garden_namespace().await?;
    let secret_name = managed_manifests::secret_name(name, data);
    let desired = desired::desired_managed_resource(name, registration, &secret_name);
    apply::apply_managed_resource(&ctx.seed, namespaces::GARDEN, name, data, &desired)
        .await
        .map_err(Error::from)
}
