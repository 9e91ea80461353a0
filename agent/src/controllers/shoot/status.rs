//! Shoot status bookkeeping (spec §2) as pure functions returning JSON merge patches for
//! `/status`: operation start, progress, success and error, and the `lastErrors` of a flow.

use std::time::Duration;

use jiff::Timestamp;
use seedlet_api::common::{LastError, LastOperationType};
use seedlet_api::core::{GardenerInfo, Shoot};
use seedlet_runtime::flow::{FlowError, TaskFailure};
use serde_json::{Value, json};

use super::tasks::TaskError;

/// Codes after which gardenlet does not retry (spec §2.6).
pub const NON_RETRYABLE_CODES: [&str; 6] = [
    "ERR_INFRA_UNAUTHENTICATED",
    "ERR_INFRA_UNAUTHORIZED",
    "ERR_INFRA_QUOTA_EXCEEDED",
    "ERR_INFRA_RATE_LIMITS_EXCEEDED",
    "ERR_INFRA_DEPENDENCIES",
    "ERR_CONFIGURATION_PROBLEM",
];
/// Suffix of descriptions of operations that will be retried.
pub const RETRY_SUFFIX: &str = " Operation will be retried.";

/// The flow name of an operation type (progress descriptions, errors).
pub fn flow_name(type_: LastOperationType) -> &'static str {
    match type_ {
        LastOperationType::Restore => "Shoot cluster restoration",
        LastOperationType::Delete => "Shoot cluster deletion",
        LastOperationType::Migrate => "Shoot cluster preparation for migration",
        _ => "Shoot cluster reconciliation",
    }
}

/// The description of an operation's start.
pub fn start_description(type_: LastOperationType) -> &'static str {
    match type_ {
        LastOperationType::Restore => "Restoration of Shoot cluster initialized.",
        LastOperationType::Migrate => "Preparation of Shoot cluster for migration initialized.",
        LastOperationType::Delete => "Deletion of Shoot cluster in progress.",
        _ => "Reconciliation of Shoot cluster initialized.",
    }
}

/// The description of an operation's success.
pub fn success_description(type_: LastOperationType) -> &'static str {
    match type_ {
        LastOperationType::Restore => "Shoot cluster has been successfully restored.",
        LastOperationType::Migrate => "Shoot cluster has been successfully prepared for migration.",
        LastOperationType::Delete => "Shoot cluster has been successfully deleted.",
        _ => "Shoot cluster has been successfully reconciled.",
    }
}

fn time(now: Timestamp) -> String {
    crate::extension_sync::operation::truncate(now).to_string()
}

fn operation(
    type_: LastOperationType,
    state: &str,
    progress: i32,
    description: &str,
    now: Timestamp,
) -> Value {
    json!({"type": type_, "state": state, "progress": progress, "description": description,
           "lastUpdateTime": time(now)})
}

/// The status patch of §2.1: Processing at 0 %, identity, observed generation, technical ID and
/// seed name, a new retry cycle when one is due, and lastErrors without `initializeOperation`.
pub fn start(
    shoot: &Shoot,
    type_: LastOperationType,
    identity: &GardenerInfo,
    technical_id: &str,
    now: Timestamp,
) -> Value {
    let status = shoot.status.clone().unwrap_or_default();
    let generation = shoot.metadata.generation;
    let new_cycle = status.retry_cycle_start_time.is_none()
        || generation != status.observed_generation
        || status.gardener.as_ref().map(|g| g.version.as_str()) != Some(identity.version.as_str())
        || (type_ == LastOperationType::Delete
            && shoot
                .last_operation()
                .is_some_and(|op| op.type_ != LastOperationType::Delete));
    let errors: Vec<&LastError> = status
        .last_errors
        .iter()
        .filter(|error| error.task_id.as_deref() != Some("initializeOperation"))
        .collect();
    let mut patch = json!({
        "gardener": identity,
        "observedGeneration": generation,
        "lastOperation": operation(type_, "Processing", 0, start_description(type_), now),
        "lastErrors": if errors.is_empty() { Value::Null } else { json!(errors) },
    });
    if new_cycle {
        patch["retryCycleStartTime"] = json!(time(now));
    }
    if status.technical_id.as_deref().is_none_or(str::is_empty) {
        patch["technicalID"] = json!(technical_id);
    }
    if !matches!(
        type_,
        LastOperationType::Migrate | LastOperationType::Delete
    ) {
        patch["seedName"] = json!(shoot.spec.seed_name);
    }
    patch
}

/// The progress patch of §2.2.
pub fn progress(
    type_: LastOperationType,
    percent: i32,
    running: &[String],
    now: Timestamp,
) -> Value {
    let description = if percent >= 100 {
        format!("{} finished", flow_name(type_))
    } else if running.is_empty() {
        format!("Starting {}", flow_name(type_))
    } else {
        running.join(", ")
    };
    json!({"lastOperation": operation(type_, "Processing", percent, &description, now)})
}

/// The success patch of §2.3.
pub fn success(shoot: &Shoot, type_: LastOperationType, hibernated: bool, now: Timestamp) -> Value {
    let mut patch = json!({
        "retryCycleStartTime": null,
        "lastErrors": null,
        "hibernated": hibernated,
        "lastOperation": operation(type_, "Succeeded", 100, success_description(type_), now),
    });
    if type_ != LastOperationType::Delete {
        patch["seedName"] = json!(shoot.spec.seed_name);
    }
    patch
}

/// What failed, for [`error`].
#[derive(Debug, Clone, Copy)]
pub struct Failure<'a> {
    /// The operation type.
    pub type_: LastOperationType,
    /// The description (without retry suffix).
    pub description: &'a str,
    /// The lastErrors to write.
    pub last_errors: &'a [LastError],
    /// `Error` even when the operation would not be retried (the seed gate).
    pub force_retry: bool,
}

/// The error patch of §2.4: `Failed` (retry cycle cleared) when a non-retryable code is present
/// or the retry cycle is over and `force_retry` is false; else `Error` with the retry suffix.
pub fn error(
    shoot: &Shoot,
    failure: &Failure<'_>,
    identity: &GardenerInfo,
    retry_duration: Duration,
    now: Timestamp,
) -> Value {
    let Failure {
        type_,
        description,
        last_errors,
        force_retry,
    } = *failure;
    let status = shoot.status.as_ref();
    let non_retryable = last_errors
        .iter()
        .flat_map(|e| e.codes.iter())
        .any(|code| NON_RETRYABLE_CODES.contains(&code.as_str()));
    let cycle_over = status
        .and_then(|s| s.retry_cycle_start_time.as_ref())
        .is_none_or(|start| {
            let end = start.0 + jiff::SignedDuration::try_from(retry_duration).unwrap_or_default();
            now > end
        });
    let progress = shoot.last_operation().map_or(0, |op| op.progress);
    let mut patch = json!({"gardener": identity, "lastErrors": last_errors});
    if (non_retryable || cycle_over) && !force_retry {
        patch["lastOperation"] = operation(type_, "Failed", progress, description, now);
        patch["retryCycleStartTime"] = Value::Null;
    } else {
        let text = format!("{description}{RETRY_SUFFIX}");
        patch["lastOperation"] = operation(type_, "Error", progress, &text, now);
    }
    patch
}

/// Upper-cases the first letter (the flow error becomes the description).
pub fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The `lastErrors` an operation-start patch ([`start`]) keeps, which the flow's failure report
/// starts from.
pub fn previous_errors(start: &Value) -> Vec<LastError> {
    start
        .get("lastErrors")
        .and_then(|errors| serde_json::from_value(errors.clone()).ok())
        .unwrap_or_default()
}

/// The `lastErrors` after a failed flow and the operation's description: one entry per failed
/// task with the codes its extension reported (a timeout has none), the previous entries of the
/// other tasks kept (§2.5).
pub fn flow_failure(
    previous: Vec<LastError>,
    error: &FlowError<TaskError>,
    now: Timestamp,
) -> (Vec<LastError>, String) {
    let failures: Vec<(String, String, Vec<String>)> = error
        .failures
        .iter()
        .map(|(task, failure)| {
            let codes = match failure {
                TaskFailure::Failed(TaskError { codes, .. }) => codes.clone(),
                TaskFailure::TimedOut(_) => Vec::new(),
            };
            (task.clone(), failure.to_string(), codes)
        })
        .collect();
    let mut errors: Vec<LastError> = previous
        .into_iter()
        .filter(|e| {
            !failures
                .iter()
                .any(|(task, _, _)| e.task_id.as_deref() == Some(task.as_str()))
        })
        .collect();
    errors.extend(task_errors(&failures, now));
    (errors, capitalize(&error.to_string()))
}

/// One lastError per failed task: `task "<t>" failed: <err>` with its codes.
pub fn task_errors(failures: &[(String, String, Vec<String>)], now: Timestamp) -> Vec<LastError> {
    failures
        .iter()
        .map(|(task, message, codes)| LastError {
            description: format!("task {task:?} failed: {message}"),
            task_id: Some(task.clone()),
            codes: codes.clone(),
            last_update_time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                crate::extension_sync::operation::truncate(now),
            )),
        })
        .collect()
}

/// `lastErrors` after `task` succeeded: its entry removed; `None` when nothing changed.
pub fn without_task(errors: &[LastError], task: &str) -> Option<Vec<LastError>> {
    let kept: Vec<LastError> = errors
        .iter()
        .filter(|e| e.task_id.as_deref() != Some(task))
        .cloned()
        .collect();
    (kept.len() != errors.len()).then_some(kept)
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
