//! Event TTL (`event`, spec §10): deletes Events that are not about Shoots once they are older
//! than `controllers.event.ttlNonShootEvents`. Runs only when `controllers.event` is configured,
//! as upstream (kube-apiserver's `--event-ttl` must exceed the TTL for it to matter).
//!
//! Upstream watches `events.k8s.io/v1` Events; this controller reads the same objects through
//! `core/v1` (one storage in kube-apiserver; `regarding` is `involvedObject`,
//! `deprecatedLastTimestamp` is `lastTimestamp`), which every API server serves. Triggered by
//! newly seen Events only (start-up replays all); the TTL comes from the injected clock.

#[cfg(test)]
mod reconcile_tests;
pub mod ttl;

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Event;
use kube::api::DeleteParams;
use kube::runtime::controller::Action;
use kube::runtime::{Controller, WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_runtime::clock::Clock;
use seedlet_runtime::metrics::Metrics;
use seedlet_runtime::policy;
use seedlet_runtime::triggers::filter_changes;
use seedlet_runtime::watch::{NoTriggerBackoff, RunWith, Runner};
use tokio_util::sync::CancellationToken;

use crate::context::GardenContext;

/// Controller name.
pub const NAME: &str = "event";
/// Delay before a failed reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// Dependencies of the controller.
pub struct Ctx {
    /// Garden client.
    pub client: kube::Client,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// `ttlNonShootEvents`.
    pub ttl: SignedDuration,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// Errors of a reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or deleting the Event failed.
    #[error("{what} event {key}")]
    Api {
        /// `reading` or `deleting`.
        what: &'static str,
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Api { .. } => "ApiError",
        }
    }
}

/// Starts the controller for one leadership term, when `controllers.event` is configured.
pub async fn start(garden: Arc<GardenContext>) {
    let Some(config) = garden.config.controllers.event.clone() else {
        // Off: idle for the term (returning would count as a crash to the supervisor).
        tracing::debug!(
            controller = NAME,
            "not configured (controllers.event unset)"
        );
        garden.stop.cancelled().await;
        return;
    };
    let ctx = Arc::new(Ctx {
        client: garden.client.clone(),
        clock: garden.clock.clone(),
        ttl: SignedDuration::try_from(config.ttl_non_shoot_events.as_std())
            .unwrap_or(SignedDuration::MAX),
        metrics: garden.metrics.clone(),
    });
    run(ctx, config.concurrent_syncs, garden.stop.clone()).await;
}

/// Runs the controller until `shutdown` is cancelled.
pub async fn run(ctx: Arc<Ctx>, concurrent_syncs: u32, shutdown: CancellationToken) {
    let (reader, writer) = kube::runtime::reflector::store::<Event>();
    // Constant key: first sightings (creations, start-up replay) and deletions only.
    let events = filter_changes(
        watcher::watcher(
            Api::<Event>::all(ctx.client.clone()),
            watcher::Config::default(),
        )
        .backoff(seedlet_runtime::watch::watch_backoff())
        .modify(seedlet_runtime::watch::slim::<Event>)
        .reflect(writer),
        |_| String::new(),
    );
    Controller::for_stream(events, reader)
        .trigger_backoff(NoTriggerBackoff)
        .run_with(
            Runner::new(NAME, shutdown).concurrency(concurrent_syncs),
            reconcile,
            error_policy,
            ctx,
        )
        .await;
}

/// Deletes the Event when its TTL is over, else looks again then.
///
/// # Errors
/// [`Error::Api`]; a vanished Event is not one.
pub async fn reconcile(event: Arc<Event>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let key = policy::object_key(event.as_ref());
    policy::measured(&ctx.metrics, NAME, &key, run_one(&event, &ctx)).await
}

async fn run_one(event: &Event, ctx: &Ctx) -> Result<Action, Error> {
    let api: Api<Event> =
        Api::namespaced(ctx.client.clone(), &event.namespace().unwrap_or_default());
    let Some(current) = api
        .get_opt(&event.name_any())
        .await
        .map_err(|source| Error::Api {
            what: "reading",
            key: policy::object_key(event),
            source,
        })?
    else {
        return Ok(Action::await_change());
    };
    match ttl::decide(&current, ctx.clock.now(), ctx.ttl) {
        ttl::Decision::Keep => Ok(Action::await_change()),
        ttl::Decision::Wait(rest) => Ok(Action::requeue(rest.unsigned_abs())),
        ttl::Decision::Delete => match api
            .delete(&current.name_any(), &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(Action::await_change()),
            Err(kube::Error::Api(status)) if status.is_not_found() => Ok(Action::await_change()),
            Err(source) => Err(Error::Api {
                what: "deleting",
                key: policy::object_key(&current),
                source,
            }),
        },
    }
}

/// A lost write race (409) is retried at once (debug line); other errors after [`RETRY_DELAY`],
/// logged once per distinct message ([`policy::requeue_after_failure`]).
pub fn error_policy(event: Arc<Event>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    policy::requeue_after_failure(
        NAME,
        &policy::object_key(event.as_ref()),
        error.reason(),
        error,
        RETRY_DELAY,
    )
}
