//! Writing rendered manifests into the seed (see the parent module): the content-addressed
//! manifest Secret, the ManagedResource referencing it, and the garbage collection of the Secrets
//! it referenced before (no gardener-resource-manager runs to collect them).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::names::managed_resources;
use seedlet_api::resources::ManagedResource;
use seedlet_runtime::retry::{self, RetryPolicy};
use serde_json::json;

/// A failed write of the manifests.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Writing, labelling or deleting a manifest Secret failed.
    #[error("writing manifest secret {name}")]
    WriteSecret {
        /// Secret name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Reading or applying the ManagedResource failed.
    #[error("writing managed resource {name}")]
    WriteManagedResource {
        /// ManagedResource name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

/// Writes the immutable manifest Secret `<name>-<hash>` of `data` in `namespace`, marks the
/// previous Secrets of ManagedResource `name` garbage-collectable, server-side applies
/// `desired` (which must reference that Secret) and deletes the unreferenced Secrets of `name`.
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
    let secret_name = super::secret_name(name, data);
    let managed_resources_api: Api<ManagedResource> = Api::namespaced(seed.clone(), namespace);
    // The Secret's create and the ManagedResource's read are independent: one round trip.
    let secret = super::manifest_secret(namespace, &secret_name, data);
    let create_params = PostParams::default();
    let (created, existing) = tokio::join!(
        secrets.create(&create_params, &secret),
        retry::idempotent(&RetryPolicy::RECONCILE, || {
            managed_resources_api.get_opt(name)
        })
    );
    match created {
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
    let existing = existing.map_err(|source| Error::WriteManagedResource {
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

/// Whether `secret` is named `<name>-<8 hex>` (a manifest Secret of ManagedResource `name`).
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
