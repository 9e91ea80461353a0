//! The sandbox's discovery and server-side printing against a real kube-apiserver v1.32: for
//! every resource both serve, the discovery entry (`singularName`, `shortNames`, `verbs`,
//! `categories`, `kind`, `namespaced`) and the Table columns `kubectl get -o wide` shows (name,
//! type, format, description, priority) must be the same. Kinds the sandbox prints with only
//! the generic Name and Created At columns are listed in [`PRINTED_GENERICALLY`]; the test fails
//! when one of them starts to match, so the list only shrinks.

use seedlet_testkit::realkube::{ControlPlane, ControlPlaneOptions, KubeAssets};
use serde_json::Value;

use super::one_at_a_time;

/// Collections kube-apiserver prints with kind-specific columns and the sandbox does not yet.
const PRINTED_GENERICALLY: &[&str] = &[
    "/api/v1/endpoints",
    "/api/v1/nodes",
    "/api/v1/persistentvolumeclaims",
    "/api/v1/persistentvolumes",
    "/api/v1/resourcequotas",
    "/api/v1/serviceaccounts",
    "/api/v1/services",
    "/apis/apps/v1/controllerrevisions",
    "/apis/apps/v1/daemonsets",
    "/apis/apps/v1/replicasets",
    "/apis/apps/v1/statefulsets",
    "/apis/batch/v1/cronjobs",
    "/apis/batch/v1/jobs",
    "/apis/autoscaling/v2/horizontalpodautoscalers",
    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "/apis/rbac.authorization.k8s.io/v1/rolebindings",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    "/apis/scheduling.k8s.io/v1/priorityclasses",
    "/apis/policy/v1/poddisruptionbudgets",
    "/apis/networking.k8s.io/v1/ingressclasses",
    "/apis/networking.k8s.io/v1/ingresses",
    "/apis/networking.k8s.io/v1/networkpolicies",
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
    let found = differences(&sandbox.client(), &real).await;
    sandbox.shutdown().await;
    assert!(
        found.is_empty(),
        "{} differences:\n{}",
        found.len(),
        found.join("\n")
    );
}
