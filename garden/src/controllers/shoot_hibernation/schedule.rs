//! Pure hibernation-schedule decisions: parsing `spec.hibernation.schedules[]` into cron
//! expressions bound to a time zone, the next and the latest activation, the window of missed
//! activations still acted upon, the winning action and the requeue delay. `now` is always an
//! argument.
//!
//! Cron syntax is robfig/cron's `ParseStandard` as Gardener uses it: five fields with month and
//! weekday names, `@daily`-style descriptors, day-of-month and day-of-week OR-ed when both are
//! restricted. Activations are computed by `croner` in the schedule's zone with the Vixie-cron
//! rules for daylight-saving changes: a fixed time that falls into a spring-forward gap fires at
//! the first instant after the gap, and one in a repeated fall-back hour fires once. robfig/cron
//! skips the former and fires twice for the latter; the clean behaviour is kept here since
//! either quirk would leave a shoot awake (or asleep) for a day or toggle it twice.

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use seedlet_api::core::HibernationSchedule;

/// How far back activations are looked for at most, whatever the last trigger time.
pub const MAX_LOOKBACK: SignedDuration = SignedDuration::from_hours(7 * 24);
/// Added to the next activation when requeueing, so the run lands just after it.
pub const REQUEUE_SLACK: SignedDuration = SignedDuration::from_millis(100);

/// What an activation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `start`: `spec.hibernation.enabled = true`.
    Hibernate,
    /// `end`: `spec.hibernation.enabled = false`.
    WakeUp,
}

impl Action {
    /// The value `spec.hibernation.enabled` gets.
    pub fn enabled(self) -> bool {
        self == Action::Hibernate
    }
}

/// One cron expression of a schedule, in its zone, with what it does.
#[derive(Debug, Clone)]
pub struct Parsed {
    cron: Cron,
    zone: TimeZone,
    /// What an activation does.
    pub action: Action,
}

/// A schedule entry that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// `location` is not a known time zone.
    #[error("schedules[{index}].location: unknown time zone {location:?}")]
    Location {
        /// Index of the schedule.
        index: usize,
        /// The location.
        location: String,
    },
    /// `start` or `end` is not a valid cron expression.
    #[error("schedules[{index}].{field}: invalid cron expression {expression:?}: {reason}")]
    Cron {
        /// Index of the schedule.
        index: usize,
        /// `start` or `end`.
        field: &'static str,
        /// The expression.
        expression: String,
        /// The parser's reason.
        reason: String,
    },
}

/// Parses every schedule in order: `start` (Hibernate) before `end` (WakeUp) of each entry.
///
/// # Errors
/// The first entry with an unknown location or an invalid expression.
pub fn parse(schedules: &[HibernationSchedule]) -> Result<Vec<Parsed>, ScheduleError> {
    let parser = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .dom_and_dow(false)
        .build();
    let mut parsed = Vec::new();
    for (index, schedule) in schedules.iter().enumerate() {
        let location = schedule.location.as_deref().unwrap_or("");
        let zone = if location.is_empty() {
            TimeZone::UTC
        } else {
            TimeZone::get(location).map_err(|_| ScheduleError::Location {
                index,
                location: location.to_owned(),
            })?
        };
        let entries = [
            ("start", &schedule.start, Action::Hibernate),
            ("end", &schedule.end, Action::WakeUp),
        ];
        for (field, expression, action) in entries {
            let Some(expression) = expression.as_deref().filter(|e| !e.is_empty()) else {
                continue;
            };
            let cron = parser
                .parse(expression)
                .map_err(|error| ScheduleError::Cron {
                    index,
                    field,
                    expression: expression.to_owned(),
                    reason: error.to_string(),
                })?;
            parsed.push(Parsed {
                cron,
                zone: zone.clone(),
                action,
            });
        }
    }
    Ok(parsed)
}

impl Parsed {
    /// The first activation strictly after `after`, or `None` when there is none.
    pub fn next(&self, after: Timestamp) -> Option<Timestamp> {
        self.cron
            .find_next_occurrence(&after.to_zoned(self.zone.clone()), false)
            .ok()
            .map(|zoned| zoned.timestamp())
    }

    /// The latest activation `a` with `from < a <= to`, or `None`.
    pub fn previous(&self, from: Timestamp, to: Timestamp) -> Option<Timestamp> {
        let latest = self
            .cron
            .find_previous_occurrence(&to.to_zoned(self.zone.clone()), true)
            .ok()?
            .timestamp();
        (latest > from && latest <= to).then_some(latest)
    }
}

/// Start of the window whose activations are still acted upon: the last trigger time (else the
/// creation time), but no earlier than `now - trigger_deadline` and `now - 7d`.
pub fn earliest(
    last_trigger: Option<Timestamp>,
    created: Timestamp,
    now: Timestamp,
    trigger_deadline: SignedDuration,
) -> Timestamp {
    let mut earliest = last_trigger.unwrap_or(created);
    let deadline = now.saturating_sub(trigger_deadline).unwrap_or(now);
    if deadline > earliest {
        earliest = deadline;
    }
    let lookback = now.saturating_sub(MAX_LOOKBACK).unwrap_or(now);
    if lookback > earliest {
        earliest = lookback;
    }
    earliest
}

/// The action of the latest activation in `(earliest, now]` over all schedules (ties: the first
/// parsed), or `None` when none fired.
pub fn due_action(schedules: &[Parsed], earliest: Timestamp, now: Timestamp) -> Option<Action> {
    let mut winner: Option<(Timestamp, Action)> = None;
    for schedule in schedules {
        if let Some(at) = schedule.previous(earliest, now)
            && winner.is_none_or(|(best, _)| at > best)
        {
            winner = Some((at, schedule.action));
        }
    }
    winner.map(|(_, action)| action)
}

/// Time from `now` to just after the next activation of any schedule, or `None` when no
/// schedule fires again.
pub fn requeue_after(schedules: &[Parsed], now: Timestamp) -> Option<SignedDuration> {
    schedules
        .iter()
        .filter_map(|schedule| schedule.next(now))
        .min()
        .map(|next| next.duration_since(now) + REQUEUE_SLACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(value: &str) -> Timestamp {
        value.parse().expect("timestamp")
    }

    fn schedule(
        start: Option<&str>,
        end: Option<&str>,
        location: Option<&str>,
    ) -> HibernationSchedule {
        HibernationSchedule {
            start: start.map(str::to_owned),
            end: end.map(str::to_owned),
            location: location.map(str::to_owned),
            ..HibernationSchedule::default()
        }
    }

    fn berlin_weekdays() -> Vec<Parsed> {
        parse(&[schedule(
            Some("0 20 * * 1-5"),
            Some("0 8 * * 1-5"),
            Some("Europe/Berlin"),
        )])
        .expect("valid")
    }

    const TWO_HOURS: SignedDuration = SignedDuration::from_hours(2);

    #[test]
    fn spec_example_hibernates_monday_evening_and_requeues_to_tuesday_morning() {
        let schedules = berlin_weekdays();
        let now = ts("2025-01-06T19:00:30Z");
        let earliest = earliest(None, ts("2025-01-01T00:00:00Z"), now, TWO_HOURS);
        assert_eq!(earliest, ts("2025-01-06T17:00:30Z"));
        assert_eq!(
            due_action(&schedules, earliest, now),
            Some(Action::Hibernate)
        );
        assert_eq!(
            requeue_after(&schedules, now),
            Some(SignedDuration::from_millis(
                11 * 3_600_000 + 59 * 60_000 + 30_100
            ))
        );
    }

    #[test]
    fn nothing_is_due_after_a_trigger_or_once_the_deadline_passed() {
        let schedules = berlin_weekdays();
        // Five minutes after the trigger at 19:00:30Z.
        let now = ts("2025-01-06T19:05:00Z");
        let from = earliest(
            Some(ts("2025-01-06T19:00:30Z")),
            ts("2025-01-01T00:00:00Z"),
            now,
            TWO_HOURS,
        );
        assert_eq!(due_action(&schedules, from, now), None);
        // Down until 21:30Z with the last trigger Monday morning: 19:00Z is older than 2h.
        let now = ts("2025-01-06T21:30:00Z");
        let from = earliest(
            Some(ts("2025-01-06T07:00:05Z")),
            ts("2025-01-01T00:00:00Z"),
            now,
            TWO_HOURS,
        );
        assert_eq!(from, ts("2025-01-06T19:30:00Z"));
        assert_eq!(due_action(&schedules, from, now), None);
    }

    #[test]
    fn saturday_has_no_activation_and_requeues_to_monday_morning() {
        let schedules = berlin_weekdays();
        let now = ts("2025-01-11T10:00:00Z");
        let from = earliest(None, ts("2025-01-01T00:00:00Z"), now, TWO_HOURS);
        assert_eq!(due_action(&schedules, from, now), None);
        let requeue = requeue_after(&schedules, now).expect("next activation");
        assert_eq!(now + requeue, ts("2025-01-13T07:00:00.1Z"));
    }

    #[test]
    fn location_shifts_activations_with_daylight_saving_time() {
        let schedules = parse(&[schedule(
            Some("0 20 * * *"),
            None,
            Some("America/Los_Angeles"),
        )])
        .expect("valid");
        // (evaluated after, expected next activation)
        let table = [
            ("2025-01-15T00:00:00Z", "2025-01-15T04:00:00Z"),
            ("2025-07-15T00:00:00Z", "2025-07-15T03:00:00Z"),
        ];
        for (after, expected) in table {
            assert_eq!(
                schedules[0].next(ts(after)),
                Some(ts(expected)),
                "after {after}"
            );
        }
    }

    #[test]
    fn daylight_saving_gaps_fire_after_the_gap_and_repeated_hours_fire_once() {
        let schedules =
            parse(&[schedule(Some("30 2 * * *"), None, Some("Europe/Berlin"))]).expect("valid");
        let hibernate = &schedules[0];
        // 2025-03-30 02:30 does not exist in Berlin: the activation is 03:00 CEST = 01:00Z.
        assert_eq!(
            hibernate.next(ts("2025-03-29T23:00:00Z")),
            Some(ts("2025-03-30T01:00:00Z"))
        );
        // 2025-10-26 02:30 happens twice: only the first (CEST, 00:30Z) fires.
        assert_eq!(
            hibernate.next(ts("2025-10-25T23:00:00Z")),
            Some(ts("2025-10-26T00:30:00Z"))
        );
        assert_eq!(
            hibernate.next(ts("2025-10-26T00:30:00Z")),
            Some(ts("2025-10-27T01:30:00Z"))
        );
    }

    #[test]
    fn activation_exactly_at_the_window_start_is_excluded() {
        let schedules = parse(&[schedule(Some("0 10 * * *"), None, None)]).expect("valid");
        let now = ts("2025-01-06T12:00:00Z");
        let from = earliest(None, ts("2025-01-01T00:00:00Z"), now, TWO_HOURS);
        assert_eq!(from, ts("2025-01-06T10:00:00Z"));
        assert_eq!(due_action(&schedules, from, now), None);
        let later = ts("2025-01-06T11:59:59Z");
        let from = earliest(None, ts("2025-01-01T00:00:00Z"), later, TWO_HOURS);
        assert_eq!(due_action(&schedules, from, later), Some(Action::Hibernate));
    }

    #[test]
    fn start_only_schedule_never_wakes_and_latest_activation_wins() {
        let start_only = parse(&[schedule(Some("0 20 * * *"), None, None)]).expect("valid");
        assert!(start_only.iter().all(|s| s.action == Action::Hibernate));
        // start 20:00, end 22:00 UTC: at 23:00 the wake-up is the latest.
        let both = parse(&[
            schedule(Some("0 20 * * *"), None, None),
            schedule(None, Some("0 22 * * *"), None),
        ])
        .expect("valid");
        let now = ts("2025-01-06T23:00:00Z");
        let from = ts("2025-01-06T19:00:00Z");
        assert_eq!(due_action(&both, from, now), Some(Action::WakeUp));
        // Equal activations: the first parsed wins.
        let tie = parse(&[schedule(Some("0 20 * * *"), Some("0 20 * * *"), None)]).expect("valid");
        assert_eq!(due_action(&tie, from, now), Some(Action::Hibernate));
    }

    #[test]
    fn lookback_is_at_most_seven_days() {
        let now = ts("2025-01-20T00:00:00Z");
        let long = SignedDuration::from_hours(24 * 30);
        assert_eq!(
            earliest(None, ts("2024-01-01T00:00:00Z"), now, long),
            ts("2025-01-13T00:00:00Z")
        );
    }

    #[test]
    fn standard_syntax_accepts_names_descriptors_and_ors_day_fields() {
        let parsed = parse(&[
            schedule(Some("@daily"), Some("0 8 * JAN-DEC MON-FRI"), None),
            // The 1st of a month OR any Monday.
            schedule(Some("0 0 1 * MON"), None, None),
        ])
        .expect("valid");
        assert_eq!(
            parsed[0].next(ts("2025-01-06T12:00:00Z")),
            Some(ts("2025-01-07T00:00:00Z"))
        );
        assert_eq!(
            parsed[1].next(ts("2025-01-11T12:00:00Z")),
            Some(ts("2025-01-13T08:00:00Z"))
        );
        assert_eq!(
            parsed[2].next(ts("2025-01-11T12:00:00Z")),
            Some(ts("2025-01-13T00:00:00Z"))
        );
        assert_eq!(
            parsed[2].next(ts("2025-01-28T12:00:00Z")),
            Some(ts("2025-02-01T00:00:00Z"))
        );
    }

    #[test]
    fn bad_locations_and_expressions_name_the_entry() {
        let table = [
            (
                schedule(Some("0 20 * * *"), None, Some("Mars/Olympus")),
                "schedules[0].location: unknown time zone \"Mars/Olympus\"",
            ),
            (
                schedule(None, Some("0 25 * * *"), None),
                "schedules[0].end: invalid cron expression \"0 25 * * *\"",
            ),
            (
                schedule(Some("0 0 20 * * *"), None, None),
                "schedules[0].start: invalid cron expression \"0 0 20 * * *\"",
            ),
        ];
        for (entry, expected) in table {
            let error = parse(&[entry]).expect_err("invalid").to_string();
            assert!(error.starts_with(expected), "{error}");
        }
    }
}
