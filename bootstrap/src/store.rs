//! The seed-cluster side of the identity: reading the kubeconfig and bootstrap Secrets, storing a new
//! kubeconfig (spec §1.5) and deleting the bootstrap Secret.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Map, Value, json};

use crate::error::{Error, is_not_found};
use crate::names::{KUBECONFIG_DATA_KEY, OPERATION_ANNOTATION, OPERATION_RENEW};
use crate::options::{BootstrapSource, SecretRef};

/// Reads `secret` from the seed cluster; NotFound is `None`.
///
/// # Errors
/// [`Error::ReadSecret`] for any other API error.
pub async fn read_secret(seed: &kube::Client, secret: &SecretRef) -> Result<Option<Secret>, Error> {
    let api: Api<Secret> = Api::namespaced(seed.clone(), &secret.namespace);
    api.get_opt(&secret.name)
        .await
        .map_err(|source| Error::ReadSecret {
            secret: secret.to_string(),
            source: Box::new(source),
        })
}

/// The non-empty `data.kubeconfig` of a Secret, as text.
pub fn kubeconfig_of(secret: &Secret) -> Option<String> {
    let bytes = secret.data.as_ref()?.get(KUBECONFIG_DATA_KEY)?;
    if bytes.0.is_empty() {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes.0).into_owned())
}

/// Whether the Secret carries `gardener.cloud/operation=renew`.
pub fn renew_requested(secret: &Secret) -> bool {
    secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(OPERATION_ANNOTATION))
        .is_some_and(|value| value == OPERATION_RENEW)
}

/// Reads the bootstrap kubeconfig: `data.kubeconfig` of the bootstrap Secret, or the file.
///
/// # Errors
/// [`Error::BootstrapSecretMissing`] / [`Error::BootstrapSecretEmpty`] when the Secret is
/// missing or has no kubeconfig, [`Error::ReadSecret`] /
/// [`Error::ReadFile`] when reading fails.
pub async fn read_bootstrap_kubeconfig(
    seed: &kube::Client,
    source: &BootstrapSource,
) -> Result<String, Error> {
    match source {
        BootstrapSource::Secret(secret) => {
            let Some(object) = read_secret(seed, secret).await? else {
                return Err(Error::BootstrapSecretMissing {
                    secret: secret.to_string(),
                });
            };
            kubeconfig_of(&object).ok_or_else(|| Error::BootstrapSecretEmpty {
                secret: secret.to_string(),
            })
        }
        BootstrapSource::File(path) => {
            tokio::fs::read_to_string(path)
                .await
                .map_err(|source| Error::ReadFile {
                    path: path.display().to_string(),
                    source,
                })
        }
    }
}

/// Whether a bootstrap kubeconfig can be read right now (a missing Secret or file counts as unavailable).
pub async fn bootstrap_available(seed: &kube::Client, source: Option<&BootstrapSource>) -> bool {
    match source {
        None => false,
        Some(source) => read_bootstrap_kubeconfig(seed, source).await.is_ok(),
    }
}

/// Stores `kubeconfig` in `secret`: creates it when missing (type `Opaque`, no labels or annotations), otherwise
/// merge-patches `data` to exactly `{kubeconfig}` and removes the `gardener.cloud/operation` annotation, keeping
/// all other metadata. Idempotent.
///
/// # Errors
/// [`Error::StoreSecret`] when reading, creating or patching fails.
pub async fn store_kubeconfig(
    seed: &kube::Client,
    secret: &SecretRef,
    kubeconfig: &str,
) -> Result<(), Error> {
    let api: Api<Secret> = Api::namespaced(seed.clone(), &secret.namespace);
    let store_error = |source| Error::StoreSecret {
        secret: secret.to_string(),
        source: Box::new(source),
    };
    let existing = api.get_opt(&secret.name).await.map_err(store_error)?;
    if existing.is_none() {
        let object = Secret {
            metadata: ObjectMeta {
                name: Some(secret.name.clone()),
                namespace: Some(secret.namespace.clone()),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([(
                KUBECONFIG_DATA_KEY.to_owned(),
                ByteString(kubeconfig.as_bytes().to_vec()),
            )])),
            ..Secret::default()
        };
        match api.create(&PostParams::default(), &object).await {
            Ok(_) => return Ok(()),
            // Someone created it meanwhile: fall through to the patch, which converges either way.
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(source) => return Err(store_error(source)),
        }
    }
    let existing = match existing {
        Some(existing) => Some(existing),
        None => api.get_opt(&secret.name).await.map_err(store_error)?,
    };
    let patch = store_patch(existing.as_ref(), kubeconfig);
    api.patch(&secret.name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(store_error)?;
    Ok(())
}

/// The JSON merge patch that makes `existing` hold exactly `{kubeconfig}` and no operation annotation.
pub fn store_patch(existing: Option<&Secret>, kubeconfig: &str) -> Value {
    let mut data = Map::new();
    if let Some(old) = existing.and_then(|s| s.data.as_ref()) {
        for key in old.keys().filter(|key| *key != KUBECONFIG_DATA_KEY) {
            data.insert(key.clone(), Value::Null);
        }
    }
    data.insert(
        KUBECONFIG_DATA_KEY.to_owned(),
        Value::String(STANDARD.encode(kubeconfig)),
    );
    json!({
        "metadata": {"annotations": {OPERATION_ANNOTATION: null}},
        "data": data,
    })
}

/// Deletes the bootstrap Secret; NotFound counts as done.
///
/// # Errors
/// [`Error::DeleteBootstrapSecret`] for any other API error.
pub async fn delete_bootstrap_secret(seed: &kube::Client, secret: &SecretRef) -> Result<(), Error> {
    let api: Api<Secret> = Api::namespaced(seed.clone(), &secret.namespace);
    match api.delete(&secret.name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(error) if is_not_found(&error) => Ok(()),
        Err(source) => Err(Error::DeleteBootstrapSecret {
            secret: secret.to_string(),
            source: Box::new(source),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(data: &[(&str, &str)], annotations: &[(&str, &str)]) -> Secret {
        Secret {
            metadata: ObjectMeta {
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            data: Some(
                data.iter()
                    .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        }
    }

    #[test]
    fn store_patch_removes_other_data_keys_and_operation_annotation() {
        let existing = secret(
            &[("kubeconfig", "old"), ("ca.crt", "x")],
            &[("gardener.cloud/operation", "renew")],
        );
        let patch = store_patch(Some(&existing), "new");
        assert_eq!(
            patch,
            json!({
                "metadata": {"annotations": {"gardener.cloud/operation": null}},
                "data": {"ca.crt": null, "kubeconfig": "bmV3"},
            })
        );
    }

    #[test]
    fn kubeconfig_of_is_none_when_key_missing_or_empty() {
        assert_eq!(kubeconfig_of(&secret(&[("kubeconfig", "")], &[])), None);
        assert_eq!(kubeconfig_of(&secret(&[("other", "x")], &[])), None);
        assert_eq!(kubeconfig_of(&Secret::default()), None);
        assert_eq!(
            kubeconfig_of(&secret(&[("kubeconfig", "k")], &[])).as_deref(),
            Some("k")
        );
    }

    #[test]
    fn renew_is_requested_only_by_the_renew_value() {
        assert!(renew_requested(&secret(
            &[],
            &[("gardener.cloud/operation", "renew")]
        )));
        assert!(!renew_requested(&secret(
            &[],
            &[("gardener.cloud/operation", "reconcile")]
        )));
        assert!(!renew_requested(&Secret::default()));
    }
}
