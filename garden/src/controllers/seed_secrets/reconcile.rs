//! One seed-secrets pass: ensure `seed-<name>`, mirror the selected `garden` Secrets into it and
//! prune mirrors whose source is gone.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Seed;
use seedlet_api::names::{field_managers, namespaces};
use seedlet_runtime::controller::{Reason, Reconciler};

use super::desired;
use super::{NAME, SeedSecrets};

/// Errors of one pass; each names the object.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Creating or adopting `seed-<name>` failed (e.g. another object controls it).
    #[error("seed namespace")]
    Namespace(#[from] crate::seed_namespace::Error),
    /// An API call failed.
    #[error("{step}")]
    Api {
        /// What was done, naming the object.
        step: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Namespace(crate::seed_namespace::Error::NotControlled { .. }) => {
                "NamespaceNotControlled"
            }
            Error::Namespace(_) => "SeedNamespaceError",
            Error::Api { .. } => "SeedSecretsError",
        }
    }
}

fn api_error(step: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let step = step.into();
    move |source| Error::Api { step, source }
}

impl Reconciler for SeedSecrets {
    type Object = Seed;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Syncs one Seed's namespace and Secrets.
    async fn reconcile(&self, seed: Arc<Seed>) -> Result<Action, Error> {
        let result = sync(&seed, self).await;
        result.map(|()| Action::await_change())
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(15)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn sync(seed: &Seed, ctx: &SeedSecrets) -> Result<(), Error> {
    if seed.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let name = seed.name_any();
    let namespace = desired::namespace_name(&name);
    crate::seed_namespace::ensure(&ctx.client, seed).await?;

    let selector = ListParams::default().labels(desired::ROLE_EXISTS);
    let sources: Vec<Secret> = Api::<Secret>::namespaced(ctx.client.clone(), namespaces::GARDEN)
        .list(&selector)
        .await
        .map_err(api_error("listing garden secrets"))?
        .items
        .into_iter()
        .filter(|secret| desired::selected(secret.labels()))
        .collect();
    let target: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let existing = target
        .list(&selector)
        .await
        .map_err(api_error(format!("listing secrets in {namespace}")))?
        .items;
    for source in &sources {
        let wanted = desired::mirror(source, &namespace);
        let secret_name = source.name_any();
        let current = existing.iter().find(|s| s.name_any() == secret_name);
        write_mirror(&target, current, wanted, &namespace).await?;
    }
    let wanted_names: BTreeSet<String> = sources.iter().map(ResourceExt::name_any).collect();
    for stale in existing
        .iter()
        .filter(|secret| desired::selected(secret.labels()))
        .filter(|secret| !wanted_names.contains(&secret.name_any()))
    {
        let stale_name = stale.name_any();
        match target.delete(&stale_name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(source) => {
                return Err(api_error(format!(
                    "deleting secret {namespace}/{stale_name}"
                ))(source));
            }
        }
    }
    Ok(())
}

async fn write_mirror(
    target: &Api<Secret>,
    current: Option<&Secret>,
    mut wanted: Secret,
    namespace: &str,
) -> Result<(), Error> {
    let name = wanted.name_any();
    let step = || format!("writing secret {namespace}/{name}");
    let params = PostParams {
        field_manager: Some(field_managers::GARDEN.to_owned()),
        ..PostParams::default()
    };
    match current {
        None => {
            target
                .create(&params, &wanted)
                .await
                .map_err(api_error(step()))?;
        }
        Some(current) if desired::up_to_date(current, &wanted) => {}
        Some(current)
            if current.type_.as_deref().unwrap_or("Opaque")
                != wanted.type_.as_deref().unwrap_or("Opaque") =>
        {
            // `type` is immutable: replace the object.
            target
                .delete(&name, &DeleteParams::default())
                .await
                .map_err(api_error(step()))?;
            target
                .create(&params, &wanted)
                .await
                .map_err(api_error(step()))?;
        }
        Some(current) => {
            wanted.metadata.resource_version = current.metadata.resource_version.clone();
            target
                .replace(&name, &params, &wanted)
                .await
                .map_err(api_error(step()))?;
        }
    }
    Ok(())
}
