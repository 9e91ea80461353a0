//! `seedlet garden` and `seedlet-garden`: loads the garden controller's configuration and runs
//! the controller (shared by the all-in-one binary and the slim garden binary).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::daemon_cli::{
    EXIT_INVALID_CONFIG, LogOptions, component_runtime, daemon_config, init_logging,
};

/// `seedlet garden`: exit 2 when the configuration has a problem, else run until a signal.
pub fn garden(path: &Path, log: LogOptions) -> anyhow::Result<ExitCode> {
    let Some(seedlet_config::AnyConfig::GardenController(config)) =
        daemon_config(path, seedlet_config::garden::KIND)
    else {
        return Ok(ExitCode::from(EXIT_INVALID_CONFIG));
    };
    let config = *config;
    init_logging(
        log.log_level.unwrap_or(config.log_level),
        log.log_format.unwrap_or(config.log_format),
    )?;
    if !config.ignored.is_empty() {
        tracing::info!(
            fields = %config.ignored.join(", "),
            "configuration fields accepted but ignored by seedlet"
        );
    }
    let runtime = component_runtime("garden")?;
    runtime.block_on(async move {
        seedlet_garden::run_garden(config, seedlet_runtime::process::shutdown_on_signals())
            .await
            .context("garden controller failed")
    })?;
    Ok(ExitCode::SUCCESS)
}
