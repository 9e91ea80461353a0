//! One watch and one store per kind and scope of a cluster, shared by every controller that reads
//! that kind: controller-runtime's informer model. A daemon used to open a watch and keep a store
//! per controller (the agent held the Shoots of its seed five times over), so its heap and its
//! watch connections grew with the number of controllers, not with the cluster.
//!
//! [`SharedCaches`] hands out one [`Informer`] per kind, URL, selectors and [`View`]; the informer
//! runs the watch (with [`crate::watch::watch_backoff`]), keeps the objects once (after the view) in
//! a kube-runtime [`Store`] and tells every subscriber what changed. A subscription
//! ([`Informer::events`]) is shaped like a watcher's event stream, so everything built on
//! `kube::runtime::watcher` (controllers, [`crate::triggers`], `applied_objects`) takes it as is:
//! - it starts with the whole store (`Init`, `InitApply`…, `InitDone`) once the first list is in,
//!   so a controller that subscribes late sees every object, like one with a watch of its own;
//! - then `Apply` for every change and `Delete` with the last state of a deleted object (a mapper
//!   needs it: the Seed a deleted Shoot was on);
//! - after every re-list of the informer, and when a subscriber fell more than [`BUFFER`] changes
//!   behind, the whole store again (a resync; reconciles are idempotent).
//!
//! kube-runtime's own shared reflector (`store_shared`, `reflect_shared`) is not used: it passes no
//! deletions to subscribers, a subscriber that joins after the first list sees none of the listed
//! objects, and one slow subscriber holds up the watch for all of them.
//!
//! Watch failures are reported by the informer, not by each subscriber: a WARN once per distinct
//! failure in the process (shared with the controllers' own watches), debug lines after that.

use std::any::{Any, TypeId};
use std::collections::{HashMap, VecDeque};
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};

use futures::{Stream, StreamExt as _};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt as _, watcher as watch_of};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::repeated::RepeatedFailures;
use crate::watch::{report_failure, report_success};

/// How the informers' watch lines name their reader.
const READER: &str = "shared-informer";

/// Changes a subscriber may fall behind before it is resynced from the store.
pub const BUFFER: usize = 256;

/// What an informer keeps of each object, with a name that tells two views apart (two
/// controllers asking for one kind and scope with different views get two informers).
pub struct View<K> {
    name: &'static str,
    apply: fn(&mut K),
}

impl<K> Clone for View<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for View<K> {}

impl<K> Debug for View<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("View").field(&self.name).finish()
    }
}

impl<K: Resource> View<K> {
    /// Whole objects without `metadata.managedFields` ([`crate::watch::slim`]), which no
    /// controller reads.
    pub fn slim() -> Self {
        Self::new("slim", crate::watch::slim::<K>)
    }
}

impl<K> View<K> {
    /// A view named `name` that trims each object with `apply` before it is stored.
    pub const fn new(name: &'static str, apply: fn(&mut K)) -> Self {
        Self { name, apply }
    }
}

/// The informers of one cluster client. Dropping it (or cancelling the token it was made with)
/// ends every informer's watch, and with it every subscription.
pub struct SharedCaches {
    client: kube::Client,
    stop: CancellationToken,
    informers: Mutex<HashMap<InformerKey, Arc<dyn Any + Send + Sync>>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct InformerKey {
    kind: TypeId,
    url: String,
    labels: Option<String>,
    fields: Option<String>,
    view: &'static str,
}

impl Debug for SharedCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let informers = self
            .informers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("SharedCaches")
            .field("informers", &informers)
            .field("stopped", &self.stop.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl SharedCaches {
    /// Informers over `client`, running until `stop` is cancelled or this is dropped.
    pub fn new(client: kube::Client, stop: &CancellationToken) -> Self {
        Self {
            client,
            stop: stop.child_token(),
            informers: Mutex::new(HashMap::new()),
        }
    }

    /// The client the informers watch with.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The informer of all `K` in the cluster (no selectors), slim.
    pub fn all<K>(&self) -> Arc<Informer<K>>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.informer(
            Api::all(self.client.clone()),
            &watcher::Config::default(),
            View::slim(),
        )
    }

    /// The informer of `api` (its URL says the kind and namespace) with the selectors of
    /// `config`, storing objects after `view`; started on first use.
    pub fn informer<K>(
        &self,
        api: Api<K>,
        config: &watcher::Config,
        view: View<K>,
    ) -> Arc<Informer<K>>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let key = InformerKey {
            kind: TypeId::of::<K>(),
            url: api.resource_url().to_owned(),
            labels: config.label_selector.clone(),
            fields: config.field_selector.clone(),
            view: view.name,
        };
        let mut informers = self
            .informers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(informer) = informers
            .get(&key)
            .and_then(|informer| informer.clone().downcast::<Informer<K>>().ok())
        {
            return informer;
        }
        let informer = Arc::new(Informer::start(api, config.clone(), view, &self.stop));
        informers.insert(key, informer.clone());
        informer
    }
}

impl Drop for SharedCaches {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// What a subscriber is told; objects are looked up in the store, so the buffer holds no copies.
enum Change<K: Resource<DynamicType = ()>> {
    /// A list (the first one or a re-list after an expired watch) is in the store.
    Listed,
    Applied(ObjectRef<K>),
    Deleted(Arc<K>),
}

impl<K: Resource<DynamicType = ()>> Clone for Change<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Listed => Self::Listed,
            Self::Applied(reference) => Self::Applied(reference.clone()),
            Self::Deleted(object) => Self::Deleted(object.clone()),
        }
    }
}

/// Whether the first list is in, and the channel to subscribers (`None` once the watch ended).
struct Dispatch<K: Resource<DynamicType = ()>> {
    listed: bool,
    sender: Option<broadcast::Sender<Change<K>>>,
}

/// One watch and its store, shared by its subscribers.
pub struct Informer<K: Resource<DynamicType = ()> + 'static> {
    store: Store<K>,
    dispatch: Arc<Mutex<Dispatch<K>>>,
}

impl<K: Resource<DynamicType = ()> + Clone> Debug for Informer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("kind", &K::kind(&()))
            .field("objects", &self.store.len())
            .finish_non_exhaustive()
    }
}

impl<K> Informer<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    fn start(
        api: Api<K>,
        config: watcher::Config,
        view: View<K>,
        stop: &CancellationToken,
    ) -> Self {
        let (store, writer) = reflector::store();
        let (sender, _) = broadcast::channel(BUFFER);
        let dispatch = Arc::new(Mutex::new(Dispatch {
            listed: false,
            sender: Some(sender),
        }));
        tokio::spawn(watch(
            watch_of(api, config)
                .backoff(crate::watch::watch_backoff())
                .modify(view.apply),
            writer,
            dispatch.clone(),
            stop.clone(),
        ));
        Self { store, dispatch }
    }

    /// The shared store (objects after the informer's view).
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// A subscription shaped like a watcher's event stream (see the module docs). It ends when the
    /// informer's watch ends; it never yields an error (the informer reports its watch's failures).
    /// It borrows nothing from the informer (`use<K>`), so it outlives a temporary `Arc<Informer>`.
    pub fn events(&self) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send + use<K> {
        let (receiver, listed) = {
            let dispatch = self.dispatch.lock().unwrap_or_else(PoisonError::into_inner);
            (
                dispatch.sender.as_ref().map(broadcast::Sender::subscribe),
                dispatch.listed,
            )
        };
        let mut subscription = Subscription {
            store: self.store.clone(),
            receiver,
            pending: VecDeque::new(),
        };
        if listed {
            subscription.resync();
        }
        futures::stream::unfold(subscription, |mut subscription| async move {
            let event = subscription.next().await?;
            Some((Ok(event), subscription))
        })
    }

    /// Every object on its first sighting and after each change (no deletions), for
    /// `Triggers::for_stream` with [`Informer::store`].
    pub fn applied_objects(&self) -> impl Stream<Item = Result<K, watcher::Error>> + Send + use<K> {
        self.events().applied_objects()
    }

    /// Like [`Informer::applied_objects`], plus the last state of deleted objects.
    pub fn touched_objects(&self) -> impl Stream<Item = Result<K, watcher::Error>> + Send + use<K> {
        self.events().touched_objects()
    }
}

/// Runs the watch: every event goes into the store, then its change to the subscribers.
async fn watch<K, S>(
    events: S,
    mut writer: reflector::store::Writer<K>,
    dispatch: Arc<Mutex<Dispatch<K>>>,
    stop: CancellationToken,
) where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send,
{
    let kind = K::kind(&()).into_owned();
    let mut failures = RepeatedFailures::new();
    let mut events = std::pin::pin!(events);
    loop {
        let event = tokio::select! {
            () = stop.cancelled() => break,
            event = events.next() => event,
        };
        let Some(event) = event else { break };
        let event = match event {
            // `Init` comes before each list request, also before one that fails again: only an
            // event with objects (or the end of a list) says the watch works.
            Ok(event @ Event::Init) => event,
            Ok(event) => {
                report_success(READER, &kind, &mut failures);
                event
            }
            Err(error) => {
                report_failure(READER, &kind, &error, &mut failures);
                continue;
            }
        };
        // The store is written and the change sent under one lock, so a subscriber joining now
        // either finds the list in the store or gets `Listed`, never half of it.
        let mut dispatch = dispatch.lock().unwrap_or_else(PoisonError::into_inner);
        writer.apply_watcher_event(&event);
        let change = match event {
            Event::Init | Event::InitApply(_) => None,
            Event::InitDone => {
                dispatch.listed = true;
                Some(Change::Listed)
            }
            // By namespace and name: the store lookup ignores `extra`.
            Event::Apply(object) => Some(Change::Applied(crate::controller::object_ref(&object))),
            Event::Delete(object) => Some(Change::Deleted(Arc::new(object))),
        };
        if let (Some(change), Some(sender)) = (change, dispatch.sender.as_ref()) {
            // No subscriber yet is not an error: a later one starts from the store.
            let _ = sender.send(change);
        }
    }
    // Subscriptions end with the watch.
    dispatch
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .sender = None;
    tracing::debug!(kind, "shared watch stopped");
}

/// One subscriber's position: what it still has to be told before the next change.
struct Subscription<K: Resource<DynamicType = ()> + 'static> {
    store: Store<K>,
    receiver: Option<broadcast::Receiver<Change<K>>>,
    pending: VecDeque<Event<Arc<K>>>,
}

impl<K> Subscription<K>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    /// The whole store, as a watcher's initial list (objects are copied one at a time, as they
    /// are handed out).
    fn resync(&mut self) {
        self.pending.clear();
        self.pending.push_back(Event::Init);
        self.pending
            .extend(self.store.state().into_iter().map(Event::InitApply));
        self.pending.push_back(Event::InitDone);
    }

    async fn next(&mut self) -> Option<Event<K>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(match event {
                    Event::Init => Event::Init,
                    Event::InitApply(object) => Event::InitApply(K::clone(&object)),
                    Event::InitDone => Event::InitDone,
                    Event::Apply(object) => Event::Apply(K::clone(&object)),
                    Event::Delete(object) => Event::Delete(K::clone(&object)),
                });
            }
            let received = self.receiver.as_mut()?.recv().await;
            match received {
                Ok(Change::Listed) | Err(broadcast::error::RecvError::Lagged(_)) => self.resync(),
                Ok(Change::Applied(reference)) => {
                    // Gone from the store means deleted since: its `Deleted` follows.
                    if let Some(object) = self.store.get(&reference) {
                        self.pending.push_back(Event::Apply(object));
                    }
                }
                Ok(Change::Deleted(object)) => self.pending.push_back(Event::Delete(object)),
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}
