//! Populating a running sandbox the way `seedlet sandbox` and the tests do:
//! CustomResourceDefinitions applied and waited for until they are served, namespaces, the polling
//! helpers tests use for state a watch brings, and creating test objects from JSON.
//!
//! The one copy of the sandbox-with-CRDs starter: the unit tests of the agent's and the garden's
//! controllers call [`start_with_crds`] (they cannot use `seedlet-testkit`, which links the agent
//! and the garden controller themselves), and the end-to-end harness and the landscape build on
//! [`install_crds`], [`apply_crds`] and [`ensure_namespace`]. The CRD lists stay with their
//! owners (`seedlet_api::crds`); this module knows no kind. [`gate::SpecFreeze`] is an admission
//! webhook tests register to make writes fail as a policy webhook would.

pub mod gate;

use std::future::Future;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;

use crate::{Sandbox, SandboxError};

/// Field manager of everything written here (and by `seedlet sandbox`'s landscape).
pub const FIELD_MANAGER: &str = "seedlet-sandbox";

/// How long [`install_crds`] waits for applied CRDs to be served.
pub const SERVED_TIMEOUT: Duration = Duration::from_secs(10);

/// A write that the API server refused, naming the object.
#[derive(Debug, thiserror::Error)]
#[error("{step}")]
pub struct StepError {
    /// What was written (`apply CustomResourceDefinition shoots.core.gardener.cloud`).
    pub step: String,
    /// Cause.
    #[source]
    pub source: kube::Error,
}

/// Why a sandbox could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The sandbox did not start.
    #[error("start sandbox {name}")]
    Start {
        /// Sandbox name.
        name: String,
        /// Cause.
        #[source]
        source: SandboxError,
    },
    /// A write failed.
    #[error(transparent)]
    Step(#[from] StepError),
    /// Applied CRDs were not Established in time.
    #[error("CustomResourceDefinitions not established after {timeout:?}: {}", names.join(", "))]
    NotServed {
        /// The CRDs still not established.
        names: Vec<String>,
        /// How long was waited.
        timeout: Duration,
    },
}

/// Starts a sandbox named `name` on `127.0.0.1:0` (default settings) with `crds` served.
///
/// # Errors
/// [`SetupError::Start`], or what [`install_crds`] returns.
pub async fn start_with_crds(
    name: &str,
    crds: Vec<CustomResourceDefinition>,
) -> Result<Sandbox, SetupError> {
    let sandbox = Sandbox::builder()
        .name(name)
        .start()
        .await
        .map_err(|source| SetupError::Start {
            name: name.to_owned(),
            source,
        })?;
    install_crds(&sandbox.client(), crds).await?;
    Ok(sandbox)
}

/// Applies `crds` (server-side apply, idempotent) and returns how many there were.
///
/// # Errors
/// [`StepError`] naming the CRD that was refused.
pub async fn apply_crds(
    client: &kube::Client,
    crds: Vec<CustomResourceDefinition>,
) -> Result<usize, StepError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let count = crds.len();
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.patch(&name, &apply_params(), &Patch::Apply(&crd))
            .await
            .map_err(|source| StepError {
                step: format!("apply CustomResourceDefinition {name}"),
                source,
            })?;
    }
    Ok(count)
}

/// [`apply_crds`], then waits up to [`SERVED_TIMEOUT`] until each of them is Established.
///
/// # Errors
/// [`SetupError::Step`] for a refused write or read, [`SetupError::NotServed`] after the wait.
pub async fn install_crds(
    client: &kube::Client,
    crds: Vec<CustomResourceDefinition>,
) -> Result<(), SetupError> {
    let mut pending: Vec<String> = crds
        .iter()
        .filter_map(|crd| crd.metadata.name.clone())
        .collect();
    apply_crds(client, crds).await?;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let deadline = Instant::now() + SERVED_TIMEOUT;
    loop {
        let mut still = Vec::new();
        for name in pending {
            let crd = api.get_opt(&name).await.map_err(|source| StepError {
                step: format!("read CustomResourceDefinition {name}"),
                source,
            })?;
            if !crd.as_ref().is_some_and(established) {
                still.push(name);
            }
        }
        if still.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(SetupError::NotServed {
                names: still,
                timeout: SERVED_TIMEOUT,
            });
        }
        pending = still;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

/// Creates namespace `name` unless it exists (server-side apply).
///
/// # Errors
/// [`StepError`] naming the namespace.
pub async fn ensure_namespace(client: &kube::Client, name: &str) -> Result<(), StepError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let namespace = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name},
    });
    api.patch(name, &apply_params(), &Patch::Apply(&namespace))
        .await
        .map_err(|source| StepError {
            step: format!("create namespace {name}"),
            source,
        })?;
    Ok(())
}

/// Creates the object `value` (with `apiVersion`, `kind`, `metadata`) as a `K` through `client`,
/// in its `metadata.namespace` when it has one, and returns it as stored (a test helper).
///
/// # Panics
/// When `value` is no `K` or the API server refuses it.
pub async fn create<K>(client: &kube::Client, value: serde_json::Value) -> K
where
    K: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned,
{
    let resource = ApiResource::erase::<K>(&());
    let object: DynamicObject = serde_json::from_value(value)
        .unwrap_or_else(|error| panic!("test object {}: {error}", resource.kind));
    let api: Api<DynamicObject> = match object.metadata.namespace.as_deref() {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let created = api
        .create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|error| panic!("create {}: {error}", resource.kind));
    serde_json::to_value(created)
        .and_then(serde_json::from_value)
        .unwrap_or_else(|error| panic!("stored {}: {error}", resource.kind))
}

fn apply_params() -> PatchParams {
    PatchParams::apply(FIELD_MANAGER)
}

/// Polls `check` every 50ms until it returns `Some`, panicking with `what` after `timeout` (a
/// test helper).
///
/// # Panics
/// When `timeout` passes first.
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls `check` until it returns `true` (see [`wait_for`]).
///
/// # Panics
/// When `timeout` passes first.
pub async fn wait_until<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    wait_for(what, timeout, || {
        let fut = check();
        async move { fut.await.then_some(()) }
    })
    .await;
}

/// What [`observed_client`] runs before each request is sent: it sees the request and returns a
/// future that is awaited before the request goes out (tests count requests this way, or make
/// another writer win a race).
pub type BeforeRequest = std::sync::Arc<
    dyn Fn(&http::Request<kube::client::Body>) -> futures::future::BoxFuture<'static, ()>
        + Send
        + Sync,
>;

/// A client that sends every request through `client` after `before` ran for it.
pub fn observed_client(client: kube::Client, before: BeforeRequest) -> kube::Client {
    let namespace = client.default_namespace().to_owned();
    kube::client::ClientBuilder::new(Observed { client, before }, namespace).build()
}

#[derive(Clone)]
struct Observed {
    client: kube::Client,
    before: BeforeRequest,
}

impl tower::Service<http::Request<kube::client::Body>> for Observed {
    type Response = http::Response<kube::client::Body>;
    type Error = kube::Error;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, kube::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), kube::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<kube::client::Body>) -> Self::Future {
        let before = (self.before)(&request);
        let client = self.client.clone();
        Box::pin(async move {
            before.await;
            client.send(request).await
        })
    }
}
