//! Prometheus metrics of the agent (and the garden controller): heartbeat, reconciles, garden
//! client certificate, leadership and build info, exposed in OpenMetrics text format.

use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

/// Content type of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Prefix of every metric name.
pub const PREFIX: &str = "seedlet";

/// Label set of per-controller metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ControllerLabels {
    /// Controller name, e.g. `heartbeat` or `seed-lifecycle`.
    pub controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: String,
    component: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;

/// All metrics of one process; cheap to share behind an `Arc`.
///
/// | name | type | meaning |
/// |---|---|---|
/// | `seedlet_lease_renewals_total` | counter | successful seed Lease renewals |
/// | `seedlet_lease_renewal_failures_total` | counter | failed heartbeats (seed unhealthy or Lease write failed) |
/// | `seedlet_lease_last_renew_age_seconds` | gauge | seconds since the last successful renewal (-1 before the first) |
/// | `seedlet_lease_renewal_drift_seconds` | histogram | delay of a renewal behind its schedule |
/// | `seedlet_reconcile_total{controller}` | counter | reconciles per controller |
/// | `seedlet_reconcile_errors_total{controller}` | counter | failed reconciles per controller |
/// | `seedlet_reconcile_duration_seconds{controller}` | histogram | reconcile durations per controller |
/// | `seedlet_controller_restarts_total{controller}` | counter | controllers that returned before their term ended and were started again |
/// | `seedlet_garden_client_certificate_expiry_seconds{cluster="garden"}` | gauge | seconds until the garden client certificate expires (absent without a certificate) |
/// | `seedlet_leader` | gauge | 1 while this replica holds the leader lease |
/// | `seedlet_healthy` | gauge | 1 while the health manager reports healthy |
/// | `seedlet_build_info{version,component}` | info | build version |
/// | `seedlet_shootstate_writes_total` | counter | ShootState creates and patches issued to the garden |
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    lease_renewals: Counter,
    lease_renewal_failures: Counter,
    lease_last_renew_age: FloatGauge,
    lease_renewal_drift: Histogram,
    reconciles: Family<ControllerLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_duration: Family<ControllerLabels, Histogram>,
    controller_restarts: Family<ControllerLabels, Counter>,
    controller_restarts_total: Counter,
    garden_certificate_expiry: Family<Vec<(String, String)>, FloatGauge>,
    leader: Gauge,
    healthy: Gauge,
    shoot_state_writes: Counter,
    times: Mutex<Times>,
}

#[derive(Debug, Default)]
struct Times {
    last_renew: Option<Timestamp>,
    certificate_not_after: Option<Timestamp>,
}

impl Metrics {
    /// A fresh registry for `component` (`agent` or `garden`).
    pub fn new(component: &str) -> Self {
        let mut registry = Registry::with_prefix(PREFIX);
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
        let reconciles = Family::<ControllerLabels, Counter>::default();
        registry.register("reconcile", "Reconciles per controller", reconciles.clone());
        let reconcile_errors = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "reconcile_errors",
            "Failed reconciles per controller",
            reconcile_errors.clone(),
        );
        let reconcile_duration = Family::<ControllerLabels, Histogram>::new_with_constructor(
            duration_histogram as fn() -> Histogram,
        );
        registry.register_with_unit(
            "reconcile_duration",
            "Reconcile durations per controller",
            Unit::Seconds,
            reconcile_duration.clone(),
        );
        let controller_restarts = Family::<ControllerLabels, Counter>::default();
        registry.register(
            "controller_restarts",
            "Controllers that returned before their leadership term ended and were started again",
            controller_restarts.clone(),
        );
        let garden_certificate_expiry = Family::<Vec<(String, String)>, FloatGauge>::default();
        registry.register_with_unit(
            "garden_client_certificate_expiry",
            "Time until the garden client certificate expires",
            Unit::Seconds,
            garden_certificate_expiry.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 while this replica holds the leader lease",
            leader.clone(),
        );
        let healthy = Gauge::default();
        registry.register(
            "healthy",
            "1 while the health manager reports healthy",
            healthy.clone(),
        );
        let shoot_state_writes = Counter::default();
        registry.register(
            "shootstate_writes",
            "ShootState creates and patches issued to the garden",
            shoot_state_writes.clone(),
        );
        registry.register(
            "build",
            "Build information",
            Info::new(BuildLabels {
                version: env!("CARGO_PKG_VERSION").to_owned(),
                component: component.to_owned(),
            }),
        );
        Self {
            registry,
            lease_renewals,
            lease_renewal_failures,
            lease_last_renew_age,
            lease_renewal_drift,
            reconciles,
            reconcile_errors,
            reconcile_duration,
            controller_restarts,
            controller_restarts_total: Counter::default(),
            garden_certificate_expiry,
            leader,
            healthy,
            shoot_state_writes,
            times: Mutex::new(Times::default()),
        }
    }

    /// Records a successful Lease renewal at `at`, `drift` behind its schedule.
    pub fn lease_renewed(&self, at: Timestamp, drift: Duration) {
        self.lease_renewals.inc();
        self.lease_renewal_drift.observe(drift.as_secs_f64());
        self.times().last_renew = Some(at);
    }

    /// Records a failed heartbeat.
    pub fn lease_renewal_failed(&self) {
        self.lease_renewal_failures.inc();
    }

    /// Records one reconcile of `controller` that took `took` and succeeded or not.
    pub fn reconciled(&self, controller: &str, took: Duration, ok: bool) {
        let labels = ControllerLabels {
            controller: controller.to_owned(),
        };
        self.reconciles.get_or_create(&labels).inc();
        if !ok {
            self.reconcile_errors.get_or_create(&labels).inc();
        }
        self.reconcile_duration
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// Records that `controller` returned before its term ended and is started again.
    pub fn controller_restarted(&self, controller: &str) {
        self.controller_restarts
            .get_or_create(&ControllerLabels {
                controller: controller.to_owned(),
            })
            .inc();
        self.controller_restarts_total.inc();
    }

    /// Restarts of all controllers so far (0 while every controller keeps running).
    pub fn controller_restarts(&self) -> u64 {
        self.controller_restarts_total.get()
    }

    /// Records the `NotAfter` of the garden client certificate in use (`None` for token
    /// credentials).
    pub fn garden_certificate_not_after(&self, not_after: Option<Timestamp>) {
        self.times().certificate_not_after = not_after;
    }

    /// Records whether this replica leads.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Records the health manager's verdict.
    pub fn set_healthy(&self, healthy: bool) {
        self.healthy.set(i64::from(healthy));
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

    /// Encodes all metrics as OpenMetrics text, computing time-based gauges for `now`.
    pub fn encode(&self, now: Timestamp) -> String {
        {
            let times = self.times();
            let age = times
                .last_renew
                .map_or(-1.0, |last| seconds_between(last, now));
            self.lease_last_renew_age.set(age);
            self.garden_certificate_expiry.clear();
            if let Some(not_after) = times.certificate_not_after {
                self.garden_certificate_expiry
                    .get_or_create(&vec![("cluster".to_owned(), "garden".to_owned())])
                    .set(seconds_between(now, not_after));
            }
        }
        let mut out = String::new();
        // Writing into a String cannot fail; the encoder only propagates the writer's errors.
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }

    fn times(&self) -> std::sync::MutexGuard<'_, Times> {
        // Plain timestamps, consistent even if a holder panicked.
        self.times.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 14))
}

fn seconds_between(from: Timestamp, to: Timestamp) -> f64 {
    to.duration_since(from).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    #[test]
    fn encode_contains_every_metric_family_and_ends_with_eof() {
        let metrics = Metrics::new("agent");
        metrics.lease_renewed(at(100), Duration::from_millis(3));
        metrics.lease_renewal_failed();
        metrics.reconciled("heartbeat", Duration::from_millis(12), false);
        metrics.garden_certificate_not_after(Some(at(3_700)));
        metrics.set_leader(true);
        metrics.controller_restarted("heartbeat");
        metrics.shoot_state_written();
        let text = metrics.encode(at(110));
        for needle in [
            "seedlet_lease_renewals_total 1",
            "seedlet_lease_renewal_failures_total 1",
            "seedlet_lease_last_renew_age_seconds 10.0",
            "seedlet_lease_renewal_drift_seconds_count 1",
            "seedlet_reconcile_total{controller=\"heartbeat\"} 1",
            "seedlet_reconcile_errors_total{controller=\"heartbeat\"} 1",
            "seedlet_reconcile_duration_seconds_count{controller=\"heartbeat\"} 1",
            "seedlet_garden_client_certificate_expiry_seconds{cluster=\"garden\"} 3590.0",
            "seedlet_leader 1",
            "seedlet_shootstate_writes_total 1",
            "seedlet_controller_restarts_total{controller=\"heartbeat\"} 1",
            "seedlet_build_info{version=\"",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
        assert_eq!(metrics.controller_restarts(), 1);
    }

    #[test]
    fn last_renew_age_is_negative_before_the_first_renewal() {
        let metrics = Metrics::new("agent");
        let text = metrics.encode(at(5));
        assert!(
            text.contains("seedlet_lease_last_renew_age_seconds -1.0"),
            "{text}"
        );
        assert!(!text.contains("seedlet_garden_client_certificate_expiry_seconds "));
    }
}
