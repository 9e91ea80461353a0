//! Server-side printing (Tables for gets, lists and watches, CRD printer columns) and the OpenAPI documents.

use super::*;

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
        ("/api/v1/serviceaccounts", vec!["Name", "Secrets", "Age"]),
        (
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            vec!["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"],
        ),
        // A kind without its own printer yet: kube-apiserver's default columns.
        (
            "/apis/storage.k8s.io/v1/storageclasses",
            vec!["Name", "Created At"],
        ),
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
