//! The `seedlet` binary's one-shot commands: `version`, `check-config` and `crds`, run as a user would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn seedlet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("the seedlet binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn repo_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn write_config(dir: &tempfile::TempDir, name: &str, body: &str) -> PathBuf {
    let path = dir.path().join(name);
    let header =
        "apiVersion: gardenlet.config.gardener.cloud/v1alpha1\nkind: GardenletConfiguration\n";
    std::fs::write(&path, format!("{header}{body}")).expect("temp file is writable");
    path
}

#[test]
fn version_prints_the_crate_version_and_a_commit() {
    let output = seedlet(&["version"]);
    assert!(output.status.success());
    let stdout = text(&output.stdout);
    let expected = format!("seedlet {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(stdout.starts_with(&expected), "{stdout}");
    assert!(stdout.trim_end().ends_with(')'), "{stdout}");
}

#[test]
fn check_config_accepts_every_example_and_names_its_kind() {
    let examples = [
        (
            "config/examples/agent-bootstrap-token.yaml",
            "GardenletConfiguration",
        ),
        (
            "config/examples/agent-static-kubeconfig.yaml",
            "GardenletConfiguration",
        ),
        (
            "config/examples/garden-controller.yaml",
            "GardenControllerConfiguration",
        ),
        (
            "config/tests/fixtures/20-componentconfig-gardenlet.yaml",
            "GardenletConfiguration",
        ),
    ];
    for (file, kind) in examples {
        let path = repo_file(file);
        let output = seedlet(&["check-config", path.to_str().expect("utf-8 path")]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{file}: {}",
            text(&output.stderr)
        );
        assert_eq!(
            text(&output.stdout),
            format!("OK: {kind} {}\n", path.display())
        );
    }
}

#[test]
fn check_config_logs_the_fields_seedlet_ignores() {
    let path = repo_file("config/tests/fixtures/20-componentconfig-gardenlet.yaml");
    let output = seedlet(&["check-config", path.to_str().expect("utf-8 path")]);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("field accepted but ignored by seedlet"),
        "{stderr}"
    );
    assert!(stderr.contains("controllers.shootCare"), "{stderr}");
}

#[test]
fn check_config_exits_2_and_names_the_path_of_an_unknown_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_config(
        &dir,
        "unknown.yaml",
        "controllers:\n  seedCare:\n    syncPeriod: 30s\n    typo: 1\n",
    );
    let output = seedlet(&["check-config", path.to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert_eq!(
        text(&output.stderr),
        format!(
            "{}: controllers.seedCare.typo: unknown field\n",
            path.display()
        )
    );
}

#[test]
fn check_config_exits_2_and_names_the_path_of_a_bad_duration() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_config(
        &dir,
        "duration.yaml",
        "controllers:\n  seed:\n    syncPeriod: 1d\n",
    );
    let output = seedlet(&["check-config", path.to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("controllers.seed.syncPeriod: invalid duration \"1d\": unknown unit \"d\""),
        "{stderr}"
    );
}

#[test]
fn check_config_prints_every_problem_on_its_own_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let body = "gardenClientConnection:\n  kubeconfigValidity:\n    validity: 1m\nlogFormat: json\nextra: 1\n";
    let path = write_config(&dir, "many.yaml", body);
    let output = seedlet(&["check-config", path.to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    let lines: Vec<_> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].ends_with("extra: unknown field"), "{stderr}");
    assert!(
        lines[1]
            .ends_with("gardenClientConnection.kubeconfigValidity.validity: must be at least 10m")
    );
}

#[test]
fn check_config_exits_2_for_a_missing_file_and_still_checks_the_others() {
    let good = repo_file("config/examples/garden-controller.yaml");
    let output = seedlet(&[
        "check-config",
        "/nonexistent/seedlet.yaml",
        good.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("reading configuration file /nonexistent/seedlet.yaml"));
    assert!(text(&output.stdout).starts_with("OK: GardenControllerConfiguration"));
}

#[test]
fn crds_prints_parseable_custom_resource_definitions_for_each_set() {
    let mut counts = Vec::new();
    for flag in ["--seed", "--garden"] {
        let output = seedlet(&["crds", flag]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        let stdout = text(&output.stdout);
        let documents = yaml_documents(&stdout);
        for document in &documents {
            let value: serde_json::Value =
                serde_yaml::from_str(document).expect("each document is YAML");
            assert_eq!(value["apiVersion"], "apiextensions.k8s.io/v1");
            assert_eq!(value["kind"], "CustomResourceDefinition");
        }
        assert!(!documents.is_empty(), "{flag} printed no CRDs");
        counts.push(documents.len());
    }
    let both = seedlet(&["crds"]);
    assert_eq!(
        yaml_documents(&text(&both.stdout)).len(),
        counts.iter().sum::<usize>()
    );
    let group = |flag: &str| text(&seedlet(&["crds", flag]).stdout);
    assert!(group("--seed").contains("group: extensions.gardener.cloud"));
    assert!(group("--garden").contains("group: core.gardener.cloud"));
}

/// Splits a multi-document YAML stream at its `---` lines.
fn yaml_documents(stream: &str) -> Vec<String> {
    let mut documents = vec![String::new()];
    for line in stream.lines() {
        if line == "---" {
            documents.push(String::new());
        } else if let Some(current) = documents.last_mut() {
            current.push_str(line);
            current.push('\n');
        }
    }
    documents.retain(|document| !document.trim().is_empty());
    documents
}
