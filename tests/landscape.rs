//! `seedlet sandbox --once` end to end: the README's first command, run as the built binary, must
//! bring garden, seed, garden controller and agent to Ready through the bootstrap-token path, then
//! install the example extension until the Seed reports `ExtensionsReady`.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn sandbox_once_reaches_ready_and_installs_the_example_extension() {
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
    let ready = stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("landscape Ready in "))
        .unwrap_or("?");
    println!("seedlet sandbox --once took {took:?}, landscape Ready in {ready}");
    assert!(took < Duration::from_secs(60), "landscape took {took:?}");
}
