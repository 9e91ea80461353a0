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
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::{Reason, Reconciler, Triggers};
use seedlet_runtime::policy;
use seedlet_runtime::triggers::filter_changes;
use seedlet_runtime::watch::concurrency;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name.
pub const NAME: &str = "event";
/// Delay before a failed reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// The controller and what it needs.
pub struct EventTtl {
    /// Garden client.
    pub client: kube::Client,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// `ttlNonShootEvents`.
    pub ttl: SignedDuration,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for EventTtl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventTtl").finish_non_exhaustive()
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

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Api { .. } => "ApiError",
        }
    }
}

impl GardenReconciler for EventTtl {
    /// `None` (the controller idles for the term) unless `controllers.event` is configured.
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let Some(config) = garden.config.controllers.event.as_ref() else {
            tracing::debug!(
                controller = NAME,
                "not configured (controllers.event unset)"
            );
            return None;
        };
        Some(Self {
            client: garden.client.clone(),
            clock: garden.clock.clone(),
            ttl: SignedDuration::try_from(config.ttl_non_shoot_events.as_std())
                .unwrap_or(SignedDuration::MAX),
            concurrency: concurrency(i64::from(config.concurrent_syncs)),
        })
    }

    fn triggers(&self, _caches: &GardenCaches) -> Triggers<Event> {
        // Only this controller reads Events: a watch and store of its own.
        let (reader, writer) = kube::runtime::reflector::store::<Event>();
        // Constant key: first sightings (creations, start-up replay) and deletions only.
        let events = filter_changes(
            watcher::watcher(
                Api::<Event>::all(self.client.clone()),
                watcher::Config::default(),
            )
            .backoff(seedlet_runtime::watch::watch_backoff())
            .modify(seedlet_runtime::watch::slim::<Event>)
            .reflect(writer),
            |_| String::new(),
        );
        Triggers::for_stream(events, reader)
    }
}

impl Reconciler for EventTtl {
    type Object = Event;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Deletes the Event when its TTL is over, else looks again then. A vanished Event is no
    /// error.
    async fn reconcile(&self, event: Arc<Event>) -> Result<Action, Error> {
        run_one(&event, self).await
    }

    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn run_one(event: &Event, ctx: &EventTtl) -> Result<Action, Error> {
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
