//! How one care pass turns a check's result into the next condition (spec §7.5, §7.7): the
//! threshold rule for failed checks (which also looks at the shoot's last operation), pardoning
//! while the shoot is being created, deleted or reconciled without errors, and the hibernated
//! state. Pure: every function takes `now`.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use seedlet_api::common::{LastOperation, LastOperationState, LastOperationType};
use seedlet_api::conditions::{Condition, ConditionStatus};

/// Reason of every condition and constraint of a hibernated shoot.
pub const NOT_CHECKED: &str = "ConditionNotChecked";
/// Reason of the constraints of a hibernated shoot.
pub const CONSTRAINT_NOT_CHECKED: &str = "ConstraintNotChecked";
/// Message of every condition and constraint of a hibernated shoot.
pub const HIBERNATED_MESSAGE: &str = "Shoot cluster has been hibernated.";

/// What the threshold rule needs to know about the shoot besides the condition itself.
#[derive(Clone, Debug)]
pub struct Judge<'a> {
    /// `controllers.shootCare.conditionThresholds` by condition type.
    pub thresholds: &'a BTreeMap<String, Duration>,
    /// The shoot's `status.lastOperation`.
    pub last_operation: Option<&'a LastOperation>,
    /// Now.
    pub now: Timestamp,
}

impl Judge<'_> {
    /// The next condition after a failed check (gardener's `FailedCondition`): a healthy
    /// condition turns `Progressing` when its type has a threshold, a `Progressing` one stays so
    /// while the last operation succeeded within the threshold or its transition is within it, a
    /// `False` one turns back to `Progressing` when a threshold exists and the last operation
    /// succeeded within it or the reason changed; everything else (and every type without a
    /// threshold) turns `False`.
    pub fn failed(
        &self,
        previous: &Condition,
        reason: &str,
        message: &str,
        codes: Vec<String>,
    ) -> Condition {
        let threshold = self.thresholds.get(&previous.type_).map(|d| signed(*d));
        let status = match (&previous.status, threshold) {
            (ConditionStatus::True, Some(_)) => ConditionStatus::Progressing,
            (ConditionStatus::Progressing, Some(threshold))
                if self.succeeded_within(threshold)
                    || self.now.duration_since(previous.last_transition_time.0) <= threshold =>
            {
                ConditionStatus::Progressing
            }
            (ConditionStatus::False, Some(threshold))
                if self.succeeded_within(threshold) || previous.reason != reason =>
            {
                ConditionStatus::Progressing
            }
            _ => ConditionStatus::False,
        };
        previous.updated_with_codes(status, reason, message, codes, self.now)
    }

    /// Whether the last operation succeeded no longer than `threshold` ago.
    fn succeeded_within(&self, threshold: SignedDuration) -> bool {
        self.last_operation.is_some_and(|operation| {
            operation.state == LastOperationState::Succeeded
                && self.now.duration_since(operation.last_update_time.0) <= threshold
        })
    }
}

/// Whether `False` conditions and constraints are pardoned (shown as `Progressing`): while the
/// shoot has no last operation, while a creation or deletion has not succeeded, and while an
/// operation is processing without errors.
pub fn pardoned(last_operation: Option<&LastOperation>, has_last_errors: bool) -> bool {
    let Some(operation) = last_operation else {
        return true;
    };
    let succeeded = operation.state == LastOperationState::Succeeded;
    let creating_or_deleting = matches!(
        operation.type_,
        LastOperationType::Create | LastOperationType::Delete
    );
    (creating_or_deleting && !succeeded)
        || (operation.state == LastOperationState::Processing && !has_last_errors)
}

/// `conditions` with every `False` entry turned `Progressing` (reason, message and codes kept)
/// when [`pardoned`] says so. The pardoned entry is built from the stored one of its type, so a
/// condition that stays pardoned keeps its times instead of passing through `False` on every pass
/// (upstream rewrites it each time [QUIRK]).
pub fn pardon(
    conditions: Vec<Condition>,
    stored: &[Condition],
    last_operation: Option<&LastOperation>,
    has_last_errors: bool,
    now: Timestamp,
) -> Vec<Condition> {
    if !pardoned(last_operation, has_last_errors) {
        return conditions;
    }
    conditions
        .into_iter()
        .map(|condition| {
            if condition.status != ConditionStatus::False {
                return condition;
            }
            let base =
                seedlet_api::conditions::find(stored, &condition.type_).unwrap_or(&condition);
            base.updated_with_codes(
                ConditionStatus::Progressing,
                condition.reason.clone(),
                condition.message.clone(),
                condition.codes.clone(),
                now,
            )
        })
        .collect()
}

/// A condition of a hibernated shoot: `True` with `reason`, not checked.
pub fn hibernated(previous: &Condition, reason: &str, now: Timestamp) -> Condition {
    previous.updated(ConditionStatus::True, reason, HIBERNATED_MESSAGE, now)
}

fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_750_000_000 + second).unwrap()
    }

    fn condition(status: ConditionStatus, reason: &str, transition: i64) -> Condition {
        Condition {
            type_: "ControlPlaneHealthy".into(),
            status,
            last_transition_time: Time(at(transition)),
            last_update_time: Time(at(transition)),
            reason: reason.into(),
            message: "m".into(),
            codes: Vec::new(),
        }
    }

    fn operation(
        type_: LastOperationType,
        state: LastOperationState,
        at: Timestamp,
    ) -> LastOperation {
        LastOperation {
            description: String::new(),
            last_update_time: Time(at),
            progress: 100,
            state,
            type_,
        }
    }

    /// (previous, threshold?, last operation, now, reason, expected).
    type FailedCase<'a> = (
        Condition,
        bool,
        Option<&'a LastOperation>,
        i64,
        &'a str,
        ConditionStatus,
    );

    #[test]
    fn failed_follows_the_threshold_rule_of_the_spec() {
        use ConditionStatus::*;
        let with = BTreeMap::from([("ControlPlaneHealthy".to_owned(), Duration::from_secs(60))]);
        let without = BTreeMap::new();
        let succeeded_recently = operation(
            LastOperationType::Reconcile,
            LastOperationState::Succeeded,
            at(50),
        );
        let succeeded_long_ago = operation(
            LastOperationType::Reconcile,
            LastOperationState::Succeeded,
            at(-1000),
        );
        // (previous, threshold?, last operation, now, reason, expected)
        let cases: Vec<FailedCase<'_>> = vec![
            (condition(True, "Ok", 0), true, None, 10, "R", Progressing),
            (condition(True, "Ok", 0), false, None, 10, "R", False),
            (
                condition(Progressing, "R", 0),
                true,
                None,
                60,
                "R",
                Progressing,
            ),
            (condition(Progressing, "R", 0), true, None, 61, "R", False),
            (
                condition(Progressing, "R", 0),
                true,
                Some(&succeeded_recently),
                100,
                "R",
                Progressing,
            ),
            (
                condition(Progressing, "R", 0),
                true,
                Some(&succeeded_long_ago),
                100,
                "R",
                False,
            ),
            (condition(Progressing, "R", 0), false, None, 1, "R", False),
            (condition(False, "R", 0), true, None, 100, "R", False),
            (
                condition(False, "R", 0),
                true,
                None,
                100,
                "Other",
                Progressing,
            ),
            (
                condition(False, "R", 0),
                true,
                Some(&succeeded_recently),
                100,
                "R",
                Progressing,
            ),
            (condition(False, "R", 0), false, None, 100, "Other", False),
            (
                condition(Unknown, "ConditionInitialized", 0),
                true,
                None,
                1,
                "R",
                False,
            ),
        ];
        for (previous, threshold, last_operation, now, reason, expected) in cases {
            let judge = Judge {
                thresholds: if threshold { &with } else { &without },
                last_operation,
                now: at(now),
            };
            let next = judge.failed(&previous, reason, "failing", vec!["ERR_X".into()]);
            assert_eq!(
                next.status, expected,
                "{:?} threshold={threshold} now={now} reason={reason}",
                previous.status
            );
            assert_eq!(next.reason, reason);
            assert_eq!(next.codes, ["ERR_X"]);
        }
    }

    #[test]
    fn pardoning_applies_while_creating_deleting_or_processing_without_errors() {
        use LastOperationState as S;
        use LastOperationType as T;
        let cases = [
            (None, false, true),
            (Some((T::Create, S::Processing)), true, true),
            (Some((T::Create, S::Error)), true, true),
            (Some((T::Create, S::Succeeded)), false, false),
            (Some((T::Delete, S::Failed)), true, true),
            (Some((T::Reconcile, S::Processing)), false, true),
            (Some((T::Reconcile, S::Processing)), true, false),
            (Some((T::Reconcile, S::Error)), false, false),
            (Some((T::Reconcile, S::Succeeded)), false, false),
        ];
        for (last, errors, expected) in cases {
            let operation = last.map(|(type_, state)| operation(type_, state, at(0)));
            assert_eq!(
                pardoned(operation.as_ref(), errors),
                expected,
                "{last:?} {errors}"
            );
        }
    }

    #[test]
    fn pardon_turns_only_false_into_progressing_and_keeps_the_reason() {
        let conditions = vec![
            condition(ConditionStatus::False, "Broken", 0),
            condition(ConditionStatus::Unknown, "ConditionCheckError", 0),
            condition(ConditionStatus::True, "Ok", 0),
        ];
        let pardoned = pardon(conditions.clone(), &[], None, false, at(5));
        let seen: Vec<_> = pardoned
            .iter()
            .map(|c| (c.status.clone(), c.reason.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                (ConditionStatus::Progressing, "Broken"),
                (ConditionStatus::Unknown, "ConditionCheckError"),
                (ConditionStatus::True, "Ok"),
            ]
        );
        assert_eq!(pardoned[0].last_transition_time, Time(at(5)));
        let succeeded = operation(
            LastOperationType::Reconcile,
            LastOperationState::Succeeded,
            at(0),
        );
        assert_eq!(
            pardon(conditions.clone(), &[], Some(&succeeded), false, at(5)),
            conditions
        );
    }

    #[test]
    fn a_condition_that_stays_pardoned_keeps_its_times() {
        let stored = vec![condition(ConditionStatus::Progressing, "Broken", 0)];
        // The check turned the stored Progressing into False at t=100; pardoning restores it.
        let failed = stored[0].updated(ConditionStatus::False, "Broken", "m", at(100));
        let next = pardon(vec![failed], &stored, None, false, at(100));
        assert_eq!(next, stored);
    }
}
