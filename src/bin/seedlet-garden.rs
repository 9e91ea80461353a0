//! `seedlet-garden`: the garden controller alone, for operators (the Helm chart and the systemd
//! unit run it, and `seedlet bench garden` measures it). It links the garden controller, its
//! configuration and the runtime only — not the agent, the sandbox, the chart renderer or the
//! bench harnesses that the all-in-one `seedlet` carries — so fewer code pages are mapped. Same
//! flags, configuration and behaviour as `seedlet garden`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[path = "../allocator.rs"]
mod allocator;
#[path = "../daemon_cli.rs"]
mod daemon_cli;
#[path = "../garden_cli.rs"]
mod garden_cli;

/// Gardener-compatible garden-side controller (`seedlet garden` without the rest of seedlet).
#[derive(Debug, Parser)]
#[command(name = "seedlet-garden", version = env!("CARGO_PKG_VERSION"))]
struct Cli {
    /// The garden controller configuration file (`GardenControllerConfiguration`).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    #[command(flatten)]
    log: daemon_cli::LogOptions,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    allocator::return_freed_memory();
    daemon_cli::exit_code(garden_cli::garden(&cli.config, cli.log))
}
