//! Keeps the authorizer's [`Graph`] current from watches of the kinds spec §3.2 lists, and says
//! when every watch has delivered its first complete list (before that the webhook answers 503,
//! never from a partial graph). A kind the garden does not serve (its CRD absent) is skipped with
//! one warning; Gardener would refuse to start instead. The kinds a controller keeps a store of
//! come from the process's shared informers ([`crate::caches`]), ControllerInstallations from
//! the shared store-less watch ([`crate::installations`]), the others from watches of their own.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use futures::StreamExt;
use futures::stream::BoxStream;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use seedlet_api::core::{
    BackupBucket, BackupEntry, ControllerDeployment, CredentialsBinding, Project, SecretBinding,
    Seed, Shoot,
};
use seedlet_api::operations::Bastion;
use seedlet_api::seedmanagement::ManagedSeed;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::caches::GardenCaches;

use super::graph::edges::{self, Bootstrap};
use super::graph::{Graph, Kind, Vertex};
use crate::seed_csr::{Classification, classify, request_facts};

/// One watched kind.
#[derive(Debug, Clone, Copy)]
pub struct Watched {
    /// The graph kind (`None` for helper watches that feed lookups only).
    pub kind: Option<Kind>,
    pub group: &'static str,
    pub version: &'static str,
    pub api_kind: &'static str,
    pub plural: &'static str,
}

const fn watched(
    kind: Option<Kind>,
    group: &'static str,
    version: &'static str,
    api_kind: &'static str,
    plural: &'static str,
) -> Watched {
    Watched {
        kind,
        group,
        version,
        api_kind,
        plural,
    }
}

/// The watches of the authorizer.
pub const WATCHED: &[Watched] = &[
    watched(
        Some(Kind::Seed),
        "core.gardener.cloud",
        "v1beta1",
        "Seed",
        "seeds",
    ),
    watched(None, "", "v1", "Namespace", "namespaces"),
    watched(
        Some(Kind::Shoot),
        "core.gardener.cloud",
        "v1beta1",
        "Shoot",
        "shoots",
    ),
    watched(
        Some(Kind::BackupBucket),
        "core.gardener.cloud",
        "v1beta1",
        "BackupBucket",
        "backupbuckets",
    ),
    watched(
        Some(Kind::BackupEntry),
        "core.gardener.cloud",
        "v1beta1",
        "BackupEntry",
        "backupentries",
    ),
    watched(
        Some(Kind::Bastion),
        "operations.gardener.cloud",
        "v1alpha1",
        "Bastion",
        "bastions",
    ),
    watched(
        Some(Kind::CertificateSigningRequest),
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
    ),
    watched(
        Some(Kind::ControllerDeployment),
        "core.gardener.cloud",
        "v1",
        "ControllerDeployment",
        "controllerdeployments",
    ),
    watched(
        Some(Kind::ControllerInstallation),
        "core.gardener.cloud",
        "v1beta1",
        "ControllerInstallation",
        "controllerinstallations",
    ),
    watched(
        Some(Kind::CredentialsBinding),
        "security.gardener.cloud",
        "v1alpha1",
        "CredentialsBinding",
        "credentialsbindings",
    ),
    watched(
        Some(Kind::SecretBinding),
        "core.gardener.cloud",
        "v1beta1",
        "SecretBinding",
        "secretbindings",
    ),
    watched(
        Some(Kind::Project),
        "core.gardener.cloud",
        "v1beta1",
        "Project",
        "projects",
    ),
    watched(
        Some(Kind::ManagedSeed),
        "seedmanagement.gardener.cloud",
        "v1alpha1",
        "ManagedSeed",
        "managedseeds",
    ),
    watched(
        Some(Kind::Gardenlet),
        "seedmanagement.gardener.cloud",
        "v1alpha1",
        "Gardenlet",
        "gardenlets",
    ),
    watched(
        Some(Kind::ServiceAccount),
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
    ),
];

/// What the handlers need besides the graph: each Seed's client certificate expiry (for
/// managed-seed bootstrap; only that, not the whole object), managed seeds (re-handled when their
/// Seed changes), and each namespace's project.
#[derive(Debug, Default)]
struct Lookups {
    seeds: HashMap<String, Option<jiff::Timestamp>>,
    managed_seeds: HashMap<(String, String), Value>,
    namespace_projects: HashMap<String, String>,
}

/// The graph with its lookups and the sync state of the watches.
#[derive(Debug)]
pub struct GraphState {
    graph: RwLock<Graph>,
    lookups: RwLock<Lookups>,
    unsynced: AtomicUsize,
    clock: Arc<dyn seedlet_runtime::clock::Clock>,
    metrics: super::metrics::WebhookMetrics,
}

impl GraphState {
    /// An empty graph waiting for every watch of [`WATCHED`].
    pub fn new(
        clock: Arc<dyn seedlet_runtime::clock::Clock>,
        metrics: super::metrics::WebhookMetrics,
    ) -> Self {
        Self {
            graph: RwLock::new(Graph::default()),
            lookups: RwLock::new(Lookups::default()),
            unsynced: AtomicUsize::new(WATCHED.len()),
            clock,
            metrics,
        }
    }

    /// Whether every watch has delivered its first complete list.
    pub fn synced(&self) -> bool {
        self.unsynced.load(Ordering::Acquire) == 0
    }

    /// Runs `decide` with the graph read-locked.
    pub fn read<T>(&self, decide: impl FnOnce(&Graph) -> T) -> T {
        let graph = self
            .graph
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        decide(&graph)
    }

    fn write(&self, change: impl FnOnce(&mut Graph)) {
        let mut graph = self
            .graph
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        change(&mut graph);
        self.metrics.graph_size(graph.len());
    }

    /// One watch has delivered its first complete list (or was left out).
    fn watch_synced(&self) {
        if self.unsynced.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.metrics.graph_synced();
        }
    }

    /// Marks every watch as listed, for tests of what the webhook answers once synced.
    #[cfg(test)]
    pub(crate) fn mark_synced(&self) {
        while !self.synced() {
            self.watch_synced();
        }
    }

    fn bootstrap_of(&self, seed: &str) -> Bootstrap {
        let lookups = self
            .lookups
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(expiry) = lookups.seeds.get(seed) else {
            return Bootstrap {
                seed_exists: false,
                certificate_expired: false,
            };
        };
        Bootstrap {
            seed_exists: true,
            certificate_expired: expiry.is_some_and(|at| at < self.clock.now()),
        }
    }

    /// Applies an added or changed object of `watched`.
    fn apply(&self, watched: &Watched, object: &Value) {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let namespace = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(kind) = watched.kind else {
            // Namespaces: only their project label matters (managed-issuer secrets of shoots).
            let project = object
                .pointer("/metadata/labels/project.gardener.cloud~1name")
                .and_then(Value::as_str);
            let mut lookups = self
                .lookups
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match project {
                Some(project) => lookups.namespace_projects.insert(name, project.to_owned()),
                None => lookups.namespace_projects.remove(&name),
            };
            return;
        };
        let update = match kind {
            Kind::Seed => {
                self.lookups
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .seeds
                    .insert(name.clone(), edges::certificate_expiry(object));
                let managed = self
                    .lookups
                    .read()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .managed_seeds
                    .get(&("garden".to_owned(), name.clone()))
                    .cloned();
                if let Some(managed) = managed {
                    let update = edges::managed_seed(&managed, self.bootstrap_of(&name));
                    self.write(|graph| graph.replace(update));
                }
                Some(edges::seed(object))
            }
            Kind::Shoot => {
                let project = self
                    .lookups
                    .read()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .namespace_projects
                    .get(&namespace)
                    .cloned();
                Some(edges::shoot(object, project.as_deref()))
            }
            Kind::BackupBucket => Some(edges::backup_bucket(object)),
            Kind::BackupEntry => Some(edges::backup_entry(object)),
            Kind::Bastion => Some(edges::bastion(object)),
            Kind::CertificateSigningRequest => Some(edges::certificate_signing_request(
                object,
                seed_client_of(object).as_deref(),
            )),
            Kind::ControllerDeployment => Some(edges::controller_deployment(object)),
            Kind::ControllerInstallation => Some(edges::controller_installation(object)),
            Kind::CredentialsBinding => Some(edges::credentials_binding(object)),
            Kind::SecretBinding => Some(edges::secret_binding(object)),
            Kind::Project => Some(edges::project(object)),
            Kind::ManagedSeed => {
                self.lookups
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .managed_seeds
                    .insert((namespace, name.clone()), object.clone());
                Some(edges::managed_seed(object, self.bootstrap_of(&name)))
            }
            Kind::Gardenlet => edges::gardenlet(object, self.bootstrap_of(&name)),
            Kind::ServiceAccount => edges::service_account(object),
            _ => None,
        };
        if let Some(update) = update {
            self.write(|graph| graph.replace(update));
        }
    }

    /// Removes a deleted object of `watched`.
    fn delete(&self, watched: &Watched, namespace: &str, name: &str) {
        {
            let mut lookups = self
                .lookups
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match watched.kind {
                None => {
                    lookups.namespace_projects.remove(name);
                    return;
                }
                Some(Kind::Seed) => {
                    lookups.seeds.remove(name);
                }
                Some(Kind::ManagedSeed) => {
                    lookups
                        .managed_seeds
                        .remove(&(namespace.to_owned(), name.to_owned()));
                }
                _ => {}
            }
        }
        let Some(kind) = watched.kind else { return };
        if kind == Kind::ServiceAccount
            && !name.starts_with("gardenlet-bootstrap-")
            && !name.starts_with("extension-shoot--")
        {
            return;
        }
        let namespace = if is_cluster_scoped(kind) {
            ""
        } else {
            namespace
        };
        self.write(|graph| graph.delete_vertex(&Vertex::new(kind, namespace, name)));
    }
}

fn is_cluster_scoped(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Seed
            | Kind::BackupBucket
            | Kind::CertificateSigningRequest
            | Kind::ControllerDeployment
            | Kind::ControllerInstallation
            | Kind::Project
    )
}

/// The seed a CSR asks a client certificate for, when it is a valid seed-client request.
fn seed_client_of(object: &Value) -> Option<String> {
    let request = object.pointer("/spec/request").and_then(Value::as_str)?;
    let pem = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, request).ok()?;
    let facts = request_facts(&pem).ok()?;
    let usages: Vec<String> = object
        .pointer("/spec/usages")
        .and_then(Value::as_array)
        .map(|u| {
            u.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    match classify(&facts, &usages, "") {
        Classification::SeedClient => facts
            .common_name
            .strip_prefix(super::identity::SEED_USER_PREFIX)
            .map(str::to_owned),
        _ => None,
    }
}

/// Runs every watch until `stop`; the state turns synced once all delivered their first list.
pub async fn run(caches: Arc<GardenCaches>, state: Arc<GraphState>, stop: CancellationToken) {
    let watches = WATCHED
        .iter()
        .map(|watched| watch(caches.clone(), *watched, state.clone()));
    tokio::select! {
        _ = futures::future::join_all(watches) => {}
        () = stop.cancelled() => {}
    }
}

/// Watch events with each object as JSON, the form the graph's edge functions read.
type ValueEvents = BoxStream<'static, Result<Event<Value>, watcher::Error>>;

/// The events of `watched`: a subscription to the process's shared informer where a controller
/// keeps a store of the kind too (one watch for both), a watch of its own otherwise.
fn events_of(caches: &GardenCaches, watched: &Watched, api: Api<DynamicObject>) -> ValueEvents {
    match watched.plural {
        "seeds" => as_values(caches.all::<Seed>().events()),
        "shoots" => as_values(caches.all::<Shoot>().events()),
        "backupbuckets" => as_values(caches.all::<BackupBucket>().events()),
        "backupentries" => as_values(caches.all::<BackupEntry>().events()),
        "bastions" => as_values(caches.all::<Bastion>().events()),
        "certificatesigningrequests" => {
            as_values(caches.all::<CertificateSigningRequest>().events())
        }
        "controllerdeployments" => as_values(caches.all::<ControllerDeployment>().events()),
        "credentialsbindings" => as_values(caches.all::<CredentialsBinding>().events()),
        "secretbindings" => as_values(caches.all::<SecretBinding>().events()),
        "projects" => as_values(caches.all::<Project>().events()),
        "managedseeds" => as_values(caches.all::<ManagedSeed>().events()),
        // Tens of thousands, stored by nobody: the shared store-less watch.
        "controllerinstallations" => shared_as_values(caches.installations().events()),
        _ => as_values(
            watcher::watcher(api, watcher::Config::default())
                .backoff(seedlet_runtime::watch::watch_backoff()),
        ),
    }
}

fn as_values<K, S>(events: S) -> ValueEvents
where
    K: serde::Serialize + 'static,
    S: futures::Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
{
    events_as_values(events, |object: K| {
        serde_json::to_value(object).unwrap_or(Value::Null)
    })
}

/// [`as_values`] for events whose objects are shared with other subscribers (serialized in place).
fn shared_as_values<K, S>(events: S) -> ValueEvents
where
    K: serde::Serialize + 'static,
    S: futures::Stream<Item = Result<Event<Arc<K>>, watcher::Error>> + Send + 'static,
{
    events_as_values(events, |object: Arc<K>| {
        serde_json::to_value(&*object).unwrap_or(Value::Null)
    })
}

/// Every object of `events` turned into JSON by `json`, the events kept as they are.
fn events_as_values<O: 'static, S>(events: S, json: fn(O) -> Value) -> ValueEvents
where
    S: futures::Stream<Item = Result<Event<O>, watcher::Error>> + Send + 'static,
{
    events
        .map(move |event| {
            event.map(|event| match event {
                Event::Init => Event::Init,
                Event::InitApply(object) => Event::InitApply(json(object)),
                Event::Apply(object) => Event::Apply(json(object)),
                Event::Delete(object) => Event::Delete(json(object)),
                Event::InitDone => Event::InitDone,
            })
        })
        .boxed()
}

/// `(namespace, name)` of an object as JSON.
fn key_of(object: &Value) -> (String, String) {
    let text = |pointer| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (text("/metadata/namespace"), text("/metadata/name"))
}

async fn watch(caches: Arc<GardenCaches>, watched: Watched, state: Arc<GraphState>) {
    let gvk = GroupVersionKind::gvk(watched.group, watched.version, watched.api_kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, watched.plural);
    let api: Api<DynamicObject> = Api::all_with(caches.client().clone(), &resource);
    // A resource the server does not serve answers a plain 404 (no Status body).
    if let Err(kube::Error::Api(status)) = api.list_metadata(&ListParams::default().limit(1)).await
        && status.code == 404
    {
        tracing::warn!(
            kind = watched.api_kind,
            group = watched.group,
            "the garden does not serve this kind; the seed authorizer leaves it out of its graph"
        );
        state.watch_synced();
        return;
    }
    let mut first_list = true;
    // Objects seen in the current (re-)list: the ones not seen again were deleted meanwhile.
    let mut known: HashSet<(String, String)> = HashSet::new();
    let mut listing: HashSet<(String, String)> = HashSet::new();
    let mut events = events_of(&caches, &watched, api);
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                tracing::debug!(kind = watched.api_kind, error = %seedlet_runtime::error_chain(&error), "seed authorizer watch failed; retrying");
                continue;
            }
        };
        match event {
            Event::Init => listing.clear(),
            Event::InitApply(object) | Event::Apply(object) => {
                if object.is_null() {
                    continue;
                }
                let key = key_of(&object);
                state.apply(&watched, &object);
                listing.insert(key.clone());
                known.insert(key);
            }
            Event::Delete(object) => {
                let key = key_of(&object);
                state.delete(&watched, &key.0, &key.1);
                known.remove(&key);
            }
            Event::InitDone => {
                for (namespace, name) in known.difference(&listing) {
                    state.delete(&watched, namespace, name);
                }
                known = std::mem::take(&mut listing);
                if std::mem::take(&mut first_list) {
                    state.watch_synced();
                }
            }
        }
    }
}
