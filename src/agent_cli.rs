//! `seedlet agent` and `seedlet-agent`: loads the agent's configuration and runs the agent
//! (shared by the all-in-one binary and the slim agent binary).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::daemon_cli::{
    EXIT_INVALID_CONFIG, LogOptions, component_runtime, daemon_config, init_logging,
};

/// `seedlet agent`: exit 2 when the configuration has a problem, else run until a signal.
pub fn agent(path: &Path, log: LogOptions) -> anyhow::Result<ExitCode> {
    let Some(seedlet_config::AnyConfig::Gardenlet(config)) =
        daemon_config(path, seedlet_config::gardenlet::KIND)
    else {
        return Ok(ExitCode::from(EXIT_INVALID_CONFIG));
    };
    let mut config = *config;
    config.apply_environment(|name| std::env::var(name).ok());
    init_logging(
        log.log_level.unwrap_or(config.log_level),
        log.log_format.unwrap_or(config.log_format),
    )?;
    let ignored = config.ignored_fields();
    if !ignored.is_empty() {
        tracing::info!(
            fields = %ignored.join(", "),
            "configuration fields accepted but ignored by seedlet"
        );
    }
    let runtime = component_runtime("agent")?;
    runtime.block_on(async move {
        seedlet_agent::run_agent(config, seedlet_runtime::process::shutdown_on_signals())
            .await
            .context("agent failed")
    })?;
    Ok(ExitCode::SUCCESS)
}
