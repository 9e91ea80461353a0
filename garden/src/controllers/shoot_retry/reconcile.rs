//! Retry logic: decide with the clock and a jitter sample, annotate or requeue.

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use rand::Rng as _;
use seedlet_api::core::Shoot;
use seedlet_api::names::{annotations, shoot_lifecycle};
use seedlet_runtime::controller::{Reason, Reconciler};
use serde_json::json;

use super::decide::{Decision, decide};
use super::{NAME, ShootRetry};

/// Errors of one retry reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Shoot has no namespace.
    #[error("shoot {0} without a namespace")]
    MissingNamespace(String),
    /// Annotating the Shoot failed.
    #[error(
        "annotating shoot {shoot} with {}={}",
        annotations::OPERATION,
        shoot_lifecycle::OPERATION_RETRY
    )]
    Annotate {
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace(_) => "ShootInvalid",
            Error::Annotate { .. } => "ShootPatchError",
        }
    }
}

impl Reconciler for ShootRetry {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Annotates a rate-limited failed Shoot for retry once the retry period passed, else requeues
    /// to that instant plus jitter. Idempotent (the annotation is set, not appended).
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        retry(&shoot, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn retry(shoot: &Shoot, ctx: &ShootRetry) -> Result<Action, Error> {
    let jitter = random_jitter(ctx.retry_jitter_period);
    match decide(shoot, ctx.clock.now(), ctx.retry_period, jitter) {
        Decision::Ignore => Ok(Action::await_change()),
        Decision::RequeueAfter(delay) => Ok(Action::requeue(
            Duration::try_from(delay).unwrap_or(Duration::ZERO),
        )),
        Decision::RetryNow => {
            let name = shoot.name_any();
            let namespace = shoot
                .namespace()
                .ok_or_else(|| Error::MissingNamespace(name.clone()))?;
            let patch = json!({"metadata": {"annotations": {
                annotations::OPERATION: shoot_lifecycle::OPERATION_RETRY,
            }}});
            let shoots: Api<Shoot> = Api::namespaced(ctx.client.clone(), &namespace);
            match shoots
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    tracing::info!(shoot = %format!("{namespace}/{name}"), "retrying shoot failed due to rate limits");
                    Ok(Action::await_change())
                }
                Err(kube::Error::Api(status)) if status.is_not_found() => {
                    Ok(Action::await_change())
                }
                Err(source) => Err(Error::Annotate {
                    shoot: format!("{namespace}/{name}"),
                    source,
                }),
            }
        }
    }
}

/// A uniform sample in `[0, upper)`; zero when `upper` is not positive.
fn random_jitter(upper: SignedDuration) -> SignedDuration {
    let nanos = upper.as_nanos();
    if nanos <= 0 {
        return SignedDuration::ZERO;
    }
    let nanos = i64::try_from(nanos).unwrap_or(i64::MAX);
    SignedDuration::from_nanos(rand::rng().random_range(0..nanos))
}
