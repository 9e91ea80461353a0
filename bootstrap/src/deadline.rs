//! Rotation deadline maths (spec §2.1), pure: randomness and the current time are arguments.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::options::JitterRange;

/// The moment to rotate a certificate valid from `not_before` to `not_after`:
/// `not_before + D·min/100 + r·D·(max−min)/100` with `D = not_after − not_before` and `r` uniform in [0, 1)
/// (values outside are clamped).
///
/// Upstream silently widens the jitter to the full validity when `max ≤ min` [QUIRK]; validation forbids that
/// input, and here such a range simply means "rotate at `min`".
pub fn rotation_deadline(
    not_before: Timestamp,
    not_after: Timestamp,
    jitter: JitterRange,
    r: f64,
) -> Timestamp {
    let validity = not_after.as_nanosecond() - not_before.as_nanosecond();
    let validity = validity.max(0);
    let min = i128::from(jitter.min_percent.min(100));
    let max = i128::from(jitter.max_percent.min(100)).max(min);
    let fixed = validity * min / 100;
    let spread = validity * (max - min) / 100;
    let r = if r.is_finite() {
        r.clamp(0.0, 1.0)
    } else {
        0.0
    };
    // Precision: f64 holds spreads up to ~104 days exactly in nanoseconds; beyond that the error stays below a
    // microsecond, far below any meaningful rotation granularity.
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let jitter_nanos = ((spread as f64) * r).floor() as i128;
    let offset = (fixed + jitter_nanos).min(validity);
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    not_before
        .saturating_add(SignedDuration::from_nanos(offset))
        .unwrap_or(not_after)
}

/// How long to sleep from `now` until `deadline`; zero when it has passed.
pub fn until(deadline: Timestamp, now: Timestamp) -> Duration {
    let remaining = deadline.duration_since(now);
    Duration::try_from(remaining).unwrap_or(Duration::ZERO)
}

/// Whether a certificate ending at `not_after` can no longer authenticate at `now`.
pub fn is_expired(not_after: Timestamp, now: Timestamp) -> bool {
    now >= not_after
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    const HOUR: i64 = 3600;

    #[test]
    fn deadline_is_eighty_percent_when_r_is_half_with_default_jitter() {
        let deadline = rotation_deadline(t(0), t(100 * HOUR), JitterRange::default(), 0.5);
        assert_eq!(deadline, t(80 * HOUR));
    }

    #[test]
    fn deadline_stays_within_min_and_max_for_any_r() {
        for r in [0.0, 0.001, 0.25, 0.5, 0.75, 0.999_999, 0.999_999_999_999] {
            let deadline = rotation_deadline(t(0), t(100 * HOUR), JitterRange::default(), r);
            assert!(deadline >= t(70 * HOUR), "r={r}: {deadline}");
            assert!(deadline < t(90 * HOUR), "r={r}: {deadline}");
        }
    }

    #[test]
    fn deadline_is_min_percent_when_r_is_zero() {
        let jitter = JitterRange {
            min_percent: 1,
            max_percent: 2,
        };
        assert_eq!(rotation_deadline(t(0), t(600), jitter, 0.0), t(6));
    }

    #[test]
    fn deadline_is_min_percent_when_range_is_empty() {
        let jitter = JitterRange {
            min_percent: 90,
            max_percent: 90,
        };
        assert_eq!(rotation_deadline(t(0), t(100), jitter, 0.7), t(90));
        let inverted = JitterRange {
            min_percent: 90,
            max_percent: 10,
        };
        assert_eq!(rotation_deadline(t(0), t(100), inverted, 0.7), t(90));
    }

    #[test]
    fn deadline_clamps_r_outside_unit_interval() {
        let jitter = JitterRange::default();
        assert_eq!(rotation_deadline(t(0), t(100), jitter, -3.0), t(70));
        assert_eq!(rotation_deadline(t(0), t(100), jitter, 5.0), t(90));
        assert_eq!(rotation_deadline(t(0), t(100), jitter, f64::NAN), t(70));
    }

    #[test]
    fn deadline_is_not_before_when_certificate_has_no_validity() {
        assert_eq!(
            rotation_deadline(t(50), t(10), JitterRange::default(), 0.5),
            t(50)
        );
    }

    #[test]
    fn deadline_counts_from_not_before_not_from_now() {
        let deadline = rotation_deadline(
            t(-5 * 60),
            t(10 * 60),
            JitterRange {
                min_percent: 50,
                max_percent: 51,
            },
            0.0,
        );
        assert_eq!(deadline, t(-5 * 60 + 450));
    }

    #[test]
    fn until_is_zero_when_deadline_passed() {
        assert_eq!(until(t(10), t(20)), Duration::ZERO);
        assert_eq!(until(t(20), t(10)), Duration::from_secs(10));
    }

    #[test]
    fn certificate_is_expired_from_not_after_on() {
        assert!(!is_expired(t(10), t(9)));
        assert!(is_expired(t(10), t(10)));
        assert!(is_expired(t(10), t(11)));
    }
}
