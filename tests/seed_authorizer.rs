//! The seed authorizer end to end: a garden sandbox asks `seedlet garden`'s webhook (RBAC first,
//! then the webhook, as `--authorization-config` with `failurePolicy: Deny` and uncached answers),
//! two seeds hold only the narrow bootstrapper RBAC, and each reaches its own objects but not the
//! other's; lists need the seed's field selector; a shoot moving seeds moves its access; a stopped
//! webhook leaves seeds with 403 and a stopped SeedRestriction refuses their creates (not the
//! admin's); two agents that start from bootstrap tokens alone reach Ready
//! and remove their tokens.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use seedlet_api::core::{ControllerInstallation, Seed, Shoot, ShootState};
use seedlet_sandbox::Sandbox;
use seedlet_testkit as common;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);

struct Env {
    garden: Sandbox,
    shutdown: CancellationToken,
    /// The garden controller's `/metrics` address.
    metrics: std::net::SocketAddr,
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
        "{}webhooks:\n  server:\n    bindAddress: 127.0.0.1\n    freePort: true\n  tls:\n    serverCertDir: {}\n",
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
    assert!(
        count(
            "seedlet_seed_restriction_requests_total{operation=\"CREATE\",resource=\"leases\",decision=\"denied\"}"
        ) >= 1.0
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

/// An agent holding only seed `a`'s certificate (no `*/*/*` role) registers, renews its lease,
/// syncs its shoot's Cluster and reaches Ready through the authorizer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_works_with_only_the_narrow_rbac() {
    let env = start().await;
    let seed_cluster = Sandbox::builder()
        .name("seed-a")
        .start()
        .await
        .expect("seed");
    common::prepare_seed(&seed_cluster.client()).await;
    let garden_identity = seed_client(&env.garden, "a").await;
    let config = common::agent_config(&common::AGENT_CONFIG.replace("name: local", "name: a"));
    let agent = common::start_agent_from(
        config,
        seed_cluster.client(),
        Some(garden_identity),
        env.shutdown.clone(),
        |_| {},
    )
    .await;
    let seeds: Api<Seed> = Api::all(env.garden.client());
    common::wait_until("seed a ready", Duration::from_secs(30), || async {
        common::condition_of(&seeds, "a", "GardenletReady", |s: &Seed| s.conditions())
            .await
            .is_some_and(|(status, _, _)| status == "True")
    })
    .await;
    let clusters: Api<seedlet_api::extensions::Cluster> = Api::all(seed_cluster.client());
    common::wait_until("cluster of shoot-a", TIMEOUT, || async {
        clusters
            .get_opt("shoot--dev--shoot-a")
            .await
            .ok()
            .flatten()
            .is_some()
    })
    .await;
    drop(agent);
    env.shutdown.cancel();
}

/// The agent configuration of seed `name` that bootstraps from the seed Secret
/// `garden/gardenlet-kubeconfig-bootstrap` and keeps its certificate kubeconfig in
/// `garden/gardenlet-kubeconfig`.
fn bootstrapping_agent_config(name: &str) -> seedlet_config::GardenletConfiguration {
    let connection = format!(
        "gardenClientConnection:\n  bootstrapKubeconfig:\n    name: {}\n    namespace: garden\n  kubeconfigSecret:\n    name: {}\n    namespace: garden\n",
        seedlet_landscape::files::BOOTSTRAP_SECRET,
        seedlet_landscape::files::KUBECONFIG_SECRET,
    );
    common::agent_config(
        &common::AGENT_CONFIG
            .replace(
                "gardenClientConnection:\n  kubeconfig: /nonexistent/garden-kubeconfig\n",
                &connection,
            )
            .replace("name: local", &format!("name: {name}")),
    )
}

/// The garden client an agent built from the certificate kubeconfig it stored in its seed.
async fn stored_garden_client(seed: &kube::Client) -> Client {
    let stored = Api::<Secret>::namespaced(seed.clone(), "garden")
        .get(seedlet_landscape::files::KUBECONFIG_SECRET)
        .await
        .expect("certificate kubeconfig stored in the seed");
    let text = stored
        .data
        .as_ref()
        .and_then(|data| data.get("kubeconfig"))
        .map(|bytes| String::from_utf8(bytes.0.clone()).expect("utf-8 kubeconfig"))
        .expect("kubeconfig key");
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&text).expect("kubeconfig parses");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    Client::try_from(config).expect("client")
}

/// Two seeds start from nothing but a bootstrap token each, as an operator hands them out: both
/// agents get their certificates through CSRs, register and reach `GardenletReady` with only the
/// narrow RBAC (the authorizer and SeedRestriction on), remove their bootstrap tokens from the
/// garden, and each certificate reaches its own seed's objects but not the other's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_agents_bootstrap_from_tokens_with_only_the_narrow_rbac() {
    let env = start().await;
    let admin = env.garden.client();
    let mut seeds = Vec::new();
    for name in ["a", "b"] {
        common::ensure_namespace(&admin, &format!("seed-{name}")).await;
        let token_id = format!("{name}{name}0001");
        let token = format!("{token_id}.0123456789abcdef");
        create::<Secret>(
            Api::namespaced(admin.clone(), "kube-system"),
            json!({
                "metadata": {"name": format!("bootstrap-token-{token_id}")},
                "type": "bootstrap.kubernetes.io/token",
                "stringData": {
                    "token-id": token_id, "token-secret": "0123456789abcdef",
                    "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
                    "description": format!("bootstrap of seed {name}")
                }
            }),
        )
        .await;
        let cluster = Sandbox::builder()
            .name(format!("seed-{name}"))
            .start()
            .await
            .expect("seed");
        common::prepare_seed(&cluster.client()).await;
        let kubeconfig = seedlet_landscape::files::bootstrap_kubeconfig(
            &env.garden.endpoint(),
            &env.garden.ca_cert_pem(),
            &token,
        );
        seedlet_landscape::garden_setup::store_bootstrap_kubeconfig(&cluster.client(), &kubeconfig)
            .await
            .expect("bootstrap kubeconfig stored");
        let agent = common::start_agent_from(
            bootstrapping_agent_config(name),
            cluster.client(),
            None,
            env.shutdown.clone(),
            |settings| settings.bootstrap.retry_interval = Duration::from_millis(500),
        )
        .await;
        seeds.push((name, token_id, cluster, agent));
    }
    let seed_api: Api<Seed> = Api::all(admin.clone());
    let tokens: Api<Secret> = Api::namespaced(admin.clone(), "kube-system");
    for (name, token_id, _, _) in &seeds {
        common::wait_until(
            &format!("seed {name} ready"),
            Duration::from_secs(60),
            || async {
                common::condition_of(&seed_api, name, "GardenletReady", |s: &Seed| s.conditions())
                    .await
                    .is_some_and(|(status, _, _)| status == "True")
            },
        )
        .await;
        common::wait_until(
            &format!("bootstrap token of {name} removed"),
            TIMEOUT,
            || async {
                tokens
                    .get_opt(&format!("bootstrap-token-{token_id}"))
                    .await
                    .expect("read token")
                    .is_none()
            },
        )
        .await;
    }
    for (name, _, cluster, _) in &seeds {
        let other = if *name == "a" { "b" } else { "a" };
        let garden = stored_garden_client(&cluster.client()).await;
        let leases: Api<Lease> = Api::namespaced(garden.clone(), "gardener-system-seed-lease");
        outcome(leases.get(name).await).expect("own lease readable");
        forbidden_because(outcome(leases.get(other).await), "no relationship found");
        let installations: Api<ControllerInstallation> = Api::all(garden.clone());
        outcome(installations.get(&format!("ci-{name}")).await).expect("own installation");
        forbidden_because(
            outcome(installations.get(&format!("ci-{other}")).await),
            "no relationship found",
        );
        let states: Api<ShootState> = Api::namespaced(garden, "garden-dev");
        outcome(states.get(&format!("shoot-{name}")).await).expect("own shoot state");
        forbidden_because(
            outcome(states.get(&format!("shoot-{other}")).await),
            "no relationship found",
        );
    }
    drop(seeds);
    env.shutdown.cancel();
}

/// Creates an empty Secret `name` through `secrets`.
async fn create_as(secrets: &Api<Secret>, name: &str) -> Result<Secret, kube::Error> {
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("secret");
    secrets.create(&PostParams::default(), &secret).await
}

/// The garden controller keeps the `name.seed.gardener.cloud/<seed>` labels gardener-apiserver
/// would: a seed lists Shoots, ManagedSeeds and Seeds with its own label selector and sees what
/// it hosts, another seed's selector gets no opinion (403), and a managed seed's labels follow
/// the seed its Shoot moves to; the parent seed may create the managed seed's backup credentials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_selected_lists_follow_the_seed_labels() {
    use seedlet_api::seedmanagement::ManagedSeed;
    let env = start().await;
    let admin = env.garden.client();
    create::<Shoot>(
        Api::namespaced(admin.clone(), "garden"),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "child"},
            "spec": {"seedName": "a", "region": "local", "provider": {"type": "local"},
                     "cloudProfile": {"name": "local"}}
        }),
    )
    .await;
    create::<ManagedSeed>(
        Api::namespaced(admin.clone(), "garden"),
        json!({
            "apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "ManagedSeed",
            "metadata": {"name": "child"},
            "spec": {"shoot": {"name": "child"}, "gardenlet": {"config": {"seedConfig": {"spec": {
                "backup": {"credentialsRef": {"apiVersion": "v1", "kind": "Secret",
                                              "namespace": "garden", "name": "child-backup"}}}}}}}
        }),
    )
    .await;
    create::<Seed>(
        Api::all(admin.clone()),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
            "metadata": {"name": "child"},
            "spec": {"provider": {"type": "local", "region": "local"},
                     "networks": {"pods": "10.3.0.0/16", "services": "10.4.0.0/16"}}
        }),
    )
    .await;
    let a = seed_client(&env.garden, "a").await;
    let own = ListParams::default().labels("name.seed.gardener.cloud/a=true");
    let names = |list: Vec<String>| {
        let mut list = list;
        list.sort();
        list
    };
    common::wait_until("a's label selector finds its objects", TIMEOUT, || async {
        let shoots = Api::<Shoot>::all(a.clone()).list(&own).await;
        let managed = Api::<ManagedSeed>::all(a.clone()).list(&own).await;
        let seeds = Api::<Seed>::all(a.clone()).list(&own).await;
        match (shoots, managed, seeds) {
            (Ok(shoots), Ok(managed), Ok(seeds)) => {
                names(
                    shoots
                        .items
                        .iter()
                        .map(|s| s.metadata.name.clone().unwrap_or_default())
                        .collect(),
                ) == ["child", "shoot-a"]
                    && managed.items.len() == 1
                    && names(
                        seeds
                            .items
                            .iter()
                            .map(|s| s.metadata.name.clone().unwrap_or_default())
                            .collect(),
                    ) == ["a", "child"]
            }
            _ => false,
        }
    })
    .await;
    let theirs = ListParams::default().labels("name.seed.gardener.cloud/b=true");
    forbidden_because(
        outcome(Api::<Shoot>::all(a.clone()).list(&theirs).await),
        "",
    );

    // SeedRestriction: the parent seed creates its managed seed's backup credentials, nothing
    // else in `garden`.
    let secrets: Api<Secret> = Api::namespaced(a.clone(), "garden");
    outcome(create_as(&secrets, "child-backup").await).expect("the child's backup secret");
    forbidden_because(
        outcome(create_as(&secrets, "unrelated").await),
        "object does not belong to seed \"a\"",
    );

    // The managed seed's Shoot moves to b: its ManagedSeed and Seed follow.
    Api::<Shoot>::namespaced(admin.clone(), "garden")
        .patch(
            "child",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"seedName": "b"}})),
        )
        .await
        .expect("shoot moved");
    let seeds: Api<Seed> = Api::all(admin.clone());
    common::wait_until("Seed child carries b's label", TIMEOUT, || async {
        seeds.get("child").await.is_ok_and(|seed| {
            let labels = seed.metadata.labels.unwrap_or_default();
            labels.contains_key("name.seed.gardener.cloud/b")
                && !labels.contains_key("name.seed.gardener.cloud/a")
        })
    })
    .await;
    let managed = Api::<ManagedSeed>::all(a).list(&own).await.expect("list");
    assert!(
        managed.items.is_empty(),
        "a no longer hosts the managed seed"
    );
    env.shutdown.cancel();
}

/// SeedRestriction's Gardenlet rule through the real webhook: a seed creates a bootstrap token for
/// its own Gardenlet only while it asks to renew its kubeconfig, never for another seed's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gardenlet_bootstrap_tokens_only_while_renewing() {
    use seedlet_api::seedmanagement::Gardenlet;
    let env = start().await;
    let admin = env.garden.client();
    create::<Gardenlet>(
        Api::namespaced(admin.clone(), "garden"),
        json!({"apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "Gardenlet",
               "metadata": {"name": "a"}, "spec": {}}),
    )
    .await;
    let a = seed_client(&env.garden, "a").await;
    let tokens: Api<Secret> = Api::namespaced(a.clone(), "kube-system");
    let token = |id: &str, target: &str| -> Secret {
        serde_json::from_value(json!({
            "metadata": {"name": format!("bootstrap-token-{id}")},
            "type": "bootstrap.kubernetes.io/token",
            "stringData": {"token-id": id, "token-secret": "0123456789abcdef",
                "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
                "description": format!("A bootstrap token for the Gardenlet for seedmanagement.gardener.cloud/v1alpha1.Gardenlet resource {target}.")}
        }))
        .expect("token")
    };
    let denied = |message: &str| {
        format!(
            "admission webhook \"seed-restriction.gardener.cloud\" denied the request: {message}"
        )
    };
    // The authorizer's graph and the webhook need a moment after start: retry until answered.
    common::wait_until("SeedRestriction answers", TIMEOUT, || async {
        matches!(
            outcome(tokens.create(&PostParams::default(), &token("aaaaa1", "garden/a")).await),
            Err((400, message)) if message == denied("gardenlet garden/a is already bootstrapped")
        )
    })
    .await;
    match outcome(
        tokens
            .create(&PostParams::default(), &token("aaaaa2", "garden/b"))
            .await,
    ) {
        Err((403, message)) => {
            assert_eq!(
                message,
                denied("gardenlet garden/b does not belong to seed \"a\"")
            )
        }
        other => panic!("a must not bootstrap b's gardenlet: {other:?}"),
    }
    Api::<Gardenlet>::namespaced(admin, "garden")
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"annotations": {"gardener.cloud/operation": "renew-kubeconfig"}}})),
        )
        .await
        .expect("renewal asked for");
    common::wait_until("renewal lets a create its token", TIMEOUT, || async {
        outcome(
            tokens
                .create(&PostParams::default(), &token("aaaaa3", "garden/a"))
                .await,
        )
        .is_ok()
    })
    .await;
    env.shutdown.cancel();
}
