//! Waiting for the landscape's milestones by watching the real objects (kube-runtime's
//! `await_condition`), each bounded by the step timeout.

use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::Api;
use kube::runtime::wait::await_condition;
use seedlet_api::core::Seed;
use seedlet_api::names::{condition_types, namespaces, objects};

use crate::Error;
use crate::files::{BOOTSTRAP_SECRET, KUBECONFIG_SECRET};

/// Waits until the garden controller let bootstrap tokens request certificates (its
/// ClusterRoleBinding of `system:bootstrappers`): an agent started earlier would have its first
/// CertificateSigningRequest refused and retry only after its startup back-off.
///
/// # Errors
/// [`Error::Timeout`].
pub async fn bootstrapper_rbac(garden: &kube::Client, timeout: Duration) -> Result<String, Error> {
    let name = seedlet_garden::controllers::csr_approval::rbac::SEED_BOOTSTRAPPER;
    let bindings: Api<ClusterRoleBinding> = Api::all(garden.clone());
    bounded(
        &format!("ClusterRoleBinding {name}"),
        timeout,
        await_condition(bindings, name, |binding: Option<&ClusterRoleBinding>| {
            binding.is_some()
        }),
    )
    .await?;
    Ok(format!("ClusterRoleBinding {name}"))
}

/// Waits until the agent stored its certificate kubeconfig and removed the bootstrap Secret;
/// returns which CSR was approved and why.
///
/// # Errors
/// [`Error::Timeout`] with what the Secrets looked like last.
pub async fn garden_identity(
    garden: &kube::Client,
    seed: &kube::Client,
    timeout: Duration,
) -> Result<String, Error> {
    let secrets: Api<Secret> = Api::namespaced(seed.clone(), namespaces::GARDEN);
    let stored = |secret: Option<&Secret>| {
        secret
            .and_then(|secret| secret.data.as_ref())
            .is_some_and(|data| data.contains_key(objects::KUBECONFIG_KEY))
    };
    bounded(
        "certificate kubeconfig stored in seed Secret garden/gardenlet-kubeconfig",
        timeout,
        await_condition(secrets.clone(), KUBECONFIG_SECRET, stored),
    )
    .await?;
    let gone = |secret: Option<&Secret>| secret.is_none();
    bounded(
        "bootstrap Secret garden/gardenlet-kubeconfig-bootstrap removed",
        timeout,
        await_condition(secrets, BOOTSTRAP_SECRET, gone),
    )
    .await?;

    let csrs: Api<CertificateSigningRequest> = Api::all(garden.clone());
    let approved = csrs
        .list(&Default::default())
        .await
        .map(|list| {
            list.items
                .iter()
                .filter_map(|csr| {
                    let name = csr.metadata.name.clone()?;
                    let approval = csr
                        .status
                        .as_ref()?
                        .conditions
                        .as_ref()?
                        .iter()
                        .find(|condition| condition.type_ == "Approved")?;
                    Some(format!(
                        "{name} approved ({})",
                        approval.reason.clone().unwrap_or_default()
                    ))
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    Ok(approved)
}

/// Waits until the Seed exists in the garden.
///
/// # Errors
/// [`Error::Timeout`].
pub async fn seed_registered(
    garden: &kube::Client,
    seed_name: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let seeds: Api<Seed> = Api::all(garden.clone());
    let seed = bounded(
        &format!("Seed {seed_name} in the garden"),
        timeout,
        await_condition(seeds, seed_name, |seed: Option<&Seed>| seed.is_some()),
    )
    .await?;
    let provider = seed
        .as_ref()
        .map(|seed| {
            format!(
                "provider {}/{}",
                seed.spec.provider.type_, seed.spec.provider.region
            )
        })
        .unwrap_or_default();
    Ok(provider)
}

/// Waits until the Seed's `GardenletReady` condition is True and its Lease was renewed.
///
/// # Errors
/// [`Error::Timeout`] with the condition as last seen.
pub async fn gardenlet_ready(
    garden: &kube::Client,
    seed_name: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let seeds: Api<Seed> = Api::all(garden.clone());
    let ready = |seed: Option<&Seed>| {
        seed.and_then(|seed| seed.status.as_ref())
            .and_then(|status| {
                seedlet_api::conditions::find(&status.conditions, condition_types::GARDENLET_READY)
            })
            .is_some_and(seedlet_api::Condition::is_true)
    };
    if let Err(error) = bounded(
        &format!("Seed {seed_name} condition GardenletReady True"),
        timeout,
        await_condition(seeds.clone(), seed_name, ready),
    )
    .await
    {
        let last = seeds
            .get_opt(seed_name)
            .await
            .ok()
            .flatten()
            .and_then(|seed| seed.status)
            .and_then(|status| {
                seedlet_api::conditions::find(&status.conditions, condition_types::GARDENLET_READY)
                    .cloned()
            })
            .map(|condition| {
                format!(
                    "{} {}: {}",
                    condition.status, condition.reason, condition.message
                )
            })
            .unwrap_or_else(|| "no GardenletReady condition".to_owned());
        return Err(match error {
            Error::Timeout { what, timeout, .. } => Error::Timeout {
                what,
                timeout,
                last,
            },
            other => other,
        });
    }
    let leases: Api<Lease> = Api::namespaced(garden.clone(), namespaces::SEED_LEASE);
    let renewed = |lease: Option<&Lease>| {
        lease
            .and_then(|lease| lease.spec.as_ref())
            .is_some_and(|spec| spec.renew_time.is_some())
    };
    let lease = bounded(
        &format!("Lease {}/{seed_name} renewed", namespaces::SEED_LEASE),
        timeout,
        await_condition(leases, seed_name, renewed),
    )
    .await?;
    let holder = lease
        .and_then(|lease| lease.spec)
        .and_then(|spec| spec.holder_identity)
        .unwrap_or_default();
    Ok(format!("Lease held by {holder}"))
}

/// Waits until the Seed's status reports the client certificate expiry (the agent writes it
/// right after its first status update, which can trail `GardenletReady` by a moment); returns it.
///
/// # Errors
/// [`Error::Timeout`].
pub async fn client_certificate_expiry(
    garden: &kube::Client,
    seed_name: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let seeds: Api<Seed> = Api::all(garden.clone());
    let expiry = |seed: &Seed| {
        seed.status
            .as_ref()
            .and_then(|status| status.client_certificate_expiration_timestamp.clone())
    };
    let seed = bounded(
        &format!("Seed {seed_name} status.clientCertificateExpirationTimestamp"),
        timeout,
        await_condition(seeds, seed_name, |seed: Option<&Seed>| {
            seed.and_then(expiry).is_some()
        }),
    )
    .await?;
    Ok(seed
        .as_ref()
        .and_then(expiry)
        .map(|time| format!("expires {}", time.0))
        .unwrap_or_default())
}

/// Runs `wait` for at most `timeout`; a watch error counts like a timeout with its message.
pub(crate) async fn bounded<K>(
    what: &str,
    timeout: Duration,
    wait: impl Future<Output = Result<Option<K>, kube::runtime::wait::Error>>,
) -> Result<Option<K>, Error> {
    match tokio::time::timeout(timeout, wait).await {
        Ok(Ok(object)) => Ok(object),
        Ok(Err(error)) => Err(Error::timeout(
            what,
            timeout,
            format!("watch failed: {error}"),
        )),
        Err(_) => Err(Error::timeout(what, timeout, "condition not met")),
    }
}
