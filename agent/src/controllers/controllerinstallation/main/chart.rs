//! The chart archive of a Helm ControllerDeployment (spec §2.2 step 14, §4.1): `helm.rawChart`, or pulled from
//! an OCI registry (`helm.ociRepository`) with the pull Secret (`.dockerconfigjson`) and CA bundle
//! (`bundle.crt`) read from the garden's `garden` namespace. Failures are `(reason, message)` for `Valid=False`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use seedlet_api::core::{HelmControllerDeployment, OciRepository};
use seedlet_api::names::reasons;
use seedlet_chartrender::oci::{Credentials, OciPuller, PullOptions, Reference};
use seedlet_runtime::retry::{self, RetryPolicy};
use sha2::Digest as _;

use super::Installer;

/// Namespace of pull Secrets and CA bundles in the garden.
const GARDEN_NAMESPACE: &str = "garden";
/// Key of the CA bundle Secret.
const CA_BUNDLE_KEY: &str = "bundle.crt";
/// Key of the pull Secret.
const DOCKER_CONFIG_KEY: &str = ".dockerconfigjson";

/// Pullers by CA bundle (one HTTP client and archive cache each; the system roots alone under "").
#[derive(Debug, Default)]
pub struct Pullers {
    by_bundle: Mutex<HashMap<String, Arc<OciPuller>>>,
}

impl Pullers {
    fn get(&self, ca_bundle: Option<Vec<u8>>) -> Result<Arc<OciPuller>, String> {
        let key = ca_bundle
            .as_deref()
            .map(|b| hex::encode(sha2::Sha256::digest(b)))
            .unwrap_or_default();
        let mut pullers = self.by_bundle.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(puller) = pullers.get(&key) {
            return Ok(Arc::clone(puller));
        }
        let puller = Arc::new(
            OciPuller::new(PullOptions {
                ca_bundle,
                ..PullOptions::default()
            })
            .map_err(|e| e.to_string())?,
        );
        // Bundles rotate rarely; a handful of clients is the most this holds in practice.
        if pullers.len() >= 16 {
            pullers.clear();
        }
        pullers.insert(key, Arc::clone(&puller));
        Ok(puller)
    }
}

/// A failure: the `Valid=False` reason and message.
pub type Failure = (&'static str, String);

/// The chart archive of `helm`: `rawChart`, else the OCI pull.
pub async fn archive(
    ctx: &Installer,
    helm: &HelmControllerDeployment,
) -> Result<Arc<[u8]>, Failure> {
    if let Some(chart) = &helm.raw_chart {
        return Ok(Arc::from(chart.0.as_slice()));
    }
    let Some(repository) = &helm.oci_repository else {
        return Err((
            reasons::CHART_INFORMATION_INVALID,
            "chart information invalid: neither helm.rawChart nor helm.ociRepository is set"
                .to_owned(),
        ));
    };
    pull(ctx, repository).await.map_err(|message| {
        (
            reasons::OCI_CHART_CANNOT_BE_PULLED,
            format!("chart pulling process failed: {message}"),
        )
    })
}

async fn pull(ctx: &Installer, repository: &OciRepository) -> Result<Arc<[u8]>, String> {
    let text = repository
        .pull_reference()
        .ok_or("helm.ociRepository needs ref, or repository with tag or digest")?;
    let reference = Reference::parse(&text).map_err(|e| e.to_string())?;
    let ca_bundle = match &repository.ca_bundle_secret_ref {
        Some(secret) => Some(secret_key(ctx, &secret.name, CA_BUNDLE_KEY).await?),
        None => None,
    };
    let credentials = match &repository.pull_secret_ref {
        Some(secret) => {
            let config = secret_key(ctx, &secret.name, DOCKER_CONFIG_KEY).await?;
            Some(
                docker_credentials(&config, &reference.registry).ok_or_else(|| {
                    format!(
                        "pull secret {GARDEN_NAMESPACE}/{} has no credentials for registry {}",
                        secret.name, reference.registry
                    )
                })?,
            )
        }
        None => None,
    };
    let puller = ctx.pullers.get(ca_bundle)?;
    let pulled = puller
        .pull(&reference, credentials.as_ref())
        .await
        .map_err(|e| e.to_string())?;
    Ok(pulled.archive)
}

/// One key of a Secret in the garden's `garden` namespace.
async fn secret_key(ctx: &Installer, name: &str, key: &str) -> Result<Vec<u8>, String> {
    let secrets: Api<Secret> = Api::namespaced(ctx.garden(), GARDEN_NAMESPACE);
    let secret = retry::idempotent(&RetryPolicy::RECONCILE, || secrets.get_opt(name))
        .await
        .map_err(|e| format!("reading secret {GARDEN_NAMESPACE}/{name}: {e}"))?
        .ok_or_else(|| format!("secret {GARDEN_NAMESPACE}/{name} not found"))?;
    secret
        .data
        .and_then(|mut data| data.remove(key))
        .map(|value| value.0)
        .ok_or_else(|| format!("secret {GARDEN_NAMESPACE}/{name} has no key {key}"))
}

/// The credentials for `registry` in a `.dockerconfigjson` (`auths.<registry>` with `username`/`password` or
/// `auth` = base64 of `user:password`; keys may carry a scheme or a path).
fn docker_credentials(config: &[u8], registry: &str) -> Option<Credentials> {
    let parsed: serde_json::Value = serde_json::from_slice(config).ok()?;
    let auths = parsed.get("auths")?.as_object()?;
    let entry = auths.iter().find_map(|(key, value)| {
        let host = key
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default();
        (host == registry).then_some(value)
    })?;
    let field = |k: &str| {
        entry
            .get(k)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if let (Some(username), Some(password)) = (field("username"), field("password")) {
        return Some(Credentials {
            username: username.to_owned(),
            password: password.to_owned(),
        });
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(field("auth")?)
        .ok()?;
    let (username, password) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    Some(Credentials {
        username: username.to_owned(),
        password: password.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_config_credentials_by_registry() {
        let auth = base64::engine::general_purpose::STANDARD.encode("u:p:q");
        let config = serde_json::json!({"auths": {
            "https://r.example.com/v1/": {"auth": auth},
            "127.0.0.1:5000": {"username": "a", "password": "b"},
        }})
        .to_string();
        let found = docker_credentials(config.as_bytes(), "r.example.com").unwrap();
        assert_eq!(
            (found.username.as_str(), found.password.as_str()),
            ("u", "p:q")
        );
        let found = docker_credentials(config.as_bytes(), "127.0.0.1:5000").unwrap();
        assert_eq!(
            (found.username.as_str(), found.password.as_str()),
            ("a", "b")
        );
        assert!(docker_credentials(config.as_bytes(), "other.io").is_none());
        assert!(docker_credentials(b"not json", "r.example.com").is_none());
    }
}
