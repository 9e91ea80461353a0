//! One seed-secrets pass: ensure `seed-<name>`, mirror the selected `garden` Secrets into it and
//! prune mirrors whose source is gone.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use seedlet_api::core::Seed;
use seedlet_api::names::{field_managers, labels, namespaces};
use serde_json::json;

use super::desired;
use super::{Ctx, NAME};
use seedlet_runtime::error_chain;

/// Errors of one pass; each names the object.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The namespace exists but belongs to something else.
    #[error("namespace {namespace:?} is not controlled by seed {seed:?}")]
    NotControlled {
        /// The namespace.
        namespace: String,
        /// The Seed.
        seed: String,
    },
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

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::NotControlled { .. } => "NamespaceNotControlled",
            Error::Api { .. } => "SeedSecretsError",
        }
    }
}

fn api_error(step: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let step = step.into();
    move |source| Error::Api { step, source }
}

/// Syncs one Seed's namespace and Secrets.
///
/// # Errors
/// See [`Error`].
pub async fn reconcile(seed: Arc<Seed>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let started = std::time::Instant::now();
    let result = sync(&seed, &ctx).await;
    ctx.metrics
        .reconciled(NAME, started.elapsed(), result.is_ok());
    result.map(|()| Action::await_change())
}

/// Logs the error once and retries with a delay.
pub fn error_policy(seed: Arc<Seed>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    if seedlet_runtime::status::conflict_in_chain(error) {
        tracing::debug!(seed = %seed.name_any(), error = %seedlet_runtime::error_chain(error), "seed secrets sync lost a write race, retrying");
        return Action::requeue(seedlet_runtime::status::CONFLICT_REQUEUE);
    }
    tracing::warn!(
        seed = %seed.name_any(),
        reason = error.reason(),
        error = %error_chain(error),
        "seed secrets sync failed"
    );
    Action::requeue(Duration::from_secs(15))
}

async fn sync(seed: &Seed, ctx: &Ctx) -> Result<(), Error> {
    if seed.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let name = seed.name_any();
    let namespace = desired::namespace_name(&name);
    ensure_namespace(seed, &namespace, ctx).await?;

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

async fn ensure_namespace(seed: &Seed, namespace: &str, ctx: &Ctx) -> Result<(), Error> {
    let api: Api<Namespace> = Api::all(ctx.client.clone());
    let step = || format!("ensuring namespace {namespace}");
    match api.get_opt(namespace).await.map_err(api_error(step()))? {
        None => {
            let object = Namespace {
                metadata: ObjectMeta {
                    name: Some(namespace.to_owned()),
                    labels: Some([(labels::ROLE.to_owned(), labels::ROLE_SEED.to_owned())].into()),
                    owner_references: Some(vec![OwnerReference {
                        api_version: Seed::api_version(&()).into_owned(),
                        kind: Seed::kind(&()).into_owned(),
                        name: seed.name_any(),
                        uid: seed.uid().unwrap_or_default(),
                        controller: Some(true),
                        block_owner_deletion: Some(true),
                    }]),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            };
            let params = PostParams {
                field_manager: Some(field_managers::GARDEN.to_owned()),
                ..PostParams::default()
            };
            match api.create(&params, &object).await {
                Ok(_) => {}
                // The finalizers controller ensures the same namespace; check what it made.
                Err(kube::Error::Api(status)) if status.is_already_exists() => {
                    let existing = api.get(namespace).await.map_err(api_error(step()))?;
                    if !desired::controlled_by(&existing, seed) {
                        return Err(Error::NotControlled {
                            namespace: namespace.to_owned(),
                            seed: seed.name_any(),
                        });
                    }
                }
                Err(source) => return Err(api_error(step())(source)),
            }
        }
        Some(existing) => {
            if !desired::controlled_by(&existing, seed) {
                return Err(Error::NotControlled {
                    namespace: namespace.to_owned(),
                    seed: seed.name_any(),
                });
            }
            if existing.labels().get(labels::ROLE).map(String::as_str) != Some(labels::ROLE_SEED) {
                let patch = json!({"metadata": {"labels": {labels::ROLE: labels::ROLE_SEED}}});
                api.patch(namespace, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map_err(api_error(step()))?;
            }
        }
    }
    Ok(())
}
