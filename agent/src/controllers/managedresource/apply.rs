//! Applying decoded objects: kind resolution through discovery (cached), scoping and metadata
//! preparation (pure), install ordering, and the server-side apply itself. Requests here are
//! idempotent and retried in place on transient server errors ([`seedlet_runtime::retry`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use kube::api::{DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::discovery::Scope;
use kube::{Api, Client};
use serde_json::{Map, Value, json};

use seedlet_api::names::managed_resources;
use seedlet_api::resources::ObjectReference;

use seedlet_runtime::retry::{self, RetryPolicy};

/// A resolved kind: how to reach it and whether it is namespaced.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The API resource (group, version, plural).
    pub resource: ApiResource,
    /// Whether objects of the kind live in namespaces.
    pub namespaced: bool,
}

/// Discovery results by `apiVersion` and kind, kept for the lifetime of the applier. A kind that
/// is not served (yet) is not cached, so a CRD installed later is found on the next reconcile.
#[derive(Debug, Default)]
pub struct KindCache {
    kinds: Mutex<HashMap<(String, String), Resolved>>,
}

impl KindCache {
    /// Resolves `api_version`/`kind`; `Ok(None)` when the API server does not serve it.
    ///
    /// # Errors
    /// Discovery requests that fail for other reasons than an unknown group or kind (after
    /// retrying transient errors).
    pub async fn resolve(
        &self,
        client: &Client,
        api_version: &str,
        kind: &str,
    ) -> Result<Option<Resolved>, kube::Error> {
        let key = (api_version.to_owned(), kind.to_owned());
        if let Some(found) = self.lock().get(&key) {
            return Ok(Some(found.clone()));
        }
        let (group, version) = split_api_version(api_version);
        let gvk = GroupVersionKind::gvk(group, version, kind);
        match retry::idempotent(&RetryPolicy::RECONCILE, || {
            kube::discovery::pinned_kind(client, &gvk)
        })
        .await
        {
            Ok((resource, capabilities)) => {
                let resolved = Resolved {
                    resource,
                    namespaced: capabilities.scope == Scope::Namespaced,
                };
                self.lock().insert(key, resolved.clone());
                Ok(Some(resolved))
            }
            Err(kube::Error::Discovery(_)) => Ok(None),
            // An unknown group answers 404 without a Status body (no reason `NotFound`).
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Resolved>> {
        self.kinds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `(group, version)` of an `apiVersion` (`v1` → `("", "v1")`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// The origin annotation value of objects applied for the MR `namespace/name`.
pub fn origin(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// The MR `(namespace, name)` named by an origin annotation (`<ns>/<name>` or
/// `<clusterID>:<ns>/<name>`).
pub fn parse_origin(value: &str) -> Option<(&str, &str)> {
    let local = value.rsplit_once(':').map_or(value, |(_, rest)| rest);
    let (namespace, name) = local.split_once('/')?;
    (!namespace.is_empty() && !name.is_empty() && !name.contains('/')).then_some((namespace, name))
}

/// The namespace an object ends up in (spec §5.4 step 5.1): namespaced and empty → `default`;
/// cluster-scoped → none; unknown kind (`namespaced == None`) → `default` unless a Namespace.
pub fn effective_namespace(object: &Value, namespaced: Option<bool>) -> Option<String> {
    let given = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty());
    match namespaced {
        Some(false) => None,
        None if object.get("kind").and_then(Value::as_str) == Some("Namespace") => None,
        _ => Some(given.unwrap_or("default").to_owned()),
    }
}

/// The desired object as applied: scoped, with `injectLabels` and the managed-by label, the
/// origin and description annotations; server-populated fields and `status` removed.
pub fn prepare(
    object: &Value,
    namespace: Option<&str>,
    origin: &str,
    inject_labels: &BTreeMap<String, String>,
) -> Value {
    let mut metadata = object
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for key in [
        "resourceVersion",
        "uid",
        "creationTimestamp",
        "managedFields",
        "generation",
        "selfLink",
        "deletionTimestamp",
    ] {
        metadata.remove(key);
    }
    match namespace {
        Some(namespace) => {
            metadata.insert("namespace".into(), json!(namespace));
        }
        None => {
            metadata.remove("namespace");
        }
    }
    let mut labels = object_field(&metadata, "labels");
    for (key, value) in inject_labels {
        labels.insert(key.clone(), json!(value));
    }
    labels.insert(
        managed_resources::MANAGED_BY.into(),
        json!(managed_resources::MANAGED_BY_GARDENER),
    );
    metadata.insert("labels".into(), Value::Object(labels));
    let mut annotations = object_field(&metadata, "annotations");
    annotations.insert(managed_resources::ORIGIN.into(), json!(origin));
    annotations.insert(
        managed_resources::DESCRIPTION.into(),
        json!(managed_resources::DESCRIPTION_TEXT),
    );
    metadata.insert("annotations".into(), Value::Object(annotations));

    let mut out = object.as_object().cloned().unwrap_or_default();
    out.remove("status");
    out.insert("metadata".into(), Value::Object(metadata));
    Value::Object(out)
}

/// The `status.resources` entry of a prepared object.
pub fn reference(prepared: &Value) -> ObjectReference {
    let text = |pointer: &str| {
        prepared
            .pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let map = |pointer: &str| -> BTreeMap<String, String> {
        prepared
            .pointer(pointer)
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    };
    ObjectReference {
        api_version: text("/apiVersion"),
        kind: text("/kind"),
        name: text("/metadata/name"),
        namespace: text("/metadata/namespace").filter(|ns| !ns.is_empty()),
        labels: map("/metadata/labels"),
        annotations: map("/metadata/annotations"),
        ..ObjectReference::default()
    }
}

/// Identity of a reference for set comparisons: group (version-independent), kind, namespace, name.
pub fn identity(reference: &ObjectReference) -> (String, String, String, String) {
    let group = split_api_version(reference.api_version.as_deref().unwrap_or_default()).0;
    (
        group.to_owned(),
        reference.kind.clone().unwrap_or_default(),
        reference.namespace.clone().unwrap_or_default(),
        reference.name.clone().unwrap_or_default(),
    )
}

/// Sort key in Helm's install order (shared with the chart renderer); unknown kinds last by kind,
/// then name.
pub fn install_order(object: &Value) -> (usize, String, String) {
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let (rank, unknown_kind) = seedlet_chartrender::install_rank(kind);
    (rank, unknown_kind, name)
}

/// The dynamic API for an object of `resolved` kind in `namespace`.
pub fn dynamic_api(
    client: &Client,
    resolved: &Resolved,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    match namespace {
        Some(namespace) if resolved.namespaced => {
            Api::namespaced_with(client.clone(), namespace, &resolved.resource)
        }
        _ => Api::all_with(client.clone(), &resolved.resource),
    }
}

/// Server-side applies `prepared` with `field_manager`, forcing conflicts: the applier owns
/// these objects and restores fields changed by hand, like gardener-resource-manager's update.
/// Returns the live object. Idempotent; transient errors are retried in place.
///
/// # Errors
/// The API error of the apply.
pub async fn server_side_apply(
    api: &Api<DynamicObject>,
    name: &str,
    prepared: &Value,
    field_manager: &str,
) -> Result<Value, kube::Error> {
    let params = PatchParams::apply(field_manager).force();
    let patch = Patch::Apply(prepared);
    let live =
        retry::idempotent(&RetryPolicy::RECONCILE, || api.patch(name, &params, &patch)).await?;
    serde_json::to_value(live).map_err(kube::Error::SerdeError)
}

/// Creates `object` verbatim if absent (desired objects annotated `resources.gardener.cloud/ignore`);
/// an existing object is left alone apart from dropping the description annotation. Returns the
/// live object. The create is not idempotent on its own, so a transient error anywhere retries
/// the whole read-then-write (which finds an object created by a failed-looking attempt).
///
/// # Errors
/// API errors of the read, create or patch.
pub async fn create_if_absent(
    api: &Api<DynamicObject>,
    name: &str,
    object: &Value,
) -> Result<Value, kube::Error> {
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        create_if_absent_once(api, name, object)
    })
    .await
}

async fn create_if_absent_once(
    api: &Api<DynamicObject>,
    name: &str,
    object: &Value,
) -> Result<Value, kube::Error> {
    if let Some(live) = api.get_opt(name).await? {
        let live = serde_json::to_value(live).map_err(kube::Error::SerdeError)?;
        if crate::controllers::managedresource::manifests::annotation(
            &live,
            managed_resources::DESCRIPTION,
        )
        .is_some()
        {
            let patch =
                json!({"metadata": {"annotations": {managed_resources::DESCRIPTION: null}}});
            let patched = api
                .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            return serde_json::to_value(patched).map_err(kube::Error::SerdeError);
        }
        return Ok(live);
    }
    let typed: DynamicObject =
        serde_json::from_value(object.clone()).map_err(kube::Error::SerdeError)?;
    let created = api.create(&PostParams::default(), &typed).await?;
    serde_json::to_value(created).map_err(kube::Error::SerdeError)
}

/// Deletes an object, Foreground for the groups `apps`, `extensions` and `batch` (spec §5.4 step 7.4).
/// NotFound counts as done, so the request is idempotent; transient errors are retried in place.
///
/// # Errors
/// API errors other than NotFound.
pub async fn delete(
    api: &Api<DynamicObject>,
    group: &str,
    name: &str,
    propagation: Option<PropagationPolicy>,
) -> Result<(), kube::Error> {
    let propagation = propagation.or_else(|| {
        matches!(group, "apps" | "extensions" | "batch").then_some(PropagationPolicy::Foreground)
    });
    let params = DeleteParams {
        propagation_policy: propagation,
        ..DeleteParams::default()
    };
    retry::idempotent(&RetryPolicy::RECONCILE, || async {
        match api.delete(name, &params).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
            Err(error) => Err(error),
        }
    })
    .await
}

/// A copy of the object-valued field `key` (empty when absent or not an object).
fn object_field(map: &Map<String, Value>, key: &str) -> Map<String, Value> {
    map.get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_namespace_follows_scope() {
        let cm = json!({"kind": "ConfigMap", "metadata": {"name": "a"}});
        let cm_ns = json!({"kind": "ConfigMap", "metadata": {"name": "a", "namespace": "x"}});
        let ns = json!({"kind": "Namespace", "metadata": {"name": "a", "namespace": "x"}});
        assert_eq!(
            effective_namespace(&cm, Some(true)).as_deref(),
            Some("default")
        );
        assert_eq!(
            effective_namespace(&cm_ns, Some(true)).as_deref(),
            Some("x")
        );
        assert_eq!(effective_namespace(&cm_ns, Some(false)), None);
        assert_eq!(effective_namespace(&cm, None).as_deref(), Some("default"));
        assert_eq!(effective_namespace(&ns, None), None);
    }

    #[test]
    fn prepare_sets_origin_labels_and_scope() {
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "5", "labels": {"x": "1"}}, "data": {"k": "v"}, "status": {}});
        let inject = BTreeMap::from([("i".to_owned(), "2".to_owned())]);
        let prepared = prepare(&object, Some("n"), "garden/mr", &inject);
        assert_eq!(prepared["metadata"]["namespace"], "n");
        assert_eq!(
            prepared["metadata"]["labels"],
            json!({"x": "1", "i": "2", "resources.gardener.cloud/managed-by": "gardener"})
        );
        assert_eq!(
            prepared["metadata"]["annotations"]["resources.gardener.cloud/origin"],
            "garden/mr"
        );
        assert!(prepared["metadata"].get("resourceVersion").is_none());
        assert!(prepared.get("status").is_none());
        let reference = reference(&prepared);
        assert_eq!(
            identity(&reference),
            ("".into(), "ConfigMap".into(), "n".into(), "a".into())
        );
        assert_eq!(reference.labels.get("x").map(String::as_str), Some("1"));
    }

    #[test]
    fn origin_parses_with_and_without_cluster_id() {
        assert_eq!(parse_origin("garden/ci-1"), Some(("garden", "ci-1")));
        assert_eq!(
            parse_origin("abc-123:garden/ci-1"),
            Some(("garden", "ci-1"))
        );
        assert_eq!(parse_origin("nonsense"), None);
        assert_eq!(parse_origin("/x"), None);
    }

    #[test]
    fn identity_ignores_version() {
        let a = ObjectReference {
            api_version: Some("apps/v1".into()),
            kind: Some("Deployment".into()),
            name: Some("d".into()),
            namespace: Some("n".into()),
            ..Default::default()
        };
        let b = ObjectReference {
            api_version: Some("apps/v1beta2".into()),
            ..a.clone()
        };
        assert_eq!(identity(&a), identity(&b));
    }

    #[test]
    fn install_order_puts_crds_before_workloads_and_unknown_kinds_last() {
        let obj = |kind: &str, name: &str| json!({"kind": kind, "metadata": {"name": name}});
        let mut objects = [
            obj("Foo", "a"),
            obj("Deployment", "b"),
            obj("CustomResourceDefinition", "c"),
            obj("Namespace", "d"),
        ];
        objects.sort_by_key(install_order);
        let kinds: Vec<_> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            kinds,
            ["Namespace", "CustomResourceDefinition", "Deployment", "Foo"]
        );
    }
}
