//! One reconcile of a protected object (spec §2.1 "Shape"): read it fresh; deleting → stop if
//! our finalizer is gone, else the kind's pre-delete work, the in-use check (Event + error while
//! blocked), the release and the finalizer's removal; live → ensure the finalizer and the kind's
//! work.

use std::sync::Arc;
use std::time::Duration;

use kube::ResourceExt;
use kube::runtime::controller::Action;
use seedlet_api::names::finalizers;
use seedlet_runtime::controller::{Reason, Reconciler, routine_failure};
use seedlet_runtime::policy;
use serde::de::DeserializeOwned;

use super::{Ctx, Protected, Protection};

/// Delay before a failed reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);
/// Delay before a blocked deletion is checked again (the referrers' deletions trigger sooner).
pub const BLOCKED_DELAY: Duration = Duration::from_secs(30);

/// Errors of a protection reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading an object failed.
    #[error("reading {kind} {key}")]
    Read {
        /// Kind.
        kind: &'static str,
        /// `namespace/name` or name.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Listing objects failed.
    #[error("listing {kind}")]
    List {
        /// Kind.
        kind: &'static str,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing an object failed.
    #[error("{what} of {kind} {key}")]
    Write {
        /// What was written.
        what: &'static str,
        /// Kind.
        kind: &'static str,
        /// `namespace/name` or name.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// A patch could not be encoded.
    #[error("encoding the patch of {key}")]
    Encode {
        /// `namespace/name` or name.
        key: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
    /// Deletion is blocked while something refers to the object.
    #[error("{0}")]
    InUse(String),
    /// A CredentialsBinding refers to an unsupported kind.
    #[error("{0}")]
    Unsupported(String),
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Read { .. } => "ReadError",
            Error::List { .. } => "ListError",
            Error::Write { .. } => "WriteError",
            Error::Encode { .. } => "EncodeError",
            Error::InUse(_) => "ResourceReferenced",
            Error::Unsupported(_) => "UnsupportedReference",
        }
    }
}

/// Every object of kind `K` in all namespaces (the in-use checks and releases read them).
///
/// # Errors
/// [`Error::List`].
pub async fn list_all<K>(client: &kube::Client, kind: &'static str) -> Result<Vec<K>, Error>
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    kube::Api::<K>::all(client.clone())
        .list(&Default::default())
        .await
        .map(|list| list.items)
        .map_err(|source| Error::List { kind, source })
}

impl<K: Protected> Reconciler for Protection<K> {
    type Object = K;
    type Error = Error;
    const NAME: &'static str = K::NAME;

    /// Guards, protects, and releases one object of kind `K`; idempotent. [`Error::InUse`] while
    /// deletion is blocked.
    async fn reconcile(&self, object: Arc<K>) -> Result<Action, Error> {
        run(object.as_ref(), &self.ctx)
            .await
            .map(|next| next.map_or_else(Action::await_change, Action::requeue))
    }

    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// Blocked deletions are checked again after [`BLOCKED_DELAY`] (and on every referrer
    /// change) with a debug line (the Event says it); other errors take the runtime's route.
    fn error_policy(&self, object: &K, error: &Error) -> Action {
        if let Error::InUse(message) = error {
            let key = policy::object_key(object);
            tracing::debug!(controller = K::NAME, object = %key, %message, "deletion blocked");
            return Action::requeue(BLOCKED_DELAY);
        }
        routine_failure(self, object, error)
    }
}

async fn run<K: Protected>(object: &K, ctx: &Ctx) -> Result<Option<Duration>, Error> {
    let api = K::api(&ctx.client, object.namespace().as_deref());
    let key = policy::object_key(object);
    let read = |source| Error::Read {
        kind: K::KIND,
        key: key.clone(),
        source,
    };
    let Some(current) = api.get_opt(&object.name_any()).await.map_err(read)? else {
        return Ok(None);
    };
    let write = |source| Error::Write {
        what: "patching finalizers",
        kind: K::KIND,
        key: key.clone(),
        source,
    };
    if current.meta().deletion_timestamp.is_some() {
        if !current
            .finalizers()
            .iter()
            .any(|f| f == finalizers::GARDENER)
        {
            return Ok(None);
        }
        current.before_delete(ctx).await?;
        if let Some(blocked) = current.blockers(ctx).await? {
            ctx.events
                .publish(
                    &current,
                    blocked.event_type,
                    "ResourceReferenced",
                    blocked.action,
                    &blocked.note,
                )
                .await;
            return Err(Error::InUse(blocked.error));
        }
        current.release(ctx).await?;
        seedlet_runtime::finalizer::remove(&api, &current, finalizers::GARDENER)
            .await
            .map_err(write)?;
        return Ok(None);
    }
    if seedlet_runtime::finalizer::ensure(&api, &current, finalizers::GARDENER)
        .await
        .map_err(write)?
    {
        // The write changed the object; its watch event brings the next reconcile, which
        // works on the fresh state.
        return Ok(None);
    }
    current.reconcile_live(ctx).await
}
