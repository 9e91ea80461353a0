//! CloudProfile status (spec §2.2): the current classification of every Kubernetes and machine
//! image version from its lifecycle (or the legacy `classification` / `expirationDate`), and the
//! next instant at which one of them changes. `now` is an argument; upstream reads the wall clock
//! ([QUIRK]), seedlet the injected clock.

use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// `supported`.
pub const SUPPORTED: &str = "supported";
/// `unavailable`.
pub const UNAVAILABLE: &str = "unavailable";
/// `expired`.
pub const EXPIRED: &str = "expired";

/// One lifecycle stage: classification and optional start.
type Stage = (String, Option<Timestamp>);

fn time(value: Option<&Value>) -> Option<Timestamp> {
    value.and_then(Value::as_str).and_then(|s| s.parse().ok())
}

/// The lifecycle stages of an `ExpirableVersion` (legacy fields turned into stages).
fn stages(version: &Value) -> Vec<Stage> {
    if let Some(lifecycle) = version.get("lifecycle").and_then(Value::as_array) {
        return lifecycle
            .iter()
            .map(|stage| {
                (
                    stage
                        .get("classification")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    time(stage.get("startTime")),
                )
            })
            .collect();
    }
    let classification = version.get("classification").and_then(Value::as_str);
    let expiration = time(version.get("expirationDate"));
    if classification.is_none() && expiration.is_none() {
        return Vec::new();
    }
    let mut stages = vec![(classification.unwrap_or(SUPPORTED).to_owned(), None)];
    if let Some(expiration) = expiration {
        stages.push((EXPIRED.to_owned(), Some(expiration)));
    }
    stages
}

/// The classification of `version` at `now`.
pub fn classification(version: &Value, now: Timestamp) -> String {
    let stages = stages(version);
    if stages.is_empty() {
        return SUPPORTED.to_owned();
    }
    let mut result = UNAVAILABLE.to_owned();
    for (classification, start) in stages {
        if start.is_none_or(|start| start < now) {
            result = classification;
        }
    }
    result
}

/// The instants at which `version`'s classification may change: the lifecycle start times, or
/// for legacy versions the expiration date.
fn instants(version: &Value) -> Vec<Timestamp> {
    match version.get("lifecycle").and_then(Value::as_array) {
        Some(lifecycle) => lifecycle
            .iter()
            .filter_map(|stage| time(stage.get("startTime")))
            .collect(),
        None => time(version.get("expirationDate")).into_iter().collect(),
    }
}

fn versions(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn classified(list: &[Value], now: Timestamp) -> Vec<Value> {
    list.iter()
        .map(|v| json!({"version": v.get("version").cloned().unwrap_or(Value::Null), "classification": classification(v, now)}))
        .collect()
}

/// The status of a CloudProfile with spec `spec` at `now` (empty parts omitted), and the
/// earliest future instant at which it changes.
pub fn status(spec: &Value, now: Timestamp) -> (Value, Option<Timestamp>) {
    let kubernetes = versions(spec.pointer("/kubernetes/versions"));
    let images = versions(spec.get("machineImages"));
    let mut status = Map::new();
    if !kubernetes.is_empty() {
        status.insert(
            "kubernetes".into(),
            json!({"versions": classified(kubernetes, now)}),
        );
    }
    if !images.is_empty() {
        let images: Vec<Value> = images
            .iter()
            .map(|image| {
                json!({
                    "name": image.get("name").cloned().unwrap_or(Value::Null),
                    "versions": classified(versions(image.get("versions")), now),
                })
            })
            .collect();
        status.insert("machineImages".into(), Value::Array(images));
    }
    let next = kubernetes
        .iter()
        .chain(
            images
                .iter()
                .flat_map(|image| versions(image.get("versions"))),
        )
        .flat_map(instants)
        .filter(|instant| *instant > now)
        .min();
    (Value::Object(status), next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(date: &str) -> Timestamp {
        format!("{date}T00:00:00Z").parse().expect("timestamp")
    }

    /// The examples of spec §2.2 (now 2025-06-01).
    #[test]
    fn classifications() {
        let now = t("2025-06-01");
        let cases = [
            (json!({}), "supported"),
            (json!({"classification": "preview"}), "preview"),
            (json!({"expirationDate": "2025-05-01T00:00:00Z"}), "expired"),
            (
                json!({"classification": "deprecated", "expirationDate": "2025-07-01T00:00:00Z"}),
                "deprecated",
            ),
            (
                json!({"lifecycle": [{"classification": "supported", "startTime": "2025-07-01T00:00:00Z"}]}),
                "unavailable",
            ),
            (
                json!({"lifecycle": [
                    {"classification": "preview"},
                    {"classification": "supported", "startTime": "2025-05-01T00:00:00Z"},
                    {"classification": "deprecated", "startTime": "2025-08-01T00:00:00Z"}
                ]}),
                "supported",
            ),
            // A stage starting exactly now has not started (strictly before).
            (
                json!({"lifecycle": [{"classification": "preview", "startTime": "2025-06-01T00:00:00Z"}]}),
                "unavailable",
            ),
        ];
        for (version, expected) in cases {
            assert_eq!(classification(&version, now), expected, "{version}");
        }
    }

    #[test]
    fn status_and_next_instant() {
        let now = t("2025-06-01");
        let spec = json!({
            "kubernetes": {"versions": [
                {"version": "1.32.0"},
                {"version": "1.31.0", "classification": "deprecated", "expirationDate": "2025-07-01T00:00:00Z"}
            ]},
            "machineImages": [{"name": "gl", "versions": [
                {"version": "1", "lifecycle": [
                    {"classification": "preview", "startTime": "2025-05-01T00:00:00Z"},
                    {"classification": "supported", "startTime": "2025-06-20T00:00:00Z"}
                ]}
            ]}]
        });
        let (status, next) = status(&spec, now);
        assert_eq!(
            status,
            json!({
                "kubernetes": {"versions": [
                    {"version": "1.32.0", "classification": "supported"},
                    {"version": "1.31.0", "classification": "deprecated"}
                ]},
                "machineImages": [{"name": "gl", "versions": [{"version": "1", "classification": "preview"}]}]
            })
        );
        assert_eq!(next, Some(t("2025-06-20")));
        assert_eq!(
            super::status(&json!({"type": "local"}), now),
            (json!({}), None)
        );
    }
}
