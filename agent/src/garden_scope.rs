//! How the agent's garden watches are scoped to its seed, decided once per controller start by
//! asking the garden:
//!
//! - ControllerInstallations by the field selector `spec.seedRef.name=<seed>` (what a garden with
//!   Gardener's seed authorizer demands from a seed), unless the garden cannot select that field
//!   (CRDs without `selectableFields`, Kubernetes < 1.31: 400), then unfiltered and filtered here;
//! - Shoots unfiltered where the garden allows it (RBAC or an authorizer without selector
//!   support, and then independent of the `name.seed.gardener.cloud/<seed>` labels), else by that
//!   label, which gardener-apiserver or `seedlet garden` maintain.
//!
//! A probe that fails for another reason (garden unreachable) picks the unfiltered watch, whose
//! own errors then surface and retry as before.

use kube::Api;
use kube::api::ListParams;
use kube::runtime::watcher;
use seedlet_api::core::{ControllerInstallation, Shoot};

/// The label a seed-scoped object of seed `seed` carries (`true`).
pub fn seed_label(seed: &str) -> String {
    seedlet_api::names::labels::seed_name(seed)
}

/// The watch configuration for this seed's ControllerInstallations, and whether the server
/// filters (else the caller filters by `spec.seedRef.name`).
pub async fn installations(garden: &kube::Client, seed: &str) -> watcher::Config {
    let selector = format!("spec.seedRef.name={seed}");
    let probe = Api::<ControllerInstallation>::all(garden.clone())
        .list_metadata(&ListParams::default().fields(&selector).limit(1))
        .await;
    match probe {
        Ok(_) => watcher::Config::default().fields(&selector),
        Err(kube::Error::Api(status)) if status.code == 400 => {
            tracing::info!(
                seed,
                "the garden cannot select ControllerInstallations by spec.seedRef.name; watching all of them"
            );
            watcher::Config::default()
        }
        Err(_) => watcher::Config::default(),
    }
}

/// The watch configuration for this seed's Bastions: by the field selector `spec.seedName=<seed>`
/// (which Gardener's seed authorizer demands), unless the garden answers the probe with 400
/// (cannot select that field: unfiltered, the caller filters).
pub async fn bastions(garden: &kube::Client, seed: &str) -> watcher::Config {
    let selector = format!("spec.seedName={seed}");
    let probe = Api::<seedlet_api::operations::Bastion>::all(garden.clone())
        .list_metadata(&ListParams::default().fields(&selector).limit(1))
        .await;
    match probe {
        Err(kube::Error::Api(status)) if status.code == 400 => {
            tracing::info!(
                seed,
                "the garden cannot select Bastions by spec.seedName; watching all of them"
            );
            watcher::Config::default()
        }
        // A garden that can select answers with 200 (or, while its authorizer starts, 403/503):
        // only the selected watch can ever be allowed for a seed.
        _ => watcher::Config::default().fields(&selector),
    }
}

/// The watch configuration for Shoots this agent may see.
pub async fn shoots(garden: &kube::Client, seed: &str) -> watcher::Config {
    let probe = Api::<Shoot>::all(garden.clone())
        .list_metadata(&ListParams::default().limit(1))
        .await;
    match probe {
        Err(kube::Error::Api(status)) if status.code == 403 => {
            tracing::info!(
                seed,
                "the garden lets this seed list only its own shoots; watching {}=true",
                seed_label(seed)
            );
            watcher::Config::default().labels(&format!("{}=true", seed_label(seed)))
        }
        _ => watcher::Config::default(),
    }
}

/// Whether this agent may list all objects of `K` in the garden (a garden with the seed
/// authorizer refuses unfiltered lists of project-owned kinds such as Projects and
/// NamespacedCloudProfiles; the agent then reads them by name).
pub async fn may_list<K>(garden: &kube::Client) -> bool
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let probe = Api::<K>::all(garden.clone())
        .list_metadata(&ListParams::default().limit(1))
        .await;
    !matches!(probe, Err(kube::Error::Api(status)) if status.code == 403)
}
