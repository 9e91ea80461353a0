//! `seedlet-agent`: the seed agent alone, for operators (the Helm chart and the systemd unit run
//! it). It links the agent, its configuration and the runtime only — not the sandbox, the garden
//! controller, the chart bench or the scale harness that the all-in-one `seedlet` carries — so
//! its code pages stay small. Same flags, configuration and behaviour as `seedlet agent`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[path = "../agent_cli.rs"]
mod agent_cli;
#[path = "../allocator.rs"]
mod allocator;
#[path = "../daemon_cli.rs"]
mod daemon_cli;

/// Gardener-compatible seed agent (`seedlet agent` without the rest of seedlet).
#[derive(Debug, Parser)]
#[command(name = "seedlet-agent", version = env!("CARGO_PKG_VERSION"))]
struct Cli {
    /// The agent configuration file (`GardenletConfiguration`).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    #[command(flatten)]
    log: daemon_cli::LogOptions,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    allocator::return_freed_memory();
    daemon_cli::exit_code(agent_cli::agent(&cli.config, cli.log))
}
