//! The queue in front of kube-runtime's scheduler: a controller's requests wait here, in order
//! and once per object, and at most [`hand_on_limit`] of them are handed on to the scheduler at a
//! time, each until its reconcile starts.
//!
//! Why: kube-runtime's scheduler keeps a delay-queue slab, a hash map of scheduled requests and a
//! hash set of held ones, and none of them ever shrinks. A burst — the initial list of 2 500
//! Shoots, a Seed change mapped to every Shoot — put one entry per object into each controller's
//! scheduler at once, and every controller kept tables of that size for the rest of the process
//! (10.6 MB at 2 500 shoots, issue #32). Here the burst waits in a deque and a set that are given
//! back once they are empty, and the scheduler only ever holds the few requests handed on plus
//! the controller's own timers (requeues and retries, which it schedules itself).
//!
//! What stays as kube-runtime does it: a request for an object already waiting is merged into the
//! waiting one (a reconcile reads the object from the store when it starts, so one is enough); an
//! object that is being reconciled while a new request comes is reconciled again afterwards (the
//! request is handed on once the reconcile started, and the scheduler holds it until the running
//! one ends); a timer of the scheduler is brought forward by a request handed on for the same
//! object. Requests come out in the order they first arrived.
//!
//! A request for an object handed on but not yet started is merged into the handed-on one, since
//! the reconcile reads the store when it starts. When it does not start because the object was not
//! in the store (kube's applier reports `ObjectNotFound`), a request merged meanwhile — the
//! object's creation, seen by its watch just after the lookup missed — waits again at the front
//! ([`Queue::not_found`]) instead of being lost with the miss.

use std::collections::{HashMap, HashSet, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures::Stream;
use futures::stream::{Fuse, StreamExt as _};
use kube::Resource;
use kube::runtime::controller::{ReconcileReason, ReconcileRequest};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;

/// Requests taken from the triggers in one poll before the queue yields to its task again (a
/// trigger stream that is always ready must not keep the controller from running).
const DRAIN_PER_POLL: usize = 1024;

/// Capacity a drained queue may keep; above it, it gives its memory back.
const KEPT_CAPACITY: usize = 64;

/// How many requests a controller with `concurrency` parallel reconciles hands on: enough that
/// every worker finds its next object in the scheduler when it is done.
pub(crate) fn hand_on_limit(concurrency: u16) -> usize {
    2 * usize::from(concurrency) + 8
}

/// The shared half of a controller's queue: told when a reconcile starts (or its object is gone),
/// which lets the next waiting request through.
pub(crate) struct Queue<K: Resource<DynamicType = ()>> {
    state: Arc<Mutex<State<K>>>,
}

impl<K: Resource<DynamicType = ()>> Clone for Queue<K> {
    fn clone(&self) -> Self {
        Self {
            state: Arc::clone(&self.state),
        }
    }
}

struct State<K: Resource<DynamicType = ()>> {
    /// Requests not yet handed on, in order of arrival.
    waiting: VecDeque<ReconcileRequest<K>>,
    /// The objects of `waiting`, to merge a second request into the first.
    waiting_objects: HashSet<ObjectRef<K>>,
    /// Objects handed on to the scheduler whose reconcile has not started yet, each with whether
    /// a request for it came since (see [`Queue::not_found`]).
    handed_on: HashMap<ObjectRef<K>, bool>,
    limit: usize,
    /// The task polling the [`Gated`] stream, woken when a reconcile starts.
    waker: Option<Waker>,
}

impl<K: Resource<DynamicType = ()>> State<K> {
    fn push(&mut self, request: ReconcileRequest<K>) {
        if let Some(asked_again) = self.handed_on.get_mut(&request.obj_ref) {
            *asked_again = true;
            return;
        }
        if self.waiting_objects.contains(&request.obj_ref) {
            return;
        }
        self.waiting_objects.insert(request.obj_ref.clone());
        self.waiting.push_back(request);
    }

    fn hand_on(&mut self) -> Option<ReconcileRequest<K>> {
        if self.handed_on.len() >= self.limit {
            return None;
        }
        let request = self.waiting.pop_front()?;
        self.waiting_objects.remove(&request.obj_ref);
        if self.waiting.is_empty() && self.waiting.capacity() > KEPT_CAPACITY {
            self.waiting = VecDeque::new();
            self.waiting_objects = HashSet::new();
        }
        self.handed_on.insert(request.obj_ref.clone(), false);
        Some(request)
    }
}

impl<K: Resource<DynamicType = ()>> Queue<K> {
    /// A queue handing on at most `limit` requests (at least one) before their reconciles start.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                waiting: VecDeque::new(),
                waiting_objects: HashSet::new(),
                handed_on: HashMap::new(),
                limit: limit.max(1),
                waker: None,
            })),
        }
    }

    /// The queue of a controller with `concurrency` parallel reconciles ([`hand_on_limit`]).
    pub(crate) fn for_concurrency(concurrency: u16) -> Self {
        Self::new(hand_on_limit(concurrency))
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        // A panic while holding the lock leaves the state consistent (every method changes it
        // only after its last fallible step), so a poisoned lock is used as it is.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The reconcile of `object` started: the next waiting request may be handed on, and a new
    /// request for `object` is taken again. Requests merged since it was handed on are served by
    /// this reconcile, which read the store after them.
    pub(crate) fn started(&self, object: &ObjectRef<K>) {
        let mut state = self.lock();
        if state.handed_on.remove(object).is_some() {
            Self::wake_if_waiting(state);
        }
    }

    /// The reconcile of `object` did not start, its object not being in the store when the
    /// scheduler's turn came: its place is free, and a request merged into it since waits again,
    /// first in line (its watch saw the object after the lookup missed it).
    pub(crate) fn not_found(&self, object: &ObjectRef<K>) {
        let mut state = self.lock();
        let Some(asked_again) = state.handed_on.remove(object) else {
            return;
        };
        if asked_again {
            state.waiting_objects.insert(object.clone());
            state.waiting.push_front(ReconcileRequest {
                obj_ref: object.clone(),
                reason: ReconcileReason::Unknown,
            });
        }
        Self::wake_if_waiting(state);
    }

    fn wake_if_waiting(mut state: MutexGuard<'_, State<K>>) {
        if !state.waiting.is_empty()
            && let Some(waker) = state.waker.take()
        {
            drop(state);
            waker.wake();
        }
    }

    /// `triggers` through this queue: every error at once, every request once it may be handed on.
    pub(crate) fn gate<S>(&self, triggers: S) -> Gated<K, S>
    where
        S: Stream<Item = Result<ReconcileRequest<K>, watcher::Error>> + Unpin,
    {
        Gated {
            triggers: triggers.fuse(),
            queue: self.clone(),
        }
    }

    #[cfg(test)]
    fn sizes(&self) -> (usize, usize, usize) {
        let state = self.lock();
        (
            state.waiting.len(),
            state.waiting.capacity(),
            state.handed_on.len(),
        )
    }
}

/// The requests of a controller's triggers as the scheduler gets them (see [`Queue::gate`]).
pub(crate) struct Gated<K: Resource<DynamicType = ()>, S> {
    triggers: Fuse<S>,
    queue: Queue<K>,
}

impl<K, S> Stream for Gated<K, S>
where
    K: Resource<DynamicType = ()>,
    S: Stream<Item = Result<ReconcileRequest<K>, watcher::Error>> + Unpin,
{
    type Item = Result<ReconcileRequest<K>, watcher::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let mut taken = 0;
        while taken < DRAIN_PER_POLL {
            match this.triggers.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(request))) => this.queue.lock().push(request),
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Some(Err(error))),
                Poll::Ready(None) | Poll::Pending => break,
            }
            taken += 1;
        }
        if taken == DRAIN_PER_POLL {
            cx.waker().wake_by_ref();
        }
        let mut state = this.queue.lock();
        if let Some(request) = state.hand_on() {
            return Poll::Ready(Some(Ok(request)));
        }
        if this.triggers.is_done() && state.waiting.is_empty() {
            return Poll::Ready(None);
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
