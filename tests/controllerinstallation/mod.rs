//! End-to-end tests of the agent's ControllerInstallation controllers with the embedded
//! ManagedResource applier: garden + seed sandboxes (workload status simulation on), an agent,
//! and a ControllerRegistration/ControllerDeployment/ControllerInstallation created directly.
//!
//! Covers installation to Healthy, chart and values changes (new Secret, pruned templates, old
//! Secret removed), broken charts of every rejection class and OCI charts (Valid False, applied
//! objects untouched), the v1beta1 deployment shape, Required, deletion, and the CI-created →
//! ManagedResource-written latency.

mod oci;
mod rejections;

use crate::registry;
use seedlet_testkit as common;

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_api::common::ObjectReference;
use seedlet_api::core::{
    ControllerDeployment, ControllerDeploymentFields, ControllerInstallation,
    ControllerInstallationSpec, ControllerRegistration, HelmControllerDeployment,
};
use seedlet_api::extensions::Extension;
use seedlet_api::resources::ManagedResource;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use common::{Clusters, SEED, condition_of, start_agent, wait_condition_of, wait_for, wait_until};

const CHART_V1: &[u8] = include_bytes!("../fixtures/charts/ext-small-v1.tgz");
const CHART_V2: &[u8] = include_bytes!("../fixtures/charts/ext-small-v2.tgz");
const CHART_BROKEN: &[u8] = include_bytes!("../fixtures/charts/ext-broken.tgz");
const TIMEOUT: Duration = Duration::from_secs(30);

fn registration(name: &str) -> ControllerRegistration {
    serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "ControllerRegistration",
        "metadata": {"name": name},
        "spec": {
            "resources": [{"kind": "Extension", "type": "small"}],
            "deployment": {"deploymentRefs": [{"name": name}]}
        }
    }))
    .expect("registration")
}

fn deployment(name: &str, chart: &[u8], values: Value) -> ControllerDeployment {
    ControllerDeployment {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: ControllerDeploymentFields {
            helm: Some(HelmControllerDeployment {
                raw_chart: Some(ByteString(chart.to_vec())),
                values: Some(values),
                oci_repository: None,
            }),
            ..Default::default()
        },
    }
}

fn installation(name: &str, registration: &str) -> ControllerInstallation {
    ControllerInstallation::new(
        name,
        ControllerInstallationSpec {
            registration_ref: ObjectReference {
                name: registration.into(),
                ..Default::default()
            },
            deployment_ref: Some(ObjectReference {
                name: registration.into(),
                ..Default::default()
            }),
            seed_ref: Some(ObjectReference {
                name: SEED.into(),
                ..Default::default()
            }),
            ..Default::default()
        },
    )
}

/// `(status, reason, message)` of a condition of the installation.
async fn condition(
    api: &Api<ControllerInstallation>,
    name: &str,
    type_: &str,
) -> Option<(String, String, String)> {
    condition_of(api, name, type_, ControllerInstallation::conditions).await
}

async fn wait_condition(
    api: &Api<ControllerInstallation>,
    name: &str,
    type_: &str,
    status: &str,
    reason: &str,
) -> String {
    let wanted = (type_, status, reason);
    wait_condition_of(
        api,
        name,
        wanted,
        ControllerInstallation::conditions,
        TIMEOUT,
    )
    .await
}

async fn secret_refs(api: &Api<ManagedResource>, name: &str) -> Option<Vec<String>> {
    let mr = api.get_opt(name).await.ok()??;
    Some(mr.spec.secret_refs.iter().map(|r| r.name.clone()).collect())
}

async fn config_map_value(api: &Api<ConfigMap>, name: &str, key: &str) -> Option<String> {
    api.get_opt(name).await.ok()??.data?.get(key).cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn installation_is_applied_healthy_follows_changes_and_is_removed_on_deletion() {
    let clusters = Clusters::start(true).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let garden = clusters.garden.client();
    let seed = clusters.seed.client();

    let registrations: Api<ControllerRegistration> = Api::all(garden.clone());
    let deployments: Api<ControllerDeployment> = Api::all(garden.clone());
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    registrations
        .create(&PostParams::default(), &registration("ext-small"))
        .await
        .expect("registration");
    deployments
        .create(
            &PostParams::default(),
            &deployment("ext-small", CHART_V1, json!({"greeting": "hi"})),
        )
        .await
        .expect("deployment");
    installations
        .create(
            &PostParams::default(),
            &installation("ext-small-a", "ext-small"),
        )
        .await
        .expect("installation");

    // ManagedResource, immutable Secret and namespace in the seed.
    let managed_resources: Api<ManagedResource> = Api::namespaced(seed.clone(), "garden");
    let secrets: Api<Secret> = Api::namespaced(seed.clone(), "garden");
    let first = wait_for("managed resource", TIMEOUT, || async {
        secret_refs(&managed_resources, "ext-small-a").await
    })
    .await;
    assert_eq!(first.len(), 1);
    assert!(
        first[0].starts_with("ext-small-a-") && first[0].len() == "ext-small-a-".len() + 8,
        "{first:?}"
    );
    let secret = secrets.get(&first[0]).await.expect("manifest secret");
    assert_eq!(secret.immutable, Some(true));
    assert_eq!(
        secret
            .labels()
            .get("resources.gardener.cloud/garbage-collectable-reference")
            .map(String::as_str),
        Some("true")
    );
    let keys: Vec<_> = secret
        .data
        .clone()
        .unwrap_or_default()
        .into_keys()
        .collect();
    assert_eq!(
        keys,
        [
            "ext-small_templates_configmap.yaml",
            "ext-small_templates_deployment.yaml",
            "ext-small_templates_extra.yaml"
        ]
    );
    let mr = managed_resources.get("ext-small-a").await.expect("mr");
    assert_eq!(mr.spec.class.as_deref(), Some("seed"));
    assert_eq!(
        mr.labels()
            .get("controllerinstallation-name")
            .map(String::as_str),
        Some("ext-small-a")
    );
    assert_eq!(
        mr.labels()
            .get("controllerregistration-name")
            .map(String::as_str),
        Some("ext-small")
    );
    assert!(
        mr.annotations().values().any(|v| *v == first[0]),
        "{:?}",
        mr.annotations()
    );
    let namespace = Api::<Namespace>::all(seed.clone())
        .get("extension-ext-small-a")
        .await
        .expect("namespace");
    assert_eq!(
        namespace
            .labels()
            .get("gardener.cloud/role")
            .map(String::as_str),
        Some("extension")
    );
    assert_eq!(
        namespace
            .labels()
            .get("controllerregistration.core.gardener.cloud/name")
            .map(String::as_str),
        Some("ext-small")
    );
    assert_eq!(
        namespace
            .annotations()
            .get("high-availability-config.resources.gardener.cloud/zones")
            .map(String::as_str),
        Some("a,b")
    );

    // Objects applied in the extension namespace with the injected values.
    let config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), "extension-ext-small-a");
    let workloads: Api<Deployment> = Api::namespaced(seed.clone(), "extension-ext-small-a");
    wait_until("configmap applied", TIMEOUT, || async {
        config_map_value(&config_maps, "ext-small-config", "greeting")
            .await
            .as_deref()
            == Some("hi")
    })
    .await;
    assert_eq!(
        config_map_value(&config_maps, "ext-small-config", "seed")
            .await
            .as_deref(),
        Some(SEED)
    );
    // The applier writes in Helm's install order: the ConfigMap lands before the Deployment.
    let workload = wait_for("deployment applied", TIMEOUT, || async {
        workloads.get_opt("ext-small").await.ok().flatten()
    })
    .await;
    let env = serde_json::to_value(
        &workload
            .spec
            .clone()
            .expect("spec")
            .template
            .spec
            .expect("pod spec")
            .containers[0]
            .env,
    )
    .expect("env");
    assert!(
        env.as_array()
            .expect("env list")
            .contains(&json!({"name": "SEED_NAME", "value": SEED})),
        "{env}"
    );
    assert_eq!(
        workload
            .annotations()
            .get("resources.gardener.cloud/origin")
            .map(String::as_str),
        Some("garden/ext-small-a")
    );

    // Conditions in the garden.
    wait_condition(
        &installations,
        "ext-small-a",
        "Valid",
        "True",
        "RegistrationValid",
    )
    .await;
    wait_condition(
        &installations,
        "ext-small-a",
        "Installed",
        "True",
        "InstallationSuccessful",
    )
    .await;
    // The transition is an Event on the installation (cluster-scoped: `default`), and the
    // agent's registration one on the Seed, both written by the agent as `gardenlet`.
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(garden.clone(), "default");
    wait_until("installed event", TIMEOUT, || async {
        let events = events
            .list(&Default::default())
            .await
            .expect("events")
            .items;
        let about = |kind: &str, name: &str, reason: &str| {
            events.iter().any(|e| {
                e.involved_object.kind.as_deref() == Some(kind)
                    && e.involved_object.name.as_deref() == Some(name)
                    && e.reason.as_deref() == Some(reason)
                    && e.source.as_ref().and_then(|s| s.component.as_deref()) == Some("gardenlet")
            })
        };
        about(
            "ControllerInstallation",
            "ext-small-a",
            "InstallationSuccessful",
        ) && about("Seed", SEED, "SeedRegistered")
    })
    .await;
    wait_condition(
        &installations,
        "ext-small-a",
        "Healthy",
        "True",
        "ControllerHealthy",
    )
    .await;
    wait_condition(
        &installations,
        "ext-small-a",
        "Progressing",
        "False",
        "ControllerRolledOut",
    )
    .await;
    let ci = installations.get("ext-small-a").await.expect("ci");
    assert!(
        ci.finalizers()
            .iter()
            .any(|f| f == "core.gardener.cloud/controllerinstallation")
    );

    // Required follows the Extension objects of the registered type.
    wait_condition(
        &installations,
        "ext-small-a",
        "Required",
        "False",
        "NoExtensionObjects",
    )
    .await;
    let extensions: Api<Extension> = Api::namespaced(seed.clone(), "garden");
    let extension: Extension = serde_json::from_value(json!({
        "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Extension",
        "metadata": {"name": "small", "namespace": "garden"}, "spec": {"type": "small"}
    }))
    .expect("extension");
    extensions
        .create(&PostParams::default(), &extension)
        .await
        .expect("extension");
    let message = wait_condition(
        &installations,
        "ext-small-a",
        "Required",
        "True",
        "ExtensionObjectsExist",
    )
    .await;
    assert!(message.contains("Extension/small"), "{message}");
    extensions
        .delete("small", &DeleteParams::default())
        .await
        .expect("delete extension");
    wait_condition(
        &installations,
        "ext-small-a",
        "Required",
        "False",
        "NoExtensionObjects",
    )
    .await;

    // Chart and values change: new Secret, objects updated, removed template pruned, old Secret gone.
    let mut changed = deployments.get("ext-small").await.expect("deployment");
    changed.spec = deployment("ext-small", CHART_V2, json!({"greeting": "bye"})).spec;
    deployments
        .replace("ext-small", &PostParams::default(), &changed)
        .await
        .expect("update deployment");
    let second = wait_for("new manifest secret", TIMEOUT, || async {
        secret_refs(&managed_resources, "ext-small-a")
            .await
            .filter(|refs| *refs != first)
    })
    .await;
    wait_until("configmap updated", TIMEOUT, || async {
        config_map_value(&config_maps, "ext-small-config", "greeting")
            .await
            .as_deref()
            == Some("bye")
    })
    .await;
    wait_until("removed template pruned", TIMEOUT, || async {
        matches!(config_maps.get_opt("ext-small-extra").await, Ok(None))
    })
    .await;
    wait_until("old secret removed", TIMEOUT, || async {
        matches!(secrets.get_opt(&first[0]).await, Ok(None))
    })
    .await;
    assert!(secrets.get_opt(&second[0]).await.expect("read").is_some());

    // Broken chart: Valid False, last good ManagedResource and objects untouched.
    let mut broken = deployments.get("ext-small").await.expect("deployment");
    broken.spec = deployment("ext-small", CHART_BROKEN, json!({})).spec;
    deployments
        .replace("ext-small", &PostParams::default(), &broken)
        .await
        .expect("break deployment");
    let message = wait_condition(
        &installations,
        "ext-small-a",
        "Valid",
        "False",
        "ChartCannotBeRendered",
    )
    .await;
    assert!(
        message.starts_with("chart rendering process failed:"),
        "{message}"
    );
    assert_eq!(
        secret_refs(&managed_resources, "ext-small-a").await,
        Some(second.clone())
    );
    assert_eq!(
        config_map_value(&config_maps, "ext-small-config", "greeting")
            .await
            .as_deref(),
        Some("bye")
    );

    // OCI chart from a registry that cannot be reached (a closed loopback port): said clearly.
    let mut oci = deployments.get("ext-small").await.expect("deployment");
    oci.spec.helm = Some(
        serde_json::from_value(json!({"ociRepository": {"ref": "127.0.0.1:1/charts/ext:1.0.0"}}))
            .expect("helm"),
    );
    deployments
        .replace("ext-small", &PostParams::default(), &oci)
        .await
        .expect("oci deployment");
    let message = wait_condition(
        &installations,
        "ext-small-a",
        "Valid",
        "False",
        "OCIChartCannotBePulled",
    )
    .await;
    assert!(
        message.starts_with("chart pulling process failed: registry 127.0.0.1:1: 127.0.0.1:1/charts/ext:1.0.0: manifest"),
        "{message}"
    );
    assert_eq!(
        secret_refs(&managed_resources, "ext-small-a").await,
        Some(second.clone())
    );

    // Deletion: objects pruned, ManagedResource, Secrets and namespace gone, finalizer released.
    installations
        .delete("ext-small-a", &DeleteParams::default())
        .await
        .expect("delete installation");
    wait_until("installation gone", Duration::from_secs(60), || async {
        matches!(installations.get_opt("ext-small-a").await, Ok(None))
    })
    .await;
    assert!(
        managed_resources
            .get_opt("ext-small-a")
            .await
            .expect("read")
            .is_none()
    );
    assert!(secrets.get_opt(&second[0]).await.expect("read").is_none());
    assert!(
        Api::<Namespace>::all(seed.clone())
            .get_opt("extension-ext-small-a")
            .await
            .expect("read")
            .is_none()
    );
    assert!(
        workloads
            .get_opt("ext-small")
            .await
            .expect("read")
            .is_none()
    );

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn v1beta1_provider_config_chart_installs_like_raw_chart() {
    let clusters = Clusters::start(true).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let garden = clusters.garden.client();
    let seed = clusters.seed.client();

    Api::<ControllerRegistration>::all(garden.clone())
        .create(&PostParams::default(), &registration("ext-old"))
        .await
        .expect("registration");
    // Written through v1beta1: `type: helm` + `providerConfig.chart`.
    let old = seedlet_api::core::ControllerDeploymentV1beta1 {
        metadata: kube::api::ObjectMeta {
            name: Some("ext-old".into()),
            ..Default::default()
        },
        spec: seedlet_api::core::ControllerDeploymentV1beta1Fields {
            type_: "helm".into(),
            provider_config: Some(
                json!({"chart": ByteString(CHART_V1.to_vec()), "values": {"greeting": "old"}}),
            ),
            inject_garden_kubeconfig: None,
        },
    };
    Api::<seedlet_api::core::ControllerDeploymentV1beta1>::all(garden.clone())
        .create(&PostParams::default(), &old)
        .await
        .expect("v1beta1 deployment");
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    installations
        .create(
            &PostParams::default(),
            &installation("ext-old-a", "ext-old"),
        )
        .await
        .expect("installation");

    let config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), "extension-ext-old-a");
    wait_until("configmap applied", TIMEOUT, || async {
        config_map_value(&config_maps, "ext-old-config", "greeting")
            .await
            .as_deref()
            == Some("old")
    })
    .await;
    wait_condition(
        &installations,
        "ext-old-a",
        "Healthy",
        "True",
        "ControllerHealthy",
    )
    .await;

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}

/// Creates 20 installations one after another and measures, for each, the time from the create
/// call returning to the ManagedResource appearing in a watch on the seed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn managed_resources_are_written_quickly_after_installations_are_created() {
    const COUNT: usize = 20;
    let clusters = Clusters::start(true).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let garden = clusters.garden.client();
    let seed = clusters.seed.client();
    Api::<ControllerRegistration>::all(garden.clone())
        .create(&PostParams::default(), &registration("ext-bench"))
        .await
        .expect("registration");
    Api::<ControllerDeployment>::all(garden.clone())
        .create(
            &PostParams::default(),
            &deployment("ext-bench", CHART_V1, json!({})),
        )
        .await
        .expect("deployment");
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());

    // Warm-up: the first installation pays for cache sync and chart translation.
    installations
        .create(
            &PostParams::default(),
            &installation("bench-warmup", "ext-bench"),
        )
        .await
        .expect("installation");
    let managed_resources: Api<ManagedResource> = Api::namespaced(seed.clone(), "garden");
    wait_for("warm-up managed resource", TIMEOUT, || async {
        secret_refs(&managed_resources, "bench-warmup").await
    })
    .await;

    let mut events = std::pin::pin!(
        watcher(managed_resources.clone(), watcher::Config::default()).applied_objects()
    );
    let mut latencies = Vec::with_capacity(COUNT);
    for index in 0..COUNT {
        let name = format!("bench-{index:02}");
        installations
            .create(&PostParams::default(), &installation(&name, "ext-bench"))
            .await
            .expect("installation");
        let created = Instant::now();
        let deadline = tokio::time::sleep(TIMEOUT);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                () = &mut deadline => panic!("no managed resource for {name}"),
                event = events.next() => {
                    let mr = event.expect("watch ended").expect("watch event");
                    if mr.name_any() == name {
                        latencies.push(created.elapsed());
                        break;
                    }
                }
            }
        }
    }
    latencies.sort();
    let p50 = latencies[COUNT / 2];
    let p99 = latencies[(COUNT * 99).div_ceil(100) - 1];
    println!(
        "ControllerInstallation created -> ManagedResource written over {COUNT} installations: p50 {p50:?}, p99 {p99:?}, max {:?}",
        latencies[COUNT - 1]
    );
    let all = managed_resources
        .list(&ListParams::default().labels("controllerregistration-name=ext-bench"))
        .await
        .expect("list");
    assert_eq!(all.items.len(), COUNT + 1);
    // Generous bound for loaded CI machines; the goal (p99 < 250 ms) is reported above.
    assert!(p99 < Duration::from_secs(5), "p99 {p99:?}");

    // The label-based care mapping keeps up: every installation becomes healthy.
    for index in 0..COUNT {
        wait_condition(
            &installations,
            &format!("bench-{index:02}"),
            "Healthy",
            "True",
            "ControllerHealthy",
        )
        .await;
    }

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}
