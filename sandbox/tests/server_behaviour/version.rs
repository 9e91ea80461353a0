//! The version a sandbox reports: `/version` with the fields kube-apiserver v1.32 returns, the
//! OpenAPI documents' `info.version`, and a version reported for tests of clients' checks.

use http::{Method, StatusCode};
use seedlet_sandbox::Sandbox;
use serde_json::Value;

use super::{sandbox, send};

/// The fields of kube-apiserver v1.32.13's `/version` (`version.Info`), in its order.
const VERSION_FIELDS: [&str; 9] = [
    "major",
    "minor",
    "gitVersion",
    "gitCommit",
    "gitTreeState",
    "buildDate",
    "goVersion",
    "compiler",
    "platform",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_reports_v1_32_with_the_fields_of_kube_apiserver() {
    let sb = sandbox("version").await;
    let (status, content_type, version) = send(&sb, Method::GET, "/version", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "application/json");
    let fields: Vec<&str> = version
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = VERSION_FIELDS.to_vec();
    expected.sort_unstable();
    let mut sorted = fields.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected);
    assert_eq!(version["major"], "1");
    assert_eq!(version["minor"], "32");
    assert_eq!(version["gitVersion"], "v1.32.13");
    assert_eq!(version["compiler"], "gc");
    assert!(
        version["platform"]
            .as_str()
            .is_some_and(|p| p.contains('/')),
        "{version}"
    );

    // kube-apiserver v1.32 writes major.minor of its binary version into both OpenAPI documents.
    let (_, _, v2) = send(&sb, Method::GET, "/openapi/v2", None, None).await;
    assert_eq!(v2["info"]["version"], "1.32");
    let (_, _, v3) = send(&sb, Method::GET, "/openapi/v3/api/v1", None, None).await;
    assert_eq!(v3["info"]["version"], "1.32");
    sb.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reported_version_changes_version_only() {
    let sb = Sandbox::builder()
        .name("old")
        .reported_version("v1.31.4")
        .start()
        .await
        .expect("sandbox starts");
    let (_, _, version) = send(&sb, Method::GET, "/version", None, None).await;
    assert_eq!(version["gitVersion"], "v1.31.4");
    assert_eq!(version["major"], "1");
    assert_eq!(version["minor"], "31");
    let (_, _, v2) = send(&sb, Method::GET, "/openapi/v2", None, None).await;
    assert_eq!(v2["info"]["version"], Value::from("1.32"));
    sb.shutdown().await;
}
