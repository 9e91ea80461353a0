//! The webhooks' Prometheus series, registered in the garden controller's `/metrics` when the
//! webhooks are on:
//!
//! | name | type | meaning |
//! |---|---|---|
//! | `seedlet_seed_authorizer_requests_total{decision}` | counter | SubjectAccessReviews answered: `allow`, `no_opinion`, `error` (an `evaluationError`), `unavailable` (503 before the graph is synced) |
//! | `seedlet_seed_authorizer_request_duration_seconds` | histogram | time to decide a review |
//! | `seedlet_seed_restriction_requests_total{operation,resource,decision}` | counter | AdmissionReviews of seed users: `allowed` or `denied` |
//! | `seedlet_seed_authorizer_synced` | gauge | 1 once every watch of the graph has listed (before that the authorizer answers 503) |
//! | `seedlet_seed_authorizer_graph_vertices` | gauge | vertices of the resource-dependency graph (its size follows the garden's objects) |
//!
//! A rising `unavailable` count means seeds are refused while the graph syncs; `denied` counts
//! what SeedRestriction turned away (each denial is also a debug log line).

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    decision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AdmissionLabels {
    operation: String,
    resource: String,
    decision: &'static str,
}

/// The resources SeedRestriction's registration sends (spec §4.1).
const RESTRICTED_RESOURCES: &[&str] = &[
    "backupbuckets",
    "backupentries",
    "bastions",
    "certificatesigningrequests",
    "clusterrolebindings",
    "configmaps",
    "internalsecrets",
    "leases",
    "secrets",
    "seeds",
    "serviceaccounts",
    "shootstates",
];

/// The authorizer's answer, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Allowed.
    Allow,
    /// No opinion (the next authorizer, or a denial, follows).
    NoOpinion,
    /// An `evaluationError` (malformed review, selector probe failure).
    Error,
    /// 503: the graph is not synced yet.
    Unavailable,
}

impl Decision {
    fn label(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::NoOpinion => "no_opinion",
            Decision::Error => "error",
            Decision::Unavailable => "unavailable",
        }
    }
}

/// The webhooks' series.
#[derive(Debug, Clone)]
pub struct WebhookMetrics {
    authorizer: Family<DecisionLabels, Counter>,
    authorizer_duration: Histogram,
    restriction: Family<AdmissionLabels, Counter>,
    synced: Gauge,
    graph_vertices: Gauge,
}

impl WebhookMetrics {
    /// Registers the series in `registry` (prefix `seedlet_`).
    pub fn register(registry: &mut Registry) -> Self {
        let authorizer = Family::<DecisionLabels, Counter>::default();
        registry.register(
            "seed_authorizer_requests",
            "SubjectAccessReviews answered by the seed authorizer, by decision",
            authorizer.clone(),
        );
        // 0.1 ms .. ~0.8 s: decisions are graph lookups, slow ones mean a busy process.
        let authorizer_duration = Histogram::new(exponential_buckets(0.0001, 2.0, 14));
        registry.register_with_unit(
            "seed_authorizer_request_duration",
            "Time the seed authorizer took to decide a review",
            Unit::Seconds,
            authorizer_duration.clone(),
        );
        let restriction = Family::<AdmissionLabels, Counter>::default();
        registry.register(
            "seed_restriction_requests",
            "AdmissionReviews of seed users answered by SeedRestriction, by operation, resource and decision",
            restriction.clone(),
        );
        let synced = Gauge::default();
        registry.register(
            "seed_authorizer_synced",
            "1 once every watch of the seed authorizer's graph has listed",
            synced.clone(),
        );
        let graph_vertices = Gauge::default();
        registry.register(
            "seed_authorizer_graph_vertices",
            "Vertices of the seed authorizer's resource-dependency graph",
            graph_vertices.clone(),
        );
        Self {
            authorizer,
            authorizer_duration,
            restriction,
            synced,
            graph_vertices,
        }
    }

    /// Counts one authorizer answer that took `took`.
    pub fn authorized(&self, decision: Decision, took: Duration) {
        self.authorizer
            .get_or_create(&DecisionLabels {
                decision: decision.label(),
            })
            .inc();
        self.authorizer_duration.observe(took.as_secs_f64());
    }

    /// Records that every watch of the graph has listed.
    pub fn graph_synced(&self) {
        self.synced.set(1);
    }

    /// Records the graph's size after a change.
    pub fn graph_size(&self, vertices: usize) {
        self.graph_vertices
            .set(i64::try_from(vertices).unwrap_or(i64::MAX));
    }

    /// Counts one SeedRestriction answer for a seed user. Operations and resources outside the
    /// webhook's rules count as `other`: the endpoint is reachable without authentication, so
    /// label values must not come from the caller unchecked.
    pub fn admitted(&self, operation: &str, resource: &str, allowed: bool) {
        let known = |value: &str, set: &[&str]| {
            if set.contains(&value) {
                value.to_owned()
            } else {
                "other".to_owned()
            }
        };
        self.restriction
            .get_or_create(&AdmissionLabels {
                operation: known(operation, &["CREATE", "UPDATE", "DELETE"]),
                resource: known(resource, RESTRICTED_RESOURCES),
                decision: if allowed { "allowed" } else { "denied" },
            })
            .inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exposition(registry: &Registry) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, registry).expect("encode");
        text
    }

    #[test]
    fn caller_chosen_label_values_collapse_into_other() {
        let mut registry = Registry::with_prefix("seedlet");
        let metrics = WebhookMetrics::register(&mut registry);
        metrics.admitted("CREATE", "leases", false);
        metrics.admitted("CREATE", "leases", false);
        metrics.admitted("CONNECT", "pods/exec", true);
        metrics.authorized(Decision::Unavailable, Duration::from_millis(1));
        metrics.graph_size(42);
        metrics.graph_synced();
        let text = exposition(&registry);
        for line in [
            "seedlet_seed_restriction_requests_total{operation=\"CREATE\",resource=\"leases\",decision=\"denied\"} 2",
            "seedlet_seed_restriction_requests_total{operation=\"other\",resource=\"other\",decision=\"allowed\"} 1",
            "seedlet_seed_authorizer_requests_total{decision=\"unavailable\"} 1",
            "seedlet_seed_authorizer_request_duration_seconds_count 1",
            "seedlet_seed_authorizer_graph_vertices 42",
            "seedlet_seed_authorizer_synced 1",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing in:\n{text}"
            );
        }
    }
}
