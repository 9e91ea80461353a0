//! Scale and soak harness behind `seedlet bench scale`: a busy seed in two sandbox API servers,
//! the garden controller in-process and the agent as a separate process (so that its memory and
//! CPU are its own), driven through the real path (bootstrap token → CSR → certificate).
//!
//! A run creates `N` shoots (→ Clusters), `M` ControllerRegistrations with charts (→
//! ControllerInstallations → ManagedResources) and `K` extension objects, then changes extension
//! states and shoots continuously for the churn period, and checks at the end that every change
//! arrived. [`run`] returns a [`Report`] (JSON via serde, [`Report::summary`] for people).

pub mod garden;
mod landscape;
mod observe;
mod process;
mod report;
mod stats;
mod workload;

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use report::{Goal, Report};
pub use stats::Latency;

/// What a run creates and how long it churns.
#[derive(Clone, Debug)]
pub struct Options {
    /// Shoots scheduled to the seed (`N`).
    pub shoots: usize,
    /// ControllerRegistrations with a chart, policy Always (`M`).
    pub registrations: usize,
    /// Extension objects with a changing `.status.state` (`K`).
    pub extension_objects: usize,
    /// How long to churn after warm-up (the soak when long).
    pub churn: Duration,
    /// Extension state changes per second during the churn.
    pub state_changes_per_second: u32,
    /// The binary to run the agent with: `seedlet-agent`, or `seedlet` (then `seedlet agent`).
    pub agent_binary: PathBuf,
    /// Where configs, kubeconfigs and the agent log go; a temporary directory when `None`.
    pub dir: Option<PathBuf>,
    /// How long each phase may take before the run fails.
    pub phase_timeout: Duration,
    /// How often the agent's RSS and CPU are sampled.
    pub sample_interval: Duration,
}

impl Options {
    /// The full run: N=250 shoots, M=50 registrations, K=2000 extension objects, 60 s churn.
    pub fn full(agent_binary: PathBuf) -> Self {
        Self {
            shoots: 250,
            registrations: 50,
            extension_objects: 2000,
            churn: Duration::from_secs(60),
            state_changes_per_second: 100,
            agent_binary,
            dir: None,
            phase_timeout: Duration::from_secs(180),
            sample_interval: Duration::from_millis(500),
        }
    }

    /// The CI run (well under 2 minutes): N=25, M=5, K=200, 10 s churn.
    pub fn quick(agent_binary: PathBuf) -> Self {
        Self {
            shoots: 25,
            registrations: 5,
            extension_objects: 200,
            churn: Duration::from_secs(10),
            state_changes_per_second: 50,
            phase_timeout: Duration::from_secs(60),
            ..Self::full(agent_binary)
        }
    }
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be written or read.
    #[error("cannot access {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A measured binary could not be started.
    #[error("cannot start {binary}")]
    Spawn {
        /// The binary.
        binary: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A measured process (the agent, the garden controller) exited during the run.
    #[error("the {component} exited ({status}); its log is {log}")]
    Exited {
        /// `agent` or `garden controller`.
        component: &'static str,
        /// The exit status.
        status: String,
        /// The agent's log file.
        log: PathBuf,
    },
    /// A sandbox API server did not start.
    #[error("cannot start the {name} sandbox")]
    Sandbox {
        /// `garden` or `seed`.
        name: &'static str,
        /// The cause.
        #[source]
        source: seedlet_sandbox::SandboxError,
    },
    /// Preparing the garden or seed failed.
    #[error("cannot prepare the landscape")]
    Landscape(#[source] seedlet_landscape::Error),
    /// A configuration written by the harness was rejected.
    #[error("invalid {component} configuration")]
    Config {
        /// `agent` or `garden controller`.
        component: &'static str,
        /// The cause.
        #[source]
        source: seedlet_config::ConfigError,
    },
    /// The garden controller did not start.
    #[error("cannot start the garden controller")]
    Garden(#[source] seedlet_garden::Error),
    /// An API request of the harness failed.
    #[error("cannot {what}")]
    Kube {
        /// The request.
        what: String,
        /// The cause.
        #[source]
        source: kube::Error,
    },
    /// An object or config did not (de)serialize.
    #[error("invalid JSON")]
    Json(#[source] serde_json::Error),
    /// A config did not (de)serialize.
    #[error("invalid YAML")]
    Yaml(#[source] serde_yaml::Error),
    /// The workload could not be built.
    #[error("invalid workload: {what}")]
    Workload {
        /// What is wrong.
        what: String,
    },
    /// A phase did not finish in time.
    #[error("timed out after {timeout:?} waiting for {what} (agent log: {log})")]
    Timeout {
        /// The phase.
        what: String,
        /// The phase timeout.
        timeout: Duration,
        /// The agent's log file.
        log: PathBuf,
    },
}

/// Runs the scale scenario described by `options` and reports what it measured.
///
/// # Errors
/// The first phase that failed; everything started is stopped first.
pub async fn run(options: &Options) -> Result<Report, Error> {
    if options.extension_objects > 0 && options.shoots == 0 {
        return Err(Error::Workload {
            what: "extension objects need at least one shoot".to_owned(),
        });
    }
    let load_at_start = landscape::load_average();
    let started = Instant::now();
    let mut landscape = landscape::Landscape::start(options).await?;
    let outcome = landscape::drive(&mut landscape, options).await;
    let report = match outcome {
        Ok(measured) => Ok(measured.into_report(options, load_at_start, started.elapsed())),
        Err(error) => Err(error),
    };
    landscape.stop().await;
    report
}

/// `options` for a run from the command line: `--quick` or the full defaults, with overrides.
pub fn options_from(
    quick: bool,
    agent_binary: PathBuf,
    overrides: Overrides,
) -> Result<Options, Error> {
    let mut options = if quick {
        Options::quick(agent_binary)
    } else {
        Options::full(agent_binary)
    };
    if let Some(shoots) = overrides.shoots {
        options.shoots = shoots;
    }
    if let Some(registrations) = overrides.registrations {
        options.registrations = registrations;
    }
    if let Some(objects) = overrides.extension_objects {
        options.extension_objects = objects;
    }
    if let Some(churn) = overrides.churn {
        options.churn = churn;
    }
    if let Some(rate) = overrides.state_changes_per_second {
        if rate == 0 {
            return Err(Error::Workload {
                what: "--rate must be at least 1 change per second".to_owned(),
            });
        }
        options.state_changes_per_second = rate;
    }
    options.dir = overrides.dir;
    Ok(options)
}

/// Command-line overrides of [`Options`].
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--shoots`.
    pub shoots: Option<usize>,
    /// `--registrations`.
    pub registrations: Option<usize>,
    /// `--objects`.
    pub extension_objects: Option<usize>,
    /// `--duration`.
    pub churn: Option<Duration>,
    /// `--rate`.
    pub state_changes_per_second: Option<u32>,
    /// `--dir`.
    pub dir: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_the_chosen_defaults() {
        let options = options_from(
            true,
            PathBuf::from("seedlet"),
            Overrides {
                shoots: Some(3),
                churn: Some(Duration::from_secs(1)),
                ..Overrides::default()
            },
        )
        .expect("valid");
        assert_eq!(options.shoots, 3);
        assert_eq!(
            options.registrations,
            Options::quick("x".into()).registrations
        );
        assert_eq!(options.churn, Duration::from_secs(1));
        assert_eq!(Options::full("x".into()).extension_objects, 2000);
    }

    #[test]
    fn a_zero_rate_is_refused() {
        let refused = options_from(
            false,
            PathBuf::from("seedlet"),
            Overrides {
                state_changes_per_second: Some(0),
                ..Overrides::default()
            },
        );
        assert!(matches!(refused, Err(Error::Workload { .. })));
    }
}
