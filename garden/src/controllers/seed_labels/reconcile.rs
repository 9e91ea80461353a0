//! One object's seed labels: read the hosting seeds, patch the labels if they differ.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use seedlet_api::core::{BackupEntry, Seed, Shoot};
use serde::de::DeserializeOwned;

use super::desired::label_patch;
use super::{Ctx, NAME};

/// A kind that carries seed labels.
pub trait SeedScoped:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static
{
    /// The seeds hosting this object.
    fn seeds(&self) -> Vec<&str>;
    /// The API to write this object through.
    fn api(&self, client: kube::Client) -> Api<Self>;
}

impl SeedScoped for Shoot {
    fn api(&self, client: kube::Client) -> Api<Self> {
        Api::namespaced(client, &self.namespace().unwrap_or_default())
    }

    fn seeds(&self) -> Vec<&str> {
        let status = self.status.as_ref().and_then(|s| s.seed_name.as_deref());
        [self.spec.seed_name.as_deref(), status]
            .into_iter()
            .flatten()
            .collect()
    }
}

impl SeedScoped for BackupEntry {
    fn api(&self, client: kube::Client) -> Api<Self> {
        Api::namespaced(client, &self.namespace().unwrap_or_default())
    }

    fn seeds(&self) -> Vec<&str> {
        let status = self.status.as_ref().and_then(|s| s.seed_name.as_deref());
        [self.spec.seed_name.as_deref(), status]
            .into_iter()
            .flatten()
            .collect()
    }
}

impl SeedScoped for Seed {
    fn api(&self, client: kube::Client) -> Api<Self> {
        Api::all(client)
    }

    fn seeds(&self) -> Vec<&str> {
        self.metadata.name.as_deref().into_iter().collect()
    }
}

/// Failures of one reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Writing the labels failed.
    #[error("patching seed labels of {kind} {key}")]
    Patch {
        kind: String,
        key: String,
        #[source]
        source: kube::Error,
    },
}

/// Patches the seed labels of `object` when they differ from its seeds.
///
/// # Errors
/// [`Error::Patch`].
pub async fn reconcile<K: SeedScoped>(object: Arc<K>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let started = Instant::now();
    let result = label(object.as_ref(), &ctx).await;
    ctx.metrics
        .reconciled(NAME, started.elapsed(), result.is_ok());
    result
}

async fn label<K: SeedScoped>(object: &K, ctx: &Ctx) -> Result<Action, Error> {
    if object.meta().deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let Some(patch) = label_patch(object.labels(), &object.seeds()) else {
        return Ok(Action::await_change());
    };
    let api = object.api(ctx.client.clone());
    match api
        .patch(
            &object.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(Action::await_change()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Action::await_change()),
        Err(source) => Err(Error::Patch {
            kind: K::kind(&()).into_owned(),
            key: match object.namespace() {
                Some(namespace) => format!("{namespace}/{}", object.name_any()),
                None => object.name_any(),
            },
            source,
        }),
    }
}

/// Logs once per failure and retries after a short pause.
pub fn error_policy<K: SeedScoped>(_object: Arc<K>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    if seedlet_runtime::status::conflict_in_chain(error) {
        return Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE);
    }
    tracing::warn!(error = %seedlet_runtime::error_chain(error), "seed labels not written");
    Action::requeue(Duration::from_secs(5))
}
