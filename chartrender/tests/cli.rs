//! `seedlet render` behaviour through `cli::run`: chart directories, ControllerDeployments in both API versions, seeds.

mod common;

use std::path::{Path, PathBuf};

use base64::Engine as _;
use seedlet_chartrender::cli::{OutputFormat, RenderArgs, run};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/charts")
        .join(name)
}

fn args() -> RenderArgs {
    RenderArgs {
        name_and_chart: Vec::new(),
        chart: None,
        deployment: None,
        oci: None,
        oci_username: None,
        oci_password: None,
        ca_bundle: None,
        values: Vec::new(),
        set: Vec::new(),
        set_string: Vec::new(),
        set_json: Vec::new(),
        seed: None,
        release: "demo".into(),
        namespace: "extension-demo".into(),
        kube_version: "v1.20.0".into(),
        api_versions: Vec::new(),
        output: OutputFormat::Yaml,
        max_value_bytes: None,
        max_value_items: None,
        max_output_bytes: None,
        max_render_time: None,
    }
}

#[test]
fn render_fails_with_the_limit_when_a_chart_builds_a_huge_value() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("bomb");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: bomb\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/bomb.yaml"),
        "{{ $s := \"x\" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}",
    )
    .unwrap();
    let mut args = args();
    args.chart = Some(chart);
    args.max_value_bytes = Some(1 << 20);
    let err = run(&args).unwrap_err();
    let chain = format!("{}: {}", err, std::error::Error::source(&err).unwrap());
    assert!(
        chain.contains("bomb/templates/bomb.yaml:1")
            && chain
                .contains("print: a value of 2097152 bytes is over maxValueBytes = 1048576 bytes"),
        "{chain}"
    );
    args.max_value_bytes = None;
    args.max_render_time = Some(std::time::Duration::ZERO);
    let err = run(&args).unwrap_err();
    assert!(
        std::error::Error::source(&err)
            .unwrap()
            .to_string()
            .contains("maxRenderTime"),
        "{err:?}"
    );
}

#[test]
fn render_uses_helms_default_capabilities_plus_api_versions_flags() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("caps");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "kind: ConfigMap\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n  batch: {{ .Capabilities.APIVersions.Has \"batch/v1\" | quote }}\n  crd: {{ .Capabilities.APIVersions.Has \"apiextensions.k8s.io/v1\" | quote }}\n  monitoring: {{ .Capabilities.APIVersions.Has \"monitoring.coreos.com/v1\" | quote }}\n",
    )
    .unwrap();
    let mut args = args();
    args.chart = Some(chart);
    args.output = OutputFormat::Json;
    let data = |args: &RenderArgs| {
        let out: serde_json::Value = serde_json::from_str(&run(args).unwrap()).unwrap();
        out["caps/templates/cm.yaml"]
            .as_str()
            .unwrap()
            .lines()
            .skip(2)
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(",")
    };
    assert_eq!(
        data(&args),
        r#"kube: "v1.20.0",batch: "true",crd: "true",monitoring: "false""#
    );
    args.kube_version = "v1.26.0".into();
    args.api_versions = vec!["monitoring.coreos.com/v1".into()];
    assert_eq!(
        data(&args),
        r#"kube: "v1.26.0",batch: "true",crd: "true",monitoring: "true""#
    );
}

#[test]
fn render_prints_sources_like_helm_template() {
    let mut args = args();
    args.chart = Some(fixture("ext-basic"));
    args.values = vec![fixture("ext-basic/values-gardener.yaml")];
    let out = run(&args).unwrap();
    assert!(
        out.starts_with(
            "---\n# Source: gardener-extension-demo/templates/configmap.yaml\napiVersion: v1\n"
        ),
        "{out}"
    );
    assert!(out.contains("# Source: gardener-extension-demo/templates/vpa.yaml"));
}

#[test]
fn render_reads_both_controller_deployment_versions_identically() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("Chart.yaml", "apiVersion: v2\nname: d\nversion: 0.1.0\n"),
        ("values.yaml", "replicas: 1\n"),
        (
            "templates/cm.yaml",
            "kind: ConfigMap\nreplicas: {{ .Values.replicas }}\nseed: {{ .Values.gardener.seed.name }}\n",
        ),
    ];
    let chart = base64::engine::general_purpose::STANDARD.encode(common::archive("d", &files));
    let v1 = dir.path().join("v1.yaml");
    std::fs::write(&v1, format!("apiVersion: core.gardener.cloud/v1\nkind: ControllerDeployment\nhelm:\n  rawChart: {chart}\n  values:\n    replicas: 3\n")).unwrap();
    let v1beta1 = dir.path().join("v1beta1.yaml");
    std::fs::write(&v1beta1, format!("apiVersion: core.gardener.cloud/v1beta1\nkind: ControllerDeployment\ntype: helm\nproviderConfig:\n  chart: {chart}\n  values:\n    replicas: 3\n")).unwrap();
    let seed = dir.path().join("seed.yaml");
    std::fs::write(&seed, "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata:\n  name: local\nspec:\n  provider:\n    type: local\n").unwrap();
    let mut outputs = Vec::new();
    for deployment in [v1, v1beta1] {
        let mut args = args();
        args.deployment = Some(deployment);
        args.seed = Some(seed.clone());
        args.output = OutputFormat::Json;
        outputs.push(run(&args).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
    let parsed: serde_json::Value = serde_json::from_str(&outputs[0]).unwrap();
    assert_eq!(
        parsed["d/templates/cm.yaml"],
        "kind: ConfigMap\nreplicas: 3\nseed: local\n"
    );
}

#[test]
fn render_fails_with_the_template_and_message() {
    let mut args = args();
    args.chart = Some(fixture("fail-required"));
    let err = run(&args).unwrap_err();
    let mut chain = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(next) = source {
        chain.push_str(": ");
        chain.push_str(&next.to_string());
        source = next.source();
    }
    assert!(
        chain.contains("fail-required/templates/secret.yaml:7"),
        "{chain}"
    );
    assert!(chain.contains("a provider token must be set"), "{chain}");
}

/// A `-f` values file with a key Helm refuses fails as `helm template -f` does (text from helm-reference).
#[test]
fn values_files_with_keys_helm_refuses_fail_with_helms_text() {
    let dir = tempfile::tempdir().unwrap();
    for (text, key) in [
        ("~: 1\n", "%!s(<nil>), key: <nil>"),
        (
            "a:\n  0x8000000000000000: 1\n",
            "uint64, key: 0x8000000000000000",
        ),
    ] {
        let file = dir.path().join("user.yaml");
        std::fs::write(&file, text).unwrap();
        let mut args = args();
        args.chart = Some(fixture("ext-basic"));
        args.values = vec![file.clone()];
        let err = run(&args).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "failed to parse {}: error converting YAML to JSON: Unsupported map key of type: {key}, value: 1",
                file.display()
            )
        );
    }
}
