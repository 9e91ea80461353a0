//! Waiting for extension objects (spec `gardenlet-shoot-flow.md` §3.2): the readiness check of
//! one read (pure, with upstream's messages), and the polling loops for "ready", "gone" and
//! "migrated" with an interval, a severe threshold for errors the extension reports, and a
//! timeout. Errors keep the codes the extension put in `status.lastError.codes`.
//!
//! Reads start 250 ms apart and double up to the kind's interval, so a fast extension is
//! noticed quickly (upstream polls at the fixed interval from the start).

use std::time::Duration;

use kube::Api;
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::extensions::ExtensionObject;
use seedlet_api::names::annotations;
use tokio::time::Instant;

use super::object::is_gone;
use super::operation::parse_timestamp;

/// The first pause between reads; pauses double up to the kind's interval.
pub const FIRST_PAUSE: Duration = Duration::from_millis(250);

/// The pause after `pause`: doubled, at most `interval`.
fn next_pause(pause: Duration, interval: Duration) -> Duration {
    (pause * 2).min(interval)
}

/// Poll interval, severe threshold and timeout of one wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitTiming {
    /// Pause between reads.
    pub interval: Duration,
    /// How long an error the extension reports is tolerated before the wait gives up.
    pub severe: Duration,
    /// Overall bound.
    pub timeout: Duration,
}

impl WaitTiming {
    /// The timing of `interval`, `severe`, `timeout`.
    pub const fn new(interval: Duration, severe: Duration, timeout: Duration) -> WaitTiming {
        WaitTiming {
            interval,
            severe,
            timeout,
        }
    }
}

/// The result of one readiness check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// Reconciled with the requested timestamp and succeeded.
    Ready,
    /// Not yet; the text says why.
    Pending(String),
    /// The extension reports an error (`error during reconciliation: …`) with its codes.
    Failed {
        /// What went wrong.
        message: String,
        /// `status.lastError.codes`.
        codes: Vec<String>,
    },
}

/// Checks one read of an extension object against §3.2, in upstream's order; `timestamp` is the
/// `gardener.cloud/timestamp` the object carried when the wait began.
pub fn readiness<K: ExtensionObject>(object: &K, timestamp: Option<&str>) -> Readiness {
    let object_annotations = object.meta().annotations.as_ref();
    let current = object_annotations.and_then(|a| a.get(annotations::TIMESTAMP));
    if let Some(wanted) = timestamp
        && current.map(String::as_str) != Some(wanted)
    {
        return Readiness::Pending(format!(
            "annotation {} is not yet set to {wanted}",
            annotations::TIMESTAMP
        ));
    }
    let status = object.extension_status();
    if let Some(error) = status.and_then(|s| s.last_error.as_ref()) {
        return Readiness::Failed {
            message: format!("error during reconciliation: {}", error.description),
            codes: error.codes.clone(),
        };
    }
    let generation = object.meta().generation.unwrap_or(0);
    let observed = status.and_then(|s| s.observed_generation).unwrap_or(0);
    if observed != generation {
        return Readiness::Pending(format!(
            "observed generation outdated ({observed}/{generation})"
        ));
    }
    if let Some(operation) = object_annotations.and_then(|a| a.get(annotations::OPERATION)) {
        return Readiness::Pending(format!(
            "gardener operation {operation:?} is not yet picked up by controller"
        ));
    }
    let Some(last) = status.and_then(|s| s.last_operation.as_ref()) else {
        return Readiness::Pending("extension did not record a last operation yet".to_owned());
    };
    if last.state != LastOperationState::Succeeded {
        return Readiness::Pending(format!(
            "extension state is not succeeded but {:?}",
            last.state
        ));
    }
    if let Some(requested) = current.and_then(|text| parse_timestamp(text).ok()) {
        let requested = super::operation::truncate(requested);
        if requested > last.last_update_time.0 {
            return Readiness::Pending(format!(
                "extension is not reconciled yet - reconciliation requested at {requested}"
            ));
        }
    }
    Readiness::Ready
}

/// Why a wait ended without success.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WaitError {
    /// The full message (`Error while waiting for <Kind> <ns>/<name> to become ready: …`).
    pub message: String,
    /// The extension's error codes, if it reported any.
    pub codes: Vec<String>,
}

/// Polls `name` until [`readiness`] says ready; an error the extension reports for longer than
/// the severe threshold, or the timeout, ends the wait.
///
/// # Errors
/// [`WaitError`] with upstream's wording and the extension's codes.
pub async fn wait_ready<K: ExtensionObject>(
    api: &Api<K>,
    key: &str,
    name: &str,
    timestamp: Option<&str>,
    timing: WaitTiming,
) -> Result<K, WaitError> {
    let kind = K::kind(&());
    let wrap = |message: String, codes: Vec<String>| WaitError {
        message: format!("Error while waiting for {kind} {key} to become ready: {message}"),
        codes,
    };
    let started = Instant::now();
    let mut pause = FIRST_PAUSE.min(timing.interval);
    let mut failing_since: Option<Instant> = None;
    loop {
        let last = match api.get_opt(name).await {
            Ok(Some(object)) => match readiness(&object, timestamp) {
                Readiness::Ready => return Ok(object),
                Readiness::Pending(message) => {
                    failing_since = None;
                    (message, Vec::new())
                }
                Readiness::Failed { message, codes } => {
                    let since = *failing_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= timing.severe {
                        return Err(wrap(message, codes));
                    }
                    (message, codes)
                }
            },
            Ok(None) => (format!("{kind} {key} not found"), Vec::new()),
            Err(error) => (error.to_string(), Vec::new()),
        };
        if started.elapsed() + pause > timing.timeout {
            return Err(wrap(format!("retry timeout exceeded: {}", last.0), last.1));
        }
        tokio::time::sleep(pause).await;
        pause = next_pause(pause, timing.interval);
    }
}

/// Polls until `name` is gone. An error the extension reports (`status.lastError`) for longer
/// than the severe threshold ends the wait with its codes; at the timeout the last reported error
/// (if any) is the message. Upstream keeps polling until the timeout (up to 10 min for a Worker)
/// and only then reports the remembered error; ending at the severe threshold, as the ready wait
/// does, shows a stuck deletion in the shoot's `lastErrors` within half a minute.
///
/// # Errors
/// [`WaitError`] `Failed to delete <Kind> <key>: …`.
pub async fn wait_gone<K: ExtensionObject>(
    api: &Api<K>,
    key: &str,
    name: &str,
    timing: WaitTiming,
) -> Result<(), WaitError> {
    let kind = K::kind(&());
    let wrap = |message: String, codes: Vec<String>| WaitError {
        message: format!("Failed to delete {kind} {key}: {message}"),
        codes,
    };
    let started = Instant::now();
    let mut pause = FIRST_PAUSE.min(timing.interval);
    let mut reported = None;
    let mut failing_since: Option<Instant> = None;
    loop {
        match api.get_opt(name).await {
            Ok(None) => return Ok(()),
            Err(error) if is_gone(&error) => return Ok(()),
            Ok(Some(object)) => {
                if let Some(error) = object
                    .extension_status()
                    .and_then(|s| s.last_error.as_ref())
                {
                    let since = *failing_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= timing.severe {
                        return Err(wrap(error.description.clone(), error.codes.clone()));
                    }
                    reported = Some((error.description.clone(), error.codes.clone()));
                } else {
                    failing_since = None;
                }
            }
            Err(_) => {}
        }
        if started.elapsed() + pause > timing.timeout {
            let (message, codes) = reported.unwrap_or_else(|| {
                (
                    "resource is still present (retry timeout exceeded)".to_owned(),
                    Vec::new(),
                )
            });
            return Err(wrap(message, codes));
        }
        tokio::time::sleep(pause).await;
        pause = next_pause(pause, timing.interval);
    }
}

/// Polls until `name` is gone or its lastOperation is a succeeded `Migrate`.
///
/// # Errors
/// [`WaitError`] at the timeout.
pub async fn wait_migrated<K: ExtensionObject>(
    api: &Api<K>,
    key: &str,
    name: &str,
    timing: WaitTiming,
) -> Result<(), WaitError> {
    let kind = K::kind(&());
    let started = Instant::now();
    let mut pause = FIRST_PAUSE.min(timing.interval);
    loop {
        match api.get_opt(name).await {
            Ok(None) => return Ok(()),
            Ok(Some(object)) => {
                let last = object
                    .extension_status()
                    .and_then(|s| s.last_operation.as_ref());
                if last.is_some_and(|op| op.type_ == LastOperationType::Migrate && op.succeeded()) {
                    return Ok(());
                }
            }
            Err(error) if is_gone(&error) => return Ok(()),
            Err(_) => {}
        }
        if started.elapsed() + pause > timing.timeout {
            return Err(WaitError {
                message: format!(
                    "Error while waiting for {kind} {key} to be migrated: retry timeout exceeded"
                ),
                codes: Vec::new(),
            });
        }
        tokio::time::sleep(pause).await;
        pause = next_pause(pause, timing.interval);
    }
}

#[cfg(test)]
mod tests {
    use seedlet_api::extensions::Infrastructure;
    use serde_json::{Value, json};

    use super::*;

    fn infra(annotations: Value, generation: i64, status: Value) -> Infrastructure {
        serde_json::from_value(json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Infrastructure",
            "metadata": {"name": "s", "namespace": "shoot--p--s", "generation": generation,
                         "annotations": annotations},
            "spec": {"type": "local", "region": "r", "secretRef": {"name": "cloudprovider", "namespace": "shoot--p--s"}},
            "status": status,
        }))
        .unwrap()
    }

    fn op(state: &str, time: &str) -> Value {
        json!({"type": "Reconcile", "state": state, "progress": 100, "description": "", "lastUpdateTime": time})
    }

    #[test]
    fn pauses_double_up_to_the_interval() {
        let interval = Duration::from_secs(5);
        let mut pause = FIRST_PAUSE;
        let mut seen = Vec::new();
        for _ in 0..6 {
            seen.push(pause.as_millis());
            pause = next_pause(pause, interval);
        }
        assert_eq!(seen, [250, 500, 1000, 2000, 4000, 5000]);
    }

    #[test]
    fn readiness_checks_in_upstream_order() {
        let stamp = "2025-01-06T12:00:00.5Z";
        let with_stamp = json!({"gardener.cloud/timestamp": stamp});
        let pending = |text: &str| Readiness::Pending(text.to_owned());
        let cases = [
            (
                json!({}),
                1,
                json!({"observedGeneration": 1, "lastOperation": op("Succeeded", "2025-01-06T12:00:00Z")}),
                None,
                Readiness::Ready,
            ),
            (
                with_stamp.clone(),
                1,
                json!({"observedGeneration": 1, "lastOperation": op("Succeeded", "2025-01-06T12:00:00Z")}),
                Some(stamp),
                Readiness::Ready,
            ),
            (
                json!({"gardener.cloud/timestamp": "2025-01-06T11:00:00Z"}),
                1,
                json!({}),
                Some(stamp),
                pending(
                    "annotation gardener.cloud/timestamp is not yet set to 2025-01-06T12:00:00.5Z",
                ),
            ),
            (
                json!({}),
                2,
                json!({"observedGeneration": 1, "lastError": {"description": "quota", "codes": ["ERR_INFRA_QUOTA_EXCEEDED"]}}),
                None,
                Readiness::Failed {
                    message: "error during reconciliation: quota".into(),
                    codes: vec!["ERR_INFRA_QUOTA_EXCEEDED".into()],
                },
            ),
            (
                json!({}),
                2,
                json!({"observedGeneration": 1}),
                None,
                pending("observed generation outdated (1/2)"),
            ),
            (
                json!({"gardener.cloud/operation": "reconcile"}),
                1,
                json!({"observedGeneration": 1}),
                None,
                pending("gardener operation \"reconcile\" is not yet picked up by controller"),
            ),
            (
                json!({}),
                1,
                json!({"observedGeneration": 1}),
                None,
                pending("extension did not record a last operation yet"),
            ),
            (
                json!({}),
                1,
                json!({"observedGeneration": 1, "lastOperation": op("Processing", "2025-01-06T12:00:00Z")}),
                None,
                pending("extension state is not succeeded but Processing"),
            ),
            (
                json!({"gardener.cloud/timestamp": "2025-01-06T12:00:01Z"}),
                1,
                json!({"observedGeneration": 1, "lastOperation": op("Succeeded", "2025-01-06T12:00:00Z")}),
                None,
                pending(
                    "extension is not reconciled yet - reconciliation requested at 2025-01-06T12:00:01Z",
                ),
            ),
        ];
        for (annotations, generation, status, timestamp, want) in cases {
            let object = infra(annotations.clone(), generation, status.clone());
            assert_eq!(
                readiness(&object, timestamp),
                want,
                "{annotations} {status}"
            );
        }
    }
}
