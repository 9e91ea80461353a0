//! Reading the state of a control-plane namespace from the seed (a full snapshot, copies of the
//! objects `status.resources` references) and the errors of reading and writing a garden
//! ShootState: the ShootState sync writes with them, the Shoot controller's migrate flow
//! persists with them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::Secret;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Resource};
use seedlet_api::common::NamedResourceReference;
use seedlet_api::core::{ResourceData, ShootStateSpec};
use seedlet_api::extensions::{
    BackupEntry, ContainerRuntime, ControlPlane, DNSRecord, Extension, ExtensionObject,
    Infrastructure, Network, OperatingSystemConfig, Worker,
};
use seedlet_runtime::clock::Clock;

use super::entries::{self, ExtensionItem, SecretItem};
use crate::metrics::AgentMetrics;

/// Errors of reading and writing a ShootState.
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

/// Dependencies of the reads and writes.
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

/// The full spec from fresh lists of the seed (of `previous`, only what a snapshot keeps).
///
/// # Errors
/// [`Error`] of the lists and of copying the referenced objects.
pub async fn snapshot(
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
///
/// # Errors
/// [`Error`] of the discovery and the reads; a missing object is [`Error::MissingResource`].
pub async fn copies(
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
