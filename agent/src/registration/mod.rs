//! Seed registration at startup (spec §4.3): get-or-create the Seed from `seedConfig` and bring
//! it in line with a JSON merge patch, wait for the garden namespace `seed-<name>`, then take
//! `spec.dns.defaults` from the default-domain Secrets when the config has none.
//!
//! Runs once per leadership term, before the heartbeat and the controllers start. Idempotent.

mod desired;

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use seedlet_api::names::{labels, namespaces};
use serde_json::{Value, json};

pub use desired::{dns_defaults, registration_patch};

use seedlet_api::core::Seed;

/// How often the garden namespace is looked for.
pub const NAMESPACE_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How long the garden namespace is waited for.
pub const NAMESPACE_TIMEOUT: Duration = Duration::from_secs(5);

/// Errors of Seed registration.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the Seed failed.
    #[error("reading seed {name}")]
    ReadSeed {
        /// Seed name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Creating the Seed failed.
    #[error("creating seed {name}")]
    CreateSeed {
        /// Seed name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Patching the Seed failed.
    #[error("patching seed {name}")]
    PatchSeed {
        /// Seed name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Encoding the Seed as JSON failed.
    #[error("encoding seed {name}")]
    EncodeSeed {
        /// Seed name.
        name: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
    /// The garden namespace did not become readable in time.
    #[error("namespace {namespace} not readable within {timeout:?}")]
    NamespaceTimeout {
        /// Namespace name.
        namespace: String,
        /// How long was waited.
        timeout: Duration,
        /// Last error, if any other than NotFound/Forbidden.
        #[source]
        source: Option<kube::Error>,
    },
    /// Listing default-domain Secrets failed.
    #[error("listing default-domain secrets in {namespace}")]
    ListDefaultDomains {
        /// Namespace name.
        namespace: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// A default-domain Secret lacks the provider or domain annotation.
    #[error(
        "default-domain secret {name} lacks dns.gardener.cloud/provider or dns.gardener.cloud/domain"
    )]
    DefaultDomainSecret {
        /// Secret name.
        name: String,
    },
}

/// What to register: `seedConfig` reduced to the parts registration uses.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedRegistration {
    /// `seedConfig.metadata.name`.
    pub name: String,
    /// `seedConfig.metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `seedConfig.metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `seedConfig.spec` as JSON.
    pub spec: Value,
}

/// Registers the Seed in the garden and waits for its namespace; returns the Seed as stored.
///
/// # Errors
/// Any failing step, see [`Error`]. Idempotent: a second run patches nothing new.
pub async fn register_seed(
    garden: &kube::Client,
    registration: &SeedRegistration,
) -> Result<Seed, Error> {
    let api: Api<Seed> = Api::all(garden.clone());
    let name = &registration.name;
    let existing = api.get_opt(name).await.map_err(|source| Error::ReadSeed {
        name: name.clone(),
        source,
    })?;
    let existing_json = existing
        .as_ref()
        .map(serde_json::to_value)
        .transpose()
        .map_err(|source| Error::EncodeSeed {
            name: name.clone(),
            source,
        })?;
    let patch = registration_patch(
        existing_json.as_ref(),
        &registration.labels,
        &registration.annotations,
        &registration.spec,
    );
    if existing.is_none() {
        let mut new = patch.clone();
        new["apiVersion"] = json!(seedlet_api::names::groups::CORE_V1BETA1);
        new["kind"] = json!("Seed");
        new["metadata"]["name"] = json!(name);
        let seed: Seed = serde_json::from_value(new).map_err(|source| Error::EncodeSeed {
            name: name.clone(),
            source,
        })?;
        match api.create(&PostParams::default(), &seed).await {
            Ok(_) => {}
            // Created concurrently: fall through to the patch, which converges it.
            Err(kube::Error::Api(status)) if status.is_already_exists() => {}
            Err(source) => {
                return Err(Error::CreateSeed {
                    name: name.clone(),
                    source,
                });
            }
        }
    }
    let mut seed = api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::PatchSeed {
            name: name.clone(),
            source,
        })?;
    tracing::info!(seed = %name, "registered seed");

    let namespace = format!("{}{name}", namespaces::SEED_NAMESPACE_PREFIX);
    wait_for_namespace(
        garden,
        &namespace,
        NAMESPACE_POLL_INTERVAL,
        NAMESPACE_TIMEOUT,
    )
    .await?;

    if registration.spec.pointer("/dns/defaults").is_none() {
        let secrets: Api<Secret> = Api::namespaced(garden.clone(), &namespace);
        let selector = format!("{}={}", labels::ROLE, labels::ROLE_DEFAULT_DOMAIN);
        let list = secrets
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|source| Error::ListDefaultDomains {
                namespace: namespace.clone(),
                source,
            })?;
        let defaults = dns_defaults(&list.items)?;
        if !defaults.is_empty() {
            let patch = json!({"spec": {"dns": {"defaults": defaults}}});
            seed = api
                .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(|source| Error::PatchSeed {
                    name: name.clone(),
                    source,
                })?;
        }
    }
    Ok(seed)
}

/// Polls every `interval` until Namespace `namespace` is readable; NotFound and Forbidden mean
/// "not yet".
///
/// # Errors
/// [`Error::NamespaceTimeout`] after `timeout`, carrying the last unexpected error.
pub async fn wait_for_namespace(
    client: &kube::Client,
    namespace: &str,
    interval: Duration,
    timeout: Duration,
) -> Result<(), Error> {
    let api: Api<Namespace> = Api::all(client.clone());
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last_error;
    loop {
        match api.get(namespace).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(status)) if status.is_not_found() || status.is_forbidden() => {
                last_error = None;
            }
            Err(error) => last_error = Some(error),
        }
        if tokio::time::Instant::now() + interval > deadline {
            return Err(Error::NamespaceTimeout {
                namespace: namespace.to_owned(),
                timeout,
                source: last_error,
            });
        }
        tokio::time::sleep(interval).await;
    }
}
