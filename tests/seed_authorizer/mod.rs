//! The seed authorizer end to end: a garden sandbox asks `seedlet garden`'s webhook (RBAC first,
//! then the webhook, as `--authorization-config` with `failurePolicy: Deny` and uncached answers),
//! two seeds hold only the narrow bootstrapper RBAC, and each reaches its own objects but not the
//! other's; lists need the seed's field selector; a shoot moving seeds moves its access; a stopped
//! webhook leaves seeds with 403 and a stopped SeedRestriction refuses their creates (not the
//! admin's); two agents that start from bootstrap tokens alone reach Ready
//! and remove their tokens; deleting a shoot removes its seed side and ShootState first.

use std::time::Duration;

use rustls::pki_types::pem::PemObject;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use seedlet_api::core::{ControllerInstallation, Seed, Shoot, ShootState};
use seedlet_sandbox::Sandbox;
use seedlet_testkit as common;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

mod agents;
mod managed_seeds;
mod shoot_deletion;

const TIMEOUT: Duration = Duration::from_secs(20);

struct Env {
    garden: Sandbox,
    shutdown: CancellationToken,
    /// The garden controller's `/metrics` address.
    metrics: std::net::SocketAddr,
    /// The webhooks' HTTPS address.
    webhook: std::net::SocketAddr,
    _dir: tempfile::TempDir,
}

async fn create<K>(api: Api<K>, object: Value) -> K
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let object: K = serde_json::from_value(object).expect("object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("created")
}

/// The garden with its webhook configured, two seeds and an object of each kind per seed.
async fn start() -> Env {
    common::init_test_logging();
    let garden = seedlet_testkit::start_sandbox("garden").await;
    let admin = garden.client();
    common::prepare_garden(&admin).await;
    common::ensure_namespace(&admin, "garden-dev").await;
    let project_label = json!({"metadata": {"labels": {"project.gardener.cloud/name": "dev"}}});
    Api::<k8s_openapi::api::core::v1::Namespace>::all(admin.clone())
        .patch(
            "garden-dev",
            &PatchParams::default(),
            &Patch::Merge(&project_label),
        )
        .await
        .expect("project namespace labelled");
    let dir = tempfile::tempdir().expect("dir");
    let (chain, key) = garden
        .issue_serving_certificate("seedlet-garden-webhooks", &["127.0.0.1"])
        .expect("serving certificate");
    std::fs::write(dir.path().join("tls.crt"), chain).expect("tls.crt");
    std::fs::write(dir.path().join("tls.key"), key).expect("tls.key");
    let config = format!(
        "{}webhooks:\n  server:\n    bindAddress: 127.0.0.1\n    freePort: true\n  tls:\n    serverCertDir: {}\n  enableDebugHandlers: true\n",
        common::GARDEN_CONFIG,
        dir.path().display()
    );
    let config = match seedlet_config::parse(&config, "garden.yaml").expect("valid config") {
        seedlet_config::AnyConfig::GardenController(config) => *config,
        other => panic!("unexpected config kind {}", other.kind()),
    };
    let shutdown = CancellationToken::new();
    let address: std::net::SocketAddr = "127.0.0.1:0".parse().expect("address");
    let running = seedlet_garden::Garden::new(config, admin.clone())
        .expect("garden controller")
        .with_addresses(address, address)
        .with_leader_election(None)
        .start(shutdown.clone())
        .await
        .expect("garden controller starts");
    let webhook = running.webhook_address.expect("webhooks on");
    // As `seedlet sandbox` wires it: the authorizer after RBAC (uncached, Deny on failure) and
    // SeedRestriction registered for seed identities.
    seedlet_landscape::webhooks::enable_in(&garden, dir.path(), webhook)
        .await
        .expect("webhooks enabled");
    create::<seedlet_api::core::CloudProfile>(
        Api::all(admin.clone()),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
            "metadata": {"name": "local"},
            "spec": {"type": "local", "kubernetes": {"versions": [{"version": "1.33.0"}]}}
        }),
    )
    .await;
    for seed in ["a", "b"] {
        create::<Secret>(
            Api::namespaced(admin.clone(), "garden"),
            json!({"metadata": {"name": format!("backup-{seed}")}}),
        )
        .await;
        create::<Seed>(Api::all(admin.clone()), json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
            "metadata": {"name": seed},
            "spec": {"provider": {"type": "local", "region": "local"},
                     "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
                     "backup": {"provider": "local", "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "namespace": "garden", "name": format!("backup-{seed}")}}}
        })).await;
        create::<Shoot>(
            Api::namespaced(admin.clone(), "garden-dev"),
            json!({
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
                "metadata": {"name": format!("shoot-{seed}")},
                "spec": {"seedName": seed, "region": "local", "provider": {"type": "local"},
                     "cloudProfile": {"name": "local"}}
            }),
        )
        .await;
        create::<ShootState>(
            Api::namespaced(admin.clone(), "garden-dev"),
            json!({
                "apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootState",
                "metadata": {"name": format!("shoot-{seed}")}, "spec": {}
            }),
        )
        .await;
        create::<ControllerInstallation>(Api::all(admin.clone()), json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerInstallation",
            "metadata": {"name": format!("ci-{seed}")},
            "spec": {"registrationRef": {"name": "ext"}, "deploymentRef": {"name": "ext"}, "seedRef": {"name": seed}}
        })).await;
        create::<Lease>(
            Api::namespaced(admin.clone(), "gardener-system-seed-lease"),
            json!({"metadata": {"name": seed}}),
        )
        .await;
    }
    Env {
        garden,
        shutdown,
        metrics: running.metrics_address,
        webhook,
        _dir: dir,
    }
}

async fn seed_client(garden: &Sandbox, seed: &str) -> Client {
    let kubeconfig = garden
        .kubeconfig_for(
            &format!("gardener.cloud:system:seed:{seed}"),
            &["gardener.cloud:system:seeds"],
        )
        .expect("seed certificate");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    Client::try_from(config).expect("client")
}

/// `Ok(())` or the HTTP code and message of the refusal.
fn outcome<T>(result: Result<T, kube::Error>) -> Result<(), (u16, String)> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) => Err((status.code, status.message)),
        Err(other) => Err((0, other.to_string())),
    }
}

fn forbidden_because(result: Result<(), (u16, String)>, reason: &str) {
    match result {
        Err((403, message)) => assert!(message.ends_with(reason), "{message}"),
        other => panic!("expected 403 ({reason}), got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeds_reach_only_their_own_objects() {
    let env = start().await;
    let a = seed_client(&env.garden, "a").await;
    let b = seed_client(&env.garden, "b").await;
    let secrets = |client: &Client| Api::<Secret>::namespaced(client.clone(), "garden");
    // The graph is built from watches; until they have listed everything the webhook answers
    // 503 and the failure policy denies.
    common::wait_until("authorizer synced", TIMEOUT, || async {
        outcome(secrets(&a).get("backup-a").await).is_ok()
    })
    .await;

    forbidden_because(
        outcome(secrets(&a).get("backup-b").await),
        "no relationship found",
    );
    assert_eq!(outcome(secrets(&b).get("backup-b").await), Ok(()));
    // The garden controller gave the garden a cluster identity, which every seed may read.
    let identity =
        Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(a.clone(), "kube-system")
            .get("cluster-identity")
            .await
            .expect("seeds read the garden identity");
    assert!(identity.data.unwrap_or_default()["cluster-identity"].starts_with("garden-"));

    let leases =
        |client: &Client| Api::<Lease>::namespaced(client.clone(), "gardener-system-seed-lease");
    let renew = json!({"spec": {"holderIdentity": "x"}});
    let patch = |client: &Client, name: &'static str| {
        let api = leases(client);
        let renew = renew.clone();
        async move {
            outcome(
                api.patch(name, &PatchParams::default(), &Patch::Merge(&renew))
                    .await,
            )
        }
    };
    assert_eq!(patch(&a, "a").await, Ok(()));
    forbidden_because(patch(&a, "b").await, "no relationship found");

    let states = |client: &Client| Api::<ShootState>::namespaced(client.clone(), "garden-dev");
    assert_eq!(outcome(states(&a).get("shoot-a").await), Ok(()));
    forbidden_because(
        outcome(states(&a).get("shoot-b").await),
        "no relationship found",
    );

    let seeds = |client: &Client| Api::<Seed>::all(client.clone());
    assert_eq!(outcome(seeds(&a).get("a").await), Ok(()));
    let label = json!({"metadata": {"labels": {"touched": "yes"}}});
    forbidden_because(
        outcome(
            seeds(&a)
                .patch("b", &PatchParams::default(), &Patch::Merge(&label))
                .await,
        ),
        "no relationship found",
    );

    // Installations: by name through the graph; lists only with the seed's field selector.
    let installations = |client: &Client| Api::<ControllerInstallation>::all(client.clone());
    assert_eq!(outcome(installations(&a).get("ci-a").await), Ok(()));
    forbidden_because(
        outcome(installations(&a).get("ci-b").await),
        "no relationship found",
    );
    forbidden_because(
        outcome(installations(&a).list(&ListParams::default()).await),
        "must specify field or label selector for name a",
    );
    forbidden_because(
        outcome(
            installations(&a)
                .list(&ListParams::default().fields("spec.seedRef.name=b"))
                .await,
        ),
        "must specify field or label selector for name a",
    );
    let own = installations(&a)
        .list(&ListParams::default().fields("spec.seedRef.name=a"))
        .await
        .expect("own installations");
    let names: Vec<String> = own
        .items
        .iter()
        .filter_map(|ci| ci.metadata.name.clone())
        .collect();
    assert_eq!(names, ["ci-a"]);
    // Watches follow the same rule as lists.
    forbidden_because(
        outcome(
            installations(&a)
                .watch(&kube::api::WatchParams::default(), "0")
                .await
                .map(|_| ()),
        ),
        "must specify field or label selector for name a",
    );
    let own_events = installations(&a)
        .watch(
            &kube::api::WatchParams::default().fields("spec.seedRef.name=a"),
            "0",
        )
        .await
        .expect("own installations watched");
    let mut own_events = Box::pin(own_events);
    let first = tokio::time::timeout(TIMEOUT, futures::StreamExt::next(&mut own_events))
        .await
        .expect("a watch event")
        .expect("stream open")
        .expect("event");
    match first {
        kube::api::WatchEvent::Added(ci) => assert_eq!(ci.metadata.name.as_deref(), Some("ci-a")),
        other => panic!("unexpected watch event {other:?}"),
    }

    // Events anywhere; nothing else without a relationship.
    forbidden_because(
        outcome(secrets(&a).list(&ListParams::default()).await),
        "only the following verbs are allowed for this resource type: [create delete get patch update]",
    );

    // SeedRestriction: creating is authorized, but only what belongs to the seed is admitted.
    let denied = "admission webhook \"seed-restriction.gardener.cloud\" denied the request: object does not belong to seed \"a\"";
    let lease: Lease = serde_json::from_value(json!({"metadata": {"name": "c"}})).expect("lease");
    match outcome(leases(&a).create(&PostParams::default(), &lease).await) {
        Err((403, message)) => assert_eq!(message, denied),
        other => panic!("a must not create another seed's lease: {other:?}"),
    }
    let config_maps = |client: &Client| {
        Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(client.clone(), "garden-dev")
    };
    let ca = |name: &str| -> k8s_openapi::api::core::v1::ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("configmap")
    };
    assert_eq!(
        outcome(
            config_maps(&a)
                .create(&PostParams::default(), &ca("shoot-a.ca-cluster"))
                .await
        ),
        Ok(())
    );
    match outcome(
        config_maps(&a)
            .create(&PostParams::default(), &ca("shoot-b.ca-cluster"))
            .await,
    ) {
        Err((403, message)) => assert_eq!(message, denied),
        other => panic!("a must not create b's shoot CA: {other:?}"),
    }
    let state: ShootState =
        serde_json::from_value(json!({"metadata": {"name": "shoot-b"}, "spec": {}}))
            .expect("state");
    Api::<ShootState>::namespaced(env.garden.client(), "garden-dev")
        .delete("shoot-b", &Default::default())
        .await
        .expect("deleted");
    match outcome(states(&a).create(&PostParams::default(), &state).await) {
        Err((403, message)) => assert!(
            message.contains("no relationship found") || message == denied,
            "{message}"
        ),
        other => panic!("a must not create b's shoot state: {other:?}"),
    }

    // The decisions are counted in the garden controller's /metrics.
    let exposition = reqwest::get(format!("http://{}/metrics", env.metrics))
        .await
        .expect("metrics reachable")
        .text()
        .await
        .expect("metrics body");
    let count = |series: &str| {
        exposition
            .lines()
            .find(|line| line.starts_with(series))
            .and_then(|line| line.rsplit(' ').next())
            .and_then(|value| value.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{series} missing in:\n{exposition}"))
    };
    assert!(count("seedlet_seed_authorizer_requests_total{decision=\"allow\"}") >= 1.0);
    assert!(count("seedlet_seed_authorizer_requests_total{decision=\"no_opinion\"}") >= 1.0);
    assert!(count("seedlet_seed_authorizer_request_duration_seconds_count") >= 2.0);
    assert_eq!(count("seedlet_seed_authorizer_synced"), 1.0);
    // Two seeds with a Shoot, ShootState, installation, Lease and Secret each, and more.
    assert!(count("seedlet_seed_authorizer_graph_vertices") >= 10.0);
    assert!(
        count(
            "seedlet_seed_restriction_requests_total{operation=\"CREATE\",resource=\"leases\",decision=\"denied\"}"
        ) >= 1.0
    );

    // The debug page lists what a seed may reach through the graph.
    let roots = {
        let mut roots = rustls::RootCertStore::empty();
        let ca =
            rustls::pki_types::CertificateDer::from_pem_slice(env.garden.ca_cert_pem().as_bytes())
                .expect("sandbox CA");
        roots.add(ca).expect("root");
        roots
    };
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let https = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .expect("client");
    let page = https
        .get(format!(
            "https://{}/debug/resource-dependency-graph?seed=a",
            env.webhook
        ))
        .send()
        .await
        .expect("debug page")
        .text()
        .await
        .expect("page text");
    for line in [
        "Seed a",
        "Lease gardener-system-seed-lease/a",
        "ShootState garden-dev/shoot-a",
    ] {
        assert!(
            page.lines().any(|l| l == line),
            "{line} missing in:\n{page}"
        );
    }
    assert!(
        !page.contains("shoot-b"),
        "b's objects are not a's:\n{page}"
    );

    // A shoot moving from a to b moves its access.
    let admin = env.garden.client();
    let shoots: Api<Shoot> = Api::namespaced(admin.clone(), "garden-dev");
    let move_to_b = json!({"spec": {"seedName": "b"}});
    shoots
        .patch(
            "shoot-a",
            &PatchParams::default(),
            &Patch::Merge(&move_to_b),
        )
        .await
        .expect("shoot moved");
    common::wait_until("access moved to b", TIMEOUT, || async {
        outcome(states(&b).get("shoot-a").await).is_ok()
            && outcome(states(&a).get("shoot-a").await).is_err()
    })
    .await;

    // A stopped webhook: the failure policy denies what RBAC does not grant.
    env.shutdown.cancel();
    common::wait_until("webhook down denies", TIMEOUT, || async {
        matches!(outcome(secrets(&b).get("backup-b").await), Err((403, _)))
    })
    .await;
    // SeedRestriction down (`failurePolicy: Fail`): a CSR, which RBAC lets a seed create, is
    // refused; users that are not seeds are outside its match conditions and unaffected.
    let request =
        seedlet_bootstrap::csr::PreparedRequest::generate(&seedlet_bootstrap::csr::Subject {
            common_name: "gardener.cloud:system:seed:b".to_owned(),
            organizations: vec!["gardener.cloud:system:seeds".to_owned()],
        })
        .expect("request");
    let csr: k8s_openapi::api::certificates::v1::CertificateSigningRequest =
        serde_json::from_value(json!({
            "metadata": {"name": "seed-b-renewal"},
            "spec": {"request": base64::Engine::encode(&base64::engine::general_purpose::STANDARD, request.request_pem),
                     "signerName": "kubernetes.io/kube-apiserver-client",
                     "usages": ["key encipherment", "digital signature", "client auth"]}
        }))
        .expect("csr");
    let csrs = |client: &Client| {
        Api::<k8s_openapi::api::certificates::v1::CertificateSigningRequest>::all(client.clone())
    };
    match outcome(csrs(&b).create(&PostParams::default(), &csr).await) {
        Err((code, message)) => assert!(
            code >= 500 && message.contains("seed-restriction.gardener.cloud"),
            "{code} {message}"
        ),
        Ok(()) => panic!("a seed's CSR must not be admitted without SeedRestriction"),
    }
    create::<Secret>(
        Api::namespaced(env.garden.client(), "garden"),
        json!({"metadata": {"name": "created-by-the-admin"}}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_seeds_and_malformed_reviews_get_no_opinion() {
    let env = start().await;
    let a = seed_client(&env.garden, "a").await;
    common::wait_until("authorizer synced", TIMEOUT, || async {
        outcome(Api::<Seed>::all(a.clone()).get("a").await).is_ok()
    })
    .await;
    // A user that is not a seed gets no opinion: RBAC's answer stands.
    let kubeconfig = env
        .garden
        .kubeconfig_for("mallory", &[])
        .expect("certificate");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    let mallory = Client::try_from(config).expect("client");
    match outcome(
        Api::<Secret>::namespaced(mallory, "garden")
            .get("backup-a")
            .await,
    ) {
        Err((403, message)) => assert!(
            message.ends_with("in the namespace \"garden\""),
            "{message}"
        ),
        other => panic!("mallory must be refused by RBAC alone: {other:?}"),
    }
    env.shutdown.cancel();
}
