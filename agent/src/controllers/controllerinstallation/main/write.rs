//! The writes of an install in the seed: the extension namespace, then the manifest Secret and
//! the ManagedResource (and the garbage collection of older manifest Secrets).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerInstallation, Seed};
use seedlet_api::names::{labels, managed_resources, namespaces};
use seedlet_api::resources::ManagedResource;
use seedlet_runtime::retry::{self, RetryPolicy};
use serde_json::json;

use super::desired;
use super::{Error, Installer};

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
    let secret_name = desired::secret_name(name, data);
    let desired = desired::desired_managed_resource(name, registration, &secret_name);
    apply_managed_resource(&ctx.seed, namespaces::GARDEN, name, data, &desired).await
}

/// Writes the immutable manifest Secret `<name>-<hash>` of `data` in `namespace`, marks the
/// previous Secrets of ManagedResource `name` garbage-collectable, server-side applies
/// `desired` (which must reference that Secret) and deletes the unreferenced Secrets of `name`.
/// Shared by the ControllerInstallation controller and the Shoot controller's control-plane
/// chart.
///
/// # Errors
/// [`Error::WriteSecret`], [`Error::WriteManagedResource`].
pub async fn apply_managed_resource(
    seed: &kube::Client,
    namespace: &str,
    name: &str,
    data: &BTreeMap<String, String>,
    desired: &serde_json::Value,
) -> Result<(), Error> {
    let secrets: Api<Secret> = Api::namespaced(seed.clone(), namespace);
    let secret_name = desired::secret_name(name, data);
    match secrets
        .create(
            &PostParams::default(),
            &desired::manifest_secret(namespace, &secret_name, data),
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

    let managed_resources_api: Api<ManagedResource> = Api::namespaced(seed.clone(), namespace);
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
    let params = PatchParams::apply(crate::context::FIELD_MANAGER).force();
    let patch = Patch::Apply(desired);
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        managed_resources_api.patch(name, &params, &patch)
    })
    .await
    .map_err(|source| Error::WriteManagedResource {
        name: name.to_owned(),
        source,
    })?;
    delete_manifest_secrets(&secrets, name, Some(&secret_name)).await
}

/// Deletes the garbage-collectable manifest Secrets of ManagedResource `name` other than `keep`.
///
/// # Errors
/// [`Error::WriteSecret`].
pub async fn delete_manifest_secrets(
    secrets: &Api<Secret>,
    name: &str,
    keep: Option<&str>,
) -> Result<(), Error> {
    let selector = format!("{}=true", managed_resources::GARBAGE_COLLECTABLE_REFERENCE);
    let list = secrets
        .list_metadata(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| Error::WriteSecret {
            name: name.to_owned(),
            source,
        })?;
    for item in list.items {
        let candidate = item.name_any();
        if Some(candidate.as_str()) != keep && is_manifest_secret_of(&candidate, name) {
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
}
