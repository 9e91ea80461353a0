//! `seedlet sandbox --once` end to end: the README's first command, run as the built binary, must
//! bring garden, seed, garden controller and agent to Ready through the bootstrap-token path, then
//! install the example extension until the Seed reports `ExtensionsReady`, and follow the example
//! Shoot to its Cluster, control-plane namespace and ShootState.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn sandbox_once_reaches_ready_installs_the_example_extension_and_syncs_the_example_shoot() {
    let dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["sandbox", "--once", "--dir"])
        .arg(dir.path())
        .output()
        .expect("seedlet runs");
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
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
        "condition ExtensionsReady        True AllExtensionsReady",
        "condition Healthy              True ControllerHealthy",
        "-n extension-example-",
        // Readiness waits for the certificate expiry, so the summary always has it.
        "Seed status: client certificate expiry reported",
        "client certificate expires ",
        // The example Shoot: Cluster and namespace in the seed, ShootState in the garden.
        "create example Shoot garden-demo/hello",
        "agent writes Cluster shoot--demo--hello in the seed",
        "embeds Shoot garden-demo/hello, Seed local, CloudProfile local",
        "agent creates control-plane namespace shoot--demo--hello",
        "Infrastructure shoot--demo--hello/hello with .status.state",
        "agent syncs ShootState garden-demo/hello in the garden",
        "Cluster shoot--demo--hello (seed) present, embeds Shoot hello",
        "control-plane namespace shoot--demo--hello (seed) present",
        "ShootState hello (garden) present, 1 entry: Infrastructure/hello",
        // The extension stays Ready with the Shoot's needs covered, and is now Required.
        "condition Required             True ExtensionObjectsExist",
        "-n garden-demo get shoots,shootstates",
        "kubectl get cluster shoot--demo--hello",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in output:\n{stdout}"
        );
    }
    assert!(
        dir.path().join("garden.kubeconfig").exists()
            && dir.path().join("seed.kubeconfig").exists(),
        "kubeconfigs are written to the state directory"
    );
    #[cfg(unix)]
    for name in ["garden.kubeconfig", "seed.kubeconfig"] {
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
    assert!(
        resumed_stdout.contains("certificate kubeconfig of the previous run kept"),
        "{resumed_stdout}"
    );
}
