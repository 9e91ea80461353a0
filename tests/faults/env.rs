//! The fault suite's environment: garden and seed sandboxes that can be stopped and restarted with
//! the same state and address, the garden controller, an in-process agent with short timers, the
//! extension objects the tests install, and probes of what the whole system converged to.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_agent::RunningAgent;
use seedlet_api::common::ObjectReference;
use seedlet_api::core::{
    ControllerDeployment, ControllerDeploymentFields, ControllerInstallation,
    ControllerInstallationSpec, ControllerRegistration, HelmControllerDeployment, Seed,
};
use seedlet_api::resources::ManagedResource;
use seedlet_garden::{Garden, RunningGarden};
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::common::{SEED, ensure_namespace, install_crds, wait_for};

/// A good extension chart (ConfigMap `<registration>-config` with `.Values.greeting`, a Deployment
/// and an extra ConfigMap).
pub const CHART: &[u8] = include_bytes!("../fixtures/charts/ext-small-v1.tgz");
/// How long a fault test waits for convergence before failing.
pub const CONVERGE: Duration = Duration::from_secs(30);
/// The user the in-process agent authenticates as in both clusters (`system:masters`), so that
/// its requests can be told apart from the test's own.
pub const AGENT_USER: &str = "seedlet-agent";

/// The testkit's agent configuration with the suite's short timers: 1 s Lease (miss threshold
/// 5), 1 s care and 2 s applier periods. The garden credential is passed in code
/// ([`start_agent`]).
pub fn short_timer_config() -> seedlet_config::GardenletConfiguration {
    let mut config = agent_config(seedlet_testkit::AGENT_CONFIG);
    let controllers = &mut config.controllers;
    controllers.controller_installation_care.sync_period =
        seedlet_config::Duration::from_millis(1_000);
    controllers.managed_resource.sync_period = seedlet_config::Duration::from_millis(2_000);
    controllers.seed.lease_resync_seconds = 1;
    controllers.seed.lease_resync_miss_threshold = 5;
    config
}

/// Garden controller configuration: defaults (CSR approval, scheduling, lifecycle).
const GARDEN_CONFIG: &str =
    "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenControllerConfiguration\n";

/// One sandbox with a state directory and a fixed port, so it can be restarted as the same cluster.
pub struct Cluster {
    name: &'static str,
    dir: PathBuf,
    port: u16,
    workload_simulation: bool,
    running: Option<Sandbox>,
}

impl Cluster {
    async fn start(name: &'static str, dir: PathBuf, workload_simulation: bool) -> Self {
        let sandbox = Sandbox::builder()
            .name(name)
            .dir(&dir)
            .workload_simulation(workload_simulation)
            .start()
            .await
            .unwrap_or_else(|e| panic!("{name} sandbox starts: {e}"));
        let port = sandbox
            .endpoint()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("endpoint ends with the port");
        Self {
            name,
            dir,
            port,
            workload_simulation,
            running: Some(sandbox),
        }
    }

    /// The running sandbox.
    pub fn sandbox(&self) -> &Sandbox {
        self.running.as_ref().expect("cluster is running")
    }

    /// An admin client of the running sandbox.
    pub fn client(&self) -> kube::Client {
        self.sandbox().client()
    }

    /// Stops the API server (open connections and watches end); state is persisted.
    pub async fn stop(&mut self) {
        let sandbox = self.running.take().expect("cluster is running");
        tokio::time::timeout(Duration::from_secs(10), sandbox.shutdown())
            .await
            .unwrap_or_else(|_| panic!("{} sandbox stops within 10s", self.name));
    }

    /// Starts the API server again on the same address with the persisted state and CA.
    pub async fn restart(&mut self) {
        assert!(self.running.is_none(), "{} is stopped first", self.name);
        let sandbox = Sandbox::builder()
            .name(self.name)
            .dir(&self.dir)
            .port(self.port)
            .workload_simulation(self.workload_simulation)
            .start()
            .await
            .unwrap_or_else(|e| panic!("{} sandbox restarts: {e}", self.name));
        self.running = Some(sandbox);
    }

    /// A client authenticating as `user` in `system:masters` (issued by the persistent CA, so it
    /// keeps working across restarts).
    pub async fn user_client(&self, user: &str) -> kube::Client {
        let kubeconfig = self
            .sandbox()
            .kubeconfig_for(user, &["system:masters"])
            .expect("client certificate issued");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("kubeconfig loads");
        kube::Client::try_from(config).expect("client builds")
    }

    /// Requests of `user` the server authenticated and served so far (injected failures not
    /// included).
    pub fn requests_of(&self, user: &str) -> u64 {
        self.sandbox()
            .request_counts()
            .get(user)
            .copied()
            .unwrap_or(0)
    }

    /// Requests of `user` failed by fault injection so far.
    pub fn injected_failures_of(&self, user: &str) -> u64 {
        self.sandbox()
            .injected_failures()
            .get(user)
            .copied()
            .unwrap_or(0)
    }
}

/// Garden and seed clusters prepared for the agent.
pub struct Env {
    /// The garden.
    pub garden: Cluster,
    /// The seed (workload status simulation on).
    pub seed: Cluster,
    _dir: tempfile::TempDir,
}

impl Env {
    /// Starts both clusters with the Gardener CRDs, the garden namespaces and a Seed with a
    /// cluster identity (what gardenlet's seed controller would have written).
    pub async fn start() -> Self {
        init_logging();
        let dir = tempfile::tempdir().expect("temp dir");
        let garden = Cluster::start("garden", dir.path().join("garden"), false).await;
        let seed = Cluster::start("seed", dir.path().join("seed"), true).await;
        install_crds(&garden.client(), seedlet_api::crds::garden_crds()).await;
        // The seed's CRDs, `garden` namespace and its cluster identity, which the Seed's
        // status.clusterIdentity names (without it the agent would take the Seed for another
        // agent's and leave its status and Lease alone).
        super::common::prepare_seed(&seed.client()).await;
        for name in ["garden", "gardener-system-seed-lease", "seed-local"] {
            ensure_namespace(&garden.client(), name).await;
        }
        Self {
            garden,
            seed,
            _dir: dir,
        }
    }

    /// Creates the Seed with `status.clusterIdentity` (the tests that do not bootstrap).
    pub async fn create_seed(&self) {
        super::common::create_seed(&self.garden.client()).await;
    }
}

/// Logs for failing runs: `RUST_LOG=seedlet_agent=debug cargo test --test e2e faults:: -- --nocapture`.
pub fn init_logging() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// Starts the garden controller against `garden` (no leader election, ephemeral ports).
pub async fn start_garden(garden: kube::Client, shutdown: CancellationToken) -> RunningGarden {
    let config = match seedlet_config::parse(GARDEN_CONFIG, "garden.yaml").expect("valid config") {
        seedlet_config::AnyConfig::GardenController(config) => *config,
        other => panic!("unexpected config kind {}", other.kind()),
    };
    let address: std::net::SocketAddr = "127.0.0.1:0".parse().expect("address");
    Garden::new(config, garden)
        .expect("garden controller")
        .with_addresses(address, address)
        .with_leader_election(None)
        .start(shutdown)
        .await
        .expect("garden controller starts")
}

/// Parses an agent configuration.
pub use seedlet_testkit::agent_config;

/// Starts an in-process agent (no leader election, ephemeral ports) with `config`, the seed
/// client `seed` and, when given, a fixed garden client (otherwise the agent bootstraps).
pub async fn start_agent(
    config: seedlet_config::GardenletConfiguration,
    seed: kube::Client,
    garden: Option<kube::Client>,
    shutdown: CancellationToken,
) -> Watched {
    let running = seedlet_testkit::start_agent_from(config, seed, garden, shutdown, |_| {}).await;
    Watched::new(running)
}

/// A running agent plus a record of whether it ever stopped leading (which would restart every
/// controller).
pub struct Watched {
    /// The agent.
    pub agent: RunningAgent,
    lost_leadership: Arc<AtomicBool>,
}

impl Watched {
    fn new(agent: RunningAgent) -> Self {
        let lost_leadership = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&lost_leadership);
        let mut leadership = agent.leadership();
        tokio::spawn(async move {
            if leadership.wait_for(|leading| *leading).await.is_err() {
                flag.store(true, Ordering::SeqCst);
                return;
            }
            // Ends (as an error) when the agent task ends: that counts as a restart too.
            let _ = leadership.wait_for(|leading| !*leading).await;
            flag.store(true, Ordering::SeqCst);
        });
        Self {
            agent,
            lost_leadership,
        }
    }

    /// Asserts the agent is still the same running task, never left its leadership term and
    /// never had to restart a controller.
    pub fn assert_never_restarted(&self, fault: &str) {
        assert!(
            !self.lost_leadership.load(Ordering::SeqCst) && self.agent.is_leader(),
            "{fault}: the agent stopped or left its leadership term"
        );
        assert_eq!(
            self.agent.metrics.controller_restarts(),
            0,
            "{fault}: a controller returned and was restarted"
        );
    }

    /// Stops the agent.
    pub async fn stop(self, shutdown: &CancellationToken) {
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(15), self.agent.wait())
            .await
            .expect("agent stops within 15s")
            .expect("agent stops cleanly");
    }
}

/// A ControllerRegistration for Extension type `small` deployed by the deployment of the same name.
pub fn registration(name: &str) -> ControllerRegistration {
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

/// A ControllerDeployment with a raw chart and values.
pub fn deployment(name: &str, chart: &[u8], values: Value) -> ControllerDeployment {
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

/// A ControllerInstallation of `registration` on our seed.
pub fn installation(name: &str, registration: &str) -> ControllerInstallation {
    let reference = |name: &str| ObjectReference {
        name: name.into(),
        ..Default::default()
    };
    ControllerInstallation::new(
        name,
        ControllerInstallationSpec {
            registration_ref: reference(registration),
            deployment_ref: Some(reference(registration)),
            seed_ref: Some(reference(SEED)),
            ..Default::default()
        },
    )
}

/// Creates registration + deployment `registration` (chart [`CHART`], `greeting`) and the
/// installations `installations` of it.
pub async fn install(
    garden: &kube::Client,
    registration_name: &str,
    greeting: &str,
    installations: &[&str],
) {
    create(
        &Api::<ControllerRegistration>::all(garden.clone()),
        &registration(registration_name),
    )
    .await;
    create(
        &Api::<ControllerDeployment>::all(garden.clone()),
        &deployment(registration_name, CHART, json!({"greeting": greeting})),
    )
    .await;
    let api = Api::<ControllerInstallation>::all(garden.clone());
    for name in installations {
        create(&api, &installation(name, registration_name)).await;
    }
}

async fn create<K>(api: &Api<K>, object: &K)
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.create(&PostParams::default(), object)
        .await
        .unwrap_or_else(|e| panic!("create {:?}: {e}", object.meta().name));
}

/// Sets the chart and values of deployment `name` with a merge patch.
pub async fn set_deployment(garden: &kube::Client, name: &str, chart: &[u8], values: Value) {
    let patch = json!({"helm": {"rawChart": ByteString(chart.to_vec()), "values": values}});
    Api::<ControllerDeployment>::all(garden.clone())
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|e| panic!("update deployment {name}: {e}"));
}

/// `(status, reason, message)` of condition `type_` of installation `name`.
pub async fn ci_condition(
    garden: &kube::Client,
    name: &str,
    type_: &str,
) -> Option<(String, String, String)> {
    let ci = Api::<ControllerInstallation>::all(garden.clone())
        .get_opt(name)
        .await
        .ok()??;
    let c = seedlet_api::conditions::find(ci.conditions(), type_)?;
    Some((c.status.to_string(), c.reason.clone(), c.message.clone()))
}

/// Whether installation `name` has every condition in `expected` (`type`, `status`).
pub async fn ci_has(garden: &kube::Client, name: &str, expected: &[(&str, &str)]) -> bool {
    for (type_, status) in expected {
        match ci_condition(garden, name, type_).await {
            Some((s, _, _)) if s == *status => {}
            _ => return false,
        }
    }
    true
}

/// The greeting the applier wrote for installation `ci` of `registration`.
pub async fn greeting(seed: &kube::Client, ci: &str, registration: &str) -> Option<String> {
    let api: Api<ConfigMap> = Api::namespaced(seed.clone(), &format!("extension-{ci}"));
    api.get_opt(&format!("{registration}-config"))
        .await
        .ok()??
        .data?
        .get("greeting")
        .cloned()
}

/// Secret names referenced by the ManagedResource of installation `ci`.
pub async fn secret_refs(seed: &kube::Client, ci: &str) -> Option<Vec<String>> {
    let mr = Api::<ManagedResource>::namespaced(seed.clone(), "garden")
        .get_opt(ci)
        .await
        .ok()??;
    Some(mr.spec.secret_refs.iter().map(|r| r.name.clone()).collect())
}

/// Whether the ManagedResource of `ci` reports its resources applied and healthy for its current
/// generation.
pub async fn managed_resource_healthy(seed: &kube::Client, ci: &str) -> bool {
    let Ok(Some(mr)) = Api::<ManagedResource>::namespaced(seed.clone(), "garden")
        .get_opt(ci)
        .await
    else {
        return false;
    };
    let current = mr.status.as_ref().and_then(|s| s.observed_generation) == mr.metadata.generation;
    current
        && ["ResourcesApplied", "ResourcesHealthy"].iter().all(|t| {
            seedlet_api::conditions::find(mr.conditions(), t)
                .is_some_and(|c| c.status.to_string() == "True")
        })
}

/// The seed Lease's `renewTime`.
pub async fn renew_time(garden: &kube::Client) -> Option<jiff::Timestamp> {
    Api::<Lease>::namespaced(garden.clone(), "gardener-system-seed-lease")
        .get_opt(SEED)
        .await
        .ok()??
        .spec?
        .renew_time
        .map(|t| t.0)
}

/// Whether the Seed's `GardenletReady` is True.
pub async fn gardenlet_ready(garden: &kube::Client) -> bool {
    let Ok(Some(seed)) = Api::<Seed>::all(garden.clone()).get_opt(SEED).await else {
        return false;
    };
    seedlet_api::conditions::find(seed.conditions(), "GardenletReady")
        .is_some_and(|c| c.status.to_string() == "True")
}

/// Waits until the Lease was renewed after `since` (wall clock) and `GardenletReady` is True.
pub async fn wait_heartbeat_after(garden: &kube::Client, since: jiff::Timestamp, what: &str) {
    wait_for(what, CONVERGE, || async {
        let renewed = renew_time(garden).await.is_some_and(|t| t > since);
        (renewed && gardenlet_ready(garden).await).then_some(())
    })
    .await;
}

/// Waits until `check` holds and returns how long that took from `since`.
pub async fn converge<F, Fut>(what: &str, since: Instant, check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    super::common::wait_until(what, CONVERGE, check).await;
    since.elapsed()
}

/// Waits until `check` holds (at most `timeout`) and returns how long that took from `since`.
pub async fn converge_within<F, Fut>(
    what: &str,
    since: Instant,
    timeout: Duration,
    check: F,
) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    super::common::wait_until(what, timeout, check).await;
    since.elapsed()
}

/// Data of Secret `namespace/name` in `client`'s cluster.
pub async fn secret_data(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Option<BTreeMap<String, ByteString>> {
    Api::<Secret>::namespaced(client.clone(), namespace)
        .get_opt(name)
        .await
        .ok()??
        .data
}

/// A seeded splitmix64 generator: the suite's randomness is reproducible from the printed seed.
pub struct Rng(u64);

impl Rng {
    /// From `FAULTS_SEED` when set, else from the clock; prints the seed with `test`.
    pub fn seeded(test: &str) -> Self {
        let seed = std::env::var("FAULTS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(7, |d| d.as_nanos() as u64)
            });
        println!("{test}: seed {seed} (rerun with FAULTS_SEED={seed})");
        Self(seed)
    }

    /// An independent generator derived from this one.
    pub fn fork(&mut self) -> Self {
        Self(self.next())
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `low..high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low).max(1)
    }

    /// A duration of `low..high` milliseconds.
    pub fn millis(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_millis(self.between(low, high))
    }
}

/// Serialises the fault tests: each restarts API servers and measures recovery times, which
/// several of them running at once on a small CI machine distort (the garden outage then missed
/// its bound in about half of the full-file runs, and passed in 1–10 s alone).
pub async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    SERIAL.lock().await
}
