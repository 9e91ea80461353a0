//! `dryRun=All` with a real kube-rs client: creates, updates, every patch kind, subresources,
//! deletes and deletecollection answer the object as it would be stored, after defaulting,
//! validation and field management, but nothing is stored: no resourceVersion bump, no watch
//! event, no follow-up (CSR signing, namespace finalization). Other values are refused with
//! kube-apiserver's 422.

use std::time::Duration;

use futures::StreamExt;
use http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::{Client, ResourceExt};
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};

use crate::server_behaviour::{csr, csr_request};

fn object<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("valid object")
}

fn dry_post() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

fn dry_delete() -> DeleteParams {
    DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    }
}

async fn create_namespace(client: &Client, name: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": name}})),
        )
        .await
        .expect("namespace created");
}

#[tokio::test]
async fn dry_runs_answer_the_stored_object_but_store_nothing() {
    let sb = Sandbox::builder()
        .name("dry-run")
        .start()
        .await
        .expect("sandbox starts");
    let client = sb.client();
    create_namespace(&client, "dry").await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "dry");

    // Create: defaulted and owned like a real create, without a resourceVersion.
    let answered = maps
        .create(
            &dry_post(),
            &object(json!({"metadata": {"name": "ghost"}, "data": {"a": "1"}})),
        )
        .await
        .expect("dry-run create");
    assert!(answered.uid().is_some() && answered.creation_timestamp().is_some());
    assert_eq!(answered.resource_version(), None);
    assert_eq!(
        answered.managed_fields()[0].operation.as_deref(),
        Some("Update")
    );
    assert_eq!(maps.get_opt("ghost").await.expect("get"), None);
    // Validation still runs.
    let error = maps
        .create(
            &dry_post(),
            &object(json!({"metadata": {"name": "Not_Valid"}})),
        )
        .await
        .expect_err("invalid name");
    assert!(
        matches!(error, kube::Error::Api(ref s) if s.code == 422),
        "{error}"
    );

    let live = maps
        .create(
            &PostParams::default(),
            &object(
                json!({"metadata": {"name": "live", "finalizers": ["example.com/keep"]},
                           "data": {"a": "1"}}),
            ),
        )
        .await
        .expect("created");
    let plain = maps
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": "plain"}})),
        )
        .await
        .expect("created");
    let rv = live.resource_version().expect("resourceVersion");
    let before_dry_runs = plain.resource_version().expect("resourceVersion");
    let error = maps
        .create(&dry_post(), &object(json!({"metadata": {"name": "live"}})))
        .await
        .expect_err("exists");
    assert!(
        matches!(error, kube::Error::Api(ref s) if s.code == 409),
        "{error}"
    );

    // Update and every patch kind answer the change with the stored resourceVersion.
    let mut changed = live.clone();
    changed
        .data
        .get_or_insert_default()
        .insert("b".into(), "2".into());
    let answered = maps
        .replace("live", &dry_post(), &changed)
        .await
        .expect("dry-run update");
    assert_eq!(answered.data.as_ref().expect("data")["b"], "2");
    assert_eq!(answered.resource_version().as_deref(), Some(rv.as_str()));
    let dry_patch = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    let json_patch: json_patch::Patch =
        serde_json::from_value(json!([{"op": "add", "path": "/data/e", "value": "5"}]))
            .expect("JSON patch");
    for (patch, key) in [
        (Patch::Merge(json!({"data": {"c": "3"}})), "c"),
        (Patch::Strategic(json!({"data": {"d": "4"}})), "d"),
        (Patch::Json(json_patch), "e"),
    ] {
        let answered = maps
            .patch("live", &dry_patch, &patch)
            .await
            .expect("dry-run patch");
        assert_eq!(answered.data.as_ref().expect("data")[key], key_value(key));
        assert_eq!(answered.resource_version().as_deref(), Some(rv.as_str()));
    }
    let apply = PatchParams::apply("dry-tester").dry_run();
    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "live"}, "data": {"f": "6"}});
    let answered = maps
        .patch("live", &apply, &Patch::Apply(&applied))
        .await
        .expect("dry-run apply");
    assert_eq!(answered.data.as_ref().expect("data")["f"], "6");
    assert!(
        answered
            .managed_fields()
            .iter()
            .any(|f| f.manager.as_deref() == Some("dry-tester")),
        "field management runs"
    );
    let mut missing = applied.clone();
    missing["metadata"]["name"] = json!("applied-ghost");
    maps.patch("applied-ghost", &apply, &Patch::Apply(&missing))
        .await
        .expect("dry-run apply creating");
    assert_eq!(maps.get_opt("applied-ghost").await.expect("get"), None);

    // Deletes: the finalized object would be marked, the plain one removed; both stay.
    let marked = maps
        .delete("live", &dry_delete())
        .await
        .expect("dry-run delete")
        .left()
        .expect("marked object");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert!(
        maps.delete("plain", &dry_delete())
            .await
            .expect("dry-run delete")
            .is_right(),
        "a removal answers a Status"
    );
    let listed = maps
        .delete_collection(&dry_delete(), &ListParams::default())
        .await
        .expect("dry-run deletecollection")
        .left()
        .expect("the deleted objects");
    assert_eq!(listed.items.len(), 2, "live and plain");

    let stored = maps.get("live").await.expect("still there");
    assert_eq!(stored.resource_version().as_deref(), Some(rv.as_str()));
    assert_eq!(stored.data.expect("data").len(), 1, "only a=1");
    assert!(stored.metadata.deletion_timestamp.is_none());
    assert!(maps.get_opt("plain").await.expect("get").is_some());

    // No watch event between the last real write and the next one.
    let marker = maps
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": "marker"}})),
        )
        .await
        .expect("created");
    let mut events = maps
        .watch(&WatchParams::default(), &before_dry_runs)
        .await
        .expect("watch")
        .boxed();
    match events.next().await.expect("an event").expect("event") {
        WatchEvent::Added(first) => assert_eq!(first.name_any(), marker.name_any()),
        other => panic!("the dry runs left an event: {other:?}"),
    }

    // Namespaces: a dry-run delete marks nothing and finalizes nothing.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let marked = namespaces
        .delete("dry", &dry_delete())
        .await
        .expect("dry-run namespace delete")
        .left()
        .expect("namespace");
    assert!(marked.metadata.deletion_timestamp.is_some());
    let stored = namespaces.get("dry").await.expect("namespace");
    assert!(stored.metadata.deletion_timestamp.is_none());
    assert_eq!(
        stored.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    sb.shutdown().await;
}

fn key_value(key: &str) -> &'static str {
    match key {
        "c" => "3",
        "d" => "4",
        _ => "5",
    }
}

#[tokio::test]
async fn dry_runs_through_subresources_change_nothing() {
    let sb = Sandbox::builder()
        .name("dry-run-subresources")
        .start()
        .await
        .expect("sandbox starts");
    let client = sb.client();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    deployments
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": "web"},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})),
        )
        .await
        .expect("created");
    let dry_patch = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    let answered = deployments
        .patch_status(
            "web",
            &dry_patch,
            &Patch::Merge(json!({"status": {"observedGeneration": 42}})),
        )
        .await
        .expect("dry-run status patch");
    assert_eq!(
        answered.status.and_then(|s| s.observed_generation),
        Some(42)
    );
    let stored = deployments.get("web").await.expect("deployment");
    assert_ne!(stored.status.and_then(|s| s.observed_generation), Some(42));

    // Approving a CSR in a dry run neither approves nor signs it.
    let csrs: Api<CertificateSigningRequest> = Api::all(client.clone());
    let request = csr_request("alice", &["developers"]);
    let mut created = csrs
        .create(
            &PostParams::default(),
            &object(csr(
                "alice",
                "kubernetes.io/kube-apiserver-client",
                &request,
                json!(["client auth"]),
            )),
        )
        .await
        .expect("created");
    created.status.get_or_insert_default().conditions = Some(vec![object(
        json!({"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}),
    )]);
    let answered = csrs
        .replace_subresource("approval", "alice", &dry_post(), &created)
        .await
        .expect("dry-run approval");
    assert!(answered.status.and_then(|s| s.conditions).is_some());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stored = csrs.get("alice").await.expect("csr");
    let status = stored.status.unwrap_or_default();
    assert!(status.conditions.is_none() && status.certificate.is_none());
    sb.shutdown().await;
}

#[tokio::test]
async fn dry_run_values_other_than_all_are_refused() {
    let sb = Sandbox::builder()
        .name("dry-run-values")
        .start()
        .await
        .expect("sandbox starts");
    let request = Request::builder()
        .method(Method::POST)
        .uri("/api/v1/namespaces/default/configmaps?dryRun=Partial")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(br#"{"metadata":{"name":"x"}}"#.to_vec())
        .expect("request");
    let response = sb
        .client()
        .send(request.map(kube::client::Body::from))
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = serde_json::from_slice(
        &response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes(),
    )
    .expect("Status");
    assert_eq!(
        body["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Partial\"}: supported values: \"All\""
    );
    assert_eq!(body["reason"], "Invalid");
    let maps: Api<ConfigMap> = Api::namespaced(sb.client(), "default");
    assert_eq!(maps.get_opt("x").await.expect("get"), None);
    sb.shutdown().await;
}
