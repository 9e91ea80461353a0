//! What the controllers know about the store between passes, kept current from the store's event
//! stream: owner references and UIDs (for garbage collection), terminating namespaces and deleting
//! CRDs; and the per-controller queues of objects an event made worth looking at again.
//!
//! A write therefore costs the controllers O(what it touched): the event updates the index and
//! queues the few objects whose decision may have changed (the object itself, its owners, its
//! dependents, its terminating namespace or deleting CRD), and a pass looks only at those.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::object_ref::ObjectRef;
use super::{root_ca, workloads};
use crate::registry::crd::{self, CLEANUP_FINALIZER, CRD_KEY};
use crate::resources::Registry;
use crate::storage::{Event, EventType, State};

/// Storage key of CertificateSigningRequests.
pub const CSR_KEY: &str = "certificatesigningrequests.certificates.k8s.io";

/// How long a namespace stays Terminating before its contents are deleted. kube-controller-manager
/// waits 5 s (`namespaceDeletionGracePeriod`) so that every API server sees the deletion and
/// rejects new content first; clients rely on that window (a create right after the delete gets
/// 403 NamespaceTerminating, not 404). Shortened here, as one server needs no propagation time.
pub const NAMESPACE_DELETION_GRACE: Duration = Duration::from_secs(2);

/// Objects each controller should look at in its next pass.
#[derive(Debug, Default)]
pub struct Work {
    /// Objects with owner references that may have lost all their owners.
    pub dependents: BTreeSet<ObjectRef>,
    /// Objects that may be deleting in the foreground or orphaning, with dependents that changed.
    pub owners: BTreeSet<ObjectRef>,
    /// Terminating namespaces whose contents changed.
    pub namespaces: BTreeSet<String>,
    /// Names of deleting CRDs whose custom objects changed.
    pub custom_resource_definitions: BTreeSet<String>,
    /// Names of CertificateSigningRequests that changed.
    pub certificate_signing_requests: BTreeSet<String>,
    /// Workloads whose status may need simulating.
    pub workloads: BTreeSet<ObjectRef>,
    /// Namespaces whose `kube-root-ca.crt` ConfigMap may need publishing.
    pub root_ca: BTreeSet<String>,
}

/// Owner UIDs and UID of one tracked object.
#[derive(Clone, Debug, Default)]
struct Tracked {
    uid: String,
    owners: Vec<String>,
}

/// The controllers' view of the store, updated event by event.
#[derive(Default)]
pub struct Index {
    objects: HashMap<ObjectRef, Tracked>,
    by_uid: HashMap<String, ObjectRef>,
    dependents: HashMap<String, HashSet<ObjectRef>>,
    counts: HashMap<String, usize>,
    /// Terminating namespace → when it was first seen terminating.
    terminating_namespaces: HashMap<String, Instant>,
    /// Custom-object storage key → name of its deleting CRD.
    deleting_crds: HashMap<String, String>,
    registry: Option<Arc<Registry>>,
}

impl Index {
    /// Indexes everything stored and queues every object, as after a restart or a missed event.
    pub fn rebuild(state: &State, work: &mut Work, now: Instant) -> Self {
        let mut index = Index {
            registry: Some(state.registry()),
            ..Index::default()
        };
        for key in state.resource_keys() {
            index.add_key(state, &key, work, now);
        }
        index
    }

    /// Applies one store event and queues what it may affect.
    pub fn observe(&mut self, event: &Event, work: &mut Work, now: Instant) {
        let target = ObjectRef::of(&event.resource, &event.object);
        match event.kind {
            EventType::Added | EventType::Modified => {
                if let Some(previous) = &event.previous {
                    self.queue_owners(previous, work);
                }
                self.track(&target, &event.object, now);
                self.queue(&target, &event.object, work);
            }
            EventType::Deleted => {
                if root_ca::concerns(&target) {
                    work.root_ca.insert(target.namespace.clone());
                }
                let was_tracked = !self.untrack(&target);
                self.queue_owners(&event.object, work);
                if let Some(uid) = uid_of(&event.object)
                    && let Some(dependents) = self.dependents.get(uid)
                {
                    work.dependents.extend(dependents.iter().cloned());
                }
                self.forget(&target, was_tracked);
                self.queue_namespace_and_crd(&target, work);
            }
        }
    }

    /// After the served types changed (CRDs written): re-indexes resources whose objects were
    /// dropped without events, and queues dependents of missing owners, since a kind that became
    /// served or unserved changes whether they are collected.
    pub fn registry_changed(&mut self, state: &State, work: &mut Work, now: Instant) {
        let registry = state.registry();
        if self
            .registry
            .as_ref()
            .is_some_and(|seen| Arc::ptr_eq(seen, &registry))
        {
            return;
        }
        self.registry = Some(registry);
        let stale: Vec<String> = self
            .counts
            .iter()
            .filter(|(key, count)| state.count(key) != **count)
            .map(|(key, _)| key.clone())
            .collect();
        for key in stale {
            let tracked: Vec<ObjectRef> = self
                .objects
                .keys()
                .filter(|r| r.key == key)
                .cloned()
                .collect();
            for target in &tracked {
                self.untrack(target);
            }
            self.counts.remove(&key);
            self.add_key(state, &key, work, now);
        }
        for (owner, dependents) in &self.dependents {
            if !self.by_uid.contains_key(owner) {
                work.dependents.extend(dependents.iter().cloned());
            }
        }
    }

    /// Whether an object with this UID is stored.
    pub fn exists(&self, uid: &str) -> bool {
        self.by_uid.contains_key(uid)
    }

    /// Objects that name `uid` as an owner.
    pub fn dependents_of(&self, uid: &str) -> Vec<ObjectRef> {
        let mut dependents: Vec<ObjectRef> = self
            .dependents
            .get(uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        dependents.sort();
        dependents
    }

    /// When the queued terminating namespace `name` may be processed (None: it is not terminating).
    pub fn namespace_due(&self, name: &str) -> Option<Instant> {
        self.terminating_namespaces
            .get(name)
            .map(|since| *since + NAMESPACE_DELETION_GRACE)
    }

    fn add_key(&mut self, state: &State, key: &str, work: &mut Work, now: Instant) {
        for object in state.list(key, None) {
            let target = ObjectRef::of(key, &object);
            self.track(&target, &object, now);
            self.queue(&target, &object, work);
        }
    }

    fn track(&mut self, target: &ObjectRef, object: &Value, now: Instant) {
        let fresh = self.untrack(target);
        if fresh {
            *self.counts.entry(target.key.clone()).or_default() += 1;
        }
        let tracked = Tracked {
            uid: uid_of(object).unwrap_or_default().to_string(),
            owners: owner_uids(object),
        };
        if !tracked.uid.is_empty() {
            self.by_uid.insert(tracked.uid.clone(), target.clone());
        }
        for owner in &tracked.owners {
            self.dependents
                .entry(owner.clone())
                .or_default()
                .insert(target.clone());
        }
        self.objects.insert(target.clone(), tracked);
        self.follow_lifecycle(target, object, now);
    }

    /// Drops what is known about `target`; returns whether it was not tracked before.
    fn untrack(&mut self, target: &ObjectRef) -> bool {
        let Some(previous) = self.objects.remove(target) else {
            return true;
        };
        if self.by_uid.get(&previous.uid) == Some(target) {
            self.by_uid.remove(&previous.uid);
        }
        for owner in &previous.owners {
            if let Some(dependents) = self.dependents.get_mut(owner) {
                dependents.remove(target);
                if dependents.is_empty() {
                    self.dependents.remove(owner);
                }
            }
        }
        false
    }

    /// After a deletion event: the object no longer counts and no longer terminates anything.
    fn forget(&mut self, target: &ObjectRef, was_tracked: bool) {
        if was_tracked && let Some(count) = self.counts.get_mut(&target.key) {
            *count = count.saturating_sub(1);
        }
        if target.key == "namespaces" {
            self.terminating_namespaces.remove(&target.name);
        }
        if target.key == CRD_KEY {
            self.deleting_crds.retain(|_, name| name != &target.name);
        }
    }

    /// Keeps the sets of terminating namespaces and deleting CRDs current.
    fn follow_lifecycle(&mut self, target: &ObjectRef, object: &Value, now: Instant) {
        let deleting = object.pointer("/metadata/deletionTimestamp").is_some();
        if target.key == "namespaces" {
            if deleting {
                self.terminating_namespaces
                    .entry(target.name.clone())
                    .or_insert(now);
            } else {
                self.terminating_namespaces.remove(&target.name);
            }
        }
        if target.key == CRD_KEY {
            self.deleting_crds.retain(|_, name| name != &target.name);
            let cleaning = deleting
                && crate::object::finalizers(object)
                    .iter()
                    .any(|f| f == CLEANUP_FINALIZER);
            if cleaning && let Some(custom) = crd::types_of(object).into_iter().next() {
                self.deleting_crds
                    .insert(custom.storage_key(), target.name.clone());
            }
        }
    }

    /// Queues what an added or modified object may need.
    fn queue(&self, target: &ObjectRef, object: &Value, work: &mut Work) {
        if !owner_uids(object).is_empty() {
            work.dependents.insert(target.clone());
        }
        if object.pointer("/metadata/deletionTimestamp").is_some() {
            work.owners.insert(target.clone());
        }
        self.queue_owners(object, work);
        if target.key == CSR_KEY {
            work.certificate_signing_requests
                .insert(target.name.clone());
        }
        if target.key == "namespaces" {
            work.root_ca.insert(target.name.clone());
        } else if root_ca::concerns(target) {
            work.root_ca.insert(target.namespace.clone());
        }
        if workloads::KINDS.contains(&target.key.as_str()) {
            work.workloads.insert(target.clone());
        }
        if target.key == CRD_KEY && self.deleting_crds.values().any(|n| n == &target.name) {
            work.custom_resource_definitions.insert(target.name.clone());
        }
        if target.key == "namespaces" && self.terminating_namespaces.contains_key(&target.name) {
            work.namespaces.insert(target.name.clone());
        }
        self.queue_namespace_and_crd(target, work);
    }

    /// Queues the stored owners of `object` (a dependent changing may unblock a foreground deletion).
    fn queue_owners(&self, object: &Value, work: &mut Work) {
        for owner in owner_uids(object) {
            if let Some(location) = self.by_uid.get(&owner) {
                work.owners.insert(location.clone());
            }
        }
    }

    /// Queues the terminating namespace or deleting CRD that `target` keeps waiting.
    fn queue_namespace_and_crd(&self, target: &ObjectRef, work: &mut Work) {
        if !target.namespace.is_empty()
            && self.terminating_namespaces.contains_key(&target.namespace)
        {
            work.namespaces.insert(target.namespace.clone());
        }
        if let Some(definition) = self.deleting_crds.get(&target.key) {
            work.custom_resource_definitions.insert(definition.clone());
        }
    }
}

fn uid_of(object: &Value) -> Option<&str> {
    object.pointer("/metadata/uid").and_then(Value::as_str)
}

/// UIDs named in `metadata.ownerReferences`.
pub fn owner_uids(object: &Value) -> Vec<String> {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("uid").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(kind: EventType, resource: &str, object: Value, previous: Option<Value>) -> Event {
        Event {
            rv: 1,
            resource: resource.to_string(),
            kind,
            object: Arc::new(object),
            previous: previous.map(Arc::new),
        }
    }

    fn cm(name: &str, uid: &str, owners: &[&str]) -> Value {
        let references: Vec<Value> = owners.iter().map(|o| json!({"uid": o})).collect();
        json!({"metadata": {"name": name, "namespace": "ns", "uid": uid, "ownerReferences": references}})
    }

    fn target(name: &str) -> ObjectRef {
        ObjectRef {
            key: "configmaps".into(),
            namespace: "ns".into(),
            name: name.into(),
        }
    }

    #[test]
    fn deleting_an_owner_queues_exactly_its_dependents() {
        let mut index = Index::default();
        let mut work = Work::default();
        index.observe(
            &event(EventType::Added, "configmaps", cm("owner", "u1", &[]), None),
            &mut work,
            Instant::now(),
        );
        index.observe(
            &event(
                EventType::Added,
                "configmaps",
                cm("child", "u2", &["u1"]),
                None,
            ),
            &mut work,
            Instant::now(),
        );
        index.observe(
            &event(EventType::Added, "configmaps", cm("other", "u3", &[]), None),
            &mut work,
            Instant::now(),
        );
        let mut work = Work::default();
        index.observe(
            &event(
                EventType::Deleted,
                "configmaps",
                cm("owner", "u1", &[]),
                None,
            ),
            &mut work,
            Instant::now(),
        );
        assert_eq!(
            work.dependents.into_iter().collect::<Vec<_>>(),
            [target("child")]
        );
        assert!(!index.exists("u1"));
        assert!(index.exists("u3"));
    }

    #[test]
    fn changing_a_dependent_queues_its_owner_and_forgets_dropped_references() {
        let mut index = Index::default();
        let mut work = Work::default();
        index.observe(
            &event(EventType::Added, "configmaps", cm("owner", "u1", &[]), None),
            &mut work,
            Instant::now(),
        );
        index.observe(
            &event(
                EventType::Added,
                "configmaps",
                cm("child", "u2", &["u1"]),
                None,
            ),
            &mut work,
            Instant::now(),
        );
        let mut work = Work::default();
        index.observe(
            &event(
                EventType::Modified,
                "configmaps",
                cm("child", "u2", &[]),
                Some(cm("child", "u2", &["u1"])),
            ),
            &mut work,
            Instant::now(),
        );
        assert!(work.owners.contains(&target("owner")));
        assert!(work.dependents.is_empty());
        assert!(index.dependents_of("u1").is_empty());
    }

    #[test]
    fn writes_in_a_terminating_namespace_queue_the_namespace_only_while_it_terminates() {
        let started = Instant::now();
        let mut index = Index::default();
        let mut work = Work::default();
        let namespace = |deleting: bool| {
            let mut ns = json!({"metadata": {"name": "ns", "uid": "n1"}});
            if deleting {
                ns["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
            }
            ns
        };
        index.observe(
            &event(EventType::Added, "configmaps", cm("a", "u1", &[]), None),
            &mut work,
            Instant::now(),
        );
        assert!(work.namespaces.is_empty());
        index.observe(
            &event(EventType::Modified, "namespaces", namespace(true), None),
            &mut work,
            Instant::now(),
        );
        assert!(work.namespaces.contains("ns"));
        let due = index
            .namespace_due("ns")
            .expect("terminating namespaces have a due time");
        assert!(due >= started + NAMESPACE_DELETION_GRACE);
        let mut work = Work::default();
        index.observe(
            &event(EventType::Deleted, "configmaps", cm("a", "u1", &[]), None),
            &mut work,
            Instant::now(),
        );
        assert!(work.namespaces.contains("ns"));
        index.observe(
            &event(EventType::Deleted, "namespaces", namespace(true), None),
            &mut work,
            Instant::now(),
        );
        let mut work = Work::default();
        index.observe(
            &event(EventType::Added, "configmaps", cm("b", "u2", &[]), None),
            &mut work,
            Instant::now(),
        );
        assert!(work.namespaces.is_empty());
    }

    #[test]
    fn only_changed_certificate_signing_requests_and_workloads_are_queued() {
        let mut index = Index::default();
        let mut work = Work::default();
        let csr = json!({"metadata": {"name": "csr-1", "uid": "c1"}});
        index.observe(
            &event(EventType::Added, CSR_KEY, csr, None),
            &mut work,
            Instant::now(),
        );
        let deployment = json!({"metadata": {"name": "web", "namespace": "ns", "uid": "d1"}});
        index.observe(
            &event(EventType::Added, "deployments.apps", deployment, None),
            &mut work,
            Instant::now(),
        );
        index.observe(
            &event(EventType::Added, "secrets", cm("s", "s1", &[]), None),
            &mut work,
            Instant::now(),
        );
        assert_eq!(work.certificate_signing_requests.len(), 1);
        assert_eq!(work.workloads.len(), 1);
        assert!(work.dependents.is_empty() && work.owners.is_empty());
    }
}
