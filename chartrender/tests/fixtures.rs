//! Every case in `tests/fixtures/charts/*/expected/*.json` (Helm v3.11's own output) renders equal after YAML parsing.

// Helpers below `#[test]` functions read fixtures; a panic there is the test failure report.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex::Regex;
use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer, parse_documents};

fn charts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/charts")
}

/// The default limits, with time to spare: a debug build generating an RSA key on a loaded
/// machine has taken longer than the default 10 s, and time is not what these cases check.
fn fixture_limits() -> Limits {
    Limits {
        max_render_time: std::time::Duration::from_secs(120),
        ..Limits::default()
    }
}

struct Case {
    name: String,
    chart: Chart,
    options: RenderOptions,
    expected: serde_json::Value,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(charts_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let mut expected_files: Vec<PathBuf> = std::fs::read_dir(dir.join("expected"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        expected_files.sort();
        for file in expected_files {
            let expected: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
            let values = match expected["values"].as_str() {
                Some(values_file) => {
                    serde_yaml::from_slice(&std::fs::read(dir.join(values_file)).unwrap()).unwrap()
                }
                None => serde_json::json!({}),
            };
            let options = RenderOptions {
                release_name: expected["release"]["name"].as_str().unwrap().to_string(),
                namespace: expected["release"]["namespace"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                values,
                // The render's own limits: those given to `Chart::from_dir` bound only loading.
                limits: fixture_limits(),
                ..RenderOptions::default()
            };
            // Charts that fail to parse are still loadable; only rendering reports the error.
            let chart = Chart::from_dir(&dir, &fixture_limits()).unwrap();
            out.push(Case {
                name: file.display().to_string(),
                chart,
                options,
                expected,
            });
        }
    }
    out
}

#[test]
fn fixture_charts_render_like_helm() {
    let renderer = Renderer::new();
    let cases = cases();
    assert_eq!(cases.len(), 8, "all fixture cases are found");
    let template_path =
        Regex::new(r"[A-Za-z0-9_.-]+/(?:charts/[A-Za-z0-9_.-]+/)?templates/[A-Za-z0-9_./-]+")
            .unwrap();
    for case in cases {
        let result = renderer.render(&case.chart, &case.options);
        if let Some(expected_error) = case.expected["error"].as_str() {
            let err = result.expect_err(&format!("{}: rendering must fail", case.name));
            let message = err.to_string();
            for path in template_path.find_iter(expected_error) {
                let path = path.as_str().split(':').next().unwrap();
                assert!(
                    message.contains(path),
                    "{}: error {message:?} names {path}",
                    case.name
                );
            }
            if let Some((_, user_message)) = expected_error.split_once("): ")
                && expected_error.starts_with("execution error")
            {
                assert!(
                    message.contains(user_message),
                    "{}: error {message:?} carries {user_message:?}",
                    case.name
                );
            }
            continue;
        }
        let rendered = result.unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let expected_rendered: BTreeMap<String, String> =
            serde_json::from_value(case.expected["rendered"].clone()).unwrap();
        assert_eq!(
            rendered.templates.keys().collect::<Vec<_>>(),
            expected_rendered.keys().collect::<Vec<_>>(),
            "{}: rendered template paths",
            case.name
        );
        for (path, text) in &rendered.templates {
            // Byte equality is a stretch goal of the fixtures; these charts reach it.
            assert_eq!(
                text, &expected_rendered[path],
                "{}: {path} text differs from Helm's",
                case.name
            );
        }
        let expected_manifests = case.expected["manifests"].as_object().unwrap();
        for (path, text) in &rendered.templates {
            let documents = parse_documents(path, text)
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", case.name));
            let expected = expected_manifests
                .get(path)
                .and_then(|v| v.as_array())
                .cloned()
                .unwrap_or_default();
            assert_eq!(
                serde_json::Value::Array(documents),
                serde_json::Value::Array(expected),
                "{}: {path} differs; rendered text:\n{text}",
                case.name
            );
        }
        let manifests = rendered.manifests().unwrap();
        let total: usize = expected_manifests
            .values()
            .map(|v| v.as_array().unwrap().len())
            .sum();
        assert_eq!(manifests.len(), total, "{}: manifest count", case.name);
    }
}

#[test]
fn manifests_follow_helm_install_order() {
    let dir = charts_dir().join("ext-basic");
    let chart = Chart::from_dir(&dir, &Limits::default()).unwrap();
    let values =
        serde_yaml::from_slice(&std::fs::read(dir.join("values-gardener.yaml")).unwrap()).unwrap();
    let options = RenderOptions {
        release_name: "demo".into(),
        namespace: "extension-demo".into(),
        values,
        ..RenderOptions::default()
    };
    let manifests = Renderer::new()
        .render(&chart, &options)
        .unwrap()
        .manifests()
        .unwrap();
    let kinds: Vec<&str> = manifests
        .iter()
        .map(|m| m.object["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "ConfigMap",
            "ClusterRole",
            "ClusterRoleBinding",
            "Service",
            "Deployment",
            "VerticalPodAutoscaler"
        ]
    );
}
