//! Support for the reconcile tests beside the controllers
//! (`controllers/<name>/reconcile_tests.rs`): an in-process garden and seed sandbox with the
//! Gardener CRDs (started through `seedlet_sandbox::setup`, the one copy the end-to-end harness
//! uses too), the pieces a plain controller `Ctx` is built from, and object helpers. Every server
//! binds `127.0.0.1:0`.

use std::sync::Arc;

use jiff::Timestamp;
use seedlet_runtime::clock::FakeClock;
use seedlet_sandbox::Sandbox;
pub use seedlet_sandbox::setup::create;
use seedlet_sandbox::setup::start_with_crds;
use serde_json::{Value, json};

use crate::metrics::AgentMetrics;

/// Name of our Seed in every test.
pub const SEED: &str = "local";
/// Field manager of the controllers under test.
pub const FIELD_MANAGER: &str = crate::FIELD_MANAGER;

/// A garden and a seed sandbox with their CRDs and the namespaces the controllers expect (garden:
/// `garden`, `default` for Events about cluster-scoped objects; seed: `garden`), and a fake clock.
pub struct Env {
    garden_sandbox: Sandbox,
    seed_sandbox: Sandbox,
    /// Admin client of the garden.
    pub garden: kube::Client,
    /// Admin client of the seed.
    pub seed: kube::Client,
    /// The clock the controllers read (standing at 2025-01-01T00:00:00Z).
    pub clock: Arc<FakeClock>,
}

impl Env {
    /// Starts both sandboxes.
    pub async fn start() -> Env {
        let (garden_sandbox, seed_sandbox) = tokio::join!(
            start_with_crds("garden", seedlet_api::crds::garden_crds()),
            start_with_crds("seed", seedlet_api::crds::seed_crds()),
        );
        let garden_sandbox = garden_sandbox.expect("garden sandbox");
        let seed_sandbox = seed_sandbox.expect("seed sandbox");
        let (garden, seed) = (garden_sandbox.client(), seed_sandbox.client());
        for namespace in ["garden", "default"] {
            ensure_namespace(&garden, namespace).await;
        }
        ensure_namespace(&seed, "garden").await;
        let now: Timestamp = "2025-01-01T00:00:00Z".parse().expect("timestamp");
        Env {
            garden_sandbox,
            seed_sandbox,
            garden,
            seed,
            clock: Arc::new(FakeClock::new(now)),
        }
    }

    /// The clock as the controllers take it.
    pub fn clock(&self) -> Arc<dyn seedlet_runtime::clock::Clock> {
        self.clock.clone()
    }

    /// An Events recorder writing to the garden.
    pub fn events(&self) -> seedlet_runtime::events::Recorder {
        seedlet_runtime::events::Recorder::new(self.garden.clone(), "gardenlet")
            .with_clock(self.clock())
    }

    /// Fresh process metrics.
    pub fn metrics() -> Arc<AgentMetrics> {
        Arc::new(AgentMetrics::new())
    }

    /// Stops both sandboxes.
    pub async fn shutdown(self) {
        self.garden_sandbox.shutdown().await;
        self.seed_sandbox.shutdown().await;
    }
}

/// Creates namespace `name` unless it exists.
pub async fn ensure_namespace(client: &kube::Client, name: &str) {
    seedlet_sandbox::setup::ensure_namespace(client, name)
        .await
        .expect("namespace");
}

/// A Secret `namespace/name` with string `data` and `finalizers`, created through `client`.
pub async fn put_secret(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    data: &[(&str, &str)],
    finalizers: &[&str],
) -> k8s_openapi::api::core::v1::Secret {
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(key, value)| ((*key).to_owned(), json!(value)))
        .collect();
    create(
        client,
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": name, "namespace": namespace, "finalizers": finalizers},
               "stringData": data}),
    )
    .await
}

/// The string value of `key` in a Secret's data.
pub fn secret_data(secret: &k8s_openapi::api::core::v1::Secret, key: &str) -> Option<String> {
    secret
        .data
        .as_ref()?
        .get(key)
        .map(|value| String::from_utf8_lossy(&value.0).into_owned())
}

/// A `lastOperation` JSON of `type_` in `state` at `now`.
pub fn last_operation(type_: &str, state: &str, now: Timestamp) -> Value {
    json!({"type": type_, "state": state, "progress": 100, "description": "by test",
           "lastUpdateTime": now.to_string()})
}

/// Creates our Seed [`SEED`] in `garden` (provider `local`, the networks every Seed needs).
pub async fn seed(garden: &kube::Client) -> seedlet_api::core::Seed {
    create(
        garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
               "metadata": {"name": SEED},
               "spec": {"provider": {"type": "local", "region": "local"},
                        "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}}}),
    )
    .await
}
