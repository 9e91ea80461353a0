//! Prometheus metrics every seedlet process exposes (reconciles, controller restarts, leadership,
//! health, build info) in OpenMetrics text format. A process adds its own series through
//! [`MetricsBuilder::registry`] and [`MetricsBuilder::before_encode`], so the garden controller's
//! `/metrics` carries no agent-only series and vice versa.

use std::sync::atomic::AtomicU64;
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

/// A gauge holding a float (seconds, ages).
pub type FloatGauge = Gauge<f64, AtomicU64>;

/// A hook run before every encode, to compute time-based gauges for `now`.
type EncodeHook = Box<dyn Fn(Timestamp) + Send + Sync>;

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

/// The series every process has; cheap to share behind an `Arc`.
///
/// | name | type | meaning |
/// |---|---|---|
/// | `seedlet_reconcile_total{controller}` | counter | reconciles per controller |
/// | `seedlet_reconcile_errors_total{controller}` | counter | failed reconciles per controller |
/// | `seedlet_reconcile_duration_seconds{controller}` | histogram | reconcile durations per controller |
/// | `seedlet_controller_restarts_total{controller}` | counter | controllers that returned before their term ended and were started again |
/// | `seedlet_write_budget_exceeded_total{controller}` | counter | writes over the per-object budget, not sent ([`crate::budget`]) |
/// | `seedlet_leader` | gauge | 1 while this replica holds the leader lease |
/// | `seedlet_healthy` | gauge | 1 while the health manager reports healthy |
/// | `seedlet_build_info{version,component}` | info | build version |
pub struct Metrics {
    registry: Registry,
    reconciles: Family<ControllerLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_duration: Family<ControllerLabels, Histogram>,
    controller_restarts: Family<ControllerLabels, Counter>,
    controller_restarts_total: Counter,
    leader: Gauge,
    healthy: Gauge,
    before_encode: Vec<EncodeHook>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("hooks", &self.before_encode.len())
            .finish_non_exhaustive()
    }
}

/// Builds a process's [`Metrics`]: the common series plus the process's own.
pub struct MetricsBuilder {
    metrics: Metrics,
}

impl MetricsBuilder {
    /// The registry (prefix `seedlet_`) to register the process's own series in.
    pub fn registry(&mut self) -> &mut Registry {
        &mut self.metrics.registry
    }

    /// Runs `hook` with the current time before every encode (for ages and expiries).
    pub fn before_encode(&mut self, hook: impl Fn(Timestamp) + Send + Sync + 'static) {
        self.metrics.before_encode.push(Box::new(hook));
    }

    /// The finished metrics.
    pub fn build(self) -> Metrics {
        self.metrics
    }
}

impl Metrics {
    /// The common series only, for `component` (`agent` or `garden`).
    pub fn new(component: &str) -> Self {
        Self::builder(component).build()
    }

    /// A builder holding the common series for `component`; add the process's own, then
    /// [`MetricsBuilder::build`].
    pub fn builder(component: &str) -> MetricsBuilder {
        let mut registry = Registry::with_prefix(PREFIX);
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
        registry.register(
            "write_budget_exceeded",
            "Writes not sent because the controller wrote the object too often (crate::budget)",
            crate::budget::exceeded_counter().clone(),
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
        registry.register(
            "build",
            "Build information",
            Info::new(BuildLabels {
                version: env!("CARGO_PKG_VERSION").to_owned(),
                component: component.to_owned(),
            }),
        );
        MetricsBuilder {
            metrics: Self {
                registry,
                reconciles,
                reconcile_errors,
                reconcile_duration,
                controller_restarts,
                controller_restarts_total: Counter::default(),
                leader,
                healthy,
                before_encode: Vec::new(),
            },
        }
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

    /// Records whether this replica leads.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Records the health manager's verdict.
    pub fn set_healthy(&self, healthy: bool) {
        self.healthy.set(i64::from(healthy));
    }

    /// Encodes all metrics as OpenMetrics text, computing time-based gauges for `now`.
    pub fn encode(&self, now: Timestamp) -> String {
        for hook in &self.before_encode {
            hook(now);
        }
        let mut out = String::new();
        // Writing into a String cannot fail; the encoder only propagates the writer's errors.
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 14))
}

/// Seconds from `from` to `to` (negative when `to` is earlier).
pub fn seconds_between(from: Timestamp, to: Timestamp) -> f64 {
    to.duration_since(from).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    #[test]
    fn encode_contains_the_common_families_and_ends_with_eof() {
        let metrics = Metrics::new("garden");
        metrics.reconciled("seed-lifecycle", Duration::from_millis(12), false);
        metrics.set_leader(true);
        metrics.controller_restarted("seed-lifecycle");
        let text = metrics.encode(at(110));
        for needle in [
            "seedlet_reconcile_total{controller=\"seed-lifecycle\"} 1",
            "seedlet_reconcile_errors_total{controller=\"seed-lifecycle\"} 1",
            "seedlet_reconcile_duration_seconds_count{controller=\"seed-lifecycle\"} 1",
            "seedlet_leader 1",
            "seedlet_controller_restarts_total{controller=\"seed-lifecycle\"} 1",
            "seedlet_build_info{version=\"",
            "component=\"garden\"",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
        assert_eq!(metrics.controller_restarts(), 1);
    }

    #[test]
    fn process_series_and_hooks_are_added_through_the_builder() {
        let mut builder = Metrics::builder("agent");
        let age = FloatGauge::default();
        builder
            .registry()
            .register_with_unit("thing_age", "Age", Unit::Seconds, age.clone());
        builder.before_encode(move |now| {
            age.set(seconds_between(at(100), now));
        });
        let text = builder.build().encode(at(110));
        assert!(text.contains("seedlet_thing_age_seconds 10.0"), "{text}");
        assert!(!Metrics::new("garden").encode(at(110)).contains("thing_age"));
    }
}
