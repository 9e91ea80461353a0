//! The one-command sandbox landscape behind `seedlet sandbox`: a garden and a seed sandbox API
//! server, the garden controller and the agent, wired the way an operator wires a real landscape.
//!
//! The agent gets nothing but a bootstrap-token kubeconfig in a seed Secret, exactly as on a real
//! seed: it requests its client certificate with a CertificateSigningRequest, the garden controller
//! approves it, and the agent then registers its Seed and starts its heartbeat. [`run`] prints each
//! step with its duration, a status summary, and the `KUBECONFIG` lines to look around with kubectl.
//!
//! Once the Seed is Ready, the demo stages (`demo_stages`) run in order: the first registers the
//! example extension and follows it until the Seed reports `ExtensionsReady`; the second creates
//! an example Shoot and follows it into the seed (Cluster, control-plane namespace) and, through
//! an Infrastructure's `.status.state`, back into the garden's ShootState; the backup stages follow
//! the Seed's BackupBucket and the Shoot's BackupEntry (see `backup`), with the example
//! extension's backup controller played by the demo (`backup_provider`).

pub mod backup;
pub mod backup_provider;
mod bastion;
pub mod bastion_provider;
mod component;
mod extension;
pub mod files;
pub mod garden_setup;
mod output;
mod progress;
mod renewal;
pub mod serve;
pub mod shoot;
mod shoot_operations;
pub mod shoot_provider;
mod summary;
mod wait;
pub mod webhooks;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use seedlet_agent::Agent;
use seedlet_config::LogLevel;
use seedlet_garden::Garden;
use seedlet_runtime::logging::{ComponentFile, route_component_to_file};
use seedlet_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use crate::component::ComponentRuntime;
use crate::files::StateDir;
use crate::progress::Progress;

pub use crate::serve::{ServeOptions, serve};

/// Name of the demo seed.
pub const SEED_NAME: &str = "local";

/// Pause between the agent's failed garden credential steps (Seed status patch, rotation).
const BOOTSTRAP_RETRY_INTERVAL: Duration = Duration::from_millis(500);

/// How `seedlet sandbox` runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where sandbox state, kubeconfigs and component configs are kept; a fresh temporary
    /// directory when `None`. Reusing a directory resumes the landscape kept there.
    pub dir: Option<PathBuf>,
    /// Exit once everything is Ready instead of running until interrupted.
    pub once: bool,
    /// How long to wait for each step before giving up.
    pub step_timeout: Duration,
    /// Threshold of the component logs (`DIR/agent.log`, `DIR/garden.log`, `DIR/sandbox.log`).
    pub log_level: LogLevel,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            dir: None,
            once: false,
            step_timeout: Duration::from_secs(60),
            log_level: LogLevel::Info,
        }
    }
}

/// The components whose logs go to a file of their own in the state directory (`extension`: the
/// example extension's backup controller the demo plays).
const LOGGED_COMPONENTS: [&str; 4] = ["agent", "garden", "sandbox", "extension"];

/// Why the landscape did not come up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The state directory could not be prepared or written.
    #[error("cannot prepare state directory {path}")]
    StateDir {
        /// The directory or file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Another process runs a landscape in the state directory.
    #[error("state directory {path} is in use by process {pid}")]
    StateDirInUse {
        /// The directory.
        path: PathBuf,
        /// The process id written in its lock file.
        pid: String,
    },
    /// A sandbox API server did not start.
    #[error("cannot start the {name} sandbox API server")]
    Sandbox {
        /// `garden` or `seed`.
        name: &'static str,
        /// The cause.
        #[source]
        source: seedlet_sandbox::SandboxError,
    },
    /// Preparing the garden or seed (CRDs, namespaces, bootstrap token) failed.
    #[error("cannot {step}")]
    Prepare {
        /// What was being prepared.
        step: String,
        /// The cause.
        #[source]
        source: kube::Error,
    },
    /// A component configuration written by the landscape was rejected.
    #[error("invalid {component} configuration")]
    Config {
        /// `agent` or `garden controller`.
        component: &'static str,
        /// The cause.
        #[source]
        source: seedlet_config::ConfigError,
    },
    /// A demo object could not be built (not an API error).
    #[error("cannot {step}: {message}")]
    Demo {
        /// What was being done.
        step: String,
        /// Why it failed.
        message: String,
    },
    /// A component's runtime could not be started.
    #[error("cannot start the {name} runtime")]
    Runtime {
        /// `agent` or `garden`.
        name: &'static str,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A component's start-up panicked.
    #[error("the {name} panicked while starting")]
    ComponentPanicked {
        /// `agent` or `garden`.
        name: &'static str,
        /// The cause.
        #[source]
        source: tokio::task::JoinError,
    },
    /// The garden controller did not start.
    #[error("cannot start the garden controller")]
    Garden(#[source] seedlet_garden::Error),
    /// The agent did not start.
    #[error("cannot start the agent")]
    Agent(#[source] seedlet_agent::Error),
    /// The example extension's chart archive could not be built.
    #[error("cannot package the example extension chart")]
    Chart {
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A step did not finish in time.
    #[error("timed out after {timeout:?} waiting for: {what} (last seen: {last})")]
    Timeout {
        /// The step.
        what: String,
        /// The step timeout.
        timeout: Duration,
        /// What the last check saw.
        last: String,
    },
}

impl Error {
    /// [`Error::Timeout`] for the step `what`.
    pub fn timeout(what: impl Into<String>, timeout: Duration, last: impl Into<String>) -> Self {
        Error::Timeout {
            what: what.into(),
            timeout,
            last: last.into(),
        }
    }
}

/// Runs the landscape until everything is Ready, then (unless `options.once`) until `shutdown`.
///
/// # Errors
/// The first step that fails, see [`Error`]; everything started so far is shut down first.
pub async fn run(options: Options, shutdown: CancellationToken) -> Result<(), Error> {
    let started = Instant::now();
    let mut progress = Progress::new();
    let state = StateDir::prepare(options.dir.clone())?;
    let root = state.root().display().to_string();
    let resumed = state.path("garden.port").exists();
    progress.note(&format!("state directory: {root}"));
    progress.note(if state.is_temporary() {
        "  temporary: removed on exit (--dir DIR keeps the state across runs)"
    } else if resumed {
        "  resuming the landscape kept there"
    } else {
        "  kept: run again with the same --dir to resume"
    });
    let _logs = route_logs(&state, options.log_level)?;
    progress.note(&format!(
        "component logs: {}",
        LOGGED_COMPONENTS
            .map(|component| state
                .path(&format!("{component}.log"))
                .display()
                .to_string())
            .join(", ")
    ));

    let garden = progress
        .step("start garden API server", async {
            let sandbox = start_sandbox(&state, "garden", false).await?;
            let detail = sandbox_detail(&sandbox, resumed);
            Ok((sandbox, detail))
        })
        .await?;
    let seed = progress
        .step("start seed API server", async {
            let sandbox = start_sandbox(&state, "seed", true).await?;
            let detail = sandbox_detail(&sandbox, resumed);
            Ok((sandbox, detail))
        })
        .await?;
    let written = write_kubeconfigs(&state, &garden, &seed);
    let outcome = match written {
        Ok(()) => bring_up(&options, &state, &garden, &seed, &mut progress, &shutdown).await,
        Err(error) => Err(error),
    };
    let result = match outcome {
        Ok(components) => {
            progress.note(&format!("landscape Ready in {:.1?}", started.elapsed()));
            summary::print(&garden.client(), &seed.client(), SEED_NAME).await;
            summary::print_kubectl_hints(&state, components.installation.as_deref());
            if !options.once {
                let renewals = tokio::spawn(renewal::follow(
                    seed.client(),
                    components.stop.child_token(),
                ));
                progress.note("running; press Ctrl-C to stop");
                shutdown.cancelled().await;
                progress.note("stopping");
                renewals.abort();
            }
            components.stop().await;
            Ok(())
        }
        Err(error) => Err(error),
    };
    garden.shutdown().await;
    seed.shutdown().await;
    if state.is_temporary() {
        progress.note(&format!("removing the temporary state directory {root}"));
    }
    result
}

/// Sends the components' logs to `DIR/<component>.log` while the guards live.
fn route_logs(state: &StateDir, level: LogLevel) -> Result<Vec<ComponentFile>, Error> {
    LOGGED_COMPONENTS
        .into_iter()
        .map(|component| {
            let path = state.path(&format!("{component}.log"));
            route_component_to_file(component, &path, level)
                .map_err(|source| Error::StateDir { path, source })
        })
        .collect()
}

/// The address of a started sandbox, and whether its objects were kept from the last run.
fn sandbox_detail(sandbox: &Sandbox, resumed: bool) -> String {
    if resumed {
        format!("{}, objects of the previous run kept", sandbox.endpoint())
    } else {
        sandbox.endpoint()
    }
}

/// Writes `garden.kubeconfig`, `seed.kubeconfig` and `kubeconfig` (both, contexts `garden` and
/// `seed`), each with its own user names so that they can be merged.
fn write_kubeconfigs(state: &StateDir, garden: &Sandbox, seed: &Sandbox) -> Result<(), Error> {
    let garden = files::named_kubeconfig(garden.admin_kubeconfig(), "garden");
    let seed = files::named_kubeconfig(seed.admin_kubeconfig(), "seed");
    state.write_kubeconfig("garden.kubeconfig", &files::kubeconfig_yaml(&garden))?;
    state.write_kubeconfig("seed.kubeconfig", &files::kubeconfig_yaml(&seed))?;
    state.write_kubeconfig(
        files::KUBECONFIG,
        &files::kubeconfig_yaml(&files::both_clusters(&garden, &seed)),
    )?;
    Ok(())
}

/// Starts the sandbox `name` with its state in the state directory, on the port it had last time
/// (kept in `<name>.port`): the agent's stored certificate kubeconfig names the garden's address,
/// so a resumed landscape must come back on the same one.
async fn start_sandbox(
    state: &StateDir,
    name: &'static str,
    workload_simulation: bool,
) -> Result<Sandbox, Error> {
    let port_file = format!("{name}.port");
    let previous_port = std::fs::read_to_string(state.path(&port_file))
        .ok()
        .and_then(|text| text.trim().parse::<u16>().ok());
    let mut builder = Sandbox::builder()
        .name(name)
        .dir(state.path(name))
        .workload_simulation(workload_simulation);
    if let Some(port) = previous_port {
        builder = builder.port(port);
    }
    let sandbox = builder
        .start()
        .await
        .map_err(|source| Error::Sandbox { name, source })?;
    let port = sandbox
        .endpoint()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned();
    state.write_config(&port_file, &format!("{port}\n"))?;
    Ok(sandbox)
}

/// A wait that yields only a detail line, as a progress step without a value.
async fn detail_only(
    wait: impl Future<Output = Result<String, Error>>,
) -> Result<((), String), Error> {
    wait.await.map(|detail| ((), detail))
}

/// The components started by [`bring_up`], stopped together.
struct Components {
    stop: CancellationToken,
    garden: seedlet_garden::RunningGarden,
    agent: seedlet_agent::RunningAgent,
    /// The example extension's ControllerInstallation, once scheduled.
    installation: Option<String>,
    /// The example extension's backup controller, once started (the demo plays it).
    backup_provider: Option<tokio::task::JoinHandle<()>>,
    /// Shut down after the components stopped (fields drop in order).
    extension_runtime: ComponentRuntime,
    _agent_runtime: ComponentRuntime,
    _garden_runtime: ComponentRuntime,
}

impl Components {
    async fn stop(self) {
        self.stop.cancel();
        if let Err(error) = self.agent.wait().await {
            tracing::warn!(error = %error, "agent stopped with an error");
        }
        if let Err(error) = self.garden.wait().await {
            tracing::warn!(error = %error, "garden controller stopped with an error");
        }
        if let Some(task) = self.backup_provider
            && let Err(error) = task.await
        {
            tracing::warn!(error = %error, "the example backup controller panicked");
        }
    }
}

/// `health http://…/healthz, metrics http://…/metrics`.
fn probe_addresses(health: std::net::SocketAddr, metrics: std::net::SocketAddr) -> String {
    format!("health http://{health}/healthz, metrics http://{metrics}/metrics")
}

/// Prepares both clusters, starts garden controller and agent, and waits until the Seed is Ready.
async fn bring_up(
    options: &Options,
    state: &StateDir,
    garden: &Sandbox,
    seed: &Sandbox,
    progress: &mut Progress,
    shutdown: &CancellationToken,
) -> Result<Components, Error> {
    let garden_client = garden.client();
    let seed_client = seed.client();
    let timeout = options.step_timeout;

    progress
        .step(
            "install Gardener CRDs (garden: core.gardener.cloud, seed: extensions + resources)",
            async {
                let garden_count =
                    garden_setup::install_crds(&garden_client, seedlet_api::crds::garden_crds())
                        .await?;
                let seed_count =
                    garden_setup::install_crds(&seed_client, seedlet_api::crds::seed_crds())
                        .await?;
                Ok(((), format!("{garden_count} + {seed_count} CRDs")))
            },
        )
        .await?;
    let token = progress
        .step(
            "prepare garden: namespaces, cluster identity, bootstrap token, backup credentials",
            async {
                let token = garden_setup::prepare_garden(&garden_client, SEED_NAME).await?;
                let credentials =
                    backup::store_credentials(&garden_client, &state.path(backup::BUCKETS_DIR))
                        .await?;
                let detail = format!("token {}.<secret>, {credentials}", token.id);
                Ok((token, detail))
            },
        )
        .await?;

    let stop = shutdown.child_token();
    let webhook_tls = webhooks::write_serving_certificate(state, garden)?;
    let garden_config_path = state.write_config(
        "garden-controller.yaml",
        &files::garden_controller_config(&webhook_tls),
    )?;
    let garden_runtime = ComponentRuntime::new("garden")?;
    let running_garden = progress
        .step(
            "start garden controller (CSR approval, seed lifecycle, projects, reference protection)",
            start_garden_controller(&garden_runtime, &garden_config_path, &garden_client, &stop),
        )
        .await?;

    if let Some(address) = running_garden.webhook_address {
        progress
            .step(
                "seed authorizer and SeedRestriction on: seeds reach only their own objects",
                async {
                    webhooks::enable(state, garden, address)
                        .await
                        .map(|detail| ((), detail))
                },
            )
            .await?;
    }
    progress
        .step(
            "garden controller lets bootstrap tokens request certificates",
            async {
                wait::bootstrapper_rbac(&garden_client, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            "store bootstrap kubeconfig in the seed (Secret garden/gardenlet-kubeconfig-bootstrap)",
            async {
                // A resumed landscape keeps the agent's certificate kubeconfig: the agent uses it
                // and leaves any bootstrap Secret alone, so none is stored.
                let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
                    kube::Api::namespaced(seed_client.clone(), "garden");
                let stored = secrets
                    .get_opt(files::KUBECONFIG_SECRET)
                    .await
                    .map_err(|source| Error::Prepare {
                        step: format!("read Secret garden/{}", files::KUBECONFIG_SECRET),
                        source,
                    })?;
                if let Some(stored) = stored {
                    let kept = match renewal::certificate(&stored) {
                        Some(certificate) => format!(
                            "certificate kubeconfig of the previous run kept: certificate {}",
                            renewal::describe(&certificate)
                        ),
                        None => "certificate kubeconfig of the previous run kept".to_owned(),
                    };
                    return Ok(((), kept));
                }
                let kubeconfig = files::bootstrap_kubeconfig(
                    &garden.endpoint(),
                    &garden.ca_cert_pem(),
                    &token.bearer(),
                );
                garden_setup::store_bootstrap_kubeconfig(&seed_client, &kubeconfig).await?;
                Ok(((), String::new()))
            },
        )
        .await?;

    extension::register_step(&garden_client, progress).await?;

    let chart = state.write_control_plane_chart("control-plane-chart")?;
    let agent_config_path =
        state.write_config("agent.yaml", &files::agent_config(SEED_NAME, &chart))?;
    let agent_runtime = ComponentRuntime::new("agent")?;
    let running_agent = progress
        .step(
            "start agent",
            start_agent(&agent_runtime, &agent_config_path, &seed_client, &stop),
        )
        .await?;
    let mut components = Components {
        stop,
        garden: running_garden,
        agent: running_agent,
        installation: None,
        backup_provider: None,
        extension_runtime: ComponentRuntime::new("extension")?,
        _agent_runtime: agent_runtime,
        _garden_runtime: garden_runtime,
    };

    let waited = demo_stages(
        &garden_client,
        &seed_client,
        progress,
        timeout,
        &mut components,
    )
    .await;
    match waited {
        Ok(()) => Ok(components),
        Err(error) => {
            components.stop().await;
            Err(error)
        }
    }
}

/// Starts the garden controller from its written configuration on its own runtime; the detail
/// names its health and metrics addresses.
async fn start_garden_controller(
    runtime: &ComponentRuntime,
    config_path: &std::path::Path,
    garden_client: &kube::Client,
    stop: &CancellationToken,
) -> Result<(seedlet_garden::RunningGarden, String), Error> {
    let config = match seedlet_config::load(config_path).map_err(|source| Error::Config {
        component: "garden controller",
        source,
    })? {
        seedlet_config::AnyConfig::GardenController(config) => *config,
        seedlet_config::AnyConfig::Gardenlet(_) => {
            unreachable!("the landscape writes a GardenControllerConfiguration")
        }
    };
    let client = garden_client.clone();
    let stop = stop.clone();
    let running = runtime
        .run(async move {
            Garden::new(config, client)?
                .with_addresses(files::ephemeral_address(), files::ephemeral_address())
                .start(stop)
                .await
        })
        .await?
        .map_err(Error::Garden)?;
    let detail = probe_addresses(running.health_address, running.metrics_address);
    Ok((running, detail))
}

/// Starts the agent from its written configuration on its own runtime, with the seed client;
/// the detail names its health and metrics addresses.
async fn start_agent(
    runtime: &ComponentRuntime,
    config_path: &std::path::Path,
    seed_client: &kube::Client,
    stop: &CancellationToken,
) -> Result<(seedlet_agent::RunningAgent, String), Error> {
    let config = match seedlet_config::load(config_path).map_err(|source| Error::Config {
        component: "agent",
        source,
    })? {
        seedlet_config::AnyConfig::Gardenlet(config) => *config,
        seedlet_config::AnyConfig::GardenController(_) => {
            unreachable!("the landscape writes a GardenletConfiguration")
        }
    };
    let seed_client = seed_client.clone();
    let stop = stop.clone();
    let running = runtime
        .run(async move {
            let mut agent = Agent::new(config)?;
            let settings = agent.settings_mut();
            settings.health_address = files::ephemeral_address();
            settings.metrics_address = files::ephemeral_address();
            // The agent patches the client certificate expiry into the Seed status and, while
            // registration has not created the Seed yet, retries at this pace (10 s by default):
            // a landscape on one laptop wants it within a moment.
            settings.bootstrap.retry_interval = BOOTSTRAP_RETRY_INTERVAL;
            agent.with_seed_client(seed_client).start(stop).await
        })
        .await?
        .map_err(Error::Agent)?;
    let detail = probe_addresses(running.health_address, running.metrics_address);
    Ok((running, detail))
}

/// The demo stages, in order: the Seed becomes Ready, the example extension is installed, then
/// the example Shoot is followed to its Cluster and ShootState. A next stage goes at the end.
async fn demo_stages(
    garden: &kube::Client,
    seed: &kube::Client,
    progress: &mut Progress,
    timeout: Duration,
    components: &mut Components,
) -> Result<(), Error> {
    wait_until_ready(garden, seed, progress, timeout).await?;
    components.installation =
        Some(extension::install(garden, seed, progress, timeout, SEED_NAME).await?);
    let provider = {
        let (seed, stop) = (seed.clone(), components.stop.clone());
        async move {
            futures::join!(
                backup_provider::run(seed.clone(), stop.clone()),
                bastion_provider::run(seed.clone(), stop.clone()),
                shoot_provider::run(seed, stop)
            );
        }
    };
    let detail = "BackupBucket/local, BackupEntry/local, Bastion/local, shoot extension kinds of provider local".to_owned();
    let runtime = &components.extension_runtime;
    let task = progress
        .step(
            "example extension's backup, bastion and shoot controllers start (played by the demo: no pods run)",
            async { Ok((runtime.spawn(provider), detail)) },
        )
        .await?;
    components.backup_provider = Some(task);
    let bucket = backup::bucket_stage(garden, seed, progress, timeout).await?;
    example_shoot(garden, seed, progress, timeout).await?;
    backup::entry_stage(garden, seed, progress, timeout, &bucket).await?;
    bastion::stage(garden, progress, timeout).await
}

/// The readiness steps, each watched on the real objects.
async fn wait_until_ready(
    garden: &kube::Client,
    seed: &kube::Client,
    progress: &mut Progress,
    timeout: Duration,
) -> Result<(), Error> {
    progress
        .step(
            "garden identity: CSR approved, certificate kubeconfig stored, bootstrap Secret removed",
            detail_only(wait::garden_identity(garden, seed, timeout)),
        )
        .await?;
    progress
        .step(
            "Seed registered in the garden",
            detail_only(wait::seed_registered(garden, SEED_NAME, timeout)),
        )
        .await?;
    progress
        .step(
            "heartbeat: Lease renewed and GardenletReady True",
            detail_only(wait::gardenlet_ready(garden, SEED_NAME, timeout)),
        )
        .await?;
    progress
        .step(
            "Seed status: client certificate expiry reported",
            detail_only(wait::client_certificate_expiry(garden, SEED_NAME, timeout)),
        )
        .await?;
    Ok(())
}

/// Creates the example Shoot and follows it: Cluster and control-plane namespace in the seed, then
/// an Infrastructure's `.status.state` into the ShootState in the garden.
async fn example_shoot(
    garden: &kube::Client,
    seed: &kube::Client,
    progress: &mut Progress,
    timeout: Duration,
) -> Result<(), Error> {
    let project_namespace = shoot::project_namespace();
    let technical_id = shoot::control_plane_namespace();
    progress
        .step(
            &format!("create example Project {}", shoot::PROJECT),
            async {
                shoot::create_project(garden)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            &format!(
                "garden controller reconciles Project {}: namespace {project_namespace}, RBAC, phase",
                shoot::PROJECT
            ),
            async {
                shoot::project_ready(garden, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            &format!(
                "create example Shoot {project_namespace}/{}: CloudProfile, Shoot",
                shoot::SHOOT
            ),
            async {
                shoot::create(garden, SEED_NAME)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step("garden controller sets the Shoot's status label", async {
            shoot::status_label(garden, timeout)
                .await
                .map(|detail| ((), detail))
        })
        .await?;
    progress
        .step(
            &format!("agent writes Cluster {technical_id} in the seed"),
            async {
                shoot::cluster(seed, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            &format!("agent creates control-plane namespace {technical_id}"),
            async {
                shoot::control_plane(seed, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            &format!("agent writes the network policies of {technical_id}"),
            async {
                shoot::network_policies(seed, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            &format!(
                "agent reconciles Shoot {}: Create 0 % → Succeeded 100 %",
                shoot::SHOOT
            ),
            async {
                shoot::reconciled(garden, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            &format!(
                "extension state: Infrastructure {technical_id}/{} with .status.state",
                shoot::SHOOT
            ),
            async {
                shoot::write_infrastructure_state(seed)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            &format!(
                "agent syncs ShootState {project_namespace}/{} in the garden",
                shoot::SHOOT
            ),
            async {
                shoot::shoot_state(garden, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    shoot_operations::run(garden, seed, SEED_NAME, progress, timeout).await
}
