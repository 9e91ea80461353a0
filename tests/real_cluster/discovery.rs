//! The sandbox's discovery and server-side printing against a real kube-apiserver v1.32: for
//! every resource both serve, the discovery entry (`singularName`, `shortNames`, `verbs`,
//! `categories`, `kind`, `namespaced`) and the Table columns `kubectl get -o wide` shows (name,
//! type, format, description, priority) must be the same. Kinds the sandbox prints with only
//! the generic Name and Created At columns are listed in [`PRINTED_GENERICALLY`]; the test fails
//! when one of them starts to match, so the list only shrinks. The kinds printed by
//! `sandbox/src/registry/printers/more.rs` are also compared cell by cell for one object each.

use seedlet_testkit::realkube::{ControlPlane, ControlPlaneOptions, KubeAssets};
use serde_json::{Value, json};

use super::one_at_a_time;

/// Collections kube-apiserver prints with kind-specific columns and the sandbox does not yet.
const PRINTED_GENERICALLY: &[&str] = &[
    "/api/v1/endpoints",
    "/api/v1/nodes",
    "/api/v1/persistentvolumeclaims",
    "/api/v1/persistentvolumes",
    "/api/v1/resourcequotas",
    "/apis/apps/v1/controllerrevisions",
    "/apis/apps/v1/daemonsets",
    "/apis/apps/v1/replicasets",
    "/apis/apps/v1/statefulsets",
    "/apis/batch/v1/cronjobs",
    "/apis/batch/v1/jobs",
    "/apis/autoscaling/v2/horizontalpodautoscalers",
    "/apis/networking.k8s.io/v1/ingresses",
    "/apis/storage.k8s.io/v1/storageclasses",
    "/apis/discovery.k8s.io/v1/endpointslices",
];

/// GET `path` as JSON (or as a Table with `table`); `None` unless the answer is 200.
async fn get(client: &kube::Client, path: &str, table: bool) -> Option<Value> {
    let mut request = http::Request::builder().uri(path);
    if table {
        request = request.header(
            http::header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io",
        );
    }
    let request = request.body(Vec::new()).expect("request builds");
    let text = client.request_text(request).await.ok()?;
    serde_json::from_str(&text).ok()
}

/// The group versions a server lists (`v1` first).
async fn group_versions(client: &kube::Client) -> Vec<String> {
    let mut out = vec!["v1".to_owned()];
    let groups = get(client, "/apis", false).await.expect("group list");
    for group in groups["groups"].as_array().into_iter().flatten() {
        for version in group["versions"].as_array().into_iter().flatten() {
            out.push(
                version["groupVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            );
        }
    }
    out
}

fn prefix(group_version: &str) -> String {
    match group_version {
        "v1" => "/api/v1".to_owned(),
        other => format!("/apis/{other}"),
    }
}

/// The differences between the sandbox's discovery entries and Tables and the real server's,
/// one line each.
async fn differences(sandbox: &kube::Client, real: &kube::Client) -> Vec<String> {
    const FIELDS: &[&str] = &[
        "singularName",
        "shortNames",
        "verbs",
        "categories",
        "kind",
        "namespaced",
    ];
    let mut out = Vec::new();
    for group_version in group_versions(sandbox).await {
        let path = prefix(&group_version);
        let (Some(ours), Some(theirs)) = (
            get(sandbox, &path, false).await,
            get(real, &path, false).await,
        ) else {
            continue;
        };
        let theirs = theirs["resources"].as_array().cloned().unwrap_or_default();
        for resource in ours["resources"].as_array().into_iter().flatten() {
            let name = resource["name"].as_str().unwrap_or_default();
            let Some(real_entry) = theirs.iter().find(|r| r["name"] == name) else {
                continue;
            };
            for field in FIELDS {
                if resource.get(*field) != real_entry.get(*field) {
                    out.push(format!(
                        "{path} {name} {field}: sandbox {:?}, real {:?}",
                        resource.get(*field),
                        real_entry.get(*field)
                    ));
                }
            }
            let listable = resource["verbs"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v == "list"));
            if name.contains('/') || !listable {
                continue;
            }
            let collection = format!("{path}/{name}");
            let (Some(ours), Some(theirs)) = (
                get(sandbox, &collection, true).await,
                get(real, &collection, true).await,
            ) else {
                continue;
            };
            let generic = PRINTED_GENERICALLY.contains(&collection.as_str());
            let differs = ours["columnDefinitions"] != theirs["columnDefinitions"];
            if generic && !differs {
                out.push(format!(
                    "{collection} columns match now: take it off PRINTED_GENERICALLY"
                ));
            } else if differs && !generic {
                out.push(format!(
                    "{collection} columns: sandbox {}, real {}",
                    ours["columnDefinitions"], theirs["columnDefinitions"]
                ));
            }
        }
    }
    out
}

/// Objects of the kinds the sandbox prints with kind-specific cells: (collection, object).
fn printed_objects() -> Vec<(&'static str, Value)> {
    vec![
        (
            "/api/v1/namespaces/default/serviceaccounts",
            json!({"metadata": {"name": "sa"}, "secrets": [{"name": "s"}]}),
        ),
        (
            "/api/v1/namespaces/default/services",
            json!({"metadata": {"name": "svc"}, "spec": {"clusterIP": "None",
            "selector": {"b": "2", "a": "1"}, "ports": [{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "dns", "port": 53, "protocol": "UDP"}]}}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            json!({"metadata": {"name": "rb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "default"},
                {"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}]}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            json!({"metadata": {"name": "crb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}]}),
        ),
        (
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            json!({"metadata": {"name": "vwc"},
            "webhooks": [{"name": "a.example.com", "clientConfig": {"url": "https://127.0.0.1:1/validate"},
                "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Ignore",
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["nothings"]}]}]}),
        ),
        (
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            json!({"metadata": {"name": "pc"}, "value": 1000, "globalDefault": false}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
            json!({"metadata": {"name": "np"},
            "spec": {"podSelector": {"matchLabels": {"z": "1"}, "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev"]}, {"key": "a", "operator": "Exists"}]}}}),
        ),
        (
            "/apis/networking.k8s.io/v1/ingressclasses",
            json!({"metadata": {"name": "ic"}, "spec": {"controller": "example.com/ingress",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "p", "scope": "Cluster"}}}),
        ),
        (
            "/apis/networking.k8s.io/v1/ingressclasses",
            json!({"metadata": {"name": "ic-plain"}, "spec": {"controller": "example.com/ingress"}}),
        ),
        (
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            json!({"metadata": {"name": "pdb"},
            "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}}),
        ),
    ]
}

/// POSTs `object` to `collection` and answers its Table row's cells without the Age cell.
async fn printed_row(client: &kube::Client, collection: &str, object: &Value) -> Vec<Value> {
    let request = http::Request::post(collection)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(object).expect("json"))
        .expect("request builds");
    client
        .request_text(request)
        .await
        .unwrap_or_else(|e| panic!("create in {collection}: {e}"));
    let name = object["metadata"]["name"].as_str().expect("name");
    let table = get(client, &format!("{collection}/{name}"), true)
        .await
        .expect("table");
    let age = table["columnDefinitions"]
        .as_array()
        .and_then(|columns| columns.iter().position(|c| c["name"] == "Age"));
    let mut cells = table["rows"][0]["cells"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    match age {
        Some(age) if age < cells.len() => {
            cells.remove(age);
        }
        Some(_) => panic!("{collection}/{name}: a row shorter than its columns: {table}"),
        None => {}
    }
    cells
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_discovery_and_table_columns_match_a_real_apiserver() {
    let Some(assets) = KubeAssets::or_skip("real_cluster::discovery") else {
        return;
    };
    let _serial = one_at_a_time().await;
    let plane = ControlPlane::start(&assets, ControlPlaneOptions::new("discovery")).await;
    let real = plane.admin_client().await;
    let sandbox = seedlet_sandbox::Sandbox::builder()
        .name("discovery")
        .start()
        .await
        .expect("sandbox starts");
    let mut found = differences(&sandbox.client(), &real).await;
    for (collection, object) in printed_objects() {
        let ours = printed_row(&sandbox.client(), collection, &object).await;
        let theirs = printed_row(&real, collection, &object).await;
        if ours != theirs {
            found.push(format!(
                "{collection} cells: sandbox {ours:?}, real {theirs:?}"
            ));
        }
    }
    sandbox.shutdown().await;
    assert!(
        found.is_empty(),
        "{} differences:\n{}",
        found.len(),
        found.join("\n")
    );
}
