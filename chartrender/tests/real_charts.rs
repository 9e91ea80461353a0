//! The real Gardener charts of `benches/charts` (the render benchmark's archives): with
//! `SEEDLET_HELM_REFERENCE` set, every chart renders to Helm v3.11.3's exact text with the seed values; always,
//! a renderer that keeps a chart translated (and its coalesced values) renders what a fresh one renders, also
//! after the supplied values change and change back.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer};

fn charts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/charts")
}

fn archives() -> Vec<PathBuf> {
    let mut archives: Vec<PathBuf> = std::fs::read_dir(charts_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "tgz"))
        .collect();
    archives.sort();
    assert_eq!(archives.len(), 10, "benches/charts holds ten archives");
    archives
}

fn seed_values() -> serde_json::Value {
    serde_yaml::from_slice(&std::fs::read(charts_dir().join("values-seed.yaml")).unwrap()).unwrap()
}

fn options(values: serde_json::Value) -> RenderOptions {
    RenderOptions {
        release_name: "demo".into(),
        namespace: "extension-demo".into(),
        values,
        ..RenderOptions::default()
    }
}

fn fresh_render(bytes: &[u8], values: &serde_json::Value) -> BTreeMap<String, String> {
    let chart = Chart::from_archive(bytes, &Limits::default()).unwrap();
    Renderer::new()
        .render(&chart, &options(values.clone()))
        .unwrap()
        .templates
}

#[test]
fn real_charts_render_like_helm() {
    let Some(reference) = std::env::var_os("SEEDLET_HELM_REFERENCE") else {
        eprintln!("skipped: SEEDLET_HELM_REFERENCE is not set (../shared/helm/helm-reference)");
        return;
    };
    let values = seed_values();
    for archive in archives() {
        let output = Command::new(&reference)
            .env("HTPL_JSON", "1")
            .arg(&archive)
            .arg(charts_dir().join("values-seed.yaml"))
            .args(["demo", "extension-demo"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "Helm failed on {}: {}",
            archive.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        let helm: BTreeMap<String, String> = serde_json::from_slice(&output.stdout).unwrap();
        let ours = fresh_render(&std::fs::read(&archive).unwrap(), &values);
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            helm.keys().collect::<Vec<_>>(),
            "{}",
            archive.display()
        );
        for (path, text) in &helm {
            assert_eq!(&ours[path], text, "{path} of {}", archive.display());
        }
    }
}

#[test]
fn a_kept_translation_renders_like_a_fresh_one_as_values_change() {
    let seed = seed_values();
    let mut other = seed.clone();
    other["gardener"]["seed"]["name"] = "other-seed".into();
    other["gardener"]["seed"]["spec"]["settings"]["topologyAwareRouting"]["enabled"] = false.into();
    // The same values with their keys in another order: coalescing keeps the order, so this is a new entry.
    let reversed: serde_json::Map<String, serde_json::Value> = seed["gardener"]
        .as_object()
        .unwrap()
        .iter()
        .rev()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let reordered = serde_json::json!({ "gardener": reversed });
    let renderer = Renderer::new();
    let mut charts_seeing_the_change = 0;
    for archive in archives() {
        let bytes = std::fs::read(&archive).unwrap();
        let chart = Chart::from_archive(&bytes, &Limits::default()).unwrap();
        let mut differs = false;
        for values in [&seed, &seed, &other, &seed, &reordered, &other] {
            let kept = renderer
                .render(&chart, &options(values.clone()))
                .unwrap()
                .templates;
            let fresh = fresh_render(&bytes, values);
            differs |= kept != fresh_render(&bytes, &seed);
            assert_eq!(kept, fresh, "{}", archive.display());
        }
        charts_seeing_the_change += usize::from(differs);
    }
    // The changed values must reach the output, or a stale reuse would go unseen.
    assert!(
        charts_seeing_the_change >= 3,
        "{charts_seeing_the_change} charts render the other values differently"
    );
}
