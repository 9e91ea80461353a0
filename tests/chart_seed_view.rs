//! End to end: a chart installed by the agent sees the seed it is rendered for. `.Capabilities` come from
//! the seed sandbox's `/version` and discovery (a CRD created after the agent first read discovery shows up
//! at the next render that asks about it), and `lookup` reads seed objects (one by name, a list, a missing
//! one, a cluster-scoped one); a `lookup` of a kind the seed does not serve is `Valid=False` naming it.
//! With the agent running as its chart's ServiceAccount (applier rules for ConfigMaps only), discovery
//! and the lookups its RBAC allows work, and a lookup beyond it is `Valid=False` saying it is forbidden.

use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_api::common::ObjectReference;
use seedlet_api::core::{
    ControllerDeployment, ControllerDeploymentFields, ControllerInstallation,
    ControllerInstallationSpec, ControllerRegistration, HelmControllerDeployment,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use seedlet_testkit::{
    AGENT_CONFIG, Clusters, SEED, agent_config, start_agent, start_agent_from, wait_condition_of,
    wait_for,
};

const TIMEOUT: Duration = Duration::from_secs(30);

/// The template under test: capabilities and lookups written into a ConfigMap's data.
const PROBE: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: probe
  namespace: {{ .Release.Namespace }}
data:
  round: {{ .Values.round | quote }}
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  kubeMinor: {{ .Capabilities.KubeVersion.Minor | quote }}
  {{- if semverCompare ">=1.32-0" .Capabilities.KubeVersion.Version }}
  modern: "yes"
  {{- end }}
  apps: {{ .Capabilities.APIVersions.Has "apps/v1" | quote }}
  deploymentKind: {{ .Capabilities.APIVersions.Has "apps/v1/Deployment" | quote }}
  monitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}
  widgets: {{ .Capabilities.APIVersions.Has "example.seedlet.dev/v1" | quote }}
  {{- if .Capabilities.APIVersions.Has "example.seedlet.dev/v1/Widget" }}
  widgetKind: "served"
  {{- end }}
  {{- $source := lookup "v1" "ConfigMap" "garden" "lookup-source" }}
  looked: {{ dig "data" "token" "absent" $source | quote }}
  missing: {{ lookup "v1" "ConfigMap" "garden" "no-such-config" | len | quote }}
  namespaceUid: {{ empty (lookup "v1" "Namespace" "" "garden").metadata.uid | ternary "no" "yes" | quote }}
  {{- range (lookup "v1" "ConfigMap" "garden" "").items }}
  {{- if eq .metadata.name "lookup-source" }}
  listed: {{ .kind | quote }}
  {{- end }}
  {{- end }}
"#;

const UNKNOWN_KIND: &str =
    "{{ $x := lookup \"example.seedlet.dev/v1\" \"Gadget\" \"garden\" \"g\" }}kind: ConfigMap\n";

fn chart_archive(name: &str, files: &[(&str, &str)]) -> Vec<u8> {
    let mut archive = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let chart_yaml = format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n");
    let entries = std::iter::once(("Chart.yaml", chart_yaml.as_str())).chain(files.iter().copied());
    for (path, text) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        archive
            .append_data(&mut header, format!("{name}/{path}"), text.as_bytes())
            .expect("entry");
    }
    archive
        .into_inner()
        .and_then(|gz| gz.finish())
        .expect("archive")
}

/// Registration, deployment and installation `name` of a chart with `template`.
async fn install(garden: &kube::Client, name: &str, template: &str, values: Value) {
    let registration: ControllerRegistration = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "ControllerRegistration",
        "metadata": {"name": name},
        "spec": {"resources": [{"kind": "Extension", "type": name}]}
    }))
    .expect("registration");
    Api::<ControllerRegistration>::all(garden.clone())
        .create(&PostParams::default(), &registration)
        .await
        .expect("create registration");
    let deployment = ControllerDeployment {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: ControllerDeploymentFields {
            helm: Some(HelmControllerDeployment {
                raw_chart: Some(ByteString(chart_archive(
                    name,
                    &[("templates/probe.yaml", template)],
                ))),
                values: Some(values),
                oci_repository: None,
            }),
            ..Default::default()
        },
    };
    Api::<ControllerDeployment>::all(garden.clone())
        .create(&PostParams::default(), &deployment)
        .await
        .expect("create deployment");
    let reference = |name: &str| ObjectReference {
        name: name.into(),
        ..Default::default()
    };
    let installation = ControllerInstallation::new(
        name,
        ControllerInstallationSpec {
            registration_ref: reference(name),
            deployment_ref: Some(reference(name)),
            seed_ref: Some(reference(SEED)),
            ..Default::default()
        },
    );
    Api::<ControllerInstallation>::all(garden.clone())
        .create(&PostParams::default(), &installation)
        .await
        .expect("create installation");
}

/// The probe ConfigMap's data once its `round` is `round`.
async fn probe(seed: &kube::Client, namespace: &str, round: &str) -> Value {
    let api: Api<ConfigMap> = Api::namespaced(seed.clone(), namespace);
    let data = wait_for(&format!("probe round {round}"), TIMEOUT, || async {
        let data = api.get_opt("probe").await.ok()??.data?;
        (data.get("round").map(String::as_str) == Some(round)).then_some(data)
    })
    .await;
    serde_json::to_value(data).expect("data")
}

fn widget_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.seedlet.dev"},
        "spec": {
            "group": "example.seedlet.dev",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    }))
    .expect("crd")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn charts_see_the_seeds_capabilities_and_look_up_its_objects() {
    let clusters = Clusters::start(true).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let garden = clusters.garden.client();
    let seed = clusters.seed.client();

    let seed_config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), "garden");
    let source: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "lookup-source", "namespace": "garden"},
        "data": {"token": "first"}
    }))
    .expect("config map");
    seed_config_maps
        .create(&PostParams::default(), &source)
        .await
        .expect("lookup source");

    install(&garden, "seedview", PROBE, json!({"round": "1"})).await;
    let first = probe(&seed, "extension-seedview", "1").await;
    let version = seed.apiserver_version().await.expect("seed version");
    let expected = json!({
        "round": "1",
        "kubeVersion": version.git_version,
        "kubeMinor": version.minor,
        "modern": "yes",
        "apps": "true",
        "deploymentKind": "true",
        "monitoring": "false",
        "widgets": "false",
        "looked": "first",
        "missing": "0",
        "namespaceUid": "yes",
        "listed": "ConfigMap",
    });
    assert_eq!(first, expected);

    // A CRD installed after the agent read discovery, and a changed seed object: the next render sees both
    // (the chart asked about the absent group, so discovery is read again although the cache is fresh).
    seedlet_testkit::install_crds(&seed, vec![widget_crd()]).await;
    seed_config_maps
        .patch(
            "lookup-source",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"token": "second"}})),
        )
        .await
        .expect("patch source");
    Api::<ControllerDeployment>::all(garden.clone())
        .patch(
            "seedview",
            &PatchParams::default(),
            &Patch::Merge(json!({"helm": {"values": {"round": "2"}}})),
        )
        .await
        .expect("patch deployment");
    let second = probe(&seed, "extension-seedview", "2").await;
    let mut expected = expected;
    expected["round"] = json!("2");
    expected["widgets"] = json!("true");
    expected["widgetKind"] = json!("served");
    expected["looked"] = json!("second");
    assert_eq!(second, expected);

    // A lookup of a kind the seed does not serve fails the render, naming the kind.
    install(&garden, "seedview-unknown", UNKNOWN_KIND, json!({})).await;
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    let message = wait_condition_of(
        &installations,
        "seedview-unknown",
        ("Valid", "False", "ChartCannotBeRendered"),
        ControllerInstallation::conditions,
        TIMEOUT,
    )
    .await;
    assert!(
        message.contains("error calling lookup")
            && message.contains("\"Gadget\"")
            && message.contains("example.seedlet.dev/v1"),
        "{message}"
    );

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}

const FORBIDDEN: &str = r#"{{ $role := lookup "rbac.authorization.k8s.io/v1" "ClusterRole" "" "cluster-admin" }}apiVersion: v1
kind: ConfigMap
metadata:
  name: probe
  namespace: {{ .Release.Namespace }}
data:
  round: "forbidden"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lookups_read_with_the_agents_own_seed_rbac() {
    let clusters = Clusters::start(true).await;
    let garden = clusters.garden.client();
    let admin = clusters.seed.client();
    // The agent chart's RBAC with an applier allowed ConfigMaps only, bound to its ServiceAccount.
    let values = crate::charts::with(
        crate::charts::values_file("seedlet-agent", "full-values.yaml"),
        json!({"rbac": {"applier": "rules", "applierRules": [{
            "apiGroups": [""], "resources": ["configmaps"],
            "verbs": ["get", "list", "watch", "create", "patch", "update", "delete"]
        }]}}),
    );
    let rbac: Vec<Value> = crate::charts::render("seedlet-agent", &values)
        .expect("agent chart renders")
        .into_iter()
        .filter(|o| {
            matches!(
                o["kind"].as_str(),
                Some(
                    "ServiceAccount"
                        | "ClusterRole"
                        | "ClusterRoleBinding"
                        | "Role"
                        | "RoleBinding"
                )
            )
        })
        .collect();
    crate::charts::apply_all(&admin, &rbac).await;
    let agent_seed = crate::charts::service_account_client(&clusters.seed, "seedlet-agent").await;
    let shutdown = CancellationToken::new();
    let agent = start_agent_from(
        agent_config(AGENT_CONFIG),
        agent_seed,
        Some(garden.clone()),
        shutdown.clone(),
        |_| {},
    )
    .await;

    let source: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "lookup-source", "namespace": "garden"},
        "data": {"token": "rbac"}
    }))
    .expect("config map");
    Api::<ConfigMap>::namespaced(admin.clone(), "garden")
        .create(&PostParams::default(), &source)
        .await
        .expect("lookup source");

    install(&garden, "seedview-rbac", PROBE, json!({"round": "1"})).await;
    let data = probe(&admin, "extension-seedview-rbac", "1").await;
    assert_eq!(data["looked"], "rbac");
    assert_eq!(data["listed"], "ConfigMap");
    assert_eq!(data["namespaceUid"], "yes");
    assert_eq!(data["deploymentKind"], "true");

    install(&garden, "seedview-forbidden", FORBIDDEN, json!({})).await;
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    let message = wait_condition_of(
        &installations,
        "seedview-forbidden",
        ("Valid", "False", "ChartCannotBeRendered"),
        ControllerInstallation::conditions,
        TIMEOUT,
    )
    .await;
    assert!(
        message.contains("error calling lookup") && message.contains("forbidden"),
        "{message}"
    );
    let applied: Api<ConfigMap> = Api::namespaced(admin.clone(), "extension-seedview-forbidden");
    assert!(applied.get_opt("probe").await.expect("read").is_none());

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}
