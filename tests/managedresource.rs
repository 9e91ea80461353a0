//! End-to-end tests of the embedded ManagedResource applier: manifests in a Secret, a
//! ManagedResource of class `seed`, and an agent against garden + seed sandboxes.
//!
//! Covers apply and status, hand edits and deletions restored through the applied-object watch,
//! pruning with `keep-object`, releasing with `mode=Ignore`, `keepObjects` on deletion, other
//! classes left alone, and health flipping with a Deployment's availability.

use seedlet_testkit as common;

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::resources::ManagedResource;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use common::{Clusters, start_agent, wait_condition_of, wait_until};

const TIMEOUT: Duration = Duration::from_secs(30);
const NAMESPACE: &str = "apps";

fn config_map(name: &str, value: &str, annotations: &[(&str, &str)]) -> String {
    let annotations: BTreeMap<_, _> = annotations.iter().copied().collect();
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {NAMESPACE}\n  annotations: {}\ndata:\n  value: {value:?}\n",
        serde_json::to_string(&annotations).expect("annotations")
    )
}

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: registry.example.com/web:1\n";

fn manifest_secret(name: &str, documents: &[String]) -> Secret {
    let mut data = BTreeMap::new();
    data.insert(
        "objects.yaml".to_owned(),
        ByteString(documents.join("---\n").into_bytes()),
    );
    Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            namespace: Some("garden".into()),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    }
}

fn managed_resource(name: &str, secret: &str, class: &str) -> ManagedResource {
    serde_json::from_value(json!({
        "apiVersion": "resources.gardener.cloud/v1alpha1",
        "kind": "ManagedResource",
        "metadata": {"name": name, "namespace": "garden"},
        "spec": {"class": class, "secretRefs": [{"name": secret}]}
    }))
    .expect("managed resource")
}

async fn value(api: &Api<ConfigMap>, name: &str) -> Option<String> {
    api.get_opt(name).await.ok()??.data?.get("value").cloned()
}

async fn wait_mr_condition(
    api: &Api<ManagedResource>,
    name: &str,
    type_: &str,
    status: &str,
    reason: &str,
) -> String {
    let wanted = (type_, status, reason);
    wait_condition_of(api, name, wanted, ManagedResource::conditions, TIMEOUT).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn applier_applies_restores_prunes_and_honours_annotations() {
    let clusters = Clusters::start(true).await;
    common::ensure_namespace(&clusters.seed.client(), NAMESPACE).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let seed = clusters.seed.client();
    let secrets: Api<Secret> = Api::namespaced(seed.clone(), "garden");
    let managed_resources: Api<ManagedResource> = Api::namespaced(seed.clone(), "garden");
    let config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), NAMESPACE);

    let first = [
        config_map("plain", "1", &[]),
        config_map(
            "kept",
            "1",
            &[("resources.gardener.cloud/keep-object", "true")],
        ),
        config_map("pruned", "1", &[]),
        config_map("released", "1", &[]),
        DEPLOYMENT.to_owned(),
    ];
    secrets
        .create(
            &PostParams::default(),
            &manifest_secret("objects-1", &first),
        )
        .await
        .expect("secret");
    managed_resources
        .create(
            &PostParams::default(),
            &managed_resource("apps", "objects-1", "seed"),
        )
        .await
        .expect("mr");

    wait_mr_condition(
        &managed_resources,
        "apps",
        "ResourcesApplied",
        "True",
        "ApplySucceeded",
    )
    .await;
    wait_mr_condition(
        &managed_resources,
        "apps",
        "ResourcesHealthy",
        "True",
        "ResourcesHealthy",
    )
    .await;
    wait_mr_condition(
        &managed_resources,
        "apps",
        "ResourcesProgressing",
        "False",
        "ResourcesRolledOut",
    )
    .await;
    let mr = managed_resources.get("apps").await.expect("mr");
    let status = mr.status.expect("status");
    assert_eq!(status.resources.len(), 5);
    assert_eq!(status.observed_generation, mr.metadata.generation);
    assert!(
        mr.metadata
            .finalizers
            .unwrap_or_default()
            .contains(&"resources.gardener.cloud/gardener-resource-manager-seed".to_owned())
    );
    let plain = config_maps.get("plain").await.expect("plain");
    assert_eq!(
        plain
            .annotations()
            .get("resources.gardener.cloud/origin")
            .map(String::as_str),
        Some("garden/apps")
    );
    assert_eq!(
        plain
            .labels()
            .get("resources.gardener.cloud/managed-by")
            .map(String::as_str),
        Some("gardener")
    );

    // A hand edit is reverted and a deleted object re-created, without waiting for the sync period.
    let edit = json!({"data": {"value": "edited"}});
    config_maps
        .patch("plain", &PatchParams::default(), &Patch::Merge(&edit))
        .await
        .expect("edit");
    wait_until("hand edit reverted", Duration::from_secs(10), || async {
        value(&config_maps, "plain").await.as_deref() == Some("1")
    })
    .await;
    config_maps
        .delete("plain", &DeleteParams::default())
        .await
        .expect("delete");
    wait_until(
        "deleted object re-created",
        Duration::from_secs(10),
        || async { value(&config_maps, "plain").await.as_deref() == Some("1") },
    )
    .await;

    // New manifests: `kept` and `pruned` dropped, `released` switched to mode=Ignore, `plain` changed.
    let second = [
        config_map("plain", "2", &[]),
        config_map(
            "released",
            "changed-but-ignored",
            &[("resources.gardener.cloud/mode", "Ignore")],
        ),
        DEPLOYMENT.to_owned(),
    ];
    secrets
        .create(
            &PostParams::default(),
            &manifest_secret("objects-2", &second),
        )
        .await
        .expect("secret 2");
    let patch = json!({"spec": {"secretRefs": [{"name": "objects-2"}]}});
    managed_resources
        .patch("apps", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("switch secret");
    wait_until("plain updated", TIMEOUT, || async {
        value(&config_maps, "plain").await.as_deref() == Some("2")
    })
    .await;
    wait_until("pruned deleted", TIMEOUT, || async {
        matches!(config_maps.get_opt("pruned").await, Ok(None))
    })
    .await;
    assert_eq!(
        value(&config_maps, "kept").await.as_deref(),
        Some("1"),
        "keep-object survives pruning"
    );
    let released = config_maps.get("released").await.expect("released stays");
    assert_eq!(
        released
            .data
            .clone()
            .unwrap_or_default()
            .get("value")
            .map(String::as_str),
        Some("1"),
        "mode=Ignore is not applied"
    );
    assert!(
        !released
            .annotations()
            .contains_key("resources.gardener.cloud/origin"),
        "origin removed on release"
    );
    wait_until("status lists the applied set only", TIMEOUT, || async {
        let Ok(mr) = managed_resources.get("apps").await else {
            return false;
        };
        let names: Vec<_> = mr
            .status
            .map(|s| s.resources)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| r.name)
            .collect();
        names.len() == 2 && names.contains(&"plain".to_owned()) && names.contains(&"web".to_owned())
    })
    .await;

    // A ManagedResource of another class is left alone.
    managed_resources
        .create(
            &PostParams::default(),
            &managed_resource("other", "objects-1", "shoot"),
        )
        .await
        .expect("other mr");

    // keepObjects: deleting the MR leaves its objects.
    let keep = json!({"spec": {"keepObjects": true}});
    managed_resources
        .patch("apps", &PatchParams::default(), &Patch::Merge(&keep))
        .await
        .expect("keepObjects");
    managed_resources
        .delete("apps", &DeleteParams::default())
        .await
        .expect("delete mr");
    wait_until("mr gone", TIMEOUT, || async {
        matches!(managed_resources.get_opt("apps").await, Ok(None))
    })
    .await;
    assert_eq!(value(&config_maps, "plain").await.as_deref(), Some("2"));
    assert!(
        Api::<Deployment>::namespaced(seed.clone(), NAMESPACE)
            .get_opt("web")
            .await
            .expect("read")
            .is_some()
    );

    let other = managed_resources.get("other").await.expect("other mr");
    assert!(
        other.status.is_none(),
        "other class untouched: {:?}",
        other.status
    );
    assert!(other.metadata.finalizers.unwrap_or_default().is_empty());

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deletion_prunes_objects_and_health_follows_deployment_availability() {
    // Without workload simulation the test writes the Deployment status itself.
    let clusters = Clusters::start(false).await;
    common::ensure_namespace(&clusters.seed.client(), NAMESPACE).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let seed = clusters.seed.client();
    let secrets: Api<Secret> = Api::namespaced(seed.clone(), "garden");
    let managed_resources: Api<ManagedResource> = Api::namespaced(seed.clone(), "garden");
    let deployments: Api<Deployment> = Api::namespaced(seed.clone(), NAMESPACE);

    secrets
        .create(
            &PostParams::default(),
            &manifest_secret(
                "web",
                &[config_map("web-config", "1", &[]), DEPLOYMENT.to_owned()],
            ),
        )
        .await
        .expect("secret");
    managed_resources
        .create(
            &PostParams::default(),
            &managed_resource("web", "web", "seed"),
        )
        .await
        .expect("mr");
    wait_mr_condition(
        &managed_resources,
        "web",
        "ResourcesApplied",
        "True",
        "ApplySucceeded",
    )
    .await;
    let message = wait_mr_condition(
        &managed_resources,
        "web",
        "ResourcesHealthy",
        "False",
        "DeploymentUnhealthy",
    )
    .await;
    assert!(
        message.starts_with("Deployment \"apps/web\" is unhealthy"),
        "{message}"
    );

    let status = |available: &str| {
        json!({"status": {
            "observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1,
            "conditions": [
                {"type": "Available", "status": available, "reason": "MinimumReplicasAvailable", "message": "m"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "p"}
            ]
        }})
    };
    deployments
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&status("True")),
        )
        .await
        .expect("available");
    wait_mr_condition(
        &managed_resources,
        "web",
        "ResourcesHealthy",
        "True",
        "ResourcesHealthy",
    )
    .await;
    wait_mr_condition(
        &managed_resources,
        "web",
        "ResourcesProgressing",
        "False",
        "ResourcesRolledOut",
    )
    .await;
    deployments
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&status("False")),
        )
        .await
        .expect("unavailable");
    let message = wait_mr_condition(
        &managed_resources,
        "web",
        "ResourcesHealthy",
        "False",
        "DeploymentUnhealthy",
    )
    .await;
    assert!(message.contains("condition \"Available\""), "{message}");

    // Deleting the MR prunes everything it applied, then releases the finalizer.
    managed_resources
        .delete("web", &DeleteParams::default())
        .await
        .expect("delete mr");
    wait_until("mr gone", TIMEOUT, || async {
        matches!(managed_resources.get_opt("web").await, Ok(None))
    })
    .await;
    wait_until("deployment pruned", TIMEOUT, || async {
        matches!(deployments.get_opt("web").await, Ok(None))
    })
    .await;
    let config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), NAMESPACE);
    assert!(
        config_maps
            .get_opt("web-config")
            .await
            .expect("read")
            .is_none()
    );

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}
