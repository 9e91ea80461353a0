//! Backup credentials: resolving a core object's `credentialsRef` in the garden, and the copy in
//! the seed (`garden/bucket-<name>`, `garden/entry-<name>`) the extension reads, stamped with
//! `gardener.cloud/timestamp` so that a credentials change re-deploys the extension object.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use seedlet_api::common::ObjectReference;
use seedlet_api::names::annotations;

use super::operation;

/// Errors resolving credentials or writing their seed copy.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The reference names a kind seedlet cannot read credentials from.
    #[error("unsupported credentials reference: {namespace}/{name}, {gvk}")]
    Unsupported {
        /// Namespace of the reference.
        namespace: String,
        /// Name of the reference.
        name: String,
        /// `apiVersion, Kind=<kind>`.
        gvk: String,
    },
    /// The referenced Secret could not be read.
    #[error("could not get credentials secret {namespace}/{name}")]
    Get {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Cause (NotFound when missing).
        #[source]
        source: kube::Error,
    },
    /// Reading or writing the seed copy failed.
    #[error("writing seed secret garden/{name}")]
    SeedSecret {
        /// Name of the seed secret.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The seed copy carries an unparseable timestamp.
    #[error("seed secret garden/{name}: {message}")]
    Timestamp {
        /// Name of the seed secret.
        name: String,
        /// The parse error.
        message: String,
    },
}

/// The garden Secret of a credentials reference; `v1/Secret` (also `core.gardener.cloud`
/// `InternalSecret`, read as a Secret of the same name) only: WorkloadIdentity credentials need
/// a token requestor in the seed that seedlet does not run.
///
/// # Errors
/// [`Error::Unsupported`] for other kinds, [`Error::Get`] when the Secret cannot be read.
pub async fn resolve(garden: &kube::Client, reference: &ObjectReference) -> Result<Secret, Error> {
    let namespace = reference.namespace.clone().unwrap_or_default();
    let api_version = reference.api_version.as_deref().unwrap_or("v1");
    let kind = reference.kind.as_deref().unwrap_or("Secret");
    if !matches!((api_version, kind), ("v1", "Secret")) {
        return Err(Error::Unsupported {
            namespace,
            name: reference.name.clone(),
            gvk: format!("{api_version}, Kind={kind}"),
        });
    }
    Api::<Secret>::namespaced(garden.clone(), &namespace)
        .get(&reference.name)
        .await
        .map_err(|source| Error::Get {
            namespace,
            name: reference.name.clone(),
            source,
        })
}

/// The seed copy after [`write_seed_secret`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSecret {
    /// The content differed (or the secret was absent) before this pass.
    pub changed: bool,
    /// Its timestamp after this pass.
    pub timestamp: Option<Timestamp>,
}

/// Whether the seed copy must be written: absent, different data, or no timestamp. Returns
/// `(write, content_changed)`.
pub fn plan(existing: Option<&Secret>, data: &BTreeMap<String, ByteString>) -> (bool, bool) {
    let Some(existing) = existing else {
        return (true, true);
    };
    let current = existing.data.clone().unwrap_or_default();
    let changed = &current != data;
    let stamped = existing
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(annotations::TIMESTAMP));
    (changed || !stamped, changed)
}

/// Writes `garden/<name>` in the seed with `data` when [`plan`] says so (or always with
/// `force`): annotations replaced by the timestamp, no labels, the credentials' data.
///
/// # Errors
/// API errors, or an unparseable timestamp on an existing copy that was not rewritten.
pub async fn write_seed_secret(
    seed: &kube::Client,
    name: &str,
    data: &BTreeMap<String, ByteString>,
    now: Timestamp,
    force: bool,
    field_manager: &str,
) -> Result<SeedSecret, Error> {
    let api: Api<Secret> = Api::namespaced(seed.clone(), seedlet_api::names::namespaces::GARDEN);
    let seed_error = |source| Error::SeedSecret {
        name: name.to_owned(),
        source,
    };
    let existing = api.get_opt(name).await.map_err(seed_error)?;
    let (write, changed) = plan(existing.as_ref(), data);
    if !write && !force {
        let text = existing
            .as_ref()
            .and_then(|secret| secret.metadata.annotations.as_ref())
            .and_then(|a| a.get(annotations::TIMESTAMP));
        let timestamp = text
            .map(|text| operation::parse_timestamp(text))
            .transpose()
            .map_err(|message| Error::Timestamp {
                name: name.to_owned(),
                message,
            })?;
        return Ok(SeedSecret { changed, timestamp });
    }
    let stamp = operation::timestamp(now);
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(seedlet_api::names::namespaces::GARDEN.to_owned()),
            annotations: Some(BTreeMap::from([(annotations::TIMESTAMP.to_owned(), stamp)])),
            resource_version: existing
                .as_ref()
                .and_then(|secret| secret.metadata.resource_version.clone()),
            ..ObjectMeta::default()
        },
        data: Some(data.clone()),
        ..Secret::default()
    };
    let params = PostParams {
        field_manager: Some(field_manager.to_owned()),
        ..PostParams::default()
    };
    match existing {
        Some(_) => api.replace(name, &params, &secret).await,
        None => api.create(&params, &secret).await,
    }
    .map_err(seed_error)?;
    Ok(SeedSecret {
        changed,
        timestamp: Some(now),
    })
}

/// Deletes `garden/<name>` in the seed (NotFound ok).
///
/// # Errors
/// Other API errors.
pub async fn delete_seed_secret(seed: &kube::Client, name: &str) -> Result<(), Error> {
    let api: Api<Secret> = Api::namespaced(seed.clone(), seedlet_api::names::namespaces::GARDEN);
    match api.delete(name, &Default::default()).await {
        Ok(_) => Ok(()),
        Err(error) if super::object::is_gone(&error) => Ok(()),
        Err(source) => Err(Error::SeedSecret {
            name: name.to_owned(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(value: &str) -> BTreeMap<String, ByteString> {
        BTreeMap::from([("key".to_owned(), ByteString(value.as_bytes().to_vec()))])
    }

    fn secret(value: &str, stamped: bool) -> Secret {
        let mut secret = Secret {
            data: Some(data(value)),
            ..Secret::default()
        };
        if stamped {
            secret.metadata.annotations = Some(BTreeMap::from([(
                annotations::TIMESTAMP.to_owned(),
                "2024-01-01T00:00:00Z".to_owned(),
            )]));
        }
        secret
    }

    #[test]
    fn plan_writes_when_absent_changed_or_unstamped() {
        assert_eq!(plan(None, &data("a")), (true, true));
        assert_eq!(plan(Some(&secret("a", true)), &data("a")), (false, false));
        assert_eq!(plan(Some(&secret("a", false)), &data("a")), (true, false));
        assert_eq!(plan(Some(&secret("b", true)), &data("a")), (true, true));
    }
}
