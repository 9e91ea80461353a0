//! What an operator prepares before a seed agent starts: CRDs for a development garden without
//! gardener-apiserver, the garden namespaces, the garden's cluster identity, a bootstrap token, and
//! the bootstrap kubeconfig Secret in the seed.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{ObjectMeta, Patch, PatchParams};
use rand::Rng;
use seedlet_api::names::{namespaces, objects};

use crate::Error;
use crate::files::BOOTSTRAP_SECRET;

/// Field manager of everything the landscape writes.
const FIELD_MANAGER: &str = seedlet_sandbox::setup::FIELD_MANAGER;
/// Characters of bootstrap token ids and secrets (`[a-z0-9]`, as kubeadm generates them).
const TOKEN_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// A bootstrap token (`<id>.<secret>`).
#[derive(Debug)]
pub struct BootstrapToken {
    /// The public token id (6 characters).
    pub id: String,
    secret: String,
}

impl BootstrapToken {
    fn generate() -> Self {
        let mut rng = rand::rng();
        let mut pick = |length: usize| -> String {
            (0..length)
                .map(|_| char::from(TOKEN_ALPHABET[rng.random_range(0..TOKEN_ALPHABET.len())]))
                .collect()
        };
        Self {
            id: pick(6),
            secret: pick(16),
        }
    }

    /// The bearer token to put in a kubeconfig.
    pub fn bearer(&self) -> String {
        format!("{}.{}", self.id, self.secret)
    }
}

/// Applies `crds` (server-side apply, idempotent) and returns how many there were.
///
/// # Errors
/// [`Error::Prepare`] naming the CRD that was refused.
pub async fn install_crds(
    client: &kube::Client,
    crds: Vec<CustomResourceDefinition>,
) -> Result<usize, Error> {
    seedlet_sandbox::setup::apply_crds(client, crds)
        .await
        .map_err(prepare)
}

/// Creates the garden namespaces, the garden cluster identity and a bootstrap token.
///
/// The namespace `seed-<name>` is made here the way gardener-controller-manager makes it for a
/// new Seed: the agent waits for it during registration.
///
/// # Errors
/// [`Error::Prepare`] naming the object that could not be written.
pub async fn prepare_garden(
    client: &kube::Client,
    seed_name: &str,
) -> Result<BootstrapToken, Error> {
    for namespace in [
        namespaces::GARDEN.to_owned(),
        namespaces::SEED_LEASE.to_owned(),
        namespaces::seed_namespace(seed_name),
    ] {
        ensure_namespace(client, &namespace).await?;
    }
    let identities: Api<ConfigMap> = Api::namespaced(client.clone(), namespaces::KUBE_SYSTEM);
    let identity = ConfigMap {
        metadata: named(objects::CLUSTER_IDENTITY),
        data: Some(BTreeMap::from([(
            objects::CLUSTER_IDENTITY_KEY.to_owned(),
            "sandbox-garden".to_owned(),
        )])),
        ..ConfigMap::default()
    };
    identities
        .patch(
            objects::CLUSTER_IDENTITY,
            &apply_params(),
            &Patch::Apply(&with_kind(identity, "ConfigMap")),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: "write the garden cluster identity".to_owned(),
            source,
        })?;

    let token = BootstrapToken::generate();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespaces::KUBE_SYSTEM);
    let name = format!("{}{}", objects::BOOTSTRAP_TOKEN_SECRET_PREFIX, token.id);
    let expiration = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1);
    let secret = Secret {
        metadata: named(&name),
        type_: Some("bootstrap.kubernetes.io/token".to_owned()),
        string_data: Some(BTreeMap::from([
            ("token-id".to_owned(), token.id.clone()),
            ("token-secret".to_owned(), token.secret.clone()),
            (
                "usage-bootstrap-authentication".to_owned(),
                "true".to_owned(),
            ),
            ("usage-bootstrap-signing".to_owned(), "true".to_owned()),
            ("expiration".to_owned(), expiration.to_string()),
            (
                "description".to_owned(),
                format!("seedlet sandbox: bootstrap of seed {seed_name}"),
            ),
        ])),
        ..Secret::default()
    };
    secrets
        .patch(
            &name,
            &apply_params(),
            &Patch::Apply(&with_kind(secret, "Secret")),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: format!("create bootstrap token Secret kube-system/{name}"),
            source,
        })?;
    Ok(token)
}

/// Stores the bootstrap kubeconfig in the seed Secret `garden/gardenlet-kubeconfig-bootstrap`.
///
/// # Errors
/// [`Error::Prepare`] when the namespace or Secret cannot be written.
pub async fn store_bootstrap_kubeconfig(
    client: &kube::Client,
    kubeconfig: &str,
) -> Result<(), Error> {
    ensure_namespace(client, namespaces::GARDEN).await?;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespaces::GARDEN);
    let secret = Secret {
        metadata: named(BOOTSTRAP_SECRET),
        data: Some(BTreeMap::from([(
            objects::KUBECONFIG_KEY.to_owned(),
            ByteString(kubeconfig.as_bytes().to_vec()),
        )])),
        ..Secret::default()
    };
    secrets
        .patch(
            BOOTSTRAP_SECRET,
            &apply_params(),
            &Patch::Apply(&with_kind(secret, "Secret")),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: format!("store Secret garden/{BOOTSTRAP_SECRET} in the seed"),
            source,
        })?;
    Ok(())
}

/// Creates namespace `name` unless it exists (server-side apply, idempotent).
///
/// # Errors
/// [`Error::Prepare`] naming the namespace.
pub async fn ensure_namespace(client: &kube::Client, name: &str) -> Result<(), Error> {
    seedlet_sandbox::setup::ensure_namespace(client, name)
        .await
        .map_err(prepare)
}

fn prepare(error: seedlet_sandbox::setup::StepError) -> Error {
    Error::Prepare {
        step: error.step,
        source: error.source,
    }
}

fn named(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    }
}

fn apply_params() -> PatchParams {
    PatchParams::apply(FIELD_MANAGER)
}

/// Server-side apply needs `apiVersion` and `kind`, which k8s-openapi's typed structs leave out
/// when serialised on their own; this adds them.
fn with_kind<T: serde::Serialize>(object: T, kind: &str) -> serde_json::Value {
    let mut value = serde_json::to_value(object).unwrap_or_default();
    value["apiVersion"] = serde_json::Value::from("v1");
    value["kind"] = serde_json::Value::from(kind);
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_have_kubeadm_shape() {
        let token = BootstrapToken::generate();
        let bearer = token.bearer();
        let (id, secret) = bearer.split_once('.').expect("id.secret");
        assert_eq!(id.len(), 6);
        assert_eq!(secret.len(), 16);
        assert!(
            bearer
                .bytes()
                .all(|b| b == b'.' || TOKEN_ALPHABET.contains(&b))
        );
    }
}
