//! Gardener conditions (`core.gardener.cloud/v1beta1` `Condition`) and pure helpers to find,
//! update and merge them with gardener's transition-time semantics, plus the condition-threshold
//! rule of the care controllers. Every helper takes `now` instead of reading a clock.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::names::reasons;

/// A Gardener condition as served by gardener-apiserver and written into extension and
/// ManagedResource statuses (same JSON shape in all three API groups).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Type of the condition (`GardenletReady`, `Installed`, `ResourcesApplied`, ...).
    #[serde(rename = "type")]
    pub type_: String,
    /// Status: `True`, `False`, `Unknown`, `Progressing` (or an unknown future value).
    pub status: ConditionStatus,
    /// Last time the status changed.
    pub last_transition_time: Time,
    /// Last time the status, reason, message or codes changed.
    pub last_update_time: Time,
    /// CamelCase reason of the last transition.
    pub reason: String,
    /// Human-readable details.
    pub message: String,
    /// Well-defined error codes (`ERR_INFRA_UNAUTHORIZED`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<String>,
}

/// Status of a [`Condition`]. Unknown values read from the API are kept verbatim in `Other` so an
/// object read and patched back does not lose them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    /// `True`.
    True,
    /// `False`.
    False,
    /// `Unknown`.
    Unknown,
    /// `Progressing`: a failure within the configured threshold, or a rollout in progress.
    Progressing,
    /// Any other value.
    Other(String),
}

impl ConditionStatus {
    /// The wire value.
    pub fn as_str(&self) -> &str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
            ConditionStatus::Progressing => "Progressing",
            ConditionStatus::Other(value) => value,
        }
    }

    /// Parses a wire value (exact, case-sensitive like Go).
    pub fn parse(value: &str) -> ConditionStatus {
        match value {
            "True" => ConditionStatus::True,
            "False" => ConditionStatus::False,
            "Unknown" => ConditionStatus::Unknown,
            "Progressing" => ConditionStatus::Progressing,
            other => ConditionStatus::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ConditionStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ConditionStatus {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Cow::<'de, str>::deserialize(deserializer)?;
        Ok(ConditionStatus::parse(&value))
    }
}

impl JsonSchema for ConditionStatus {
    fn schema_name() -> Cow<'static, str> {
        "ConditionStatus".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string" })
    }
}

impl Condition {
    /// A new condition of `type_`: `Unknown`, reason `ConditionInitialized`, both times `now`.
    pub fn initialized(type_: impl Into<String>, now: Timestamp) -> Condition {
        let now = stamp(now);
        Condition {
            type_: type_.into(),
            status: ConditionStatus::Unknown,
            last_transition_time: now.clone(),
            last_update_time: now,
            reason: reasons::CONDITION_INITIALIZED.to_owned(),
            message: reasons::CONDITION_INITIALIZED_MESSAGE.to_owned(),
            codes: Vec::new(),
        }
    }

    /// This condition with a new status, reason and message (codes cleared, like upstream, which
    /// never carries codes over). `lastTransitionTime` becomes `now` only when the status changes;
    /// `lastUpdateTime` becomes `now` when status, reason, message or codes change.
    pub fn updated(
        &self,
        status: ConditionStatus,
        reason: impl Into<String>,
        message: impl Into<String>,
        now: Timestamp,
    ) -> Condition {
        self.updated_with_codes(status, reason, message, Vec::new(), now)
    }

    /// Like [`Condition::updated`] with error codes.
    pub fn updated_with_codes(
        &self,
        status: ConditionStatus,
        reason: impl Into<String>,
        message: impl Into<String>,
        codes: Vec<String>,
        now: Timestamp,
    ) -> Condition {
        let mut next = Condition {
            type_: self.type_.clone(),
            status,
            last_transition_time: self.last_transition_time.clone(),
            last_update_time: self.last_update_time.clone(),
            reason: reason.into(),
            message: message.into(),
            codes,
        };
        if next.status != self.status {
            next.last_transition_time = stamp(now);
        }
        if next.status != self.status
            || next.reason != self.reason
            || next.message != self.message
            || next.codes != self.codes
        {
            next.last_update_time = stamp(now);
        }
        next
    }

    /// Whether the status is `True`.
    pub fn is_true(&self) -> bool {
        self.status == ConditionStatus::True
    }

    /// Whether status, reason, message and codes equal `other`'s (times ignored).
    pub fn same_state(&self, other: &Condition) -> bool {
        self.type_ == other.type_
            && self.status == other.status
            && self.reason == other.reason
            && self.message == other.message
            && self.codes == other.codes
    }
}

/// The condition of `type_`, if present.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|condition| condition.type_ == type_)
}

/// The condition of `type_`, or a freshly [initialised](Condition::initialized) one.
pub fn find_or_init(conditions: &[Condition], type_: &str, now: Timestamp) -> Condition {
    find(conditions, type_)
        .cloned()
        .unwrap_or_else(|| Condition::initialized(type_, now))
}

/// Sets the condition of `type_` in place (initialising it if absent) to the given status, reason
/// and message with [`Condition::updated`] semantics. Returns whether anything changed, so callers
/// can skip a status write.
pub fn set(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: ConditionStatus,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> bool {
    let old = find(conditions, type_).cloned();
    let base = old
        .clone()
        .unwrap_or_else(|| Condition::initialized(type_, now));
    let next = base.updated(status, reason, message, now);
    if old.as_ref() == Some(&next) {
        return false;
    }
    upsert(conditions, next);
    true
}

/// An object whose status carries a Gardener condition list; lets one conditions writer serve
/// every kind.
pub trait WithConditions {
    /// The conditions of the status (empty without status).
    fn conditions(&self) -> &[Condition];
}

/// Merges `updates` into `existing` by type: a same-type entry is replaced in place, new types are
/// appended in the order given. Other entries keep their position.
pub fn merge(
    existing: &[Condition],
    updates: impl IntoIterator<Item = Condition>,
) -> Vec<Condition> {
    let mut out = existing.to_vec();
    for condition in updates {
        upsert(&mut out, condition);
    }
    out
}

/// Removes all conditions of the given types.
pub fn remove(conditions: &[Condition], types: &[&str]) -> Vec<Condition> {
    conditions
        .iter()
        .filter(|condition| !types.contains(&condition.type_.as_str()))
        .cloned()
        .collect()
}

/// Whether writing `new` would change `existing` (compares everything, times included).
pub fn needs_update(existing: &[Condition], new: &[Condition]) -> bool {
    existing != new
}

/// The care controllers' rule for a failing check (gardener `FailedCondition` without the
/// lastOperation grace): a `True` condition turns `Progressing` when a positive threshold is
/// configured for its type (else `False`); a `Progressing` condition stays `Progressing` while
/// `now - lastTransitionTime <= threshold`, then turns `False`; any other status turns `False`.
pub fn progressing_or_false(
    condition: &Condition,
    threshold: Option<Duration>,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> Condition {
    let threshold = threshold
        .filter(|threshold| !threshold.is_zero())
        .map(|threshold| SignedDuration::try_from(threshold).unwrap_or(SignedDuration::MAX));
    let status = match (&condition.status, threshold) {
        (ConditionStatus::True, Some(_)) => ConditionStatus::Progressing,
        (ConditionStatus::Progressing, Some(threshold))
            if now.duration_since(condition.last_transition_time.0) <= threshold =>
        {
            ConditionStatus::Progressing
        }
        _ => ConditionStatus::False,
    };
    condition.updated(status, reason, message, now)
}

/// Replaces the same-type entry in place or appends.
fn upsert(conditions: &mut Vec<Condition>, condition: Condition) {
    match conditions
        .iter_mut()
        .find(|existing| existing.type_ == condition.type_)
    {
        Some(existing) => *existing = condition,
        None => conditions.push(condition),
    }
}

/// `now` truncated to whole seconds, the precision `metav1.Time` has on the wire, so a condition
/// built in memory equals its copy read back from the API server.
fn stamp(now: Timestamp) -> Time {
    Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn condition(status: ConditionStatus, reason: &str, transition: i64, update: i64) -> Condition {
        Condition {
            type_: "Healthy".into(),
            status,
            last_transition_time: Time(at(transition)),
            last_update_time: Time(at(update)),
            reason: reason.into(),
            message: "msg".into(),
            codes: Vec::new(),
        }
    }

    #[test]
    fn initialized_condition_is_unknown_with_initialized_reason() {
        let c = Condition::initialized("Valid", at(5));
        assert_eq!(c.type_, "Valid");
        assert_eq!(c.status, ConditionStatus::Unknown);
        assert_eq!(c.reason, "ConditionInitialized");
        assert_eq!(c.last_transition_time, Time(at(5)));
        assert_eq!(c.last_update_time, Time(at(5)));
    }

    #[test]
    fn updated_moves_times_only_for_relevant_changes() {
        use ConditionStatus::*;
        let old = condition(True, "Ok", 0, 10);
        // (status, reason, message, expected transition, expected update)
        let cases = [
            (True, "Ok", "msg", 0, 10),
            (True, "Ok", "other", 0, 100),
            (True, "Changed", "msg", 0, 100),
            (False, "Ok", "msg", 100, 100),
            (False, "Bad", "boom", 100, 100),
        ];
        for (status, reason, message, transition, update) in cases {
            let next = old.updated(status.clone(), reason, message, at(100));
            assert_eq!(
                next.last_transition_time,
                Time(at(transition)),
                "{status} {reason} {message}"
            );
            assert_eq!(
                next.last_update_time,
                Time(at(update)),
                "{status} {reason} {message}"
            );
            assert_eq!((next.status, next.reason.as_str()), (status, reason));
        }
    }

    #[test]
    fn updated_moves_update_time_when_codes_change() {
        let mut old = condition(ConditionStatus::False, "Bad", 0, 10);
        old.codes = vec!["ERR_INFRA_UNAUTHORIZED".into()];
        let next = old.updated(ConditionStatus::False, "Bad", "msg", at(50));
        assert!(next.codes.is_empty());
        assert_eq!(next.last_update_time, Time(at(50)));
        assert_eq!(next.last_transition_time, Time(at(0)));
    }

    #[test]
    fn stamped_times_are_truncated_to_seconds() {
        let now = Timestamp::from_millisecond(1_700_000_000_750).unwrap();
        let c = Condition::initialized("Valid", now);
        assert_eq!(
            c.last_update_time,
            Time(Timestamp::from_second(1_700_000_000).unwrap())
        );
    }

    #[test]
    fn set_reports_no_change_when_state_is_identical() {
        let mut conditions = vec![condition(ConditionStatus::True, "Ok", 0, 0)];
        assert!(!set(
            &mut conditions,
            "Healthy",
            ConditionStatus::True,
            "Ok",
            "msg",
            at(9)
        ));
        assert_eq!(conditions[0].last_update_time, Time(at(0)));
    }

    #[test]
    fn set_initialises_missing_condition_and_appends_it() {
        let mut conditions = vec![condition(ConditionStatus::True, "Ok", 0, 0)];
        assert!(set(
            &mut conditions,
            "Valid",
            ConditionStatus::True,
            "RegistrationValid",
            "ok",
            at(7)
        ));
        assert_eq!(conditions.len(), 2);
        let valid = find(&conditions, "Valid").unwrap();
        // Unknown (initialised) -> True is a transition at `now`.
        assert_eq!(valid.last_transition_time, Time(at(7)));
        assert_eq!(valid.status, ConditionStatus::True);
    }

    #[test]
    fn merge_replaces_in_place_and_appends_new_types() {
        let a = Condition {
            type_: "A".into(),
            ..condition(ConditionStatus::True, "x", 0, 0)
        };
        let b = Condition {
            type_: "B".into(),
            ..condition(ConditionStatus::True, "x", 0, 0)
        };
        let b2 = Condition {
            type_: "B".into(),
            ..condition(ConditionStatus::False, "y", 1, 1)
        };
        let c = Condition {
            type_: "C".into(),
            ..condition(ConditionStatus::True, "z", 0, 0)
        };
        let merged = merge(&[a.clone(), b], [c.clone(), b2.clone()]);
        assert_eq!(merged, vec![a, b2, c]);
    }

    #[test]
    fn remove_drops_listed_types() {
        let a = Condition {
            type_: "A".into(),
            ..condition(ConditionStatus::True, "x", 0, 0)
        };
        let b = Condition {
            type_: "B".into(),
            ..condition(ConditionStatus::True, "x", 0, 0)
        };
        assert_eq!(remove(&[a.clone(), b], &["B"]), vec![a]);
    }

    #[test]
    fn progressing_or_false_follows_threshold_table() {
        use ConditionStatus::*;
        let minute = Some(Duration::from_secs(60));
        // (old status, old transition, threshold, now, expected status)
        let cases = [
            (True, 0, minute, 10, Progressing),
            (True, 0, None, 10, False),
            (True, 0, Some(Duration::ZERO), 10, False),
            (Progressing, 0, minute, 60, Progressing),
            (Progressing, 0, minute, 61, False),
            (Progressing, 0, None, 1, False),
            (False, 0, minute, 1, False),
            (Unknown, 0, minute, 1, False),
        ];
        for (status, transition, threshold, now, expected) in cases {
            let old = condition(status.clone(), "Old", transition, transition);
            let next = progressing_or_false(&old, threshold, "Bad", "boom", at(now));
            assert_eq!(
                next.status, expected,
                "{status} after {now}s with {threshold:?}"
            );
            assert_eq!(next.reason, "Bad");
        }
    }

    #[test]
    fn progressing_keeps_transition_time_while_within_threshold() {
        let old = condition(ConditionStatus::Progressing, "Old", 5, 5);
        let next = progressing_or_false(&old, Some(Duration::from_secs(60)), "Bad", "boom", at(30));
        assert_eq!(next.last_transition_time, Time(at(5)));
        assert_eq!(next.last_update_time, Time(at(30)));
    }

    #[test]
    fn find_or_init_returns_existing_or_initialised_condition() {
        let conditions = vec![condition(ConditionStatus::True, "Ok", 0, 0)];
        assert_eq!(find_or_init(&conditions, "Healthy", at(9)), conditions[0]);
        let fresh = find_or_init(&conditions, "Valid", at(9));
        assert_eq!(
            (fresh.type_.as_str(), fresh.status),
            ("Valid", ConditionStatus::Unknown)
        );
        assert!(find(&conditions, "Valid").is_none());
    }

    #[test]
    fn needs_update_compares_whole_lists() {
        let old = vec![condition(ConditionStatus::True, "Ok", 0, 0)];
        assert!(!needs_update(&old, &old.clone()));
        let newer = merge(
            &old,
            [old[0].updated(ConditionStatus::False, "Bad", "m", at(1))],
        );
        assert!(needs_update(&old, &newer));
    }

    #[test]
    fn status_parse_is_exact_and_round_trips() {
        for (wire, status) in [
            ("True", ConditionStatus::True),
            ("False", ConditionStatus::False),
            ("Unknown", ConditionStatus::Unknown),
            ("Progressing", ConditionStatus::Progressing),
            ("true", ConditionStatus::Other("true".into())),
        ] {
            assert_eq!(ConditionStatus::parse(wire), status);
            assert_eq!(status.as_str(), wire);
        }
    }

    #[test]
    fn condition_round_trips_gardener_json_including_unknown_status() {
        let json = serde_json::json!({
            "type": "Installed",
            "status": "ConditionCheckError",
            "lastTransitionTime": "2024-01-02T03:04:05Z",
            "lastUpdateTime": "2024-01-02T03:04:06Z",
            "reason": "InstallationPending",
            "message": "pending",
            "codes": ["ERR_CONFIGURATION_PROBLEM"]
        });
        let parsed: Condition = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(
            parsed.status,
            ConditionStatus::Other("ConditionCheckError".into())
        );
        assert_eq!(serde_json::to_value(&parsed).unwrap(), json);
    }

    #[test]
    fn condition_without_codes_omits_the_field() {
        let c = Condition::initialized("Valid", at(0));
        let json = serde_json::to_value(&c).unwrap();
        assert!(json.get("codes").is_none());
        assert_eq!(json["status"], "Unknown");
    }
}
