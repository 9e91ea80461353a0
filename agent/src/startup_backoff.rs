//! How long the agent waits between failed start-up attempts (obtaining the garden credential,
//! bootstrapping, registering the Seed): 1 s after the first failure, doubling up to a minute. A
//! garden that is briefly away is retried at once; one that stays away (a dead port, refused
//! credentials) is asked once a minute, not every 5 s forever.

use std::time::Duration;

/// The pause after the first failure.
pub const FIRST: Duration = Duration::from_secs(1);

/// The longest pause.
pub const MAX: Duration = Duration::from_secs(60);

/// The pause after the `failures`-th failure in a row (1 = the first): 1, 2, 4, … 60 s.
pub fn delay(failures: u32) -> Duration {
    seedlet_runtime::retry::doubled(FIRST, failures, MAX)
}

/// Failures in a row of one start-up step and the pause each asks for.
#[derive(Debug, Default)]
pub struct Backoff {
    failures: u32,
}

impl Backoff {
    /// Records a failure; returns the pause before the next attempt.
    pub fn failed(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        delay(self.failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_from_one_second_to_one_minute() {
        let table = [
            (0, 1),
            (1, 1),
            (2, 2),
            (3, 4),
            (4, 8),
            (5, 16),
            (6, 32),
            (7, 60),
            (8, 60),
            (1000, 60),
            (u32::MAX, 60),
        ];
        for (failures, seconds) in table {
            assert_eq!(
                delay(failures),
                Duration::from_secs(seconds),
                "failure {failures}"
            );
        }
    }

    #[test]
    fn a_backoff_grows_with_every_failure() {
        let mut backoff = Backoff::default();
        let seen: Vec<u64> = (0..8).map(|_| backoff.failed().as_secs()).collect();
        assert_eq!(seen, [1, 2, 4, 8, 16, 32, 60, 60]);
    }
}
