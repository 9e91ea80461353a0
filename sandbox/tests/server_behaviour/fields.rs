//! CRD selectable fields in lists and watches, and server-side apply removing only what no other applier manages.

use super::*;

/// CRD versions' selectableFields (apiextensions v1.30+) extend the field selectors of their
/// objects, as Gardener's ControllerInstallation `spec.seedRef.name` and Bastion `spec.seedName`
/// need; other fields keep kube-apiserver's 400.
#[tokio::test]
async fn crd_selectable_fields_filter_lists_and_watches() {
    let sb = sandbox("selectable").await;
    let crd = |plural: &str, kind: &str, scope: &str, path: &str| {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.core.gardener.cloud")},
            "spec": {"group": "core.gardener.cloud", "scope": scope,
                "names": {"plural": plural, "kind": kind},
                "versions": [{"name": "v1beta1", "served": true, "storage": true,
                    "selectableFields": [{"jsonPath": path}],
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]},
        })
    };
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    create(
        &sb,
        crds,
        crd(
            "controllerinstallations",
            "ControllerInstallation",
            "Cluster",
            ".spec.seedRef.name",
        ),
    )
    .await;
    create(
        &sb,
        crds,
        crd("bastions", "Bastion", "Namespaced", ".spec.seedName"),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let installations = "/apis/core.gardener.cloud/v1beta1/controllerinstallations";
    for (name, seed) in [("a-1", "seed-a"), ("b-1", "seed-b"), ("a-2", "seed-a")] {
        create(
            &sb,
            installations,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerInstallation",
                "metadata": {"name": name}, "spec": {"seedRef": {"name": seed}}}),
        )
        .await;
    }
    let bastions = "/apis/core.gardener.cloud/v1beta1/namespaces/default/bastions";
    for (name, seed) in [("x", "seed-a"), ("y", "seed-b")] {
        create(
            &sb,
            bastions,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Bastion",
                "metadata": {"name": name}, "spec": {"seedName": seed}}),
        )
        .await;
    }
    let names = |list: &Value| -> Vec<String> {
        list["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                i["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    };
    let (status, _, list) = send(
        &sb,
        Method::GET,
        &format!("{installations}?fieldSelector=spec.seedRef.name%3Dseed-a"),
        None,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(names(&list), ["a-1", "a-2"]);
    let (_, _, list) = send(
        &sb,
        Method::GET,
        &format!("{installations}?fieldSelector=spec.seedRef.name!%3Dseed-a"),
        None,
        None,
    )
    .await;
    assert_eq!(names(&list), ["b-1"]);
    let (_, _, list) = send(
        &sb,
        Method::GET,
        &format!("{bastions}?fieldSelector=spec.seedName%3Dseed-b"),
        None,
        None,
    )
    .await;
    assert_eq!(names(&list), ["y"]);
    let (status, _, error) = send(
        &sb,
        Method::GET,
        &format!("{bastions}?fieldSelector=spec.other%3Dx"),
        None,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        error["message"],
        "\"spec.other\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );
    let (_, _, events) = send(
        &sb,
        Method::GET,
        &format!(
            "{installations}?watch=1&timeoutSeconds=1&fieldSelector=spec.seedRef.name%3Dseed-b"
        ),
        None,
        None,
    )
    .await;
    let text = stream_text(&events);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("\"b-1\""), "{text}");
    sb.shutdown().await;
}

/// Sends a server-side apply of `body` as `manager`.
async fn apply(sb: &Sandbox, path: &str, manager: &str, body: Value) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(Method::PATCH)
        .uri(format!("{path}?fieldManager={manager}"))
        .header(http::header::CONTENT_TYPE, "application/apply-patch+yaml")
        .body(serde_json::to_vec(&body).expect("json body"))
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
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn managers_of(object: &Value) -> Vec<String> {
    let mut out: Vec<String> = object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            format!(
                "{}/{}",
                e["manager"].as_str().unwrap_or_default(),
                e["operation"].as_str().unwrap_or_default()
            )
        })
        .collect();
    out.sort();
    out
}

/// structured-merge-diff over HTTP: a field another applier shares survives its removal from
/// one applier's config; a field only an updater shares goes, and the updater leaves
/// managedFields.
#[tokio::test]
async fn server_side_apply_removes_only_what_no_other_applier_manages() {
    let sb = sandbox("ssa-removal").await;
    let path = "/api/v1/namespaces/default/configmaps/shared";
    let cm = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": data});
    let (status, _) = apply(
        &sb,
        path,
        "alpha",
        cm(json!({"a": "1", "b": "2", "c": "3"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = apply(&sb, path, "beta", cm(json!({"a": "1"}))).await;
    assert_eq!(status, StatusCode::OK);
    // gamma takes c by an update; alpha then applies gamma's value, so both own c.
    let request = Request::builder()
        .method(Method::PATCH)
        .uri(format!("{path}?fieldManager=gamma"))
        .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
        .body(serde_json::to_vec(&json!({"data": {"c": "33"}})).expect("json"))
        .expect("request");
    let response = sb
        .client()
        .send(request.map(kube::client::Body::from))
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let (status, object) = apply(
        &sb,
        path,
        "alpha",
        cm(json!({"a": "1", "b": "2", "c": "33"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{object}");
    assert_eq!(
        managers_of(&object),
        ["alpha/Apply", "beta/Apply", "gamma/Update"]
    );

    let (status, object) = apply(&sb, path, "alpha", cm(json!({"b": "2"}))).await;
    assert_eq!(status, StatusCode::OK, "{object}");
    assert_eq!(
        object["data"],
        json!({"a": "1", "b": "2"}),
        "a stays (beta applies it), c goes"
    );
    assert_eq!(managers_of(&object), ["alpha/Apply", "beta/Apply"]);
    sb.shutdown().await;
}
