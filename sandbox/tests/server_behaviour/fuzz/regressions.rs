//! What the fuzz target found, kept as explicit tests through the same HTTP path: a YAML body
//! of nested brackets held a server thread for minutes (the parser is quadratic in flow
//! nesting), `DELETE /api/v1/namespaces` deleted every namespace including `default` (namespaces
//! have no deletecollection and three of them are immortal), and percent-encoded names
//! (`system%3Abasic-user`) were not found, and a patch removing `metadata.name` stored an object
//! without a name (which no list reader can address).

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

/// Every write that would leave the object without its URL's name or namespace is a 400 with
/// kube-apiserver's text (answers recorded from a real v1.32.13 with the same requests), and
/// the stored object keeps its name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_keep_the_name_and_namespace_of_the_url() {
    const UNDETERMINABLE: &str =
        "the name of the object (c1 based on URL) was undeterminable: name must be provided";
    const OTHER_NAMESPACE: &str =
        "the namespace of the provided object does not match the namespace sent on the request";
    let sb = sandbox("fuzz-names").await;
    let client = sb.client();
    let collection = "/api/v1/namespaces/default/configmaps";
    let object = format!("{collection}/c1");
    let apply = format!("{object}?fieldManager=t");
    let created = exchange(
        &client,
        &request(
            "POST",
            collection,
            Some("application/json"),
            Some(br#"{"metadata":{"name":"c1"},"data":{"a":"b"}}"#.to_vec()),
        ),
    )
    .await
    .expect("answers");
    assert_eq!(created.status, StatusCode::CREATED);
    let cases: [(&str, &str, &str, &str, u16, &str); 15] = [
        (
            "PATCH",
            &object,
            "application/json-patch+json",
            r#"[{"op":"remove","path":"/metadata/name"}]"#,
            400,
            UNDETERMINABLE,
        ),
        (
            "PATCH",
            &object,
            "application/json-patch+json",
            r#"[{"op":"replace","path":"/metadata/name","value":""}]"#,
            400,
            UNDETERMINABLE,
        ),
        (
            "PATCH",
            &object,
            "application/json-patch+json",
            r#"[{"op":"replace","path":"/metadata/name","value":"other"}]"#,
            400,
            "the name of the object (other) does not match the name on the URL (c1)",
        ),
        (
            "PATCH",
            &object,
            "application/merge-patch+json",
            r#"{"metadata":{"name":null}}"#,
            400,
            UNDETERMINABLE,
        ),
        (
            "PATCH",
            &object,
            "application/strategic-merge-patch+json",
            r#"{"metadata":{"name":null}}"#,
            400,
            UNDETERMINABLE,
        ),
        (
            "PATCH",
            &object,
            "application/merge-patch+json",
            r#"{"metadata":{"namespace":"kube-system"}}"#,
            400,
            OTHER_NAMESPACE,
        ),
        (
            "PATCH",
            &object,
            "application/merge-patch+json",
            r#"{"metadata":{"namespace":null}}"#,
            200,
            "",
        ),
        (
            "PATCH",
            &apply,
            "application/apply-patch+yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: zz}",
            400,
            "the name of the object (zz) does not match the name on the URL (c1)",
        ),
        (
            "PATCH",
            &apply,
            "application/apply-patch+yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {}",
            200,
            "",
        ),
        (
            "PATCH",
            &apply,
            "application/apply-patch+yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: kube-system}",
            400,
            OTHER_NAMESPACE,
        ),
        (
            "PUT",
            &object,
            "application/json",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}"#,
            400,
            UNDETERMINABLE,
        ),
        (
            "PUT",
            &object,
            "application/json",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"q"}}"#,
            400,
            "the name of the object (q) does not match the name on the URL (c1)",
        ),
        (
            "PUT",
            &format!("{collection}/new1"),
            "application/json",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}"#,
            400,
            "the name of the object (new1 based on URL) was undeterminable: name must be provided",
        ),
        (
            "PATCH",
            &format!("{collection}/new2?fieldManager=t"),
            "application/apply-patch+yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {}",
            400,
            "the name of the object (new2 based on URL) was undeterminable: name must be provided",
        ),
        (
            "POST",
            collection,
            "application/json",
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c2","namespace":"kube-system"}}"#,
            400,
            OTHER_NAMESPACE,
        ),
    ];
    for (method, uri, content_type, body, code, message) in cases {
        let answer = exchange(
            &client,
            &request(
                method,
                uri,
                Some(content_type),
                Some(body.as_bytes().to_vec()),
            ),
        )
        .await
        .expect("answers");
        let answer_body: serde_json::Value =
            serde_json::from_slice(&answer.body).expect("JSON answer");
        assert_eq!(
            answer.status.as_u16(),
            code,
            "{method} {uri} {body}: {answer_body}"
        );
        if code == 400 {
            assert_eq!(answer_body["message"], message, "{method} {uri} {body}");
            assert_eq!(answer_body["reason"], "BadRequest");
        } else {
            assert_eq!(answer_body["metadata"]["name"], "c1", "{method} {body}");
        }
    }
    let list = exchange(&client, &request("GET", collection, None, None))
        .await
        .expect("answers");
    let list: serde_json::Value = serde_json::from_slice(&list.body).expect("list");
    let names: Vec<_> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| item["metadata"]["name"].clone())
        .collect();
    assert!(names.contains(&json!("c1")), "{names:?}");
    assert!(names.iter().all(|name| name.is_string()), "{names:?}");
    assert!(!names.contains(&json!("new1")) && !names.contains(&json!("new2")));
}
