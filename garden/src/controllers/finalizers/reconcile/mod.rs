//! The three finalizer reconcilers, one file each: Seeds ([`seed`]), ControllerRegistrations
//! ([`registration`]) and ControllerDeployments ([`deployment`]).

pub mod deployment;
pub mod registration;
pub mod seed;

use std::sync::Arc;

use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use seedlet_runtime::controller::Reason;
use seedlet_runtime::error_chain;

use crate::controllers::finalizers::RETRY_DELAY;

/// Errors of the finalizer controllers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Listing referencing objects failed.
    #[error("listing {kind}")]
    List {
        /// Kind listed.
        kind: &'static str,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The object is still referenced; the finalizer stays.
    #[error("cannot remove finalizer of {kind} {name:?} because still found {referrers}: [{}]", names.join(" "))]
    StillReferenced {
        /// Kind of the object.
        kind: &'static str,
        /// Its name.
        name: String,
        /// Kind of the referrers.
        referrers: &'static str,
        /// Names of the referrers.
        names: Vec<String>,
    },
    /// Creating or adopting the Seed's garden namespace failed.
    #[error("seed namespace")]
    Namespace(#[from] crate::seed_namespace::Error),
    /// The object lacks a name or uid.
    #[error("{0} without name or uid")]
    MissingIdentity(&'static str),
    /// Adding or removing the finalizer failed (or cleanup was refused).
    #[error("finalizer of {kind} {name}")]
    Finalizer {
        /// Kind of the object.
        kind: &'static str,
        /// Its name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::List { .. } => "ListError",
            Error::StillReferenced { .. } => "StillReferenced",
            Error::Namespace(_) => "NamespaceError",
            Error::MissingIdentity(_) => "InvalidObject",
            Error::Finalizer { .. } => "FinalizerError",
        }
    }
}

/// The error policy of the three: retries after [`RETRY_DELAY`] and logs the error once (blocked
/// deletions at debug level: they are expected while references exist).
pub fn failure<K: Resource>(object: &K, error: &Error) -> Action {
    if matches!(error, Error::StillReferenced { .. }) {
        tracing::debug!(name = %object.name_any(), error = %error_chain(error), "deletion blocked by references");
        return Action::requeue(RETRY_DELAY);
    }
    seedlet_runtime::policy::requeue_after_failure(
        "controllerregistration-finalizers",
        &object.name_any(),
        error.reason(),
        error,
        RETRY_DELAY,
    )
}

/// What a finalizer controller is asked to do for its object.
pub enum Step<K> {
    /// The object lives and carries the finalizer: keep what belongs to it.
    Apply(Arc<K>),
    /// The object is being deleted: return once the finalizer may go (or an error, e.g.
    /// [`Error::StillReferenced`]).
    Cleanup(Arc<K>),
}

/// The finalizer flow of kube-runtime's `finalizer()` with seedlet's guarded merge patches
/// (`seedlet_runtime::finalizer`): a stale object makes the write a 409, which the error
/// policy turns into a quiet requeue, instead of the 422 of a failed JSON-patch `test`.
///
/// # Errors
/// [`Error::Finalizer`] when adding or removing it fails; `step`'s errors.
pub async fn with_finalizer<K, F, Fut>(
    api: &Api<K>,
    kind: &'static str,
    finalizer: &str,
    object: Arc<K>,
    step: F,
) -> Result<Action, Error>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    F: FnOnce(Step<K>) -> Fut,
    Fut: std::future::Future<Output = Result<Action, Error>>,
{
    let failed = |source| Error::Finalizer {
        kind,
        name: object.name_any(),
        source,
    };
    if object.meta().deletion_timestamp.is_none() {
        seedlet_runtime::finalizer::ensure(api, &object, finalizer)
            .await
            .map_err(failed)?;
        return step(Step::Apply(object.clone())).await;
    }
    if !object.finalizers().iter().any(|f| f == finalizer) {
        return Ok(Action::await_change());
    }
    let action = step(Step::Cleanup(object.clone())).await?;
    seedlet_runtime::finalizer::remove(api, &object, finalizer)
        .await
        .map_err(failed)?;
    Ok(action)
}

/// Names of the referrers, or `Ok` when there are none.
///
/// # Errors
/// [`Error::StillReferenced`] listing the referrers.
pub fn ensure_unreferenced(
    kind: &'static str,
    name: &str,
    referrers: &'static str,
    names: Vec<String>,
) -> Result<(), Error> {
    if names.is_empty() {
        return Ok(());
    }
    Err(Error::StillReferenced {
        kind,
        name: name.to_owned(),
        referrers,
        names,
    })
}

/// Lists all objects of `K`.
pub async fn list_all<K>(client: &kube::Client, kind: &'static str) -> Result<Vec<K>, Error>
where
    K: Resource<Scope = kube::core::ClusterResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    Api::<K>::all(client.clone())
        .list(&Default::default())
        .await
        .map(|list| list.items)
        .map_err(|source| Error::List { kind, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn still_referenced_message_lists_referrers_like_upstream() {
        let error = ensure_unreferenced(
            "ControllerRegistration",
            "ext",
            "ControllerInstallations",
            vec!["ext-a".into(), "ext-b".into()],
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot remove finalizer of ControllerRegistration \"ext\" because still found ControllerInstallations: [ext-a ext-b]"
        );
        assert!(
            ensure_unreferenced(
                "ControllerRegistration",
                "ext",
                "ControllerInstallations",
                vec![]
            )
            .is_ok()
        );
    }
}
