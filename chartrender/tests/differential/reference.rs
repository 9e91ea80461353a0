//! Calls of the Helm reference renderer (`SEEDLET_HELM_REFERENCE`) for the differential tests: batches of
//! template files in one chart (one process per batch, plus one per failing template), whole chart folders, and
//! the value variants the fixture charts are rendered with.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;

/// One engine's answer for one template file.
#[derive(Debug, Clone)]
pub enum Outcome {
    Rendered(String),
    Failed(String),
}

impl Outcome {
    /// Equal text, or both failed (error texts are not compared).
    pub fn agrees_with(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Rendered(a), Outcome::Rendered(b)) => a == b,
            (Outcome::Failed(_), Outcome::Failed(_)) => true,
            _ => false,
        }
    }
}

/// The reference renderer.
pub struct Reference {
    program: PathBuf,
    work: tempfile::TempDir,
}

impl Reference {
    /// The renderer named by `SEEDLET_HELM_REFERENCE`, if set.
    pub fn from_env() -> Option<Self> {
        let program = std::env::var_os("SEEDLET_HELM_REFERENCE")?;
        Some(Self {
            program: PathBuf::from(program),
            work: tempfile::tempdir().expect("temporary folder"),
        })
    }

    /// Renders a chart folder with a values file; `{template path: text}` or Helm's error.
    pub fn render_dir(
        &self,
        chart: &Path,
        values_yaml: &str,
    ) -> Result<BTreeMap<String, String>, String> {
        let values = self.work.path().join("values-input.yaml");
        std::fs::write(&values, values_yaml).expect("writing the values file");
        let output = Command::new(&self.program)
            .arg(chart)
            .arg(&values)
            .args(["rel", "ns"])
            .env("HTPL_JSON", "1")
            .output()
            .expect("the reference renderer starts");
        if output.status.success() {
            Ok(serde_json::from_slice(&output.stdout).expect("the reference prints a JSON object"))
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
        }
    }

    /// Renders one chart named `diff` holding every template of `templates` (path below the chart, text) over
    /// `values_yaml`. A template Helm fails on is recorded with the error, taken out, and the rest rendered again.
    /// Returns the outcome per template path (`diff/<path>`) and how many times the reference ran.
    pub fn render_batch(
        &self,
        chart_yaml: &str,
        values_yaml: &str,
        templates: &[(String, String)],
    ) -> (BTreeMap<String, Outcome>, usize) {
        let dir = self.work.path().join("diff");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("templates")).expect("chart folder");
        std::fs::write(dir.join("Chart.yaml"), chart_yaml).expect("Chart.yaml");
        std::fs::write(dir.join("values.yaml"), values_yaml).expect("values.yaml");
        for (path, text) in templates {
            std::fs::write(dir.join(path), text).expect("template file");
        }
        let failing = Regex::new(r"diff/(templates/c[0-9]+-NOTES\.txt)").expect("pattern");
        let mut remaining: Vec<String> = templates.iter().map(|(p, _)| p.clone()).collect();
        let mut out = BTreeMap::new();
        let mut runs = 0;
        while !remaining.is_empty() {
            runs += 1;
            match self.render_dir(&dir, "{}\n") {
                Ok(rendered) => {
                    for path in remaining.drain(..) {
                        let key = format!("diff/{path}");
                        let text = rendered.get(&key).cloned().unwrap_or_default();
                        out.insert(key, Outcome::Rendered(text));
                    }
                }
                Err(message) => {
                    let culprit = failing
                        .captures(&message)
                        .map(|c| c[1].to_string())
                        .filter(|p| remaining.contains(p));
                    let culprit =
                        culprit.or_else(|| (templates.len() == 1).then(|| remaining[0].clone()));
                    let Some(culprit) = culprit else {
                        // Not attributable to one template: every remaining template alone.
                        eprintln!(
                            "differential: a Helm error names no case, rendering one by one: {message}"
                        );
                        for path in std::mem::take(&mut remaining) {
                            let (single, single_runs) = self.render_batch(
                                chart_yaml,
                                values_yaml,
                                &templates
                                    .iter()
                                    .filter(|(p, _)| *p == path)
                                    .cloned()
                                    .collect::<Vec<_>>(),
                            );
                            runs += single_runs;
                            out.extend(single);
                        }
                        // The recursive calls rewrote the folder; nothing else remains.
                        break;
                    };
                    std::fs::remove_file(dir.join(&culprit)).expect("removing a failing template");
                    remaining.retain(|p| *p != culprit);
                    out.insert(format!("diff/{culprit}"), Outcome::Failed(message));
                }
            }
        }
        (out, runs)
    }
}

/// The values a fixture chart is rendered with: none, each `values-*.yaml` beside it, and three variations of its
/// `values.yaml` with flipped booleans, changed numbers and strings (seeded, so every run sees the same).
pub fn value_variants(chart: &Path) -> Vec<String> {
    let mut out = vec!["{}\n".to_string()];
    let mut extra: Vec<PathBuf> = std::fs::read_dir(chart)
        .expect("chart folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("values-") && n.ends_with(".yaml"))
        })
        .collect();
    extra.sort();
    for file in extra {
        out.push(std::fs::read_to_string(file).expect("values file"));
    }
    if let Ok(text) = std::fs::read_to_string(chart.join("values.yaml"))
        && let Ok(values) = serde_yaml::from_str::<serde_json::Value>(&text)
        && values.is_object()
    {
        for seed in 1..=3u64 {
            let mut varied = values.clone();
            let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            vary(&mut varied, &mut state);
            out.push(serde_json::to_string_pretty(&varied).expect("JSON text"));
        }
    }
    out
}

fn next(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

/// Changes about a third of the scalars of `value`.
fn vary(value: &mut serde_json::Value, state: &mut u64) {
    match value {
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| vary(v, state)),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| vary(v, state)),
        scalar => {
            if !next(state).is_multiple_of(3) {
                return;
            }
            *scalar = match scalar {
                serde_json::Value::Bool(b) => serde_json::Value::Bool(!*b),
                serde_json::Value::Number(n) => {
                    serde_json::json!(n.as_f64().map_or(0.0, |f| if f == 0.0 {
                        3.0
                    } else {
                        f * 2.0 + 1.0
                    }))
                }
                serde_json::Value::String(s) if next(state).is_multiple_of(2) => {
                    serde_json::json!(format!("{s}-x"))
                }
                serde_json::Value::String(_) => serde_json::json!(""),
                _ => serde_json::json!("set"),
            };
        }
    }
}
