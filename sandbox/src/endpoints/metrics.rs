//! `/metrics` in the Prometheus text format, with kube-apiserver v1.32's family and label names so
//! that queries written for a real control plane work against the sandbox:
//! `apiserver_request_total`, `apiserver_request_duration_seconds` (kube-apiserver's buckets),
//! `apiserver_longrunning_requests` (open watches), `apiserver_storage_objects{resource}` and
//! `apiserver_storage_size_bytes`.
//!
//! Requests are counted when their answer (or, for a watch, its first byte) is ready; requests
//! refused before authentication are counted too, as kube-apiserver does. The storage families are
//! read from the store at scrape time; the sandbox keeps objects in memory, so the size is that of
//! their JSON, not of a database file.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use http::Method;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::request::{self, RequestInfo, Target, Verb};
use crate::resources::Behaviour;
use crate::storage::State;

/// The content type kube-apiserver answers `/metrics` with.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// kube-apiserver's `apiserver_request_duration_seconds` buckets.
const DURATION_BUCKETS: [f64; 24] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 0.0,
];

/// Non-resource paths reported by name; others are `other`, so callers cannot grow the label set.
const NAMED_PATHS: &[&str] = &[
    "/",
    "/api",
    "/apis",
    "/healthz",
    "/livez",
    "/readyz",
    "/version",
    "/metrics",
    "/openapi/v2",
    "/openapi/v3",
];

/// What one request is labelled with (the labels of `apiserver_request_duration_seconds`).
#[derive(Clone, Debug, Default, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    verb: String,
    dry_run: String,
    group: String,
    version: String,
    resource: String,
    subresource: String,
    scope: String,
    component: String,
}

/// [`RequestLabels`] with the answer's code and the calling system component.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CountLabels {
    #[prometheus(flatten)]
    request: RequestLabels,
    code: String,
    system_client: String,
}

/// Labels of `apiserver_longrunning_requests`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LongRunningLabels {
    verb: String,
    group: String,
    version: String,
    resource: String,
    subresource: String,
    scope: String,
    component: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StorageLabels {
    resource: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StorageSizeLabels {
    storage_cluster_id: String,
}

/// The sandbox's metric families.
pub struct ApiMetrics {
    registry: Registry,
    requests: Family<CountLabels, Counter>,
    durations: Family<RequestLabels, Histogram>,
    long_running: Family<LongRunningLabels, Gauge>,
    storage_objects: Family<StorageLabels, Gauge>,
    storage_size: Family<StorageSizeLabels, Gauge>,
}

impl Default for ApiMetrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<CountLabels, Counter>::default();
        registry.register(
            "apiserver_request",
            "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            requests.clone(),
        );
        let durations = Family::<RequestLabels, Histogram>::new_with_constructor(
            duration_histogram as fn() -> _,
        );
        registry.register(
            "apiserver_request_duration_seconds",
            "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            durations.clone(),
        );
        let long_running = Family::<LongRunningLabels, Gauge>::default();
        registry.register(
            "apiserver_longrunning_requests",
            "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
            long_running.clone(),
        );
        let storage_objects = Family::<StorageLabels, Gauge>::default();
        registry.register(
            "apiserver_storage_objects",
            "[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
            storage_objects.clone(),
        );
        let storage_size = Family::<StorageSizeLabels, Gauge>::default();
        registry.register(
            "apiserver_storage_size_bytes",
            "[STABLE] Size of the storage database file physically allocated in bytes.",
            storage_size.clone(),
        );
        ApiMetrics {
            registry,
            requests,
            durations,
            long_running,
            storage_objects,
            storage_size,
        }
    }
}

fn duration_histogram() -> Histogram {
    // The last entry of the array is a placeholder; `+Inf` is always added.
    Histogram::new(
        DURATION_BUCKETS[..DURATION_BUCKETS.len() - 1]
            .iter()
            .copied(),
    )
}

impl RequestLabels {
    /// Whether this is a watch (a long-running request).
    pub fn is_watch(&self) -> bool {
        self.verb == "WATCH"
    }
}

impl ApiMetrics {
    /// Counts one answered request and its latency.
    pub fn observe(&self, labels: &RequestLabels, code: u16, user_agent: &str, elapsed: Duration) {
        self.requests
            .get_or_create(&CountLabels {
                request: labels.clone(),
                code: code.to_string(),
                system_client: system_client(user_agent).to_string(),
            })
            .inc();
        self.durations
            .get_or_create(labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Marks a long-running request (a watch) open until the returned guard is dropped.
    pub fn long_running(self: &Arc<Self>, labels: &RequestLabels) -> LongRunning {
        let labels = LongRunningLabels {
            verb: labels.verb.clone(),
            group: labels.group.clone(),
            version: labels.version.clone(),
            resource: labels.resource.clone(),
            subresource: labels.subresource.clone(),
            scope: labels.scope.clone(),
            component: labels.component.clone(),
        };
        self.long_running.get_or_create(&labels).inc();
        LongRunning {
            metrics: self.clone(),
            labels,
        }
    }

    /// The text exposition, with the storage families read from `state` now: every stored
    /// resource the server serves (0 when empty, as kube-apiserver reports them) or still holds.
    pub fn render(&self, state: &State) -> String {
        let mut keys: BTreeSet<String> = state
            .registry()
            .types()
            .filter(|rt| rt.behaviour != Behaviour::Review)
            .map(|rt| rt.storage_key())
            .collect();
        keys.extend(state.resource_keys());
        let mut size: i64 = 0;
        for key in keys {
            let objects = state.list(&key, None);
            size += objects
                .iter()
                .map(|o| serde_json::to_vec(&**o).map_or(0, |bytes| bytes.len() as i64))
                .sum::<i64>();
            self.storage_objects
                .get_or_create(&StorageLabels { resource: key })
                .set(objects.len() as i64);
        }
        self.storage_size
            .get_or_create(&StorageSizeLabels {
                storage_cluster_id: "sandbox-0".into(),
            })
            .set(size);
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// An open long-running request; dropping it closes it in `apiserver_longrunning_requests`.
pub struct LongRunning {
    metrics: Arc<ApiMetrics>,
    labels: LongRunningLabels,
}

impl Drop for LongRunning {
    fn drop(&mut self) {
        self.metrics.long_running.get_or_create(&self.labels).dec();
    }
}

/// The labels kube-apiserver gives a request, from its method, URL and content type (a
/// server-side apply patch is `APPLY`; a path the server does not route is a non-resource request
/// to `other`).
pub fn labels(method: &Method, uri: &http::Uri, content_type: &str) -> RequestLabels {
    let query = request::parse_query(uri.query());
    let dry_run = if query.get("dryRun").is_some_and(|v| v == "All") {
        "All"
    } else {
        ""
    };
    match request::parse(method, uri.path(), &query) {
        Ok(Target::Resource(info)) => {
            let apply = content_type.starts_with("application/apply-patch");
            resource_labels(&info, apply, dry_run)
        }
        Ok(Target::NonResource(path)) => non_resource_labels(method, &path),
        Err(_) => non_resource_labels(method, uri.path()),
    }
}

fn resource_labels(info: &RequestInfo, apply: bool, dry_run: &str) -> RequestLabels {
    let verb = match info.verb {
        Verb::Patch if apply => "APPLY",
        Verb::Get => "GET",
        Verb::List => "LIST",
        Verb::Watch => "WATCH",
        Verb::Create => "POST",
        Verb::Update => "PUT",
        Verb::Patch => "PATCH",
        Verb::Delete => "DELETE",
        Verb::DeleteCollection => "DELETECOLLECTION",
    };
    let scope = if !info.name.is_empty() {
        "resource"
    } else if !info.namespace.is_empty() {
        "namespace"
    } else {
        "cluster"
    };
    RequestLabels {
        verb: verb.into(),
        dry_run: dry_run.into(),
        group: info.group.clone(),
        version: info.version.clone(),
        resource: info.resource.clone(),
        subresource: info.subresource.as_str().to_string(),
        scope: scope.into(),
        component: "apiserver".into(),
    }
}

fn non_resource_labels(method: &Method, path: &str) -> RequestLabels {
    let trimmed = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    let subresource = if NAMED_PATHS.contains(&trimmed) {
        trimmed
    } else {
        "other"
    };
    RequestLabels {
        verb: method.as_str().to_string(),
        subresource: subresource.into(),
        ..RequestLabels::default()
    }
}

/// The `system_client` label: the program of a control-plane component's user agent, else empty.
fn system_client(user_agent: &str) -> &'static str {
    let program = user_agent.split('/').next().unwrap_or_default();
    [
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
    ]
    .into_iter()
    .find(|known| *known == program)
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(text: &str) -> http::Uri {
        text.parse().expect("uri")
    }

    #[test]
    fn requests_are_labelled_like_kube_apiserver() {
        for (method, path, verb, scope, resource, subresource) in [
            (
                Method::GET,
                "/api/v1/namespaces/a/pods/p",
                "GET",
                "resource",
                "pods",
                "",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/a/pods",
                "LIST",
                "namespace",
                "pods",
                "",
            ),
            (
                Method::GET,
                "/api/v1/pods?watch=true",
                "WATCH",
                "cluster",
                "pods",
                "",
            ),
            (
                Method::POST,
                "/apis/apps/v1/namespaces/a/deployments",
                "POST",
                "namespace",
                "deployments",
                "",
            ),
            (
                Method::PUT,
                "/api/v1/namespaces/a/pods/p/status",
                "PUT",
                "resource",
                "pods",
                "status",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/a/configmaps",
                "DELETECOLLECTION",
                "namespace",
                "configmaps",
                "",
            ),
            (Method::GET, "/healthz", "GET", "", "", "/healthz"),
            (Method::GET, "/no/such/path", "GET", "", "", "other"),
        ] {
            let labels = labels(&method, &uri(path), "");
            assert_eq!(labels.verb, verb, "{path}");
            assert_eq!(labels.scope, scope, "{path}");
            assert_eq!(labels.resource, resource, "{path}");
            assert_eq!(labels.subresource, subresource, "{path}");
        }
        let deployments = labels(
            &Method::POST,
            &uri("/apis/apps/v1/namespaces/a/deployments?dryRun=All"),
            "application/json",
        );
        assert_eq!(
            (
                deployments.group.as_str(),
                deployments.version.as_str(),
                deployments.dry_run.as_str()
            ),
            ("apps", "v1", "All")
        );
        assert_eq!(deployments.component, "apiserver");
        let apply = labels(
            &Method::PATCH,
            &uri("/api/v1/namespaces/a/configmaps/c"),
            "application/apply-patch+yaml",
        );
        assert_eq!(apply.verb, "APPLY");
    }

    #[test]
    fn only_control_plane_programs_are_system_clients() {
        assert_eq!(
            system_client("kube-controller-manager/v1.32.13 (linux/amd64)"),
            "kube-controller-manager"
        );
        assert_eq!(system_client("kubectl/v1.32.0"), "");
        assert_eq!(system_client(""), "");
    }

    #[test]
    fn long_running_requests_close_when_their_guard_drops() {
        let metrics = Arc::new(ApiMetrics::default());
        let watch = labels(&Method::GET, &uri("/api/v1/configmaps?watch=1"), "");
        let first = metrics.long_running(&watch);
        let second = metrics.long_running(&watch);
        let gauge = |m: &ApiMetrics| {
            m.long_running
                .get_or_create(&LongRunningLabels {
                    verb: "WATCH".into(),
                    group: String::new(),
                    version: "v1".into(),
                    resource: "configmaps".into(),
                    subresource: String::new(),
                    scope: "cluster".into(),
                    component: "apiserver".into(),
                })
                .get()
        };
        assert_eq!(gauge(&metrics), 2);
        drop(first);
        assert_eq!(gauge(&metrics), 1);
        drop(second);
        assert_eq!(gauge(&metrics), 0);
    }
}
