//! Backup credentials: resolving a core object's `credentialsRef` in the garden (a Secret or a
//! WorkloadIdentity), their finalizers, and the copy in the seed (`garden/bucket-<name>`,
//! `garden/entry-<name>`) the extension reads — for a WorkloadIdentity the Secret the seed's token
//! requestor fills — stamped with `gardener.cloud/timestamp` so that a credentials change
//! re-deploys the extension object.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use seedlet_api::common::ObjectReference;
use seedlet_api::names::annotations;
use seedlet_api::security::{self, WorkloadIdentity};

use super::operation;
use super::seed_secret::{self, ContextObject, Credentials};

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
    /// The referenced Secret or WorkloadIdentity could not be read.
    #[error("could not get credentials {kind} {namespace}/{name}")]
    Get {
        /// `Secret` or `WorkloadIdentity`.
        kind: &'static str,
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

/// The credentials of a reference in the garden: a `v1` Secret or a
/// `security.gardener.cloud/v1alpha1` WorkloadIdentity (whose token the seed's token requestor
/// fetches into the seed copy).
///
/// # Errors
/// [`Error::Unsupported`] for other kinds, [`Error::Get`] when the object cannot be read.
pub async fn resolve(
    garden: &kube::Client,
    reference: &ObjectReference,
) -> Result<Credentials, Error> {
    let namespace = reference.namespace.clone().unwrap_or_default();
    let api_version = reference.api_version.as_deref().unwrap_or("v1");
    let kind = reference.kind.as_deref().unwrap_or("Secret");
    let failed = |kind| {
        let (namespace, name) = (namespace.clone(), reference.name.clone());
        move |source| Error::Get {
            kind,
            namespace,
            name,
            source,
        }
    };
    match (api_version, kind) {
        ("v1", "Secret") => Api::<Secret>::namespaced(garden.clone(), &namespace)
            .get(&reference.name)
            .await
            .map(Credentials::Secret)
            .map_err(failed("Secret")),
        (security::V1ALPHA1, "WorkloadIdentity") => {
            Api::<WorkloadIdentity>::namespaced(garden.clone(), &namespace)
                .get(&reference.name)
                .await
                .map(Credentials::WorkloadIdentity)
                .map_err(failed("WorkloadIdentity"))
        }
        _ => Err(Error::Unsupported {
            namespace,
            name: reference.name.clone(),
            gvk: format!("{api_version}, Kind={kind}"),
        }),
    }
}

/// Adds `add` (if given) to the credentials object in the garden and removes each of `remove`,
/// re-reading after each write (guarded by `resourceVersion`); a vanished object counts as done.
///
/// # Errors
/// The API error of a read or write (409 when another writer came first; the queue retries).
pub async fn set_finalizers(
    garden: &kube::Client,
    credentials: &Credentials,
    add: Option<&str>,
    remove: &[&str],
) -> Result<(), kube::Error> {
    match credentials {
        Credentials::Secret(secret) => {
            let namespace = secret.metadata.namespace.clone().unwrap_or_default();
            let api = Api::<Secret>::namespaced(garden.clone(), &namespace);
            finalizers_on(&api, secret, add, remove).await
        }
        Credentials::WorkloadIdentity(identity) => {
            let namespace = identity.metadata.namespace.clone().unwrap_or_default();
            let api = Api::<WorkloadIdentity>::namespaced(garden.clone(), &namespace);
            finalizers_on(&api, identity, add, remove).await
        }
    }
}

async fn finalizers_on<K>(
    api: &Api<K>,
    object: &K,
    add: Option<&str>,
    remove: &[&str],
) -> Result<(), kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    let mut current = object.clone();
    if let Some(finalizer) = add
        && seedlet_runtime::finalizer::ensure(api, &current, finalizer).await?
    {
        let Some(fresh) = api.get_opt(&name).await? else {
            return Ok(());
        };
        current = fresh;
    }
    for finalizer in remove {
        if seedlet_runtime::finalizer::remove(api, &current, finalizer).await? {
            let Some(fresh) = api.get_opt(&name).await? else {
                return Ok(());
            };
            current = fresh;
        }
    }
    Ok(())
}

/// The seed copy after [`write_seed_secret`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSecret {
    /// The content differed (or the secret was absent) before this pass.
    pub changed: bool,
    /// The timestamp §0.1 compares with: after this pass for Secret credentials, as read before
    /// it for WorkloadIdentity credentials (spec §7: a new WorkloadIdentity copy has none and so
    /// always deploys).
    pub timestamp: Option<Timestamp>,
}

/// Writes `garden/<name>` in the seed for `credentials` of `context` when
/// [`seed_secret::plan`] says so (or always with `force`): annotations replaced by the timestamp
/// (plus, for a WorkloadIdentity, the token requestor's), the desired labels and data, guarded by
/// the `resourceVersion` read (the token requestor writes the same Secret).
///
/// # Errors
/// API errors, or an unparseable timestamp on an existing copy that is compared with.
pub async fn write_seed_secret(
    seed: &kube::Client,
    name: &str,
    credentials: &Credentials,
    context: &ContextObject,
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
    let desired = seed_secret::desired(credentials, context, existing.as_ref());
    let (write, changed) = seed_secret::plan(existing.as_ref(), &desired);
    let timestamp_error = |message| Error::Timestamp {
        name: name.to_owned(),
        message,
    };
    let before = existing
        .as_ref()
        .and_then(|secret| secret.metadata.annotations.as_ref())
        .and_then(|a| a.get(annotations::TIMESTAMP))
        .map(|text| operation::parse_timestamp(text))
        .transpose();
    if !write && !force {
        return Ok(SeedSecret {
            changed,
            timestamp: before.map_err(timestamp_error)?,
        });
    }
    let mut annotations = desired.annotations.clone();
    annotations.insert(annotations::TIMESTAMP.to_owned(), operation::timestamp(now));
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(seedlet_api::names::namespaces::GARDEN.to_owned()),
            labels: (!desired.labels.is_empty()).then(|| desired.labels.clone()),
            annotations: Some(annotations),
            resource_version: existing
                .as_ref()
                .and_then(|secret| secret.metadata.resource_version.clone()),
            ..ObjectMeta::default()
        },
        data: Some(desired.data.clone()),
        type_: desired
            .type_
            .clone()
            .or_else(|| existing.as_ref().and_then(|s| s.type_.clone())),
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
    let timestamp = if desired.workload_identity {
        before.map_err(timestamp_error)?
    } else {
        Some(now)
    };
    Ok(SeedSecret { changed, timestamp })
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
