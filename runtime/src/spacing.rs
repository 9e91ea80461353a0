//! Per-object spacing of work: at most one start per object and period, the first start of a
//! quiet object at once. A controller that must bound how often it writes one object (instead
//! of debouncing its triggers) asks [`Spacing::wait`] at the top of a reconcile and, when told
//! to wait, returns `Action::requeue` of that wait without doing anything: a trigger inside the
//! period runs early, is told the same deadline and requeues to it, so nothing starves and the
//! work is done once at the end of the period with everything that arrived in between.
//!
//! Time is the caller's: an [`Instant`] of the monotonic clock (the ShootState sync), or a
//! [`jiff::Timestamp`] of a controller's [`crate::clock::Clock`] (the garden's Seed checks, whose
//! tests move a fake clock).

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A point in time a [`Spacing`] measures periods between.
pub trait Moment: Copy {
    /// How long after `earlier` this is; `None` when it is before `earlier`.
    fn since(self, earlier: Self) -> Option<Duration>;
}

impl Moment for Instant {
    fn since(self, earlier: Self) -> Option<Duration> {
        self.checked_duration_since(earlier)
    }
}

impl Moment for jiff::Timestamp {
    fn since(self, earlier: Self) -> Option<Duration> {
        Duration::try_from(self.duration_since(earlier)).ok()
    }
}

/// Objects remembered before the entries whose period is over are dropped.
pub const DEFAULT_CAPACITY: usize = 4096;

/// When work on each object last started, to space the next start by a period.
#[derive(Debug, Clone)]
pub struct Spacing<T = Instant> {
    period: Duration,
    capacity: usize,
    last: HashMap<String, T>,
}

impl<T: Moment> Spacing<T> {
    /// Starts of one object at least `period` apart; a zero period spaces nothing.
    pub fn new(period: Duration) -> Self {
        Self {
            period,
            capacity: DEFAULT_CAPACITY,
            last: HashMap::new(),
        }
    }

    /// The period between two starts of one object.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// `None` when work on `key` may start at `now` (recorded as its last start), else how long
    /// until its period is over. An entry from the future (a start recorded with a later `now`)
    /// counts as over: the wait is never longer than one period.
    pub fn wait(&mut self, key: &str, now: T) -> Option<Duration> {
        if self.period.is_zero() {
            return None;
        }
        if let Some(wait) = self
            .last
            .get(key)
            .and_then(|at| remaining(*at, now, self.period))
        {
            return Some(wait);
        }
        if self.last.len() >= self.capacity {
            let period = self.period;
            self.last
                .retain(|_, at| remaining(*at, now, period).is_some());
        }
        self.last.insert(key.to_owned(), now);
        None
    }

    /// Forgets `key` (the object is gone): its next start is at once.
    pub fn forget(&mut self, key: &str) {
        self.last.remove(key);
    }

    /// How many objects are remembered.
    pub fn len(&self) -> usize {
        self.last.len()
    }

    /// Whether no object is remembered.
    pub fn is_empty(&self) -> bool {
        self.last.is_empty()
    }
}

/// What is left at `now` of the period that began `at`.
fn remaining<T: Moment>(at: T, now: T, period: Duration) -> Option<Duration> {
    let elapsed = now.since(at)?;
    period.checked_sub(elapsed).filter(|left| !left.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD: Duration = Duration::from_millis(100);

    #[test]
    fn starts_are_spaced_per_object_and_the_first_of_a_quiet_object_is_at_once() {
        let start = Instant::now();
        let ms = |n: u64| start + Duration::from_millis(n);
        // (key, at ms, expected wait in ms)
        let table: [(&str, u64, Option<u64>); 8] = [
            ("a", 0, None),
            ("a", 10, Some(90)),
            ("b", 10, None),
            ("a", 60, Some(40)),
            ("a", 100, None),
            ("b", 109, Some(1)),
            ("a", 150, Some(50)),
            ("a", 500, None),
        ];
        let mut spacing = Spacing::new(PERIOD);
        for (key, at, expected) in table {
            assert_eq!(
                spacing.wait(key, ms(at)),
                expected.map(Duration::from_millis),
                "{key} at {at} ms"
            );
        }
    }

    #[test]
    fn timestamps_of_a_clock_are_spaced_too_and_a_clock_that_went_back_starts_anew() {
        let at = |ms: i64| jiff::Timestamp::from_millisecond(1_700_000_000_000 + ms).unwrap();
        let mut spacing = Spacing::new(Duration::from_secs(1));
        assert_eq!(spacing.wait("seed", at(0)), None);
        assert_eq!(
            spacing.wait("seed", at(400)),
            Some(Duration::from_millis(600))
        );
        assert_eq!(spacing.wait("seed", at(-500)), None);
        assert_eq!(spacing.wait("seed", at(1500)), None);
    }

    #[test]
    fn a_zero_period_spaces_nothing_and_remembers_nothing() {
        let mut spacing = Spacing::new(Duration::ZERO);
        let now = Instant::now();
        assert_eq!(spacing.wait("a", now), None);
        assert_eq!(spacing.wait("a", now), None);
        assert!(spacing.is_empty());
    }

    #[test]
    fn a_forgotten_object_starts_at_once() {
        let mut spacing = Spacing::new(PERIOD);
        let now = Instant::now();
        assert_eq!(spacing.wait("a", now), None);
        spacing.forget("a");
        assert_eq!(spacing.wait("a", now), None);
    }

    #[test]
    fn a_start_recorded_later_than_now_does_not_hold_the_object() {
        let mut spacing = Spacing::new(PERIOD);
        let now = Instant::now();
        assert_eq!(spacing.wait("a", now + Duration::from_secs(5)), None);
        assert_eq!(spacing.wait("a", now), None);
    }

    #[test]
    fn a_full_table_drops_only_entries_whose_period_is_over() {
        let mut spacing = Spacing::new(PERIOD);
        spacing.capacity = 3;
        let start = Instant::now();
        spacing.wait("old-1", start);
        spacing.wait("old-2", start);
        let later = start + Duration::from_millis(90);
        spacing.wait("recent", later);
        // Full: the two entries whose period is over go, the recent one stays.
        let now = start + Duration::from_millis(150);
        assert_eq!(spacing.wait("new", now), None);
        assert_eq!(spacing.len(), 2);
        assert_eq!(spacing.wait("recent", now), Some(Duration::from_millis(40)));
    }
}
