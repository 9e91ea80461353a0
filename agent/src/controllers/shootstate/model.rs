//! The ShootState sync's own state, fed by its watches before they trigger a reconcile: the
//! compact items of the extension objects and persisted Secrets (no stores of the nine kinds in
//! full), per control-plane namespace what changed since its last write, and the timing of its
//! writes (spacing by the batch period, back-off after failures, the next snapshot). A reconcile
//! of a namespace's Cluster asks [`Model::plan`] what to do and reports back to
//! [`Model::written`] or [`Model::failed`]; both are pure decisions over this state and the time given.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use seedlet_runtime::clock::Clock;
use seedlet_runtime::error_chain;
use seedlet_runtime::spacing::Spacing;

use super::reconcile::{Job, Outcome};
use super::schedule::{self, Backup};
use crate::cluster_shoot::ShootRef;
use crate::shoot_state::entries::{ExtensionData, ExtensionItem, SecretItem};

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

/// An extension object within its namespace: kind and name.
pub type ObjectKey = (&'static str, String);
type SecretKey = (String, String);

/// What changed in a namespace since its last write.
#[derive(Debug, Default)]
struct Pending {
    extensions: BTreeSet<ObjectKey>,
    secrets: BTreeSet<String>,
    snapshot: bool,
    /// The whole namespace was marked (a new Cluster): write even when it holds nothing, to
    /// learn the ShootState's snapshot timestamp.
    requested: bool,
}

impl Pending {
    fn is_empty(&self) -> bool {
        !self.requested && !self.snapshot && self.extensions.is_empty() && self.secrets.is_empty()
    }
}

/// The sync's state of one control-plane namespace.
#[derive(Debug, Default)]
struct Namespace {
    /// The shoot as its Cluster last showed it; `None` while no Cluster was seen.
    shoot: Option<ShootRef>,
    pending: Pending,
    /// Consecutive failed writes.
    failures: u32,
    /// No write before this (back-off after a failure).
    not_before: Option<Instant>,
    /// Last known snapshot timestamp; `None` until a write told us.
    timestamp: Option<Option<String>>,
    next_snapshot: Option<Instant>,
}

/// The extension objects of one namespace with their data, sorted by key. A namespace holds a
/// handful (eight on a seed of the scale benchmark, for 2 500 namespaces): a vector of exactly
/// them takes 8 × 96 bytes, where a B-tree's smallest node has room for eleven (1.2 KiB).
#[derive(Debug, Default)]
struct NamespaceObjects(Vec<(ObjectKey, ExtensionData)>);

impl NamespaceObjects {
    fn position(&self, key: &ObjectKey) -> Result<usize, usize> {
        self.0.binary_search_by(|(stored, _)| stored.cmp(key))
    }

    fn get(&self, key: &ObjectKey) -> Option<&ExtensionData> {
        let index = self.position(key).ok()?;
        self.0.get(index).map(|(_, data)| data)
    }

    /// Sets the data of `key`, adding the object where it sorts.
    fn insert(&mut self, key: ObjectKey, data: ExtensionData) {
        match self.position(&key) {
            Ok(index) => {
                if let Some((_, stored)) = self.0.get_mut(index) {
                    *stored = data;
                }
            }
            Err(index) => {
                // Room for just this one: objects come one at a time and a namespace holds few.
                self.0.reserve_exact(1);
                self.0.insert(index, (key, data));
            }
        }
    }

    /// Removes `key`; returns whether it was there.
    fn remove(&mut self, key: &ObjectKey) -> bool {
        let Ok(index) = self.position(key) else {
            return false;
        };
        self.0.remove(index);
        true
    }

    fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.0.iter().map(|(key, _)| key)
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What a reconcile of one namespace's Cluster does now.
#[derive(Debug)]
pub enum Plan {
    /// Nothing to write; look again after the delay (the next snapshot), or on the next trigger.
    Idle(Option<Duration>),
    /// Changes are waiting for the end of the batch period or of a back-off: look again then.
    Wait(Duration),
    /// Write this.
    Write(Job),
}

/// The sync's state: see the module docs.
pub struct Model {
    snapshot_period: Option<Duration>,
    clock: Arc<dyn Clock>,
    spacing: Spacing,
    /// The extension objects by namespace: a namespace's objects are found without a scan (a
    /// new Cluster marks all of them), and its name is kept once, not with each object.
    extensions: BTreeMap<String, NamespaceObjects>,
    secrets: BTreeMap<SecretKey, SecretItem>,
    /// Per kind being re-listed: the names it listed, by namespace.
    seen_extensions: HashMap<&'static str, BTreeMap<String, BTreeSet<String>>>,
    seen_secrets: Option<BTreeSet<SecretKey>>,
    seen_clusters: Option<BTreeSet<String>>,
    namespaces: BTreeMap<String, Namespace>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field(
                "extensions",
                &self
                    .extensions
                    .values()
                    .map(NamespaceObjects::len)
                    .sum::<usize>(),
            )
            .field("secrets", &self.secrets.len())
            .field("namespaces", &self.namespaces.len())
            .finish_non_exhaustive()
    }
}

impl Model {
    /// An empty model: at most one write per namespace per `batch_period`, a snapshot every
    /// `snapshot_period` (`None`: never), snapshot times read from `clock`.
    pub fn new(
        batch_period: Duration,
        snapshot_period: Option<Duration>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            snapshot_period,
            clock,
            spacing: Spacing::new(batch_period),
            extensions: BTreeMap::new(),
            secrets: BTreeMap::new(),
            seen_extensions: HashMap::new(),
            seen_secrets: None,
            seen_clusters: None,
            namespaces: BTreeMap::new(),
        }
    }

    /// Applies one watch observation and marks what changed; returns the namespaces whose
    /// Cluster is to be reconciled for it (a Cluster's own change triggers its reconcile anyway,
    /// so Cluster updates return none).
    pub fn observe(&mut self, update: Update, now: Instant) -> Vec<String> {
        match update {
            Update::Extension(ExtensionItem {
                kind,
                name,
                namespace,
                data,
            }) => {
                if let Some(seen) = self.seen_extensions.get_mut(kind) {
                    seen.entry(namespace.clone())
                        .or_default()
                        .insert(name.clone());
                }
                let objects = self.extensions.entry(namespace.clone()).or_default();
                let key = (kind, name);
                if objects.get(&key) == Some(&data) {
                    return Vec::new();
                }
                objects.insert(key.clone(), data);
                vec![self.mark_extension(namespace, key)]
            }
            Update::ExtensionGone {
                namespace,
                kind,
                name,
            } => {
                let key = (kind, name);
                if !self.forget_extension(&namespace, &key) {
                    return Vec::new();
                }
                vec![self.mark_extension(namespace, key)]
            }
            Update::Secret(item) => {
                let key = (item.namespace.clone(), item.entry.name.clone());
                if let Some(seen) = &mut self.seen_secrets {
                    seen.insert(key.clone());
                }
                if self.secrets.get(&key) == Some(&item) {
                    return Vec::new();
                }
                self.secrets.insert(key.clone(), item);
                vec![self.mark_secret(key)]
            }
            Update::SecretGone { namespace, name } => {
                let key = (namespace, name);
                if self.secrets.remove(&key).is_none() {
                    return Vec::new();
                }
                vec![self.mark_secret(key)]
            }
            Update::Cluster(namespace, shoot) => {
                if let Some(seen) = &mut self.seen_clusters {
                    seen.insert(namespace.clone());
                }
                self.observe_cluster(namespace, shoot, now);
                Vec::new()
            }
            Update::ClusterGone(namespace) => {
                self.cluster_gone(&namespace);
                Vec::new()
            }
            Update::Relist(source) => {
                match source {
                    Source::Extension(kind) => {
                        self.seen_extensions.insert(kind, BTreeMap::new());
                    }
                    Source::Secret => self.seen_secrets = Some(BTreeSet::new()),
                    Source::Cluster => self.seen_clusters = Some(BTreeSet::new()),
                }
                Vec::new()
            }
            Update::Listed(source) => self.listed(source),
        }
    }

    fn observe_cluster(&mut self, namespace: String, shoot: ShootRef, now: Instant) {
        let state = self.namespaces.entry(namespace.clone()).or_default();
        let previous = state.shoot.replace(shoot.clone());
        let same_shoot = previous
            .as_ref()
            .is_some_and(|old| old.namespace == shoot.namespace && old.name == shoot.name);
        if !same_shoot {
            // A new (or re-assigned) ShootState: bring everything of the namespace in.
            self.mark_namespace(&namespace);
            return;
        }
        if previous.as_ref() != Some(&shoot) {
            // The operation or deletion changed: the snapshot may have become (im)possible.
            if let Some(timestamp) = state.timestamp.clone() {
                self.schedule_snapshot(&namespace, timestamp.as_deref(), now);
            }
        }
    }

    fn cluster_gone(&mut self, namespace: &str) {
        // Its changes go with it; a Cluster that comes back marks the whole namespace again.
        self.namespaces.remove(namespace);
        self.spacing.forget(namespace);
    }

    fn listed(&mut self, source: Source) -> Vec<String> {
        let mut marked = BTreeSet::new();
        match source {
            Source::Extension(kind) => {
                let Some(seen) = self.seen_extensions.remove(kind) else {
                    return Vec::new();
                };
                let gone: Vec<(String, ObjectKey)> = self
                    .extensions
                    .iter()
                    .flat_map(|(namespace, objects)| {
                        let listed = seen.get(namespace);
                        objects
                            .keys()
                            .filter(move |(of_kind, name)| {
                                *of_kind == kind
                                    && !listed.is_some_and(|names| names.contains(name))
                            })
                            .map(move |key| (namespace.clone(), key.clone()))
                    })
                    .collect();
                for (namespace, key) in gone {
                    self.forget_extension(&namespace, &key);
                    marked.insert(self.mark_extension(namespace, key));
                }
            }
            Source::Secret => {
                let Some(seen) = self.seen_secrets.take() else {
                    return Vec::new();
                };
                let gone: Vec<SecretKey> = self
                    .secrets
                    .keys()
                    .filter(|key| !seen.contains(*key))
                    .cloned()
                    .collect();
                for key in gone {
                    self.secrets.remove(&key);
                    marked.insert(self.mark_secret(key));
                }
            }
            Source::Cluster => {
                let Some(seen) = self.seen_clusters.take() else {
                    return Vec::new();
                };
                let gone: Vec<String> = self
                    .namespaces
                    .iter()
                    .filter(|(namespace, state)| {
                        state.shoot.is_some() && !seen.contains(*namespace)
                    })
                    .map(|(namespace, _)| namespace.clone())
                    .collect();
                for namespace in gone {
                    self.cluster_gone(&namespace);
                }
            }
        }
        marked.into_iter().collect()
    }

    fn pending(&mut self, namespace: &str) -> &mut Pending {
        &mut self
            .namespaces
            .entry(namespace.to_owned())
            .or_default()
            .pending
    }

    /// Removes the object `key` of `namespace`; returns whether it was there.
    fn forget_extension(&mut self, namespace: &str, key: &ObjectKey) -> bool {
        let Some(objects) = self.extensions.get_mut(namespace) else {
            return false;
        };
        let removed = objects.remove(key);
        if objects.is_empty() {
            self.extensions.remove(namespace);
        }
        removed
    }

    fn mark_extension(&mut self, namespace: String, key: ObjectKey) -> String {
        self.pending(&namespace).extensions.insert(key);
        namespace
    }

    fn mark_secret(&mut self, (namespace, name): SecretKey) -> String {
        self.pending(&namespace).secrets.insert(name);
        namespace
    }

    fn mark_namespace(&mut self, namespace: &str) {
        let extensions: Vec<ObjectKey> = self
            .extensions
            .get(namespace)
            .map(|objects| objects.keys().cloned().collect())
            .unwrap_or_default();
        let secrets: Vec<String> = self
            .secrets
            .keys()
            .filter(|key| key.0 == namespace)
            .map(|key| key.1.clone())
            .collect();
        let pending = self.pending(namespace);
        pending.extensions.extend(extensions);
        pending.secrets.extend(secrets);
        pending.requested = true;
    }

    /// What a reconcile of `namespace`'s Cluster (showing `shoot`) does at `now`: write what
    /// changed (or the snapshot when it is due) unless the namespace wrote less than a batch
    /// period ago or is backing off, in which case it waits for that end.
    pub fn plan(&mut self, namespace: &str, shoot: &ShootRef, now: Instant) -> Plan {
        let state = self.namespaces.entry(namespace.to_owned()).or_default();
        if state.next_snapshot.is_some_and(|at| at <= now) {
            state.next_snapshot = None;
            state.pending.snapshot = true;
        }
        if state.pending.is_empty() {
            return Plan::Idle(
                state
                    .next_snapshot
                    .map(|at| at.saturating_duration_since(now)),
            );
        }
        if let Some(wait) = state
            .not_before
            .map(|at| at.saturating_duration_since(now))
            .filter(|wait| !wait.is_zero())
        {
            return Plan::Wait(wait);
        }
        if let Some(wait) = self.spacing.wait(namespace, now) {
            return Plan::Wait(wait);
        }
        let pending = std::mem::take(&mut state.pending);
        let objects = self.extensions.get(namespace);
        let extensions = pending
            .extensions
            .into_iter()
            .map(|key| {
                let data = objects.and_then(|objects| objects.get(&key)).cloned();
                (key, data)
            })
            .collect();
        let secrets = pending
            .secrets
            .into_iter()
            .map(|name| {
                let item = self
                    .secrets
                    .get(&(namespace.to_owned(), name.clone()))
                    .cloned();
                (name, item)
            })
            .collect();
        Plan::Write(Job {
            namespace: namespace.to_owned(),
            shoot: shoot.clone(),
            extensions,
            secrets,
            snapshot: pending.snapshot,
        })
    }

    /// Records a failed write of `job` at `now`: its work is marked again behind the
    /// namespace's back-off, which grows with every failure, a lost race too (a writer that
    /// keeps changing the ShootState must not turn the retries into a write loop).
    pub fn failed(&mut self, job: Job, now: Instant) {
        let Some(state) = self.namespaces.get_mut(job.namespace.as_str()) else {
            // The Cluster went while the write ran: nothing maps the namespace any more.
            return;
        };
        let delay = schedule::retry_delay(state.failures);
        state.failures = state.failures.saturating_add(1);
        state.not_before = Some(now + delay);
        let pending = &mut state.pending;
        pending
            .extensions
            .extend(job.extensions.into_iter().map(|(key, _)| key));
        pending
            .secrets
            .extend(job.secrets.into_iter().map(|(name, _)| name));
        pending.snapshot |= job.snapshot;
        pending.requested = true;
    }

    /// Records what `job`'s write did at `now`: schedules the next snapshot, and marks the
    /// extension objects whose change could not be prepared again behind a back-off. Returns
    /// when to look again (`None`: on the next trigger).
    pub fn written(&mut self, job: &Job, outcome: Outcome, now: Instant) -> Option<Duration> {
        let namespace = job.namespace.as_str();
        // No state: the Cluster went while the write ran.
        let state = self.namespaces.get_mut(namespace)?;
        state.timestamp = Some(outcome.timestamp.clone());
        let mut retry = None;
        if outcome.failed.is_empty() {
            state.failures = 0;
            state.not_before = None;
        } else {
            let delay = schedule::retry_delay(state.failures);
            state.failures = state.failures.saturating_add(1);
            state.not_before = Some(now + delay);
            retry = Some(delay);
            for (key, error) in outcome.failed {
                tracing::warn!(
                    namespace,
                    kind = key.0,
                    name = %key.1,
                    reason = error.reason(),
                    error = %error_chain(&error),
                    "extension state not persisted, retrying"
                );
                state.pending.extensions.insert(key);
            }
        }
        self.schedule_snapshot(namespace, outcome.timestamp.as_deref(), now);
        let snapshot = self
            .namespaces
            .get(namespace)
            .and_then(|state| state.next_snapshot)
            .map(|at| at.saturating_duration_since(now));
        match (retry, snapshot) {
            (Some(retry), Some(snapshot)) => Some(retry.min(snapshot)),
            (retry, snapshot) => retry.or(snapshot),
        }
    }

    /// The back-off `namespace` waits after its last failed write (`None` after a success).
    pub fn retry_in(&self, namespace: &str) -> Option<Duration> {
        let failures = self.namespaces.get(namespace)?.failures;
        (failures > 0).then(|| schedule::retry_delay(failures - 1))
    }

    fn schedule_snapshot(&mut self, namespace: &str, timestamp: Option<&str>, now: Instant) {
        let Some(period) = self.snapshot_period else {
            return;
        };
        let Some(state) = self.namespaces.get_mut(namespace) else {
            return;
        };
        let Some(shoot) = &state.shoot else {
            return;
        };
        let decision = schedule::backup(
            shoot,
            timestamp,
            self.clock.now(),
            period,
            rand::random::<f64>(),
        );
        state.next_snapshot = match decision {
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
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
