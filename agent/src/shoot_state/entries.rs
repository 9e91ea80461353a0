//! Pure ShootState decisions: what an extension object or a persisted Secret contributes to
//! `spec.extensions[]` / `spec.gardener[]`, the two Secret payload layouts, copies of referenced
//! objects for `spec.resources[]`, applying a batch of changes, and the merge patch that writes it.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;
use seedlet_api::common::NamedResourceReference;
use seedlet_api::core::{
    ExtensionResourceState, GardenerResourceData, ResourceData, ShootStateSpec,
};
use seedlet_api::extensions::ExtensionObject;
use seedlet_api::names::{annotations, labels, shoot_state, technical_id};
use serde_json::{Map, Value, json};

use seedlet_api::extensions::ExtensionKind;

use super::state::StateText;

/// The extension kinds whose state the ShootState keeps, in gardenlet's listing order.
pub const KINDS: [ExtensionKind; 9] = ExtensionKind::SHOOT_STATE;

/// Secret `type` inferred for legacy entries holding `tls.crt` and `tls.key`.
const SECRET_TYPE_TLS: &str = "kubernetes.io/tls";
/// Secret `type` inferred for other legacy entries.
const SECRET_TYPE_OPAQUE: &str = "Opaque";

/// What the sync needs to know about one extension object: its identity and [`ExtensionData`].
#[derive(Clone, Debug, PartialEq)]
pub struct ExtensionItem {
    /// Kind, one of [`KINDS`].
    pub kind: &'static str,
    /// Object name.
    pub name: String,
    /// Control-plane namespace (BackupEntry: parsed from its name).
    pub namespace: String,
    /// What the ShootState entry is made of.
    pub data: ExtensionData,
}

/// What the sync keeps of one extension object besides its identity (the sync's model keys it by
/// namespace, kind and name, so these are not stored twice for the 20 000 objects of a large seed).
#[derive(Clone, Debug, PartialEq)]
pub struct ExtensionData {
    /// `spec.purpose`, if any (boxed, like `resources`: no spare capacity, a smaller entry).
    pub purpose: Option<Box<str>>,
    /// `status.state`, as compact text, deflated where that is shorter.
    pub state: Option<StateText>,
    /// `status.resources`.
    pub resources: Box<[NamedResourceReference]>,
    /// Whether the object is being deleted.
    pub deleting: bool,
    /// Whether `gardener.cloud/operation` is `wait-for-state`, `restore` or `migrate`: the
    /// extension's state is in flux and events are ignored until the annotation leaves that set.
    pub paused: bool,
}

impl ExtensionItem {
    /// The item of `object`, or `None` when it has no control-plane namespace (a namespaced
    /// object outside shoot namespaces, or a BackupEntry whose name has no `--<uid>` suffix).
    pub fn of<K: ExtensionObject>(object: &K) -> Option<Self> {
        let meta = object.meta();
        let name = meta.name.clone()?;
        let kind = ExtensionKind::from_name(K::kind(&()).as_ref())
            .filter(|kind| kind.in_shoot_state())?
            .as_str();
        let namespace = match meta.namespace.as_deref() {
            Some(namespace) => namespace.to_owned(),
            None => technical_id::control_plane_namespace_of_backup_entry(&name)?.to_owned(),
        };
        if !technical_id::is_shoot_namespace(&namespace) {
            return None;
        }
        let status = object.extension_status();
        let paused = meta
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(annotations::OPERATION))
            .is_some_and(|operation| pauses_sync(operation));
        Some(Self {
            kind,
            name,
            namespace,
            data: ExtensionData {
                purpose: object.purpose().map(Box::from),
                state: status
                    .and_then(|status| status.state.as_ref())
                    .map(StateText::of),
                resources: status
                    .map(|status| status.resources.clone().into_boxed_slice())
                    .unwrap_or_default(),
                deleting: meta.deletion_timestamp.is_some(),
                paused,
            },
        })
    }

    /// The `spec.extensions[]` entry ([`ExtensionData::entry`]).
    pub fn entry(&self) -> Option<ExtensionResourceState> {
        self.data.entry(self.kind, &self.name)
    }
}

impl ExtensionData {
    /// The `spec.extensions[]` entry of the object `kind`/`name`, or `None` when it contributes
    /// nothing (deleting, or neither state nor resources).
    pub fn entry(&self, kind: &str, name: &str) -> Option<ExtensionResourceState> {
        if self.deleting || (self.state.is_none() && self.resources.is_empty()) {
            return None;
        }
        Some(ExtensionResourceState {
            kind: kind.to_owned(),
            name: Some(name.to_owned()),
            purpose: self.purpose.as_deref().map(str::to_owned),
            state: self.state.as_ref().map(StateText::value),
            resources: self.resources.to_vec(),
        })
    }
}

/// Whether an operation annotation value suspends the sync for an object (spec §3.1).
pub fn pauses_sync(operation: &str) -> bool {
    [
        annotations::OPERATION_WAIT_FOR_STATE,
        annotations::OPERATION_RESTORE,
        annotations::OPERATION_MIGRATE,
    ]
    .contains(&operation)
}

/// Whether a Secret is persisted in the ShootState: label `persist=true` (gardenlet at HEAD;
/// `managed-by=secrets-manager` is not required, so both the event-driven sync and the snapshot
/// agree on the set).
pub fn is_persisted(secret_labels: Option<&BTreeMap<String, String>>) -> bool {
    secret_labels
        .and_then(|labels| labels.get(labels::PERSIST))
        .is_some_and(|value| value == "true")
}

/// Label selector of persisted Secrets.
pub fn persisted_selector() -> String {
    format!("{}=true", labels::PERSIST)
}

/// What the sync needs to know about one persisted Secret.
#[derive(Clone, Debug, PartialEq)]
pub struct SecretItem {
    /// Control-plane namespace.
    pub namespace: String,
    /// The `spec.gardener[]` entry (new payload layout).
    pub entry: GardenerResourceData,
    /// Whether the Secret is being deleted.
    pub deleting: bool,
}

impl SecretItem {
    /// The item of `secret`, or `None` outside shoot namespaces or without `persist=true`.
    pub fn of(secret: &Secret) -> Option<Self> {
        let namespace = secret.metadata.namespace.clone()?;
        if !technical_id::is_shoot_namespace(&namespace)
            || !is_persisted(secret.metadata.labels.as_ref())
        {
            return None;
        }
        Some(Self {
            namespace,
            entry: secret_entry(secret)?,
            deleting: secret.metadata.deletion_timestamp.is_some(),
        })
    }
}

/// The `spec.gardener[]` entry of a Secret: `{name, labels, type: secret, data: {"data": {...},
/// "immutable"?: bool, "type"?: str}}` (gardenlet HEAD layout).
pub fn secret_entry(secret: &Secret) -> Option<GardenerResourceData> {
    let payload = SecretPayload {
        data: secret
            .data
            .as_ref()
            .map(|data| {
                data.iter()
                    .map(|(key, bytes)| (key.clone(), base64_of(&bytes.0)))
                    .collect()
            })
            .unwrap_or_default(),
        immutable: secret.immutable,
        type_: secret.type_.clone().filter(|type_| !type_.is_empty()),
    };
    Some(GardenerResourceData {
        name: secret.metadata.name.clone()?,
        type_: shoot_state::DATA_TYPE_SECRET.to_owned(),
        data: payload.encode(),
        labels: secret.metadata.labels.clone().unwrap_or_default(),
    })
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A Secret as stored in a ShootState, independent of the payload layout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SecretPayload {
    /// Data, base64-encoded values.
    pub data: BTreeMap<String, String>,
    /// Whether the Secret is immutable.
    pub immutable: Option<bool>,
    /// Secret type, `None` when empty.
    pub type_: Option<String>,
}

impl SecretPayload {
    /// The new layout: `{"data": {...}, "immutable"?: bool, "type"?: str}`.
    pub fn encode(&self) -> Value {
        let mut map = Map::new();
        map.insert("data".into(), json!(self.data));
        if let Some(immutable) = self.immutable {
            map.insert("immutable".into(), json!(immutable));
        }
        if let Some(type_) = &self.type_ {
            map.insert("type".into(), json!(type_));
        }
        Value::Object(map)
    }

    /// Reads either layout. The new one is an object whose `data` is an object and whose other
    /// keys are `immutable`/`type`; the legacy one is the plain map of base64 strings, for which
    /// entries labelled `managed-by=secrets-manager` are immutable and typed `kubernetes.io/tls`
    /// when they hold `tls.crt` and `tls.key`, else `Opaque` (spec §2). `None` for anything else
    /// (e.g. a null `data`, which HEAD rejects).
    pub fn decode(value: &Value, entry_labels: &BTreeMap<String, String>) -> Option<Self> {
        let map = value.as_object()?;
        if let Some(Value::Object(data)) = map.get("data")
            && map
                .keys()
                .all(|key| ["data", "immutable", "type"].contains(&key.as_str()))
        {
            return Some(Self {
                data: strings(data)?,
                immutable: map.get("immutable").and_then(Value::as_bool),
                type_: map
                    .get("type")
                    .and_then(Value::as_str)
                    .filter(|type_| !type_.is_empty())
                    .map(str::to_owned),
            });
        }
        let data = strings(map)?;
        let managed = entry_labels
            .get(labels::MANAGED_BY)
            .is_some_and(|value| value == labels::MANAGED_BY_SECRETS_MANAGER);
        if !managed {
            return Some(Self {
                data,
                immutable: None,
                type_: None,
            });
        }
        let tls = data.contains_key("tls.crt") && data.contains_key("tls.key");
        Some(Self {
            data,
            immutable: Some(true),
            type_: Some(
                if tls {
                    SECRET_TYPE_TLS
                } else {
                    SECRET_TYPE_OPAQUE
                }
                .to_owned(),
            ),
        })
    }
}

fn strings(map: &Map<String, Value>) -> Option<BTreeMap<String, String>> {
    map.iter()
        .map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned())))
        .collect()
}

/// Whether a stored gardener entry already holds `desired`: same type and labels, and the same
/// Secret once both payloads are decoded (so a legacy-layout entry is not rewritten for layout
/// alone).
pub fn gardener_entry_current(
    existing: &GardenerResourceData,
    desired: &GardenerResourceData,
) -> bool {
    if existing == desired {
        return true;
    }
    if existing.type_ != desired.type_ || existing.labels != desired.labels {
        return false;
    }
    if desired.type_ != shoot_state::DATA_TYPE_SECRET {
        return false;
    }
    match (
        SecretPayload::decode(&existing.data, &existing.labels),
        SecretPayload::decode(&desired.data, &desired.labels),
    ) {
        (Some(existing), Some(desired)) => existing == desired,
        _ => false,
    }
}

/// The `spec.resources[]` copy of a referenced object: system metadata removed (spec §3.3).
pub fn resource_data(api_version: &str, kind: &str, name: &str, mut object: Value) -> ResourceData {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "ownerReferences",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
        ] {
            metadata.remove(field);
        }
    }
    ResourceData {
        api_version: Some(api_version.to_owned()),
        kind: kind.to_owned(),
        name: name.to_owned(),
        data: object,
    }
}

/// One change the event-driven sync applies to a ShootState.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// Upsert an extension entry and the copies of the objects it references.
    UpsertExtension {
        /// The entry.
        entry: ExtensionResourceState,
        /// Copies of `entry.resources`.
        resources: Vec<ResourceData>,
    },
    /// Remove the entries of an extension object that is gone or no longer has state.
    RemoveExtension {
        /// Kind.
        kind: String,
        /// Object name.
        name: String,
    },
    /// Upsert a persisted Secret.
    UpsertSecret(GardenerResourceData),
    /// Remove a persisted Secret that is gone.
    RemoveSecret(String),
}

/// Applies `changes` to `spec` with gardener's list semantics; removals are skipped while the
/// shoot is migrating (its state must survive the deletion of the source seed's objects). Then
/// drops `spec.resources` no extension entry references any more. Returns whether anything
/// changed.
pub fn apply_changes(spec: &mut ShootStateSpec, changes: Vec<Change>, migrating: bool) -> bool {
    let mut changed = false;
    for change in changes {
        changed |= match change {
            Change::UpsertExtension { entry, resources } => {
                let mut changed = spec.upsert_extension(entry);
                for resource in resources {
                    changed |= spec.upsert_resource(resource);
                }
                changed
            }
            Change::RemoveExtension { .. } | Change::RemoveSecret(_) if migrating => false,
            Change::RemoveExtension { kind, name } => {
                let before = spec.extensions.len();
                spec.extensions.retain(|existing| {
                    !(existing.kind == kind && existing.name.as_deref() == Some(name.as_str()))
                });
                before != spec.extensions.len()
            }
            Change::UpsertSecret(entry) => {
                let current = spec
                    .gardener
                    .iter()
                    .find(|existing| existing.name == entry.name)
                    .is_some_and(|existing| gardener_entry_current(existing, &entry));
                !current && spec.upsert_gardener(entry)
            }
            Change::RemoveSecret(name) => {
                let before = spec.gardener.len();
                spec.gardener.retain(|existing| {
                    existing.name != name || existing.type_ != shoot_state::DATA_TYPE_SECRET
                });
                before != spec.gardener.len()
            }
        };
    }
    changed | drop_unreferenced_resources(spec)
}

/// Removes `spec.resources[]` entries that no extension entry references. Returns whether any
/// was removed.
pub fn drop_unreferenced_resources(spec: &mut ShootStateSpec) -> bool {
    let referenced: BTreeSet<(Option<&str>, &str, &str)> = spec
        .extensions
        .iter()
        .flat_map(|entry| &entry.resources)
        .map(|reference| {
            let target = &reference.resource_ref;
            (
                target.api_version.as_deref(),
                target.kind.as_str(),
                target.name.as_str(),
            )
        })
        .collect();
    let keep: Vec<bool> = spec
        .resources
        .iter()
        .map(|resource| {
            referenced.contains(&(
                resource.api_version.as_deref(),
                resource.kind.as_str(),
                resource.name.as_str(),
            ))
        })
        .collect();
    let before = spec.resources.len();
    let mut keep = keep.into_iter();
    spec.resources.retain(|_| keep.next().unwrap_or(true));
    before != spec.resources.len()
}

/// The spec a full snapshot writes (gardenlet's `Deploy(overwrite=true)`): the persisted Secrets,
/// the extension entries in [`KINDS`] order, the copies of their references, and the existing
/// `machine-state` entry kept (seedlet does not compute machine state).
pub fn snapshot_spec(
    previous: Option<&ShootStateSpec>,
    secrets: Vec<GardenerResourceData>,
    extensions: Vec<(ExtensionResourceState, Vec<ResourceData>)>,
) -> ShootStateSpec {
    let mut spec = ShootStateSpec::default();
    for secret in secrets {
        spec.upsert_gardener(secret);
    }
    if let Some(machine_state) = previous.and_then(|previous| {
        previous
            .gardener
            .iter()
            .find(|entry| entry.type_ == shoot_state::DATA_TYPE_MACHINE_STATE)
    }) {
        spec.upsert_gardener(machine_state.clone());
    }
    let mut extensions = extensions;
    extensions.sort_by_key(|(entry, _)| {
        KINDS
            .iter()
            .position(|kind| kind.as_str() == entry.kind)
            .unwrap_or(KINDS.len())
    });
    for (entry, resources) in extensions {
        spec.upsert_extension(entry);
        for resource in resources {
            spec.upsert_resource(resource);
        }
    }
    spec
}

/// The JSON merge patch that replaces the three lists of a ShootState (an empty list removes the
/// field), guarded by `resource_version`, plus `extra_annotations`.
pub fn spec_patch(
    spec: &ShootStateSpec,
    resource_version: Option<&str>,
    extra_annotations: &BTreeMap<String, String>,
) -> Value {
    fn list<T: serde::Serialize>(items: &[T]) -> Value {
        if items.is_empty() {
            Value::Null
        } else {
            json!(items)
        }
    }
    let mut metadata = Map::new();
    if let Some(resource_version) = resource_version {
        metadata.insert("resourceVersion".into(), json!(resource_version));
    }
    if !extra_annotations.is_empty() {
        metadata.insert("annotations".into(), json!(extra_annotations));
    }
    json!({
        "metadata": metadata,
        "spec": {
            "gardener": list(&spec.gardener),
            "extensions": list(&spec.extensions),
            "resources": list(&spec.resources),
        }
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::ByteString;
    use seedlet_api::common::CrossVersionObjectReference;
    use seedlet_api::extensions::{Infrastructure, OperatingSystemConfig};

    use super::*;

    fn reference(name: &str) -> NamedResourceReference {
        NamedResourceReference {
            name: name.into(),
            resource_ref: CrossVersionObjectReference {
                api_version: Some("v1".into()),
                kind: "ConfigMap".into(),
                name: name.into(),
            },
        }
    }

    fn infrastructure(value: Value) -> Infrastructure {
        serde_json::from_value(value).unwrap()
    }

    fn secret(name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) -> Secret {
        let mut secret = Secret::default();
        secret.metadata.name = Some(name.into());
        secret.metadata.namespace = Some("shoot--dev--foo".into());
        secret.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        secret.data = Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
                .collect(),
        );
        secret
    }

    #[test]
    fn extension_item_entry_is_none_without_state_and_resources_or_when_deleting() {
        let mut item = ExtensionItem::of(&infrastructure(json!({
            "metadata": {"name": "foo", "namespace": "shoot--dev--foo"},
            "spec": {"type": "local"},
            "status": {"state": {"vpc": "1"}}
        })))
        .unwrap();
        let entry = item.entry().unwrap();
        assert_eq!(entry.kind, "Infrastructure");
        assert_eq!(entry.purpose, None);
        assert_eq!(entry.state, Some(json!({"vpc": "1"})));
        item.data.deleting = true;
        assert_eq!(item.entry(), None);
        item.data.deleting = false;
        item.data.state = None;
        assert_eq!(item.entry(), None);
        item.data.resources = vec![reference("tf")].into();
        assert!(item.entry().is_some());
    }

    #[test]
    fn extension_item_is_none_outside_shoot_namespaces() {
        let object = infrastructure(json!({
            "metadata": {"name": "foo", "namespace": "garden"},
            "spec": {"type": "local"}
        }));
        assert_eq!(ExtensionItem::of(&object), None);
    }

    #[test]
    fn extension_item_keeps_purpose_and_pauses_for_restore() {
        let osc: OperatingSystemConfig = serde_json::from_value(json!({
            "metadata": {"name": "osc", "namespace": "shoot-dev-foo",
                         "annotations": {"gardener.cloud/operation": "restore"}},
            "spec": {"type": "ubuntu", "purpose": "provision"}
        }))
        .unwrap();
        let item = ExtensionItem::of(&osc).unwrap();
        assert_eq!(item.data.purpose.as_deref(), Some("provision"));
        assert!(item.data.paused);
        assert!(!pauses_sync("reconcile"));
    }

    #[test]
    fn backup_entry_item_takes_the_namespace_from_its_name() {
        let entry: seedlet_api::extensions::BackupEntry = serde_json::from_value(json!({
            "metadata": {"name": "shoot--dev--foo--1234"},
            "spec": {"type": "local"},
            "status": {"state": {"x": 1}}
        }))
        .unwrap();
        let item = ExtensionItem::of(&entry).unwrap();
        assert_eq!(item.namespace, "shoot--dev--foo");
        assert_eq!(item.kind, "BackupEntry");
    }

    #[test]
    fn secret_item_requires_persist_label_and_shoot_namespace() {
        let persisted = secret("ca", &[("persist", "true")], &[("ca.crt", "x")]);
        let item = SecretItem::of(&persisted).unwrap();
        assert_eq!(item.entry.type_, "secret");
        assert_eq!(item.entry.data, json!({"data": {"ca.crt": "eA=="}}));
        assert_eq!(SecretItem::of(&secret("plain", &[], &[("a", "b")])), None);
        let mut elsewhere = persisted.clone();
        elsewhere.metadata.namespace = Some("garden".into());
        assert_eq!(SecretItem::of(&elsewhere), None);
    }

    #[test]
    fn secret_entry_records_type_and_immutability_in_the_new_layout() {
        let mut tls = secret(
            "ca",
            &[("persist", "true")],
            &[("tls.crt", "c"), ("tls.key", "k")],
        );
        tls.immutable = Some(true);
        tls.type_ = Some("kubernetes.io/tls".into());
        let entry = secret_entry(&tls).unwrap();
        assert_eq!(
            entry.data,
            json!({"data": {"tls.crt": "Yw==", "tls.key": "aw=="}, "immutable": true, "type": "kubernetes.io/tls"})
        );
    }

    #[test]
    fn legacy_payload_of_secrets_manager_entries_infers_tls_type_and_immutability() {
        let labels = BTreeMap::from([("managed-by".to_owned(), "secrets-manager".to_owned())]);
        let legacy = json!({"tls.crt": "Yw==", "tls.key": "aw=="});
        let payload = SecretPayload::decode(&legacy, &labels).unwrap();
        assert_eq!(payload.immutable, Some(true));
        assert_eq!(payload.type_.as_deref(), Some("kubernetes.io/tls"));
        let opaque = SecretPayload::decode(&json!({"a": "Yg=="}), &labels).unwrap();
        assert_eq!(opaque.type_.as_deref(), Some("Opaque"));
        let unmanaged = SecretPayload::decode(&json!({"a": "Yg=="}), &BTreeMap::new()).unwrap();
        assert_eq!((unmanaged.immutable, unmanaged.type_), (None, None));
    }

    #[test]
    fn payload_decode_tells_a_legacy_key_named_data_from_the_new_layout() {
        let legacy = json!({"data": "eA==", "other": "eQ=="});
        let payload = SecretPayload::decode(&legacy, &BTreeMap::new()).unwrap();
        assert_eq!(payload.data.len(), 2);
        assert_eq!(
            SecretPayload::decode(&json!({"data": null}), &BTreeMap::new()),
            None
        );
        assert_eq!(SecretPayload::decode(&json!("x"), &BTreeMap::new()), None);
    }

    #[test]
    fn legacy_entry_equal_to_the_secret_is_current() {
        let labels = BTreeMap::from([
            ("managed-by".to_owned(), "secrets-manager".to_owned()),
            ("persist".to_owned(), "true".to_owned()),
        ]);
        let existing = GardenerResourceData {
            name: "ca".into(),
            type_: "secret".into(),
            data: json!({"ca.crt": "eA=="}),
            labels: labels.clone(),
        };
        let desired = GardenerResourceData {
            data: json!({"data": {"ca.crt": "eA=="}, "immutable": true, "type": "Opaque"}),
            ..existing.clone()
        };
        assert!(gardener_entry_current(&existing, &desired));
        let changed = GardenerResourceData {
            data: json!({"data": {"ca.crt": "eQ=="}, "immutable": true, "type": "Opaque"}),
            ..existing.clone()
        };
        assert!(!gardener_entry_current(&existing, &changed));
    }

    #[test]
    fn resource_data_drops_system_metadata_but_keeps_namespace_and_labels() {
        let copy = resource_data(
            "v1",
            "ConfigMap",
            "tf",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": "tf", "namespace": "shoot--dev--foo", "uid": "u", "resourceVersion": "7",
                "managedFields": [], "labels": {"a": "b"}, "creationTimestamp": "2024-01-01T00:00:00Z"
            }, "data": {"k": "v"}}),
        );
        assert_eq!(
            copy.data["metadata"],
            json!({"name": "tf", "namespace": "shoot--dev--foo", "labels": {"a": "b"}})
        );
        assert_eq!(copy.data["data"], json!({"k": "v"}));
    }

    fn upsert(kind: &str, name: &str, state: Value, refs: &[&str]) -> Change {
        Change::UpsertExtension {
            entry: ExtensionResourceState {
                kind: kind.into(),
                name: Some(name.into()),
                purpose: None,
                state: Some(state),
                resources: refs.iter().map(|r| reference(r)).collect(),
            },
            resources: refs
                .iter()
                .map(|r| resource_data("v1", "ConfigMap", r, json!({"data": {"n": r}})))
                .collect(),
        }
    }

    #[test]
    fn apply_changes_upserts_removes_and_drops_unreferenced_resources() {
        let mut spec = ShootStateSpec::default();
        assert!(apply_changes(
            &mut spec,
            vec![upsert("Infrastructure", "foo", json!(1), &["tf"])],
            false
        ));
        assert_eq!(spec.resources.len(), 1);
        assert!(!apply_changes(
            &mut spec,
            vec![upsert("Infrastructure", "foo", json!(1), &["tf"])],
            false
        ));
        assert!(apply_changes(
            &mut spec,
            vec![upsert("Infrastructure", "foo", json!(2), &[])],
            false
        ));
        assert!(spec.resources.is_empty());
        let removal = Change::RemoveExtension {
            kind: "Infrastructure".into(),
            name: "foo".into(),
        };
        assert!(!apply_changes(&mut spec, vec![removal.clone()], true));
        assert_eq!(spec.extensions.len(), 1);
        assert!(apply_changes(&mut spec, vec![removal], false));
        assert!(spec.extensions.is_empty());
    }

    #[test]
    fn apply_changes_keeps_machine_state_when_removing_a_secret_of_that_name() {
        let mut spec = ShootStateSpec::default();
        spec.upsert_gardener(GardenerResourceData {
            name: "machine-state".into(),
            type_: "machine-state".into(),
            data: json!({"state": "x"}),
            labels: BTreeMap::new(),
        });
        assert!(!apply_changes(
            &mut spec,
            vec![Change::RemoveSecret("machine-state".into())],
            false
        ));
        assert_eq!(spec.gardener.len(), 1);
    }

    #[test]
    fn snapshot_spec_orders_extensions_by_kind_and_keeps_machine_state() {
        let mut previous = ShootStateSpec::default();
        previous.upsert_gardener(GardenerResourceData {
            name: "machine-state".into(),
            type_: "machine-state".into(),
            data: json!({"state": "x"}),
            labels: BTreeMap::new(),
        });
        previous.upsert_gardener(GardenerResourceData {
            name: "secret-old".into(),
            type_: "secret".into(),
            data: json!({"data": {}}),
            labels: BTreeMap::new(),
        });
        let entry = |kind: &str| ExtensionResourceState {
            kind: kind.into(),
            name: Some("x".into()),
            state: Some(json!({})),
            ..Default::default()
        };
        let spec = snapshot_spec(
            Some(&previous),
            Vec::new(),
            vec![
                (entry("Worker"), Vec::new()),
                (entry("BackupEntry"), Vec::new()),
            ],
        );
        let kinds: Vec<_> = spec.extensions.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["BackupEntry", "Worker"]);
        let names: Vec<_> = spec.gardener.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["machine-state"]);
    }

    #[test]
    fn spec_patch_nulls_empty_lists_and_carries_the_resource_version() {
        let patch = spec_patch(&ShootStateSpec::default(), Some("42"), &BTreeMap::new());
        assert_eq!(
            patch,
            json!({"metadata": {"resourceVersion": "42"}, "spec": {"gardener": null, "extensions": null, "resources": null}})
        );
    }
}
