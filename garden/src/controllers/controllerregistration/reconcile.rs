//! Seed reconcile of the ControllerRegistration controller: list → compute the wanted
//! registrations (pure, [`super::wanted`] and [`super::desired`]) → create/patch/delete the
//! Seed's ControllerInstallations in the garden.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::ObjectReference;
use seedlet_api::core::{
    BackupBucket, BackupEntry, ControllerDeployment, ControllerInstallation,
    ControllerRegistration, Seed, Shoot,
};
use seedlet_api::names::{annotations, field_managers, namespaces};
use seedlet_runtime::controller::{Reason, Reconciler};
use serde_json::{Value, json};

use super::desired::{self, Demand, WantedError};
use super::wanted::{self, Inputs};
use super::{NAME, Scheduling};
use crate::controllers::field_selection::list_by_field;

/// Errors of one seed reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Listing objects of `kind` failed.
    #[error("listing {kind}")]
    List {
        /// Kind listed.
        kind: &'static str,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The controller's caches stopped (its watches ended).
    #[error("the controller's caches are gone")]
    CachesGone,
    /// The wanted registrations cannot be computed.
    #[error("computing wanted registrations of seed {seed}")]
    Wanted {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: WantedError,
    },
    /// An installation of the seed names a registration that does not exist.
    #[error("ControllerRegistration {0:?} does not exist")]
    UnknownRegistration(String),
    /// The referenced ControllerDeployment cannot be read.
    #[error(
        "cannot deploy ControllerInstallation because the referenced ControllerDeployment cannot be retrieved: {name}"
    )]
    ReadDeployment {
        /// Deployment name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// A resource referenced by the deployment is missing or of an unsupported kind.
    #[error("resource {kind} {namespace}/{name} referenced by ControllerDeployment {deployment} {problem}", namespace = namespaces::GARDEN)]
    ResourceReference {
        /// Deployment name.
        deployment: String,
        /// Kind of the referenced object.
        kind: String,
        /// Name of the referenced object.
        name: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// Reading a resource referenced by the deployment failed.
    #[error(
        "reading {kind} {}/{name} referenced by a ControllerDeployment",
        namespaces::GARDEN
    )]
    ReadResource {
        /// Kind of the referenced object.
        kind: String,
        /// Name of the referenced object.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The old installation of a wanted registration is still being deleted.
    #[error(
        "cannot deploy new ControllerInstallation for {registration:?} because the deletion of the old ControllerInstallation is still pending"
    )]
    DeletionPending {
        /// Registration name.
        registration: String,
    },
    /// Creating or patching an installation failed.
    #[error("writing ControllerInstallation for registration {registration} on seed {seed}")]
    WriteInstallation {
        /// Registration name.
        registration: String,
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Deleting an obsolete installation failed.
    #[error("deleting ControllerInstallation {name}")]
    DeleteInstallation {
        /// Installation name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::List { .. } => "ListError",
            Error::CachesGone => "CachesGone",
            Error::Wanted { .. } => "NoControllerRegistration",
            Error::UnknownRegistration(_) => "RegistrationNotFound",
            Error::ReadDeployment { .. } => "DeploymentReadError",
            Error::ResourceReference { .. } | Error::ReadResource { .. } => {
                "ResourceReferenceError"
            }
            Error::DeletionPending { .. } => "DeletionPending",
            Error::WriteInstallation { .. } => "InstallationWriteError",
            Error::DeleteInstallation { .. } => "InstallationDeleteError",
        }
    }
}

impl Reconciler for Scheduling {
    type Object = Seed;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Brings the Seed's ControllerInstallations in line with what it needs (module docs of
    /// [`super`]). Idempotent; writes only what differs.
    async fn reconcile(&self, seed: Arc<Seed>) -> Result<Action, Error> {
        let result = reconcile_seed(&seed, self).await;
        // Event-driven like upstream: every input is watched, so nothing changes without an event.
        result.map(|()| Action::await_change())
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn reconcile_seed(seed: &Seed, ctx: &Scheduling) -> Result<(), Error> {
    let client = &ctx.client;
    let name = seed.name_any();
    if !ctx.caches.ready().await {
        return Err(Error::CachesGone);
    }
    let state = SeedState::fetch(ctx, &name).await?;
    let kind_types = wanted::wanted_kind_types(&Inputs {
        seed,
        shoots: &state.shoots,
        buckets: &state.buckets,
        entries: &state.entries,
        registrations: &state.registrations,
    });
    let wanted = desired::wanted_registrations(
        &state.registrations,
        &Demand {
            seed,
            kind_types: &kind_types,
            shoot_count: state.shoots.len(),
            installations: &state.installations,
        },
    )
    .map_err(|source| Error::Wanted {
        seed: name.clone(),
        source,
    })?;

    let by_name: BTreeMap<&str, &ControllerRegistration> = state
        .registrations
        .iter()
        .filter_map(|registration| Some((registration.metadata.name.as_deref()?, registration)))
        .collect();
    let mut existing: BTreeMap<&str, &ControllerInstallation> = BTreeMap::new();
    for installation in &state.installations {
        let registration = installation.spec.registration_ref.name.as_str();
        if !by_name.contains_key(registration) {
            return Err(Error::UnknownRegistration(registration.to_owned()));
        }
        existing.insert(registration, installation);
    }

    for registration_name in &wanted {
        let Some(registration) = by_name.get(registration_name.as_str()) else {
            continue;
        };
        if registration.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let current = existing.get(registration_name.as_str()).copied();
        if current.is_some_and(|ci| ci.metadata.deletion_timestamp.is_some()) {
            return Err(Error::DeletionPending {
                registration: registration_name.clone(),
            });
        }
        ensure_installation(ctx, seed, registration, current).await?;
    }
    delete_obsolete(client, &state.installations, &wanted).await
}

/// What scheduling for one Seed reads: every registration, and the installations, backup
/// buckets and entries and shoots of (or on) the Seed.
struct SeedState {
    registrations: Vec<ControllerRegistration>,
    installations: Vec<ControllerInstallation>,
    buckets: Vec<BackupBucket>,
    entries: Vec<BackupEntry>,
    shoots: Vec<Shoot>,
}

impl SeedState {
    async fn fetch(ctx: &Scheduling, name: &str) -> Result<Self, Error> {
        let caches = &ctx.caches;
        let registrations = cloned(caches.registrations.state()).collect();
        let installations = seed_installations(&ctx.client, name).await?;
        let buckets = cloned(caches.buckets.state()).collect();
        let entries = cloned(caches.entries.state())
            .filter(|entry: &BackupEntry| entry.spec.seed_name.as_deref() == Some(name))
            .collect();
        let shoots = caches
            .shoots
            .state()
            .into_iter()
            .filter(|shoot| {
                shoot.spec.seed_name.as_deref() == Some(name)
                    || shoot.status.as_ref().and_then(|s| s.seed_name.as_deref()) == Some(name)
            })
            .map(Arc::unwrap_or_clone)
            .collect();
        Ok(Self {
            registrations,
            installations,
            buckets,
            entries,
            shoots,
        })
    }
}

/// Owned copies of cached objects.
fn cloned<K: Clone>(objects: Vec<Arc<K>>) -> impl Iterator<Item = K> {
    objects.into_iter().map(Arc::unwrap_or_clone)
}

/// The Seed's ControllerInstallations, fresh from the API (a cache could miss one just created
/// and create it twice): selected by `spec.seedRef.name` where the garden can, else all of them
/// filtered (a garden without the CRD's selectable field answers 400).
async fn seed_installations(
    client: &kube::Client,
    name: &str,
) -> Result<Vec<ControllerInstallation>, Error> {
    let api = Api::<ControllerInstallation>::all(client.clone());
    let all = list_by_field(&api, "spec.seedRef.name", name)
        .await
        .map_err(|source| Error::List {
            kind: "ControllerInstallation",
            source,
        })?;
    Ok(all
        .into_iter()
        .filter(|installation| installation.seed_name() == Some(name))
        .collect())
}

/// Creates the installation of `registration` on `seed`, or patches `current` when its spec,
/// hash labels or pod-security annotation are not the desired ones.
///
/// # Errors
/// Reading the deployment or its resources, or the write.
async fn ensure_installation(
    ctx: &Scheduling,
    seed: &Seed,
    registration: &ControllerRegistration,
    current: Option<&ControllerInstallation>,
) -> Result<(), Error> {
    let client = &ctx.client;
    let registration_name = registration.name_any();
    let deployment = match registration.deployment_name() {
        // The cache, or the API when the cache has not seen a new deployment yet.
        Some(deployment) => Some(
            match ctx
                .caches
                .deployments
                .get(&kube::runtime::reflector::ObjectRef::new(deployment))
            {
                Some(cached) => Arc::unwrap_or_clone(cached),
                None => read_deployment(client, deployment).await?,
            },
        ),
        None => None,
    };
    let resource_refs = match &deployment {
        Some(deployment) => resolve_resource_refs(client, deployment).await?,
        None => Vec::new(),
    };
    let mut spec = desired::desired_spec(registration, deployment.as_ref(), seed, resource_refs);
    let labels = desired::hash_labels(registration, deployment.as_ref(), seed);
    if let Some(current) = current {
        desired::keep_unchanged_references(current, &labels, &mut spec);
    }
    let pod_security = registration
        .annotations()
        .get(annotations::POD_SECURITY_ENFORCE)
        .cloned();
    let write = |source| Error::WriteInstallation {
        registration: registration_name.clone(),
        seed: seed.name_any(),
        source,
    };
    let api: Api<ControllerInstallation> = Api::all(client.clone());
    if let Some(current) = current {
        if up_to_date(current, &spec, &labels, pod_security.as_deref()) {
            return Ok(());
        }
        let patch = installation_patch(&spec, &labels, pod_security.as_deref());
        api.patch(
            &current.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .map_err(write)?;
        return Ok(());
    }
    let mut annotations_map = BTreeMap::new();
    if let Some(value) = &pod_security {
        annotations_map.insert(annotations::POD_SECURITY_ENFORCE.to_owned(), value.clone());
    }
    let installation = ControllerInstallation {
        metadata: ObjectMeta {
            generate_name: Some(format!("{registration_name}-")),
            labels: Some(labels),
            annotations: (!annotations_map.is_empty()).then_some(annotations_map),
            ..ObjectMeta::default()
        },
        spec,
        status: None,
    };
    let params = PostParams {
        field_manager: Some(field_managers::GARDEN.to_owned()),
        ..PostParams::default()
    };
    api.create(&params, &installation).await.map_err(write)?;
    Ok(())
}

/// Deletes the installations of the Seed that are no longer wanted (404 counts as done).
///
/// # Errors
/// [`Error::DeleteInstallation`].
async fn delete_obsolete(
    client: &kube::Client,
    installations: &[ControllerInstallation],
    wanted: &std::collections::BTreeSet<String>,
) -> Result<(), Error> {
    let api: Api<ControllerInstallation> = Api::all(client.clone());
    for installation in desired::obsolete_installations(installations, wanted) {
        if installation.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let installation_name = installation.name_any();
        match api
            .delete(&installation_name, &DeleteParams::default())
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(source) => {
                return Err(Error::DeleteInstallation {
                    name: installation_name,
                    source,
                });
            }
        }
    }
    Ok(())
}

async fn read_deployment(client: &kube::Client, name: &str) -> Result<ControllerDeployment, Error> {
    Api::<ControllerDeployment>::all(client.clone())
        .get(name)
        .await
        .map_err(|source| Error::ReadDeployment {
            name: name.to_owned(),
            source,
        })
}

/// `resourceRefs` mirroring the deployment's `resources`, read from the garden namespace `garden`
/// to record their resource versions.
async fn resolve_resource_refs(
    client: &kube::Client,
    deployment: &ControllerDeployment,
) -> Result<Vec<ObjectReference>, Error> {
    let deployment_name = deployment.name_any();
    let mut out = Vec::new();
    for resource in &deployment.spec.resources {
        let reference = &resource.resource_ref;
        let problem = |problem| Error::ResourceReference {
            deployment: deployment_name.clone(),
            kind: reference.kind.clone(),
            name: reference.name.clone(),
            problem,
        };
        let read = |source| Error::ReadResource {
            kind: reference.kind.clone(),
            name: reference.name.clone(),
            source,
        };
        let resource_version = match reference.kind.as_str() {
            "ConfigMap" => {
                Api::<ConfigMap>::namespaced(client.clone(), namespaces::GARDEN)
                    .get_opt(&reference.name)
                    .await
                    .map_err(read)?
                    .ok_or_else(|| problem("does not exist"))?
                    .metadata
                    .resource_version
            }
            "Secret" => {
                Api::<Secret>::namespaced(client.clone(), namespaces::GARDEN)
                    .get_opt(&reference.name)
                    .await
                    .map_err(read)?
                    .ok_or_else(|| problem("does not exist"))?
                    .metadata
                    .resource_version
            }
            _ => {
                return Err(problem(
                    "has an unsupported kind (only ConfigMap and Secret)",
                ));
            }
        };
        out.push(ObjectReference {
            kind: Some(reference.kind.clone()),
            name: reference.name.clone(),
            namespace: Some(namespaces::GARDEN.to_owned()),
            resource_version,
            ..ObjectReference::default()
        });
    }
    Ok(out)
}

/// Whether the installation already has the desired spec, hash labels and annotation.
fn up_to_date(
    current: &ControllerInstallation,
    spec: &seedlet_api::core::ControllerInstallationSpec,
    labels: &BTreeMap<String, String>,
    pod_security: Option<&str>,
) -> bool {
    let current_labels = current.labels();
    current.spec.registration_ref == spec.registration_ref
        && current.spec.deployment_ref == spec.deployment_ref
        && current.spec.seed_ref == spec.seed_ref
        && current.spec.resource_refs == spec.resource_refs
        && labels
            .iter()
            .all(|(key, value)| current_labels.get(key) == Some(value))
        && current
            .annotations()
            .get(annotations::POD_SECURITY_ENFORCE)
            .map(String::as_str)
            == pod_security
}

/// The merge patch replacing the installation's spec fields, hash labels and annotation (absent
/// fields are set to `null` so the patch removes them).
fn installation_patch(
    spec: &seedlet_api::core::ControllerInstallationSpec,
    labels: &BTreeMap<String, String>,
    pod_security: Option<&str>,
) -> Value {
    let mut labels_patch = serde_json::Map::new();
    for (key, value) in labels {
        labels_patch.insert(key.clone(), json!(value));
    }
    if !labels.contains_key(seedlet_api::names::labels::DEPLOYMENT_HASH) {
        labels_patch.insert(
            seedlet_api::names::labels::DEPLOYMENT_HASH.to_owned(),
            Value::Null,
        );
    }
    json!({
        "metadata": {
            "labels": labels_patch,
            "annotations": {annotations::POD_SECURITY_ENFORCE: pod_security},
        },
        "spec": {
            "registrationRef": spec.registration_ref,
            "deploymentRef": spec.deployment_ref,
            "seedRef": spec.seed_ref,
            "resourceRefs": if spec.resource_refs.is_empty() { Value::Null } else { json!(spec.resource_refs) },
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::controllerregistration::desired::versioned_reference;

    #[test]
    fn installation_patch_removes_absent_fields_with_null() {
        let spec = seedlet_api::core::ControllerInstallationSpec {
            registration_ref: versioned_reference("r", Some("1")),
            seed_ref: Some(versioned_reference("s", Some("2"))),
            ..Default::default()
        };
        let patch = installation_patch(&spec, &BTreeMap::new(), None);
        assert_eq!(patch["spec"]["deploymentRef"], Value::Null);
        assert_eq!(patch["spec"]["resourceRefs"], Value::Null);
        assert_eq!(patch["metadata"]["labels"]["deployment-hash"], Value::Null);
        assert_eq!(
            patch["metadata"]["annotations"][annotations::POD_SECURITY_ENFORCE],
            Value::Null
        );
        assert_eq!(patch["spec"]["seedRef"]["resourceVersion"], "2");
    }

    #[test]
    fn up_to_date_notices_a_changed_reference_version() {
        let spec = seedlet_api::core::ControllerInstallationSpec {
            registration_ref: versioned_reference("r", Some("1")),
            ..Default::default()
        };
        let current = ControllerInstallation::new("r-abc", spec.clone());
        assert!(up_to_date(&current, &spec, &BTreeMap::new(), None));
        let mut newer = spec.clone();
        newer.registration_ref.resource_version = Some("2".into());
        assert!(!up_to_date(&current, &newer, &BTreeMap::new(), None));
        assert!(!up_to_date(
            &current,
            &spec,
            &BTreeMap::new(),
            Some("privileged")
        ));
    }
}
