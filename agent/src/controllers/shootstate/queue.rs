//! The event loop of the ShootState sync: keeps what the watches reported (extension objects,
//! persisted Secrets, Clusters) in memory, marks what changed per control-plane namespace, and
//! runs at most one write per ShootState at a time and per batch period; schedules the periodic
//! snapshot per shoot.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::entries::{ExtensionItem, SecretItem};
use super::reconcile::{self, Ctx, Job, Outcome};
use super::schedule::{self, Backup};
use crate::cluster_shoot::ShootRef;
use seedlet_runtime::error_chain;

/// Timing and parallelism of the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// At most one write per ShootState per this period.
    pub batch_period: Duration,
    /// Full snapshot period; `None` switches the snapshot off.
    pub snapshot_period: Option<Duration>,
    /// Writes in flight at once (different ShootStates).
    pub concurrency: usize,
}

/// Where an update came from (for re-list bookkeeping).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// A watch of one extension kind.
    Extension(&'static str),
    /// The watch of persisted Secrets.
    Secret,
    /// The watch of Clusters.
    Cluster,
}

/// One observation of a watch, already reduced to what the sync needs.
#[derive(Clone, Debug)]
pub enum Update {
    /// An extension object exists (created, changed, or listed).
    Extension(ExtensionItem),
    /// An extension object is gone.
    ExtensionGone {
        /// Control-plane namespace.
        namespace: String,
        /// Kind.
        kind: &'static str,
        /// Name.
        name: String,
    },
    /// A persisted Secret exists.
    Secret(SecretItem),
    /// A persisted Secret is gone.
    SecretGone {
        /// Control-plane namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A Cluster exists: its namespace belongs to the shoot.
    Cluster(String, ShootRef),
    /// A Cluster is gone.
    ClusterGone(String),
    /// A watch starts (re-)listing.
    Relist(Source),
    /// A watch finished (re-)listing: what it did not list since [`Update::Relist`] is gone.
    Listed(Source),
}

type ExtensionKey = (String, &'static str, String);
type SecretKey = (String, String);

#[derive(Debug, Default)]
struct Model {
    extensions: BTreeMap<ExtensionKey, ExtensionItem>,
    secrets: BTreeMap<SecretKey, SecretItem>,
    clusters: BTreeMap<String, ShootRef>,
    seen_extensions: HashMap<&'static str, BTreeSet<ExtensionKey>>,
    seen_secrets: Option<BTreeSet<SecretKey>>,
    seen_clusters: Option<BTreeSet<String>>,
}

#[derive(Debug)]
struct Pending {
    extensions: BTreeSet<(&'static str, String)>,
    secrets: BTreeSet<String>,
    snapshot: bool,
    due: Instant,
}

#[derive(Debug, Default)]
struct Namespace {
    last_start: Option<Instant>,
    in_flight: bool,
    failures: u32,
    /// Last known snapshot timestamp; `None` until a write told us.
    timestamp: Option<Option<String>>,
    next_snapshot: Option<Instant>,
}

/// The loop state.
pub struct Queue {
    ctx: Arc<Ctx>,
    settings: Settings,
    model: Model,
    pending: BTreeMap<String, Pending>,
    namespaces: BTreeMap<String, Namespace>,
    running: JoinSet<(String, Job, Result<Outcome, reconcile::Error>)>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("settings", &self.settings)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl Queue {
    /// An empty queue.
    pub fn new(ctx: Arc<Ctx>, settings: Settings) -> Self {
        Self {
            ctx,
            settings,
            model: Model::default(),
            pending: BTreeMap::new(),
            namespaces: BTreeMap::new(),
            running: JoinSet::new(),
        }
    }

    /// Consumes `updates` until `stop` is cancelled or the stream ends; in-flight writes are
    /// aborted when the loop is dropped.
    pub async fn run(mut self, updates: impl Stream<Item = Update>, stop: CancellationToken) {
        let mut updates = std::pin::pin!(updates);
        loop {
            let wake = self.next_wake();
            tokio::select! {
                () = stop.cancelled() => return,
                update = updates.next() => match update {
                    Some(update) => self.observe(update),
                    None => return,
                },
                Some(done) = self.running.join_next(), if !self.running.is_empty() => {
                    if let Ok((namespace, job, result)) = done {
                        self.finished(&namespace, job, result);
                    }
                }
                () = sleep_until(wake) => {}
            }
            self.dispatch(Instant::now());
        }
    }

    fn next_wake(&self) -> Option<Instant> {
        // At the concurrency limit only a finished write can start the next one.
        let saturated = self.running.len() >= self.settings.concurrency.max(1);
        let flushes = self
            .pending
            .iter()
            .filter(|(namespace, _)| !saturated && !self.in_flight(namespace))
            .map(|(_, pending)| pending.due);
        let snapshots = self
            .namespaces
            .values()
            .filter_map(|namespace| namespace.next_snapshot);
        flushes.chain(snapshots).min()
    }

    fn in_flight(&self, namespace: &str) -> bool {
        self.namespaces
            .get(namespace)
            .is_some_and(|state| state.in_flight)
    }

    /// Applies one watch observation to the model and marks what changed.
    fn observe(&mut self, update: Update) {
        let now = Instant::now();
        match update {
            Update::Extension(item) => {
                let key = (item.namespace.clone(), item.kind, item.name.clone());
                if let Some(seen) = self.model.seen_extensions.get_mut(item.kind) {
                    seen.insert(key.clone());
                }
                if self.model.extensions.get(&key) == Some(&item) {
                    return;
                }
                self.model.extensions.insert(key.clone(), item);
                self.mark_extension(key, now);
            }
            Update::ExtensionGone {
                namespace,
                kind,
                name,
            } => {
                let key = (namespace, kind, name);
                if self.model.extensions.remove(&key).is_some() {
                    self.mark_extension(key, now);
                }
            }
            Update::Secret(item) => {
                let key = (item.namespace.clone(), item.entry.name.clone());
                if let Some(seen) = &mut self.model.seen_secrets {
                    seen.insert(key.clone());
                }
                if self.model.secrets.get(&key) == Some(&item) {
                    return;
                }
                self.model.secrets.insert(key.clone(), item);
                self.mark_secret(key, now);
            }
            Update::SecretGone { namespace, name } => {
                let key = (namespace, name);
                if self.model.secrets.remove(&key).is_some() {
                    self.mark_secret(key, now);
                }
            }
            Update::Cluster(namespace, shoot) => {
                if let Some(seen) = &mut self.model.seen_clusters {
                    seen.insert(namespace.clone());
                }
                self.observe_cluster(namespace, shoot, now);
            }
            Update::ClusterGone(namespace) => {
                self.model.clusters.remove(&namespace);
                self.pending.remove(&namespace);
                // An in-flight write re-creates the entry when it finishes; without a Cluster it
                // schedules nothing.
                self.namespaces.remove(&namespace);
            }
            Update::Relist(source) => match source {
                Source::Extension(kind) => {
                    self.model.seen_extensions.insert(kind, BTreeSet::new());
                }
                Source::Secret => self.model.seen_secrets = Some(BTreeSet::new()),
                Source::Cluster => self.model.seen_clusters = Some(BTreeSet::new()),
            },
            Update::Listed(source) => self.listed(source, now),
        }
    }

    fn observe_cluster(&mut self, namespace: String, shoot: ShootRef, now: Instant) {
        let previous = self.model.clusters.insert(namespace.clone(), shoot.clone());
        let same_shoot = previous
            .as_ref()
            .is_some_and(|old| old.namespace == shoot.namespace && old.name == shoot.name);
        if !same_shoot {
            // A new (or re-assigned) ShootState: bring everything of the namespace in.
            self.mark_namespace(&namespace, now);
            return;
        }
        if previous.as_ref() != Some(&shoot) {
            // The operation or deletion changed: the snapshot may have become (im)possible.
            let timestamp = self
                .namespaces
                .get(&namespace)
                .and_then(|state| state.timestamp.clone());
            if let Some(timestamp) = timestamp {
                self.schedule_snapshot(&namespace, &shoot, timestamp.as_deref(), now);
            }
        }
    }

    fn listed(&mut self, source: Source, now: Instant) {
        match source {
            Source::Extension(kind) => {
                let Some(seen) = self.model.seen_extensions.remove(kind) else {
                    return;
                };
                let gone: Vec<ExtensionKey> = self
                    .model
                    .extensions
                    .keys()
                    .filter(|key| key.1 == kind && !seen.contains(*key))
                    .cloned()
                    .collect();
                for key in gone {
                    self.model.extensions.remove(&key);
                    self.mark_extension(key, now);
                }
            }
            Source::Secret => {
                let Some(seen) = self.model.seen_secrets.take() else {
                    return;
                };
                let gone: Vec<SecretKey> = self
                    .model
                    .secrets
                    .keys()
                    .filter(|key| !seen.contains(*key))
                    .cloned()
                    .collect();
                for key in gone {
                    self.model.secrets.remove(&key);
                    self.mark_secret(key, now);
                }
            }
            Source::Cluster => {
                let Some(seen) = self.model.seen_clusters.take() else {
                    return;
                };
                let gone: Vec<String> = self
                    .model
                    .clusters
                    .keys()
                    .filter(|namespace| !seen.contains(*namespace))
                    .cloned()
                    .collect();
                for namespace in gone {
                    self.observe(Update::ClusterGone(namespace));
                }
            }
        }
    }

    fn pending(&mut self, namespace: &str, now: Instant) -> &mut Pending {
        let last_start = self
            .namespaces
            .get(namespace)
            .and_then(|state| state.last_start);
        let due = schedule::flush_at(now, last_start, self.settings.batch_period);
        self.pending
            .entry(namespace.to_owned())
            .or_insert_with(|| Pending {
                extensions: BTreeSet::new(),
                secrets: BTreeSet::new(),
                snapshot: false,
                due,
            })
    }

    fn mark_extension(&mut self, (namespace, kind, name): ExtensionKey, now: Instant) {
        self.pending(&namespace, now)
            .extensions
            .insert((kind, name));
    }

    fn mark_secret(&mut self, (namespace, name): SecretKey, now: Instant) {
        self.pending(&namespace, now).secrets.insert(name);
    }

    fn mark_namespace(&mut self, namespace: &str, now: Instant) {
        let extensions: Vec<(&'static str, String)> = self
            .model
            .extensions
            .keys()
            .filter(|key| key.0 == namespace)
            .map(|key| (key.1, key.2.clone()))
            .collect();
        let secrets: Vec<String> = self
            .model
            .secrets
            .keys()
            .filter(|key| key.0 == namespace)
            .map(|key| key.1.clone())
            .collect();
        let pending = self.pending(namespace, now);
        pending.extensions.extend(extensions);
        pending.secrets.extend(secrets);
    }

    /// Starts the writes that are due.
    fn dispatch(&mut self, now: Instant) {
        let snapshots: Vec<String> = self
            .namespaces
            .iter()
            .filter(|(_, state)| state.next_snapshot.is_some_and(|at| at <= now))
            .map(|(namespace, _)| namespace.clone())
            .collect();
        for namespace in snapshots {
            if let Some(state) = self.namespaces.get_mut(&namespace) {
                state.next_snapshot = None;
            }
            self.pending(&namespace, now).snapshot = true;
        }
        let due: Vec<String> = self
            .pending
            .iter()
            .filter(|(namespace, pending)| pending.due <= now && !self.in_flight(namespace))
            .map(|(namespace, _)| namespace.clone())
            .collect();
        for namespace in due {
            if self.running.len() >= self.settings.concurrency.max(1) {
                return;
            }
            let Some(pending) = self.pending.remove(&namespace) else {
                continue;
            };
            let Some(shoot) = self.model.clusters.get(&namespace).cloned() else {
                // No Cluster (yet): nothing maps the namespace to a ShootState. The Cluster's
                // arrival marks the whole namespace again.
                continue;
            };
            let job = Job {
                extensions: pending
                    .extensions
                    .into_iter()
                    .map(|(kind, name)| {
                        let item = self
                            .model
                            .extensions
                            .get(&(namespace.clone(), kind, name.clone()))
                            .cloned();
                        ((kind, name), item)
                    })
                    .collect(),
                secrets: pending
                    .secrets
                    .into_iter()
                    .map(|name| {
                        let item = self
                            .model
                            .secrets
                            .get(&(namespace.clone(), name.clone()))
                            .cloned();
                        (name, item)
                    })
                    .collect(),
                snapshot: pending.snapshot,
                namespace: namespace.clone(),
                shoot,
            };
            let state = self.namespaces.entry(namespace.clone()).or_default();
            state.in_flight = true;
            state.last_start = Some(now);
            let ctx = self.ctx.clone();
            self.running.spawn(async move {
                let result = reconcile::run(&ctx, &job).await;
                (namespace, job, result)
            });
        }
    }

    /// Records the result of a write: schedules the next snapshot, or re-marks the job's work
    /// for a retry with back-off.
    fn finished(&mut self, namespace: &str, job: Job, result: Result<Outcome, reconcile::Error>) {
        let now = Instant::now();
        let state = self.namespaces.entry(namespace.to_owned()).or_default();
        state.in_flight = false;
        match result {
            Ok(outcome) => {
                state.timestamp = Some(outcome.timestamp.clone());
                if outcome.failed.is_empty() {
                    state.failures = 0;
                } else {
                    let delay = schedule::retry_delay(state.failures);
                    state.failures = state.failures.saturating_add(1);
                    let mut retry = Vec::with_capacity(outcome.failed.len());
                    for (key, error) in outcome.failed {
                        tracing::warn!(
                            namespace,
                            kind = key.0,
                            name = %key.1,
                            reason = error.reason(),
                            error = %error_chain(&error),
                            "extension state not persisted, retrying"
                        );
                        retry.push(key);
                    }
                    let pending = self.pending(namespace, now);
                    pending.extensions.extend(retry);
                    pending.due = pending.due.max(now + delay);
                }
                let shoot = self.model.clusters.get(namespace).cloned();
                if let Some(shoot) = shoot {
                    self.schedule_snapshot(namespace, &shoot, outcome.timestamp.as_deref(), now);
                }
            }
            Err(error) => {
                let delay = schedule::retry_delay(state.failures);
                let shoot_state = format!("{}/{}", job.shoot.namespace, job.shoot.name);
                // Every failure grows the namespace's back-off, a lost race too: a writer that keeps
                // changing the ShootState must not turn the retries into a write loop (under load the
                // e2e drift test drove the queue into the write budget when 409s retried at once).
                state.failures = state.failures.saturating_add(1);
                if seedlet_runtime::status::conflict_in_chain(&error) {
                    // Another writer changed the ShootState since the job read it: routine, so
                    // a debug line and a retry on fresh state.
                    tracing::debug!(namespace, shoot_state = %shoot_state, error = %error_chain(&error), "lost a shootstate write race, retrying");
                } else {
                    tracing::warn!(
                        namespace,
                        shoot_state = %shoot_state,
                        reason = error.reason(),
                        error = %error_chain(&error),
                        retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        "shootstate write failed"
                    );
                }
                let pending = self.pending(namespace, now);
                pending
                    .extensions
                    .extend(job.extensions.into_iter().map(|(key, _)| key));
                pending
                    .secrets
                    .extend(job.secrets.into_iter().map(|(name, _)| name));
                pending.snapshot |= job.snapshot;
                pending.due = pending.due.max(now + delay);
            }
        }
    }

    fn schedule_snapshot(
        &mut self,
        namespace: &str,
        shoot: &ShootRef,
        timestamp: Option<&str>,
        now: Instant,
    ) {
        let Some(period) = self.settings.snapshot_period else {
            return;
        };
        let decision = schedule::backup(
            shoot,
            timestamp,
            self.ctx.clock.now(),
            period,
            rand::random::<f64>(),
        );
        let next = match decision {
            Ok(Backup::Now(_)) => Some(now),
            Ok(Backup::Later(delay)) => Some(now + delay),
            Ok(Backup::Never) => None,
            Err(error) => {
                tracing::warn!(
                    namespace,
                    error = %error_chain(&error),
                    "shootstate snapshot timestamp unreadable, retrying later"
                );
                Some(now + schedule::NOT_READY_DELAY)
            }
        };
        self.namespaces
            .entry(namespace.to_owned())
            .or_default()
            .next_snapshot = next;
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> Queue {
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("url"));
        let client = kube::Client::try_from(config).expect("client");
        let ctx = Ctx::new(
            client.clone(),
            client,
            Arc::new(crate::metrics::AgentMetrics::new()),
            Arc::new(seedlet_runtime::clock::FakeClock::new(
                jiff::Timestamp::UNIX_EPOCH,
            )),
            "test",
        );
        Queue::new(
            Arc::new(ctx),
            Settings {
                batch_period: Duration::ZERO,
                snapshot_period: None,
                concurrency: 1,
            },
        )
    }

    fn job() -> Job {
        Job {
            namespace: "shoot--dev--foo".into(),
            shoot: ShootRef {
                namespace: "garden-dev".into(),
                name: "foo".into(),
                deleting: false,
                last_operation: None,
            },
            extensions: vec![(("Worker", "w".into()), None)],
            secrets: vec![("ca".into(), None)],
            snapshot: false,
        }
    }

    fn write_failure(code: u16, reason: &str) -> reconcile::Error {
        reconcile::Error::WriteShootState {
            key: "garden-dev/foo".into(),
            source: kube::Error::Api(
                kube::core::Status::failure("m", reason)
                    .with_code(code)
                    .boxed(),
            ),
        }
    }

    #[tokio::test]
    async fn a_lost_write_race_is_retried_and_backs_off_like_any_failure() {
        let mut queue = queue();
        for _ in 0..3 {
            queue.finished(
                "shoot--dev--foo",
                job(),
                Err(write_failure(409, "Conflict")),
            );
        }
        assert_eq!(
            queue.namespaces["shoot--dev--foo"].failures, 3,
            "a writer that keeps winning the race cannot drive a write loop"
        );
        let pending = &queue.pending["shoot--dev--foo"];
        assert!(pending.extensions.contains(&("Worker", "w".to_owned())));
        assert!(
            pending.secrets.contains("ca"),
            "the job's work is marked again"
        );
        assert!(pending.due > Instant::now() + schedule::retry_delay(0) / 2);
        queue.finished(
            "shoot--dev--foo",
            job(),
            Err(write_failure(500, "InternalError")),
        );
        assert_eq!(queue.namespaces["shoot--dev--foo"].failures, 4);
    }
}
