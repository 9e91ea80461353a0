//! The operation type of a core object (spec §0 "OT"), the `gardener.cloud/timestamp` text, and
//! `lastOperation`/`lastError` values for core statuses.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use seedlet_api::common::{LastError, LastOperation, LastOperationState, LastOperationType};
use seedlet_api::names::annotations;
use serde_json::{Value, json};

/// The operation type of a core object, first match wins: annotation `migrate` → Migrate;
/// deleting → Delete; annotation `restore` → Restore; no lastOperation → Create; a last
/// Create/Migrate/Restore that did not succeed → that type; else Reconcile.
pub fn operation_type(
    object_annotations: &BTreeMap<String, String>,
    deleting: bool,
    last: Option<&LastOperation>,
) -> LastOperationType {
    let operation = object_annotations
        .get(annotations::OPERATION)
        .map(String::as_str);
    if operation == Some(annotations::OPERATION_MIGRATE) {
        return LastOperationType::Migrate;
    }
    if deleting {
        return LastOperationType::Delete;
    }
    if operation == Some(annotations::OPERATION_RESTORE) {
        return LastOperationType::Restore;
    }
    let Some(last) = last else {
        return LastOperationType::Create;
    };
    match last.type_ {
        LastOperationType::Create | LastOperationType::Migrate | LastOperationType::Restore
            if !last.succeeded() =>
        {
            last.type_
        }
        _ => LastOperationType::Reconcile,
    }
}

/// `gardener.cloud/timestamp`: UTC RFC 3339 with nanoseconds, trailing zeros dropped (Go's
/// `time.RFC3339Nano`).
pub fn timestamp(now: Timestamp) -> String {
    now.to_string()
}

/// Parses a `gardener.cloud/timestamp` value.
///
/// # Errors
/// The text when it is not an RFC 3339 time.
pub fn parse_timestamp(text: &str) -> Result<Timestamp, String> {
    text.parse::<Timestamp>()
        .map_err(|error| format!("invalid timestamp {text:?}: {error}"))
}

/// A `lastOperation` stamped `now` (seconds, as the API stores it).
pub fn last_operation(
    type_: LastOperationType,
    state: LastOperationState,
    progress: i32,
    description: impl Into<String>,
    now: Timestamp,
) -> LastOperation {
    LastOperation {
        description: description.into(),
        last_update_time: Time(truncate(now)),
        progress,
        state,
        type_,
    }
}

/// A core `lastError` as gardenlet writes it: description and codes only.
pub fn last_error(description: impl Into<String>, codes: Vec<String>) -> LastError {
    LastError {
        description: description.into(),
        task_id: None,
        codes,
        last_update_time: None,
    }
}

/// `now` truncated to whole seconds.
pub fn truncate(now: Timestamp) -> Timestamp {
    Timestamp::from_second(now.as_second()).unwrap_or(now)
}

/// The status fields of a core object's lastOperation/lastError write; `last_error: None` clears it.
pub fn status_fields(
    operation: &LastOperation,
    last_error: Option<&LastError>,
    observed_generation: Option<i64>,
) -> Value {
    let mut status = json!({
        "lastOperation": operation,
        "lastError": last_error,
    });
    if let Some(generation) = observed_generation {
        status["observedGeneration"] = json!(generation);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last(type_: LastOperationType, state: LastOperationState) -> LastOperation {
        last_operation(type_, state, 0, "", Timestamp::UNIX_EPOCH)
    }

    #[test]
    fn operation_type_first_match_wins() {
        use LastOperationState as S;
        use LastOperationType as T;
        let none = BTreeMap::new();
        let with =
            |value: &str| BTreeMap::from([(annotations::OPERATION.to_owned(), value.to_owned())]);
        type Case<'a> = (&'a BTreeMap<String, String>, bool, Option<LastOperation>, T);
        let cases: &[Case] = &[
            (&with("migrate"), true, None, T::Migrate),
            (&with("restore"), true, None, T::Delete),
            (
                &with("restore"),
                false,
                Some(last(T::Reconcile, S::Succeeded)),
                T::Restore,
            ),
            (&none, false, None, T::Create),
            (&none, false, Some(last(T::Create, S::Error)), T::Create),
            (
                &none,
                false,
                Some(last(T::Restore, S::Processing)),
                T::Restore,
            ),
            (&none, false, Some(last(T::Migrate, S::Error)), T::Migrate),
            (
                &none,
                false,
                Some(last(T::Create, S::Succeeded)),
                T::Reconcile,
            ),
            (&none, false, Some(last(T::Delete, S::Error)), T::Reconcile),
            (
                &with("reconcile"),
                false,
                Some(last(T::Reconcile, S::Error)),
                T::Reconcile,
            ),
        ];
        for (annotations, deleting, last, want) in cases {
            assert_eq!(
                operation_type(annotations, *deleting, last.as_ref()),
                *want,
                "{annotations:?} deleting={deleting} {last:?}"
            );
        }
    }

    #[test]
    fn timestamp_is_rfc3339_nano_without_trailing_zeros_and_parses_back() {
        let at = Timestamp::new(1_700_000_000, 120_000_000).unwrap();
        assert_eq!(timestamp(at), "2023-11-14T22:13:20.12Z");
        let whole = Timestamp::from_second(1_700_000_000).unwrap();
        assert_eq!(timestamp(whole), "2023-11-14T22:13:20Z");
        assert_eq!(parse_timestamp("2023-11-14T22:13:20.12Z").unwrap(), at);
        assert!(
            parse_timestamp("yesterday")
                .unwrap_err()
                .contains("yesterday")
        );
    }

    #[test]
    fn status_fields_clear_last_error_and_carry_generation() {
        let operation = last(LastOperationType::Create, LastOperationState::Processing);
        let status = status_fields(&operation, None, Some(3));
        assert_eq!(status["lastError"], Value::Null);
        assert_eq!(status["observedGeneration"], 3);
        assert_eq!(status["lastOperation"]["type"], "Create");
    }
}
