//! The agent as a real process (`seedlet agent --config FILE`) killed with SIGKILL at random points
//! during bootstrap, certificate rotation and apply, then started again until it converges.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use kube::Api;
use seedlet_api::core::Seed;
use serde_json::json;
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use super::env::{
    CHART, Env, Rng, ci_has, converge, greeting, install, renew_time, set_deployment, start_garden,
};
use super::identity;

/// Kills per phase.
const BOOTSTRAP_KILLS: usize = 3;
const ROTATION_KILLS: usize = 2;
const APPLY_KILLS: usize = 2;

/// Runs the kill scenario end to end; see the module docs.
pub async fn run_kill_scenario(rng: &mut Rng) {
    let env = Env::start().await;
    identity::prepare_bootstrap(&env).await;
    let shutdown = CancellationToken::new();
    let garden_controller = start_garden(env.garden.client(), shutdown.child_token()).await;
    let files = tempfile::tempdir().expect("temp dir");
    let agent = AgentProcess::prepare(files.path(), &env);
    let _dump = DumpLogOnPanic(&agent);
    let (garden, seed) = (env.garden.client(), env.seed.client());
    let mut kills = Vec::new();

    // Bootstrap: killed before, during or after the CSR is created/approved/stored.
    for _ in 0..BOOTSTRAP_KILLS {
        kills.push(("bootstrap", agent.run_and_kill(rng.millis(100, 2500)).await));
    }
    let mut running = agent.spawn();
    let first = identity::wait_bootstrapped(&env).await;
    running.kill().await;

    // Rotation: the renew annotation is pending while processes die.
    identity::request_renewal(&seed).await;
    for _ in 0..ROTATION_KILLS {
        kills.push(("rotation", agent.run_and_kill(rng.millis(100, 2500)).await));
    }
    let csrs_before_apply = identity::csr_count(&garden).await;

    // Apply: installations and value changes while processes die.
    install(&garden, "ext", "k0", &["ext-a"]).await;
    for round in 1..=APPLY_KILLS {
        set_deployment(
            &garden,
            "ext",
            CHART,
            json!({"greeting": format!("k{round}")}),
        )
        .await;
        kills.push(("apply", agent.run_and_kill(rng.millis(100, 2500)).await));
    }

    let restarted = (Instant::now(), jiff::Timestamp::now());
    let mut running = agent.spawn();
    let want = format!("k{APPLY_KILLS}");
    let took = converge("converged after kills", restarted.0, || async {
        !identity::renew_pending(&seed).await
            && identity::stored_certificate(&seed)
                .await
                .is_some_and(|c| c.serial != first.serial)
            && greeting(&seed, "ext-a", "ext").await.as_deref() == Some(want.as_str())
            && ci_has(
                &garden,
                "ext-a",
                &[("Installed", "True"), ("Healthy", "True")],
            )
            .await
            && renew_time(&garden).await.is_some_and(|t| t > restarted.1)
    })
    .await;
    assert!(
        running.alive(),
        "the last agent process is still running: {}",
        agent.log_tail()
    );
    assert!(
        identity::garden_accepts_stored(&env).await,
        "the stored certificate kubeconfig is valid in the garden"
    );
    let seeds = Api::<Seed>::all(garden.clone())
        .list(&Default::default())
        .await
        .expect("seeds listed");
    assert_eq!(seeds.items.len(), 1, "exactly one Seed");

    // At most one CSR per process that ran while a certificate was needed, and none afterwards.
    let csrs = identity::csr_count(&garden).await;
    let starts_needing_certificates = BOOTSTRAP_KILLS + 1 + ROTATION_KILLS + 1;
    assert!(
        csrs <= starts_needing_certificates,
        "{csrs} CSRs for {starts_needing_certificates} process starts"
    );
    assert!(
        csrs >= csrs_before_apply,
        "CSRs are never deleted behind the agent's back"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        identity::csr_count(&garden).await,
        csrs,
        "no further CSRs once converged"
    );
    let points: Vec<String> = kills
        .iter()
        .map(|(phase, after)| format!("{phase}@{}ms", after.as_millis()))
        .collect();
    println!(
        "fault process-kills: SIGKILL at [{}]; converged (certificate rotated and valid, 1 Seed, ManagedResource applied, Lease renewed) {took:?} after the last start; {csrs} CSRs in total",
        points.join(", ")
    );
    running.kill().await;
    shutdown.cancel();
    garden_controller
        .wait()
        .await
        .expect("garden controller stops");
}

/// How to start the `seedlet agent` process, and its log.
struct AgentProcess {
    config: PathBuf,
    log: PathBuf,
}

impl AgentProcess {
    /// Writes the seed kubeconfig (mode 0600) and the agent configuration into `dir`.
    fn prepare(dir: &Path, env: &Env) -> Self {
        let seed_kubeconfig = dir.join("seed.kubeconfig");
        write_private(
            &seed_kubeconfig,
            &env.seed.sandbox().admin_kubeconfig_yaml(),
        );
        let config = dir.join("agent.yaml");
        std::fs::write(
            &config,
            identity::bootstrap_agent_config(Some(&seed_kubeconfig)),
        )
        .expect("config written");
        Self {
            config,
            log: dir.join("agent.log"),
        }
    }

    fn spawn(&self) -> Running {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_seedlet"))
            .arg("agent")
            .arg("--config")
            .arg(&self.config)
            .env_remove("KUBECONFIG")
            .env_remove("GARDEN_KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("seedlet agent starts");
        Running(child)
    }

    /// Starts a process, lets it run for `after` and SIGKILLs it; returns `after`.
    async fn run_and_kill(&self, after: Duration) -> Duration {
        let mut running = self.spawn();
        tokio::time::sleep(after).await;
        assert!(
            running.alive(),
            "agent process exited by itself before the kill: {}",
            self.log_tail()
        );
        running.kill().await;
        after
    }

    /// The last lines of the agents' log, for failure messages.
    fn log_tail(&self) -> String {
        let Ok(file) = std::fs::File::open(&self.log) else {
            return String::new();
        };
        let lines: Vec<String> = BufReader::new(file).lines().map_while(Result::ok).collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

/// Prints the agents' log when the scenario fails.
struct DumpLogOnPanic<'a>(&'a AgentProcess);

impl Drop for DumpLogOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- last agent log lines ---\n{}", self.0.log_tail());
        }
    }
}

struct Running(Child);

impl Running {
    fn alive(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(None))
    }

    /// SIGKILL and reap.
    async fn kill(&mut self) {
        self.0.kill().await.expect("agent process killed");
    }
}

fn write_private(path: &Path, text: &str) {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .expect("kubeconfig written");
}
