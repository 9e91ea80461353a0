//! The finalizer controller ([`Finalizer`]), one per [`Finalized`] kind, each in its file: Seeds
//! ([`seed`]), ControllerRegistrations ([`registration`]) and ControllerDeployments
//! ([`deployment`]).

pub mod deployment;
pub mod registration;
pub mod seed;

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::error_chain;
use serde::de::DeserializeOwned;

use crate::controllers::finalizers::{CONCURRENCY, RESYNC_PERIOD, RETRY_DELAY};

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

/// A kind whose finalizer stays until nothing references the object.
pub trait Finalized:
    Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
    + Clone
    + DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// Controller name (logs, metrics label).
    const NAME: &'static str;
    /// Kind (errors).
    const KIND: &'static str;
    /// The finalizer the controller keeps.
    const FINALIZER: &'static str;
    /// Kind of the referrers, plural (errors).
    const REFERRERS: &'static str;

    /// Keeps what belongs to a live object carrying the finalizer; what to do next.
    fn apply(&self, _client: &kube::Client) -> impl Future<Output = Result<Action, Error>> + Send {
        async { Ok(Action::requeue(RESYNC_PERIOD)) }
    }

    /// The names of the objects that still reference this one.
    fn referrers(
        &self,
        client: &kube::Client,
    ) -> impl Future<Output = Result<Vec<String>, Error>> + Send;
}

/// The finalizer controller of kind `K`.
pub struct Finalizer<K> {
    /// Garden client.
    pub client: kube::Client,
    kind: PhantomData<fn() -> K>,
}

impl<K> Finalizer<K> {
    /// The controller of `K` writing through `client`.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            kind: PhantomData,
        }
    }
}

impl<K: Finalized> std::fmt::Debug for Finalizer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finalizer")
            .field("kind", &K::KIND)
            .finish_non_exhaustive()
    }
}

impl<K: Finalized> Reconciler for Finalizer<K> {
    type Object = K;
    type Error = Error;
    const NAME: &'static str = K::NAME;

    /// Adds the finalizer, keeps what belongs to the object, and releases it once unreferenced
    /// (a blocked deletion is [`Error::StillReferenced`]).
    async fn reconcile(&self, object: Arc<K>) -> Result<Action, Error> {
        let api: Api<K> = Api::all(self.client.clone());
        with_finalizer(&api, K::KIND, K::FINALIZER, object, |step| async {
            match step {
                Step::Apply(object) => object.apply(&self.client).await,
                Step::Cleanup(object) => {
                    let names = object.referrers(&self.client).await?;
                    ensure_unreferenced(K::KIND, &object.name_any(), K::REFERRERS, names)?;
                    Ok(Action::await_change())
                }
            }
        })
        .await
    }

    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        CONCURRENCY
    }

    fn error_policy(&self, object: &K, error: &Error) -> Action {
        failure(object, error)
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
