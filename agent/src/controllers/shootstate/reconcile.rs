//! One ShootState write: an incremental batch (the changed extension objects and Secrets of one
//! control-plane namespace, copied with their referenced objects) or a full snapshot listed
//! fresh from the seed; read the ShootState, decide (pure, in `entries`), create or merge-patch.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::Secret;
use kube::api::{
    ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::{Api, Resource, ResourceExt};
use seedlet_api::common::NamedResourceReference;
use seedlet_api::core::{ResourceData, ShootState, ShootStateSpec};
use seedlet_api::extensions::{
    BackupEntry, ContainerRuntime, ControlPlane, DNSRecord, Extension, ExtensionObject,
    Infrastructure, Network, OperatingSystemConfig, Worker,
};
use seedlet_api::names::annotations;

use super::entries::{self, Change, ExtensionItem, SecretItem};
use crate::cluster_shoot::ShootRef;
use crate::metrics::AgentMetrics;
use seedlet_runtime::clock::Clock;

/// Errors of one ShootState write.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the ShootState from the garden failed.
    #[error("reading shootstate {key}")]
    ReadShootState {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Creating or patching the ShootState failed (a conflict means another writer was first).
    #[error("writing shootstate {key}")]
    WriteShootState {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Resolving the API resource of a referenced object failed.
    #[error("discovering {api_version} {kind} for status.resources of {namespace}")]
    Discover {
        /// API version of the reference.
        api_version: String,
        /// Kind of the reference.
        kind: String,
        /// Control-plane namespace.
        namespace: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Reading a referenced object failed.
    #[error("reading {kind} {namespace}/{name} referenced by status.resources")]
    ReadResource {
        /// Kind.
        kind: String,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// A referenced object does not exist (gardenlet fails too, rather than lose it silently).
    #[error("{kind} {namespace}/{name} referenced by status.resources does not exist")]
    MissingResource {
        /// Kind.
        kind: String,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A referenced object could not be encoded as JSON.
    #[error("encoding {kind} {name} referenced by status.resources")]
    Encode {
        /// Kind.
        kind: String,
        /// Name.
        name: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
    /// Listing objects for a snapshot failed.
    #[error("listing {kind} in {namespace} for a shootstate snapshot")]
    List {
        /// Kind.
        kind: &'static str,
        /// Control-plane namespace.
        namespace: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::ReadShootState { .. } => "ShootStateReadError",
            Error::WriteShootState { .. } => "ShootStateWriteError",
            Error::Discover { .. } => "ResourceDiscoveryError",
            Error::ReadResource { .. } => "ResourceReadError",
            Error::MissingResource { .. } => "ResourceMissing",
            Error::Encode { .. } => "ResourceEncodeError",
            Error::List { .. } => "SnapshotListError",
        }
    }
}

/// Dependencies of the writes.
pub struct Ctx {
    /// Seed client.
    pub seed: kube::Client,
    /// Garden client.
    pub garden: kube::Client,
    /// Metrics (`seedlet_shootstate_writes_total`).
    pub metrics: Arc<AgentMetrics>,
    /// Clock for the snapshot timestamp.
    pub clock: Arc<dyn Clock>,
    /// Field manager of creates and patches.
    pub field_manager: &'static str,
    /// Discovered API resources of referenced kinds.
    resources: Mutex<HashMap<GroupVersionKind, ApiResource>>,
}

impl Ctx {
    /// Dependencies with an empty discovery cache.
    pub fn new(
        seed: kube::Client,
        garden: kube::Client,
        metrics: Arc<AgentMetrics>,
        clock: Arc<dyn Clock>,
        field_manager: &'static str,
    ) -> Self {
        Self {
            seed,
            garden,
            metrics,
            clock,
            field_manager,
            resources: Mutex::new(HashMap::new()),
        }
    }
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// The work for one ShootState.
#[derive(Clone, Debug)]
pub struct Job {
    /// Control-plane namespace.
    pub namespace: String,
    /// The shoot (ShootState key).
    pub shoot: ShootRef,
    /// Changed extension objects by (kind, name); `None` = gone.
    pub extensions: Vec<((&'static str, String), Option<ExtensionItem>)>,
    /// Changed persisted Secrets by name; `None` = gone.
    pub secrets: Vec<(String, Option<SecretItem>)>,
    /// Whether to write a full snapshot instead (covers every change).
    pub snapshot: bool,
}

/// What a job did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Whether a create or patch was sent.
    pub wrote: bool,
    /// The ShootState's `gardener.cloud/timestamp` afterwards (last snapshot).
    pub timestamp: Option<String>,
    /// Extension objects whose change could not be prepared (e.g. a referenced object is
    /// missing); their entries were left as they were, the rest of the batch was written.
    pub failed: Vec<((&'static str, String), Error)>,
}

/// Runs one job: reads the ShootState, applies the batch (or computes the snapshot) and writes it
/// when it changed; a snapshot always writes, to move its timestamp. Creates the ShootState when
/// missing unless the shoot is deleting — seedlet runs no shoot flow that would create it.
/// Idempotent; a concurrent writer makes the patch fail with a conflict, and the caller retries
/// on fresh state. The writes are charged to the write budget of the running controller.
///
/// # Errors
/// See [`Error`].
pub async fn run(ctx: &Ctx, job: &Job) -> Result<Outcome, Error> {
    let key = format!("{}/{}", job.shoot.namespace, job.shoot.name);

    let api: Api<ShootState> = Api::namespaced(ctx.garden.clone(), &job.shoot.namespace);
    let current = api
        .get_opt(&job.shoot.name)
        .await
        .map_err(|source| Error::ReadShootState {
            key: key.clone(),
            source,
        })?;
    let timestamp = current
        .as_ref()
        .and_then(|state| state.annotations().get(annotations::TIMESTAMP).cloned());
    let previous = current.as_ref().map(|state| &state.spec);
    let mut failed = Vec::new();
    let mut extra_annotations = BTreeMap::new();
    let (spec, changed) = if job.snapshot {
        let spec = snapshot(ctx, &job.namespace, previous).await?;
        let stamp = ctx
            .clock
            .now()
            .round(jiff::Unit::Second)
            .unwrap_or_else(|_| ctx.clock.now())
            .to_string();
        extra_annotations.insert(annotations::TIMESTAMP.to_owned(), stamp);
        (spec, true)
    } else {
        let (changes, not_prepared) = changes(ctx, job).await;
        failed = not_prepared;
        let mut spec = previous.cloned().unwrap_or_default();
        let changed = entries::apply_changes(&mut spec, changes, job.shoot.migrating());
        (spec, changed)
    };
    let new_timestamp = extra_annotations
        .get(annotations::TIMESTAMP)
        .cloned()
        .or(timestamp);
    let Some(current) = current else {
        if job.shoot.deleting || (!job.snapshot && spec == ShootStateSpec::default()) {
            return Ok(Outcome {
                failed,
                ..Outcome::default()
            });
        }
        let mut state = ShootState::new(&job.shoot.name, spec);
        state.metadata.namespace = Some(job.shoot.namespace.clone());
        if !extra_annotations.is_empty() {
            state.metadata.annotations = Some(extra_annotations);
        }
        let params = PostParams {
            field_manager: Some(ctx.field_manager.to_owned()),
            ..PostParams::default()
        };
        ctx.metrics.shoot_state_written();
        api.create(&params, &state)
            .await
            .map_err(|source| Error::WriteShootState { key, source })?;
        return Ok(Outcome {
            wrote: true,
            timestamp: new_timestamp,
            failed,
        });
    };
    if !changed {
        return Ok(Outcome {
            wrote: false,
            timestamp: new_timestamp,
            failed,
        });
    }
    let patch = entries::spec_patch(
        &spec,
        current.metadata.resource_version.as_deref(),
        &extra_annotations,
    );
    let params = PatchParams {
        field_manager: Some(ctx.field_manager.to_owned()),
        ..PatchParams::default()
    };
    ctx.metrics.shoot_state_written();
    api.patch(&job.shoot.name, &params, &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::WriteShootState { key, source })?;
    Ok(Outcome {
        wrote: true,
        timestamp: new_timestamp,
        failed,
    })
}

/// The changes of an incremental job, and the objects whose change could not be prepared (they
/// must not hold up the rest of the batch); paused objects are left alone.
async fn changes(ctx: &Ctx, job: &Job) -> (Vec<Change>, Vec<((&'static str, String), Error)>) {
    let mut changes = Vec::new();
    let mut failed = Vec::new();
    for ((kind, name), item) in &job.extensions {
        if item.as_ref().is_some_and(|item| item.paused) {
            continue;
        }
        match item.as_ref().and_then(ExtensionItem::entry) {
            Some(entry) => match copies(ctx, &job.namespace, &entry.resources).await {
                Ok(resources) => changes.push(Change::UpsertExtension { entry, resources }),
                Err(error) => failed.push(((*kind, name.clone()), error)),
            },
            None => changes.push(Change::RemoveExtension {
                kind: (*kind).to_owned(),
                name: name.clone(),
            }),
        }
    }
    for (name, item) in &job.secrets {
        match item {
            Some(item) if !item.deleting => changes.push(Change::UpsertSecret(item.entry.clone())),
            _ => changes.push(Change::RemoveSecret(name.clone())),
        }
    }
    (changes, failed)
}

/// The full spec from fresh lists of the seed.
pub(super) async fn snapshot(
    ctx: &Ctx,
    namespace: &str,
    previous: Option<&ShootStateSpec>,
) -> Result<ShootStateSpec, Error> {
    let secrets: Api<Secret> = Api::namespaced(ctx.seed.clone(), namespace);
    let listed = secrets
        .list(&ListParams::default().labels(&entries::persisted_selector()))
        .await
        .map_err(|source| Error::List {
            kind: "Secret",
            namespace: namespace.to_owned(),
            source,
        })?;
    let secrets = listed
        .items
        .iter()
        .filter_map(SecretItem::of)
        .filter(|item| !item.deleting)
        .map(|item| item.entry)
        .collect();
    let mut extensions = Vec::new();
    for item in list_extension_items(&ctx.seed, namespace).await? {
        if let Some(entry) = item.entry() {
            let resources = copies(ctx, namespace, &entry.resources).await?;
            extensions.push((entry, resources));
        }
    }
    Ok(entries::snapshot_spec(previous, secrets, extensions))
}

/// Every extension object of the nine kinds in `namespace`.
async fn list_extension_items(
    seed: &kube::Client,
    namespace: &str,
) -> Result<Vec<ExtensionItem>, Error> {
    let mut items = list_kind(Api::<BackupEntry>::all(seed.clone()), namespace).await?;
    items.extend(
        list_kind(
            Api::<ContainerRuntime>::namespaced(seed.clone(), namespace),
            namespace,
        )
        .await?,
    );
    items.extend(
        list_kind(
            Api::<ControlPlane>::namespaced(seed.clone(), namespace),
            namespace,
        )
        .await?,
    );
    items.extend(
        list_kind(
            Api::<DNSRecord>::namespaced(seed.clone(), namespace),
            namespace,
        )
        .await?,
    );
    items.extend(
        list_kind(
            Api::<Extension>::namespaced(seed.clone(), namespace),
            namespace,
        )
        .await?,
    );
    items.extend(
        list_kind(
            Api::<Infrastructure>::namespaced(seed.clone(), namespace),
            namespace,
        )
        .await?,
    );
    items.extend(
        list_kind(
            Api::<Network>::namespaced(seed.clone(), namespace),
            namespace,
        )
        .await?,
    );
    items.extend(
        list_kind(
            Api::<OperatingSystemConfig>::namespaced(seed.clone(), namespace),
            namespace,
        )
        .await?,
    );
    items.extend(
        list_kind(
            Api::<Worker>::namespaced(seed.clone(), namespace),
            namespace,
        )
        .await?,
    );
    Ok(items)
}

async fn list_kind<K: ExtensionObject>(
    api: Api<K>,
    namespace: &str,
) -> Result<Vec<ExtensionItem>, Error> {
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|source| Error::List {
            kind: kind_name::<K>(),
            namespace: namespace.to_owned(),
            source,
        })?;
    Ok(list
        .items
        .iter()
        .filter_map(ExtensionItem::of)
        .filter(|item| item.namespace == namespace)
        .collect())
}

fn kind_name<K: Resource<DynamicType = ()>>() -> &'static str {
    let kind = K::kind(&());
    entries::KINDS
        .into_iter()
        .map(seedlet_api::extensions::ExtensionKind::as_str)
        .find(|known| *known == kind.as_ref())
        .unwrap_or("extension object")
}

/// Copies of the objects `references` point at, in the control-plane namespace.
async fn copies(
    ctx: &Ctx,
    namespace: &str,
    references: &[NamedResourceReference],
) -> Result<Vec<ResourceData>, Error> {
    let mut copies = Vec::with_capacity(references.len());
    for reference in references {
        let target = &reference.resource_ref;
        let api_version = target
            .api_version
            .clone()
            .unwrap_or_else(|| "v1".to_owned());
        let resource = api_resource(ctx, &api_version, &target.kind, namespace).await?;
        let api: Api<DynamicObject> = Api::namespaced_with(ctx.seed.clone(), namespace, &resource);
        let object = api
            .get_opt(&target.name)
            .await
            .map_err(|source| Error::ReadResource {
                kind: target.kind.clone(),
                namespace: namespace.to_owned(),
                name: target.name.clone(),
                source,
            })?
            .ok_or_else(|| Error::MissingResource {
                kind: target.kind.clone(),
                namespace: namespace.to_owned(),
                name: target.name.clone(),
            })?;
        let value = serde_json::to_value(&object).map_err(|source| Error::Encode {
            kind: target.kind.clone(),
            name: target.name.clone(),
            source,
        })?;
        copies.push(entries::resource_data(
            &api_version,
            &target.kind,
            &target.name,
            value,
        ));
    }
    Ok(copies)
}

/// The API resource of `api_version`/`kind`, discovered once and cached.
async fn api_resource(
    ctx: &Ctx,
    api_version: &str,
    kind: &str,
    namespace: &str,
) -> Result<ApiResource, Error> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    if let Some(resource) = ctx
        .resources
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&gvk)
    {
        return Ok(resource.clone());
    }
    let (resource, _) = kube::discovery::pinned_kind(&ctx.seed, &gvk)
        .await
        .map_err(|source| Error::Discover {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.to_owned(),
            source,
        })?;
    ctx.resources
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(gvk, resource.clone());
    Ok(resource)
}
