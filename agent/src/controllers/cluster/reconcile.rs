//! Shoot-side reconciles of the Cluster sync: for a shoot of this seed, put our `gardener`
//! finalizer on it, write its technical ID, its `Cluster` (get → create, or JSON merge patch of
//! what differs) and its control-plane namespace; a deleting shoot runs the delete flow of
//! [`super::delete`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use seedlet_api::core::{CloudProfile, NamespacedCloudProfile, Project, Seed, Shoot};
use seedlet_api::extensions::{Cluster, embed, synthesized_cloud_profile};
use seedlet_api::names::finalizers;
use serde_json::{Value, json};

use super::desired::{self, is_scheduled_to};
use super::{ClusterSync, NAME};
use seedlet_runtime::controller::{Reason, Reconciler};

/// Retry delay of failed reconciles (capped at the sync period).
pub const RETRY_DELAY: Duration = Duration::from_secs(5);
/// Delay before re-reading a shoot that changed under a write (its watch event usually
/// arrives first and triggers the retry sooner).
pub const CONFLICT_RETRY_DELAY: Duration = Duration::from_millis(200);

/// Errors of a Cluster sync reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The shoot has no namespace.
    #[error("shoot {name} has no namespace")]
    MissingNamespace {
        /// Shoot name.
        name: String,
    },
    /// No Project owns the shoot namespace (needed for a new technical ID).
    #[error("no project owns namespace {namespace}")]
    ProjectNotFound {
        /// Shoot namespace.
        namespace: String,
    },
    /// Listing Projects failed.
    #[error("listing projects")]
    ListProjects(#[source] kube::Error),
    /// Writing the shoot (its finalizer, `status.technicalID`) failed.
    #[error("patching shoot {key}")]
    PatchShoot {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Reading a garden object (Seed, CloudProfile, Shoot) failed.
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
    /// A garden object the Cluster embeds does not exist.
    #[error("{kind} {key} not found")]
    NotFound {
        /// Kind.
        kind: &'static str,
        /// Key.
        key: String,
    },
    /// The shoot references no cloud profile.
    #[error("shoot {key} references no cloud profile")]
    NoCloudProfile {
        /// `namespace/name`.
        key: String,
    },
    /// An embedded object could not be encoded.
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
    /// Reading or writing a seed object (Cluster, Namespace) failed.
    #[error("{step} {kind} {name} in the seed")]
    Seed {
        /// `reading`, `creating`, `patching` or `deleting`.
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

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace { .. } => "ShootNamespaceMissing",
            Error::ProjectNotFound { .. } | Error::ListProjects(_) => "ProjectNotFound",
            Error::PatchShoot { .. } => "ShootPatchError",
            Error::ReadGarden { .. } => "GardenReadError",
            Error::NotFound { .. } => "ObjectNotFound",
            Error::NoCloudProfile { .. } => "CloudProfileMissing",
            Error::Encode { .. } => "ClusterEncodeError",
            Error::DeleteShootState { .. } => "ShootStateDeleteError",
            Error::Seed { .. } => "SeedWriteError",
        }
    }
}

impl From<crate::shoot_teardown::Error> for Error {
    /// The teardown steps' errors keep their text and reason as the Cluster controller's.
    fn from(error: crate::shoot_teardown::Error) -> Self {
        use crate::shoot_teardown::Error as Teardown;
        match error {
            Teardown::ReadGarden { kind, key, source } => Self::ReadGarden { kind, key, source },
            Teardown::Encode { name, source } => Self::Encode { name, source },
            Teardown::DeleteShootState { key, source } => Self::DeleteShootState { key, source },
            Teardown::Seed {
                step,
                kind,
                name,
                source,
            } => Self::Seed {
                step,
                kind,
                name,
                source,
            },
        }
    }
}

/// The [`Error::Seed`] of `step` on seed object `kind` `name`.
pub fn seed_error(
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

impl Reconciler for ClusterSync {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Keeps the Cluster and namespace of a shoot of this seed current, or runs the delete flow of a
    /// deleting one; requeues after the sync period.
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        sync(&shoot, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        self.sync_period.min(RETRY_DELAY)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// Every shoot is synced again each `controllers.shoot.syncPeriod`, by the runtime's resync.
    fn resync_period(&self) -> Option<Duration> {
        Some(self.sync_period)
    }
}

async fn sync(shoot: &Shoot, ctx: &ClusterSync) -> Result<Action, Error> {
    if !is_scheduled_to(shoot, &ctx.seed_name) {
        // Not (or no longer) ours: the Cluster-side reconcile tears down what we created.
        return Ok(Action::await_change());
    }
    let name = shoot.name_any();
    let namespace = shoot
        .namespace()
        .ok_or_else(|| Error::MissingNamespace { name: name.clone() })?;
    let key = format!("{namespace}/{name}");
    if shoot.metadata.deletion_timestamp.is_some() {
        return super::delete::delete_shoot(shoot, ctx).await;
    }
    if crate::shoot_flow_switches::is_migrating(shoot) {
        // During a migration the source seed's migrate flow owns the seed side (and removes
        // the namespace and Cluster), and the destination takes over only after the hand-over
        // (spec §6): neither seed's sync may (re)create anything meanwhile.
        return Ok(Action::await_change());
    }
    let shoots: Api<Shoot> = Api::namespaced(ctx.garden.clone(), &namespace);
    // Gardenlet's finalizer before anything of the shoot exists in the seed: the shoot cannot
    // disappear before the delete flow has cleaned up after it.
    let mut shoot = match seedlet_runtime::finalizer::ensured(&shoots, shoot, finalizers::GARDENER)
        .await
        .map_err(|source| Error::PatchShoot {
            key: key.clone(),
            source,
        })? {
        Some(patched) => patched,
        None => shoot.clone(),
    };
    let technical_id = match crate::cluster_shoot::stored_technical_id(&shoot) {
        Some(id) => id.to_owned(),
        None => {
            let project = project(ctx, &namespace).await?;
            let id = desired::control_plane_namespace(&shoot, &project);
            // Spec §1.2 rule 4: the ID is in the shoot status before the Cluster exists.
            // The patch carries the resourceVersion we read: an ID written meanwhile by
            // someone else (another gardenlet, an operator restoring a legacy ID) must win,
            // never be overwritten by the one computed from a stale copy.
            let patch = json!({
                "metadata": {"resourceVersion": shoot.metadata.resource_version},
                "status": {"technicalID": id},
            });
            match shoots
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(patched) => shoot = patched,
                Err(kube::Error::Api(status)) if status.is_conflict() => {
                    tracing::debug!(shoot = %key, "shoot changed while writing its technical ID, retrying");
                    return Ok(Action::requeue(CONFLICT_RETRY_DELAY));
                }
                Err(source) => {
                    return Err(Error::PatchShoot {
                        key: key.clone(),
                        source,
                    });
                }
            }
            id
        }
    };
    let clusters: Api<Cluster> = Api::all(ctx.seed.clone());
    let existing = clusters.get_opt(&technical_id).await.map_err(seed_error(
        "reading",
        "Cluster",
        &technical_id,
    ))?;
    let seed = seed(ctx).await?;
    let cloud_profile = cloud_profile(ctx, &shoot, &namespace, &key).await?;
    let encode = |source| Error::Encode {
        name: technical_id.clone(),
        source,
    };
    let spec = desired::cluster_spec(&shoot, &seed, cloud_profile).map_err(encode)?;
    match existing {
        None => {
            let cluster = Cluster {
                metadata: ObjectMeta {
                    name: Some(technical_id.clone()),
                    ..ObjectMeta::default()
                },
                spec,
            };
            clusters
                .create(&post_params(ctx), &cluster)
                .await
                .map_err(seed_error("creating", "Cluster", &technical_id))?;
        }
        Some(current) => {
            let old = serde_json::to_value(&current.spec).map_err(encode)?;
            let new = serde_json::to_value(&spec).map_err(encode)?;
            if let Some(diff) = crate::merge_patch::merge_diff(&old, &new) {
                let patch = json!({"spec": diff});
                clusters
                    .patch(&technical_id, &patch_params(ctx), &Patch::Merge(&patch))
                    .await
                    .map_err(seed_error("patching", "Cluster", &technical_id))?;
            }
        }
    }
    ensure_namespace(ctx, &technical_id, &shoot, &seed).await?;
    Ok(Action::requeue(ctx.sync_period))
}

/// Creates the control-plane namespace or merge-patches the labels and annotations that differ.
async fn ensure_namespace(
    ctx: &ClusterSync,
    name: &str,
    shoot: &Shoot,
    seed: &Seed,
) -> Result<(), Error> {
    let namespaces: Api<Namespace> = Api::all(ctx.seed.clone());
    let existing =
        namespaces
            .get_opt(name)
            .await
            .map_err(seed_error("reading", "Namespace", name))?;
    let registrations = ctx.registrations.state();
    let types = crate::required_extensions::required_extension_types(shoot, &registrations);
    let current_labels = existing
        .as_ref()
        .map(|namespace| namespace.labels().clone())
        .unwrap_or_default();
    let current_annotations = existing
        .as_ref()
        .map(|namespace| namespace.annotations().clone())
        .unwrap_or_default();
    let labels = desired::namespace_labels(shoot, seed, &types, &current_labels);
    let annotations = desired::namespace_annotations(shoot, seed, name, &current_annotations);
    let Some(existing) = existing else {
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                labels: Some(
                    labels
                        .into_iter()
                        .filter_map(|(key, value)| Some((key, value?)))
                        .collect(),
                ),
                annotations: Some(annotations),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        namespaces
            .create(&post_params(ctx), &namespace)
            .await
            .map_err(seed_error("creating", "Namespace", name))?;
        return Ok(());
    };
    if existing.metadata.deletion_timestamp.is_some() {
        // Terminating; the next reconcile after it is gone re-creates it.
        return Ok(());
    }
    let label_patch = changed_entries(
        &current_labels,
        labels
            .into_iter()
            .map(|(key, value)| (key, value.map(Value::String).unwrap_or(Value::Null))),
    );
    let annotation_patch = changed_entries(
        &current_annotations,
        annotations
            .into_iter()
            .map(|(key, value)| (key, Value::String(value))),
    );
    if label_patch.is_empty() && annotation_patch.is_empty() {
        return Ok(());
    }
    let patch = json!({"metadata": {"labels": label_patch, "annotations": annotation_patch}});
    namespaces
        .patch(name, &patch_params(ctx), &Patch::Merge(&patch))
        .await
        .map_err(seed_error("patching", "Namespace", name))?;
    Ok(())
}

/// The entries of `desired` (`null` = remove) that differ from `current`.
fn changed_entries(
    current: &BTreeMap<String, String>,
    desired: impl IntoIterator<Item = (String, Value)>,
) -> serde_json::Map<String, Value> {
    desired
        .into_iter()
        .filter(|(key, value)| match value {
            Value::Null => current.contains_key(key),
            Value::String(value) => current.get(key) != Some(value),
            _ => true,
        })
        .collect()
}

/// Label of a project namespace naming its Project.
const PROJECT_NAME_LABEL: &str = "project.gardener.cloud/name";

async fn project(ctx: &ClusterSync, namespace: &str) -> Result<String, Error> {
    let cached = ctx.projects.state();
    if let Some(project) = desired::project_of(cached.iter().map(AsRef::as_ref), namespace) {
        return Ok(project);
    }
    // Gardener labels every project namespace with its project (all a seed may read of it
    // where the seed authorizer guards the garden).
    if let Ok(Some(found)) = Api::<Namespace>::all(ctx.garden.clone())
        .get_opt(namespace)
        .await
        && let Some(project) = found.labels().get(PROJECT_NAME_LABEL)
    {
        return Ok(project.clone());
    }
    let listed = Api::<Project>::all(ctx.garden.clone())
        .list(&ListParams::default())
        .await
        .map_err(Error::ListProjects)?;
    desired::project_of(&listed.items, namespace).ok_or_else(|| Error::ProjectNotFound {
        namespace: namespace.to_owned(),
    })
}

async fn seed(ctx: &ClusterSync) -> Result<Seed, Error> {
    let name = &ctx.seed_name;
    if let Some(seed) = ctx.seeds.get(&ObjectRef::new(name)) {
        return Ok((*seed).clone());
    }
    Api::<Seed>::all(ctx.garden.clone())
        .get_opt(name)
        .await
        .map_err(|source| Error::ReadGarden {
            kind: "Seed",
            key: name.clone(),
            source,
        })?
        .ok_or_else(|| Error::NotFound {
            kind: "Seed",
            key: name.clone(),
        })
}

/// The embedded cloud profile: the CloudProfile, or the one synthesized from a
/// NamespacedCloudProfile (spec §1.3).
async fn cloud_profile(
    ctx: &ClusterSync,
    shoot: &Shoot,
    namespace: &str,
    key: &str,
) -> Result<Value, Error> {
    let reference = shoot.cloud_profile().ok_or_else(|| Error::NoCloudProfile {
        key: key.to_owned(),
    })?;
    let name = reference.name.clone();
    if reference.kind_or_default() == "NamespacedCloudProfile" {
        let cached = ctx
            .namespaced_cloud_profiles
            .get(&ObjectRef::new(&name).within(namespace));
        let profile = match cached {
            Some(profile) => (*profile).clone(),
            None => {
                fetch::<NamespacedCloudProfile>(
                    Api::namespaced(ctx.garden.clone(), namespace),
                    "NamespacedCloudProfile",
                    &name,
                )
                .await?
            }
        };
        return Ok(synthesized_cloud_profile(&profile, namespace));
    }
    let profile = match ctx.cloud_profiles.get(&ObjectRef::new(&name)) {
        Some(profile) => (*profile).clone(),
        None => fetch::<CloudProfile>(Api::all(ctx.garden.clone()), "CloudProfile", &name).await?,
    };
    embed(&profile).map_err(|source| Error::Encode {
        name: name.clone(),
        source,
    })
}

async fn fetch<K>(api: Api<K>, kind: &'static str, name: &str) -> Result<K, Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.get_opt(name)
        .await
        .map_err(|source| Error::ReadGarden {
            kind,
            key: name.to_owned(),
            source,
        })?
        .ok_or_else(|| Error::NotFound {
            kind,
            key: name.to_owned(),
        })
}

fn post_params(ctx: &ClusterSync) -> PostParams {
    PostParams {
        field_manager: Some(ctx.field_manager.to_owned()),
        ..PostParams::default()
    }
}

fn patch_params(ctx: &ClusterSync) -> PatchParams {
    PatchParams {
        field_manager: Some(ctx.field_manager.to_owned()),
        ..PatchParams::default()
    }
}
