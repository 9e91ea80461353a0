//! One object's seed labels: find the hosting seeds (reading the Shoot behind a ManagedSeed, and
//! the ManagedSeed behind a Seed), patch the labels if they differ.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use seedlet_api::core::{BackupEntry, Seed, Shoot};
use seedlet_api::seedmanagement::ManagedSeed;
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::policy;
use serde::de::DeserializeOwned;

use super::desired::label_patch;
use super::{CONCURRENT_SYNCS, NAME, SeedLabels};

/// The namespace whose ManagedSeeds register Seeds (`garden/<seed>`).
pub const MANAGED_SEED_NAMESPACE: &str = seedlet_api::names::namespaces::GARDEN;

/// A kind that carries seed labels.
pub trait SeedScoped:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static
{
    /// The API to write this object through.
    fn api(&self, client: kube::Client) -> Api<Self>;
    /// The seeds hosting this object, reading the objects gardener-apiserver reads for it.
    fn seeds(
        &self,
        client: &kube::Client,
    ) -> impl Future<Output = Result<Vec<String>, Error>> + Send;
    /// The Seed whose labels depend on this object (a ManagedSeed in `garden` registers one).
    fn registered_seed(&self) -> Option<String> {
        None
    }
}

/// `spec.seedName` and `status.seedName` (during a migration both seeds host the object).
fn spec_and_status(spec: Option<&str>, status: Option<&str>) -> Vec<String> {
    [spec, status]
        .into_iter()
        .flatten()
        .map(str::to_owned)
        .collect()
}

impl SeedScoped for Shoot {
    fn api(&self, client: kube::Client) -> Api<Self> {
        Api::namespaced(client, &self.namespace().unwrap_or_default())
    }

    async fn seeds(&self, _client: &kube::Client) -> Result<Vec<String>, Error> {
        let status = self.status.as_ref().and_then(|s| s.seed_name.as_deref());
        Ok(spec_and_status(self.spec.seed_name.as_deref(), status))
    }
}

impl SeedScoped for BackupEntry {
    fn api(&self, client: kube::Client) -> Api<Self> {
        Api::namespaced(client, &self.namespace().unwrap_or_default())
    }

    async fn seeds(&self, _client: &kube::Client) -> Result<Vec<String>, Error> {
        let status = self.status.as_ref().and_then(|s| s.seed_name.as_deref());
        Ok(spec_and_status(self.spec.seed_name.as_deref(), status))
    }
}

/// A ManagedSeed runs on the seed of its Shoot.
impl SeedScoped for ManagedSeed {
    fn api(&self, client: kube::Client) -> Api<Self> {
        Api::namespaced(client, &self.namespace().unwrap_or_default())
    }

    async fn seeds(&self, client: &kube::Client) -> Result<Vec<String>, Error> {
        let namespace = self.namespace().unwrap_or_default();
        Ok(shoot_seed(client, &namespace, self.shoot_name())
            .await?
            .into_iter()
            .collect())
    }

    fn registered_seed(&self) -> Option<String> {
        (self.namespace().as_deref() == Some(MANAGED_SEED_NAMESPACE)).then(|| self.name_any())
    }
}

/// A Seed carries its own name and, when it is a managed seed, the seed its Shoot runs on.
impl SeedScoped for Seed {
    fn api(&self, client: kube::Client) -> Api<Self> {
        Api::all(client)
    }

    async fn seeds(&self, client: &kube::Client) -> Result<Vec<String>, Error> {
        let name = self.name_any();
        let managed_seeds: Api<ManagedSeed> =
            Api::namespaced(client.clone(), MANAGED_SEED_NAMESPACE);
        let managed = managed_seeds
            .get_opt(&name)
            .await
            .map_err(|source| Error::Read {
                kind: "ManagedSeed",
                key: format!("{MANAGED_SEED_NAMESPACE}/{name}"),
                source,
            })?;
        let parent = match &managed {
            Some(managed) => {
                shoot_seed(client, MANAGED_SEED_NAMESPACE, managed.shoot_name()).await?
            }
            None => None,
        };
        Ok(std::iter::once(name).chain(parent).collect())
    }
}

/// `spec.seedName` of Shoot `namespace/name` (`None` when there is no such Shoot or seed).
async fn shoot_seed(
    client: &kube::Client,
    namespace: &str,
    name: Option<&str>,
) -> Result<Option<String>, Error> {
    let Some(name) = name else { return Ok(None) };
    let shoot = Api::<Shoot>::namespaced(client.clone(), namespace)
        .get_opt(name)
        .await
        .map_err(|source| Error::Read {
            kind: "Shoot",
            key: format!("{namespace}/{name}"),
            source,
        })?;
    Ok(shoot.and_then(|shoot| shoot.spec.seed_name))
}

/// Failures of one reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the object that names the hosting seed failed.
    #[error("reading {kind} {key}")]
    Read {
        kind: &'static str,
        key: String,
        #[source]
        source: kube::Error,
    },
    /// Writing the labels failed.
    #[error("patching seed labels of {kind} {key}")]
    Patch {
        kind: String,
        key: String,
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Read { .. } => "ReadError",
            Error::Patch { .. } => "PatchError",
        }
    }
}

impl<K: SeedScoped> Reconciler for SeedLabels<K> {
    type Object = K;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Patches the seed labels of `object` when they differ from its seeds; a ManagedSeed in
    /// `garden` also re-labels the Seed it registers (whose parent label follows the
    /// ManagedSeed's Shoot).
    async fn reconcile(&self, object: Arc<K>) -> Result<Action, Error> {
        label(object.as_ref(), &self.client).await?;
        if let Some(name) = object.registered_seed() {
            let seed = Api::<Seed>::all(self.client.clone())
                .get_opt(&name)
                .await
                .map_err(|source| Error::Read {
                    kind: "Seed",
                    key: name.clone(),
                    source,
                })?;
            if let Some(seed) = seed {
                label(&seed, &self.client).await?;
            }
        }
        Ok(Action::await_change())
    }

    /// A short pause; a failure that persists is logged once.
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        CONCURRENT_SYNCS
    }
}

async fn label<K: SeedScoped>(object: &K, client: &kube::Client) -> Result<(), Error> {
    if object.meta().deletion_timestamp.is_some() {
        return Ok(());
    }
    let seeds = object.seeds(client).await?;
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let Some(patch) = label_patch(object.labels(), &seeds) else {
        return Ok(());
    };
    let api = object.api(client.clone());
    match api
        .patch(
            &object.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(source) => Err(Error::Patch {
            kind: K::kind(&()).into_owned(),
            key: policy::object_key(object),
            source,
        }),
    }
}
