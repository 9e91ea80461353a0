//! One reference reconcile (spec §2.8 steps 1–4): release what no referrer of the namespace
//! needs, let a released referrer go, protect what the referrer references, and keep the
//! referrer's own finalizer in line.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerDeployment, Seed, Shoot};
use seedlet_api::names::namespaces;
use seedlet_api::security::WorkloadIdentity;
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::policy;
use serde::de::DeserializeOwned;

use super::refs::{self, Kind, Refs};
use super::{Ctx, REFERENCE_PROTECTION, References, Referrer, released};

/// Delay before a failed reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// Errors of a reference reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or listing failed.
    #[error("reading {what}")]
    Read {
        /// What was read.
        what: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing a finalizer failed.
    #[error("writing the finalizer of {what}")]
    Write {
        /// The object.
        what: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Read { .. } => "ReadError",
            Error::Write { .. } => "FinalizerError",
        }
    }
}

/// The namespace `K`'s references live in.
fn refs_namespace<K: Referrer>(object: &K) -> String {
    match K::KIND {
        Kind::Shoot => object.namespace().unwrap_or_default(),
        Kind::Seed | Kind::ControllerDeployment => namespaces::GARDEN.to_owned(),
    }
}

fn refs_of<K: serde::Serialize>(kind: Kind, object: &K) -> Refs {
    refs::refs_of(kind, &serde_json::to_value(object).unwrap_or_default())
}

async fn list<K>(api: Api<K>, what: &str) -> Result<Vec<K>, Error>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.list(&Default::default()).await {
        Ok(list) => Ok(list.items),
        // A garden without WorkloadIdentities (no CRD) references none.
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(Vec::new()),
        Err(source) => Err(Error::Read {
            what: what.to_owned(),
            source,
        }),
    }
}

/// What every referrer of `namespace` still needs (Shoots there; Seeds and ControllerDeployments
/// too for `garden`); released referrers need nothing.
async fn referenced_in(ctx: &Ctx, namespace: &str) -> Result<Refs, Error> {
    let mut all = Refs::default();
    let shoots: Vec<Shoot> = list(Api::namespaced(ctx.client.clone(), namespace), "shoots").await?;
    for shoot in shoots.iter().filter(|s| !released(*s)) {
        all.extend(&refs_of(Kind::Shoot, shoot));
    }
    if namespace == namespaces::GARDEN {
        let seeds: Vec<Seed> = list(Api::all(ctx.client.clone()), "seeds").await?;
        for seed in seeds.iter().filter(|s| !released(*s)) {
            all.extend(&refs_of(Kind::Seed, seed));
        }
        let deployments: Vec<ControllerDeployment> =
            list(Api::all(ctx.client.clone()), "controllerdeployments").await?;
        for deployment in deployments.iter().filter(|d| !released(*d)) {
            all.extend(&refs_of(Kind::ControllerDeployment, deployment));
        }
    }
    Ok(all)
}

/// Removes the finalizer from every protected object of `api` that is not in `referenced`.
async fn release_unreferenced<K>(
    api: Api<K>,
    what: &str,
    referenced: &BTreeSet<String>,
) -> Result<(), Error>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let objects = list(api.clone(), what).await?;
    let protected: Vec<&K> = objects
        .iter()
        .filter(|o| o.finalizers().iter().any(|f| f == REFERENCE_PROTECTION))
        .collect();
    let names: Vec<String> = protected.iter().map(|o| o.name_any()).collect();
    let stale = refs::unreferenced(&names, referenced);
    for object in protected
        .into_iter()
        .filter(|o| stale.contains(&o.name_any().as_str()))
    {
        seedlet_runtime::finalizer::remove(&api, object, REFERENCE_PROTECTION)
            .await
            .map_err(|source| Error::Write {
                what: format!("{what} {}", object.name_any()),
                source,
            })?;
    }
    Ok(())
}

/// Adds the finalizer to each named object of `api`; returns how many were found and the first
/// error (a missing object is one), after trying all.
async fn protect<K>(api: &Api<K>, what: &str, names: &BTreeSet<String>) -> (usize, Option<Error>)
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut found = 0;
    let mut first_error = None;
    for name in names {
        let result = match api.get(name).await {
            Ok(object) => {
                found += 1;
                seedlet_runtime::finalizer::ensure(api, &object, REFERENCE_PROTECTION)
                    .await
                    .map(|_| ())
                    .map_err(|source| Error::Write {
                        what: format!("{what} {name}"),
                        source,
                    })
            }
            Err(source) => Err(Error::Read {
                what: format!("{what} {name}"),
                source,
            }),
        };
        if let Err(error) = result {
            first_error.get_or_insert(error);
        }
    }
    (found, first_error)
}

impl<K: Referrer> Reconciler for References<K> {
    type Object = K;
    type Error = Error;
    const NAME: &'static str = K::NAME;

    /// Steps 1–4 for one referrer; idempotent. A missing referenced object is an error (the
    /// referrer is not protected then).
    async fn reconcile(&self, object: Arc<K>) -> Result<Action, Error> {
        run(object.as_ref(), &self.ctx)
            .await
            .map(|()| Action::await_change())
    }

    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn run<K: Referrer>(object: &K, ctx: &Ctx) -> Result<(), Error> {
    let api = K::api(&ctx.client, object.namespace().as_deref());
    let Some(current) = api
        .get_opt(&object.name_any())
        .await
        .map_err(|source| Error::Read {
            what: policy::object_key(object),
            source,
        })?
    else {
        return Ok(());
    };
    let namespace = refs_namespace(&current);
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let config_maps: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &namespace);
    let identities: Api<WorkloadIdentity> = Api::namespaced(ctx.client.clone(), &namespace);

    // 1. Release what nobody in the namespace references any more.
    let referenced = referenced_in(ctx, &namespace).await?;
    release_unreferenced(secrets.clone(), "secrets", &referenced.secrets).await?;
    release_unreferenced(config_maps.clone(), "configmaps", &referenced.config_maps).await?;
    release_unreferenced(
        identities.clone(),
        "workloadidentities",
        &referenced.workload_identities,
    )
    .await?;

    let write = |source| Error::Write {
        what: policy::object_key(&current),
        source,
    };
    // 2. A released referrer lets go.
    if released(&current) {
        seedlet_runtime::finalizer::remove(&api, &current, REFERENCE_PROTECTION)
            .await
            .map_err(write)?;
        return Ok(());
    }

    // 3. Protect what it references.
    let own = refs_of(K::KIND, &current);
    let mut found = 0;
    let mut first_error = None;
    for (count, error) in [
        protect(&secrets, "secret", &own.secrets).await,
        protect(&config_maps, "configmap", &own.config_maps).await,
        protect(&identities, "workloadidentity", &own.workload_identities).await,
    ] {
        found += count;
        if let Some(error) = error {
            first_error.get_or_insert(error);
        }
    }
    if let Some(error) = first_error {
        return Err(error);
    }

    // 4. Its own finalizer follows.
    if found > 0 {
        seedlet_runtime::finalizer::ensure(&api, &current, REFERENCE_PROTECTION)
            .await
            .map_err(write)?;
    } else {
        seedlet_runtime::finalizer::remove(&api, &current, REFERENCE_PROTECTION)
            .await
            .map_err(write)?;
    }
    Ok(())
}
