//! The seed-side teardown of a shoot: what a shoot leaves in the seed (its control-plane namespace
//! with the extension objects in it, its Cluster) and in the garden on its behalf (its ShootState),
//! and the Bastions that must be gone before any of it is removed. Two controllers run these
//! steps: the Cluster controller (its own short delete flow when the Shoot controller is off, and
//! its teardown of orphaned Clusters) and the Shoot controller, whose delete and force-delete
//! flows end with them. Every step is idempotent and counts NotFound as done.

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Shoot, ShootState};
use seedlet_api::extensions::{Cluster, embed};
use seedlet_api::names::{annotations, finalizers};
use seedlet_api::operations::Bastion;
use serde_json::json;

/// Poll interval while a control-plane namespace terminates (a namespace watch also triggers).
pub const NAMESPACE_POLL: Duration = Duration::from_secs(2);
/// Poll interval while the garden still holds Bastions of a deleting shoot: one list of the
/// project namespace's Bastions per second, only while the shoot is being deleted (the garden
/// removes a deleting shoot's Bastions within about a second; at 5 s a Shoot with a Bastion took
/// 16 s to go on a real garden).
pub const BASTION_POLL: Duration = Duration::from_secs(1);

/// Errors of the teardown steps; the controllers turn them into their own errors with the same
/// text and reason.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading a garden object (the shoot's Bastions) failed.
    #[error("reading {kind} {key}")]
    ReadGarden {
        /// Kind.
        kind: &'static str,
        /// Key.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The shoot could not be encoded for the Cluster.
    #[error("encoding cluster {name}")]
    Encode {
        /// Cluster name.
        name: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
    /// Deleting the garden ShootState of a deleted shoot failed.
    #[error("deleting shootstate {key}")]
    DeleteShootState {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Reading, patching or deleting a seed object (Cluster, Namespace) failed.
    #[error("{step} {kind} {name} in the seed")]
    Seed {
        /// `reading`, `patching` or `deleting`.
        step: &'static str,
        /// Kind.
        kind: &'static str,
        /// Name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// CamelCase reason (the same the Cluster controller reports for its own variants).
    pub fn reason(&self) -> &'static str {
        match self {
            Error::ReadGarden { .. } => "GardenReadError",
            Error::Encode { .. } => "ClusterEncodeError",
            Error::DeleteShootState { .. } => "ShootStateDeleteError",
            Error::Seed { .. } => "SeedWriteError",
        }
    }
}

/// The [`Error::Seed`] of `step` on seed object `kind` `name`.
fn seed_error(
    step: &'static str,
    kind: &'static str,
    name: &str,
) -> impl FnOnce(kube::Error) -> Error {
    let name = name.to_owned();
    move |source| Error::Seed {
        step,
        kind,
        name,
        source,
    }
}

/// What the teardown steps need, borrowed from the calling controller's context.
#[derive(Clone, Copy)]
pub struct Clients<'a> {
    /// Seed client.
    pub seed: &'a kube::Client,
    /// Garden client.
    pub garden: &'a kube::Client,
    /// Our Seed's name.
    pub seed_name: &'a str,
    /// Field manager of our writes.
    pub field_manager: &'static str,
    /// Time source (deletion confirmation timestamps).
    pub clock: &'a dyn seedlet_runtime::clock::Clock,
}

impl std::fmt::Debug for Clients<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clients")
            .field("seed", &self.seed_name)
            .finish_non_exhaustive()
    }
}

/// Whether the shoot carries our (gardenlet's) finalizer.
pub fn has_finalizer(shoot: &Shoot) -> bool {
    shoot.finalizers().iter().any(|f| f == finalizers::GARDENER)
}

/// The names of the garden's Bastions in `namespace` that point at shoot `name` (listed by this
/// seed's `spec.seedName`, as the seed authorizer demands; unfiltered where the garden cannot
/// select that field).
///
/// # Errors
/// [`Error::ReadGarden`] when the list fails.
pub async fn bastions_of(
    ctx: Clients<'_>,
    namespace: &str,
    name: &str,
) -> Result<Vec<String>, Error> {
    let api: Api<Bastion> = Api::namespaced(ctx.garden.clone(), namespace);
    let selected = ListParams::default().fields(&format!("spec.seedName={}", ctx.seed_name));
    let listed = match api.list(&selected).await {
        Err(kube::Error::Api(status)) if status.code == 400 => {
            api.list(&ListParams::default()).await
        }
        other => other,
    };
    let listed = listed.map_err(|source| Error::ReadGarden {
        kind: "Bastion",
        key: namespace.to_owned(),
        source,
    })?;
    Ok(listed
        .items
        .iter()
        .filter(|bastion| {
            bastion.spec.shoot_ref.name == name
                && bastion.spec.seed_name.as_deref() == Some(ctx.seed_name)
        })
        .map(ResourceExt::name_any)
        .collect())
}

/// A shoot-only sync of the Cluster (spec §1.4: `cloudProfile` and `seed` untouched), so that
/// extensions see the deletion timestamp before their objects are deleted. A missing Cluster is
/// left missing.
///
/// # Errors
/// Seed API errors other than NotFound; [`Error::Encode`].
pub async fn show_deletion(
    ctx: Clients<'_>,
    shoot: &Shoot,
    technical_id: &str,
) -> Result<(), Error> {
    let clusters: Api<Cluster> = Api::all(ctx.seed.clone());
    let Some(current) = clusters.get_opt(technical_id).await.map_err(seed_error(
        "reading",
        "Cluster",
        technical_id,
    ))?
    else {
        return Ok(());
    };
    let embedded = embed(shoot).map_err(|source| Error::Encode {
        name: technical_id.to_owned(),
        source,
    })?;
    let Some(diff) = crate::merge_patch::merge_diff(&current.spec.shoot, &embedded) else {
        return Ok(());
    };
    let params = PatchParams {
        field_manager: Some(ctx.field_manager.to_owned()),
        ..PatchParams::default()
    };
    let patch = json!({"spec": {"shoot": diff}});
    match clusters
        .patch(technical_id, &params, &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(seed_error("patching", "Cluster", technical_id)(source)),
    }
}

/// Deletes the control-plane namespace `name`, and the Cluster once the namespace is gone.
/// `Some(requeue)` while the namespace still terminates, `None` when both are gone. Idempotent.
///
/// # Errors
/// Seed API errors other than NotFound.
pub async fn teardown(ctx: Clients<'_>, name: &str) -> Result<Option<Action>, Error> {
    if !delete_namespace(ctx, name).await? {
        return Ok(Some(Action::requeue(NAMESPACE_POLL)));
    }
    delete_cluster(ctx, name).await?;
    Ok(None)
}

/// Deletes the control-plane namespace `name` unless it already terminates; true once it is
/// gone.
///
/// # Errors
/// Seed API errors other than NotFound.
pub async fn delete_namespace(ctx: Clients<'_>, name: &str) -> Result<bool, Error> {
    let namespaces: Api<Namespace> = Api::all(ctx.seed.clone());
    let Some(namespace) =
        namespaces
            .get_opt(name)
            .await
            .map_err(seed_error("reading", "Namespace", name))?
    else {
        return Ok(true);
    };
    if namespace.metadata.deletion_timestamp.is_none() {
        match namespaces.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_not_found() => return Ok(true),
            Err(source) => return Err(seed_error("deleting", "Namespace", name)(source)),
        }
    }
    Ok(false)
}

/// Deletes Cluster `name` (NotFound counts as done).
///
/// # Errors
/// Seed API errors other than NotFound.
pub async fn delete_cluster(ctx: Clients<'_>, name: &str) -> Result<(), Error> {
    match Api::<Cluster>::all(ctx.seed.clone())
        .delete(name, &DeleteParams::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(seed_error("deleting", "Cluster", name)(source)),
    }
}

/// Gardener's ShootState deletion (spec §3.2 `Delete`): confirm with
/// `confirmation.gardener.cloud/deletion=true` and a timestamp, then DELETE; a missing
/// ShootState counts as done. Callers run it after the Cluster is gone, so the ShootState sync
/// (keyed by the Cluster) cannot write it again.
///
/// # Errors
/// [`Error::DeleteShootState`] for garden API errors other than NotFound.
pub async fn delete_shoot_state(
    ctx: Clients<'_>,
    namespace: &str,
    name: &str,
    key: &str,
) -> Result<(), Error> {
    let states: Api<ShootState> = Api::namespaced(ctx.garden.clone(), namespace);
    let delete_error = |source| Error::DeleteShootState {
        key: key.to_owned(),
        source,
    };
    let stamp = crate::extension_sync::operation::timestamp(ctx.clock.now());
    let confirm = json!({"metadata": {"annotations": {
        (annotations::CONFIRMATION_DELETION): "true",
        (annotations::TIMESTAMP): stamp,
    }}});
    match states
        .patch(name, &PatchParams::default(), &Patch::Merge(&confirm))
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.is_not_found() => return Ok(()),
        Err(source) => return Err(delete_error(source)),
    }
    match states.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(delete_error(source)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shoot(finalizers: &[&str]) -> Shoot {
        serde_json::from_value(json!({
            "metadata": {"name": "s", "namespace": "garden-dev", "finalizers": finalizers},
            "spec": {"provider": {"type": "local"}, "region": "r"},
        }))
        .expect("shoot")
    }

    #[test]
    fn our_finalizer_is_found_among_others() {
        let cases: [(&[&str], bool); 4] = [
            (&[], false),
            (&["other"], false),
            (&["gardener"], true),
            (&["other", "gardener"], true),
        ];
        for (finalizers, expected) in cases {
            assert_eq!(
                has_finalizer(&shoot(finalizers)),
                expected,
                "{finalizers:?}"
            );
        }
    }

    #[test]
    fn each_error_keeps_the_cluster_controllers_reason() {
        let api = || {
            kube::Error::Api(
                kube::core::Status::failure("boom", "InternalError")
                    .with_code(500)
                    .boxed(),
            )
        };
        let encode = serde_json::from_str::<u8>("x").expect_err("not a number");
        let cases = [
            (
                Error::ReadGarden {
                    kind: "Bastion",
                    key: "garden-dev".into(),
                    source: api(),
                },
                "GardenReadError",
                "reading Bastion garden-dev",
            ),
            (
                Error::Encode {
                    name: "shoot--dev--s".into(),
                    source: encode,
                },
                "ClusterEncodeError",
                "encoding cluster shoot--dev--s",
            ),
            (
                Error::DeleteShootState {
                    key: "garden-dev/s".into(),
                    source: api(),
                },
                "ShootStateDeleteError",
                "deleting shootstate garden-dev/s",
            ),
            (
                seed_error("deleting", "Namespace", "shoot--dev--s")(api()),
                "SeedWriteError",
                "deleting Namespace shoot--dev--s in the seed",
            ),
        ];
        for (error, reason, text) in cases {
            assert_eq!(error.reason(), reason, "{text}");
            assert_eq!(error.to_string(), text);
        }
    }
}
