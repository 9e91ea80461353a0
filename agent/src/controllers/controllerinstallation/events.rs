//! Which change of a ControllerInstallation's `Installed` condition becomes a Kubernetes Event:
//! a change of status or reason (not of the message alone, which would flood while a rollout is
//! pending); Warning for a `…Failed` reason, Normal otherwise; `Unknown` is not reported.

use seedlet_api::conditions::{Condition, ConditionStatus};
use seedlet_runtime::events::EventType;

/// The Event `(type, reason, note)` for `Installed` going from `before` to `after`, if any.
pub fn installed_event<'a>(
    before: Option<(&ConditionStatus, &str)>,
    after: &'a Condition,
) -> Option<(EventType, &'a str, &'a str)> {
    if before == Some((&after.status, after.reason.as_str())) {
        return None;
    }
    let kind = match after.status {
        ConditionStatus::True => EventType::Normal,
        ConditionStatus::False if after.reason.ends_with("Failed") => EventType::Warning,
        ConditionStatus::False => EventType::Normal,
        _ => return None,
    };
    Some((kind, &after.reason, &after.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn installed(status: ConditionStatus, reason: &str) -> Condition {
        let now = jiff::Timestamp::from_second(10).unwrap();
        Condition::initialized("Installed", now).updated(status, reason, "note", now)
    }

    #[test]
    fn only_a_change_of_status_or_reason_is_an_event() {
        use ConditionStatus::{False, True, Unknown};
        type Case<'a> = (
            Option<(ConditionStatus, &'a str)>,
            ConditionStatus,
            &'a str,
            Option<EventType>,
        );
        let cases: [Case; 6] = [
            (
                None,
                True,
                "InstallationSuccessful",
                Some(EventType::Normal),
            ),
            (
                Some((False, "InstallationPending")),
                True,
                "InstallationSuccessful",
                Some(EventType::Normal),
            ),
            (
                Some((True, "InstallationSuccessful")),
                True,
                "InstallationSuccessful",
                None,
            ),
            (
                Some((True, "InstallationSuccessful")),
                False,
                "InstallationFailed",
                Some(EventType::Warning),
            ),
            (
                Some((True, "InstallationSuccessful")),
                False,
                "InstallationPending",
                Some(EventType::Normal),
            ),
            (
                Some((False, "InstallationFailed")),
                Unknown,
                "InstallationPending",
                None,
            ),
        ];
        for (before, status, reason, expected) in cases {
            let after = installed(status, reason);
            let before = before.as_ref().map(|(s, r)| (s, *r));
            let event = installed_event(before, &after);
            assert_eq!(
                event.map(|(kind, ..)| kind),
                expected,
                "{before:?} -> {reason}"
            );
            if let Some((_, r, note)) = event {
                assert_eq!((r, note), (reason, "note"));
            }
        }
    }
}
