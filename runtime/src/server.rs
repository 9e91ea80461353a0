//! HTTP probe and metrics server (axum): `/healthz` and `/readyz` on `server.healthProbes`,
//! `/metrics` on `server.metrics`.
//!
//! `/healthz` answers 200 while the health manager is healthy and 500 (with the failing check
//! named in the body, controller-runtime style) otherwise; `/readyz` answers 200 once bootstrap,
//! Seed registration and the caches are done, and on a standby replica waiting for leadership
//! (as gardenlet's standby replicas are Ready: otherwise a Deployment with more than one replica
//! could never finish a rolling update or drain a node).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::health::HealthManager;
use crate::metrics::{CONTENT_TYPE, Metrics};

/// Errors of the probe and metrics servers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Binding a listening socket failed.
    #[error("binding {purpose} server to {address}")]
    Bind {
        /// `health probe` or `metrics`.
        purpose: &'static str,
        /// Requested address.
        address: SocketAddr,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

/// Startup steps that must be done before `/readyz` answers 200.
#[derive(Debug, Default)]
pub struct Readiness {
    standby: AtomicBool,
    bootstrapped: AtomicBool,
    registered: AtomicBool,
    caches_synced: AtomicBool,
}

/// One readiness step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The garden client exists (bootstrap or static kubeconfig).
    Bootstrap,
    /// The Seed is registered and its garden namespace exists.
    Registration,
    /// The controllers' caches are synced.
    Caches,
}

impl Step {
    const ALL: [Step; 3] = [Step::Bootstrap, Step::Registration, Step::Caches];

    fn check_name(self) -> &'static str {
        match self {
            Step::Bootstrap => "garden-bootstrap",
            Step::Registration => "seed-registration",
            Step::Caches => "runtime-informer-sync",
        }
    }
}

impl Readiness {
    /// Marks `step` done or not done.
    pub fn set(&self, step: Step, done: bool) {
        self.flag(step).store(done, Ordering::SeqCst);
    }

    /// Whether `step` is done.
    pub fn is_done(&self, step: Step) -> bool {
        self.flag(step).load(Ordering::SeqCst)
    }

    /// Whether every step is done, or this replica is a standby waiting for leadership.
    pub fn is_ready(&self) -> bool {
        self.is_standby() || Step::ALL.iter().all(|step| self.is_done(*step))
    }

    /// Marks this replica as a standby (waiting for leadership) or as leading.
    pub fn set_standby(&self, standby: bool) {
        self.standby.store(standby, Ordering::SeqCst);
    }

    /// Whether this replica is a standby waiting for leadership.
    pub fn is_standby(&self) -> bool {
        self.standby.load(Ordering::SeqCst)
    }

    /// Marks every step not done (a replica stepping down).
    pub fn reset(&self) {
        for step in Step::ALL {
            self.set(step, false);
        }
    }

    fn flag(&self, step: Step) -> &AtomicBool {
        match step {
            Step::Bootstrap => &self.bootstrapped,
            Step::Registration => &self.registered,
            Step::Caches => &self.caches_synced,
        }
    }
}

/// What the handlers read.
#[derive(Debug, Clone)]
pub struct ProbeState {
    /// The health manager behind `/healthz`.
    pub health: HealthManager,
    /// Startup steps behind `/readyz`.
    pub readiness: Arc<Readiness>,
    /// Metrics behind `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Clock for time-based gauges.
    pub clock: Arc<dyn Clock>,
}

/// Listening probe and metrics servers.
#[derive(Debug)]
pub struct Servers {
    /// Bound address of `/healthz` and `/readyz`.
    pub health_address: SocketAddr,
    /// Bound address of `/metrics`.
    pub metrics_address: SocketAddr,
    tasks: Vec<JoinHandle<()>>,
}

impl Servers {
    /// Binds both servers (one server when both addresses are equal and not port 0) and serves
    /// until `shutdown` is cancelled.
    ///
    /// # Errors
    /// [`Error::Bind`] when an address cannot be bound.
    pub async fn start(
        health_address: SocketAddr,
        metrics_address: SocketAddr,
        state: ProbeState,
        shutdown: CancellationToken,
    ) -> Result<Self, Error> {
        if health_address == metrics_address && health_address.port() != 0 {
            let listener = bind("health probe", health_address).await?;
            let bound = local_address(&listener, health_address);
            let router = health_router().merge(metrics_router()).with_state(state);
            let task = tokio::spawn(serve(listener, router, shutdown));
            tracing::info!(address = %bound, "serving health probes and metrics");
            return Ok(Self {
                health_address: bound,
                metrics_address: bound,
                tasks: vec![task],
            });
        }
        let health = bind("health probe", health_address).await?;
        let metrics = bind("metrics", metrics_address).await?;
        let health_bound = local_address(&health, health_address);
        let metrics_bound = local_address(&metrics, metrics_address);
        tracing::info!(address = %health_bound, "serving health probes");
        tracing::info!(address = %metrics_bound, "serving metrics");
        let tasks = vec![
            tokio::spawn(serve(
                health,
                health_router().with_state(state.clone()),
                shutdown.clone(),
            )),
            tokio::spawn(serve(metrics, metrics_router().with_state(state), shutdown)),
        ];
        Ok(Self {
            health_address: health_bound,
            metrics_address: metrics_bound,
            tasks,
        })
    }

    /// Waits until both servers have stopped (after the shutdown token was cancelled).
    pub async fn join(mut self) {
        for task in std::mem::take(&mut self.tasks) {
            if let Err(error) = task.await {
                tracing::warn!(error = %crate::error_chain(&error), "probe server task ended abnormally");
            }
        }
    }
}

impl Drop for Servers {
    /// Aborts servers still running (the owner was dropped without a graceful shutdown).
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Routes `/healthz` and `/readyz`.
pub fn health_router() -> Router<ProbeState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

/// Routes `/metrics`.
pub fn metrics_router() -> Router<ProbeState> {
    Router::new().route("/metrics", get(metrics))
}

async fn bind(purpose: &'static str, address: SocketAddr) -> Result<TcpListener, Error> {
    TcpListener::bind(address)
        .await
        .map_err(|source| Error::Bind {
            purpose,
            address,
            source,
        })
}

fn local_address(listener: &TcpListener, requested: SocketAddr) -> SocketAddr {
    listener.local_addr().unwrap_or(requested)
}

async fn serve(listener: TcpListener, router: Router, shutdown: CancellationToken) {
    let result = axum::serve(listener, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await;
    if let Err(error) = result {
        tracing::error!(error = %crate::error_chain(&error), "probe server failed");
    }
}

async fn healthz(State(state): State<ProbeState>) -> Response {
    let reason = state.health.unhealthy_reason();
    state.metrics.set_healthy(reason.is_none());
    let mut checks = vec![("ping", None)];
    checks.push(("periodic-health", reason.map(|r| r.message())));
    check_response(&checks, "healthz")
}

async fn readyz(State(state): State<ProbeState>) -> Response {
    if state.readiness.is_standby() {
        return check_response(&[("leader-election-standby", None)], "readyz");
    }
    let checks: Vec<_> = Step::ALL
        .iter()
        .map(|step| {
            let failure = (!state.readiness.is_done(*step)).then_some("not done yet");
            (step.check_name(), failure)
        })
        .collect();
    check_response(&checks, "readyz")
}

async fn metrics(State(state): State<ProbeState>) -> Response {
    state.metrics.set_healthy(state.health.is_healthy());
    let body = state.metrics.encode(state.clock.now());
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], body).into_response()
}

/// Builds a controller-runtime style check response: 200 `ok` when every check passes, else 500
/// listing each check with `[+]`/`[-]`.
fn check_response(checks: &[(&str, Option<&str>)], endpoint: &str) -> Response {
    if checks.iter().all(|(_, failure)| failure.is_none()) {
        return (StatusCode::OK, "ok").into_response();
    }
    let mut body = String::new();
    for (name, failure) in checks {
        match failure {
            None => body.push_str(&format!("[+]{name} ok\n")),
            Some(message) => body.push_str(&format!("[-]{name} failed: {message}\n")),
        }
    }
    body.push_str(&format!("{endpoint} check failed\n"));
    (StatusCode::INTERNAL_SERVER_ERROR, body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_is_ready_only_when_every_step_is_done() {
        let readiness = Readiness::default();
        readiness.set(Step::Bootstrap, true);
        readiness.set(Step::Registration, true);
        assert!(!readiness.is_ready());
        readiness.set(Step::Caches, true);
        assert!(readiness.is_ready());
        readiness.reset();
        assert!(!readiness.is_ready());
    }

    #[test]
    fn a_standby_replica_is_ready_and_a_new_leader_waits_for_its_steps() {
        let readiness = Readiness::default();
        readiness.set_standby(true);
        assert!(
            readiness.is_ready(),
            "standby replicas are Ready, like gardenlet's"
        );
        readiness.set_standby(false);
        assert!(
            !readiness.is_ready(),
            "leading without the startup steps done"
        );
    }

    #[test]
    fn check_response_is_500_and_names_the_failing_check() {
        let response = check_response(
            &[("ping", None), ("periodic-health", Some("bad"))],
            "healthz",
        );
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let ok = check_response(&[("ping", None)], "healthz");
        assert_eq!(ok.status(), StatusCode::OK);
    }
}
