//! kube-apiserver's size and metadata limits through the real HTTP path (kube-rs's client
//! against a started sandbox): etcd's 1.5 MiB object limit after every kind of write, the
//! JSON patch bounds (10 000 operations, 3 MiB of copies), metadata and data validation with
//! the 422 causes a real server answers, and a state directory that always loads again.
//! Messages follow the v1.32 transcripts (`metadata-validation`) and kube-apiserver's sources.

use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};

use super::sandbox;

const CM: &str = "/api/v1/namespaces/default/configmaps";
const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
const REJECTED: &str = "the server rejected our request due to an error in our request";

/// Sends one request with a content type; returns status and JSON body.
pub(super) async fn call(
    sb: &Sandbox,
    method: Method,
    path: &str,
    content_type: &str,
    body: Option<Vec<u8>>,
) -> (StatusCode, Value) {
    let mut builder = http::Request::builder().method(method).uri(path);
    if body.is_some() {
        builder = builder.header(http::header::CONTENT_TYPE, content_type);
    }
    let request = builder
        .body(body.unwrap_or_default())
        .expect("request builds");
    let response = sb
        .client()
        .send(request.map(kube::client::Body::from))
        .await
        .expect("request sent");
    let status = response.status();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("body read")
        .to_bytes();
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, value)
}

pub(super) async fn post(sb: &Sandbox, path: &str, body: &Value) -> (StatusCode, Value) {
    let bytes = serde_json::to_vec(body).expect("json");
    call(sb, Method::POST, path, "application/json", Some(bytes)).await
}

pub(super) async fn patch(
    sb: &Sandbox,
    path: &str,
    content_type: &str,
    body: &Value,
) -> (StatusCode, Value) {
    let bytes = serde_json::to_vec(body).expect("json");
    call(sb, Method::PATCH, path, content_type, Some(bytes)).await
}

async fn get(sb: &Sandbox, path: &str) -> (StatusCode, Value) {
    call(sb, Method::GET, path, "", None).await
}

/// The causes of a 422 as (field, reason, message).
fn causes(body: &Value) -> Vec<(String, String, String)> {
    body["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (text("field"), text("reason"), text("message"))
        })
        .collect()
}

/// A ConfigMap whose annotations (just under 256 KiB) every `copy` of the map doubles.
pub(super) fn copy_bomb() -> (Value, Value) {
    let seed = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "bomb", "annotations": {"seed": "x".repeat(250_000)}}});
    let operations: Vec<Value> = (0..12)
        .map(|i| json!({"op": "copy", "from": "/metadata/annotations", "path": format!("/metadata/annotations/c{i}")}))
        .collect();
    (seed, Value::Array(operations))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_patch_copy_bomb_is_refused_before_it_grows() {
    let sb = sandbox("copy-bomb").await;
    let (seed, operations) = copy_bomb();
    let (status, created) = post(&sb, CM, &seed).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let started = Instant::now();
    let (status, body) = patch(
        &sb,
        &format!("{CM}/bomb"),
        "application/json-patch+json",
        &operations,
    )
    .await;
    let took = started.elapsed();
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["reason"], "Invalid");
    assert_eq!(body["message"], REJECTED);
    assert_eq!(body["details"], json!({}));
    assert!(took < Duration::from_secs(1), "refused after {took:?}");
    let (_, stored) = get(&sb, &format!("{CM}/bomb")).await;
    assert_eq!(
        stored["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert_eq!(
        stored["metadata"]["annotations"]
            .as_object()
            .map(|a| a.len()),
        Some(1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_patch_over_ten_thousand_operations_is_413() {
    let sb = sandbox("patch-ops").await;
    let (status, _) = post(&sb, CM, &json!({"metadata": {"name": "ops"}})).await;
    assert_eq!(status, StatusCode::CREATED);
    let operations: Vec<Value> = (0..10_001)
        .map(|_| json!({"op": "add", "path": "/data", "value": {}}))
        .collect();
    let (status, body) = patch(
        &sb,
        &format!("{CM}/ops"),
        "application/json-patch+json",
        &json!(operations),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["reason"], "RequestEntityTooLarge");
    assert_eq!(
        body["message"],
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
    let fine: Vec<Value> = operations.into_iter().take(10_000).collect();
    let (status, body) = patch(
        &sb,
        &format!("{CM}/ops"),
        "application/json-patch+json",
        &json!(fine),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// Every write path refuses an object over etcd's 1.5 MiB with etcd's error and stores nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_over_etcds_limit_are_refused_by_every_write() {
    let sb = sandbox("etcd-limit").await;
    let big = "h".repeat(1_600_000);
    let lease = |holder: &str| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "l"}, "spec": {"holderIdentity": holder}})
    };
    let assert_too_large = |status: StatusCode, body: &Value, what: &str| {
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{what}: {body}");
        assert_eq!(
            body["message"], "etcdserver: request is too large",
            "{what}"
        );
        assert!(
            body.get("reason").is_none(),
            "{what}: no reason, like kube-apiserver"
        );
    };
    let (status, body) = post(&sb, LEASES, &lease(&big)).await;
    assert_too_large(status, &body, "create");
    assert_eq!(
        get(&sb, &format!("{LEASES}/l")).await.0,
        StatusCode::NOT_FOUND
    );

    let (status, created) = post(&sb, LEASES, &lease("small")).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let path = format!("{LEASES}/l");
    let bytes = serde_json::to_vec(&lease(&big)).expect("json");
    let (status, body) = call(&sb, Method::PUT, &path, "application/json", Some(bytes)).await;
    assert_too_large(status, &body, "update");
    let spec = json!({"spec": {"holderIdentity": big}});
    for content_type in [
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ] {
        let (status, body) = patch(&sb, &path, content_type, &spec).await;
        assert_too_large(status, &body, content_type);
    }
    let add = json!([{"op": "replace", "path": "/spec/holderIdentity", "value": big}]);
    let (status, body) = patch(&sb, &path, "application/json-patch+json", &add).await;
    assert_too_large(status, &body, "json patch");
    let apply = serde_json::to_vec(&lease(&big)).expect("json");
    let (status, body) = call(
        &sb,
        Method::PATCH,
        &format!("{path}?fieldManager=t&force=true"),
        "application/apply-patch+yaml",
        Some(apply),
    )
    .await;
    assert_too_large(status, &body, "apply");
    let (_, stored) = get(&sb, &path).await;
    assert_eq!(
        stored["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert_eq!(stored["spec"]["holderIdentity"], "small");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_is_validated_on_create_and_on_patch() {
    let sb = sandbox("metadata-limits").await;
    // A 1 MB generateName: one cause, for the prefix; the name is cut like kube-apiserver's.
    let prefix = "n".repeat(1_000_000);
    let (status, body) = post(&sb, CM, &json!({"metadata": {"generateName": prefix}})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let name = body["details"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        name.len(),
        63,
        "58 bytes of the prefix and 5 random characters"
    );
    assert_eq!(
        causes(&body),
        vec![(
            "metadata.generateName".to_owned(),
            "FieldValueInvalid".to_owned(),
            format!("Invalid value: \"{prefix}\": must be no more than 253 characters")
        )]
    );
    let (_, list) = get(&sb, CM).await;
    assert_eq!(
        list["items"].as_array().map(Vec::len),
        Some(0),
        "nothing stored"
    );

    let (status, _) = post(&sb, CM, &json!({"metadata": {"name": "m"}})).await;
    assert_eq!(status, StatusCode::CREATED);
    let path = format!("{CM}/m");
    let (status, body) = patch(
        &sb,
        &path,
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"a/b/c": "v"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["message"].as_str().map(|m| m.starts_with("ConfigMap \"m\" is invalid: metadata.labels: Invalid value: \"a/b/c\": a qualified name must consist of")), Some(true), "{body}");
    let annotations = json!({"metadata": {"annotations": {"big": "x".repeat(262_144)}}});
    let (status, body) = patch(&sb, &path, "application/merge-patch+json", &annotations).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        causes(&body),
        vec![(
            "metadata.annotations".to_owned(),
            "FieldValueTooLong".to_owned(),
            "Too long: may not be more than 262144 bytes".to_owned()
        )]
    );
    assert_eq!(
        body["message"],
        "ConfigMap \"m\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes"
    );
    let (_, stored) = get(&sb, &path).await;
    assert!(
        stored["metadata"].get("annotations").is_none()
            && stored["metadata"].get("labels").is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_map_and_secret_data_over_one_mib_is_invalid() {
    let sb = sandbox("data-limits").await;
    let (status, _) = post(
        &sb,
        CM,
        &json!({"metadata": {"name": "d"}, "data": {"a": "1"}}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let more = json!({"data": {"b": "x".repeat(1024 * 1024)}});
    let (status, body) = patch(
        &sb,
        &format!("{CM}/d"),
        "application/strategic-merge-patch+json",
        &more,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["message"],
        "ConfigMap \"d\" is invalid: []: Too long: may not be more than 1048576 bytes"
    );
    let (_, stored) = get(&sb, &format!("{CM}/d")).await;
    assert_eq!(stored["data"], json!({"a": "1"}));

    let secrets = "/api/v1/namespaces/default/secrets";
    let secret =
        json!({"metadata": {"name": "s"}, "stringData": {"k": "y".repeat(1024 * 1024 + 1)}});
    let (status, body) = post(&sb, secrets, &secret).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        causes(&body),
        vec![(
            "data".to_owned(),
            "FieldValueTooLong".to_owned(),
            "Too long: may not be more than 1048576 bytes".to_owned()
        )]
    );
    // Exactly 1 MiB fits: its base64 form is larger, but the limits count decoded bytes.
    let secret = json!({"metadata": {"name": "s"}, "stringData": {"k": "y".repeat(1024 * 1024)}});
    assert_eq!(post(&sb, secrets, &secret).await.0, StatusCode::CREATED);
}

/// Nothing over the limits reaches the state file; a file that holds more anyway (written
/// by an older sandbox) is an error naming it, not a crash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_directory_always_loads_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sb = Sandbox::builder()
        .name("state-limits")
        .dir(dir.path())
        .start()
        .await
        .expect("starts");
    let (seed, operations) = copy_bomb();
    assert_eq!(post(&sb, CM, &seed).await.0, StatusCode::CREATED);
    let (status, _) = patch(
        &sb,
        &format!("{CM}/bomb"),
        "application/json-patch+json",
        &operations,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    sb.shutdown().await;
    let size = std::fs::metadata(dir.path().join("objects.json"))
        .expect("state written")
        .len();
    assert!(size < 2 * 1024 * 1024, "state file has {size} bytes");
    let sb = Sandbox::builder()
        .name("state-limits")
        .dir(dir.path())
        .start()
        .await
        .expect("restarts");
    assert_eq!(get(&sb, &format!("{CM}/bomb")).await.0, StatusCode::OK);
    sb.shutdown().await;

    let big = json!({"metadata": {"name": "big", "namespace": "default"}, "data": {"a": "x".repeat(2_000_000)}});
    let state = json!({"resourceVersion": 5, "resources": {"configmaps": [big]}});
    std::fs::write(dir.path().join("objects.json"), state.to_string()).expect("write");
    let Err(error) = Sandbox::builder()
        .name("state-limits")
        .dir(dir.path())
        .start()
        .await
    else {
        panic!("a state file with an oversized object loaded");
    };
    let chain = std::iter::successors(Some(&error as &dyn std::error::Error), |e| e.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ");
    assert!(
        chain.contains("objects.json") && chain.contains("configmaps default/big"),
        "{chain}"
    );
}
