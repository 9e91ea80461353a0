//! Non-resource endpoints: discovery documents, `/version` and the health checks.

use bytes::Bytes;
use http::{Method, Response};
use serde_json::{Value, json};

use super::{Api, Body, json_response, response};
use crate::status::ApiError;

/// The Kubernetes version the sandbox reports in `/version` unless told otherwise.
pub const GIT_VERSION: &str = "v1.32.13";
/// `info.version` of the OpenAPI documents: kube-apiserver v1.32 writes its binary version there,
/// major and minor only.
pub const OPENAPI_VERSION: &str = "1.32";

/// What `/version` answers: a `gitVersion` such as `v1.32.13` and the fields kube-apiserver
/// derives from it or from its build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionInfo {
    git_version: String,
}

impl Default for VersionInfo {
    fn default() -> Self {
        VersionInfo {
            git_version: GIT_VERSION.to_string(),
        }
    }
}

impl VersionInfo {
    /// A version reporting `git_version` (`v1.31.4`; a missing leading `v` is added).
    pub fn new(git_version: &str) -> Self {
        let git_version = if git_version.starts_with('v') {
            git_version.to_string()
        } else {
            format!("v{git_version}")
        };
        VersionInfo { git_version }
    }

    /// The `/version` document, with the fields kube-apiserver v1.32 returns.
    pub fn document(&self) -> Value {
        let core = self.git_version.trim_start_matches('v');
        let mut numbers = core.split(['.', '-', '+']);
        let major = numbers.next().unwrap_or_default();
        let minor = numbers.next().unwrap_or_default();
        json!({
            "major": major,
            "minor": minor,
            "gitVersion": self.git_version,
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2025-01-01T00:00:00Z",
            "goVersion": "go1.23.5",
            "compiler": "gc",
            "platform": platform(),
        })
    }
}

/// `GOOS/GOARCH` of this machine, as Go names them.
fn platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    };
    format!("{}/{arch}", std::env::consts::OS)
}

/// Serves a non-resource path.
pub fn serve(api: &Api, method: &Method, path: &str) -> Result<Response<Body>, ApiError> {
    if method != Method::GET && method != Method::HEAD {
        return Err(ApiError::page_not_found());
    }
    let trimmed = path.trim_end_matches('/');
    let registry = api.store.lock().registry();
    let parts: Vec<&str> = trimmed.split('/').filter(|p| !p.is_empty()).collect();
    let document = match parts.as_slice() {
        [check @ ("healthz" | "livez" | "readyz"), ..] if api.faults.health_failing() => {
            return Ok(failing_health(check));
        }
        ["healthz" | "livez" | "readyz", ..] => {
            return Ok(response(
                200,
                "text/plain; charset=utf-8",
                Bytes::from_static(b"ok"),
            ));
        }
        ["version"] => api.version.document(),
        ["api"] => {
            json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
        }
        ["api", "v1"] => resource_list(&registry, "", "v1"),
        ["apis"] => {
            let groups: Vec<Value> = registry
                .groups()
                .iter()
                .map(|(g, versions)| group_document(g, versions))
                .collect();
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        }
        ["apis", group] => {
            let Some((name, versions)) = registry.groups().into_iter().find(|(g, _)| g == group)
            else {
                return Err(ApiError::page_not_found());
            };
            let mut document = group_document(&name, &versions);
            document["kind"] = json!("APIGroup");
            document["apiVersion"] = json!("v1");
            document
        }
        ["apis", group, version] if registry.serves_group_version(group, version) => {
            resource_list(&registry, group, version)
        }
        [] => {
            let mut paths = vec![
                "/api".to_string(),
                "/api/v1".to_string(),
                "/apis".to_string(),
            ];
            for (group, versions) in registry.groups() {
                paths.push(format!("/apis/{group}"));
                paths.extend(versions.iter().map(|v| format!("/apis/{group}/{v}")));
            }
            paths.extend(
                [
                    "/healthz",
                    "/livez",
                    "/metrics",
                    "/openapi/v2",
                    "/openapi/v3",
                    "/readyz",
                    "/version",
                ]
                .map(String::from),
            );
            json!({"paths": paths})
        }
        _ => return Err(ApiError::page_not_found()),
    };
    Ok(json_response(200, &document))
}

/// The checks kube-apiserver reports while starting, the RBAC bootstrap hook still failing.
const STARTING_CHECKS: &[(&str, bool)] = &[
    ("ping", true),
    ("log", true),
    ("etcd", true),
    (
        "poststarthook/start-kube-apiserver-admission-initializer",
        true,
    ),
    ("poststarthook/generic-apiserver-start-informers", true),
    ("poststarthook/priority-and-fairness-config-consumer", true),
    ("poststarthook/start-apiextensions-informers", true),
    ("poststarthook/start-apiextensions-controllers", true),
    ("poststarthook/crd-informer-synced", true),
    ("poststarthook/bootstrap-controller", true),
    ("poststarthook/rbac/bootstrap-roles", false),
    (
        "poststarthook/scheduling/bootstrap-system-priority-classes",
        true,
    ),
    (
        "poststarthook/start-cluster-authentication-info-controller",
        true,
    ),
    ("poststarthook/aggregator-reload-proxy-client-cert", true),
    ("poststarthook/apiservice-registration-controller", true),
];

/// A failing health check as kube-apiserver's healthz handler writes it: every check with
/// `[+]`/`[-]` (reasons withheld), then `<name> check failed`, as text with status 500.
fn failing_health(name: &str) -> Response<Body> {
    let mut text = String::new();
    for (check, ok) in STARTING_CHECKS {
        if *ok {
            text.push_str(&format!("[+]{check} ok\n"));
        } else {
            text.push_str(&format!("[-]{check} failed: reason withheld\n"));
        }
    }
    text.push_str(&format!("{name} check failed\n"));
    let mut out = response(500, "text/plain; charset=utf-8", Bytes::from(text));
    out.headers_mut().insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    out
}

fn group_document(group: &str, versions: &[String]) -> Value {
    let entries: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    let preferred = entries.first().cloned().unwrap_or(Value::Null);
    json!({"name": group, "versions": entries, "preferredVersion": preferred})
}

fn resource_list(registry: &crate::resources::Registry, group: &str, version: &str) -> Value {
    let resources: Vec<Value> = registry
        .group_version_types(group, version)
        .iter()
        .flat_map(|rt| rt.discovery_entries())
        .collect();
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
}
