//! What an operator reads when a daemon cannot get going: the `seedlet-agent` process against a
//! seed sandbox whose bootstrap Secret is missing and against a garden that serves no Gardener
//! API, and `seedlet garden` against such a garden. Each failure is one ERROR line that names the object or server and says what is wrong
//! ("not found", the resource type not served and what to install), not a line every 5 s and
//! not a Rust `Debug` dump of the server's `Status`.
//! A garden that does not answer at all (a dead port) is one ERROR too, and the attempts back
//! off from 1 s to a minute instead of coming every 5 s.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::process::Command;

/// Long enough for four attempts of a start-up step (at 0, 1, 3 and 7 s).
const RUN_FOR: Duration = Duration::from_secs(11);

const SEED_CONFIG: &str = r#"leaderElection:
  leaderElect: false
logFormat: json
server:
  healthProbes:
    bindAddress: 127.0.0.1
    freePort: true
  metrics:
    bindAddress: 127.0.0.1
    freePort: true
seedConfig:
  metadata:
    name: local
  spec:
    provider:
      type: local
      region: local
    networks:
      pods: 10.1.0.0/16
      services: 10.2.0.0/16
"#;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("file written");
    path.display().to_string()
}

/// Runs `seedlet-agent` with `config` for [`RUN_FOR`], then kills it; its JSON log lines.
async fn run_agent(dir: &Path, config: &str) -> Vec<Value> {
    run_daemon(env!("CARGO_BIN_EXE_seedlet-agent"), &[], dir, config).await
}

/// Runs `binary args --config <config>` for [`RUN_FOR`], then kills it; its JSON log lines.
async fn run_daemon(binary: &str, args: &[&str], dir: &Path, config: &str) -> Vec<Value> {
    let config = write(dir, "daemon.yaml", config);
    let mut child = Command::new(binary)
        .args(args)
        .args(["--config", &config])
        .env_remove("KUBECONFIG")
        .env_remove("GARDEN_KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("daemon starts");
    tokio::time::sleep(RUN_FOR).await;
    assert!(
        matches!(child.try_wait(), Ok(None)),
        "the daemon keeps retrying instead of exiting"
    );
    child.start_kill().expect("daemon killed");
    let output = child.wait_with_output().await.expect("daemon output");
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    assert!(
        !text.contains("Status {"),
        "a Debug dump in the log:\n{text}"
    );
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

fn lines_with<'a>(log: &'a [Value], level: &str, message: &str) -> Vec<&'a Value> {
    log.iter()
        .filter(|line| line["level"] == level && line["msg"] == message)
        .collect()
}

#[tokio::test]
async fn a_missing_bootstrap_secret_is_one_error_that_says_not_found_and_names_the_seed() {
    let seed = seedlet_testkit::start_sandbox("seed").await;
    seedlet_testkit::ensure_namespace(&seed.client(), "garden").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let seed_kubeconfig = write(dir.path(), "seed.kubeconfig", &seed.admin_kubeconfig_yaml());
    let config = format!(
        "apiVersion: gardenlet.config.gardener.cloud/v1alpha1\nkind: GardenletConfiguration\n\
         gardenClientConnection:\n  bootstrapKubeconfig:\n    name: missing-bootstrap\n    \
         namespace: garden\n  kubeconfigSecret:\n    name: gardenlet-kubeconfig\n    \
         namespace: garden\nseedClientConnection:\n  kubeconfig: {seed_kubeconfig}\n{SEED_CONFIG}"
    );

    let log = run_agent(dir.path(), &config).await;

    let errors = lines_with(&log, "error", "obtaining garden credential failed");
    assert_eq!(errors.len(), 1, "one ERROR for four attempts: {errors:?}");
    let error = errors[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("bootstrap secret garden/missing-bootstrap not found in the seed cluster"),
        "{error}"
    );
    let server = errors[0]["seed_server"].as_str().unwrap_or_default();
    assert!(server.starts_with("https://127.0.0.1:"), "{server}");
    let repeats = lines_with(&log, "debug", "obtaining garden credential failed again");
    assert!(repeats.is_empty(), "debug is off by default: {repeats:?}");
    seed.shutdown().await;
}

#[tokio::test]
async fn a_garden_without_gardener_crds_is_one_error_that_says_what_to_install() {
    let garden = seedlet_testkit::start_sandbox("garden").await;
    let seed = seedlet_testkit::start_sandbox("seed").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let seed_kubeconfig = write(dir.path(), "seed.kubeconfig", &seed.admin_kubeconfig_yaml());
    let garden_kubeconfig = write(
        dir.path(),
        "garden.kubeconfig",
        &garden.admin_kubeconfig_yaml(),
    );
    let config = format!(
        "apiVersion: gardenlet.config.gardener.cloud/v1alpha1\nkind: GardenletConfiguration\n\
         gardenClientConnection:\n  kubeconfig: {garden_kubeconfig}\n\
         seedClientConnection:\n  kubeconfig: {seed_kubeconfig}\n{SEED_CONFIG}"
    );

    let log = run_agent(dir.path(), &config).await;

    let errors = lines_with(&log, "error", "registering seed failed");
    assert_eq!(errors.len(), 1, "one ERROR for four attempts: {errors:?}");
    let error = errors[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("(404"), "{error}");
    assert!(
        error.contains(seedlet_runtime::error::MISSING_RESOURCE_TYPE_HINT),
        "{error}"
    );
    let server = errors[0]["garden_server"].as_str().unwrap_or_default();
    assert!(server.starts_with("https://127.0.0.1:"), "{server}");
    garden.shutdown().await;
    seed.shutdown().await;
}

#[tokio::test]
async fn the_garden_controller_on_a_garden_without_crds_warns_once_with_the_hint() {
    let garden = seedlet_testkit::start_sandbox("garden").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let garden_kubeconfig = write(
        dir.path(),
        "garden.kubeconfig",
        &garden.admin_kubeconfig_yaml(),
    );
    let config = format!(
        "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenControllerConfiguration\n\
         gardenClientConnection:\n  kubeconfig: {garden_kubeconfig}\nlogFormat: json\n\
         leaderElection:\n  leaderElect: false\nserver:\n  healthProbes:\n    \
         bindAddress: 127.0.0.1\n    freePort: true\n  metrics:\n    bindAddress: 127.0.0.1\n    \
         freePort: true\n"
    );

    let log = run_daemon(
        env!("CARGO_BIN_EXE_seedlet"),
        &["garden"],
        dir.path(),
        &config,
    )
    .await;

    let warnings: Vec<&Value> = log
        .iter()
        .filter(|line| line["level"] == "warn" || line["level"] == "error")
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "~30 controllers meet the same missing CRDs: one line, not one per controller or retry: {warnings:?}"
    );
    assert_eq!(warnings[0]["msg"], "watch failed, retrying");
    let error = warnings[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(seedlet_runtime::error::MISSING_RESOURCE_TYPE_HINT),
        "{error}"
    );
    garden.shutdown().await;
}

/// A loopback port nothing listens on (bound, then released).
fn dead_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// `kubeconfig` with its server replaced by `server`.
fn with_server(kubeconfig: &str, server: &str) -> String {
    kubeconfig
        .lines()
        .map(|line| match line.split_once("server: ") {
            Some((indent, _)) => format!("{indent}server: {server}"),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_dead_garden_port_is_one_error_and_the_retries_back_off() {
    let seed = seedlet_testkit::start_sandbox("seed").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let seed_kubeconfig = write(dir.path(), "seed.kubeconfig", &seed.admin_kubeconfig_yaml());
    let dead = format!("https://127.0.0.1:{}", dead_port());
    let garden_kubeconfig = write(
        dir.path(),
        "garden.kubeconfig",
        &with_server(&seed.admin_kubeconfig_yaml(), &dead),
    );
    let config = format!(
        "apiVersion: gardenlet.config.gardener.cloud/v1alpha1\nkind: GardenletConfiguration\n\
         gardenClientConnection:\n  kubeconfig: {garden_kubeconfig}\n\
         seedClientConnection:\n  kubeconfig: {seed_kubeconfig}\n{SEED_CONFIG}"
    );

    let log = run_agent(dir.path(), &config).await;

    let errors: Vec<&Value> = log
        .iter()
        .filter(|line| line["level"] == "error" || line["level"] == "warn")
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "one ERROR for the attempts at 0, 1, 3 and 7 s: {errors:?}"
    );
    assert_eq!(errors[0]["msg"], "registering seed failed");
    let server = errors[0]["garden_server"].as_str().unwrap_or_default();
    assert!(server.starts_with(&dead), "{server}");
    assert_eq!(
        errors[0]["retry_seconds"], 1,
        "the first retry comes after 1 s, later ones after 2, 4, … 60 s"
    );
    let error = errors[0]["error"].as_str().unwrap_or_default();
    assert!(error.to_lowercase().contains("connect"), "{error}");
    seed.shutdown().await;
}
