//! Broken charts of every rejection class: `Valid=False` with the reason, the applied objects untouched.

use super::*;

/// Every rejection class of a chart or its values: `Valid` False with the specified reason and a
/// message saying what and where, while the last good ManagedResource and its objects stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_rejected_chart_says_why_and_leaves_the_applied_objects_alone() {
    const TRAVERSAL: &[u8] = include_bytes!("../fixtures/charts/ext-traversal.tgz");
    const SYMLINK: &[u8] = include_bytes!("../fixtures/charts/ext-symlink.tgz");
    const BAD_YAML: &[u8] = include_bytes!("../fixtures/charts/ext-bad-yaml.tgz");
    // Doubles a string 40 times: aborted the agent with a 2 GiB allocation before the render limits.
    const BOMB: &[u8] = include_bytes!("../fixtures/charts/ext-bomb.tgz");
    let clusters = Clusters::start(true).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let garden = clusters.garden.client();
    let seed = clusters.seed.client();
    let deployments: Api<ControllerDeployment> = Api::all(garden.clone());
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    Api::<ControllerRegistration>::all(garden.clone())
        .create(&PostParams::default(), &registration("ext-reject"))
        .await
        .expect("registration");
    deployments
        .create(
            &PostParams::default(),
            &deployment("ext-reject", CHART_V1, json!({"greeting": "good"})),
        )
        .await
        .expect("deployment");
    installations
        .create(
            &PostParams::default(),
            &installation("ext-reject-a", "ext-reject"),
        )
        .await
        .expect("installation");
    wait_condition(
        &installations,
        "ext-reject-a",
        "Healthy",
        "True",
        "ControllerHealthy",
    )
    .await;
    // Healthy and Installed come from different ManagedResource conditions: wait for both.
    wait_condition(
        &installations,
        "ext-reject-a",
        "Installed",
        "True",
        "InstallationSuccessful",
    )
    .await;
    let managed_resources: Api<ManagedResource> = Api::namespaced(seed.clone(), "garden");
    let config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), "extension-ext-reject-a");
    let good = secret_refs(&managed_resources, "ext-reject-a")
        .await
        .expect("managed resource");

    let missing_reference: ControllerDeploymentFields = serde_json::from_value(json!({
        "helm": {
            "rawChart": ByteString(CHART_V1.to_vec()),
            "values": {"greeting": "{{ .resources.creds.data.token }}"}
        },
        "resources": [{"name": "creds", "resourceRef": {"apiVersion": "v1", "kind": "Secret", "name": "absent"}}]
    }))
    .expect("deployment fields");
    // The bomb goes first: the cases after it show the agent still reconciling.
    let cases: [(&str, ControllerDeploymentFields, &str, &str); 7] = [
        (
            "a template building a value over the render limit",
            deployment("ext-reject", BOMB, json!({})).spec,
            "ChartCannotBeRendered",
            "print: a value of 33554432 bytes is over maxValueBytes = 16777216 bytes",
        ),
        (
            "not a gzip archive",
            deployment("ext-reject", b"not a chart", json!({})).spec,
            "ChartCannotBeRendered",
            "corrupt gzip stream",
        ),
        (
            "a path leaving the chart",
            deployment("ext-reject", TRAVERSAL, json!({})).spec,
            "ChartCannotBeRendered",
            "is not a safe relative path",
        ),
        (
            "a symbolic link",
            deployment("ext-reject", SYMLINK, json!({})).spec,
            "ChartCannotBeRendered",
            "only regular files and directories are allowed",
        ),
        (
            "a template rendering to invalid YAML",
            deployment("ext-reject", BAD_YAML, json!({})).spec,
            "ChartCannotBeRendered",
            "YAML parse error on ext-reject/templates/bad.yaml",
        ),
        (
            "a v1beta1 provider config whose chart is not base64",
            ControllerDeploymentFields {
                type_: Some("helm".into()),
                provider_config: Some(json!({"chart": "%%% not base64 %%%"})),
                ..Default::default()
            },
            "ChartInformationInvalid",
            "chart information cannot be decoded",
        ),
        (
            "a values template naming an absent resource",
            missing_reference,
            "RenderingHelmValuesFailed",
            "helm values cannot be rendered",
        ),
    ];
    for (what, spec, reason, fragment) in cases {
        let mut broken = deployments.get("ext-reject").await.expect("deployment");
        broken.spec = spec;
        deployments
            .replace("ext-reject", &PostParams::default(), &broken)
            .await
            .expect("break deployment");
        wait_for(
            &format!("Valid False {reason} for {what}"),
            TIMEOUT,
            || async {
                condition(&installations, "ext-reject-a", "Valid")
                    .await
                    .filter(|(s, r, m)| s == "False" && r == reason && m.contains(fragment))
            },
        )
        .await;
        assert_eq!(
            secret_refs(&managed_resources, "ext-reject-a").await,
            Some(good.clone()),
            "{what}: the last good managed resource is kept"
        );
        assert_eq!(
            config_map_value(&config_maps, "ext-reject-config", "greeting")
                .await
                .as_deref(),
            Some("good"),
            "{what}: applied objects are untouched"
        );
        let installed = condition(&installations, "ext-reject-a", "Installed").await;
        assert!(
            installed.as_ref().is_some_and(|(s, _, _)| s == "True"),
            "{what}: the last good installation stays installed: {installed:?}"
        );
    }

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}
