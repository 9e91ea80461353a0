//! `seedlet sandbox --once` end to end: the README's first command, run as the built binary, must
//! bring garden, seed, garden controller and agent to Ready through the bootstrap-token path, then
//! install the example extension until the Seed reports `ExtensionsReady`, follow the Seed's
//! BackupBucket to Succeeded, and follow the example Shoot to its Cluster, control-plane
//! namespace, ShootState and BackupEntry.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn sandbox_once_reaches_ready_installs_the_example_extension_and_syncs_the_example_shoot() {
    let dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["sandbox", "--once", "--dir"])
        .arg(dir.path())
        .env_remove("COLUMNS")
        .output()
        .expect("seedlet runs");
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Lines are wrapped to 80 columns; compare with runs of whitespace collapsed.
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        output.status.success(),
        "seedlet sandbox --once failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for expected in [
        // The agent starts only once bootstrap tokens may create CSRs (no 5 s startup retry).
        "garden controller lets bootstrap tokens request certificates",
        "CSR approved, certificate kubeconfig stored",
        "approved (AutoApproved)",
        "Seed registered in the garden",
        "GardenletReady True",
        "landscape Ready in",
        "export KUBECONFIG=",
        // The example extension: scheduled by the garden controller, applied by the agent,
        // reported healthy in the garden.
        "register the example extension",
        "garden controller schedules a ControllerInstallation for the Seed",
        "3 objects in extension-example-",
        "Installed and Healthy",
        "Seed condition ExtensionsReady True",
        "condition ExtensionsReady True AllExtensionsReady",
        "condition Healthy True ControllerHealthy",
        "-n extension-example-",
        // Readiness waits for the certificate expiry, so the summary always has it.
        "Seed status: client certificate expiry reported",
        "client certificate expires ",
        // The example Project, reconciled by the garden controller (not by the demo).
        "create example Project demo",
        "garden controller reconciles Project demo: namespace garden-demo, RBAC, phase",
        "namespace garden-demo (project.gardener.cloud/name=demo), RBAC, phase Ready",
        // The example Shoot: Cluster and namespace in the seed, ShootState in the garden.
        "create example Shoot garden-demo/hello",
        "garden controller sets the Shoot's status label",
        "agent writes Cluster shoot--demo--hello in the seed",
        "embeds Shoot garden-demo/hello, Seed local, CloudProfile local",
        "agent creates control-plane namespace shoot--demo--hello",
        "Infrastructure shoot--demo--hello/hello with .status.state",
        "agent syncs ShootState garden-demo/hello in the garden",
        "Cluster shoot--demo--hello (seed) present, embeds Shoot hello",
        "control-plane namespace shoot--demo--hello (seed) present",
        // Every extension object of the demo shoot keeps the simulated provider's state; how many
        // exist when the summary is printed depends on how far the shoot's flow got.
        "ShootState hello (garden) present, ",
        "Infrastructure/hello",
        // What the garden controller keeps on the Shoot: status label and hibernation schedule.
        "hibernation: 0 20 * * 1-5 to 0 8 * * 1-5 (Europe/Berlin)",
        "next: ",
        // The extension stays Ready with the Shoot's needs covered, and is now Required.
        "condition Required True ExtensionObjectsExist",
        "-n garden-demo get shoots,shootstates",
        "kubectl --context seed get cluster shoot--demo--hello",
        // Where the components' health and metrics servers listen, and where they log.
        "start agent",
        "/healthz, metrics http://127.0.0.1:",
        "agent.log",
        "garden.log",
        // The sandbox's limits are stated.
        "no scheduler: a new Shoot needs spec.seedName",
    ] {
        assert!(
            flat.contains(expected),
            "missing {expected:?} in output:\n{stdout}"
        );
    }
    // The status label follows the Shoot's conditions: healthy until shoot care has written them,
    // then `unknown`, since care reports the checks that need the shoot's own API server as
    // Unknown (seedlet has no client for it). Never `unhealthy` or `progressing` for the demo.
    let labels: Vec<&str> = flat
        .split("shoot.gardener.cloud/status=")
        .skip(1)
        .map(|rest| {
            rest.split(|c: char| !c.is_ascii_alphabetic())
                .next()
                .unwrap_or_default()
        })
        .collect();
    assert!(
        labels.len() >= 2,
        "status label in the step and the summary:\n{stdout}"
    );
    assert!(
        labels
            .iter()
            .all(|label| ["healthy", "unknown"].contains(label)),
        "{labels:?}:\n{stdout}"
    );
    let conditions: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("  condition "))
        .map(|rest| rest.split_whitespace().next().unwrap_or_default())
        .collect();
    // SeedSystemComponentsHealthy comes from a periodic check and may or may not be there yet
    // when the summary is printed; the demo waits for BackupBucketsReady.
    let known = [
        "BackupBucketsReady",
        "ExtensionsReady",
        "GardenletReady",
        "SeedSystemComponentsHealthy",
    ];
    assert!(
        conditions.is_sorted()
            && conditions.iter().all(|c| known.contains(c))
            && conditions.contains(&"BackupBucketsReady")
            && conditions.contains(&"ExtensionsReady")
            && conditions.contains(&"GardenletReady"),
        "Seed conditions sorted by type: {conditions:?}"
    );
    for line in stdout.lines() {
        assert!(
            line.chars().count() <= 80,
            "a line wider than 80 columns: {line:?}"
        );
    }
    assert!(
        dir.path().join("garden.kubeconfig").exists()
            && dir.path().join("seed.kubeconfig").exists(),
        "kubeconfigs are written to the state directory"
    );
    #[cfg(unix)]
    for name in ["garden.kubeconfig", "seed.kubeconfig", "kubeconfig"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(name))
            .expect("written")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{name} holds a private key and must be 0600");
    }
    assert!(
        !stdout.contains("not reported yet") && !stdout.contains("missing"),
        "the summary reports everything:\n{stdout}"
    );
    assert!(
        !stdout.contains('\r'),
        "no spinner redraws when stdout is not a terminal:\n{stdout}"
    );
    assert_backups(&stdout, &flat, dir.path());
    assert_bastion(&stdout, &flat);
    // The example extension is registered before the seed joins, so the garden's scheduler never
    // misses its registration. (A just-created object can be refused for a moment while the seed
    // authorizer's watches catch up, spec §5 (c), so a transient Forbidden is not checked here.)
    let garden_log = std::fs::read_to_string(dir.path().join("garden.log")).expect("garden log");
    assert!(
        !garden_log.contains("need to install an extension controller"),
        "the scheduler missed the example registration:\n{garden_log}"
    );
    let lease_age = stdout
        .lines()
        .find_map(|line| {
            line.trim()
                .strip_prefix("lease gardener-system-seed-lease/local renewed ")
        })
        .expect("the summary reports the Lease age");
    assert!(lease_age.ends_with(" ago"), "{lease_age}");
    let ready = stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("landscape Ready in "))
        .expect("the time to Ready is printed");
    println!("seedlet sandbox --once took {took:?}, landscape Ready in {ready}");
    assert!(took < Duration::from_secs(60), "landscape took {took:?}");

    // `--dir` resumes: same addresses, the agent keeps its certificate, no new bootstrap.
    let resumed = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["sandbox", "--once", "--dir"])
        .arg(dir.path())
        .output()
        .expect("run seedlet sandbox again");
    let resumed_stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        resumed.status.success(),
        "resuming failed\nstdout:\n{resumed_stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let resumed_flat = resumed_stdout
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for expected in [
        "resuming the landscape kept there",
        "objects of the previous run kept",
        "certificate kubeconfig of the previous run kept: certificate issued ",
    ] {
        assert!(
            resumed_flat.contains(expected),
            "{expected:?} in {resumed_stdout}"
        );
    }
}

/// The summary reports the bucket and the entry, the example extension made them directories
/// below the credentials' hostPath (`dir/backupbuckets`), and its installation serves them.
/// The demo's Bastion: the Shoot's technical ID set as the shoot flow would, a Bastion created,
/// deployed by the agent, reported by the example extension's stand-in and BastionReady with the
/// ingress address the agent copied from the extension Bastion.
fn assert_bastion(stdout: &str, flat: &str) {
    for expected in [
        "set the Shoot's status.technicalID shoot--demo--hello (the shoot flow's part)",
        "create Bastion garden-demo/hello-bastion for Shoot hello",
        "ingress 127.0.0.1/32",
        "agent deploys it, the example extension reports it, Bastion hello-bastion BastionReady",
        "ingress 127.0.0.1",
    ] {
        assert!(
            flat.contains(expected),
            "missing {expected:?} in output:\n{stdout}"
        );
    }
}

fn assert_backups(stdout: &str, flat: &str, dir: &std::path::Path) {
    for expected in [
        // Backups: the Seed's spec.backup gives a BackupBucket named after the Seed's UID, the
        // example extension (its backup controller played by the demo) reconciles it, the agent
        // reports it in the garden, and the garden's check turns BackupBucketsReady True.
        "example extension's backup, bastion and shoot controllers start",
        "BackupBucket/local, BackupEntry/local, Bastion/local, shoot extension kinds of provider local",
        "agent creates BackupBucket",
        "for the Seed's spec.backup",
        "provider local/local, credentials garden/backup-local",
        "example extension reconciles extension BackupBucket",
        "reconciled by the example extension: a directory below its hostPath.",
        "generated Secret garden/generated-bucket-",
        "Seed condition BackupBucketsReady True",
        "condition BackupBucketsReady True BackupBucketsAvailable",
        // The example Shoot's BackupEntry, created as the shoot flow would.
        "create the Shoot's BackupEntry in garden-demo (the shoot flow's part)",
        "example extension reconciles the extension BackupEntry in the seed",
        "agent reports the BackupEntry Succeeded in the garden",
        "Backups:",
        // The agent's Shoot controller over the extension objects the demo's provider answers.
        "agent reconciles Shoot hello: Create 0 % → Succeeded 100 %",
        "→ Succeeded 100 %",
        // Hibernation and wake-up of the example Shoot; a second Shoot deleted by the delete flow.
        "agent hibernates Shoot hello and wakes it up",
        "hibernated true (Reconcile Succeeded 100 %) → hibernated false (Reconcile Succeeded 100 %)",
        "Shoot bye: created, reconciled, deleted by the delete flow",
        "Create Succeeded 100 %; deleted: Delete Processing",
        "→ gone",
        // The network policy controller's work, waited for in the shoot's namespace.
        "agent writes the network policies of shoot--demo--hello",
        "Network policies (seed): ",
        "shoot--demo--hello 6",
        "kubectl --context garden get backupbuckets,backupentries -A",
    ] {
        assert!(
            flat.contains(expected),
            "missing {expected:?} in output:\n{stdout}"
        );
    }
    // The progress steps waited for Succeeded; the Seed controller's per-sync bucket patch may
    // have started a `Reconcile` since (which reports Processing until it is done).
    let reported = |prefix: &str| {
        [
            "Create Succeeded",
            "Reconcile Succeeded",
            "Reconcile Processing",
        ]
        .iter()
        .find_map(|state| name_between(flat, prefix, &format!(" (garden): {state}")))
        .unwrap_or_else(|| panic!("the summary reports {prefix}…:\n{stdout}"))
    };
    let bucket = reported("BackupBucket ");
    let entry = reported("BackupEntry garden-demo/");
    assert!(entry.starts_with("shoot--demo--hello--"), "{entry}");
    let entry_dir = dir.join("backupbuckets").join(bucket).join(entry);
    assert!(entry_dir.is_dir(), "{} is a directory", entry_dir.display());
    // The example installation serves the backup kinds: their extension objects keep it Required.
    assert!(
        flat.contains(
            "extension objects still exist in the seed: [BackupBucket/local BackupEntry/local"
        ),
        "{stdout}"
    );
}

/// The name (no spaces) right before an occurrence of `after` that follows `before`.
fn name_between<'a>(text: &'a str, before: &str, after: &str) -> Option<&'a str> {
    text.match_indices(after).find_map(|(end, _)| {
        let (_, name) = text[..end].rsplit_once(before)?;
        (!name.is_empty() && !name.contains(' ')).then_some(name)
    })
}

/// Reads `child`'s stdout on a thread, line by line, into a channel (also used by `crd_schemas`).
pub(crate) fn stdout_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().expect("stdout is piped");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// Collects lines until one contains `marker`; panics with what was seen after `timeout`.
fn wait_for_line(lines: &mpsc::Receiver<String>, marker: &str, timeout: Duration) -> Vec<String> {
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => {
                let found = line.contains(marker);
                seen.push(line);
                if found {
                    return seen;
                }
            }
            Err(_) => break,
        }
    }
    panic!(
        "no line with {marker:?} within {timeout:?}:\n{}",
        seen.join("\n")
    );
}

/// Annotates the agent's certificate kubeconfig Secret with `gardener.cloud/operation=renew`,
/// through the `seed` context of the landscape's kubeconfig.
fn renew_certificate(kubeconfig: &std::path::Path) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
        let options = kube::config::KubeConfigOptions {
            context: Some("seed".to_owned()),
            ..Default::default()
        };
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .expect("seed context");
        let client = kube::Client::try_from(config).expect("client");
        let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
            kube::Api::namespaced(client, "garden");
        let patch = serde_json::json!({
            "metadata": {"annotations": {"gardener.cloud/operation": "renew"}}
        });
        secrets
            .patch(
                "gardenlet-kubeconfig",
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&patch),
            )
            .await
            .expect("annotated");
    });
}

/// Waits up to `timeout` for `child` to exit.
fn wait_with_timeout(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("child state") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

fn interrupt(child: &Child) {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

/// The temporary state directory, a second landscape on it, the kubeconfig's contexts, the
/// components' JSON logs, and Ctrl-C with a closed stderr (`seedlet sandbox 2>&1 | tee log`
/// after `tee` died): the process must still stop cleanly and remove its temporary directory.
#[cfg(unix)]
#[test]
fn sandbox_stops_on_ctrl_c_with_stderr_closed_and_removes_its_temporary_directory() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["sandbox", "--log-format", "json"])
        .env("TMPDIR", tmp.path())
        // Debug output on stderr from every crate that does not log to a component file, so
        // that writes to the closed stderr keep happening.
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("seedlet sandbox starts");
    drop(child.stderr.take());
    let lines = stdout_lines(&mut child);
    let seen = wait_for_line(&lines, "running; press Ctrl-C", Duration::from_secs(60));
    let state = seen
        .iter()
        .find_map(|line| line.trim().strip_prefix("state directory: "))
        .map(std::path::PathBuf::from)
        .expect("the state directory is printed");
    assert!(state.starts_with(tmp.path()), "{}", state.display());
    assert!(
        seen.iter()
            .any(|line| line.contains("temporary: removed on exit")),
        "{seen:?}"
    );

    // A second landscape on the same directory names the process that holds it.
    let second = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["sandbox", "--once", "--dir"])
        .arg(&state)
        .output()
        .expect("second seedlet runs");
    assert!(!second.status.success());
    let complaint = String::from_utf8_lossy(&second.stderr);
    assert_eq!(
        complaint,
        format!(
            "error: state directory {} is in use by process {}\n",
            state.display(),
            child.id()
        )
    );

    // One kubeconfig, two contexts with their own users.
    if Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok()
    {
        for (context, resource) in [("garden", "seeds"), ("seed", "clusters")] {
            let listed = Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(state.join("kubeconfig"))
                .args(["--context", context, "get", resource, "-o", "name"])
                .output()
                .expect("kubectl runs");
            assert!(
                listed.status.success(),
                "kubectl --context {context}: {}",
                String::from_utf8_lossy(&listed.stderr)
            );
        }
    }

    // A renewal while it runs gets a line of its own.
    renew_certificate(&state.join("kubeconfig"));
    wait_for_line(
        &lines,
        "agent renewed its client certificate: issued ",
        Duration::from_secs(30),
    );

    // Component logs: flat JSON lines in Gardener's shape, each naming its component.
    for component in ["agent", "garden"] {
        let log =
            std::fs::read_to_string(state.join(format!("{component}.log"))).expect("component log");
        let first = log.lines().next().expect("the component logged");
        let line: serde_json::Value = serde_json::from_str(first).expect("a JSON line");
        let keys: Vec<&str> = line
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .take(4)
            .collect();
        assert_eq!(keys, ["level", "ts", "logger", "msg"], "{first}");
        for line in log.lines() {
            let line: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let logger = line["logger"].as_str().unwrap_or_default();
            assert!(
                logger == component || logger.starts_with(&format!("{component}.")),
                "{component}.log has {line}"
            );
        }
    }

    interrupt(&child);
    let status = wait_with_timeout(&mut child, Duration::from_secs(30));
    if status.is_none() {
        let _ = child.kill();
    }
    let status = status.expect("seedlet stopped within 30 s of Ctrl-C");
    assert!(status.success(), "{status:?}");
    let rest: Vec<String> = lines.try_iter().collect();
    assert!(
        rest.iter().any(|line| line.contains("stopping")),
        "{rest:?}"
    );
    assert!(
        !state.exists(),
        "the temporary state directory {} is removed",
        state.display()
    );
}

/// `seedlet sandbox serve` says where it serves, where the kubeconfig is and `ready`, serves
/// kubectl with that kubeconfig, and stops on Ctrl-C.
#[cfg(unix)]
#[test]
fn sandbox_serve_prints_its_address_kubeconfig_and_ready() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["sandbox", "serve", "--name", "lab", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("seedlet sandbox serve starts");
    let lines = stdout_lines(&mut child);
    let seen = wait_for_line(&lines, "ready", Duration::from_secs(30));
    let kubeconfig = dir.path().join("admin.kubeconfig");
    assert!(
        seen[0].starts_with("sandbox API server lab serving at https://127.0.0.1:"),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|line| line.trim() == format!("kubeconfig: {}", kubeconfig.display())),
        "{seen:?}"
    );
    assert_eq!(seen.last().map(String::as_str), Some("ready"));
    let parsed: serde_json::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&kubeconfig).expect("kubeconfig written"))
            .expect("kubeconfig is YAML");
    assert_eq!(parsed["current-context"], "lab");
    assert_eq!(parsed["users"][0]["name"], "lab-admin");
    interrupt(&child);
    let status = wait_with_timeout(&mut child, Duration::from_secs(30));
    if status.is_none() {
        let _ = child.kill();
    }
    assert!(status.expect("stopped within 30 s").success());
}

/// `seedlet sandbox --once` without `--dir` leaves no temporary state directory behind.
#[test]
fn sandbox_once_removes_its_temporary_directory() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["sandbox", "--once"])
        .env("TMPDIR", tmp.path())
        .output()
        .expect("seedlet runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("temporary: removed on exit"),
        "where state lives is said:\n{stdout}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("temp dir readable")
        .map(|entry| entry.expect("entry").path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
