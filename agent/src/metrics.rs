//! The agent's own Prometheus series, added to the common ones of [`seedlet_runtime::metrics`]:
//! heartbeat, garden client certificate and ShootState writes.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Unit;
use seedlet_runtime::metrics::{FloatGauge, Metrics, seconds_between};

/// The agent's metrics: the common series (reachable through `Deref`) plus
///
/// | name | type | meaning |
/// |---|---|---|
/// | `seedlet_lease_renewals_total` | counter | successful seed Lease renewals |
/// | `seedlet_lease_renewal_failures_total` | counter | failed heartbeats (seed unhealthy or Lease write failed) |
/// | `seedlet_lease_last_renew_age_seconds` | gauge | seconds since the last successful renewal (-1 before the first) |
/// | `seedlet_lease_renewal_drift_seconds` | histogram | delay of a renewal behind its schedule |
/// | `seedlet_garden_client_certificate_expiry_seconds{cluster="garden"}` | gauge | seconds until the garden client certificate expires (absent without a certificate) |
/// | `seedlet_shootstate_writes_total` | counter | ShootState creates and patches issued to the garden |
#[derive(Debug)]
pub struct AgentMetrics {
    common: Arc<Metrics>,
    lease_renewals: Counter,
    lease_renewal_failures: Counter,
    lease_renewal_drift: Histogram,
    shoot_state_writes: Counter,
    times: Arc<Mutex<Times>>,
}

#[derive(Debug, Default)]
struct Times {
    last_renew: Option<Timestamp>,
    certificate_not_after: Option<Timestamp>,
}

impl Default for AgentMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl AgentMetrics {
    /// The common series of component `agent` plus the agent's own.
    pub fn new() -> Self {
        let mut builder = Metrics::builder("agent");
        let registry = builder.registry();
        let lease_renewals = Counter::default();
        registry.register(
            "lease_renewals",
            "Successful seed Lease renewals",
            lease_renewals.clone(),
        );
        let lease_renewal_failures = Counter::default();
        registry.register(
            "lease_renewal_failures",
            "Failed heartbeats: seed API server unhealthy or Lease write failed",
            lease_renewal_failures.clone(),
        );
        let lease_last_renew_age = FloatGauge::default();
        registry.register_with_unit(
            "lease_last_renew_age",
            "Time since the last successful Lease renewal, -1 before the first",
            Unit::Seconds,
            lease_last_renew_age.clone(),
        );
        let lease_renewal_drift = Histogram::new(exponential_buckets(0.001, 2.0, 14));
        registry.register_with_unit(
            "lease_renewal_drift",
            "Delay of a Lease renewal behind its schedule",
            Unit::Seconds,
            lease_renewal_drift.clone(),
        );
        let garden_certificate_expiry = Family::<Vec<(String, String)>, FloatGauge>::default();
        registry.register_with_unit(
            "garden_client_certificate_expiry",
            "Time until the garden client certificate expires",
            Unit::Seconds,
            garden_certificate_expiry.clone(),
        );
        let shoot_state_writes = Counter::default();
        registry.register(
            "shootstate_writes",
            "ShootState creates and patches issued to the garden",
            shoot_state_writes.clone(),
        );
        let times = Arc::new(Mutex::new(Times::default()));
        let hook_times = times.clone();
        builder.before_encode(move |now| {
            let times = lock(&hook_times);
            let age = times
                .last_renew
                .map_or(-1.0, |last| seconds_between(last, now));
            lease_last_renew_age.set(age);
            garden_certificate_expiry.clear();
            if let Some(not_after) = times.certificate_not_after {
                garden_certificate_expiry
                    .get_or_create(&vec![("cluster".to_owned(), "garden".to_owned())])
                    .set(seconds_between(now, not_after));
            }
        });
        Self {
            common: Arc::new(builder.build()),
            lease_renewals,
            lease_renewal_failures,
            lease_renewal_drift,
            shoot_state_writes,
            times,
        }
    }

    /// The common metrics (what the probe server encodes).
    pub fn common(&self) -> Arc<Metrics> {
        self.common.clone()
    }

    /// Records a successful Lease renewal at `at`, `drift` behind its schedule.
    pub fn lease_renewed(&self, at: Timestamp, drift: Duration) {
        self.lease_renewals.inc();
        self.lease_renewal_drift.observe(drift.as_secs_f64());
        lock(&self.times).last_renew = Some(at);
    }

    /// Records a failed heartbeat.
    pub fn lease_renewal_failed(&self) {
        self.lease_renewal_failures.inc();
    }

    /// Records the `NotAfter` of the garden client certificate in use (`None` for token
    /// credentials).
    pub fn garden_certificate_not_after(&self, not_after: Option<Timestamp>) {
        lock(&self.times).certificate_not_after = not_after;
    }

    /// Records one ShootState create or patch sent to the garden.
    pub fn shoot_state_written(&self) {
        self.shoot_state_writes.inc();
    }

    /// Number of ShootState writes so far.
    pub fn shoot_state_writes(&self) -> u64 {
        self.shoot_state_writes.get()
    }

    /// Number of successful Lease renewals so far.
    pub fn lease_renewals(&self) -> u64 {
        self.lease_renewals.get()
    }
}

impl std::ops::Deref for AgentMetrics {
    type Target = Metrics;

    fn deref(&self) -> &Metrics {
        &self.common
    }
}

fn lock(times: &Mutex<Times>) -> std::sync::MutexGuard<'_, Times> {
    // Plain timestamps, consistent even if a holder panicked.
    times.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    #[test]
    fn encode_contains_the_agent_series_and_the_common_ones() {
        let metrics = AgentMetrics::new();
        metrics.lease_renewed(at(100), Duration::from_millis(3));
        metrics.lease_renewal_failed();
        metrics.reconciled("heartbeat", Duration::from_millis(12), false);
        metrics.garden_certificate_not_after(Some(at(3_700)));
        metrics.set_leader(true);
        metrics.shoot_state_written();
        let text = metrics.encode(at(110));
        for needle in [
            "seedlet_lease_renewals_total 1",
            "seedlet_lease_renewal_failures_total 1",
            "seedlet_lease_last_renew_age_seconds 10.0",
            "seedlet_lease_renewal_drift_seconds_count 1",
            "seedlet_reconcile_total{controller=\"heartbeat\"} 1",
            "seedlet_garden_client_certificate_expiry_seconds{cluster=\"garden\"} 3590.0",
            "seedlet_leader 1",
            "seedlet_shootstate_writes_total 1",
            "component=\"agent\"",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn last_renew_age_is_negative_before_the_first_renewal() {
        let metrics = AgentMetrics::new();
        let text = metrics.encode(at(5));
        assert!(
            text.contains("seedlet_lease_last_renew_age_seconds -1.0"),
            "{text}"
        );
        assert!(!text.contains("seedlet_garden_client_certificate_expiry_seconds "));
    }
}
