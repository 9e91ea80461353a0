//! Conformance-style tests of kube-apiserver behaviours clients depend on, through raw HTTP
//! requests (kube-rs's client, real TLS) against an in-process sandbox: CSR admission, server-side
//! printing (Tables), OpenAPI documents, and the start-up/restart behaviours of a real control
//! plane. Expected answers follow kube-apiserver v1.24's sources (cited per test).

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{Method, Request, StatusCode};
use rustls_pki_types::pem::PemObject;
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};
use x509_parser::prelude::FromDer;

async fn sandbox(name: &str) -> Sandbox {
    Sandbox::builder()
        .name(name)
        .start()
        .await
        .expect("sandbox starts")
}

/// Sends one request as admin; returns status, content type and body (JSON when it parses,
/// else a string).
async fn send(
    sb: &Sandbox,
    method: Method,
    path: &str,
    accept: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, String, Value) {
    let mut builder = Request::builder().method(method).uri(path);
    if let Some(accept) = accept {
        builder = builder.header(http::header::ACCEPT, accept);
    }
    let bytes = match body {
        Some(body) => {
            builder = builder.header(http::header::CONTENT_TYPE, "application/json");
            serde_json::to_vec(&body).expect("json body")
        }
        None => Vec::new(),
    };
    let request = builder.body(bytes).expect("request builds");
    let response = sb
        .client()
        .send(request.map(kube::client::Body::from))
        .await
        .expect("request sent");
    let status = response.status();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("body read")
        .to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, content_type, value)
}

/// A base64 PEM certificate request for CN `user`, O `groups`.
pub(crate) fn csr_request(user: &str, groups: &[&str]) -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    for group in groups {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, *group);
    }
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, user);
    let pem = params
        .serialize_request(&key)
        .expect("request")
        .pem()
        .expect("pem");
    STANDARD.encode(pem)
}

pub(crate) fn csr(name: &str, signer: &str, request: &str, usages: Value) -> Value {
    json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": request, "signerName": signer, "usages": usages},
    })
}

const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

/// plugin/pkg/admission/certificates/subjectrestriction: the kube-apiserver-client signer refuses
/// subjects in `system:masters` with admission's Forbidden; other signers and groups pass.
#[tokio::test]
async fn kube_apiserver_client_signer_refuses_system_masters() {
    let sb = sandbox("csr-masters").await;
    let client_signer = "kubernetes.io/kube-apiserver-client";
    let request = csr_request("mallory", &["system:masters"]);
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr(
            "masters",
            client_signer,
            &request,
            json!(["client auth"]),
        )),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        body["message"],
        "certificatesigningrequests.certificates.k8s.io \"masters\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    );
    assert_eq!(body["reason"], "Forbidden");
    assert_eq!(
        body["details"],
        json!({"name": "masters", "group": "certificates.k8s.io", "kind": "certificatesigningrequests"})
    );
    let (status, _, _) = send(&sb, Method::GET, &format!("{CSRS}/masters"), None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing was stored");

    // Another signer may carry the group; the client signer takes other groups.
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr(
            "other-signer",
            "example.com/signer",
            &request,
            json!(["client auth"]),
        )),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let ordinary = csr_request("alice", &["developers"]);
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr(
            "alice",
            client_signer,
            &ordinary,
            json!(["client auth"]),
        )),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    sb.shutdown().await;
}

/// pkg/apis/certificates/validation: validation (422) comes before admission (403), and duplicate
/// usages and bad signer names carry kube-apiserver's causes.
#[tokio::test]
async fn csr_validation_causes_come_before_admission() {
    let sb = sandbox("csr-validation").await;
    let request = csr_request("mallory", &["system:masters"]);
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr(
            "dup",
            "kubernetes.io/kube-apiserver-client",
            &request,
            json!(["client auth", "client auth"]),
        )),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "FieldValueDuplicate", "message": "Duplicate value: \"client auth\"", "field": "spec.usages[1]"}])
    );
    let (status, _, body) = send(
        &sb,
        Method::POST,
        CSRS,
        None,
        Some(csr("nodomain", "signer", &request, json!(["client auth"]))),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "FieldValueInvalid", "message": "Invalid value: \"signer\": must be a fully qualified domain and path of the form 'example.com/signer-name'", "field": "spec.signerName"}])
    );
    sb.shutdown().await;
}

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

/// The first `n` cells of a row.
fn cells(cells: &Value, n: usize) -> Vec<Value> {
    cells
        .as_array()
        .expect("cells")
        .iter()
        .take(n)
        .cloned()
        .collect()
}

fn column_names(table: &Value) -> Vec<String> {
    table["columnDefinitions"]
        .as_array()
        .expect("column definitions")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn create(sb: &Sandbox, path: &str, body: Value) {
    let (status, _, answer) = send(sb, Method::POST, path, None, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "create at {path}: {answer}");
}

/// A CRD with printer columns of each type (a filter path, a priority-1 column, a described one)
/// and one without columns.
fn printer_crds() -> (Value, Value) {
    let columns = json!([
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size", "description": "How big"},
        {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
        {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
        {"name": "Weight", "type": "number", "format": "float", "jsonPath": ".spec.weight"},
        {"name": "Since", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]);
    let crd = |plural: &str, kind: &str, columns: Option<Value>| {
        let mut version = json!({"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
        if let Some(columns) = columns {
            version["additionalPrinterColumns"] = columns;
        }
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.print.example.com")},
            "spec": {"group": "print.example.com", "scope": "Namespaced",
                "names": {"plural": plural, "kind": kind}, "versions": [version]},
        })
    };
    (
        crd("widgets", "Widget", Some(columns)),
        crd("gadgets", "Gadget", None),
    )
}

/// staging/src/k8s.io/apiextensions-apiserver/.../tableconvertor: Name first, then the printer
/// columns with their type, format, priority and description (a default one naming the path),
/// cells of the column's type, null where the path finds nothing; Name/Age without columns.
#[tokio::test]
async fn custom_resources_print_their_printer_columns() {
    let sb = sandbox("table-crd").await;
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (widgets, gadgets) = printer_crds();
    create(&sb, crds, widgets).await;
    create(&sb, crds, gadgets).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let base = "/apis/print.example.com/v1/namespaces/default";
    create(
        &sb,
        &format!("{base}/widgets"),
        json!({"apiVersion": "print.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
            "spec": {"size": 3, "color": "red"},
            "status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}}),
    )
    .await;
    create(
        &sb,
        &format!("{base}/gadgets"),
        json!({"apiVersion": "print.example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"}}),
    )
    .await;

    let (status, _, table) = send(
        &sb,
        Method::GET,
        &format!("{base}/widgets"),
        Some(TABLE),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{table}");
    assert_eq!(
        (table["kind"].as_str(), table["apiVersion"].as_str()),
        (Some("Table"), Some("meta.k8s.io/v1"))
    );
    let definitions = &table["columnDefinitions"];
    assert_eq!(
        column_names(&table),
        ["Name", "Size", "Color", "Ready", "Weight", "Since"]
    );
    assert_eq!(definitions[0]["format"], "name");
    assert_eq!(definitions[1]["type"], "integer");
    assert_eq!(definitions[1]["description"], "How big");
    assert_eq!(definitions[2]["priority"], 1);
    assert_eq!(
        definitions[3]["description"],
        "Custom resource definition column (in JSONPath format): .status.conditions[?(@.type==\"Ready\")].status"
    );
    assert_eq!(definitions[4]["format"], "float");
    let row = &table["rows"][0];
    assert_eq!(
        cells(&row["cells"], 5),
        [
            json!("w1"),
            json!(3),
            json!("red"),
            json!("True"),
            Value::Null
        ]
    );
    assert!(
        row["cells"][5]
            .as_str()
            .is_some_and(|age| age.ends_with('s')),
        "{row}"
    );
    assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(row["object"]["metadata"]["name"], "w1");
    assert!(table["metadata"]["resourceVersion"].is_string());

    let (_, _, table) = send(
        &sb,
        Method::GET,
        &format!("{base}/gadgets/g1"),
        Some(TABLE),
        None,
    )
    .await;
    assert_eq!(column_names(&table), ["Name", "Age"]);
    assert_eq!(table["columnDefinitions"][1]["type"], "date");
    assert_eq!(table["rows"].as_array().map(Vec::len), Some(1));
    sb.shutdown().await;
}

/// pkg/printers/internalversion: the built-in kinds' columns, single objects and lists, and
/// includeObject None/Metadata/Object (handlers/response.go asTable).
#[tokio::test]
async fn built_in_kinds_print_kube_apiserver_columns() {
    let sb = sandbox("table-builtin").await;
    create(
        &sb,
        "/api/v1/namespaces/default/configmaps",
        json!({"metadata": {"name": "cm"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}),
    )
    .await;
    create(
        &sb,
        "/api/v1/namespaces/default/secrets",
        json!({"metadata": {"name": "s"}, "type": "kubernetes.io/tls", "stringData": {"tls.crt": "x", "tls.key": "y"}}),
    )
    .await;
    create(
        &sb,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "agent-1"}}),
    )
    .await;
    let configmap = "/api/v1/namespaces/default/configmaps/cm";
    let (_, _, table) = send(&sb, Method::GET, configmap, Some(TABLE), None).await;
    assert_eq!(column_names(&table), ["Name", "Data", "Age"]);
    assert_eq!(
        cells(&table["rows"][0]["cells"], 2),
        [json!("cm"), json!(3)]
    );
    let (_, _, table) = send(
        &sb,
        Method::GET,
        &format!("{configmap}?includeObject=Object"),
        Some(TABLE),
        None,
    )
    .await;
    assert_eq!(
        table["rows"][0]["object"]["data"],
        json!({"a": "1", "b": "2"})
    );
    let (_, _, table) = send(
        &sb,
        Method::GET,
        &format!("{configmap}?includeObject=None"),
        Some(TABLE),
        None,
    )
    .await;
    assert_eq!(table["rows"][0]["object"], Value::Null);
    let (status, _, error) = send(
        &sb,
        Method::GET,
        &format!("{configmap}?includeObject=All"),
        Some(TABLE),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(
        error["message"],
        "unrecognized includeObject value: \"All\""
    );

    let (_, _, table) = send(
        &sb,
        Method::GET,
        "/api/v1/namespaces/default/secrets",
        Some(TABLE),
        None,
    )
    .await;
    assert_eq!(column_names(&table), ["Name", "Type", "Data", "Age"]);
    assert_eq!(
        cells(&table["rows"][0]["cells"], 3),
        [json!("s"), json!("kubernetes.io/tls"), json!(2)]
    );
    let (_, _, table) = send(
        &sb,
        Method::GET,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        Some(TABLE),
        None,
    )
    .await;
    assert_eq!(column_names(&table), ["Name", "Holder", "Age"]);
    assert_eq!(table["rows"][0]["cells"][1], "agent-1");
    let (_, _, table) = send(&sb, Method::GET, "/api/v1/namespaces", Some(TABLE), None).await;
    assert_eq!(column_names(&table), ["Name", "Status", "Age"]);
    let default = table["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["cells"][0] == "default"))
        .expect("default namespace row");
    assert_eq!(default["cells"][1], "Active");
    for (path, columns) in [
        (
            "/apis/apps/v1/deployments",
            vec![
                "Name",
                "Ready",
                "Up-to-date",
                "Available",
                "Age",
                "Containers",
                "Images",
                "Selector",
            ],
        ),
        (
            "/api/v1/pods",
            vec![
                "Name",
                "Ready",
                "Status",
                "Restarts",
                "Age",
                "IP",
                "Node",
                "Nominated Node",
                "Readiness Gates",
            ],
        ),
        (
            "/api/v1/events",
            vec![
                "Last Seen",
                "Type",
                "Reason",
                "Object",
                "Subobject",
                "Source",
                "Message",
                "First Seen",
                "Count",
                "Name",
            ],
        ),
        (
            CSRS,
            vec![
                "Name",
                "Age",
                "SignerName",
                "Requestor",
                "RequestedDuration",
                "Condition",
            ],
        ),
        ("/api/v1/serviceaccounts", vec!["Name", "Created At"]),
    ] {
        let (status, _, table) = send(&sb, Method::GET, path, Some(TABLE), None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {table}");
        assert_eq!(column_names(&table), columns, "{path}");
    }
    // Plain JSON is still served when the client prefers it.
    let (_, _, list) = send(
        &sb,
        Method::GET,
        "/api/v1/namespaces",
        Some("application/json"),
        None,
    )
    .await;
    assert_eq!(list["kind"], "NamespaceList");
    sb.shutdown().await;
}

/// handlers/get.go: a watch asked for Tables sends one Table per event, with the column
/// definitions on the first event only.
#[tokio::test]
async fn watch_events_are_tables_with_headers_once() {
    let sb = sandbox("table-watch").await;
    for name in ["a", "b"] {
        create(
            &sb,
            "/api/v1/namespaces/default/configmaps",
            json!({"metadata": {"name": name}, "data": {"k": "v"}}),
        )
        .await;
    }
    let (status, _, body) = send(
        &sb,
        Method::GET,
        "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1",
        Some(TABLE),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let text = body.as_str().expect("a stream of JSON lines");
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("event line"))
        .collect();
    assert_eq!(events.len(), 2, "{text}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["kind"], "Table");
    assert_eq!(column_names(&events[0]["object"]), ["Name", "Data", "Age"]);
    assert_eq!(events[0]["object"]["rows"][0]["cells"][0], "a");
    assert_eq!(events[1]["object"]["columnDefinitions"], Value::Null);
    assert_eq!(events[1]["object"]["rows"][0]["cells"][0], "b");
    sb.shutdown().await;
}

/// kube-apiserver's OpenAPI endpoints: the v3 index links each group version with a content hash;
/// documents follow CRD changes; definitions carry x-kubernetes-group-version-kind; v2 is JSON
/// unless protobuf is asked for.
#[tokio::test]
async fn openapi_documents_follow_crds() {
    let sb = sandbox("openapi").await;
    let (status, _, index) = send(&sb, Method::GET, "/openapi/v3", None, None).await;
    assert_eq!(status, StatusCode::OK, "{index}");
    let core = index["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .expect("core group version listed");
    assert!(core.starts_with("/openapi/v3/api/v1?hash="), "{core}");
    assert!(index["paths"]["apis/print.example.com/v1"].is_null());
    let (_, _, document) = send(&sb, Method::GET, core, None, None).await;
    let configmap = &document["components"]["schemas"]["io.k8s.api.core.v1.ConfigMap"];
    assert_eq!(
        configmap["x-kubernetes-group-version-kind"],
        json!([{"group": "", "kind": "ConfigMap", "version": "v1"}])
    );
    assert!(
        document["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
            .is_object(),
        "referenced definitions are included"
    );
    let patch = &document["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"];
    assert_eq!(patch["x-kubernetes-action"], "patch");

    let (widgets, _) = printer_crds();
    create(
        &sb,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        widgets,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, _, index) = send(&sb, Method::GET, "/openapi/v3", None, None).await;
    let url = index["paths"]["apis/print.example.com/v1"]["serverRelativeURL"]
        .as_str()
        .expect("the CRD's group version is listed once it exists")
        .to_owned();
    let (_, _, document) = send(&sb, Method::GET, &url, None, None).await;
    let widget = &document["components"]["schemas"]["com.example.print.v1.Widget"];
    assert_eq!(
        widget["x-kubernetes-group-version-kind"],
        json!([{"group": "print.example.com", "kind": "Widget", "version": "v1"}])
    );
    assert_eq!(widget["properties"]["apiVersion"]["type"], "string");
    assert_eq!(
        widget["properties"]["metadata"]["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}])
    );

    let (_, content_type, v2) = send(
        &sb,
        Method::GET,
        "/openapi/v2",
        Some("application/json"),
        None,
    )
    .await;
    assert_eq!(content_type, "application/json");
    assert_eq!(v2["swagger"], "2.0");
    assert!(v2["definitions"]["com.example.print.v1.Widget"].is_object());
    let (_, content_type, _) = send(
        &sb,
        Method::GET,
        "/openapi/v2",
        Some("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
        None,
    )
    .await;
    assert_eq!(
        content_type,
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    );

    let (status, _, _) = send(
        &sb,
        Method::DELETE,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.print.example.com",
        None,
        None,
    )
    .await;
    assert!(status.is_success());
    let gone = async {
        loop {
            let (_, _, index) = send(&sb, Method::GET, "/openapi/v3", None, None).await;
            if index["paths"]["apis/print.example.com/v1"].is_null() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .expect("a deleted CRD's group version leaves the index");
    sb.shutdown().await;
}

/// A watch body as text: `send` parses a single-event stream as one JSON value.
fn stream_text(body: &Value) -> String {
    match body {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A kube client for a user with no groups beyond system:authenticated.
async fn user_client(sb: &Sandbox, user: &str) -> kube::Client {
    let kubeconfig = sb.kubeconfig_for(user, &[]).expect("user certificate");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("kubeconfig loads");
    kube::Client::try_from(config).expect("client builds")
}

async fn status_of(client: &kube::Client, path: &str) -> (StatusCode, String) {
    let request = Request::get(path).body(Vec::new()).expect("request builds");
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("request sent");
    let status = response.status();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .expect("body read")
        .to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// Waits until `check` holds (polling every 20 ms) or panics after `limit`.
async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A starting kube-apiserver: health checks answer 500 naming the failing
/// poststarthook/rbac/bootstrap-roles, and until RBAC is loaded everyone but system:masters is
/// forbidden; both end by themselves. Off by default.
#[tokio::test]
async fn startup_windows_fail_health_and_rbac_then_recover() {
    let startup = seedlet_sandbox::Startup {
        health_failing: Duration::from_millis(800),
        rbac_loading: Duration::from_millis(400),
    };
    let sb = Sandbox::builder()
        .name("startup")
        .startup(startup)
        .start()
        .await
        .expect("sandbox starts");
    let admin = sb.client();
    let viewer = user_client(&sb, "viewer").await;
    let (status, body) = status_of(&admin, "/healthz").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert!(body.contains("[+]ping ok\n"), "{body}");
    assert!(
        body.contains("[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n"),
        "{body}"
    );
    assert!(body.ends_with("healthz check failed\n"), "{body}");
    let (status, body) = status_of(&admin, "/readyz").await;
    assert!(
        status == StatusCode::INTERNAL_SERVER_ERROR && body.ends_with("readyz check failed\n"),
        "{body}"
    );
    let (status, body) = status_of(&viewer, "/api").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "RBAC not loaded yet: {body}");
    assert!(
        body.contains("forbidden: User \\\"viewer\\\" cannot get path \\\"/api\\\""),
        "{body}"
    );
    let (status, _) = status_of(&admin, "/api/v1/namespaces").await;
    assert_eq!(status, StatusCode::OK, "system:masters does not need RBAC");

    eventually(Duration::from_secs(5), "RBAC loaded", || async {
        status_of(&viewer, "/api").await.0 == StatusCode::OK
    })
    .await;
    eventually(Duration::from_secs(5), "healthy", || async {
        status_of(&admin, "/healthz").await == (StatusCode::OK, "ok".to_owned())
    })
    .await;
    sb.shutdown().await;

    let plain = sandbox("no-startup").await;
    assert_eq!(
        status_of(&plain.client(), "/healthz").await.0,
        StatusCode::OK
    );
    plain.shutdown().await;
}

/// After a restart kube-apiserver's watch cache starts at the current resourceVersion: watches
/// from before it get 410 Gone ("too old resource version"), from now on they work; open watches
/// end.
#[tokio::test]
async fn watches_from_before_a_restart_are_gone() {
    let sb = sandbox("restart").await;
    let path = "/api/v1/namespaces/default/configmaps";
    create(&sb, path, json!({"metadata": {"name": "before"}})).await;
    let (_, _, list) = send(&sb, Method::GET, path, None, None).await;
    let old = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    create(&sb, path, json!({"metadata": {"name": "later"}})).await;
    let (_, _, list) = send(&sb, Method::GET, path, None, None).await;
    let current = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();

    let (_, _, events) = send(
        &sb,
        Method::GET,
        &format!("{path}?watch=1&resourceVersion={old}&timeoutSeconds=1"),
        None,
        None,
    )
    .await;
    assert!(
        stream_text(&events).contains("\"ADDED\""),
        "before the restart the history is there: {events}"
    );

    sb.simulate_restart(seedlet_sandbox::Startup {
        health_failing: Duration::ZERO,
        rbac_loading: Duration::ZERO,
    });
    let (_, _, events) = send(
        &sb,
        Method::GET,
        &format!("{path}?watch=1&resourceVersion={old}&timeoutSeconds=1"),
        None,
        None,
    )
    .await;
    let text = stream_text(&events);
    let line: Value =
        serde_json::from_str(text.lines().next().expect("one event")).expect("event JSON");
    assert_eq!(line["type"], "ERROR");
    assert_eq!(line["object"]["code"], 410);
    assert_eq!(line["object"]["reason"], "Expired");
    assert!(
        line["object"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(&format!("too old resource version: {old} ("))),
        "{line}"
    );

    let (_, _, events) = send(
        &sb,
        Method::GET,
        &format!("{path}?watch=1&resourceVersion={current}&timeoutSeconds=1"),
        None,
        None,
    )
    .await;
    assert_eq!(
        events,
        Value::String(String::new()),
        "a watch from the current version just waits"
    );
    sb.shutdown().await;
}

/// kube-controller-manager's root-ca-cert-publisher (opt-in): kube-root-ca.crt with the cluster CA
/// in every namespace, new ones included, recreated after a delete and reset after a change.
#[tokio::test]
async fn root_ca_configmaps_are_published_in_every_namespace() {
    let sb = Sandbox::builder()
        .name("root-ca")
        .publish_root_ca(true)
        .start()
        .await
        .expect("sandbox starts");
    let ca = sb.ca_cert_pem();
    let ca_in = |namespace: &str| {
        let sb = &sb;
        let path = format!("/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt");
        async move {
            let (status, _, body) = send(sb, Method::GET, &path, None, None).await;
            (status == StatusCode::OK).then_some(body)
        }
    };
    for namespace in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        eventually(Duration::from_secs(5), namespace, || async {
            ca_in(namespace).await.is_some()
        })
        .await;
    }
    let published = ca_in("default").await.expect("published");
    assert_eq!(published["data"], json!({"ca.crt": ca}));
    assert!(
        published["metadata"]["annotations"]["kubernetes.io/description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Contains a CA bundle"))
    );

    create(
        &sb,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "fresh"}}),
    )
    .await;
    eventually(Duration::from_secs(5), "new namespace", || async {
        ca_in("fresh").await.is_some()
    })
    .await;
    let path = "/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt";
    let (status, _, _) = send(&sb, Method::DELETE, path, None, None).await;
    assert!(status.is_success());
    eventually(Duration::from_secs(5), "recreated", || async {
        ca_in("fresh").await.is_some()
    })
    .await;
    let mut changed = ca_in("fresh").await.expect("there");
    changed["data"]["ca.crt"] = json!("tampered");
    let (status, _, _) = send(&sb, Method::PUT, path, None, Some(changed)).await;
    assert_eq!(status, StatusCode::OK);
    eventually(Duration::from_secs(5), "reset", || async {
        ca_in("fresh")
            .await
            .is_some_and(|cm| cm["data"]["ca.crt"] == json!(ca))
    })
    .await;
    sb.shutdown().await;

    let plain = sandbox("no-root-ca").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, _, _) = send(
        &plain,
        Method::GET,
        "/api/v1/namespaces/default/configmaps/kube-root-ca.crt",
        None,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "off by default");
    plain.shutdown().await;
}

/// pkg/controller/certificates/signer: issued certificates start five minutes before signing
/// (clock skew between control plane and clients).
#[tokio::test]
async fn issued_certificates_are_backdated_five_minutes() {
    let sb = sandbox("backdate").await;
    let request = csr_request("alice", &["developers"]);
    create(
        &sb,
        CSRS,
        csr(
            "alice",
            "kubernetes.io/kube-apiserver-client",
            &request,
            json!(["client auth"]),
        ),
    )
    .await;
    let (_, _, mut object) = send(&sb, Method::GET, &format!("{CSRS}/alice"), None, None).await;
    object["status"]["conditions"] =
        json!([{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]);
    let (status, _, body) = send(
        &sb,
        Method::PUT,
        &format!("{CSRS}/alice/approval"),
        None,
        Some(object),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let signed_at = jiff::Timestamp::now().as_second();
    let mut certificate = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while certificate.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no certificate issued"
        );
        let (_, _, object) = send(&sb, Method::GET, &format!("{CSRS}/alice"), None, None).await;
        certificate = object["status"]["certificate"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pem = STANDARD.decode(certificate).expect("base64");
    let der = rustls_pki_types::CertificateDer::from_pem_slice(&pem).expect("PEM certificate");
    let (_, parsed) = x509_parser::certificate::X509Certificate::from_der(&der).expect("X.509");
    let not_before = parsed.validity().not_before.timestamp();
    assert!(
        (signed_at - 300 - 5..=signed_at - 300 + 1).contains(&not_before),
        "NotBefore {not_before} is five minutes before {signed_at}"
    );
    sb.shutdown().await;
}

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
