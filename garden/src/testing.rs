//! Support for the reconcile tests beside the controllers
//! (`controllers/<name>/reconcile_tests.rs`): an in-process garden sandbox with the Gardener CRDs
//! (started through `seedlet_sandbox::setup`, the one copy the end-to-end harness uses too), the
//! pieces a plain controller `Ctx` is built from, and object helpers. The server binds
//! `127.0.0.1:0`.

use std::sync::Arc;

use jiff::Timestamp;
use seedlet_runtime::clock::FakeClock;
use seedlet_sandbox::Sandbox;
pub use seedlet_sandbox::setup::create;

/// A garden sandbox with the garden CRDs and the namespace `garden`, and a fake clock.
pub struct Env {
    sandbox: Sandbox,
    /// Admin client of the garden.
    pub client: kube::Client,
    /// The clock the controllers read (standing at 2025-01-01T00:00:00Z).
    pub clock: Arc<FakeClock>,
}

impl Env {
    /// Starts the garden sandbox.
    pub async fn start() -> Env {
        Self::start_with(seedlet_api::crds::garden_crds()).await
    }

    /// Starts a garden sandbox whose CRDs have no `selectableFields`, as a garden on Kubernetes
    /// < 1.31 serves them: a list by `spec.seedName` and the like answers 400.
    pub async fn start_without_selectable_fields() -> Env {
        let mut crds = seedlet_api::crds::garden_crds();
        for version in crds.iter_mut().flat_map(|crd| crd.spec.versions.iter_mut()) {
            version.selectable_fields = None;
        }
        Self::start_with(crds).await
    }

    async fn start_with(
        crds: Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>,
    ) -> Env {
        let sandbox = seedlet_sandbox::setup::start_with_crds("garden", crds)
            .await
            .expect("garden sandbox");
        let client = sandbox.client();
        ensure_namespace(&client, "garden").await;
        let now: Timestamp = "2025-01-01T00:00:00Z".parse().expect("timestamp");
        Env {
            sandbox,
            client,
            clock: Arc::new(FakeClock::new(now)),
        }
    }

    /// Writes a serving certificate for `127.0.0.1` from the sandbox CA (`tls.crt`, `tls.key`)
    /// into `dir`, for the webhook server.
    pub fn write_serving_certificate(&self, dir: &std::path::Path) {
        let (chain, key) = self
            .sandbox
            .issue_serving_certificate("seedlet-garden-webhooks", &["127.0.0.1"])
            .expect("serving certificate");
        std::fs::write(dir.join("tls.crt"), chain).expect("tls.crt");
        std::fs::write(dir.join("tls.key"), key).expect("tls.key");
    }

    /// The clock as the controllers take it.
    pub fn clock(&self) -> Arc<dyn seedlet_runtime::clock::Clock> {
        self.clock.clone()
    }

    /// An Events recorder writing to the garden.
    pub fn events(&self) -> seedlet_runtime::events::Recorder {
        seedlet_runtime::events::Recorder::new(self.client.clone(), "seedlet-garden")
            .with_clock(self.clock())
    }

    /// A client of the garden authenticated as `user` in `groups` (a fresh client certificate;
    /// what it may do is up to the RBAC objects the test creates).
    pub async fn client_for(&self, user: &str, groups: &[&str]) -> kube::Client {
        let kubeconfig = self
            .sandbox
            .kubeconfig_for(user, groups)
            .expect("client certificate");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("client config");
        kube::Client::try_from(config).expect("client")
    }

    /// Stops the sandbox.
    pub async fn shutdown(self) {
        self.sandbox.shutdown().await;
    }
}

/// Asserts that the garden refuses to list `K` by `field` (a garden without selectable fields).
pub async fn assert_unselectable<K>(client: &kube::Client, field: &str)
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let params = kube::api::ListParams::default().fields(&format!("{field}=x"));
    match kube::Api::<K>::all(client.clone()).list(&params).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 400, "{status:?}"),
        other => panic!("listing by {field} must be refused: {other:?}"),
    }
}

/// Creates namespace `name` unless it exists.
pub async fn ensure_namespace(client: &kube::Client, name: &str) {
    seedlet_sandbox::setup::ensure_namespace(client, name)
        .await
        .expect("namespace");
}

/// Creates Seed `name` (provider `local`, the networks every Seed needs).
pub async fn seed(client: &kube::Client, name: &str) -> seedlet_api::core::Seed {
    create(
        client,
        serde_json::json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
               "metadata": {"name": name},
               "spec": {"provider": {"type": "local", "region": "local"},
                        "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}}}),
    )
    .await
}

/// Creates Shoot `namespace/name` with what every Shoot needs (region and provider `local`, no
/// workers).
pub async fn shoot(client: &kube::Client, namespace: &str, name: &str) -> seedlet_api::core::Shoot {
    create(
        client,
        serde_json::json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"name": name, "namespace": namespace},
               "spec": {"region": "local", "provider": {"type": "local", "workers": []}}}),
    )
    .await
}
