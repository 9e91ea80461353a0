//! Generators of HTTP requests for the sandbox fuzz target: methods, API paths (valid ones for
//! built-in kinds, a custom resource, subresources and discovery, and malformed, huge,
//! percent-encoded and `..` ones), query parameters (selectors, watch, paging, dry run, field
//! manager, propagation policy, valid and garbage), content types (every patch type, YAML,
//! protobuf) and bodies (valid objects, truncated and garbage JSON, deep nesting, strings near
//! and over the size limits, protobuf garbage, JSON patches).

use proptest::prelude::*;
use serde_json::{Value, json};

/// One generated request.
#[derive(Clone, Debug)]
pub struct FuzzRequest {
    pub method: String,
    /// Path and query, already percent-encoded.
    pub uri: String,
    pub content_type: Option<String>,
    pub accept: Option<String>,
    pub body: Option<Vec<u8>>,
}

impl FuzzRequest {
    /// Whether the request may open a watch (its body then streams until `timeoutSeconds`).
    pub fn may_watch(&self) -> bool {
        self.uri.contains("watch")
    }
}

/// The group of custom resources the fuzz sandbox defines.
pub const CRD_GROUP: &str = "fuzz.example.com";

/// Collections: (API prefix, resource, namespaced).
const COLLECTIONS: &[(&str, &str, bool)] = &[
    ("/api/v1", "configmaps", true),
    ("/api/v1", "secrets", true),
    ("/api/v1", "pods", true),
    ("/api/v1", "services", true),
    ("/api/v1", "endpoints", true),
    ("/api/v1", "events", true),
    ("/api/v1", "serviceaccounts", true),
    ("/api/v1", "namespaces", false),
    ("/api/v1", "nodes", false),
    ("/apis/apps/v1", "deployments", true),
    ("/apis/coordination.k8s.io/v1", "leases", true),
    ("/apis/rbac.authorization.k8s.io/v1", "roles", true),
    ("/apis/rbac.authorization.k8s.io/v1", "clusterroles", false),
    (
        "/apis/certificates.k8s.io/v1",
        "certificatesigningrequests",
        false,
    ),
    (
        "/apis/apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        false,
    ),
    (
        "/apis/authorization.k8s.io/v1",
        "selfsubjectaccessreviews",
        false,
    ),
    ("/apis/fuzz.example.com/v1", "widgets", true),
];

const SUBRESOURCES: &[&str] = &[
    "status",
    "scale",
    "approval",
    "token",
    "log",
    "binding",
    "eviction",
    "proxy",
    "finalize",
    "nonexistent",
];

const FIXED_PATHS: &[&str] = &[
    "/",
    "/api",
    "/api/v1",
    "/apis",
    "/apis/apps",
    "/apis/apps/v1",
    "/apis/fuzz.example.com",
    "/apis/fuzz.example.com/v1",
    "/apis/apps/v2",
    "/apis/nope/v1",
    "/openapi/v2",
    "/openapi/v3",
    "/openapi/v3/api/v1",
    "/openapi/v3/apis/apps/v1",
    "/openapi/v3/apis/fuzz.example.com/v1",
    "/version",
    "/metrics",
    "/healthz",
    "/livez",
    "/readyz",
    "/readyz/etcd",
    "/healthz/ping",
    "/.well-known/openid-configuration",
    "/openid/v1/jwks",
    "/api/v1/watch/configmaps",
    "/api/v1/watch/namespaces/default/configmaps",
    "/api/v1/watch/namespaces/default/configmaps/a",
    "/apis/apps/v1/watch/deployments",
];

/// Names objects in the fuzz run get: a few, so requests often hit an existing object.
const NAMES: &[&str] = &["a", "b", "fuzz", "kubernetes", "widgets.fuzz.example.com"];

fn pick<T: Clone + std::fmt::Debug + 'static>(items: &'static [T]) -> BoxedStrategy<T> {
    proptest::sample::select(items).boxed()
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

pub fn method() -> BoxedStrategy<String> {
    prop_oneof![
        8 => pick(&["GET", "POST", "PUT", "PATCH", "DELETE"]),
        1 => pick(&["HEAD", "OPTIONS", "TRACE", "PROPFIND", "FOO", "get"]),
    ]
    .prop_map(str::to_owned)
    .boxed()
}

fn namespace() -> BoxedStrategy<String> {
    prop_oneof![
        6 => pick(&["default", "fuzz"]).prop_map(str::to_owned),
        1 => pick(&["kube-system", "missing", "..", "%2e%2e", "UPPER", "a_b"]).prop_map(str::to_owned),
        1 => "[a-z0-9.-]{0,70}",
    ]
    .boxed()
}

fn name() -> BoxedStrategy<String> {
    prop_oneof![
        6 => pick(NAMES).prop_map(str::to_owned),
        1 => "[a-zA-Z0-9.%_~-]{0,300}",
        1 => Just("..".to_owned()),
    ]
    .boxed()
}

/// Paths to the API's collections, objects and subresources.
fn api_path() -> BoxedStrategy<String> {
    (
        pick(COLLECTIONS),
        namespace(),
        any::<bool>(),
        proptest::option::of(name()),
        proptest::option::weighted(0.3, pick(SUBRESOURCES)),
    )
        .prop_map(
            |((prefix, resource, namespaced), ns, cluster_wide, name, sub)| {
                let mut path = prefix.to_owned();
                if namespaced && !cluster_wide {
                    path.push_str(&format!("/namespaces/{ns}"));
                }
                path.push('/');
                path.push_str(resource);
                if let Some(name) = name {
                    path.push('/');
                    path.push_str(&name);
                    if let Some(sub) = sub {
                        path.push('/');
                        path.push_str(sub);
                    }
                }
                path
            },
        )
        .boxed()
}

/// Paths the API does not have: random segments, `..`, encoded separators, huge paths.
fn malformed_path() -> BoxedStrategy<String> {
    prop_oneof![
        proptest::collection::vec(
            prop_oneof![
                "[a-zA-Z0-9._~-]{0,12}",
                pick(&[
                    "..",
                    ".",
                    "%2e%2e",
                    "%2F",
                    "%00",
                    "%ff",
                    "%",
                    "%zz",
                    "api",
                    "apis",
                    "v1",
                    "namespaces",
                    "watch",
                    "",
                    "~"
                ])
                .prop_map(str::to_owned),
            ],
            0..10,
        )
        .prop_map(|segments| format!("/{}", segments.join("/"))),
        (pick(FIXED_PATHS), "[a-z/.]{0,10}").prop_map(|(base, tail)| format!("{base}{tail}")),
        (1usize..40_000)
            .prop_map(|n| format!("/api/v1/namespaces/default/configmaps/{}", "n".repeat(n))),
        (1usize..2_000).prop_map(|n| "/..".repeat(n)),
        (1usize..4_000).prop_map(|n| format!("/api/v1{}", "/".repeat(n))),
    ]
    .boxed()
}

pub fn path() -> BoxedStrategy<String> {
    prop_oneof![
        6 => api_path(),
        2 => pick(FIXED_PATHS).prop_map(str::to_owned),
        2 => malformed_path(),
    ]
    .boxed()
}

fn selector() -> BoxedStrategy<String> {
    prop_oneof![
        pick(&[
            "app=web",
            "app!=web",
            "app",
            "!app",
            "app in (a,b)",
            "app notin (a)",
            "a=b,c=d",
            "metadata.name=a",
            "metadata.namespace!=default",
            "status.phase=Running",
            "spec.nodeName=",
            "=",
            "in",
            "a in (",
            "a==b",
            "x=y=z",
            ",",
            "a=(b)",
            "a,,b",
            "metadata.name==a",
            "a in ()",
            "!!a",
        ])
        .prop_map(str::to_owned),
        "[a-z=!,() .]{0,40}",
        "\\PC{0,20}",
        (1usize..20_000).prop_map(|n| format!("k={}", "v".repeat(n))),
    ]
    .boxed()
}

fn garbage_number() -> BoxedStrategy<String> {
    prop_oneof![
        (0i64..5).prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        pick(&[
            "",
            "-1",
            "1e3",
            "abc",
            "99999999999999999999999",
            "0x10",
            " 1"
        ])
        .prop_map(str::to_owned),
    ]
    .boxed()
}

/// One query parameter (name, value), both unencoded.
fn parameter() -> BoxedStrategy<(String, String)> {
    let fixed = |name: &'static str, values: &'static [&'static str]| {
        pick(values).prop_map(move |v| (name.to_owned(), v.to_owned()))
    };
    prop_oneof![
        2 => selector().prop_map(|s| ("labelSelector".to_owned(), s)),
        2 => selector().prop_map(|s| ("fieldSelector".to_owned(), s)),
        2 => fixed("watch", &["1", "true", "false", "0", "yes", ""]),
        2 => (0u8..3).prop_map(|n| ("timeoutSeconds".to_owned(), n.to_string())),
        1 => garbage_number().prop_map(|v| ("timeoutSeconds".to_owned(), v)),
        2 => garbage_number().prop_map(|v| ("resourceVersion".to_owned(), v)),
        1 => fixed("resourceVersionMatch", &["NotOlderThan", "Exact", "Garbage", ""]),
        2 => garbage_number().prop_map(|v| ("limit".to_owned(), v)),
        1 => prop_oneof![Just("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0".to_owned()), "\\PC{0,30}"]
            .prop_map(|v| ("continue".to_owned(), v)),
        1 => fixed("dryRun", &["All", "all", "None", "", "All,All"]),
        1 => prop_oneof![Just("fuzzer".to_owned()), "\\PC{0,200}"].prop_map(|v| ("fieldManager".to_owned(), v)),
        1 => fixed("propagationPolicy", &["Foreground", "Background", "Orphan", "Garbage", ""]),
        1 => fixed("force", &["true", "false", "maybe"]),
        1 => fixed("fieldValidation", &["Strict", "Warn", "Ignore", "Bogus"]),
        1 => fixed("allowWatchBookmarks", &["true", "false"]),
        1 => fixed("sendInitialEvents", &["true", "false"]),
        1 => fixed("pretty", &["true", "1"]),
        1 => fixed("gracePeriodSeconds", &["0", "-1", "30", "x"]),
        1 => fixed("orphanDependents", &["true", "false"]),
        1 => ("[a-zA-Z]{1,10}", "\\PC{0,10}"),
    ]
    .boxed()
}

fn query() -> BoxedStrategy<String> {
    prop_oneof![
        3 => proptest::collection::vec(parameter(), 0..5).prop_map(|params| {
            params
                .iter()
                .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                .collect::<Vec<_>>()
                .join("&")
        }),
        1 => "[a-zA-Z0-9=&%._~-]{0,40}",
    ]
    .boxed()
}

/// Watches time out quickly: a request that may watch and has no `timeoutSeconds` gets one.
fn bounded_watch(uri: String) -> String {
    if !uri.contains("watch") || uri.contains("timeoutSeconds=") {
        uri
    } else if uri.contains('?') {
        format!("{uri}&timeoutSeconds=1")
    } else {
        format!("{uri}?timeoutSeconds=1")
    }
}

pub fn content_type() -> BoxedStrategy<Option<String>> {
    proptest::option::weighted(
        0.9,
        prop_oneof![
            6 => pick(&[
                "application/json",
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
            ]),
            1 => pick(&["text/plain", "application/json; charset=utf-8", "garbage", "application/apply-patch+json", "*/*", ""]),
        ]
        .prop_map(str::to_owned),
    )
    .boxed()
}

pub fn accept() -> BoxedStrategy<Option<String>> {
    proptest::option::weighted(
        0.5,
        pick(&[
            "application/json",
            "application/json;as=Table;v=v1;g=meta.k8s.io",
            "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
            "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
            "application/vnd.kubernetes.protobuf",
            "application/yaml",
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            "text/html",
            "*/*",
            "garbage;;;",
        ])
        .prop_map(str::to_owned),
    )
    .boxed()
}

/// Arbitrary JSON values, shallow.
fn value() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,16}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::btree_map(key(), inner, 0..5)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
    .boxed()
}

fn key() -> BoxedStrategy<String> {
    prop_oneof![
        pick(&[
            "apiVersion",
            "kind",
            "metadata",
            "name",
            "namespace",
            "labels",
            "annotations",
            "finalizers",
            "ownerReferences",
            "resourceVersion",
            "uid",
            "generateName",
            "spec",
            "status",
            "data",
            "stringData",
            "binaryData",
            "type",
            "replicas",
            "selector",
            "template",
            "holderIdentity",
            "managedFields",
            "deletionTimestamp",
            "$patch",
            "$retainKeys",
            "$setElementOrder/finalizers",
            "items",
        ])
        .prop_map(str::to_owned),
        "[a-zA-Z./_-]{1,12}",
    ]
    .boxed()
}

/// Objects that look like what a client sends: apiVersion, kind, metadata, and arbitrary rest.
fn object() -> BoxedStrategy<Value> {
    (
        pick(&[
            ("v1", "ConfigMap"),
            ("v1", "Secret"),
            ("v1", "Namespace"),
            ("v1", "Pod"),
            ("v1", "Service"),
            ("apps/v1", "Deployment"),
            ("coordination.k8s.io/v1", "Lease"),
            ("fuzz.example.com/v1", "Widget"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
            ("v1", "Status"),
            ("meta.k8s.io/v1", "DeleteOptions"),
        ]),
        name(),
        proptest::collection::btree_map("[a-z/.]{1,10}", "[a-z0-9.]{0,8}", 0..3),
        proptest::collection::btree_map(key(), value(), 0..4),
    )
        .prop_map(|((api_version, kind), name, labels, rest)| {
            let mut object = json!({
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": name, "labels": labels},
            });
            for (key, value) in rest {
                object[key] = value;
            }
            object
        })
        .boxed()
}

fn json_patch() -> BoxedStrategy<Value> {
    let operation = (
        pick(&["add", "remove", "replace", "move", "copy", "test", "bogus"]),
        pick(&[
            "/metadata/labels",
            "/metadata/labels/a",
            "/metadata/annotations",
            "/data",
            "/data/k",
            "/spec",
            "/spec/replicas",
            "/metadata/finalizers/-",
            "/metadata/name",
            "/metadata/resourceVersion",
            "/",
            "",
            "/metadata/managedFields",
            "/a~1b",
            "/x/0/1",
        ]),
        pick(&["/metadata", "/data", "/metadata/labels", "/spec", "/nope"]),
        value(),
    )
        .prop_map(
            |(op, path, from, value)| json!({"op": op, "path": path, "from": from, "value": value}),
        );
    proptest::collection::vec(operation, 0..8)
        .prop_map(Value::Array)
        .boxed()
}

/// Bodies: valid-looking objects, patches, broken JSON, deep nesting, huge strings, protobuf
/// garbage, YAML.
pub fn body() -> BoxedStrategy<Option<Vec<u8>>> {
    let bytes = |value: &Value| serde_json::to_vec(value).expect("json");
    prop_oneof![
        3 => Just(None),
        5 => object().prop_map(move |o| Some(bytes(&o))),
        3 => json_patch().prop_map(move |p| Some(bytes(&p))),
        2 => (object(), any::<prop::sample::Index>()).prop_map(move |(o, cut)| {
            let full = bytes(&o);
            Some(full[..cut.index(full.len())].to_vec())
        }),
        1 => proptest::collection::vec(any::<u8>(), 0..200).prop_map(Some),
        1 => (1usize..200_000, any::<bool>()).prop_map(|(depth, arrays)| {
            let (open, close) = if arrays { ("[", "]") } else { ("{\"a\":", "}") };
            Some(format!("{}1{}", open.repeat(depth), close.repeat(depth)).into_bytes())
        }),
        1 => (pick(&[262_143usize, 262_145, 1_048_576, 1_048_577, 1_572_864, 3_145_000, 3_145_729]), object())
            .prop_map(move |(size, mut o)| {
                o["metadata"] = json!({"name": "big", "annotations": {"big": "x".repeat(size)}});
                Some(bytes(&o))
            }),
        1 => (pick(&[1_048_577usize, 1_600_000]), name()).prop_map(move |(size, name)| {
            Some(bytes(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": {"k": "d".repeat(size)}})))
        }),
        1 => proptest::collection::vec(any::<u8>(), 0..300).prop_map(|garbage| {
            let mut body = b"k8s\x00".to_vec();
            body.extend(garbage);
            Some(body)
        }),
        2 => object().prop_map(|o| Some(serde_yaml::to_string(&o).expect("yaml").into_bytes())),
    ]
    .boxed()
}

/// Kinds the coherent writes create: (API prefix, resource, apiVersion, kind, a valid body part).
const WRITABLE: &[(&str, &str, &str, &str, &str)] = &[
    (
        "/api/v1",
        "configmaps",
        "v1",
        "ConfigMap",
        r#"{"data": {"k": "v"}}"#,
    ),
    (
        "/api/v1",
        "secrets",
        "v1",
        "Secret",
        r#"{"stringData": {"k": "v"}, "type": "Opaque"}"#,
    ),
    (
        "/apis/coordination.k8s.io/v1",
        "leases",
        "coordination.k8s.io/v1",
        "Lease",
        r#"{"spec": {"holderIdentity": "h"}}"#,
    ),
    (
        "/apis/fuzz.example.com/v1",
        "widgets",
        "fuzz.example.com/v1",
        "Widget",
        r#"{"spec": {"replicas": 2}}"#,
    ),
    ("/api/v1", "serviceaccounts", "v1", "ServiceAccount", "{}"),
];

/// Writes that mostly succeed: an object of the path's kind, created, replaced or patched with
/// every patch type, so the run builds up state (finalizers and labels included) to persist.
fn coherent_write() -> BoxedStrategy<FuzzRequest> {
    (
        pick(WRITABLE),
        pick(&["default", "fuzz"]),
        pick(NAMES),
        proptest::collection::btree_map("[a-z]{1,5}", "[a-z0-9]{0,5}", 0..3),
        any::<bool>(),
        0u8..6,
        proptest::option::weighted(
            0.2,
            pick(&[
                "dryRun=All",
                "fieldManager=fuzz",
                "propagationPolicy=Foreground",
            ]),
        ),
    )
        .prop_map(
            |(
                (prefix, resource, api_version, kind, part),
                ns,
                name,
                labels,
                finalizer,
                verb,
                query,
            )| {
                let mut object = serde_json::from_str::<Value>(part).expect("valid part");
                object["apiVersion"] = json!(api_version);
                object["kind"] = json!(kind);
                object["metadata"] = json!({"name": name, "labels": labels});
                if finalizer {
                    object["metadata"]["finalizers"] = json!(["fuzz.example.com/keep"]);
                }
                let collection = format!("{prefix}/namespaces/{ns}/{resource}");
                let item = format!("{collection}/{name}");
                let (method, uri, content_type, body) = match verb {
                    0 => (
                        "POST",
                        collection,
                        "application/json",
                        serde_json::to_vec(&object).expect("json"),
                    ),
                    1 => (
                        "PUT",
                        item,
                        "application/yaml",
                        serde_yaml::to_string(&object).expect("yaml").into_bytes(),
                    ),
                    2 => (
                        "PATCH",
                        format!("{item}?fieldManager=fuzz&force=true"),
                        "application/apply-patch+yaml",
                        serde_json::to_vec(&object).expect("json"),
                    ),
                    3 => (
                        "PATCH",
                        item,
                        "application/merge-patch+json",
                        serde_json::to_vec(&json!({"metadata": object["metadata"]})).expect("json"),
                    ),
                    4 => (
                        "PATCH",
                        item,
                        "application/json-patch+json",
                        serde_json::to_vec(
                            &json!([{"op": "add", "path": "/metadata/labels", "value": labels}]),
                        )
                        .expect("json"),
                    ),
                    _ => ("DELETE", item, "application/json", Vec::new()),
                };
                let uri = match query {
                    Some(query) if uri.contains('?') => format!("{uri}&{query}"),
                    Some(query) => format!("{uri}?{query}"),
                    None => uri,
                };
                FuzzRequest {
                    method: method.to_owned(),
                    uri,
                    content_type: Some(content_type.to_owned()),
                    accept: None,
                    body: (!body.is_empty()).then_some(body),
                }
            },
        )
        .boxed()
}

/// Anything at all from the generators above.
fn arbitrary_request() -> BoxedStrategy<FuzzRequest> {
    (method(), path(), query(), content_type(), accept(), body())
        .prop_map(|(method, path, query, content_type, accept, body)| {
            let uri = if query.is_empty() {
                path
            } else {
                format!("{path}?{query}")
            };
            let uri = bounded_watch(uri);
            FuzzRequest {
                method,
                uri,
                content_type,
                accept,
                body,
            }
        })
        .boxed()
}

pub fn request() -> BoxedStrategy<FuzzRequest> {
    prop_oneof![3 => arbitrary_request(), 1 => coherent_write()].boxed()
}
