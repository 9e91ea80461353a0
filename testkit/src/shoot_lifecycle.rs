//! Shared set-up of the shoot lifecycle helper tests: a garden sandbox with the Gardener CRDs and
//! the project namespace `garden-dev`, Shoot builders and a clock that runs from a chosen instant.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_api::core::Shoot;
use seedlet_runtime::clock::Clock;
use seedlet_sandbox::Sandbox;

/// Project namespace of every test Shoot.
pub const NAMESPACE: &str = "garden-dev";

/// Starts a garden sandbox with the garden CRDs and `garden-dev`.
pub async fn garden() -> Sandbox {
    let garden = crate::start_sandbox("garden").await;
    crate::prepare_garden(&garden.client()).await;
    crate::ensure_namespace(&garden.client(), NAMESPACE).await;
    garden
}

/// Shoots in `garden-dev`.
pub fn shoots(client: &kube::Client) -> Api<Shoot> {
    Api::namespaced(client.clone(), NAMESPACE)
}

/// Creates Shoot `name` in `garden-dev` with `spec` merged over a minimal valid spec.
pub async fn create_shoot(client: &kube::Client, name: &str, spec: serde_json::Value) -> Shoot {
    create_shoot_in(client, NAMESPACE, name, spec).await
}

/// Creates Shoot `namespace/name` with `spec` merged over a minimal valid spec.
pub async fn create_shoot_in(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    spec: serde_json::Value,
) -> Shoot {
    let mut base = serde_json::json!({
        "region": "local",
        "provider": {"type": "local", "workers": []},
        "kubernetes": {"version": "1.31.1"},
    });
    merge(&mut base, spec);
    let shoot: Shoot = serde_json::from_value(serde_json::json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {"name": name, "namespace": namespace},
        "spec": base,
    }))
    .expect("shoot");
    Api::<Shoot>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &shoot)
        .await
        .expect("create shoot")
}

/// Merge-patches the status of Shoot `name`.
pub async fn patch_status(client: &kube::Client, name: &str, status: serde_json::Value) {
    shoots(client)
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({ "status": status })),
        )
        .await
        .expect("patch shoot status");
}

/// A `lastOperation` of `type_`/`state` last updated at `at`.
pub fn last_operation(type_: &str, state: &str, at: Timestamp) -> serde_json::Value {
    serde_json::json!({
        "type": type_, "state": state, "description": "", "progress": 100,
        "lastUpdateTime": at.to_string(),
    })
}

/// Waits up to 10 s until `check` on the fresh Shoot `name` returns `Some`.
pub async fn wait_shoot<T>(
    client: &kube::Client,
    name: &str,
    what: &str,
    check: impl Fn(&Shoot) -> Option<T>,
) -> T {
    let api = shoots(client);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(found) = api
            .get_opt(name)
            .await
            .ok()
            .flatten()
            .and_then(|s| check(&s))
        {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A clock that stands at a chosen instant when created and then runs with the system clock, so
/// that requeues (real delays) meet the schedule they were computed from.
#[derive(Debug)]
pub struct RunningClock {
    offset: Mutex<SignedDuration>,
}

impl RunningClock {
    /// A clock reading `at` now.
    pub fn starting_at(at: Timestamp) -> Self {
        Self {
            offset: Mutex::new(at.duration_since(Timestamp::now())),
        }
    }
}

impl Clock for RunningClock {
    fn now(&self) -> Timestamp {
        let offset = *self.offset.lock().expect("clock lock");
        Timestamp::now() + offset
    }
}

fn merge(base: &mut serde_json::Value, over: serde_json::Value) {
    match (base, over) {
        (serde_json::Value::Object(base), serde_json::Value::Object(over)) => {
            for (key, value) in over {
                merge(base.entry(key).or_insert(serde_json::Value::Null), value);
            }
        }
        (base, over) => *base = over,
    }
}

/// A condition in API form.
pub fn condition(type_: &str, status: &str) -> serde_json::Value {
    serde_json::json!({
        "type": type_, "status": status, "reason": "Checked", "message": "checked",
        "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z",
    })
}

/// Creates Seed `name` and merge-patches its status with `status`.
pub async fn create_seed(client: &kube::Client, name: &str, status: serde_json::Value) {
    let seeds: Api<seedlet_api::core::Seed> = Api::all(client.clone());
    let seed = serde_json::from_value(serde_json::json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Seed",
        "metadata": {"name": name},
        "spec": {
            "provider": {"type": "local", "region": "local"},
            "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
        },
    }))
    .expect("seed");
    seeds
        .create(&PostParams::default(), &seed)
        .await
        .expect("create seed");
    patch_seed_status(client, name, status).await;
}

/// Merge-patches the status of Seed `name`.
pub async fn patch_seed_status(client: &kube::Client, name: &str, status: serde_json::Value) {
    Api::<seedlet_api::core::Seed>::all(client.clone())
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({ "status": status })),
        )
        .await
        .expect("seed status");
}
