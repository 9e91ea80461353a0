//! End-to-end tests of two small garden controllers: the extension ClusterRole binding (spec
//! garden-controllers §2.9) and the TTL of non-Shoot Events (§10, on only when configured).

use seedlet_testkit as common;

use std::time::Duration;

use common::{wait_for, wait_until};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Event, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::PostParams;
use kube::{Api, ResourceExt};
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

async fn garden(config: &str) -> (Sandbox, kube::Client, CancellationToken) {
    let sandbox = seedlet_testkit::start_sandbox("garden").await;
    let client = sandbox.client();
    common::prepare_garden(&client).await;
    for namespace in ["garden-dev", "kube-system", "seed-other"] {
        common::ensure_namespace(&client, namespace).await;
    }
    let shutdown = CancellationToken::new();
    common::start_garden_from(
        client.clone(),
        common::garden_config(config),
        shutdown.clone(),
        |g| g,
    )
    .await;
    (sandbox, client, shutdown)
}

async fn create<K>(api: &Api<K>, value: Value) -> K
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + serde::Serialize,
{
    let object: K = serde_json::from_value(value).expect("object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("create")
}

fn sa(namespace: &str, name: &str, labelled: bool) -> Value {
    let labels = if labelled {
        json!({"app": "ext"})
    } else {
        json!({})
    };
    json!({"metadata": {"name": name, "namespace": namespace, "labels": labels}})
}

fn subjects(binding: &ClusterRoleBinding) -> Vec<String> {
    binding
        .subjects
        .iter()
        .flatten()
        .map(|s| format!("{}/{}", s.namespace.clone().unwrap_or_default(), s.name))
        .collect()
}

#[tokio::test]
async fn extension_cluster_role_is_bound_to_matching_extension_service_accounts() {
    let (sandbox, client, shutdown) = garden(
        "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenControllerConfiguration\n",
    )
    .await;
    for (namespace, name, labelled) in [
        ("seed-local", "ext-a", true),
        ("garden-dev", "extension-shoot--x", true),
        ("kube-system", "extension-shoot--x", true),
        ("seed-local", "unlabelled", false),
    ] {
        create(
            &Api::<ServiceAccount>::namespaced(client.clone(), namespace),
            sa(namespace, name, labelled),
        )
        .await;
    }
    let roles: Api<ClusterRole> = Api::all(client.clone());
    create(&roles, json!({
        "metadata": {
            "name": "extensions:custom",
            "labels": {"authorization.gardener.cloud/custom-extensions-permissions": "true"},
            "annotations": {"authorization.gardener.cloud/extensions-serviceaccount-selector": "{\"matchLabels\":{\"app\":\"ext\"}}"}
        },
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
    }))
    .await;
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    let binding = wait_for("binding", TIMEOUT, || async {
        bindings.get_opt("extensions:custom").await.expect("get")
    })
    .await;
    assert_eq!(
        subjects(&binding),
        ["garden-dev/extension-shoot--x", "seed-local/ext-a"]
    );
    assert_eq!(binding.role_ref.name, "extensions:custom");
    assert_eq!(binding.owner_references()[0].kind, "ClusterRole");

    // A new matching extension ServiceAccount joins.
    create(
        &Api::<ServiceAccount>::namespaced(client.clone(), "seed-other"),
        sa("seed-other", "ext-b", true),
    )
    .await;
    wait_until("new subject", TIMEOUT, || async {
        subjects(&bindings.get("extensions:custom").await.expect("get"))
            == [
                "garden-dev/extension-shoot--x",
                "seed-local/ext-a",
                "seed-other/ext-b",
            ]
    })
    .await;

    // Without the selector annotation nothing is bound.
    create(
        &roles,
        json!({
            "metadata": {
                "name": "extensions:unselected",
                "labels": {"authorization.gardener.cloud/custom-extensions-permissions": "true"}
            }
        }),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        bindings
            .get_opt("extensions:unselected")
            .await
            .expect("get")
            .is_none()
    );
    shutdown.cancel();
    sandbox.shutdown().await;
}

fn event(name: &str, kind: &str, last: Option<Timestamp>) -> Event {
    let mut value = json!({
        "metadata": {"name": name, "namespace": "garden-dev"},
        "involvedObject": {"apiVersion": "core.gardener.cloud/v1beta1", "kind": kind, "name": "x"},
        "reason": "Test", "message": "m", "type": "Normal"
    });
    if let Some(last) = last {
        value["lastTimestamp"] = serde_json::to_value(Time(last)).expect("time");
    }
    serde_json::from_value(value).expect("event")
}

#[tokio::test]
async fn non_shoot_events_expire_after_the_configured_ttl_and_shoot_events_stay() {
    let config = "apiVersion: seedlet.gardener.cloud/v1alpha1
kind: GardenControllerConfiguration
controllers:
  event:
    ttlNonShootEvents: 2s
";
    let (sandbox, client, shutdown) = garden(config).await;
    let events: Api<Event> = Api::namespaced(client.clone(), "garden-dev");
    let now = Timestamp::now();
    let old = now
        .checked_sub(SignedDuration::from_hours(2))
        .expect("time");
    for event in [
        event("shoot-old", "Shoot", Some(old)),
        event("project-old", "Project", Some(old)),
        event("project-untimed", "Project", None),
        event("project-fresh", "Project", Some(now)),
    ] {
        events
            .create(&PostParams::default(), &event)
            .await
            .expect("create event");
    }
    let exists = |name: &'static str| {
        let events = events.clone();
        async move { events.get_opt(name).await.expect("get").is_some() }
    };
    wait_until("expired events deleted", TIMEOUT, || async {
        !exists("project-old").await && !exists("project-untimed").await
    })
    .await;
    assert!(
        exists("project-fresh").await,
        "a fresh event waits for its TTL"
    );
    wait_until("fresh event deleted after the TTL", TIMEOUT, || async {
        !exists("project-fresh").await
    })
    .await;
    assert!(exists("shoot-old").await, "Shoot events are kept");
    shutdown.cancel();
    sandbox.shutdown().await;
}
