//! OCI charts: pulled from a distribution registry with the pull secret and installed.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn oci_chart_is_pulled_with_the_pull_secret_and_installed() {
    let Some(binary) = registry::binary() else {
        registry::skip_notice();
        return;
    };
    let registry =
        registry::Registry::start(&binary, Some(&registry::htpasswd_line("puller", "s3cret")))
            .await;
    let basic = format!(
        "Basic {}",
        <base64::engine::GeneralPurpose as base64::Engine>::encode(
            &base64::engine::general_purpose::STANDARD,
            "puller:s3cret"
        )
    );
    registry
        .push_chart("charts/ext-small", "1.0.0", CHART_V1, Some(&basic))
        .await;

    let clusters = Clusters::start(true).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let garden = clusters.garden.client();
    let seed = clusters.seed.client();

    let docker_config =
        json!({"auths": {registry.host.clone(): {"username": "puller", "password": "s3cret"}}});
    let pull_secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("chart-pull".into()),
            namespace: Some("garden".into()),
            labels: Some(
                [(
                    "gardener.cloud/role".to_string(),
                    "helm-pull-secret".to_string(),
                )]
                .into(),
            ),
            ..Default::default()
        },
        type_: Some("kubernetes.io/dockerconfigjson".into()),
        data: Some(
            [(
                ".dockerconfigjson".to_string(),
                ByteString(docker_config.to_string().into_bytes()),
            )]
            .into(),
        ),
        ..Default::default()
    };
    Api::<Secret>::namespaced(garden.clone(), "garden")
        .create(&PostParams::default(), &pull_secret)
        .await
        .expect("pull secret");
    Api::<ControllerRegistration>::all(garden.clone())
        .create(&PostParams::default(), &registration("ext-oci"))
        .await
        .expect("registration");
    let mut deployment = deployment("ext-oci", b"", json!({"greeting": "from-oci"}));
    deployment.spec.helm = Some(
        serde_json::from_value(json!({
            "ociRepository": {
                "repository": format!("{}/charts/ext-small", registry.host),
                "tag": "1.0.0",
                "pullSecretRef": {"name": "chart-pull"},
            },
            "values": {"greeting": "from-oci"},
        }))
        .expect("helm"),
    );
    let deployments: Api<ControllerDeployment> = Api::all(garden.clone());
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .expect("deployment");
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    installations
        .create(
            &PostParams::default(),
            &installation("ext-oci-a", "ext-oci"),
        )
        .await
        .expect("installation");

    let config_maps: Api<ConfigMap> = Api::namespaced(seed.clone(), "extension-ext-oci-a");
    wait_until("configmap from the OCI chart applied", TIMEOUT, || async {
        config_map_value(&config_maps, "ext-oci-config", "greeting")
            .await
            .as_deref()
            == Some("from-oci")
    })
    .await;
    wait_condition(
        &installations,
        "ext-oci-a",
        "Valid",
        "True",
        "RegistrationValid",
    )
    .await;
    let managed_resources: Api<ManagedResource> = Api::namespaced(seed.clone(), "garden");
    let applied = secret_refs(&managed_resources, "ext-oci-a").await;
    assert!(applied.is_some());

    // A tag the registry does not have: Valid=False naming registry, reference and status; nothing changes.
    let mut moved = deployments.get("ext-oci").await.expect("deployment");
    if let Some(helm) = moved.spec.helm.as_mut()
        && let Some(oci) = helm.oci_repository.as_mut()
    {
        oci.tag = Some("9.9.9".into());
    }
    deployments
        .replace("ext-oci", &PostParams::default(), &moved)
        .await
        .expect("moved tag");
    let message = wait_condition(
        &installations,
        "ext-oci-a",
        "Valid",
        "False",
        "OCIChartCannotBePulled",
    )
    .await;
    assert!(
        message.contains(&registry.host)
            && message.contains("charts/ext-small:9.9.9")
            && message.contains("HTTP 404"),
        "{message}"
    );
    assert_eq!(secret_refs(&managed_resources, "ext-oci-a").await, applied);
    assert_eq!(
        config_map_value(&config_maps, "ext-oci-config", "greeting")
            .await
            .as_deref(),
        Some("from-oci")
    );

    // Wrong credentials: refused by the registry, said as such.
    let mut wrong = pull_secret.clone();
    wrong.metadata.name = Some("chart-pull-wrong".into());
    let bad_config =
        json!({"auths": {registry.host.clone(): {"username": "puller", "password": "nope"}}});
    wrong.data = Some(
        [(
            ".dockerconfigjson".to_string(),
            ByteString(bad_config.to_string().into_bytes()),
        )]
        .into(),
    );
    Api::<Secret>::namespaced(garden.clone(), "garden")
        .create(&PostParams::default(), &wrong)
        .await
        .expect("wrong pull secret");
    let mut refused = deployments.get("ext-oci").await.expect("deployment");
    if let Some(helm) = refused.spec.helm.as_mut()
        && let Some(oci) = helm.oci_repository.as_mut()
    {
        oci.tag = Some("1.0.0".into());
        oci.pull_secret_ref = Some(seedlet_api::common::LocalReference {
            name: "chart-pull-wrong".into(),
        });
    }
    deployments
        .replace("ext-oci", &PostParams::default(), &refused)
        .await
        .expect("wrong credentials");
    wait_until("authentication failure reported", TIMEOUT, || async {
        condition(&installations, "ext-oci-a", "Valid")
            .await
            .is_some_and(|(_, _, message)| message.contains("authentication failed: HTTP 401"))
    })
    .await;
    assert_eq!(secret_refs(&managed_resources, "ext-oci-a").await, applied);

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    clusters.shutdown().await;
}
