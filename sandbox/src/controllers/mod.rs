//! The built-in controllers kube-controller-manager would run: garbage collection, namespace and CRD
//! cleanup, the CSR signer and (optionally) workload status simulation and the root CA publisher.
//!
//! They run in one task driven by the store's event stream: each event updates an [`Index`] and
//! queues the objects whose decision it may change, and a pass (after a short settle, so bursts
//! are handled together) looks only at those, so a write costs O(changed) rather than O(stored).
//! The task starts from a full index of what is stored and rebuilds it if it ever falls behind the
//! event stream. The only timed work is a terminating namespace's grace period
//! ([`index::NAMESPACE_DELETION_GRACE`]), after which it is processed without another event;
//! nothing else depends on time, so no periodic resync is needed.

mod cleanup;
mod gc;
mod index;
mod object_ref;
mod root_ca;
mod signer;
mod workloads;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::broadcast::{self, error::TryRecvError};

use self::index::{Index, Work};
use crate::auth::authn::UserInfo;
use crate::auth::pki::CertificateAuthority;
use crate::endpoints::Api;
use crate::registry::generic::Writer;
use crate::storage::{Event, State};

/// Which optional controllers run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Simulate ready workload status.
    pub simulate_workloads: bool,
    /// Publish the `kube-root-ca.crt` ConfigMap in every namespace.
    pub publish_root_ca: bool,
}

/// Pause after a change before a pass, so bursts of writes are handled together.
const SETTLE: Duration = Duration::from_millis(20);

/// Runs all controllers until the API shuts down.
pub async fn run(api: Arc<Api>, options: Options) {
    let user = UserInfo {
        username: "system:kube-controller-manager".into(),
        groups: vec!["system:authenticated".into()],
        ..UserInfo::default()
    };
    let mut controllers = {
        let state = api.store.lock();
        Controllers::start(&state, options, Instant::now())
    };
    loop {
        if !controllers.ready(Instant::now()) {
            let due = controllers.next_due();
            tokio::select! {
                received = controllers.events.recv() => {
                    if !controllers.receive(received) {
                        return;
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(SETTLE) => {}
                        _ = api.shutdown.cancelled() => return,
                    }
                }
                _ = until(due) => {}
                _ = api.shutdown.cancelled() => return,
            }
        }
        let writer = Writer {
            manager: "kube-controller-manager",
            user: &user,
            dry_run: false,
        };
        let mut state = api.store.lock();
        let now = Instant::now();
        controllers.catch_up(&state, now);
        controllers.pass(&mut state, &api.ca, &writer, now);
    }
}

/// Resolves at `deadline`, or never without one.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

/// The controllers' event subscription, index and queues.
struct Controllers {
    events: broadcast::Receiver<Arc<Event>>,
    index: Index,
    work: Work,
    options: Options,
    /// Events received before `catch_up`, applied under the store lock together with the rest.
    pending: Vec<Arc<Event>>,
    /// Set when events were missed: the next `catch_up` rebuilds the index.
    lagged: bool,
}

impl Controllers {
    /// Subscribes and indexes everything stored, queueing it all once (like a controller's first list).
    /// Must be called with the store locked, so no event falls between the two.
    fn start(state: &State, options: Options, now: Instant) -> Self {
        let events = state.subscribe();
        let mut work = Work::default();
        let index = Index::rebuild(state, &mut work, now);
        Controllers {
            events,
            index,
            work,
            options,
            pending: Vec::new(),
            lagged: false,
        }
    }

    /// Takes one received event; returns false when the store is gone.
    fn receive(&mut self, received: Result<Arc<Event>, broadcast::error::RecvError>) -> bool {
        match received {
            Ok(event) => self.pending.push(event),
            Err(broadcast::error::RecvError::Lagged(_)) => self.lagged = true,
            Err(broadcast::error::RecvError::Closed) => return false,
        }
        true
    }

    /// Applies every event up to now. Called with the store locked: events are sent under the same
    /// lock, so afterwards the index matches the state exactly.
    fn catch_up(&mut self, state: &State, now: Instant) {
        loop {
            match self.events.try_recv() {
                Ok(event) => self.pending.push(event),
                Err(TryRecvError::Lagged(_)) => self.lagged = true,
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        if self.lagged {
            self.lagged = false;
            self.pending.clear();
            self.index = Index::rebuild(state, &mut self.work, now);
            return;
        }
        for event in self.pending.drain(..) {
            self.index.observe(&event, &mut self.work, now);
        }
        self.index.registry_changed(state, &mut self.work, now);
    }

    /// Whether a pass has something to do now (queued namespaces count once their grace ended).
    fn ready(&self, now: Instant) -> bool {
        let work = &self.work;
        !work.dependents.is_empty()
            || !work.owners.is_empty()
            || !work.custom_resource_definitions.is_empty()
            || !work.certificate_signing_requests.is_empty()
            || !work.workloads.is_empty()
            || !work.root_ca.is_empty()
            || work.namespaces.iter().any(|n| self.namespace_due(n, now))
    }

    /// When the earliest queued namespace's grace period ends.
    fn next_due(&self) -> Option<Instant> {
        self.work
            .namespaces
            .iter()
            .filter_map(|n| self.index.namespace_due(n))
            .min()
    }

    fn namespace_due(&self, name: &str, now: Instant) -> bool {
        self.index.namespace_due(name).is_none_or(|due| due <= now)
    }

    /// Runs each controller over its queue. What they write comes back as events and queues the
    /// follow-up work (a deleted child re-queues its owner, a deleted object its namespace).
    fn pass(
        &mut self,
        state: &mut State,
        ca: &CertificateAuthority,
        writer: &Writer<'_>,
        now: Instant,
    ) {
        let mut work = std::mem::take(&mut self.work);
        let (due, waiting) = std::mem::take(&mut work.namespaces)
            .into_iter()
            .partition(|n| self.namespace_due(n, now));
        work.namespaces = due;
        self.work.namespaces = waiting;
        gc::collect(state, &self.index, &work.dependents);
        gc::finish_owners(state, &self.index, &work.owners, writer);
        cleanup::namespaces(state, &work.namespaces, writer);
        cleanup::custom_resource_definitions(state, &work.custom_resource_definitions, writer);
        signer::pass(state, &work.certificate_signing_requests, ca, writer);
        if self.options.simulate_workloads {
            workloads::pass(state, &work.workloads, writer);
        }
        if self.options.publish_root_ca {
            root_ca::pass(state, &work.root_ca, ca, writer);
        }
    }
}
