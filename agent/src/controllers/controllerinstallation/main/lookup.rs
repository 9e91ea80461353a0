//! `lookup` against the seed when the agent renders a chart: the chart's `lookup "v1" "ConfigMap" "ns"
//! "name"` reads the object (or lists them when the name is empty, across namespaces when the namespace is
//! empty) with the agent's own seed credential, so the agent's RBAC in the seed bounds what a chart reads.
//! A missing object (or an empty list's 404) gives an empty map, as Helm's lookup does.
//!
//! The renderer is synchronous: renders run on a blocking thread ([`tokio::task::spawn_blocking`]) and each
//! lookup blocks that thread on the async read with the runtime [`Handle`]; no async worker is blocked.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kube::api::{GetParams, ListParams};
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::time::Instant;

use super::capabilities::{SeedDiscovery, ServedResource, Snapshot};

/// Reads seed objects for `lookup` during one render.
pub struct SeedLookup {
    client: kube::Client,
    discovery: Arc<SeedDiscovery>,
    snapshot: Arc<Snapshot>,
    /// When the reconcile began: an unknown kind re-reads discovery taken before it.
    started: Instant,
    handle: Handle,
    /// A read failed (the render error is then worth retrying, unlike a broken chart).
    failed: AtomicBool,
}

impl SeedLookup {
    /// A lookup resolving kinds with `snapshot` (and a discovery re-read for kinds it lacks) and reading
    /// with `client` on `handle`'s runtime.
    pub fn new(
        client: kube::Client,
        discovery: Arc<SeedDiscovery>,
        snapshot: Arc<Snapshot>,
        started: Instant,
        handle: Handle,
    ) -> Self {
        Self {
            client,
            discovery,
            snapshot,
            started,
            handle,
            failed: AtomicBool::new(false),
        }
    }

    /// Whether a read of this render failed.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    async fn resolve(&self, api_version: &str, kind: &str) -> Result<ServedResource, String> {
        if let Some(resource) = self.snapshot.resource(api_version, kind) {
            return Ok(resource.clone());
        }
        let fresh = self
            .discovery
            .fresh_since(self.started)
            .await
            .map_err(|error| seedlet_runtime::error_chain(&error))?;
        fresh.resource(api_version, kind).cloned().ok_or_else(|| {
            format!("the seed serves no kind {kind:?} at apiVersion {api_version:?}")
        })
    }

    async fn read(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, String> {
        for (field, value) in [("namespace", namespace), ("name", name)] {
            if value.contains(['/', '?', '#', '%']) || value == "." || value == ".." {
                return Err(format!("invalid {field} {value:?}"));
            }
        }
        let resource = self.resolve(api_version, kind).await?;
        let path = collection_path(api_version, &resource, namespace);
        let request = if name.is_empty() {
            kube::core::Request::new(path).list(&ListParams::default())
        } else {
            kube::core::Request::new(path).get(name, &GetParams::default())
        }
        .map_err(|error| error.to_string())?;
        match self.client.request::<Value>(request).await {
            Ok(mut object) => {
                if name.is_empty() {
                    typed_items(&mut object, api_version, kind);
                }
                Ok(Some(object))
            }
            Err(kube::Error::Api(status)) if status.is_not_found() => Ok(None),
            Err(error) => Err(seedlet_runtime::error_chain(&error)),
        }
    }
}

impl std::fmt::Debug for SeedLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedLookup")
            .field("kube_version", &self.snapshot.kube_version)
            .finish_non_exhaustive()
    }
}

impl seedlet_chartrender::Lookup for SeedLookup {
    fn lookup(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, String> {
        // Called on the render's blocking thread, never on an async worker.
        let result = self
            .handle
            .block_on(self.read(api_version, kind, namespace, name));
        if result.is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
        result
    }
}

/// The URL path of a resource's collection: namespaced resources in `namespace` (all namespaces when
/// empty), cluster-scoped ones ignoring it, as Helm's lookup does.
pub fn collection_path(api_version: &str, resource: &ServedResource, namespace: &str) -> String {
    let root = if api_version.contains('/') {
        format!("/apis/{api_version}")
    } else {
        format!("/api/{api_version}")
    };
    if resource.namespaced && !namespace.is_empty() {
        format!("{root}/namespaces/{namespace}/{}", resource.plural)
    } else {
        format!("{root}/{}", resource.plural)
    }
}

/// Sets `apiVersion` and `kind` on list items that lack them (servers omit them; Helm's unstructured
/// lists carry them).
fn typed_items(list: &mut Value, api_version: &str, kind: &str) {
    let Some(items) = list.get_mut("items").and_then(Value::as_array_mut) else {
        return;
    };
    for item in items.iter_mut().filter_map(Value::as_object_mut) {
        item.entry("apiVersion")
            .or_insert_with(|| Value::from(api_version));
        item.entry("kind").or_insert_with(|| Value::from(kind));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_paths_follow_group_and_scope() {
        let resource = |plural: &str, namespaced: bool| ServedResource {
            plural: plural.into(),
            namespaced,
        };
        let cases = [
            (
                "v1",
                resource("configmaps", true),
                "garden",
                "/api/v1/namespaces/garden/configmaps",
            ),
            ("v1", resource("configmaps", true), "", "/api/v1/configmaps"),
            (
                "v1",
                resource("namespaces", false),
                "garden",
                "/api/v1/namespaces",
            ),
            (
                "apps/v1",
                resource("deployments", true),
                "x",
                "/apis/apps/v1/namespaces/x/deployments",
            ),
            (
                "resources.gardener.cloud/v1alpha1",
                resource("managedresources", true),
                "",
                "/apis/resources.gardener.cloud/v1alpha1/managedresources",
            ),
        ];
        for (api_version, resource, namespace, want) in cases {
            assert_eq!(
                collection_path(api_version, &resource, namespace),
                want,
                "{api_version} {namespace}"
            );
        }
    }

    #[test]
    fn list_items_get_their_type() {
        let mut list = serde_json::json!({"kind": "ConfigMapList", "items": [{"metadata": {"name": "a"}}, {"kind": "ConfigMap", "apiVersion": "v1"}]});
        typed_items(&mut list, "v1", "ConfigMap");
        assert_eq!(list["items"][0]["kind"], "ConfigMap");
        assert_eq!(list["items"][0]["apiVersion"], "v1");
        assert_eq!(list["items"][1]["kind"], "ConfigMap");
    }
}
