//! The run itself: garden and seed sandboxes, the garden controller, the agent process, then the
//! phases (registrations, shoots, extension objects, churn, convergence) and what they measured.

use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{Patch, PatchParams};
use seedlet_api::conditions::ConditionStatus;
use seedlet_api::core::Seed;
use seedlet_garden::{Garden, RunningGarden};
use seedlet_landscape::files::{self, StateDir};
use seedlet_landscape::garden_setup;
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::observe::{Observers, SHOOT_TICK_LABEL};
use crate::process::MeasuredProcess;
use crate::report::{AgentUsage, Lost, Machine, Parameters, Report, Traffic};
use crate::stats::{Latency, drift};
use crate::workload::{self, ExtensionObject, ShootName};
use crate::{Error, Options};

/// Name of the seed.
const SEED: &str = "local";
/// The agent's user in the seed (its seed kubeconfig's client certificate).
const AGENT_SEED_USER: &str = "seedlet-agent";
/// The Lease resync period configured for the agent.
const LEASE_PERIOD: Duration = Duration::from_secs(2);
/// How often shoots are changed during the churn.
const SHOOT_CHANGE_INTERVAL: Duration = Duration::from_millis(500);
/// How long the end of the run waits for the last changes to arrive.
const CONVERGENCE_TIMEOUT: Duration = Duration::from_secs(30);
/// How often conditions are polled.
const POLL: Duration = Duration::from_millis(50);

/// Everything a run started.
pub struct Landscape {
    state: StateDir,
    garden: Sandbox,
    seed: Sandbox,
    stop: CancellationToken,
    garden_controller: Option<RunningGarden>,
    agent: Option<MeasuredProcess>,
    observers: Observers,
    log: PathBuf,
}

/// What the phases measured, before it becomes a [`Report`].
pub struct Measured {
    bootstrap: Duration,
    ready: Duration,
    churn_started_s: f64,
    churn_started_at: jiff::Timestamp,
    churn: Duration,
    usage: (Vec<crate::process::Sample>, f64),
    installation_latencies: Vec<Duration>,
    initial_sync: Vec<Duration>,
    observers: Observers,
    garden_requests: u64,
    seed_requests: u64,
    agent_lifetime: Duration,
    state_changes_written: u64,
    lost: Lost,
}

impl Landscape {
    /// Starts both sandboxes, prepares them the way an operator prepares a seed, and starts the
    /// garden controller.
    pub async fn start(options: &Options) -> Result<Self, Error> {
        let state = StateDir::prepare(options.dir.clone()).map_err(Error::Landscape)?;
        let garden = Sandbox::builder()
            .name("garden")
            .start()
            .await
            .map_err(|source| Error::Sandbox {
                name: "garden",
                source,
            })?;
        let seed = Sandbox::builder()
            .name("seed")
            .workload_simulation(true)
            .start()
            .await
            .map_err(|source| Error::Sandbox {
                name: "seed",
                source,
            })?;
        let log = state.path("agent.log");
        let mut landscape = Self {
            state,
            garden,
            seed,
            stop: CancellationToken::new(),
            garden_controller: None,
            agent: None,
            observers: Observers::default(),
            log,
        };
        landscape.prepare().await?;
        Ok(landscape)
    }

    async fn prepare(&mut self) -> Result<(), Error> {
        let (garden, seed) = (self.garden.client(), self.seed.client());
        garden_setup::install_crds(&garden, seedlet_api::crds::garden_crds())
            .await
            .map_err(Error::Landscape)?;
        garden_setup::install_crds(&seed, seedlet_api::crds::seed_crds())
            .await
            .map_err(Error::Landscape)?;
        let token = garden_setup::prepare_garden(&garden, SEED)
            .await
            .map_err(Error::Landscape)?;
        let bootstrap = files::bootstrap_kubeconfig(
            &self.garden.endpoint(),
            &self.garden.ca_cert_pem(),
            &token.bearer(),
        );
        garden_setup::store_bootstrap_kubeconfig(&seed, &bootstrap)
            .await
            .map_err(Error::Landscape)?;
        // The Seed's `spec.backup` names these credentials, as in `seedlet sandbox`: without them
        // the agent's BackupBucket controller fails (and logs it) in every run.
        seedlet_landscape::backup::store_credentials(&garden, &self.state.path("backups"))
            .await
            .map_err(Error::Landscape)?;

        // Seeds behind the seed authorizer and SeedRestriction, as in `seedlet sandbox`.
        let webhook_tls =
            seedlet_landscape::webhooks::write_serving_certificate(&self.state, &self.garden)
                .map_err(Error::Landscape)?;
        let config_path = self
            .state
            .write_config(
                "garden-controller.yaml",
                &files::garden_controller_config(&webhook_tls),
            )
            .map_err(Error::Landscape)?;
        let config = seedlet_config::load_garden_controller(&config_path).map_err(|source| {
            Error::Config {
                component: "garden controller",
                source,
            }
        })?;
        let running = Garden::new(config, garden.clone())
            .map_err(Error::Garden)?
            .with_addresses(files::ephemeral_address(), files::ephemeral_address())
            .start(self.stop.clone())
            .await
            .map_err(Error::Garden)?;
        if let Some(address) = running.webhook_address {
            seedlet_landscape::webhooks::enable(&self.state, &self.garden, address)
                .await
                .map_err(Error::Landscape)?;
        }
        self.garden_controller = Some(running);
        self.observers.start(&garden, &seed, SEED, &self.stop);
        Ok(())
    }

    /// Stops the agent, the garden controller and both sandboxes.
    pub async fn stop(mut self) {
        if let Some(agent) = self.agent.take() {
            agent.stop().await;
        }
        self.stop.cancel();
        if let Some(garden_controller) = self.garden_controller.take()
            && let Err(error) = garden_controller.wait().await
        {
            tracing::warn!(error = %error, "garden controller stopped with an error");
        }
        self.garden.shutdown().await;
        self.seed.shutdown().await;
    }

    /// Writes the agent's config and kubeconfig and starts it.
    fn start_agent(&mut self, options: &Options) -> Result<(), Error> {
        let kubeconfig = self
            .seed
            .kubeconfig_for(AGENT_SEED_USER, &["system:masters"])
            .map_err(|source| Error::Sandbox {
                name: "seed",
                source,
            })?;
        let kubeconfig = serde_yaml::to_string(&kubeconfig).map_err(Error::Yaml)?;
        let kubeconfig_path = self
            .state
            .write_kubeconfig("seed-agent.kubeconfig", &kubeconfig)
            .map_err(Error::Landscape)?;
        let config = agent_config(&kubeconfig_path)?;
        let config_path = self
            .state
            .write_config("agent.yaml", &config)
            .map_err(Error::Landscape)?;
        seedlet_config::load_gardenlet(&config_path).map_err(|source| Error::Config {
            component: "agent",
            source,
        })?;
        self.agent = Some(MeasuredProcess::spawn(
            &options.agent_binary,
            &config_path,
            &self.log,
            options.sample_interval,
        )?);
        Ok(())
    }

    /// Polls `check` until it holds, failing with [`Error::Timeout`] (or when the agent died).
    async fn wait_until<F, Fut>(
        &mut self,
        what: &str,
        timeout: Duration,
        mut check: F,
    ) -> Result<Duration, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = bool>,
    {
        let started = Instant::now();
        loop {
            if check().await {
                return Ok(started.elapsed());
            }
            if let Some(agent) = self.agent.as_mut() {
                agent.ensure_running(&self.log)?;
            }
            if started.elapsed() > timeout {
                return Err(Error::Timeout {
                    what: what.to_owned(),
                    timeout,
                    log: self.log.clone(),
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Runs the phases on a started landscape.
pub async fn drive(landscape: &mut Landscape, options: &Options) -> Result<Measured, Error> {
    let timeout = options.phase_timeout;
    let (garden, seed) = (landscape.garden.client(), landscape.seed.client());

    // The agent: bootstrap via CSR, then registration and heartbeat.
    landscape.start_agent(options)?;
    let agent_started = landscape
        .agent
        .as_ref()
        .map(MeasuredProcess::started)
        .unwrap_or_else(Instant::now);
    let secrets: Api<Secret> = Api::namespaced(seed.clone(), "garden");
    landscape
        .wait_until("certificate kubeconfig stored", timeout, || async {
            secrets
                .get_opt(files::KUBECONFIG_SECRET)
                .await
                .is_ok_and(|s| s.is_some())
        })
        .await?;
    let bootstrap = agent_started.elapsed();
    let seeds: Api<Seed> = Api::all(garden.clone());
    landscape
        .wait_until("Seed GardenletReady True", timeout, || async {
            gardenlet_ready(&seeds).await
        })
        .await?;
    let ready = agent_started.elapsed();

    // Registrations → installations → managed resources.
    let (deployments, registrations): (Vec<Value>, Vec<Value>) =
        std::iter::once(workload::provider_registration())
            .chain((0..options.registrations).map(workload::registration))
            .unzip();
    workload::create_all(&garden, deployments).await?;
    workload::create_all(&garden, registrations).await?;
    let observers = landscape.observers.clone();
    // The provider registration is installed too: the seed's provider type requires it.
    let expected = options.registrations + 1;
    landscape
        .wait_until("a ManagedResource per registration", timeout, || {
            let observers = observers.clone();
            async move {
                observers.installations.count() >= expected
                    && observers.managed_resources.count() >= expected
            }
        })
        .await?;
    let installation_latencies = installation_latencies(&observers);

    // Shoots → Clusters.
    let shoots: Vec<ShootName> = (0..options.shoots).map(ShootName::new).collect();
    create_shoots(&garden, &shoots).await?;
    let expected = options.shoots;
    landscape
        .wait_until("a Cluster per shoot", timeout, || {
            let observers = observers.clone();
            async move { observers.clusters.count() >= expected }
        })
        .await?;

    // Extension objects with a first state → ShootStates.
    let objects = workload::extension_objects(&shoots, options.extension_objects);
    create_extension_objects(&seed, &shoots, &objects).await?;
    let mut marks = vec![0_u64; objects.len()];
    let mut state_changes_written = 0;
    write_states(&seed, &objects, &mut marks, &observers, 0..objects.len()).await?;
    state_changes_written += objects.len() as u64;
    landscape
        .wait_until(
            "every first extension state in a ShootState",
            timeout,
            || {
                let observers = observers.clone();
                async move { observers.shoot_states.lagging().is_empty() }
            },
        )
        .await?;

    // Churn: extension states at the configured rate, a shoot every SHOOT_CHANGE_INTERVAL.
    // The first states of all K objects arrive as one burst; their latencies are the initial
    // sync, reported apart from the steady churn.
    let initial_sync = observers.shoot_states.take_latencies();
    let churn_started_s = agent_started.elapsed().as_secs_f64();
    let churn_started_at = jiff::Timestamp::now();
    let churn_start = Instant::now();
    let state_changes = churn(landscape, options, &shoots, &objects, &mut marks).await?;
    state_changes_written += state_changes;
    let churn = churn_start.elapsed();

    // Convergence: every last change must arrive.
    let lost = converge(&observers).await;

    let agent = landscape.agent.as_ref();
    let samples = agent.map(MeasuredProcess::samples).unwrap_or_default();
    let peak = agent
        .and_then(MeasuredProcess::peak_rss_mib)
        .unwrap_or_default();
    let (garden_requests, seed_requests) = agent_requests(landscape);
    Ok(Measured {
        bootstrap,
        ready,
        churn_started_s,
        churn_started_at,
        churn,
        usage: (samples, peak),
        installation_latencies,
        initial_sync,
        observers,
        garden_requests,
        seed_requests,
        agent_lifetime: agent_started.elapsed(),
        state_changes_written,
        lost,
    })
}

/// The churn phase: extension states at the configured rate and a shoot change every
/// [`SHOOT_CHANGE_INTERVAL`] for `options.churn`; returns the extension states written.
async fn churn(
    landscape: &mut Landscape,
    options: &Options,
    shoots: &[ShootName],
    objects: &[ExtensionObject],
    marks: &mut [u64],
) -> Result<u64, Error> {
    let (garden, seed) = (landscape.garden.client(), landscape.seed.client());
    let observers = landscape.observers.clone();
    let churn_start = Instant::now();
    let mut state_changes_written = 0;
    let interval = Duration::from_secs(1) / options.state_changes_per_second.max(1);
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut next_object = 0;
    let mut next_shoot = 0;
    let mut shoot_tick = 0_u64;
    let mut last_shoot_change = Instant::now();
    while churn_start.elapsed() < options.churn {
        ticker.tick().await;
        if !objects.is_empty() {
            let index = next_object % objects.len();
            next_object += 1;
            write_states(&seed, objects, marks, &observers, index..index + 1).await?;
            state_changes_written += 1;
        }
        if !shoots.is_empty() && last_shoot_change.elapsed() >= SHOOT_CHANGE_INTERVAL {
            last_shoot_change = Instant::now();
            shoot_tick += 1;
            let shoot = &shoots[next_shoot % shoots.len()];
            next_shoot += 1;
            change_shoot(&garden, shoot, shoot_tick, &observers).await?;
        }
        if let Some(agent) = landscape.agent.as_mut() {
            agent.ensure_running(&landscape.log)?;
        }
    }
    Ok(state_changes_written)
}

/// Waits up to [`CONVERGENCE_TIMEOUT`] for every last change to arrive; what did not is lost.
async fn converge(observers: &Observers) -> Lost {
    let converged = Instant::now();
    while converged.elapsed() < CONVERGENCE_TIMEOUT
        && !(observers.shoot_states.lagging().is_empty()
            && observers.cluster_updates.lagging().is_empty())
    {
        tokio::time::sleep(POLL).await;
    }
    let lagging_states = observers.shoot_states.lagging();
    let lagging_clusters = observers.cluster_updates.lagging();
    let missing_managed_resources = observers
        .installations
        .snapshot()
        .keys()
        .filter(|name| observers.managed_resources.get(name).is_none())
        .count();
    Lost {
        extension_states: lagging_states.len(),
        clusters: lagging_clusters.len(),
        managed_resources: missing_managed_resources,
        examples: lagging_states
            .into_iter()
            .chain(lagging_clusters)
            .take(10)
            .collect(),
    }
}

/// Requests the agent made to the garden (as its seed or bootstrap identity) and to the seed.
fn agent_requests(landscape: &Landscape) -> (u64, u64) {
    let requests = |counts: std::collections::BTreeMap<String, u64>,
                    users: &dyn Fn(&str) -> bool| {
        counts
            .into_iter()
            .filter(|(user, _)| users(user))
            .map(|(_, count)| count)
            .sum::<u64>()
    };
    let garden_requests = requests(landscape.garden.request_counts(), &|user| {
        user.starts_with("gardener.cloud:system:seed:") || user.starts_with("system:bootstrap:")
    });
    let seed_requests = requests(landscape.seed.request_counts(), &|user| {
        user == AGENT_SEED_USER
    });
    (garden_requests, seed_requests)
}

impl Measured {
    /// The report of a run that took `total`.
    pub fn into_report(self, options: &Options, load_at_start: f64, total: Duration) -> Report {
        let (samples, peak) = self.usage;
        let renewals = self
            .observers
            .lease_renewals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .copied()
            // Steady state only: registration renews once outside the schedule.
            .filter(|renewed| *renewed >= self.churn_started_at)
            .collect::<Vec<_>>();
        let shoot_state_writes = *self
            .observers
            .shoot_state_writes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let lifetime = self.agent_lifetime.as_secs_f64().max(f64::EPSILON);
        tracing::debug!(total = ?total, "scale run finished");
        Report {
            machine: Machine {
                cpus: std::thread::available_parallelism().map_or(1, usize::from),
                load_at_start,
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
            parameters: Parameters {
                agent_binary: options.agent_binary.display().to_string(),
                shoots: options.shoots,
                registrations: options.registrations,
                extension_objects: options.extension_objects,
                churn_seconds: crate::stats::round2(self.churn.as_secs_f64()),
                state_changes_per_second: options.state_changes_per_second,
            },
            bootstrap_ms: crate::stats::round2(self.bootstrap.as_secs_f64() * 1e3),
            ready_ms: crate::stats::round2(self.ready.as_secs_f64() * 1e3),
            agent: AgentUsage::from_samples(samples, peak, self.churn_started_s),
            installation_to_managed_resource: Latency::from_samples(&self.installation_latencies),
            initial_states_to_shoot_state: Latency::from_samples(&self.initial_sync),
            extension_state_to_shoot_state: Latency::from_samples(
                &self.observers.shoot_states.latencies(),
            ),
            shoot_change_to_cluster: Latency::from_samples(
                &self.observers.cluster_updates.latencies(),
            ),
            lease_drift: Latency::from_samples(&drift(&renewals, LEASE_PERIOD)),
            traffic: Traffic {
                state_changes_written: self.state_changes_written,
                shoot_state_writes,
                garden_requests: self.garden_requests,
                seed_requests: self.seed_requests,
                garden_requests_per_second: crate::stats::round2(
                    self.garden_requests as f64 / lifetime,
                ),
                seed_requests_per_second: crate::stats::round2(
                    self.seed_requests as f64 / lifetime,
                ),
            },
            lost: self.lost,
            goals: Vec::new(),
        }
        .with_goals()
    }
}

/// The agent's GardenletConfiguration: the demo's, with a seed kubeconfig file and free ports.
fn agent_config(seed_kubeconfig: &std::path::Path) -> Result<String, Error> {
    let mut config: Value =
        serde_yaml::from_str(&files::agent_config(SEED, std::path::Path::new("unused")))
            .map_err(Error::Yaml)?;
    // The scale run keeps its measured shape: no control-plane chart per shoot.
    if let Some(shoot) = config
        .pointer_mut("/controllers/shoot")
        .and_then(Value::as_object_mut)
    {
        shoot.remove("controlPlaneChart");
    }
    let object = config.as_object_mut().ok_or_else(|| Error::Workload {
        what: "the landscape's agent config is not a mapping".to_owned(),
    })?;
    object.insert(
        "seedClientConnection".to_owned(),
        json!({"kubeconfig": seed_kubeconfig}),
    );
    object.insert(
        "server".to_owned(),
        json!({
            "healthProbes": {"bindAddress": "127.0.0.1", "port": free_port()?},
            "metrics": {"bindAddress": "127.0.0.1", "port": free_port()?}
        }),
    );
    object.insert("logLevel".to_owned(), json!("info"));
    if let Some(seed) = object
        .get_mut("controllers")
        .and_then(|controllers| controllers.get_mut("seed"))
    {
        seed["leaseResyncSeconds"] = json!(LEASE_PERIOD.as_secs());
    }
    serde_yaml::to_string(&config).map_err(Error::Yaml)
}

/// A loopback port nobody listens on right now.
pub(crate) fn free_port() -> Result<u16, Error> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(|source| Error::Io {
        path: PathBuf::from("127.0.0.1:0"),
        source,
    })?;
    listener
        .local_addr()
        .map(|address| address.port())
        .map_err(|source| Error::Io {
            path: PathBuf::from("127.0.0.1:0"),
            source,
        })
}

async fn gardenlet_ready(seeds: &Api<Seed>) -> bool {
    let Ok(Some(seed)) = seeds.get_opt(SEED).await else {
        return false;
    };
    seed.status.is_some_and(|status| {
        status
            .conditions
            .iter()
            .any(|c| c.type_ == "GardenletReady" && c.status == ConditionStatus::True)
    })
}

fn installation_latencies(observers: &Observers) -> Vec<Duration> {
    observers
        .installations
        .snapshot()
        .into_iter()
        .filter_map(|(name, created)| {
            observers
                .managed_resources
                .get(&name)
                .map(|written| written.saturating_duration_since(created))
        })
        .collect()
}

async fn create_shoots(garden: &kube::Client, shoots: &[ShootName]) -> Result<(), Error> {
    create_projects(garden, shoots).await?;
    workload::create_all(
        garden,
        shoots.iter().map(|s| workload::shoot(s, SEED)).collect(),
    )
    .await?;
    // The ShootState exists before extensions report state, as the gardenlet's reconcile flow
    // creates it first.
    let shoot_states = shoots
        .iter()
        .map(|shoot| {
            json!({
                "apiVersion": "core.gardener.cloud/v1beta1",
                "kind": "ShootState",
                "metadata": {"name": shoot.name, "namespace": shoot.namespace()},
                "spec": {}
            })
        })
        .collect();
    workload::create_all(garden, shoot_states).await
}

/// The cloud profile and the projects (with their namespaces) of `shoots`.
pub(crate) async fn create_projects(
    garden: &kube::Client,
    shoots: &[ShootName],
) -> Result<(), Error> {
    let mut projects: Vec<String> = shoots.iter().map(|s| s.project.clone()).collect();
    projects.dedup();
    workload::create_all(garden, vec![workload::cloud_profile()]).await?;
    let namespaces = projects
        .iter()
        .map(|project| {
            json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": format!("garden-{project}"),
                    "labels": {"gardener.cloud/role": "project", "project.gardener.cloud/name": project}
                }
            })
        })
        .collect();
    workload::create_all(garden, namespaces).await?;
    workload::create_all(
        garden,
        projects.iter().map(|p| workload::project(p)).collect(),
    )
    .await
}

async fn create_extension_objects(
    seed: &kube::Client,
    shoots: &[ShootName],
    objects: &[ExtensionObject],
) -> Result<(), Error> {
    // The agent creates control-plane namespaces with the Cluster; create any it has not yet.
    let namespaces: Vec<String> = shoots.iter().map(ShootName::technical_id).collect();
    let mut missing = Vec::new();
    for namespace in &namespaces {
        if !workload::namespace_exists(seed, namespace).await? {
            missing.push(namespace.clone());
        }
    }
    workload::ensure_namespaces(seed, &missing).await?;
    let manifests = objects
        .iter()
        .map(|object| {
            json!({
                "apiVersion": "extensions.gardener.cloud/v1alpha1",
                "kind": object.kind,
                "metadata": {"name": object.name, "namespace": object.namespace},
                "spec": workload::extension_spec(object.kind, &object.namespace)
            })
        })
        .collect();
    workload::create_all(seed, manifests).await
}

async fn write_states(
    seed: &kube::Client,
    objects: &[ExtensionObject],
    marks: &mut [u64],
    observers: &Observers,
    indices: std::ops::Range<usize>,
) -> Result<(), Error> {
    let mut work = Vec::with_capacity(indices.len());
    for index in indices {
        marks[index] += 1;
        work.push((&objects[index], marks[index]));
    }
    workload::for_each_concurrent(work, |(object, mark)| async move {
        observers.shoot_states.wrote(&object.key(), mark);
        workload::write_state(seed, object, mark).await
    })
    .await
}

async fn change_shoot(
    garden: &kube::Client,
    shoot: &ShootName,
    tick: u64,
    observers: &Observers,
) -> Result<(), Error> {
    let api: Api<seedlet_api::core::Shoot> = Api::namespaced(garden.clone(), &shoot.namespace());
    let patch = json!({"metadata": {"labels": {SHOOT_TICK_LABEL: tick.to_string()}}});
    observers.cluster_updates.wrote(&shoot.technical_id(), tick);
    api.patch(
        &shoot.name,
        &PatchParams::apply(workload::FIELD_MANAGER),
        &Patch::Merge(&patch),
    )
    .await
    .map(drop)
    .map_err(|source| Error::Kube {
        what: format!("label Shoot {}/{}", shoot.namespace(), shoot.name),
        source,
    })
}

/// The 1-minute load average (0 when unknown).
pub fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or_default()
}
