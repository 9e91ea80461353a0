//! The API-error fault test's rounds (what each changes, where it injects which errors, what it
//! waits for) and its exact request accounting: what the agent sent to garden and seed (served
//! plus failed by injection, both counted per user by the sandboxes) and the bound its requests
//! under injected errors must stay within.

use std::ops::Sub;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use seedlet_api::core::{ControllerDeployment, ControllerInstallation};
use seedlet_runtime::metrics::Metrics;
use seedlet_sandbox::FaultKind;
use serde_json::json;

use super::HEALTHY;
use super::env::{
    AGENT_USER, CONVERGE, Env, ci_has, converge_within, greeting, installation,
    managed_resource_healthy,
};

/// One round: errors injected for a fraction of requests while the agent does some work.
#[derive(Clone, Copy, Debug)]
pub struct Round {
    /// Share of requests failed (0 for the fault-free measurement of the same work).
    pub fraction: f64,
    /// How they fail.
    pub kind: FaultKind,
    /// Whether the garden fails requests too, or only the seed.
    pub garden_too: bool,
    /// What the agent has to do.
    pub work: Work,
    /// How long the work may take.
    pub timeout: Duration,
}

/// The work of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// New values for the ControllerDeployment `ext` (so ext-a's ManagedResource changes) and a
    /// new installation: both installation controllers, the applier and the garden controller
    /// work, in garden and seed.
    ChangeAndInstall,
    /// The applied Deployment of every installation deleted behind the applier's back: only the
    /// applier works (seed), triggered by its watch and its periodic sync.
    RestoreDeleted,
}

/// The rounds in order; each work is measured fault-free before it runs under faults.
pub const ROUNDS: [Round; 5] = [
    Round {
        fraction: 0.0,
        kind: FaultKind::InternalError,
        garden_too: true,
        work: Work::ChangeAndInstall,
        timeout: CONVERGE,
    },
    // kube's client waits Retry-After and retries 429 itself: every throttled request in the
    // chain from the garden controller through the installation controllers and the applier
    // to the conditions adds at least a second, so this round took 8–23 s; its bound is wider.
    Round {
        fraction: 0.3,
        kind: FaultKind::TooManyRequests {
            retry_after_seconds: 1,
        },
        garden_too: true,
        work: Work::ChangeAndInstall,
        timeout: Duration::from_secs(60),
    },
    // The installation controllers retry their reads, server-side applies and condition writes
    // in place; the rest of a reconcile (Secret create and garbage collection, referenced data)
    // still restarts it on a 500. At 20 % they converged in 1.6–9.6 s over five runs (before the
    // in-place retries: within 30 s in one of two).
    Round {
        fraction: 0.2,
        kind: FaultKind::InternalError,
        garden_too: true,
        work: Work::ChangeAndInstall,
        timeout: CONVERGE,
    },
    Round {
        fraction: 0.0,
        kind: FaultKind::InternalError,
        garden_too: false,
        work: Work::RestoreDeleted,
        timeout: CONVERGE,
    },
    // The applier retries its requests in place, so 30 % of its requests failing hardly fails
    // its reconciles.
    Round {
        fraction: 0.3,
        kind: FaultKind::InternalError,
        garden_too: false,
        work: Work::RestoreDeleted,
        timeout: CONVERGE,
    },
];

impl Work {
    /// Does the work of round number `round` on `installations` (a new one is added to them;
    /// the test's writes go through the faults too: kube's client retries 429 after Retry-After,
    /// 500s are retried here) and waits until the agent finished it; returns how long that took.
    pub async fn perform(
        self,
        timeout: Duration,
        env: &Env,
        metrics: &Metrics,
        round: usize,
        installations: &mut Vec<String>,
    ) -> Duration {
        let (garden, seed) = (env.garden.client(), env.seed.client());
        let started = Instant::now();
        match self {
            Work::ChangeAndInstall => {
                let value = format!("round-{round}");
                let ci = format!("ext-t{round}");
                retry(|| set_greeting(&garden, "ext", &value)).await;
                retry(|| create_installation(&garden, &ci)).await;
                installations.push(ci.clone());
                converge_within(
                    "changed and installed under injected errors",
                    started,
                    timeout,
                    || async {
                        greeting(&seed, "ext-a", "ext").await.as_deref() == Some(value.as_str())
                            && greeting(&seed, &ci, "ext").await.as_deref() == Some(value.as_str())
                            && ci_has(&garden, &ci, HEALTHY).await
                            && ci_has(&garden, "ext-a", HEALTHY).await
                    },
                )
                .await
            }
            Work::RestoreDeleted => {
                let applier = |metrics: &Metrics| {
                    reconciles(&metrics.encode(jiff::Timestamp::now()), "managedresource").0
                };
                let reconciled_before = applier(metrics);
                let deployments = |ci: &str| {
                    Api::<Deployment>::namespaced(seed.clone(), &format!("extension-{ci}"))
                };
                for ci in installations.iter() {
                    retry(|| async {
                        match deployments(ci)
                            .delete("ext", &DeleteParams::default())
                            .await
                        {
                            Ok(_) => true,
                            Err(kube::Error::Api(status)) => status.is_not_found(),
                            Err(_) => false,
                        }
                    })
                    .await;
                }
                // Restored, and at least one reconcile per ManagedResource finished meanwhile
                // (so the round's failed-reconcile count covers real work).
                let expected = reconciled_before + installations.len() as u64;
                converge_within(
                    "restored under injected errors",
                    started,
                    timeout,
                    || async {
                        for ci in installations.iter() {
                            let restored = deployments(ci).get_opt("ext").await.is_ok_and(|d| {
                                d.is_some_and(|d| d.metadata.deletion_timestamp.is_none())
                            });
                            if !restored || !managed_resource_healthy(&seed, ci).await {
                                return false;
                            }
                        }
                        applier(metrics) >= expected
                    },
                )
                .await
            }
        }
    }
}

/// Requests of [`AGENT_USER`] to garden and seed together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    /// Served by the API servers.
    pub served: u64,
    /// Failed by fault injection instead of being served.
    pub failed: u64,
}

impl Sent {
    /// The counts so far.
    pub fn now(env: &Env) -> Self {
        Self {
            served: env.garden.requests_of(AGENT_USER) + env.seed.requests_of(AGENT_USER),
            failed: env.garden.injected_failures_of(AGENT_USER)
                + env.seed.injected_failures_of(AGENT_USER),
        }
    }

    /// Every request the agent sent: served or failed.
    pub fn total(self) -> u64 {
        self.served + self.failed
    }
}

impl Sub for Sent {
    type Output = Sent;

    fn sub(self, earlier: Sent) -> Sent {
        Sent {
            served: self.served - earlier.served,
            failed: self.failed - earlier.failed,
        }
    }
}

/// How many times over the fault-free work the agent may redo under errors (see [`allowed`]).
/// Measured: 1.9–3.3 under 10 % 500s, where most installation reconciles failed and were redone.
pub const REDO_FACTOR: f64 = 6.0;
/// Requests allowed on top, for the small numbers where one extra reconcile weighs a lot.
pub const SLACK: f64 = 40.0;

/// The most requests the agent may send for `work` (requests the same change took without
/// faults, background excluded) plus `background` req/s over `took`, when `fraction` of all
/// requests fail.
///
/// Derivation: failures are independent draws, so a request repeated until it gets through
/// costs `1 / (1 − fraction)` attempts on average — everything the agent does, background
/// included, is inflated by that factor if it retries only the failed request (kube's client for
/// 429, the applier for 500). What fails a whole reconcile instead (a 500 in a controller without
/// in-place retries, an applier request failing four times) redoes part of the work; the agent
/// may redo it [`REDO_FACTOR`] times over before this counts as hammering the API server, plus
/// [`SLACK`]. That is about twice the redoing measured, for a loaded machine; an agent that
/// retried without backoff (tens of requests per second per controller) exceeds it within
/// seconds.
pub fn allowed(work: f64, background: f64, took: Duration, fraction: f64) -> f64 {
    (REDO_FACTOR * work + background * took.as_secs_f64()) / (1.0 - fraction) + SLACK
}

/// Reconciles of `controller` so far and how many of them failed, from the agent's metrics text.
pub fn reconciles(metrics: &str, controller: &str) -> (u64, u64) {
    let value = |name: &str| {
        let prefix = format!("{name}{{controller=\"{controller}\"}} ");
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(prefix.as_str()))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(0)
    };
    (
        value("seedlet_reconcile_total"),
        value("seedlet_reconcile_errors_total"),
    )
}

async fn set_greeting(garden: &kube::Client, name: &str, value: &str) -> bool {
    let patch = json!({"helm": {"values": {"greeting": value}}});
    Api::<ControllerDeployment>::all(garden.clone())
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .is_ok()
}

async fn create_installation(garden: &kube::Client, name: &str) -> bool {
    match Api::<ControllerInstallation>::all(garden.clone())
        .create(&PostParams::default(), &installation(name, "ext"))
        .await
    {
        Ok(_) => true,
        Err(kube::Error::Api(status)) => status.is_already_exists(),
        Err(_) => false,
    }
}

/// Repeats `attempt` (up to 50 times, 100 ms apart) until it succeeds.
async fn retry<F, Fut>(mut attempt: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..50 {
        if attempt().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("a test write kept failing under injected faults");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_scales_work_and_background_by_the_expected_attempts() {
        let took = Duration::from_secs(10);
        let work = 20.0 * REDO_FACTOR;
        assert_eq!(allowed(20.0, 2.0, took, 0.0), work + 20.0 + SLACK);
        assert_eq!(allowed(20.0, 2.0, took, 0.5), 2.0 * (work + 20.0) + SLACK);
    }

    #[test]
    fn sent_is_served_plus_failed() {
        let later = Sent {
            served: 30,
            failed: 12,
        };
        let earlier = Sent {
            served: 10,
            failed: 2,
        };
        assert_eq!((later - earlier).total(), 30);
    }

    #[test]
    fn reconciles_are_read_per_controller() {
        let metrics = "seedlet_reconcile_total{controller=\"heartbeat\"} 9\nseedlet_reconcile_total{controller=\"managedresource\"} 12\nseedlet_reconcile_errors_total{controller=\"managedresource\"} 2\n";
        assert_eq!(reconciles(metrics, "managedresource"), (12, 2));
        assert_eq!(reconciles(metrics, "heartbeat"), (9, 0));
        assert_eq!(reconciles(metrics, "seed"), (0, 0));
    }
}
