//! What the daemon commands share between `seedlet` (the all-in-one binary) and the slim
//! daemon binaries `seedlet-agent` and `seedlet-garden` (each links only its daemon, the
//! configuration and the runtime): loading a daemon configuration as `check-config` does,
//! logging set-up and the component runtime. Running each daemon is in `agent_cli.rs` and
//! `garden_cli.rs`, so that a slim binary includes only its own.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use seedlet_config::{LogFormat, LogLevel};

/// Exit code of a daemon whose configuration is invalid (and of `check-config`).
pub const EXIT_INVALID_CONFIG: u8 = 2;

/// The logging flags of the commands that log; in a section of their own in `--help`.
#[derive(Debug, Clone, Copy, Default, Args)]
#[command(next_help_heading = "Log options")]
pub struct LogOptions {
    /// Log threshold (debug, info, error); overrides the configuration's `logLevel`.
    /// A non-empty `RUST_LOG` (`level` or `target=level` directives) replaces it on stderr.
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<LogLevel>,
    /// Log format (json, text); overrides the configuration's `logFormat`.
    #[arg(long, global = true, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,
}

/// Writes one line to stderr; a closed stderr loses it instead of panicking like `eprintln!`.
pub fn report(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The exit code of a daemon run: its own, or a failure after the error chain on stderr.
pub fn exit_code(run: anyhow::Result<ExitCode>) -> ExitCode {
    run.unwrap_or_else(|error| {
        report(&format!(
            "error: {}",
            seedlet_runtime::error_chain(error.as_ref())
        ));
        ExitCode::FAILURE
    })
}

/// A multi-threaded tokio runtime whose threads log as `component` (see
/// [`seedlet_runtime::logging::set_thread_component`]).
pub fn component_runtime(component: &'static str) -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(move || seedlet_runtime::logging::set_thread_component(component))
        .build()
        .context("starting the async runtime")
}

/// Loads a daemon's configuration the way `check-config` does (the same problems, the same
/// lines on stderr); `None` when it has problems or is of another kind than `kind`.
pub fn daemon_config(path: &Path, kind: &'static str) -> Option<seedlet_config::AnyConfig> {
    let error = match seedlet_config::load_for_daemon(path, |name| std::env::var(name).ok()) {
        Ok(config) if config.kind() == kind => return Some(config),
        Ok(config) => seedlet_config::ConfigError::WrongKind {
            file: path.to_owned(),
            found: config.kind(),
            expected: kind,
        },
        Err(error) => error,
    };
    for line in error.lines() {
        report(&line);
    }
    None
}

/// Installs the process logger on stderr (see [`seedlet_runtime::logging`]).
///
/// # Errors
///
/// Fails when a logger is already installed or `RUST_LOG` is not a valid filter.
pub fn init_logging(level: LogLevel, format: LogFormat) -> anyhow::Result<()> {
    let rust_log = std::env::var("RUST_LOG").ok();
    seedlet_runtime::logging::init(level, format, rust_log.as_deref())
        .context("initialising logging")
}
