//! The restore phase of the reconcile flow on the destination seed (spec §6.4, §3.2 `Restore`,
//! `cluster-shootstate-managedresource.md` §3.4): the ShootState is read from the garden once
//! per run (a missing one fails the run), its persisted Secrets are created in the
//! control-plane namespace (existing ones win), and every extension object is deployed with
//! `gardener.cloud/operation=wait-for-state`, given its `status.state` and `status.resources`
//! from the ShootState entry of the same kind, name and purpose (unless it already has state,
//! as on a retry), its referenced objects are re-created from `spec.resources`, and only then
//! is it annotated `restore` with a fresh timestamp.
//!
//! Not restored: the Worker's `machine-state` entry (seedlet runs no machine-controller-manager,
//! so nothing ever writes one; a ShootState from gardenlet keeps it for a later gardenlet).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{ExtensionResourceState, ResourceData, ShootState, ShootStateSpec};
use seedlet_api::extensions::ExtensionObject;
use seedlet_api::names::annotations;
use serde_json::{Value, json};

use super::tasks::{FlowCtx, TaskError};
use crate::extension_sync::{object, operation};
use crate::shoot_state::entries::SecretPayload;

/// The ShootState of a restoring run, read on first use.
pub type RestoreState = Arc<tokio::sync::OnceCell<Arc<ShootStateSpec>>>;

fn api_error(step: &str, kind: &str, key: &str) -> impl FnOnce(kube::Error) -> TaskError {
    let text = format!("{step} {kind} {key}");
    move |error| TaskError::plain(format!("{text}: {}", seedlet_runtime::error_chain(&error)))
}

/// Reads the shoot's ShootState (once per run) and creates its persisted Secrets.
///
/// # Errors
/// The ShootState is missing or unreadable, or a Secret cannot be created.
pub async fn state(ctx: &FlowCtx, cell: &RestoreState) -> Result<Arc<ShootStateSpec>, TaskError> {
    cell.get_or_try_init(|| async {
        let namespace = ctx.shoot.namespace().unwrap_or_default();
        let name = ctx.shoot.name_any();
        let key = format!("{namespace}/{name}");
        let api: Api<ShootState> = Api::namespaced(ctx.garden.clone(), &namespace);
        let found = api
            .get_opt(&name)
            .await
            .map_err(api_error("reading", "ShootState", &key))?
            .ok_or_else(|| TaskError::plain(format!("ShootState {key} not found")))?;
        restore_secrets(ctx, &found.spec).await?;
        Ok(Arc::new(found.spec))
    })
    .await
    .cloned()
}

/// The Secrets of the ShootState's `gardener[]` entries of type `secret` (AlreadyExists is
/// ignored: a Secret already in the seed wins).
async fn restore_secrets(ctx: &FlowCtx, spec: &ShootStateSpec) -> Result<(), TaskError> {
    let secrets: Api<Secret> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    for entry in spec.gardener.iter().filter(|e| e.type_ == "secret") {
        let Some(secret) = secret_of(&entry.name, &entry.labels, &entry.data, &ctx.namespace)
        else {
            return Err(TaskError::plain(format!(
                "ShootState entry {} holds no readable Secret",
                entry.name
            )));
        };
        match secrets.create(&PostParams::default(), &secret).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_already_exists() => {}
            Err(error) => {
                return Err(api_error("creating", "Secret", &entry.name)(error));
            }
        }
    }
    Ok(())
}

/// The Secret a ShootState `secret` entry describes (`Opaque` unless it says otherwise).
pub fn secret_of(
    name: &str,
    labels: &BTreeMap<String, String>,
    data: &Value,
    namespace: &str,
) -> Option<Secret> {
    use base64::Engine as _;
    let payload = SecretPayload::decode(data, labels)?;
    let decoded = payload
        .data
        .iter()
        .map(|(key, value)| {
            base64::engine::general_purpose::STANDARD
                .decode(value)
                .ok()
                .map(|bytes| (key.clone(), ByteString(bytes)))
        })
        .collect::<Option<BTreeMap<_, _>>>()?;
    let mut secret = Secret {
        data: Some(decoded),
        immutable: payload.immutable,
        type_: Some(payload.type_.unwrap_or_else(|| "Opaque".to_owned())),
        ..Secret::default()
    };
    secret.metadata.name = Some(name.to_owned());
    secret.metadata.namespace = Some(namespace.to_owned());
    secret.metadata.labels = Some(labels.clone()).filter(|l| !l.is_empty());
    Some(secret)
}

/// The ShootState entry of an object: same kind, name and purpose.
pub fn entry_for<'a>(
    spec: &'a ShootStateSpec,
    kind: &str,
    name: &str,
    purpose: Option<&str>,
) -> Option<&'a ExtensionResourceState> {
    spec.extensions.iter().find(|entry| {
        entry.kind == kind
            && entry.name.as_deref() == Some(name)
            && entry.purpose.as_deref() == purpose
    })
}

/// Deploys extension object `name` in restore mode (see the module docs).
///
/// # Errors
/// The ShootState is unavailable, or an API read or write fails.
pub async fn deploy<K>(
    ctx: &FlowCtx,
    cell: &RestoreState,
    name: &str,
    spec: &Value,
    labels: &BTreeMap<String, String>,
) -> Result<(), TaskError>
where
    K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    let state = state(ctx, cell).await?;
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    let kind = K::kind(&()).into_owned();
    let key = format!("{}/{name}", ctx.namespace);
    let existing = api
        .get_opt(name)
        .await
        .map_err(api_error("reading", &kind, &key))?;
    let stamp = operation::timestamp(ctx.clock.now());
    let waiting = object::deploy_annotations(annotations::OPERATION_WAIT_FOR_STATE, &stamp, &[]);
    super::tasks::write_object(ctx, &api, existing.as_ref(), name, spec, &waiting, labels).await?;
    let current = api
        .get(name)
        .await
        .map_err(api_error("reading", &kind, &key))?;
    let has_state = current
        .extension_status()
        .is_some_and(|status| status.state.is_some());
    if !has_state && let Some(entry) = entry_for(&state, &kind, name, current.purpose()) {
        for reference in &entry.resources {
            restore_resource(ctx, &state, &reference.resource_ref).await?;
        }
        let patch = json!({"status": {"state": entry.state, "resources": entry.resources}});
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(api_error("restoring the state of", &kind, &key))?;
    }
    let stamp = operation::timestamp(ctx.clock.now());
    let restore = object::deploy_annotations(annotations::OPERATION_RESTORE, &stamp, &[]);
    object::annotate(&api, name, &restore)
        .await
        .map_err(api_error("annotating", &kind, &key))
}

/// Creates or merge-patches the object a state entry references from its copy in
/// `spec.resources` (a reference without a copy is an error).
async fn restore_resource(
    ctx: &FlowCtx,
    spec: &ShootStateSpec,
    target: &seedlet_api::common::CrossVersionObjectReference,
) -> Result<(), TaskError> {
    let api_version = target
        .api_version
        .clone()
        .unwrap_or_else(|| "v1".to_owned());
    let key = format!("{}/{}", ctx.namespace, target.name);
    let copy = spec
        .resources
        .iter()
        .find(|r| {
            r.api_version.as_deref().unwrap_or("v1") == api_version
                && r.kind == target.kind
                && r.name == target.name
        })
        .ok_or_else(|| {
            TaskError::plain(format!("ShootState holds no copy of {} {key}", target.kind))
        })?;
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let gvk = GroupVersionKind::gvk(group, version, &target.kind);
    let resource: ApiResource = kube::discovery::pinned_kind(&ctx.seed, &gvk)
        .await
        .map(|(resource, _)| resource)
        .map_err(api_error("discovering", &target.kind, &key))?;
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.seed.clone(), &ctx.namespace, &resource);
    let existing =
        api.get_opt(&target.name)
            .await
            .map_err(api_error("reading", &target.kind, &key))?;
    let desired = restored_object(copy, &api_version, &ctx.namespace);
    match existing {
        None => {
            let object: DynamicObject = serde_json::from_value(desired).map_err(|error| {
                TaskError::plain(format!(
                    "decoding the copy of {} {key}: {error}",
                    target.kind
                ))
            })?;
            api.create(&PostParams::default(), &object)
                .await
                .map(|_| ())
                .map_err(api_error("creating", &target.kind, &key))
        }
        Some(current) => {
            let current = serde_json::to_value(&current).unwrap_or_default();
            let patch = replacing_patch(&current, desired);
            api.patch(&target.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map(|_| ())
                .map_err(api_error("patching", &target.kind, &key))
        }
    }
}

/// The object of a `spec.resources` copy, placed in `namespace`.
pub fn restored_object(copy: &ResourceData, api_version: &str, namespace: &str) -> Value {
    let mut object = copy.data.clone();
    if !object.is_object() {
        object = json!({});
    }
    object["apiVersion"] = json!(api_version);
    object["kind"] = json!(copy.kind);
    if !object.get("metadata").is_some_and(Value::is_object) {
        object["metadata"] = json!({});
    }
    object["metadata"]["name"] = json!(copy.name);
    object["metadata"]["namespace"] = json!(namespace);
    object
}

/// A merge patch that merges metadata but replaces `spec`, `data` and `stringData` (keys the
/// copy lacks are removed).
pub fn replacing_patch(current: &Value, desired: Value) -> Value {
    let mut patch = desired;
    for field in ["spec", "data", "stringData"] {
        let wanted = patch.get(field).cloned();
        match (current.get(field), wanted) {
            (Some(Value::Object(_)), Some(wanted)) => {
                patch[field] = object::spec_patch(current.get(field), &wanted);
            }
            (Some(_), None) => patch[field] = Value::Null,
            _ => {}
        }
    }
    patch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_of_an_object_matches_kind_name_and_purpose() {
        let entry = |kind: &str, name: &str, purpose: Option<&str>| ExtensionResourceState {
            kind: kind.into(),
            name: Some(name.into()),
            purpose: purpose.map(str::to_owned),
            state: Some(json!({"of": format!("{kind}/{name}/{purpose:?}")})),
            resources: Vec::new(),
        };
        let spec = ShootStateSpec {
            extensions: vec![
                entry("Worker", "s", None),
                entry("OperatingSystemConfig", "o", Some("provision")),
                entry("OperatingSystemConfig", "o", Some("reconcile")),
            ],
            ..ShootStateSpec::default()
        };
        let cases = [
            ("Worker", "s", None, Some("Worker/s/None")),
            ("Worker", "t", None, None),
            ("Network", "s", None, None),
            (
                "OperatingSystemConfig",
                "o",
                Some("reconcile"),
                Some("OperatingSystemConfig/o/Some(\"reconcile\")"),
            ),
            ("OperatingSystemConfig", "o", None, None),
        ];
        for (kind, name, purpose, want) in cases {
            let got = entry_for(&spec, kind, name, purpose)
                .and_then(|e| e.state.as_ref())
                .and_then(|s| s["of"].as_str().map(str::to_owned));
            assert_eq!(got.as_deref(), want, "{kind} {name} {purpose:?}");
        }
    }

    #[test]
    fn secrets_are_rebuilt_from_either_payload_layout() {
        let labels = BTreeMap::from([("persist".to_owned(), "true".to_owned())]);
        let new = secret_of(
            "ca",
            &labels,
            &json!({"data": {"k": "dmFsdWU="}, "type": "kubernetes.io/tls", "immutable": true}),
            "shoot--p--s",
        )
        .expect("secret");
        assert_eq!(new.type_.as_deref(), Some("kubernetes.io/tls"));
        assert_eq!(new.immutable, Some(true));
        assert_eq!(new.data.unwrap()["k"].0, b"value");
        assert_eq!(new.metadata.namespace.as_deref(), Some("shoot--p--s"));
        let legacy = secret_of("x", &labels, &json!({"k": "dmFsdWU="}), "ns").expect("legacy");
        assert_eq!(legacy.type_.as_deref(), Some("Opaque"));
        assert!(secret_of("bad", &labels, &json!({"k": "%%%"}), "ns").is_none());
        assert!(secret_of("null", &labels, &Value::Null, "ns").is_none());
    }

    #[test]
    fn restored_objects_replace_data_but_merge_metadata() {
        let copy = ResourceData {
            api_version: Some("v1".into()),
            kind: "ConfigMap".into(),
            name: "state".into(),
            data: json!({"metadata": {"labels": {"a": "1"}}, "data": {"x": "1"}}),
        };
        let object = restored_object(&copy, "v1", "shoot--p--s");
        assert_eq!(object["metadata"]["namespace"], "shoot--p--s");
        assert_eq!(object["kind"], "ConfigMap");
        let current = json!({"metadata": {"labels": {"b": "2"}}, "data": {"x": "0", "y": "2"}});
        let patch = replacing_patch(&current, object);
        assert_eq!(patch["data"], json!({"x": "1", "y": null}));
        assert_eq!(patch["metadata"]["labels"], json!({"a": "1"}));
    }
}
