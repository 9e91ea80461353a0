//! Periodic health manager (spec §5.2): heartbeat success keeps the agent healthy, failures or a
//! stuck heartbeat make `/healthz` fail.
//!
//! The decision logic is the pure [`HealthState`] state machine, driven with explicit timestamps;
//! [`HealthManager`] wraps it with a lock and an injected [`Clock`] for sharing between the
//! heartbeat task and the probe server.

use std::sync::{Arc, Mutex, PoisonError};

use jiff::{SignedDuration, Timestamp};

use crate::clock::Clock;

/// The health manager's state: value, whether it was started, and the stuck-detection deadline.
///
/// Semantics (gardenlet's periodic health manager):
/// - before [`HealthState::start`] it is healthy, so replicas waiting for leadership or for a
///   certificate stay alive;
/// - `start` sets it healthy and arms a one-shot timer of `grace`; once the timer expires without
///   a `set(true)` it turns unhealthy ("stuck" detection);
/// - `set(true)` sets it healthy and re-arms the timer, `set(false)` sets it unhealthy and leaves
///   the timer alone;
/// - [`HealthState::stop`] makes it unhealthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthState {
    grace: SignedDuration,
    started: bool,
    stopped: bool,
    value: bool,
    deadline: Option<Timestamp>,
}

/// Why the health manager reports unhealthy; `None` from [`HealthState::unhealthy_reason`] means healthy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unhealthy {
    /// The last heartbeat failed.
    HeartbeatFailed,
    /// No heartbeat succeeded within the grace period.
    HeartbeatStuck,
    /// The manager was stopped (shutdown or lost leadership).
    Stopped,
}

impl Unhealthy {
    /// Human-readable explanation for the `/healthz` body.
    pub fn message(self) -> &'static str {
        match self {
            Self::HeartbeatFailed => "current health status is 'unhealthy'",
            Self::HeartbeatStuck => "no successful heartbeat within the grace period",
            Self::Stopped => "health manager stopped",
        }
    }
}

impl HealthState {
    /// A fresh, not yet started state with the given grace period
    /// (`leaseResyncSeconds × leaseResyncMissThreshold`).
    pub fn new(grace: SignedDuration) -> Self {
        Self {
            grace,
            started: false,
            stopped: false,
            value: true,
            deadline: None,
        }
    }

    /// Starts stuck detection at `now`.
    pub fn start(&mut self, now: Timestamp) {
        self.started = true;
        self.stopped = false;
        self.value = true;
        self.deadline = Some(deadline(now, self.grace));
    }

    /// Records the outcome of a heartbeat at `now`.
    pub fn set(&mut self, healthy: bool, now: Timestamp) {
        self.value = healthy;
        if healthy && self.started {
            self.deadline = Some(deadline(now, self.grace));
        }
    }

    /// Stops the manager; it reports unhealthy until started again.
    pub fn stop(&mut self) {
        self.stopped = true;
        self.started = false;
        self.value = false;
        self.deadline = None;
    }

    /// Whether the manager is running stuck detection.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// `None` when healthy at `now`, otherwise why not.
    pub fn unhealthy_reason(&self, now: Timestamp) -> Option<Unhealthy> {
        if self.stopped {
            return Some(Unhealthy::Stopped);
        }
        if !self.started {
            return None;
        }
        if !self.value {
            return Some(Unhealthy::HeartbeatFailed);
        }
        match self.deadline {
            Some(deadline) if now >= deadline => Some(Unhealthy::HeartbeatStuck),
            _ => None,
        }
    }
}

fn deadline(now: Timestamp, grace: SignedDuration) -> Timestamp {
    now.saturating_add(grace).unwrap_or(Timestamp::MAX)
}

/// Shared, thread-safe health manager handed to the heartbeat and the probe server.
#[derive(Debug, Clone)]
pub struct HealthManager {
    state: Arc<Mutex<HealthState>>,
    clock: Arc<dyn Clock>,
}

impl HealthManager {
    /// A not yet started manager with the given grace period.
    pub fn new(grace: SignedDuration, clock: Arc<dyn Clock>) -> Self {
        Self {
            state: Arc::new(Mutex::new(HealthState::new(grace))),
            clock,
        }
    }

    /// Starts stuck detection now.
    pub fn start(&self) {
        let now = self.clock.now();
        self.lock().start(now);
    }

    /// Records a heartbeat outcome now.
    pub fn set(&self, healthy: bool) {
        let now = self.clock.now();
        self.lock().set(healthy, now);
    }

    /// Stops the manager (unhealthy until started again).
    pub fn stop(&self) {
        self.lock().stop();
    }

    /// Resets to the initial, not started state (healthy, no stuck detection), used when a
    /// replica steps down to standby.
    pub fn reset(&self) {
        let mut state = self.lock();
        *state = HealthState::new(state.grace);
    }

    /// `None` when healthy now, otherwise the reason.
    pub fn unhealthy_reason(&self) -> Option<Unhealthy> {
        let now = self.clock.now();
        self.lock().unhealthy_reason(now)
    }

    /// Whether the agent is healthy now.
    pub fn is_healthy(&self) -> bool {
        self.unhealthy_reason().is_none()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HealthState> {
        // The state is plain data updated in single assignments, so it is consistent even if a
        // holder panicked.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    const GRACE: SignedDuration = SignedDuration::from_secs(20);

    #[test]
    fn health_is_true_before_start_even_after_grace() {
        let state = HealthState::new(GRACE);
        assert_eq!(state.unhealthy_reason(at(10_000)), None);
    }

    #[test]
    fn health_turns_false_when_no_success_within_grace_after_start() {
        let mut state = HealthState::new(GRACE);
        state.start(at(100));
        assert_eq!(state.unhealthy_reason(at(119)), None);
        assert_eq!(
            state.unhealthy_reason(at(120)),
            Some(Unhealthy::HeartbeatStuck)
        );
    }

    #[test]
    fn health_timer_is_rearmed_by_success() {
        let mut state = HealthState::new(GRACE);
        state.start(at(100));
        state.set(true, at(115));
        assert_eq!(state.unhealthy_reason(at(130)), None);
        assert_eq!(
            state.unhealthy_reason(at(135)),
            Some(Unhealthy::HeartbeatStuck)
        );
    }

    #[test]
    fn health_is_false_immediately_when_heartbeat_fails_and_recovers_on_success() {
        let mut state = HealthState::new(GRACE);
        state.start(at(100));
        state.set(false, at(101));
        assert_eq!(
            state.unhealthy_reason(at(101)),
            Some(Unhealthy::HeartbeatFailed)
        );
        state.set(true, at(102));
        assert_eq!(state.unhealthy_reason(at(102)), None);
    }

    #[test]
    fn health_failure_does_not_rearm_the_timer() {
        let mut state = HealthState::new(GRACE);
        state.start(at(100));
        state.set(false, at(119));
        assert_eq!(state.deadline, Some(at(120)));
    }

    #[test]
    fn health_is_false_after_stop_until_restarted() {
        let mut state = HealthState::new(GRACE);
        state.start(at(100));
        state.stop();
        assert_eq!(state.unhealthy_reason(at(100)), Some(Unhealthy::Stopped));
        state.start(at(200));
        assert_eq!(state.unhealthy_reason(at(200)), None);
    }

    #[test]
    fn manager_reports_stuck_with_injected_clock() {
        let clock = Arc::new(FakeClock::new(at(0)));
        let manager = HealthManager::new(GRACE, clock.clone());
        manager.start();
        assert!(manager.is_healthy());
        clock.advance(SignedDuration::from_secs(21));
        assert_eq!(manager.unhealthy_reason(), Some(Unhealthy::HeartbeatStuck));
        manager.set(true);
        assert!(manager.is_healthy());
        manager.reset();
        clock.advance(SignedDuration::from_secs(100));
        assert!(manager.is_healthy());
    }
}
