//! One shared, store-less watch of the garden's ControllerInstallations, fanned out to every
//! reader in the process.
//!
//! There is one installation per Seed and registration (30 500 at 500 seeds and 60
//! registrations). No reader keeps them — scheduling, the extensions check, the two finalizer
//! controllers and the seed authorizer's graph only map each change to a Seed, a registration or
//! edges — so a shared store would cost more than it saves; but five watches of their own decoded
//! every event five times. [`Installations`] runs one watch, decodes each event once (without
//! `managedFields`) and hands the same `Arc` to every subscriber.
//!
//! A subscription ([`Installations::events`]) looks like a watcher's event stream:
//! - a subscriber that joins before the shared watch's first list receives that list;
//! - one that joins later lists the installations itself (pages of [`PAGE`]) before it receives
//!   the shared events, so a late subscriber never disturbs the others (no store to replay from,
//!   and no re-list of the shared watch). Events that arrive during its own list are queued and
//!   delivered after it: they may repeat what the list showed, which change filters and the
//!   graph's idempotent updates absorb;
//! - after that every event of the shared watch, re-lists included (`Init` … `InitDone`).
//!
//! Each subscriber has a queue of [`BUFFER`] events and the watch waits for the slowest one, so
//! memory stays bounded and nothing is dropped; a subscription that is dropped leaves. The
//! subscribers are controllers' trigger streams (kube's scheduler drains them even while every
//! reconcile slot is busy) and the graph's handler, which only takes its lock.
//!
//! [`Installations::changes`] is the change filter on top: an installation passes when its key
//! changed or it was deleted, like `seedlet_runtime::triggers::changes`, but it remembers 64-bit
//! hashes of the name and the key only (tens of thousands of installations per filter).
//!
//! Failures are not logged here: they reach the readers as stream errors, as a watch of their own
//! would have delivered them. A failure of the shared watch goes to one subscriber that reports
//! errors — a controller's trigger stream ([`Installations::changes`]), whose runner logs it as a
//! WARN once per process and message, like every other watch failure — and a subscriber's own list
//! yields its failures to that subscriber.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use kube::Api;
use kube::api::ListParams;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::watcher::{self, Event};
use seedlet_api::core::ControllerInstallation;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Events a subscriber may have queued before the shared watch waits for it.
pub const BUFFER: usize = 256;

/// Installations per list request of a late subscriber (as kube's watcher pages its lists).
pub const PAGE: u32 = 500;

/// The longest pause between two attempts of a late subscriber's failing list.
const MAX_LIST_RETRY: Duration = Duration::from_secs(30);

/// An installation event as the subscribers receive it: the object decoded once, shared.
pub type SharedEvent = Event<Arc<ControllerInstallation>>;

/// What a subscription yields: events, and the failures it is told about.
type Item = Result<SharedEvent, watcher::Error>;

/// The shared watch of every ControllerInstallation in the garden, started by the first
/// subscription and stopped with the token it was made with.
pub struct Installations {
    client: kube::Client,
    stop: CancellationToken,
    hub: Arc<Mutex<Hub>>,
}

/// The subscribers and how far the shared watch got.
#[derive(Debug, Default)]
struct Hub {
    started: bool,
    /// The shared watch began its first list: a subscriber joining now lists on its own.
    listing: bool,
    /// The shared watch ended (stopped): no more events for anyone.
    ended: bool,
    subscribers: Vec<Subscriber>,
}

/// One subscription's queue.
#[derive(Debug, Clone)]
struct Subscriber {
    sender: mpsc::Sender<Item>,
    /// Its reader logs the failures it is given (a controller's runner does).
    reports_errors: bool,
}

impl Installations {
    /// The shared watch over `client`, ending when `stop` is cancelled.
    pub fn new(client: kube::Client, stop: &CancellationToken) -> Self {
        Self {
            client,
            stop: stop.child_token(),
            hub: Arc::new(Mutex::new(Hub::default())),
        }
    }

    /// A subscription shaped like a watcher's event stream (see the module docs). Its errors
    /// are those of its own list only (the shared watch's go to a [`Installations::changes`]
    /// subscriber); it ends when the shared watch ends. It joins at its first poll, so a stream
    /// that is built but not yet polled (a controller waiting to run) holds up nobody.
    pub fn events(&self) -> impl Stream<Item = Item> + Send + use<> {
        self.subscribe(false)
    }

    /// The installations whose `key` changed since this subscriber last saw them, plus deleted
    /// ones (and every installation at its first sighting), for `Triggers::watches_stream`.
    /// Failures of the shared watch may come through it, for the controller's runner to log.
    pub fn changes<F>(
        &self,
        key: F,
    ) -> impl Stream<Item = Result<ControllerInstallation, watcher::Error>> + Send + use<F>
    where
        F: Fn(&ControllerInstallation) -> String + Send + Sync + 'static,
    {
        let mut filter = ChangeFilter::default();
        self.subscribe(true).filter_map(move |item| {
            let passed = match item {
                Ok(event) => filter
                    .pass(event, &key)
                    .map(|object| Ok(ControllerInstallation::clone(&object))),
                Err(error) => Some(Err(error)),
            };
            futures::future::ready(passed)
        })
    }

    fn subscribe(&self, reports_errors: bool) -> impl Stream<Item = Item> + Send + use<> {
        let joining = Joining {
            client: self.client.clone(),
            hub: self.hub.clone(),
            stop: self.stop.clone(),
            reports_errors,
        };
        futures::stream::once(async move { joining.join() }).flatten()
    }
}

impl std::fmt::Debug for Installations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hub = self.hub.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Installations")
            .field("subscribers", &hub.subscribers.len())
            .field("ended", &hub.ended)
            .finish_non_exhaustive()
    }
}

impl Drop for Installations {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// What a subscription needs to join the hub.
struct Joining {
    client: kube::Client,
    hub: Arc<Mutex<Hub>>,
    stop: CancellationToken,
    reports_errors: bool,
}

impl Joining {
    /// Joins the hub (starting the shared watch if it is the first) and returns the events: its
    /// own list first when the shared list has begun already.
    fn join(self) -> impl Stream<Item = Item> + Send {
        let (sender, receiver) = mpsc::channel(BUFFER);
        let own_list = {
            let mut hub = self.hub.lock().unwrap_or_else(PoisonError::into_inner);
            if !hub.started {
                hub.started = true;
                tokio::spawn(watch(
                    Api::all(self.client.clone()),
                    self.hub.clone(),
                    self.stop.clone(),
                ));
            }
            if !hub.ended {
                hub.subscribers.push(Subscriber {
                    sender,
                    reports_errors: self.reports_errors,
                });
            }
            hub.listing
        };
        let list = own_list.then(|| Api::all(self.client));
        initial_list(list, PAGE, self.stop).chain(futures::stream::unfold(
            receiver,
            |mut receiver| async move {
                let event = receiver.recv().await?;
                Some((event, receiver))
            },
        ))
    }
}

/// The hashes a change filter remembers: of each installation's name, its key's hash.
#[derive(Debug, Default)]
struct ChangeFilter {
    seen: HashMap<u64, u64>,
}

impl ChangeFilter {
    /// The installation of `event` when it passes: first sighting, changed key, or deletion.
    fn pass<F>(&mut self, event: SharedEvent, key: &F) -> Option<Arc<ControllerInstallation>>
    where
        F: Fn(&ControllerInstallation) -> String,
    {
        match event {
            Event::Apply(object) | Event::InitApply(object) => {
                let current = hash_of(&key(&object));
                let previous = self.seen.insert(hash_of(name_of(&object)), current);
                (previous != Some(current)).then_some(object)
            }
            Event::Delete(object) => {
                self.seen.remove(&hash_of(name_of(&object)));
                Some(object)
            }
            Event::Init | Event::InitDone => None,
        }
    }
}

fn name_of(installation: &ControllerInstallation) -> &str {
    installation.metadata.name.as_deref().unwrap_or_default()
}

/// A 64-bit hash: two names (or keys) of one filter collide with odds of about 2^-64 per pair,
/// and a collision of names only makes a change pass that could have been filtered.
fn hash_of(text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// A late subscriber's own list (nothing when `api` is `None`): `Init`, the installations
/// `page` at a time as they arrive (never the whole list in memory), `InitDone`. A failed page restarts
/// the list (with `Init` again) after a growing pause.
fn initial_list(
    api: Option<Api<ControllerInstallation>>,
    page: u32,
    stop: CancellationToken,
) -> impl Stream<Item = Item> + Send {
    let lister = api.map(|api| Lister {
        api,
        page,
        stop,
        next: Some(None),
        failures_in_a_row: 0,
    });
    futures::stream::unfold(lister, |lister| async move {
        let mut lister = lister?;
        let items = lister.next_page().await?;
        Some((items, Some(lister)))
    })
    .flat_map(futures::stream::iter)
}

/// Where a late subscriber's list stands.
struct Lister {
    api: Api<ControllerInstallation>,
    /// Installations per list request.
    page: u32,
    stop: CancellationToken,
    /// The next page: `Some(None)` the first, `Some(Some(token))` a continuation, `None` done.
    next: Option<Option<String>>,
    /// Failed list requests since the last page that arrived (the back-off's exponent).
    failures_in_a_row: u32,
}

impl Lister {
    /// The events of the next page, or its failure (after the back-off's pause); `None` once
    /// the list is complete or the watch is stopped.
    async fn next_page(&mut self) -> Option<Vec<Item>> {
        let token = self.next.take()?;
        let mut params = ListParams::default().limit(self.page);
        if let Some(token) = &token {
            params = params.continue_token(token);
        }
        let page = tokio::select! {
            () = self.stop.cancelled() => return None,
            page = self.api.list(&params) => page,
        };
        let page = match page {
            Ok(page) => page,
            Err(error) => {
                self.failures_in_a_row = self.failures_in_a_row.saturating_add(1);
                let pause =
                    Duration::from_secs(1 << self.failures_in_a_row.min(5)).min(MAX_LIST_RETRY);
                tokio::select! {
                    () = self.stop.cancelled() => return None,
                    () = tokio::time::sleep(pause) => {}
                }
                // A continue token may have expired: the list starts over.
                self.next = Some(None);
                return Some(vec![Err(watcher::Error::InitialListFailed(error))]);
            }
        };
        self.failures_in_a_row = 0;
        let mut items = Vec::with_capacity(page.items.len() + 2);
        if token.is_none() {
            items.push(Ok(Event::Init));
        }
        items.extend(page.items.into_iter().map(|mut object| {
            seedlet_runtime::watch::slim(&mut object);
            Ok(Event::InitApply(Arc::new(object)))
        }));
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => self.next = Some(Some(token)),
            None => items.push(Ok(Event::InitDone)),
        }
        Some(items)
    }
}

/// The shared watch: decodes each event once and sends it to every subscriber in turn; a
/// failure goes to one subscriber that reports errors (a debug line when there is none).
async fn watch(api: Api<ControllerInstallation>, hub: Arc<Mutex<Hub>>, stop: CancellationToken) {
    let events = watcher::watcher(api, watcher::Config::default())
        .backoff(seedlet_runtime::watch::watch_backoff())
        .modify(seedlet_runtime::watch::slim);
    let mut events = std::pin::pin!(events);
    loop {
        let event = tokio::select! {
            () = stop.cancelled() => break,
            event = events.next() => event,
        };
        let event = match event {
            None => break,
            Some(Ok(event)) => event,
            Some(Err(error)) => {
                let reporter = {
                    let hub = hub.lock().unwrap_or_else(PoisonError::into_inner);
                    hub.subscribers
                        .iter()
                        .find(|subscriber| {
                            subscriber.reports_errors && !subscriber.sender.is_closed()
                        })
                        .map(|subscriber| subscriber.sender.clone())
                };
                match reporter {
                    Some(reporter) => {
                        tokio::select! {
                            () = stop.cancelled() => break,
                            _ = reporter.send(Err(error)) => {}
                        }
                    }
                    None => tracing::debug!(
                        error = %seedlet_runtime::error_chain(&error),
                        "watching ControllerInstallations failed, retrying"
                    ),
                }
                continue;
            }
        };
        let event: SharedEvent = match event {
            Event::Init => Event::Init,
            Event::InitApply(object) => Event::InitApply(Arc::new(object)),
            Event::InitDone => Event::InitDone,
            Event::Apply(object) => Event::Apply(Arc::new(object)),
            Event::Delete(object) => Event::Delete(Arc::new(object)),
        };
        let subscribers = {
            let mut hub = hub.lock().unwrap_or_else(PoisonError::into_inner);
            hub.listing = true;
            hub.subscribers
                .retain(|subscriber| !subscriber.sender.is_closed());
            hub.subscribers.clone()
        };
        for subscriber in subscribers {
            tokio::select! {
                () = stop.cancelled() => break,
                // A closed subscription is dropped from the hub with the next event.
                _ = subscriber.sender.send(Ok(event.clone())) => {}
            }
        }
    }
    let mut hub = hub.lock().unwrap_or_else(PoisonError::into_inner);
    hub.ended = true;
    hub.subscribers.clear();
    tracing::debug!("shared ControllerInstallation watch stopped");
}

#[cfg(test)]
#[path = "installations_tests.rs"]
mod tests;
