//! The three finalizer reconcilers, one file each: Seeds ([`seed`]), ControllerRegistrations
//! ([`registration`]) and ControllerDeployments ([`deployment`]).

pub mod deployment;
pub mod registration;
pub mod seed;

use std::sync::Arc;

use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use seedlet_runtime::error_chain;

use crate::controllers::finalizers::{Ctx, RETRY_DELAY};

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
    /// Reading or writing the Seed's garden namespace failed.
    #[error("ensuring namespace {namespace}")]
    Namespace {
        /// Namespace name.
        namespace: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
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
        source: Box<kube::runtime::finalizer::Error<Error>>,
    },
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::List { .. } => "ListError",
            Error::StillReferenced { .. } => "StillReferenced",
            Error::Namespace { .. } => "NamespaceError",
            Error::MissingIdentity(_) => "InvalidObject",
            Error::Finalizer { .. } => "FinalizerError",
        }
    }
}

/// Retries after [`RETRY_DELAY`] and logs the error once (blocked deletions at debug level: they
/// are expected while references exist).
pub fn error_policy<K: Resource>(object: Arc<K>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    if seedlet_runtime::status::conflict_in_chain(error) {
        tracing::debug!(name = %object.name_any(), error = %seedlet_runtime::error_chain(error), "finalizer lost a write race, retrying");
        return Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE);
    }
    let blocked = matches!(error, Error::Finalizer { source, .. }
        if matches!(**source, kube::runtime::finalizer::Error::CleanupFailed(Error::StillReferenced { .. })));
    if blocked {
        tracing::debug!(name = %object.name_any(), error = %error_chain(error), "deletion blocked by references");
    } else {
        tracing::warn!(name = %object.name_any(), reason = error.reason(), error = %error_chain(error), "finalizer reconcile failed");
    }
    Action::requeue(RETRY_DELAY)
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
