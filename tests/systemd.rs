//! The systemd units in `systemd/`: `systemd-analyze verify` and `security --offline` on the
//! units, the example configurations, and the `seedlet` binary speaking the notification protocol
//! (READY=1 after registration, WATCHDOG=1 while heartbeats succeed, STOPPING=1 on SIGTERM) against
//! garden and seed sandboxes, exactly as systemd would start it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::{Patch, PatchParams};
use seedlet_api::core::Seed;
use seedlet_sandbox::Sandbox;
use serde_json::json;
use tokio::net::UnixDatagram;

/// The units and the binary each starts.
const UNITS: [(&str, &str); 2] = [
    ("seedlet-agent.service", "/usr/local/bin/seedlet-agent"),
    ("seedlet-garden.service", "/usr/local/bin/seedlet-garden"),
];
const SEED_NAME: &str = "my-seed";
const TOKEN_ID: &str = "abc123";
const TOKEN_SECRET: &str = "0123456789abcdef";

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(repo_path(relative)).expect("repository file")
}

/// `systemd-analyze`, or `None` (with the reason printed) when this machine has none.
fn systemd_analyze() -> Option<PathBuf> {
    let found = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.exists());
    if found.is_none() {
        println!("skipped: systemd-analyze is not installed on this machine");
    }
    found
}

/// Copies the units into a temporary directory with `ExecStart=` pointing at the built binary.
fn units_for_built_binary() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    for (unit, installed) in UNITS {
        let text = read(&format!("systemd/{unit}"));
        assert!(
            text.contains(&format!("ExecStart={installed} ")),
            "{unit} starts {installed}"
        );
        let built = if installed.ends_with("seedlet-agent") {
            env!("CARGO_BIN_EXE_seedlet-agent")
        } else {
            env!("CARGO_BIN_EXE_seedlet-garden")
        };
        let text = text.replace(installed, built);
        std::fs::write(dir.path().join(unit), text).expect("write unit");
    }
    dir
}

/// `Key=Value` lines of the `[Service]` section; repeated keys keep every value.
fn service_settings(unit: &str) -> BTreeMap<String, Vec<String>> {
    let mut settings: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut in_service = false;
    for line in read(&format!("systemd/{unit}")).lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_service = line == "[Service]";
            continue;
        }
        if !in_service || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once('=').expect("Key=Value");
        settings
            .entry(key.to_owned())
            .or_default()
            .push(value.to_owned());
    }
    settings
}

#[test]
fn units_are_hardened_notify_services() {
    for (unit, _) in UNITS {
        let settings = service_settings(unit);
        let one = |key: &str| {
            settings
                .get(key)
                .and_then(|values| values.last())
                .map(String::as_str)
                .unwrap_or_else(|| panic!("{unit}: {key}= missing"))
        };
        assert_eq!(one("Type"), "notify", "{unit}");
        assert_eq!(one("Restart"), "on-failure", "{unit}");
        assert_eq!(one("DynamicUser"), "yes", "{unit}");
        assert_eq!(one("StateDirectory"), "seedlet", "{unit}");
        assert_eq!(one("ConfigurationDirectory"), "seedlet", "{unit}");
        assert_eq!(one("CapabilityBoundingSet"), "", "{unit}");
        assert_eq!(
            one("RestrictAddressFamilies"),
            "AF_INET AF_INET6 AF_UNIX",
            "{unit}"
        );
        assert_eq!(one("ProtectSystem"), "strict", "{unit}");
        assert_eq!(one("StandardError"), "journal", "{unit}");
        for key in [
            "NoNewPrivileges",
            "ProtectHome",
            "PrivateTmp",
            "PrivateDevices",
            "ProtectKernelTunables",
            "ProtectKernelModules",
            "ProtectKernelLogs",
            "LockPersonality",
            "MemoryDenyWriteExecute",
        ] {
            assert_eq!(one(key), "yes", "{unit}: {key}");
        }
        assert!(
            settings["SystemCallFilter"].contains(&"@system-service".to_owned()),
            "{unit}"
        );
        let environment_file = one("EnvironmentFile");
        assert!(
            environment_file.starts_with("-/etc/seedlet/"),
            "{unit}: optional environment file, got {environment_file}"
        );
    }
    let agent = service_settings("seedlet-agent.service");
    assert_eq!(agent["EnvironmentFile"], ["-/etc/seedlet/agent.env"]);
    assert_eq!(agent["WatchdogSec"], ["60s"]);
}

#[test]
fn units_pass_systemd_analyze_verify() {
    let Some(analyze) = systemd_analyze() else {
        return;
    };
    let dir = units_for_built_binary();
    let output = Command::new(&analyze)
        .arg("verify")
        .arg("--man=no")
        .args(UNITS.map(|(unit, _)| dir.path().join(unit)))
        .output()
        .expect("run systemd-analyze verify");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "verify failed:\n{stderr}");
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("seedlet"))
        .collect();
    assert!(complaints.is_empty(), "verify complains:\n{stderr}");
}

#[test]
fn units_have_low_offline_security_exposure() {
    let Some(analyze) = systemd_analyze() else {
        return;
    };
    let dir = units_for_built_binary();
    for (unit, _) in UNITS {
        let path = dir.path().join(unit);
        let output = Command::new(&analyze)
            .args(["security", "--offline=true", "--no-pager"])
            .arg(&path)
            .output()
            .expect("run systemd-analyze security");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("--offline") || stderr.contains("unrecognized option") {
            println!("skipped: this systemd-analyze has no --offline: {stderr}");
            return;
        }
        let summary = stdout
            .lines()
            .find(|line| line.contains("Overall exposure level"))
            .unwrap_or_else(|| panic!("no exposure summary for {unit}:\n{stdout}\n{stderr}"));
        println!("{summary}");
        // "…: 1.2 OK 🙂": the number after the last colon.
        let score: f64 = summary
            .rsplit(':')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|number| number.parse().ok())
            .unwrap_or_else(|| panic!("unparsable summary {summary:?}"));
        assert!(
            score <= 2.0,
            "{unit}: exposure {score} above 2.0:\n{stdout}"
        );
    }
}

#[test]
fn example_configurations_are_valid() {
    for (file, kind) in [
        ("systemd/agent.yaml", "GardenletConfiguration"),
        ("systemd/garden.yaml", "GardenControllerConfiguration"),
    ] {
        let config = seedlet_config::load(repo_path(file))
            .unwrap_or_else(|error| panic!("{file}: {error:?}"));
        assert_eq!(config.kind(), kind, "{file}");
    }
}

/// A `seedlet` process, killed when the test ends early.
struct Process {
    child: Child,
    name: &'static str,
    log: PathBuf,
}

impl Process {
    /// Starts the built binary the unit runs: `seedlet-agent` for the agent, `seedlet-garden` for
    /// the garden controller.
    fn spawn(name: &'static str, args: &[&str], env: &[(&str, &str)], dir: &Path) -> Process {
        let log = dir.join(format!("{name}.log"));
        let stderr = std::fs::File::create(&log).expect("log file");
        let binary = if name == "seedlet-agent" {
            env!("CARGO_BIN_EXE_seedlet-agent")
        } else {
            env!("CARGO_BIN_EXE_seedlet-garden")
        };
        let child = Command::new(binary)
            .args(args)
            .env_remove("NOTIFY_SOCKET")
            .env_remove("WATCHDOG_USEC")
            .env_remove("WATCHDOG_PID")
            .env_remove("RUST_LOG")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("start seedlet");
        Process { child, name, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends SIGTERM, as `systemctl stop` does.
    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM {}", self.name);
    }

    async fn wait_for_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for seedlet") {
                return status;
            }
            assert!(
                started.elapsed() < timeout,
                "{} did not exit within {timeout:?}:\n{}",
                self.name,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A notification socket like systemd's, as an abstract name (`@…`) or a socket file.
struct NotifySocket {
    socket: UnixDatagram,
    address: String,
}

impl NotifySocket {
    fn abstract_socket(tag: &str) -> NotifySocket {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("seedlet-test-{}-{tag}", std::process::id());
        let address =
            std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).expect("name");
        let socket = std::os::unix::net::UnixDatagram::bind_addr(&address).expect("bind");
        socket.set_nonblocking(true).expect("nonblocking");
        NotifySocket {
            socket: UnixDatagram::from_std(socket).expect("tokio socket"),
            address: format!("@{name}"),
        }
    }

    fn file_socket(dir: &Path) -> NotifySocket {
        let path = dir.join("notify.sock");
        let socket = std::os::unix::net::UnixDatagram::bind(&path).expect("bind");
        socket.set_nonblocking(true).expect("nonblocking");
        NotifySocket {
            socket: UnixDatagram::from_std(socket).expect("tokio socket"),
            address: path.display().to_string(),
        }
    }

    /// The next datagram, or `None` after `timeout`.
    async fn next(&self, timeout: Duration) -> Option<String> {
        let mut buffer = vec![0u8; 4096];
        let length = tokio::time::timeout(timeout, self.socket.recv(&mut buffer))
            .await
            .ok()?
            .expect("receive notification");
        Some(String::from_utf8_lossy(&buffer[..length]).into_owned())
    }

    /// Waits for a message containing the assignment `line`, returning it and every earlier one.
    async fn wait_for(&self, line: &str, timeout: Duration, process: &Process) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.next(left).await else {
                panic!(
                    "no {line} from {} within {timeout:?}; got {seen:?}\n{}",
                    process.name,
                    process.log()
                );
            };
            let found = message.lines().any(|l| l == line);
            seen.push(message);
            if found {
                return seen;
            }
        }
    }
}

/// What an operator prepares in the garden before a seed joins (docs/real-landscape.md "Running on a real
/// landscape"): namespaces, a bootstrap token, and the seeds' RBAC a garden's control plane
/// provides (Gardener's SeedAuthorizer stands in for it on a real garden).
async fn prepare_garden(garden: &kube::Client) {
    let params = PatchParams::apply("seedlet-test");
    let apply = |api_version: &str, kind: &str, plural: &str, namespace: Option<&str>, body| {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let resource = kube::api::ApiResource {
            group: group.to_owned(),
            version: version.to_owned(),
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
        };
        let api: Api<kube::api::DynamicObject> = match namespace {
            Some(namespace) => Api::namespaced_with(garden.clone(), namespace, &resource),
            None => Api::all_with(garden.clone(), &resource),
        };
        let params = params.clone();
        let kind = kind.to_owned();
        async move {
            let body: serde_json::Value = body;
            let name = body["metadata"]["name"].as_str().expect("name").to_owned();
            api.patch(&name, &params, &Patch::Apply(&body))
                .await
                .unwrap_or_else(|error| panic!("apply {kind} {name}: {error}"));
        }
    };
    for namespace in ["garden", "gardener-system-seed-lease", "seed-my-seed"] {
        apply(
            "v1",
            "Namespace",
            "namespaces",
            None,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        )
        .await;
    }
    apply(
        "v1",
        "Secret",
        "secrets",
        Some("kube-system"),
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": format!("bootstrap-token-{TOKEN_ID}"), "namespace": "kube-system"},
            "type": "bootstrap.kubernetes.io/token",
            "stringData": {
                "token-id": TOKEN_ID, "token-secret": TOKEN_SECRET,
                "usage-bootstrap-authentication": "true",
            },
        }),
    )
    .await;
}

/// The address in the garden controller's `serving webhooks` log line (JSON or text format).
fn webhook_address(log: &str) -> std::net::SocketAddr {
    let line = log
        .lines()
        .find(|line| line.contains("serving webhooks"))
        .unwrap_or_else(|| panic!("no 'serving webhooks' line in:\n{log}"));
    let start = line
        .find("127.0.0.1:")
        .expect("loopback address in the line");
    let address: String = line[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':')
        .collect();
    address.parse().expect("socket address")
}

/// A bootstrap-token kubeconfig for the garden, its CA in the file `ca_file`.
fn bootstrap_kubeconfig(garden: &Sandbox, ca_file: &str) -> String {
    let server = garden.endpoint();
    format!(
        "apiVersion: v1
kind: Config
current-context: bootstrap
clusters:
- name: garden
  cluster:
    server: {server}
    certificate-authority: {ca_file}
contexts:
- name: bootstrap
  context:
    cluster: garden
    user: bootstrap
users:
- name: bootstrap
  user:
    token: {TOKEN_ID}.{TOKEN_SECRET}
"
    )
}

/// `text` with `from` replaced by `to`, which must occur.
fn substitute(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "example config contains {from:?}");
    text.replace(from, to)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binaries_notify_ready_watchdog_and_stopping_like_under_systemd() {
    let garden = seedlet_testkit::start_sandbox("garden").await;
    let seed = seedlet_testkit::start_sandbox("seed").await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write file");
        path.display().to_string()
    };
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(garden.client());
    for crd in seedlet_api::crds::garden_crds() {
        let name = crd.metadata.name.clone().expect("crd name");
        crds.patch(
            &name,
            &PatchParams::apply("seedlet-test"),
            &Patch::Apply(&crd),
        )
        .await
        .expect("install garden crd");
    }
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(seed.client());
    for crd in seedlet_api::crds::seed_crds() {
        let name = crd.metadata.name.clone().expect("crd name");
        crds.patch(
            &name,
            &PatchParams::apply("seedlet-test"),
            &Patch::Apply(&crd),
        )
        .await
        .expect("install seed crd");
    }
    prepare_garden(&garden.client()).await;
    let seed_namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(seed.client());
    seed_namespaces
        .patch(
            "garden",
            &PatchParams::apply("seedlet-test"),
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden"}}),
            ),
        )
        .await
        .expect("garden namespace in the seed");

    // The garden controller from the example configuration, started like seedlet-garden.service.
    let garden_kubeconfig = write("garden.kubeconfig", &garden.admin_kubeconfig_yaml());
    let garden_config = read("systemd/garden.yaml");
    let garden_config = substitute(&garden_config, "port: 2718", "freePort: true");
    let garden_config = substitute(
        &garden_config,
        "port: 2719",
        // Loopback only in tests (the example listens on every interface).
        "bindAddress: 127.0.0.1\n    freePort: true",
    );
    // The webhooks' certificate, as the unit's credentials would hand it over.
    let (chain, key) = garden
        .issue_serving_certificate("seedlet-garden-webhooks", &["127.0.0.1"])
        .expect("serving certificate");
    let credentials = dir.path().join("credentials");
    std::fs::create_dir(&credentials).expect("credentials dir");
    std::fs::write(credentials.join("tls.crt"), chain).expect("tls.crt");
    std::fs::write(credentials.join("tls.key"), key).expect("tls.key");
    let garden_config = substitute(
        &garden_config,
        "/run/credentials/seedlet-garden.service",
        &credentials.display().to_string(),
    );
    let garden_config = substitute(
        &garden_config,
        "port: 2721",
        "bindAddress: 127.0.0.1\n    freePort: true",
    );
    let garden_config = write("garden.yaml", &garden_config);
    let garden_socket = NotifySocket::file_socket(dir.path());
    let mut garden_process = Process::spawn(
        "seedlet-garden",
        &["--config", &garden_config],
        &[
            ("KUBECONFIG", &garden_kubeconfig),
            ("NOTIFY_SOCKET", &garden_socket.address),
        ],
        dir.path(),
    );
    let messages = garden_socket
        .wait_for("READY=1", Duration::from_secs(30), &garden_process)
        .await;
    assert!(
        messages
            .last()
            .is_some_and(|m| m.contains("STATUS=controllers started")),
        "{messages:?}"
    );

    // The garden's kube-apiserver asks the seed authorizer and SeedRestriction (seeds hold no
    // other role), as systemd/README.md describes.
    let webhooks = webhook_address(&garden_process.log());
    seedlet_landscape::webhooks::enable_in(&garden, dir.path(), webhooks)
        .await
        .expect("garden calls the webhooks");

    // The agent from the example configuration, started like seedlet-agent.service with a
    // 2 s watchdog (keepalive every second) and a 1 s heartbeat.
    let seed_kubeconfig = write("seed.kubeconfig", &seed.admin_kubeconfig_yaml());
    let garden_ca = write("garden-ca.crt", &garden.ca_cert_pem());
    let bootstrap = write(
        "bootstrap.kubeconfig",
        &bootstrap_kubeconfig(&garden, &garden_ca),
    );
    let agent_config = read("systemd/agent.yaml");
    let agent_config = substitute(
        &agent_config,
        "/run/credentials/seedlet-agent.service/bootstrap-kubeconfig",
        &bootstrap,
    );
    let agent_config = substitute(&agent_config, "port: 2728", "freePort: true");
    let agent_config = substitute(
        &agent_config,
        "port: 2729",
        // Loopback only in tests (the example listens on every interface).
        "bindAddress: 127.0.0.1\n    freePort: true",
    );
    let agent_config = substitute(
        &agent_config,
        "leaseResyncSeconds: 2",
        "leaseResyncSeconds: 1",
    );
    let agent_config = write("agent.yaml", &agent_config);
    let agent_socket = NotifySocket::abstract_socket("agent");
    let started = Instant::now();
    let mut agent = Process::spawn(
        "seedlet-agent",
        &["--config", &agent_config],
        &[
            ("KUBECONFIG", &seed_kubeconfig),
            ("NOTIFY_SOCKET", &agent_socket.address),
            ("WATCHDOG_USEC", "2000000"),
        ],
        dir.path(),
    );
    let messages = agent_socket
        .wait_for("READY=1", Duration::from_secs(60), &agent)
        .await;
    println!("agent READY=1 after {:?}", started.elapsed());
    assert!(
        messages.iter().all(|m| !m.contains("WATCHDOG=1")),
        "no keepalive before start-up finished: {messages:?}"
    );
    assert!(
        messages
            .last()
            .is_some_and(|m| m.contains("STATUS=seed my-seed registered")),
        "{messages:?}"
    );
    // READY=1 means bootstrapped and registered: the Seed exists and the credential is stored.
    let seeds: Api<Seed> = Api::all(garden.client());
    assert!(
        seeds.get_opt(SEED_NAME).await.expect("read seed").is_some(),
        "Seed registered before READY=1"
    );
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(seed.client(), "garden");
    assert!(
        secrets
            .get_opt("gardenlet-kubeconfig")
            .await
            .expect("read secret")
            .is_some(),
        "certificate kubeconfig stored before READY=1"
    );

    // Keepalives follow the successful heartbeats (every beat here: 1 s period, 1 s interval).
    let mut keepalives = Vec::new();
    let window = Instant::now();
    while keepalives.len() < 3 {
        let message = agent_socket
            .next(Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("keepalive missing after {keepalives:?}:\n{}", agent.log()));
        assert_eq!(message, "WATCHDOG=1\n");
        keepalives.push(window.elapsed());
    }
    println!("keepalives at {keepalives:?}");
    let leases: Api<Lease> = Api::namespaced(garden.client(), "gardener-system-seed-lease");
    assert!(
        leases
            .get_opt(SEED_NAME)
            .await
            .expect("read lease")
            .is_some(),
        "keepalives come from renewed leases"
    );

    // SIGTERM: STOPPING=1, then a clean exit.
    agent.terminate();
    agent_socket
        .wait_for("STOPPING=1", Duration::from_secs(15), &agent)
        .await;
    let status = agent.wait_for_exit(Duration::from_secs(15)).await;
    assert!(status.success(), "agent exit {status:?}:\n{}", agent.log());

    garden_process.terminate();
    garden_socket
        .wait_for("STOPPING=1", Duration::from_secs(15), &garden_process)
        .await;
    let status = garden_process.wait_for_exit(Duration::from_secs(15)).await;
    assert!(
        status.success(),
        "garden controller exit {status:?}:\n{}",
        garden_process.log()
    );
    garden.shutdown().await;
    seed.shutdown().await;
}
