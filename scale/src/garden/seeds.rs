//! Simulated seeds for `seedlet bench garden`: lightweight heartbeat clients, each with its own
//! seed identity (a client certificate from the garden sandbox's CA, CN
//! `gardener.cloud:system:seed:<name>`, O `gardener.cloud:system:seeds`), so that every request
//! passes the seed authorizer and SeedRestriction like a real agent's. A seed registers its Seed
//! with `GardenletReady=True` and then renews its Lease every period until it is stopped.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use seedlet_api::core::Seed;
use seedlet_api::names::{csr, namespaces};
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::Error;

/// Name of simulated seed number `index`.
pub fn seed_name(index: usize) -> String {
    format!("seed-{index:04}")
}

/// Lease renewals of all seeds: request latencies, failures and each seed's last renewal.
#[derive(Clone, Default)]
pub struct Renewals {
    inner: Arc<Mutex<RenewalState>>,
}

#[derive(Default)]
struct RenewalState {
    latencies: Vec<Duration>,
    failures: u64,
    last_error: Option<String>,
    last_renewed: BTreeMap<String, jiff::Timestamp>,
}

impl Renewals {
    fn lock(&self) -> std::sync::MutexGuard<'_, RenewalState> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn renewed(&self, seed: &str, at: jiff::Timestamp, took: Duration) {
        let mut state = self.lock();
        state.latencies.push(took);
        state.last_renewed.insert(seed.to_owned(), at);
    }

    fn failed(&self, error: String) {
        let mut state = self.lock();
        state.failures += 1;
        state.last_error = Some(error);
    }

    /// The renewTime last written for `seed`.
    pub fn last_renewed(&self, seed: &str) -> Option<jiff::Timestamp> {
        self.lock().last_renewed.get(seed).copied()
    }

    /// Request latencies of all successful renewals so far.
    pub fn latencies(&self) -> Vec<Duration> {
        self.lock().latencies.clone()
    }

    /// Failed renewals and the last error.
    pub fn failures(&self) -> (u64, Option<String>) {
        let state = self.lock();
        (state.failures, state.last_error.clone())
    }
}

/// One simulated seed: its identity's client and the switch that stops its heartbeat.
pub struct SimulatedSeed {
    /// Seed name.
    pub name: String,
    client: kube::Client,
    stop: CancellationToken,
}

impl SimulatedSeed {
    /// A client for seed `name` with its own certificate from `garden`'s CA.
    pub async fn connect(
        garden: &Sandbox,
        name: String,
        stop: &CancellationToken,
    ) -> Result<Self, Error> {
        let kubeconfig = garden
            .kubeconfig_for(&csr::seed_common_name(&name), &[csr::SEED_ORGANIZATION])
            .map_err(|source| Error::Sandbox {
                name: "garden",
                source,
            })?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .map_err(|error| Error::Workload {
                what: format!("kubeconfig of seed {name}: {error}"),
            })?;
        let client = kube::Client::try_from(config).map_err(|source| Error::Kube {
            what: format!("build the client of seed {name}"),
            source,
        })?;
        Ok(Self {
            name,
            client,
            stop: stop.child_token(),
        })
    }

    /// Creates the Seed (as the seed itself, through SeedRestriction), creates its Lease and
    /// reports `GardenletReady=True`, in the order of an agent's registration and first beat (a
    /// Seed with conditions but no Lease is one whose agent is gone).
    pub async fn register(&self, renewals: &Renewals) -> Result<(), Error> {
        let seeds: Api<Seed> = Api::all(self.client.clone());
        let kube_error = |what: String| move |source| Error::Kube { what, source };
        let seed: Seed = serde_json::from_value(seed_object(&self.name)).map_err(Error::Json)?;
        let created = seeds
            .create(&PostParams::default(), &seed)
            .await
            .map_err(kube_error(format!("create Seed {}", self.name)))?;
        let uid = created.metadata.uid.unwrap_or_default();
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), namespaces::SEED_LEASE);
        let params = PostParams::default();
        // Renewed when it is written, as an agent's is: a renewTime taken before the retries
        // while the authorizer learns the Seed would be stale on arrival.
        let created = until_authorized(|| async {
            let lease: Lease =
                serde_json::from_value(lease_object(&self.name, &uid, jiff::Timestamp::now()))
                    .map_err(kube::Error::SerdeError)?;
            leases.create(&params, &lease).await
        })
        .await
        .map_err(kube_error(format!("create Lease of Seed {}", self.name)))?;
        let now = created
            .spec
            .and_then(|spec| spec.renew_time)
            .map_or_else(jiff::Timestamp::now, |time| time.0);
        let ready = json!({"status": {"conditions": [{
            "type": "GardenletReady", "status": "True", "reason": "GardenletReady",
            "message": "simulated gardenlet is posting ready status",
            "lastTransitionTime": now.to_string(), "lastUpdateTime": now.to_string()
        }]}});
        // The seed authorizer knows the Seed once its graph has seen it; an agent's next beat
        // retries as this does.
        let (params, patch) = (PatchParams::default(), Patch::Merge(&ready));
        until_authorized(|| seeds.patch_status(&self.name, &params, &patch))
            .await
            .map_err(kube_error(format!(
                "report GardenletReady of Seed {}",
                self.name
            )))?;
        renewals.renewed(&self.name, now, Duration::ZERO);
        Ok(())
    }

    /// Renews the Lease every `period`, first after `offset` (so that the seeds spread over the
    /// period), until [`SimulatedSeed::stop`] or the run's stop.
    pub fn heartbeat(&self, period: Duration, offset: Duration, renewals: Renewals) {
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), namespaces::SEED_LEASE);
        let name = self.name.clone();
        let stop = self.stop.clone();
        tokio::spawn(async move {
            let start = tokio::time::Instant::now() + offset;
            let mut ticker = tokio::time::interval_at(start, period);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ticker.tick() => {}
                    () = stop.cancelled() => return,
                }
                let now = jiff::Timestamp::now();
                let patch = json!({"spec": {"renewTime": micro_time(now)}});
                let started = Instant::now();
                match leases
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Ok(_) => renewals.renewed(&name, now, started.elapsed()),
                    Err(error) => renewals.failed(format!("renew Lease of {name}: {error}")),
                }
            }
        });
    }

    /// Stops this seed's heartbeat (the agent is gone).
    pub fn stop(&self) {
        self.stop.cancel();
    }
}

/// How long a new seed's requests may be refused while the authorizer's graph catches up.
const AUTHORIZER_LAG: Duration = Duration::from_secs(30);

/// `request` again while it is refused with 403, for at most [`AUTHORIZER_LAG`].
async fn until_authorized<T, F, Fut>(mut request: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let started = Instant::now();
    loop {
        match request().await {
            Err(kube::Error::Api(status))
                if status.code == 403 && started.elapsed() < AUTHORIZER_LAG =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => return other,
        }
    }
}

/// A Seed as the demo agent registers it.
fn seed_object(name: &str) -> Value {
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Seed",
        "metadata": {"name": name, "labels": {"environment": "bench"}},
        "spec": {
            "provider": {"type": "local", "region": "local", "zones": ["0"]},
            "dns": {"provider": {"type": "local"}},
            "ingress": {"domain": format!("ingress.{name}.seed.example.com"), "controller": {"kind": "nginx"}},
            "networks": {"nodes": "172.18.0.0/16", "pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
            "settings": {"scheduling": {"visible": true}}
        }
    })
}

/// The seed's Lease: owned by its Seed, held by its name, renewed `now`.
fn lease_object(name: &str, uid: &str, now: jiff::Timestamp) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "namespace": namespaces::SEED_LEASE,
            "ownerReferences": [{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed", "name": name, "uid": uid}]
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": micro_time(now)}
    })
}

/// A `MicroTime` as Kubernetes writes it (microseconds, UTC).
fn micro_time(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_in_creation_order_and_micro_times_have_six_digits() {
        assert_eq!(seed_name(7), "seed-0007");
        assert!(seed_name(9) < seed_name(10));
        let at: jiff::Timestamp = "2026-01-02T03:04:05.123456789Z".parse().expect("time");
        assert_eq!(micro_time(at), "2026-01-02T03:04:05.123456Z");
    }

    #[test]
    fn the_seed_and_lease_are_valid_api_objects() {
        let seed: Seed = serde_json::from_value(seed_object("seed-0001")).expect("seed");
        assert_eq!(seed.spec.provider.type_, "local");
        let lease: Lease = serde_json::from_value(lease_object(
            "seed-0001",
            "uid",
            jiff::Timestamp::UNIX_EPOCH,
        ))
        .expect("lease");
        assert_eq!(
            lease.spec.and_then(|s| s.holder_identity).as_deref(),
            Some("seed-0001")
        );
    }
}
