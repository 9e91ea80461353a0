//! The `seedlet` binary's one-shot commands: `version`, `check-config` and `crds`, run as a user would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn seedlet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("KUBECONFIG")
        .env_remove("GARDEN_KUBECONFIG")
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
fn check_config_accepts_the_examples_and_names_its_kind() {
    for (file, kind) in [
        (
            "config/examples/agent-bootstrap-token.yaml",
            "GardenletConfiguration",
        ),
        (
            "config/examples/garden-controller.yaml",
            "GardenControllerConfiguration",
        ),
    ] {
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
fn check_config_reports_the_kubeconfig_files_a_daemon_would_not_find() {
    // The static example names host paths that do not exist on a build machine.
    let path = repo_file("config/examples/agent-static-kubeconfig.yaml");
    let output = seedlet(&["check-config", path.to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(2));
    let file = path.display();
    assert_eq!(
        text(&output.stderr),
        format!(
            "{file}: gardenClientConnection.kubeconfig: file /etc/seedlet/garden-kubeconfig.yaml does not exist\n\
             {file}: seedClientConnection.kubeconfig: file /etc/seedlet/seed-kubeconfig.yaml does not exist\n"
        )
    );
    // `KUBECONFIG` overrides the seed kubeconfig for the agent, so check-config follows it.
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("seed.kubeconfig");
    std::fs::write(&kubeconfig, KUBECONFIG).expect("written");
    let output = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["check-config", path.to_str().expect("utf-8 path")])
        .env_remove("GARDEN_KUBECONFIG")
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .expect("the seedlet binary runs");
    assert_eq!(
        text(&output.stderr),
        format!(
            "{file}: gardenClientConnection.kubeconfig: file /etc/seedlet/garden-kubeconfig.yaml does not exist\n"
        )
    );
}

/// A complete kubeconfig (the server need not answer: check-config does not connect).
const KUBECONFIG: &str = "apiVersion: v1
kind: Config
current-context: garden
contexts: [{name: garden, context: {cluster: garden, user: seed}}]
clusters: [{name: garden, cluster: {server: 'https://127.0.0.1:6443'}}]
users: [{name: seed, user: {token: not-a-secret}}]
";

#[test]
fn check_config_refuses_garbage_and_half_kubeconfigs_naming_the_file_and_the_gap() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        (
            "garbage",
            "\u{1b}[31mhello\0 world\n%%%\n",
            "cannot parse it",
        ),
        ("empty", "", "the file is empty"),
        (
            "no-context",
            &KUBECONFIG.replace("current-context: garden\n", ""),
            "no current-context",
        ),
        (
            "no-server",
            &KUBECONFIG.replace("{server: 'https://127.0.0.1:6443'}", "{}"),
            "cluster \"garden\" has no server",
        ),
        (
            "no-user",
            &KUBECONFIG.replace(
                "users: [{name: seed, user: {token: not-a-secret}}]",
                "users: []",
            ),
            "names user \"seed\", which is not defined",
        ),
    ];
    for (name, kubeconfig, problem) in cases {
        let bootstrap = dir.path().join(format!("{name}.kubeconfig"));
        std::fs::write(&bootstrap, kubeconfig).expect("written");
        let config = write_config(
            &dir,
            &format!("{name}.yaml"),
            &format!(
                "gardenClientConnection:\n  bootstrapKubeconfigFile: {}\n  kubeconfigSecret: \
                 {{name: gardenlet-kubeconfig, namespace: garden}}\n{SEED}",
                bootstrap.display()
            ),
        );
        let output = seedlet(&["check-config", config.to_str().expect("utf-8 path")]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{name}: {}",
            text(&output.stdout)
        );
        let stderr = text(&output.stderr);
        assert!(
            stderr.starts_with(&format!(
                "{}: gardenClientConnection.bootstrapKubeconfigFile: {} is not a usable kubeconfig: ",
                config.display(),
                bootstrap.display()
            )),
            "{name}: {stderr}"
        );
        assert!(stderr.contains(problem), "{name}: {stderr}");
        assert!(
            !stderr.contains("not-a-secret"),
            "no credential in the message"
        );
    }
    // The complete one passes.
    let bootstrap = dir.path().join("good.kubeconfig");
    std::fs::write(&bootstrap, KUBECONFIG).expect("written");
    let config = write_config(
        &dir,
        "good.yaml",
        &format!(
            "gardenClientConnection:\n  bootstrapKubeconfigFile: {}\n  kubeconfigSecret: \
             {{name: gardenlet-kubeconfig, namespace: garden}}\n{SEED}",
            bootstrap.display()
        ),
    );
    let output = seedlet(&["check-config", config.to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    // The agent refuses to start on a bad one, with the same line and exit 2.
    let bad = dir.path().join("garbage.yaml");
    let agent = Command::new(env!("CARGO_BIN_EXE_seedlet-agent"))
        .arg("--config")
        .arg(&bad)
        .env_remove("KUBECONFIG")
        .env_remove("GARDEN_KUBECONFIG")
        .output()
        .expect("runs");
    assert_eq!(agent.status.code(), Some(2));
    assert!(
        text(&agent.stderr).contains("bootstrapKubeconfigFile")
            && text(&agent.stderr).contains("cannot parse it"),
        "{}",
        text(&agent.stderr)
    );
}

#[test]
fn check_config_summarises_the_fields_seedlet_ignores_in_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixture = std::fs::read_to_string(repo_file(
        "config/tests/fixtures/20-componentconfig-gardenlet.yaml",
    ))
    .expect("fixture");
    let path = dir.path().join("gardener-example.yaml");
    std::fs::write(&path, format!("{fixture}\n{SEED}")).expect("written");
    let output = seedlet(&["check-config", path.to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(output.stderr.is_empty(), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        format!(
            "OK: GardenletConfiguration {}\n  12 fields accepted but ignored by seedlet: \
             shootClientConnection, debugging, logging, etcdConfig, nodeToleration, \
             controllers.gardenlet, controllers.managedSeed, \
             controllers.shootCare.webhookRemediatorEnabled, \
             controllers.shootStatus, \
             controllers.tokenRequestor, controllers.tokenRequestorWorkloadIdentity, \
             controllers.vpaEvictionRequirements\n",
            path.display()
        )
    );
}

#[test]
fn check_config_reads_gardeners_controller_manager_example_unchanged() {
    let path =
        repo_file("config/tests/fixtures/20-componentconfig-gardener-controller-manager.yaml");
    let output = seedlet(&["check-config", path.to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        format!(
            "OK: ControllerManagerConfiguration {}\n  2 fields accepted but ignored by seedlet: \
             controllers.controllerDeployment, debugging\n",
            path.display()
        )
    );
    // A typo in Gardener's format names its path.
    let dir = tempfile::tempdir().expect("temp dir");
    let typo = dir.path().join("typo.yaml");
    std::fs::write(
        &typo,
        "apiVersion: controllermanager.config.gardener.cloud/v1alpha1\n\
         kind: ControllerManagerConfiguration\ncontrollers:\n  project:\n    staleSyncPeriods: 1h\n",
    )
    .expect("written");
    let output = seedlet(&["garden", "--config", typo.to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        format!(
            "{}: controllers.project.staleSyncPeriods: unknown field\n",
            typo.display()
        )
    );
}

#[test]
fn garden_starts_from_gardeners_controller_manager_example_and_logs_what_it_ignores() {
    // The example, unchanged: the configuration is accepted and its ignored fields are logged;
    // the process then stops at the garden client (no kubeconfig anywhere), before it would
    // listen on the example's fixed ports.
    let path =
        repo_file("config/tests/fixtures/20-componentconfig-gardener-controller-manager.yaml");
    let home = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["garden", "--config", path.to_str().expect("utf-8 path")])
        .env_remove("RUST_LOG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env("KUBECONFIG", home.path().join("missing-kubeconfig"))
        .env("HOME", home.path())
        .output()
        .expect("the seedlet binary runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("configuration fields accepted but ignored by seedlet")
            && stderr.contains("controllers.controllerDeployment, debugging"),
        "{stderr}"
    );
    assert!(stderr.contains("garden client"), "{stderr}");
    assert!(!stderr.contains(&path.display().to_string()), "{stderr}");
}

/// A valid `seedConfig`, which the agent requires.
const SEED: &str = "seedConfig:
  metadata:
    name: local
  spec:
    provider: {type: local, region: local}
    networks: {pods: 10.1.0.0/16, services: 10.2.0.0/16}
";

/// One file with a problem of every class: a bad value must not hide the problems after it.
const EVERY_PROBLEM: &str = "gardenClientConnection:
  qps: fast
  kubeconfig: /nonexistent/garden.kubeconfig
seedClientConnection:
  kubeconfig: /nonexistent/seed.kubeconfig
controllers:
  seed:
    syncPeriod: 1d
    leaseResyncSecond: 2
  seedCare:
    conditionThresholds:
    - type: SeedSystemComponentsHealthy
      duration: 0s
server:
  healthProbes:
    port: 99999
logFormat: yaml
seedConfig:
  metadata:
    name: local
  spec:
    provder:
      type: local
    networks:
      pods: 10.1.0.0/99
      servces: 10.2.0.0/16
";

#[test]
fn check_config_reports_every_problem_of_a_file_in_one_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_config(&dir, "every.yaml", EVERY_PROBLEM);
    let output = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["check-config", path.to_str().expect("utf-8 path")])
        .env_remove("KUBECONFIG")
        .env_remove("GARDEN_KUBECONFIG")
        .output()
        .expect("the seedlet binary runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let file = path.display();
    let expected = [
        "gardenClientConnection.qps: invalid type: string \"fast\", expected a number",
        "controllers.seed.syncPeriod: invalid duration \"1d\": unknown unit \"d\" (one of ns, us, ms, s, m, h)",
        "controllers.seed.leaseResyncSecond: unknown field",
        "server.healthProbes.port: 99999 is out of range, expected an integer from 0 to 65535",
        "logFormat: unknown value yaml, expected json or text",
        "controllers.seedCare.conditionThresholds[0].duration: must be > 0",
        "seedConfig.spec.provder: unknown field",
        "seedConfig.spec.provider: required",
        "seedConfig.spec.networks.servces: unknown field",
        "seedConfig.spec.networks.pods: \"10.1.0.0/99\" is not a CIDR such as 10.0.0.0/16: prefix length 99 is not between 0 and 32",
        "seedConfig.spec.networks.services: required",
        "gardenClientConnection.kubeconfig: file /nonexistent/garden.kubeconfig does not exist",
        "seedClientConnection.kubeconfig: file /nonexistent/seed.kubeconfig does not exist",
    ]
    .map(|problem| format!("{file}: {problem}\n"))
    .concat();
    assert_eq!(text(&output.stderr), expected);

    // The agent refuses the same file with the same lines and exit code, before it starts.
    let agent = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .args(["agent", "--config", path.to_str().expect("utf-8 path")])
        .env_remove("KUBECONFIG")
        .env_remove("GARDEN_KUBECONFIG")
        .output()
        .expect("the seedlet binary runs");
    assert_eq!(agent.status.code(), Some(2));
    assert_eq!(text(&agent.stderr), expected);
}

#[test]
fn check_config_names_typos_in_the_seed_spec_and_a_missing_seed_config() {
    let dir = tempfile::tempdir().expect("temp dir");
    let typo = write_config(
        &dir,
        "typo.yaml",
        "seedConfig:\n  metadata:\n    name: local\n  spec:\n    provider:\n      type: local\n      regoin: local\n    networks:\n      pods: 10.1.0.0/16\n      services: 10.2.0.0/16\n",
    );
    let missing = write_config(&dir, "missing.yaml", "logLevel: info\n");
    let output = seedlet(&[
        "check-config",
        typo.to_str().expect("utf-8 path"),
        missing.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        format!(
            "{typo}: seedConfig.spec.provider.regoin: unknown field\n\
             {typo}: seedConfig.spec.provider.region: required\n\
             {missing}: seedConfig: required (the Seed this agent registers)\n",
            typo = typo.display(),
            missing = missing.display()
        )
    );
}

#[test]
fn check_config_puts_file_and_field_first_for_a_wrong_api_version_kind_or_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let version = dir.path().join("version.yaml");
    std::fs::write(
        &version,
        "apiVersion: gardenlet.config.gardener.cloud/v1beta1\nkind: GardenletConfiguration\n",
    )
    .expect("written");
    let kind = dir.path().join("kind.yaml");
    std::fs::write(
        &kind,
        "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenletConfiguration\n",
    )
    .expect("written");
    let output = seedlet(&[
        "check-config",
        version.to_str().expect("utf-8 path"),
        kind.to_str().expect("utf-8 path"),
        "/nonexistent/seedlet.yaml",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let expected = "expected gardenlet.config.gardener.cloud/v1alpha1 GardenletConfiguration, \
                    seedlet.gardener.cloud/v1alpha1 GardenControllerConfiguration or \
                    controllermanager.config.gardener.cloud/v1alpha1 ControllerManagerConfiguration";
    assert_eq!(
        text(&output.stderr),
        format!(
            "{}: apiVersion: \"gardenlet.config.gardener.cloud/v1beta1\" is not read by seedlet; {expected}\n\
             {}: kind: \"GardenletConfiguration\" is not a kind of seedlet.gardener.cloud/v1alpha1; {expected}\n\
             /nonexistent/seedlet.yaml: cannot read: No such file or directory (os error 2)\n",
            version.display(),
            kind.display()
        )
    );
    // A daemon given the other kind says so in the same shape.
    let garden = repo_file("config/examples/garden-controller.yaml");
    let agent = seedlet(&["agent", "--config", garden.to_str().expect("utf-8 path")]);
    assert_eq!(agent.status.code(), Some(2));
    assert_eq!(
        text(&agent.stderr),
        format!(
            "{}: kind: GardenControllerConfiguration, expected GardenletConfiguration for this command\n",
            garden.display()
        )
    );
}

#[test]
fn check_config_exits_2_and_names_the_path_of_an_unknown_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_config(
        &dir,
        "unknown.yaml",
        &format!("{SEED}controllers:\n  seedCare:\n    syncPeriod: 30s\n    typo: 1\n"),
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
fn check_config_exits_2_for_a_missing_file_and_still_checks_the_others() {
    let good = repo_file("config/examples/garden-controller.yaml");
    let output = seedlet(&[
        "check-config",
        "/nonexistent/seedlet.yaml",
        good.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).starts_with("/nonexistent/seedlet.yaml: cannot read: "));
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

#[test]
fn bare_render_names_both_sources() {
    let output = seedlet(&["render"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("--chart") && stderr.contains("--deployment") && stderr.contains("CHART"),
        "{stderr}"
    );
}

#[test]
fn render_speaks_helm_template_flags() {
    let chart = repo_file("charts/seedlet-garden");
    let values = repo_file("charts/seedlet-garden/ci/full-values.yaml");
    let output = seedlet(&[
        "render",
        "my-release",
        chart.to_str().expect("utf-8 path"),
        "-n",
        "garden",
        "-f",
        values.to_str().expect("utf-8 path"),
        "--set",
        "replicaCount=3",
        "--set-string",
        "image.tag=1.20",
        "--set-json",
        r#"resources={"limits":{"cpu":"2"}}"#,
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    for expected in [
        "name: my-release-seedlet-garden",
        "namespace: garden",
        "replicas: 3",
        "image: registry.example.com/seedlet:1.20",
        "cpu: \"2\"",
    ] {
        assert!(stdout.contains(expected), "missing {expected:?}:\n{stdout}");
    }
    let bad = seedlet(&[
        "render",
        chart.to_str().expect("utf-8 path"),
        "--set",
        "replicaCount",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        text(&bad.stderr),
        "error: invalid --set argument: \"replicaCount\": \"replicaCount\" has no '=' (expected key=value)\n"
    );
}

#[test]
fn the_install_guides_render_command_works_as_written() {
    let guide = std::fs::read_to_string(repo_file("docs/install.md")).expect("install guide");
    let command = guide
        .lines()
        .find_map(|line| line.trim().strip_prefix("seedlet render seedlet-agent "))
        .expect("the install guide's Helm section renders the agent chart");
    let command = command.split('#').next().unwrap_or_default();
    // The user's values file, stood in for by the chart's minimal CI values.
    let args: Vec<&str> = command
        .split_whitespace()
        .map(|arg| {
            if arg == "my-seed.yaml" {
                "charts/seedlet-agent/ci/minimal-values.yaml"
            } else {
                arg
            }
        })
        .collect();
    let output = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["render", "seedlet-agent"])
        .args(&args)
        .output()
        .expect("the seedlet binary runs");
    assert!(
        output.status.success(),
        "{args:?}: {}",
        text(&output.stderr)
    );
    let stdout = text(&output.stdout);
    assert!(stdout.contains("namespace: garden"), "{stdout}");
    assert!(stdout.contains("name: seedlet-agent"), "{stdout}");
}

#[test]
fn the_readme_and_docs_point_only_inside_the_repository() {
    let readme = std::fs::read_to_string(repo_file("README.md")).expect("README");
    assert!(!readme.contains("shared design notes"));
    // Markdown links to files (a `#section` of a file names the file), from the README and from
    // every page in docs/ (relative to docs/).
    let mut pages = vec![(String::from("README.md"), readme.clone(), repo_file("."))];
    for entry in std::fs::read_dir(repo_file("docs")).expect("docs") {
        let path = entry.expect("docs entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&path).expect("docs page");
            pages.push((path.display().to_string(), text, repo_file("docs")));
        }
    }
    for (page, text, base) in &pages {
        for target in text
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split(')').next())
        {
            if target.starts_with("http") || target.starts_with('#') {
                continue;
            }
            let file = target.split('#').next().unwrap_or_default();
            assert!(base.join(file).exists(), "{page} links to missing {target}");
        }
    }
    // Scripts run with python3 are named by a path that exists.
    for line in readme.lines() {
        if let Some(rest) = line.split("python3 ").nth(1) {
            let script = rest.split_whitespace().next().unwrap_or_default();
            let dir = line
                .split("cd ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or("");
            assert!(
                repo_file(dir).join(script).exists(),
                "README runs {script} that is not in the repository: {line}"
            );
        }
    }
}

#[test]
fn help_shows_log_options_in_their_own_section_only_where_they_apply() {
    for command in [
        ["agent", "--help"],
        ["sandbox", "--help"],
        ["check-config", "--help"],
    ] {
        let help = text(&seedlet(&command).stdout);
        let (options, log_options) = help
            .split_once("Log options:")
            .unwrap_or_else(|| panic!("{command:?} has a Log options section:\n{help}"));
        assert!(!options.contains("--log-level"), "{help}");
        assert!(log_options.contains("--log-level") && log_options.contains("--log-format"));
    }
    for command in [
        ["version", "--help"],
        ["crds", "--help"],
        ["render", "--help"],
    ] {
        let help = text(&seedlet(&command).stdout);
        assert!(!help.contains("--log-level"), "{command:?}:\n{help}");
    }
    let serve = text(&seedlet(&["sandbox", "serve", "--help"]).stdout);
    assert!(serve.contains("Log options:"), "{serve}");
}

#[test]
fn completion_prints_a_script_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_seedlet()"),
        ("zsh", "#compdef seedlet"),
        ("fish", "complete -c seedlet"),
    ] {
        let output = seedlet(&["completion", shell]);
        assert!(output.status.success(), "{shell}");
        let script = text(&output.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(script.contains("check-config"), "{shell}");
    }
    assert_eq!(seedlet(&["completion", "tcsh"]).status.code(), Some(2));
}

/// The slim garden binary takes the garden controller's flags and refuses a bad configuration
/// like `seedlet garden` (exit 2, every problem by field path), without any other subcommand.
#[test]
fn slim_garden_binary_checks_its_configuration_like_seedlet_garden() {
    slim_binary_checks_its_configuration_like_seedlet(
        env!("CARGO_BIN_EXE_seedlet-garden"),
        "garden",
        "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenControllerConfiguration\nlogLevel: loud\n",
        "agent",
    );
}

/// The slim agent binary takes the agent's flags and refuses a bad configuration like
/// `seedlet agent` (exit 2, every problem by field path), without any other subcommand.
#[test]
fn slim_agent_binary_checks_its_configuration_like_seedlet_agent() {
    slim_binary_checks_its_configuration_like_seedlet(
        env!("CARGO_BIN_EXE_seedlet-agent"),
        "agent",
        "apiVersion: gardenlet.config.gardener.cloud/v1alpha1\nkind: GardenletConfiguration\nlogLevel: loud\n",
        "sandbox",
    );
}

/// `slim --config FILE` and `seedlet <command> --config FILE` on `config` (a bad `logLevel`) both
/// exit 2 with the same report naming the field; `slim <other>` fails: no other subcommands.
fn slim_binary_checks_its_configuration_like_seedlet(
    slim: &str,
    command: &str,
    config: &str,
    other: &str,
) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, config).expect("config");
    let slim_run = Command::new(slim)
        .arg("--config")
        .arg(&path)
        .output()
        .expect("runs");
    let full = Command::new(env!("CARGO_BIN_EXE_seedlet"))
        .arg(command)
        .arg("--config")
        .arg(&path)
        .output()
        .expect("runs");
    assert_eq!(slim_run.status.code(), Some(2));
    assert_eq!(full.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&slim_run.stderr),
        String::from_utf8_lossy(&full.stderr)
    );
    assert!(String::from_utf8_lossy(&slim_run.stderr).contains("logLevel"));
    let other = Command::new(slim).arg(other).output().expect("runs");
    assert!(
        !other.status.success(),
        "the slim binary has no other commands"
    );
}
