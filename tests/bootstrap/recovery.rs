//! Interrupted bootstraps, rejected credentials and the certificate expiry in the Seed status.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_interrupted_after_any_step_converges_on_restart() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    let steps: [fn(&BootstrapStep) -> bool; 5] = [
        |s| matches!(s, BootstrapStep::KeyGenerated),
        |s| matches!(s, BootstrapStep::CsrCreated { .. }),
        |s| matches!(s, BootstrapStep::CertificateIssued { .. }),
        |s| matches!(s, BootstrapStep::KubeconfigStored),
        |s| matches!(s, BootstrapStep::BootstrapSecretDeleted),
    ];
    for (index, crash_after) in steps.into_iter().enumerate() {
        let token_id = format!("fff00{index}");
        let (kubeconfig, bootstrap) = (format!("kubeconfig-{index}"), format!("bootstrap-{index}"));
        env.bootstrap_secret(&token_id, &bootstrap).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut crashing = options(&format!("seed-f{index}"), &kubeconfig, &bootstrap);
        let record = Arc::clone(&seen);
        crashing.observer = Some(Arc::new(move |step: &BootstrapStep| {
            record.lock().expect("lock").push(step.clone());
            if crash_after(step) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }));
        let crashed = GardenIdentity::establish(env.seed.client(), crashing).await;
        assert!(crashed.is_err(), "step {index}: crash injected");

        let identity = GardenIdentity::establish(
            env.seed.client(),
            options(&format!("seed-f{index}"), &kubeconfig, &bootstrap),
        )
        .await
        .unwrap_or_else(|e| panic!("step {index}: restart converges: {e}"));
        assert!(
            garden_accepts(identity.client().client()).await,
            "step {index}: garden accepts"
        );
        let (info, _) = stored_certificate(&env, &kubeconfig)
            .await
            .expect("kubeconfig stored");
        assert_eq!(
            info.subject.common_name,
            format!("gardener.cloud:system:seed:seed-f{index}")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_rejected_by_garden_is_replaced_by_bootstrap() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    env.bootstrap_secret("ggg001", "bootstrap").await;
    // A certificate the garden does not trust (issued by the seed's CA) but pointing at the garden.
    let mut foreign = env
        .seed
        .kubeconfig_for(
            "gardener.cloud:system:seed:seed-g",
            &["gardener.cloud:system:seeds"],
        )
        .expect("issued");
    let garden_cluster = env.garden.admin_kubeconfig().clusters[0].cluster.clone();
    foreign.clusters[0].cluster = garden_cluster;
    let text = serde_yaml::to_string(&foreign).expect("serialises");
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("kubeconfig".into()),
            namespace: Some(NAMESPACE.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "kubeconfig".to_owned(),
            ByteString(text.into_bytes()),
        )])),
        ..Secret::default()
    };
    env.secrets()
        .create(&PostParams::default(), &secret)
        .await
        .expect("foreign kubeconfig stored");

    let identity = GardenIdentity::establish(
        env.seed.client(),
        options("seed-g", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("rejected credential replaced by bootstrap");
    assert!(garden_accepts(identity.client().client()).await);
    assert!(
        env.secrets()
            .get_opt("bootstrap")
            .await
            .expect("readable")
            .is_none(),
        "bootstrap used"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_status_carries_client_certificate_expiration() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(env.garden.client());
    for crd in seedlet_api::crds::garden_crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("crd created");
    }
    let seed_resource = kube::api::ApiResource {
        group: "core.gardener.cloud".into(),
        version: "v1beta1".into(),
        api_version: "core.gardener.cloud/v1beta1".into(),
        kind: "Seed".into(),
        plural: "seeds".into(),
    };
    let seeds: Api<kube::api::DynamicObject> = Api::all_with(env.garden.client(), &seed_resource);
    let seed: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed", "metadata": {"name": "seed-h"},
        "spec": {"provider": {"type": "local", "region": "local"}, "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}},
    }))
    .expect("seed object");
    eventually(Duration::from_secs(10), "seed crd served", || async {
        seeds.create(&PostParams::default(), &seed).await.is_ok()
    })
    .await;
    // What Gardener's seed authorizer grants a seed on its own Seed.
    let roles: Api<ClusterRole> = Api::all(env.garden.client());
    let role = ClusterRole {
        metadata: named("seed-status"),
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["core.gardener.cloud".into()]),
            resources: Some(vec!["seeds/status".into()]),
            verbs: vec!["patch".into()],
            ..PolicyRule::default()
        }]),
        ..ClusterRole::default()
    };
    roles
        .create(&PostParams::default(), &role)
        .await
        .expect("role created");
    let bindings: Api<ClusterRoleBinding> = Api::all(env.garden.client());
    let binding = ClusterRoleBinding {
        metadata: named("seed-status"),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "seed-status".into(),
        },
        subjects: Some(vec![RbacSubject {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Group".into(),
            name: "gardener.cloud:system:seeds".into(),
            ..RbacSubject::default()
        }]),
    };
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding created");
    env.bootstrap_secret("hhh001", "bootstrap").await;
    let identity = GardenIdentity::establish(
        env.seed.client(),
        options("seed-h", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("bootstrap succeeds");
    let expiry = identity
        .client()
        .certificate_expiry()
        .expect("certificate expiry known");
    let runner = tokio::spawn(identity.run());
    let expected = expiry.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    eventually(
        Duration::from_secs(10),
        "seed status expiration",
        || async {
            let seed = seeds.get("seed-h").await.expect("seed readable");
            seed.data
                .pointer("/status/clientCertificateExpirationTimestamp")
                .and_then(|v| v.as_str())
                == Some(expected.as_str())
        },
    )
    .await;
    runner.abort();
}

/// The garden token Secret is deleted once the garden lets the seed delete it: the first attempt
/// is refused (the seed holds only the bootstrapper role), the retries go on in the background.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_token_cleanup_is_retried_until_the_token_is_gone() {
    let env = Env::start().await;
    let _approver = env.start_approver();
    env.bootstrap_secret("ccc003", "bootstrap").await;
    let _identity = GardenIdentity::establish(
        env.seed.client(),
        options("seed-c", "kubeconfig", "bootstrap"),
    )
    .await
    .expect("bootstrap succeeds");
    let tokens: Api<Secret> = Api::namespaced(env.garden.client(), "kube-system");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        tokens
            .get_opt("bootstrap-token-ccc003")
            .await
            .expect("readable")
            .is_some(),
        "the seed may not delete the token yet"
    );
    // The operator grants the deletion (as the seed authorizer does for Gardener-named tokens).
    let roles: Api<Role> = Api::namespaced(env.garden.client(), "kube-system");
    roles
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "delete-tokens"},
                "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["delete"]}]}))
            .expect("role"),
        )
        .await
        .expect("role created");
    let bindings: Api<RoleBinding> = Api::namespaced(env.garden.client(), "kube-system");
    bindings
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "delete-tokens"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "delete-tokens"},
                "subjects": [{"kind": "User", "name": "gardener.cloud:system:seed:seed-c"}]}))
            .expect("binding"),
        )
        .await
        .expect("binding created");
    eventually(Duration::from_secs(15), "token deleted", || async {
        tokens
            .get_opt("bootstrap-token-ccc003")
            .await
            .expect("readable")
            .is_none()
    })
    .await;
}
