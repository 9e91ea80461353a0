//! What the fuzz target found, kept as explicit tests through the same HTTP path: a YAML body
//! of nested brackets held a server thread for minutes (the parser is quadratic in flow
//! nesting), `DELETE /api/v1/namespaces` deleted every namespace including `default` (namespaces
//! have no deletecollection and three of them are immortal), and percent-encoded names
//! (`system%3Abasic-user`) were not found.

use std::time::{Duration, Instant};

use http::StatusCode;
use serde_json::json;

use super::{FuzzRequest, exchange};
use crate::server_behaviour::sandbox;

fn request(
    method: &str,
    uri: &str,
    content_type: Option<&str>,
    body: Option<Vec<u8>>,
) -> FuzzRequest {
    FuzzRequest {
        method: method.to_owned(),
        uri: uri.to_owned(),
        content_type: content_type.map(str::to_owned),
        accept: None,
        body,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_yaml_is_refused_at_once() {
    let sb = sandbox("fuzz-yaml-depth").await;
    let client = sb.client();
    let deep = format!("{}1{}", "{\"a\":".repeat(150_000), "}".repeat(150_000)).into_bytes();
    for (method, uri, content_type) in [
        (
            "PUT",
            "/api/v1/namespaces/default/configmaps/kubernetes?dryRun=All",
            "application/yaml",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            "application/yaml",
        ),
        (
            "PATCH",
            "/api/v1/namespaces/default/configmaps/a?fieldManager=f",
            "application/apply-patch+yaml",
        ),
    ] {
        let started = Instant::now();
        let answer = exchange(
            &client,
            &request(method, uri, Some(content_type), Some(deep.clone())),
        )
        .await
        .expect("answers");
        let took = started.elapsed();
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{method} {content_type}"
        );
        let status: serde_json::Value = serde_json::from_slice(&answer.body).expect("Status");
        let message = status["message"].as_str().unwrap_or_default();
        assert!(message.ends_with("exceeded max depth of 128"), "{message}");
        assert!(
            took < Duration::from_secs(2),
            "{method} {content_type} took {took:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_are_deleted_one_at_a_time_and_never_the_immortal_ones() {
    let sb = sandbox("fuzz-namespaces").await;
    let client = sb.client();
    let answer = exchange(
        &client,
        &request("DELETE", "/api/v1/namespaces", None, None),
    )
    .await
    .expect("answers");
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    let status: serde_json::Value = serde_json::from_slice(&answer.body).expect("Status");
    assert_eq!(status["reason"], "MethodNotAllowed");
    for name in ["default", "kube-system", "kube-public"] {
        let uri = format!("/api/v1/namespaces/{name}");
        let answer = exchange(&client, &request("DELETE", &uri, None, None))
            .await
            .expect("answers");
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{name}");
        let status: serde_json::Value = serde_json::from_slice(&answer.body).expect("Status");
        assert_eq!(
            status["message"],
            format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted")
        );
        assert_eq!(
            status["details"],
            json!({"name": name, "kind": "namespaces"})
        );
        let got = exchange(&client, &request("GET", &uri, None, None))
            .await
            .expect("answers");
        assert_eq!(got.status, StatusCode::OK, "{name} is still there");
    }
    let created = exchange(
        &client,
        &request(
            "POST",
            "/api/v1/namespaces",
            Some("application/json"),
            Some(br#"{"metadata":{"name":"mortal"}}"#.to_vec()),
        ),
    )
    .await
    .expect("answers");
    assert_eq!(created.status, StatusCode::CREATED);
    let deleted = exchange(
        &client,
        &request("DELETE", "/api/v1/namespaces/mortal", None, None),
    )
    .await
    .expect("answers");
    assert_eq!(deleted.status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn percent_encoded_names_address_the_object() {
    let sb = sandbox("fuzz-escapes").await;
    let client = sb.client();
    for uri in [
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Abasic-user",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user",
        "/api/v1/namespaces/d%65fault",
    ] {
        let answer = exchange(&client, &request("GET", uri, None, None))
            .await
            .expect("answers");
        assert_eq!(answer.status, StatusCode::OK, "{uri}");
    }
}
