//! seedlet command line: parses arguments and dispatches into the crates.
//!
//! Adding a command is one `Command` variant (its doc comment is the help text) and one arm in `run`.
//! Commands that read a configuration initialise logging from it via `init_logging`; one-shot
//! commands use the flags or text output at `info`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, Parser, Subcommand};
use seedlet_config::{LogFormat, LogLevel};

mod agent_cli;
mod allocator;
mod daemon_cli;
mod garden_cli;

use agent_cli::agent;
use daemon_cli::{EXIT_INVALID_CONFIG, LogOptions, component_runtime, init_logging, report};
use garden_cli::garden;

/// `seedlet version` and `--version`: crate version and the git commit recorded by `build.rs`.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("SEEDLET_GIT_COMMIT"),
    ")"
);

/// Gardener-compatible seed agent and garden-side controller.
#[derive(Debug, Parser)]
#[command(name = "seedlet", version = VERSION)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the version and the git commit it was built from.
    Version,
    /// Validate agent and garden controller configuration files; exit 2 on any problem.
    ///
    /// Files are loaded as the daemons load them, including the kubeconfig files they name (after
    /// the `GARDEN_KUBECONFIG` / `KUBECONFIG` overrides). Every problem is printed as
    /// `FILE: PATH: PROBLEM` on stderr; a valid file as `OK: KIND FILE` on stdout, with one line
    /// listing the gardenlet fields seedlet accepts but ignores.
    CheckConfig {
        /// Files to check; the kind is detected from `apiVersion` and `kind`.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        #[command(flatten)]
        log: LogOptions,
    },
    /// Print CustomResourceDefinitions for the Gardener types as YAML (both sets without a flag).
    Crds {
        /// Only the `core.gardener.cloud` kinds, for development gardens without gardener-apiserver.
        #[arg(long, conflicts_with = "seed")]
        garden: bool,
        /// Only the seed-side kinds: Cluster, the extension kinds and ManagedResource.
        #[arg(long)]
        seed: bool,
    },
    /// Run the demo landscape (garden + seed sandboxes, garden controller, agent), or `serve`.
    ///
    /// Prints each step, a summary and how to look around with kubectl; the components log to
    /// DIR/agent.log, DIR/garden.log and DIR/sandbox.log. `serve` runs one sandbox API server.
    Sandbox {
        #[command(subcommand)]
        serve: Option<SandboxCommand>,
        /// State directory, kept across runs; a new temporary directory when omitted.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Exit 0 once everything is Ready (non-zero with the reason otherwise).
        #[arg(long)]
        once: bool,
        #[command(flatten)]
        log: LogOptions,
    },
    /// Run the seed agent with a `GardenletConfiguration` (exit 2 when it has problems).
    Agent {
        /// The agent configuration file.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        #[command(flatten)]
        log: LogOptions,
    },
    /// Run the garden-side controller with a `GardenControllerConfiguration` (exit 2 when it has
    /// problems).
    Garden {
        /// The garden controller configuration file.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        #[command(flatten)]
        log: LogOptions,
    },
    /// Render a Helm chart or ControllerDeployment offline, like `helm template`.
    ///
    /// `seedlet render [NAME] CHART -n NAMESPACE -f VALUES --set KEY=VALUE`; exit 2 on errors.
    Render(Box<seedlet_chartrender::cli::RenderArgs>),
    /// Measure seedlet under load.
    Bench {
        #[command(subcommand)]
        command: BenchCommand,
        #[command(flatten)]
        log: LogOptions,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    ///
    /// For example `seedlet completion bash > /etc/bash_completion.d/seedlet`.
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// A busy seed in sandboxes with the agent as a separate process: prints a summary and a JSON
    /// report (RSS, CPU, latencies, lease drift, request rates, lost updates); exit 1 when a goal
    /// is missed or an update was lost.
    Scale {
        /// The CI size (N=25, M=5, K=200, 10 s churn) instead of N=250, M=50, K=2000, 60 s.
        #[arg(long)]
        quick: bool,
        /// Shoots scheduled to the seed (N).
        #[arg(long, value_name = "N")]
        shoots: Option<usize>,
        /// ControllerRegistrations with a chart (M).
        #[arg(long, value_name = "M")]
        registrations: Option<usize>,
        /// Extension objects with a changing state (K).
        #[arg(long, value_name = "K")]
        objects: Option<usize>,
        /// Churn (soak) duration after warm-up, e.g. `60s` or `30m`.
        #[arg(long, value_name = "DURATION")]
        duration: Option<seedlet_config::Duration>,
        /// Extension state changes per second during the churn.
        #[arg(long, value_name = "PER_SECOND")]
        rate: Option<u32>,
        /// Directory for configs, kubeconfigs and the agent log (a temporary one when omitted).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Also write the JSON report to this file.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// The agent binary to measure (default: `seedlet-agent` beside this binary, else
        /// `seedlet agent`), e.g. `target/slim/seedlet-agent`.
        #[arg(long, value_name = "FILE")]
        agent_binary: Option<PathBuf>,
    },
    /// A garden with hundreds of simulated seeds (own identities, a Lease every 2 s) and the
    /// garden controller as a separate process: prints a summary and a JSON report (scheduling
    /// and lifecycle latencies, CSR approval, RSS, CPU, lost updates); exit 1 when a goal is
    /// missed or something was lost.
    Garden {
        /// The CI size (12 seeds, 4 registrations) instead of 500 seeds, 60 registrations.
        #[arg(long)]
        quick: bool,
        /// Simulated seeds.
        #[arg(long, value_name = "S")]
        seeds: Option<usize>,
        /// ControllerRegistrations with policy Always (M).
        #[arg(long, value_name = "M")]
        registrations: Option<usize>,
        /// Shoots spread over the seeds.
        #[arg(long, value_name = "N")]
        shoots: Option<usize>,
        /// Directory for configs, kubeconfigs and the controller log (a temporary one when omitted).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Also write the JSON report to this file.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// The garden controller binary to measure (default: `seedlet-garden` beside this binary,
        /// else `seedlet garden`), e.g. `target/release/seedlet-garden`.
        #[arg(long, value_name = "FILE")]
        garden_binary: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum SandboxCommand {
    /// Serve one sandbox API server; writes DIR/admin.kubeconfig and DIR/ca.crt, prints its
    /// address, the kubeconfig path and `ready`.
    Serve {
        /// State directory (CA, data, admin kubeconfig).
        #[arg(long, value_name = "DIR")]
        dir: PathBuf,
        /// Port on 127.0.0.1; 0 picks a free one.
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Cluster name used in the kubeconfig.
        #[arg(long, default_value = "sandbox")]
        name: String,
    },
}

fn main() -> ExitCode {
    allocator::return_freed_memory();
    let cli = Cli::parse();
    daemon_cli::exit_code(run(cli))
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Version => {
            out(&format!("seedlet {VERSION}"));
            Ok(ExitCode::SUCCESS)
        }
        Command::CheckConfig { files, log } => {
            init_logging(
                log.log_level.unwrap_or_default(),
                log.log_format.unwrap_or(LogFormat::Text),
            )?;
            Ok(check_config(&files))
        }
        Command::Completion { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "seedlet", &mut script);
            let _ = std::io::stdout().lock().write_all(&script);
            Ok(ExitCode::SUCCESS)
        }
        Command::Crds { garden, seed } => {
            let crds = match (garden, seed) {
                (true, _) => seedlet_api::crds::garden_crds(),
                (_, true) => seedlet_api::crds::seed_crds(),
                (false, false) => {
                    let mut all = seedlet_api::crds::garden_crds();
                    all.extend(seedlet_api::crds::seed_crds());
                    all
                }
            };
            let yaml = seedlet_api::crds::to_yaml(&crds).context("rendering CRDs")?;
            let _ = std::io::stdout().lock().write_all(yaml.as_bytes());
            Ok(ExitCode::SUCCESS)
        }
        Command::Sandbox {
            serve,
            dir,
            once,
            log,
        } => sandbox(serve, dir, once, log),
        Command::Agent { config, log } => agent(&config, log),
        Command::Garden { config, log } => garden(&config, log),
        Command::Bench {
            command:
                BenchCommand::Scale {
                    quick,
                    shoots,
                    registrations,
                    objects,
                    duration,
                    rate,
                    dir,
                    report,
                    agent_binary,
                },
            log,
        } => {
            init_logging(
                log.log_level.unwrap_or(LogLevel::Error),
                log.log_format.unwrap_or(LogFormat::Text),
            )?;
            let binary = daemon_binary("agent", agent_binary)?;
            let overrides = seedlet_scale::Overrides {
                shoots,
                registrations,
                extension_objects: objects,
                churn: duration.map(seedlet_config::Duration::as_std),
                state_changes_per_second: rate,
                dir,
            };
            let options = seedlet_scale::options_from(quick, binary, overrides)?;
            let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
            let measured = runtime
                .block_on(seedlet_scale::run(&options))
                .context("the scale run failed")?;
            let json = serde_json::to_string_pretty(&measured).context("encoding the report")?;
            publish_report(
                &json,
                &measured.summary(),
                &measured.goals,
                report.as_deref(),
            )
        }
        Command::Bench {
            command:
                BenchCommand::Garden {
                    quick,
                    seeds,
                    registrations,
                    shoots,
                    dir,
                    report,
                    garden_binary,
                },
            log,
        } => {
            init_logging(
                log.log_level.unwrap_or(LogLevel::Error),
                log.log_format.unwrap_or(LogFormat::Text),
            )?;
            let binary = daemon_binary("garden", garden_binary)?;
            let mut options = if quick {
                seedlet_scale::garden::GardenOptions::quick(binary)
            } else {
                seedlet_scale::garden::GardenOptions::full(binary)
            };
            options.seeds = seeds.unwrap_or(options.seeds);
            options.registrations = registrations.unwrap_or(options.registrations);
            options.shoots = shoots.unwrap_or(options.shoots);
            options.dir = dir;
            bench_garden(&options, report.as_deref())
        }
        Command::Render(args) => match seedlet_chartrender::cli::run(&args) {
            Ok(output) => {
                let _ = std::io::stdout().lock().write_all(output.as_bytes());
                Ok(ExitCode::SUCCESS)
            }
            Err(error) => {
                report(&format!("error: {}", seedlet_runtime::error_chain(&error)));
                Ok(ExitCode::from(EXIT_INVALID_CONFIG))
            }
        },
    }
}

/// The binary a bench runs `daemon` (`agent` or `garden`) with: `given` (`--agent-binary`,
/// `--garden-binary`) when it exists; else the slim `seedlet-<daemon>` beside this binary, as
/// operators run it; else this binary (`seedlet <daemon>`).
fn daemon_binary(daemon: &str, given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match given {
        Some(binary) if binary.is_file() => Ok(binary),
        Some(binary) => anyhow::bail!("--{daemon}-binary {}: no such file", binary.display()),
        None => {
            let seedlet = std::env::current_exe().context("locating the seedlet binary")?;
            let slim = seedlet.with_file_name(format!("seedlet-{daemon}"));
            Ok(if slim.is_file() { slim } else { seedlet })
        }
    }
}

/// `seedlet bench garden`: runs, prints and stores the report; exit 1 when a goal is missed.
fn bench_garden(
    options: &seedlet_scale::garden::GardenOptions,
    report: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let measured = runtime
        .block_on(seedlet_scale::garden::run(options))
        .context("the garden run failed")?;
    let json = serde_json::to_string_pretty(&measured).context("encoding the report")?;
    publish_report(&json, &measured.summary(), &measured.goals, report)
}

/// A bench run's end: the JSON report on stdout (and in `report` when given), the summary on
/// stderr; exit 1 when a goal is missed.
fn publish_report(
    json: &str,
    summary: &str,
    goals: &[seedlet_scale::Goal],
    report: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    if let Some(path) = report {
        std::fs::write(path, json)
            .with_context(|| format!("writing the report to {}", path.display()))?;
    }
    out(json);
    let _ = std::io::stderr().lock().write_all(summary.as_bytes());
    Ok(if goals.iter().all(|goal| goal.met) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `seedlet sandbox [serve]`: the demo landscape, or one sandbox API server.
fn sandbox(
    serve: Option<SandboxCommand>,
    dir: Option<PathBuf>,
    once: bool,
    log: LogOptions,
) -> anyhow::Result<ExitCode> {
    // The demo's terminal shows its steps and errors only; its components log to files in the
    // state directory at `--log-level`.
    let terminal_level = match serve {
        Some(_) => log.log_level.unwrap_or(LogLevel::Error),
        None => LogLevel::Error,
    };
    init_logging(terminal_level, log.log_format.unwrap_or(LogFormat::Text))?;
    let runtime = match serve {
        Some(_) => component_runtime("sandbox")?,
        None => tokio::runtime::Runtime::new().context("starting the async runtime")?,
    };
    runtime.block_on(async move {
        let shutdown = seedlet_runtime::process::shutdown_on_signals();
        if let Some(SandboxCommand::Serve { dir, port, name }) = serve {
            let options = seedlet_landscape::ServeOptions { dir, port, name };
            seedlet_landscape::serve(options, shutdown)
                .await
                .context("serving the sandbox")?;
            return Ok(ExitCode::SUCCESS);
        }
        let options = seedlet_landscape::Options {
            dir,
            once,
            log_level: log.log_level.unwrap_or(LogLevel::Info),
            ..seedlet_landscape::Options::default()
        };
        match seedlet_landscape::run(options, shutdown).await {
            Ok(()) => Ok(ExitCode::SUCCESS),
            // Another landscape holds the directory: nothing was started.
            Err(error @ seedlet_landscape::Error::StateDirInUse { .. }) => Err(error.into()),
            Err(error) => {
                Err(anyhow::Error::from(error)
                    .context("the sandbox landscape did not become Ready"))
            }
        }
    })
}

/// Checks each file; prints `OK: <kind> <file>` on stdout or each problem on its own line on stderr.
fn check_config(files: &[PathBuf]) -> ExitCode {
    let mut all_valid = true;
    for file in files {
        all_valid &= check_one(file);
    }
    if all_valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_INVALID_CONFIG)
    }
}

fn check_one(file: &Path) -> bool {
    match seedlet_config::load_for_daemon(file, |name| std::env::var(name).ok()) {
        Ok(config) => {
            out(&format!("OK: {} {}", config.file_kind(), file.display()));
            let ignored = config.ignored_fields();
            if !ignored.is_empty() {
                out(&format!(
                    "  {} fields accepted but ignored by seedlet: {}",
                    ignored.len(),
                    ignored.join(", ")
                ));
            }
            true
        }
        Err(error) => {
            for line in error.lines() {
                report(&line);
            }
            false
        }
    }
}

/// Writes one line to stdout; a closed stdout (`seedlet … | head`) loses it instead of panicking.
fn out(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}
