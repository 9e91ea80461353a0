//! The daily maintenance time window of a Shoot (`spec.maintenance.timeWindow`, `begin`/`end` as
//! `HHMMSS±HHMM`), shared by the garden maintenance controller and the agent's Shoot controller:
//! a UTC time of day (the date is dropped, so a window keeps its UTC position across
//! daylight-saving changes, as upstream), membership of an instant, and the delay to a random
//! instant in the next window. `now` and the random fraction are arguments.

use jiff::{SignedDuration, Timestamp};

const DAY: i64 = 86_400;
/// The window's end is brought forward by this much so a maintenance can finish inside it.
pub const END_MARGIN: i64 = 15 * 60;

/// A daily window in UTC seconds of the day; `end < begin` spans midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Start, seconds after 00:00:00 UTC.
    pub begin: i64,
    /// Effective end, seconds after 00:00:00 UTC.
    pub end: i64,
}

/// The whole day, used when the window is missing or does not parse.
pub const ALWAYS: Window = Window {
    begin: 0,
    end: DAY - 1,
};

impl Window {
    /// The window of `begin`/`end` (`HHMMSS±HHMM`), the end brought forward by 15 minutes; the
    /// whole day when either is missing or unparsable.
    pub fn from_spec(begin: Option<&str>, end: Option<&str>) -> Window {
        match (begin.and_then(utc_seconds), end.and_then(utc_seconds)) {
            (Some(begin), Some(end)) => Window {
                begin,
                end: (end - END_MARGIN).rem_euclid(DAY),
            },
            _ => ALWAYS,
        }
    }

    /// Whether `t`'s UTC time of day (to the second) lies in the window.
    pub fn contains(&self, t: Timestamp) -> bool {
        let second = t.as_second().rem_euclid(DAY);
        if self.end < self.begin {
            second <= self.end || second >= self.begin
        } else {
            self.begin <= second && second <= self.end
        }
    }

    /// Delay from `now` (inside the window) to a random instant before the window's end:
    /// `fraction` (in `[0, 1)`) of the remaining time; zero when `now` is outside.
    pub fn delay_within(&self, now: Timestamp, fraction: f64) -> SignedDuration {
        if !self.contains(now) {
            return SignedDuration::ZERO;
        }
        let second = now.as_second().rem_euclid(DAY);
        let remaining = if second <= self.end {
            self.end - second
        } else {
            DAY - second + self.end
        };
        SignedDuration::from_secs(remaining).mul_f64(fraction.clamp(0.0, 1.0))
    }

    /// Delay from `now` to a random instant of the next window: its begin plus `fraction`
    /// (in `[0, 1)`) of its length.
    pub fn next_delay(&self, now: Timestamp, fraction: f64) -> SignedDuration {
        let midnight = now.as_second() - now.as_second().rem_euclid(DAY);
        let mut begin = midnight + self.begin;
        let mut end = midnight + self.end;
        if end <= begin {
            end += DAY;
        }
        let now_second = now.as_second();
        if begin < now_second && (self.contains(now) || now_second > end) {
            begin += DAY;
            end += DAY;
        }
        let begin = Timestamp::from_second(begin).unwrap_or(now);
        let length = SignedDuration::from_secs(end - begin.as_second());
        let jitter = length.mul_f64(fraction.clamp(0.0, 1.0));
        begin.duration_since(now) + jitter
    }
}

/// `HHMMSS±HHMM` → seconds after 00:00:00 UTC.
fn utc_seconds(value: &str) -> Option<i64> {
    let bytes = value.as_bytes();
    if bytes.len() != 11 || !matches!(bytes[6], b'+' | b'-') {
        return None;
    }
    let number = |range: std::ops::Range<usize>, max: i64| -> Option<i64> {
        let part = value.get(range)?;
        let n: i64 = part
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())??;
        (n <= max).then_some(n)
    };
    let local = number(0..2, 23)? * 3600 + number(2..4, 59)? * 60 + number(4..6, 59)?;
    let offset = number(7..9, 14)? * 3600 + number(9..11, 59)? * 60;
    let offset = if bytes[6] == b'-' { -offset } else { offset };
    Some((local - offset).rem_euclid(DAY))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(value: &str) -> Timestamp {
        value.parse().expect("time")
    }

    fn hm(hours: i64, minutes: i64) -> SignedDuration {
        SignedDuration::from_secs(hours * 3600 + minutes * 60)
    }

    #[test]
    fn spec_example_window_waits_maintains_and_skips_to_tomorrow() {
        let window = Window::from_spec(Some("220000+0100"), Some("230000+0100"));
        assert_eq!(
            window,
            Window {
                begin: 21 * 3600,
                end: 21 * 3600 + 45 * 60
            }
        );
        // (now, contained, delay at fraction 0, delay at fraction 1)
        let table = [
            ("2025-01-06T20:00:00Z", false, hm(1, 0), hm(1, 45)),
            ("2025-01-06T21:10:00Z", true, hm(23, 50), hm(24, 35)),
            ("2025-01-06T21:50:00Z", false, hm(23, 10), hm(23, 55)),
        ];
        for (now, contained, earliest, latest) in table {
            assert_eq!(window.contains(at(now)), contained, "{now}");
            assert_eq!(window.next_delay(at(now), 0.0), earliest, "{now}");
            assert_eq!(window.next_delay(at(now), 1.0), latest, "{now}");
        }
    }

    #[test]
    fn delay_within_spreads_over_the_rest_of_the_current_window() {
        let window = Window::from_spec(Some("230000+0000"), Some("013000+0000"));
        let table = [
            ("2025-01-06T23:30:00Z", 1.0, hm(1, 45)),
            ("2025-01-06T23:30:00Z", 0.5, SignedDuration::from_secs(3150)),
            ("2025-01-07T01:00:00Z", 1.0, hm(0, 15)),
            ("2025-01-07T12:00:00Z", 1.0, SignedDuration::ZERO),
        ];
        for (now, fraction, want) in table {
            assert_eq!(window.delay_within(at(now), fraction), want, "{now}");
        }
    }

    #[test]
    fn windows_spanning_midnight_contain_both_sides() {
        let window = Window::from_spec(Some("230000+0000"), Some("013000+0000"));
        assert_eq!(window.end, 3600 + 15 * 60);
        for (now, contained) in [
            ("2025-01-06T23:30:00Z", true),
            ("2025-01-07T01:15:00Z", true),
            ("2025-01-07T01:15:01Z", false),
            ("2025-01-07T12:00:00Z", false),
        ] {
            assert_eq!(window.contains(at(now)), contained, "{now}");
        }
        assert_eq!(
            window.next_delay(at("2025-01-07T12:00:00Z"), 0.0),
            hm(11, 0)
        );
    }

    #[test]
    fn missing_or_bad_windows_mean_always() {
        for (begin, end) in [
            (None, Some("230000+0100")),
            (Some("22:00"), Some("230000+0100")),
            (Some("250000+0100"), Some("230000+0100")),
        ] {
            let window = Window::from_spec(begin, end);
            assert_eq!(window, ALWAYS, "{begin:?}");
            assert!(window.contains(at("2025-01-06T13:37:00Z")));
        }
        assert_eq!(
            Window::from_spec(Some("003000-0230"), Some("013000-0230")),
            Window {
                begin: 3 * 3600,
                end: 3 * 3600 + 45 * 60
            }
        );
    }
}
