//! The one copy of seedlet's end-to-end harness: garden and seed sandboxes with the Gardener
//! CRDs and a Seed ready for extension installation ([`Clusters`]), the agent and the garden
//! controller started in-process with configuration overrides and ephemeral ports
//! ([`start_agent_with`], [`start_agent_from`], [`start_garden`]), and polling and condition
//! helpers ([`wait_for`], [`wait_condition_of`]), and the helpers of groups of end-to-end tests
//! ([`backup`], [`shoot_lifecycle`], [`shoot_state`]). Every listener binds `127.0.0.1:0`.

pub mod backup;
pub mod realkube;
pub mod shoot_lifecycle;
pub mod shoot_state;

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_agent::{Agent, AgentSettings, RunningAgent};
use seedlet_api::Condition;
use seedlet_api::core::Seed;
use seedlet_bootstrap::GardenClient;
use seedlet_sandbox::Sandbox;
pub use seedlet_sandbox::setup::{wait_for, wait_until};
use tokio_util::sync::CancellationToken;

/// Name of the seed in every test.
pub const SEED: &str = "local";

/// The identity of every test seed cluster (`kube-system/cluster-identity`, the Seed's
/// `status.clusterIdentity`).
pub const SEED_CLUSTER_IDENTITY: &str = "seed-identity";

/// Agent configuration used by the tests (leader election and servers adjusted in code). The
/// Shoot controller is off (`controllers.shoot.enabled: false`): most tests write Shoot status
/// themselves; `tests/shoot_flow.rs` switches it on.
pub const AGENT_CONFIG: &str = r#"
apiVersion: gardenlet.config.gardener.cloud/v1alpha1
kind: GardenletConfiguration
gardenClientConnection:
  kubeconfig: /nonexistent/garden-kubeconfig
controllers:
  controllerInstallationCare:
    syncPeriod: 2s
  managedResource:
    syncPeriod: 30s
  # Most tests drive Shoot status by hand; tests of the Shoot flow switch it on.
  shoot:
    enabled: false
seedConfig:
  metadata:
    name: local
    labels:
      env: test
  spec:
    provider:
      type: local
      region: local
      zones: [a, b]
    networks:
      pods: 10.1.0.0/16
      services: 10.2.0.0/16
"#;

/// A garden and a seed sandbox.
pub struct Clusters {
    /// The garden.
    pub garden: Sandbox,
    /// The seed.
    pub seed: Sandbox,
}

impl Clusters {
    /// Starts both sandboxes (the seed with or without workload status simulation) and installs
    /// the garden and seed CRDs, the garden namespaces and a Seed with a cluster identity.
    pub async fn start(workload_simulation: bool) -> Clusters {
        let garden = start_sandbox("garden").await;
        let seed = Sandbox::builder()
            .name("seed")
            .workload_simulation(workload_simulation)
            .start()
            .await
            .expect("seed sandbox");
        prepare_garden(&garden.client()).await;
        prepare_seed(&seed.client()).await;
        create_seed(&garden.client()).await;
        Clusters { garden, seed }
    }

    /// Stops both sandboxes.
    pub async fn shutdown(self) {
        self.garden.shutdown().await;
        self.seed.shutdown().await;
    }
}

/// Starts a sandbox API server named `name` on `127.0.0.1:0` with default settings.
pub async fn start_sandbox(name: &str) -> Sandbox {
    Sandbox::builder()
        .name(name)
        .start()
        .await
        .unwrap_or_else(|error| panic!("{name} sandbox: {error}"))
}

/// Installs the garden CRDs and the namespaces gardener-controller-manager would create for the
/// seed `local` (`garden`, `gardener-system-seed-lease`, `seed-local`).
pub async fn prepare_garden(garden: &kube::Client) {
    install_crds(garden, seedlet_api::crds::garden_crds()).await;
    for name in ["garden", "gardener-system-seed-lease", "seed-local"] {
        ensure_namespace(garden, name).await;
    }
}

/// Installs the seed CRDs and the seed's `garden` namespace (the sandbox keeps the endpoints
/// `default/kubernetes` the network policy controller reads, as kube-apiserver does).
pub async fn prepare_seed(seed: &kube::Client) {
    install_crds(seed, seedlet_api::crds::seed_crds()).await;
    ensure_namespace(seed, "garden").await;
    ensure_namespace(seed, "kube-system").await;
    // The seed cluster's identity, as Gardener keeps it: the Seed `local` carries it in
    // status.clusterIdentity (create_seed), so the agent recognises the Seed as its own cluster's
    // (an agent of another seed cluster would be a second agent for the same Seed).
    let identity: k8s_openapi::api::core::v1::ConfigMap =
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "cluster-identity", "namespace": "kube-system"},
            "data": {"cluster-identity": SEED_CLUSTER_IDENTITY},
            "immutable": true,
        }))
        .expect("config map");
    match Api::namespaced(seed.clone(), "kube-system")
        .create(&PostParams::default(), &identity)
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.is_already_exists() => {}
        Err(error) => panic!("create kube-system/cluster-identity: {error}"),
    }
}

/// Applies `crds` (as `seedlet sandbox` does) and waits until each is served.
pub async fn install_crds(client: &kube::Client, crds: Vec<CustomResourceDefinition>) {
    seedlet_sandbox::setup::install_crds(client, crds)
        .await
        .unwrap_or_else(|error| panic!("{}", seedlet_runtime::error_chain(&error)));
}

/// Creates namespace `name` unless it exists.
pub async fn ensure_namespace(client: &kube::Client, name: &str) {
    seedlet_sandbox::setup::ensure_namespace(client, name)
        .await
        .unwrap_or_else(|error| panic!("{}", seedlet_runtime::error_chain(&error)));
}

/// Creates `value` (a JSON object) as a `K`; panics naming the object when the API refuses it.
pub async fn create_object<K>(api: Api<K>, value: serde_json::Value) -> K
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned,
{
    let object: K = serde_json::from_value(value).expect("the JSON has the kind's shape");
    api.create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|error| panic!("create {:?}: {error}", object.meta().name))
}

/// The garden objects a Shoot of the simulated provider needs: Project `dev` owning `namespace`
/// (created) and CloudProfile `local` offering Kubernetes 1.32.0.
pub async fn create_project_and_cloud_profile(garden: &kube::Client, namespace: &str) {
    ensure_namespace(garden, namespace).await;
    create_object::<seedlet_api::core::Project>(
        Api::all(garden.clone()),
        serde_json::json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
               "metadata": {"name": "dev"}, "spec": {"namespace": namespace}}),
    )
    .await;
    create_object::<seedlet_api::core::CloudProfile>(
        Api::all(garden.clone()),
        serde_json::json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
               "metadata": {"name": "local"},
               "spec": {"type": "local", "kubernetes": {"versions": [{"version": "1.32.0"}]}}}),
    )
    .await;
}

/// Creates the Seed `local` with `status.clusterIdentity` (set by gardenlet's seed controller upstream).
pub async fn create_seed(garden: &kube::Client) {
    let seeds: Api<Seed> = Api::all(garden.clone());
    let seed: Seed = serde_json::from_value(serde_json::json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Seed",
        "metadata": {"name": SEED, "labels": {"env": "test"}},
        "spec": {
            "provider": {"type": "local", "region": "local", "zones": ["a", "b"]},
            "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}
        }
    }))
    .expect("seed");
    seeds
        .create(&PostParams::default(), &seed)
        .await
        .expect("create seed");
    let status = serde_json::json!({"status": {"clusterIdentity": SEED_CLUSTER_IDENTITY}});
    seeds
        .patch_status(SEED, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("seed status");
}

/// Starts an agent (no leader election, ephemeral server ports) against the clusters.
pub async fn start_agent(clusters: &Clusters, shutdown: CancellationToken) -> RunningAgent {
    start_agent_with(clusters, shutdown, |_| {}).await
}

/// [`start_agent`] with [`AGENT_CONFIG`] changed by `adjust` first.
pub async fn start_agent_with(
    clusters: &Clusters,
    shutdown: CancellationToken,
    adjust: impl FnOnce(&mut seedlet_config::GardenletConfiguration),
) -> RunningAgent {
    let mut config = agent_config(AGENT_CONFIG);
    adjust(&mut config);
    start_agent_from(
        config,
        clusters.seed.client(),
        Some(clusters.garden.client()),
        shutdown,
        |_| {},
    )
    .await
}

/// Parses a `GardenletConfiguration` fixture (panics on anything else).
pub fn agent_config(yaml: &str) -> seedlet_config::GardenletConfiguration {
    match seedlet_config::parse(yaml, "test.yaml").expect("valid config") {
        seedlet_config::AnyConfig::Gardenlet(config) => *config,
        other => panic!("unexpected config kind {}", other.kind()),
    }
}

/// Starts an in-process agent with `config` against the seed client `seed` and, when given, a
/// fixed garden client (otherwise the agent obtains its credential as configured). Servers bind
/// `127.0.0.1:0` and leader election is off; `adjust` may change the derived settings after that
/// (heartbeat period, leader election).
pub async fn start_agent_from(
    config: seedlet_config::GardenletConfiguration,
    seed: kube::Client,
    garden: Option<kube::Client>,
    shutdown: CancellationToken,
    adjust: impl FnOnce(&mut AgentSettings),
) -> RunningAgent {
    init_test_logging();
    let mut agent = Agent::new(config).expect("agent");
    let settings = agent.settings_mut();
    settings.health_address = "127.0.0.1:0".parse().expect("address");
    settings.metrics_address = "127.0.0.1:0".parse().expect("address");
    settings.leader_election = None;
    adjust(settings);
    let mut agent = agent.with_seed_client(seed);
    if let Some(garden) = garden {
        agent = agent.with_garden_client(GardenClient::new(garden, None));
    }
    agent.start(shutdown).await.expect("agent starts")
}

/// Logs for failing runs: `RUST_LOG=seedlet_agent=debug cargo test ... -- --nocapture`.
pub fn init_test_logging() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// Garden controller configuration used by the tests: short extensions-check period and a 2s
/// `ExtensionsReady` threshold so that the Progressing → False step is observable quickly.
pub const GARDEN_CONFIG: &str = r#"
apiVersion: seedlet.gardener.cloud/v1alpha1
kind: GardenControllerConfiguration
controllers:
  seedExtensionsCheck:
    syncPeriod: 1s
    conditionThresholds:
    - type: ExtensionsReady
      duration: 2s
"#;

/// Starts the garden controller (all built-in controllers, no leader election, ephemeral server
/// ports) against the garden sandbox with [`GARDEN_CONFIG`].
pub async fn start_garden(
    clusters: &Clusters,
    shutdown: CancellationToken,
) -> seedlet_garden::RunningGarden {
    let config = match seedlet_config::parse(GARDEN_CONFIG, "garden.yaml").expect("valid config") {
        seedlet_config::AnyConfig::GardenController(config) => *config,
        other => panic!("unexpected config kind {}", other.kind()),
    };
    let address: std::net::SocketAddr = "127.0.0.1:0".parse().expect("address");
    seedlet_garden::Garden::new(config, clusters.garden.client())
        .expect("garden controller")
        .with_addresses(address, address)
        .with_leader_election(None)
        .start(shutdown)
        .await
        .expect("garden controller starts")
}

/// `(status, reason, message)` of condition `type_` of object `name`, read fresh from the API;
/// `conditions` picks the object's conditions (e.g. `ControllerInstallation::conditions`).
pub async fn condition_of<K>(
    api: &Api<K>,
    name: &str,
    type_: &str,
    conditions: impl Fn(&K) -> &[Condition],
) -> Option<(String, String, String)>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    let object = api.get_opt(name).await.ok()??;
    let condition = seedlet_api::conditions::find(conditions(&object), type_)?;
    Some((
        condition.status.to_string(),
        condition.reason.clone(),
        condition.message.clone(),
    ))
}

/// Waits up to `timeout` until condition `type_` of `name` has `status` and `reason`; returns its
/// message.
pub async fn wait_condition_of<K>(
    api: &Api<K>,
    name: &str,
    (type_, status, reason): (&str, &str, &str),
    conditions: impl Fn(&K) -> &[Condition] + Copy,
    timeout: Duration,
) -> String
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    wait_for(
        &format!("{name} {type_}={status} {reason}"),
        timeout,
        || async move {
            condition_of(api, name, type_, conditions)
                .await
                .filter(|(s, r, _)| s == status && r == reason)
                .map(|(_, _, message)| message)
        },
    )
    .await
}

/// Parses a `GardenControllerConfiguration` (or Gardener `ControllerManagerConfiguration`)
/// fixture; panics on anything else.
pub fn garden_config(yaml: &str) -> seedlet_config::GardenControllerConfiguration {
    match seedlet_config::parse(yaml, "garden.yaml").expect("valid config") {
        seedlet_config::AnyConfig::GardenController(config) => *config,
        other => panic!("unexpected config kind {}", other.kind()),
    }
}

/// Starts the garden controller with `config` against `garden` alone (no seed sandbox needed):
/// all built-in controllers, no leader election, ephemeral server ports; `adjust` may change the
/// process before it starts (e.g. `|g| g.with_clock(clock)`).
pub async fn start_garden_from(
    garden: kube::Client,
    config: seedlet_config::GardenControllerConfiguration,
    shutdown: CancellationToken,
    adjust: impl FnOnce(seedlet_garden::Garden) -> seedlet_garden::Garden,
) -> seedlet_garden::RunningGarden {
    init_test_logging();
    let address: std::net::SocketAddr = "127.0.0.1:0".parse().expect("address");
    let process = seedlet_garden::Garden::new(config, garden)
        .expect("garden controller")
        .with_addresses(address, address)
        .with_leader_election(None);
    adjust(process)
        .start(shutdown)
        .await
        .expect("garden controller starts")
}
