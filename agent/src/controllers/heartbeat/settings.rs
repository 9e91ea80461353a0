//! Heartbeat timing, from `controllers.seed.leaseResyncSeconds` and `leaseResyncMissThreshold`.

use std::time::Duration;

/// Heartbeat timing (`controllers.seed.leaseResyncSeconds` and `leaseResyncMissThreshold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Interval between renewals, also the Lease duration and the per-beat timeout.
    pub period: Duration,
    /// How many periods may pass without a successful beat before health turns false.
    pub miss_threshold: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            period: Duration::from_secs(2),
            miss_threshold: 10,
        }
    }
}

impl Settings {
    /// The health manager's grace period: `period × miss_threshold`.
    pub fn grace(&self) -> Duration {
        self.period.saturating_mul(self.miss_threshold.max(1))
    }

    /// `spec.leaseDurationSeconds` of the seed Lease: the period in whole seconds, at least 1.
    pub fn lease_duration_seconds(&self) -> i32 {
        i32::try_from(self.period.as_secs().max(1)).unwrap_or(i32::MAX)
    }
}
