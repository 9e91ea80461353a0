//! ControllerInstallation main controller (spec §2.1, §2.2, §2.7): watches the garden's
//! ControllerInstallations of this seed (plus their ControllerRegistrations and
//! ControllerDeployments, and the Seed's spec, metadata and cluster identity), renders the chart and writes the extension namespace, the manifest
//! Secret and the ManagedResource `garden/<installation>` in the seed; `Valid`/`Installed` in the
//! garden. No periodic requeue: spec changes of the installation, registration or deployment
//! trigger. Restarts on a garden client swap. Charts see the seed: `.Capabilities` from its discovery
//! ([`capabilities`]) and `lookup` reading its objects ([`lookup`]).

pub mod capabilities;
pub mod chart;
pub mod conditions;
pub mod delete;
pub mod desired;
pub mod fetch;
pub mod lookup;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod values;
pub mod write;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::{Stream, TryStreamExt};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::PostParams;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{PredicateConfig, WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_chartrender::Renderer;
use tokio::sync::OnceCell;

use seedlet_api::core::{
    ControllerDeployment, ControllerInstallation, ControllerRegistration, Seed,
};
use seedlet_api::names::namespaces;
use seedlet_api::resources::ManagedResource;

use crate::caches::GardenCaches;
use crate::context::AgentContext;
use seedlet_runtime::metrics::Metrics;

/// Controller name (metrics label, logs).
pub const NAME: &str = "controllerinstallation";

/// Errors of one main reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Writing `Valid`/`Installed` failed.
    #[error("writing conditions of controller installation {name}")]
    WriteConditions {
        /// Installation name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Adding or removing the finalizer failed.
    #[error("updating finalizer of controller installation {name}")]
    Finalizer {
        /// Installation name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The referenced ControllerRegistration does not exist.
    #[error("controller registration {name} not found")]
    RegistrationNotFound {
        /// Registration name.
        name: String,
    },
    /// Reading the ControllerRegistration failed.
    #[error("reading controller registration {name}")]
    ReadRegistration {
        /// Registration name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The Seed does not exist.
    #[error("seed {name} not found")]
    SeedNotFound {
        /// Seed name.
        name: String,
    },
    /// Reading the Seed failed.
    #[error("reading seed {name}")]
    ReadSeed {
        /// Seed name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The referenced ControllerDeployment does not exist.
    #[error("controller deployment {name} not found")]
    DeploymentNotFound {
        /// Deployment name.
        name: String,
    },
    /// Reading the ControllerDeployment failed.
    #[error("reading controller deployment {name}")]
    ReadDeployment {
        /// Deployment name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Listing `operator.gardener.cloud` Gardens in the seed failed.
    #[error("checking whether the seed hosts the garden")]
    ReadGardens {
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the extension namespace failed.
    #[error("applying namespace {name}")]
    Namespace {
        /// Namespace name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The Seed has no `status.clusterIdentity` yet.
    #[error("cluster-identity of seed {seed:?} not set")]
    ClusterIdentityMissing {
        /// Seed name.
        seed: String,
    },
    /// Reading the seed's `/version` or API discovery for `.Capabilities` failed.
    #[error("reading the seed's version and API discovery")]
    Discovery(#[source] kube::Error),
    /// A chart's `lookup` could not read the seed (the render's message).
    #[error("{message}")]
    Lookup {
        /// The render error naming the template and the failed read.
        message: String,
    },
    /// Encoding the Seed for the injected values failed.
    #[error("encoding seed for controller installation {name}")]
    Encode {
        /// Installation name.
        name: String,
        /// Cause.
        #[source]
        source: serde_json::Error,
    },
    /// The rendered workloads could not be mutated.
    #[error("mutating rendered objects of controller installation {name}")]
    Mutate {
        /// Installation name.
        name: String,
        /// Cause.
        #[source]
        source: crate::managed_manifests::DataError,
    },
    /// Ensuring the seed's `garden` namespace failed.
    #[error("creating namespace garden in the seed")]
    GardenNamespace(#[source] kube::Error),
    /// Writing (or cleaning up) a manifest Secret failed.
    #[error("writing manifest secret garden/{name}")]
    WriteSecret {
        /// Secret name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the ManagedResource failed.
    #[error("writing managed resource garden/{name}")]
    WriteManagedResource {
        /// ManagedResource name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Deleting the ManagedResource or its Secrets failed.
    #[error("deleting managed resource garden/{name}")]
    DeleteManagedResource {
        /// ManagedResource name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Deleting the extension namespace failed.
    #[error("deleting namespace {name}")]
    DeleteNamespace {
        /// Namespace name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Deleting the garden ServiceAccount failed.
    #[error("deleting garden service account {name}")]
    DeleteServiceAccount {
        /// ServiceAccount name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl seedlet_runtime::controller::Reason for Error {
    fn reason(&self) -> &'static str {
        Error::reason(self)
    }
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::WriteConditions { .. } => "ConditionsWriteError",
            Error::Finalizer { .. } => "FinalizerError",
            Error::RegistrationNotFound { .. } => "RegistrationNotFound",
            Error::ReadRegistration { .. } => "RegistrationReadError",
            Error::SeedNotFound { .. } => "SeedNotFound",
            Error::ReadSeed { .. } => "SeedReadError",
            Error::DeploymentNotFound { .. } => "DeploymentNotFound",
            Error::ReadDeployment { .. } => "DeploymentReadError",
            Error::ReadGardens { .. } => "GardenReadError",
            Error::Namespace { .. } => "NamespaceError",
            Error::ClusterIdentityMissing { .. } => "ClusterIdentityMissing",
            Error::Discovery(_) => "DiscoveryError",
            Error::Lookup { .. } => "LookupError",
            Error::Encode { .. } => "EncodeError",
            Error::Mutate { .. } => "MutateError",
            Error::GardenNamespace(_) => "GardenNamespaceError",
            Error::WriteSecret { .. } => "SecretWriteError",
            Error::WriteManagedResource { .. } => "ManagedResourceWriteError",
            Error::DeleteManagedResource { .. } => "ManagedResourceDeleteError",
            Error::DeleteNamespace { .. } => "NamespaceDeleteError",
            Error::DeleteServiceAccount { .. } => "ServiceAccountDeleteError",
        }
    }
}

/// Dependencies of the main controller for one leadership term.
pub struct Installer {
    /// Time source for timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// The component configuration.
    pub config: Arc<seedlet_config::GardenletConfiguration>,
    /// Events in the garden.
    pub events: seedlet_runtime::events::Recorder,
    /// Hot-swappable garden client.
    pub garden: seedlet_bootstrap::GardenClient,
    /// Parallel reconciles (its `concurrentSyncs`).
    pub concurrency: u16,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Name of our Seed.
    pub seed_name: String,
    /// Cancelled when the leadership term ends.
    pub stop: tokio_util::sync::CancellationToken,
    /// Chart renderer holding the per-chart translation cache (shared with the blocking render threads).
    pub renderer: Arc<Renderer>,
    /// The seed's version and discovery for `.Capabilities` and `lookup`, cached.
    pub discovery: Arc<capabilities::SeedDiscovery>,
    /// OCI chart pullers (HTTP clients and archive caches) by CA bundle.
    pub pullers: chart::Pullers,
    /// The shared garden stores of the current garden client, read before the API server.
    pub cached: Mutex<Option<CachedInputs>>,
    garden_identity: OnceCell<String>,
    garden_namespace_ready: AtomicBool,
}

/// The garden stores an install reads first: our Seed and the ControllerRegistrations, kept by
/// the agent's shared informers, which also trigger the installations on their changes — a store
/// is updated before its subscribers hear of the change, so a reconcile never reads an older
/// object than the one that triggered it. A miss (a store not listed yet, or an object newer than
/// its informer has seen) is read from the API server, so no condition is written from a gap.
#[derive(Clone)]
pub struct CachedInputs {
    /// Our Seed.
    pub seed: Store<Seed>,
    /// All ControllerRegistrations.
    pub registrations: Store<ControllerRegistration>,
}

impl std::fmt::Debug for Installer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Installer")
            .field("seed", &self.seed_name)
            .finish_non_exhaustive()
    }
}

impl Installer {
    /// A new installer for `agent`.
    pub fn new(agent: Arc<AgentContext>) -> Self {
        Self {
            discovery: Arc::new(capabilities::SeedDiscovery::new(agent.seed.clone())),
            clock: agent.clock.clone(),
            config: agent.config.clone(),
            events: agent.events.clone(),
            garden: agent.garden.clone(),
            concurrency: seedlet_runtime::watch::concurrency(i64::from(
                agent
                    .config
                    .controllers
                    .controller_installation
                    .concurrent_syncs,
            )),
            seed: agent.seed.clone(),
            seed_name: agent.seed_name.clone(),
            stop: agent.stop.clone(),
            renderer: Arc::new(Renderer::new()),
            pullers: chart::Pullers::default(),
            cached: Mutex::new(None),
            garden_identity: OnceCell::new(),
            garden_namespace_ready: AtomicBool::new(false),
        }
    }

    /// The current garden client.
    pub fn garden(&self) -> kube::Client {
        self.garden.client()
    }

    /// Our Seed from the shared store, `None` when the store does not have it (yet).
    pub fn cached_seed(&self) -> Option<Seed> {
        let cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        let seed = cached
            .as_ref()?
            .seed
            .get(&ObjectRef::new(&self.seed_name))?;
        Some(seed.as_ref().clone())
    }

    /// A ControllerRegistration from the shared store, `None` when the store does not have it.
    pub fn cached_registration(&self, name: &str) -> Option<ControllerRegistration> {
        let cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        let registration = cached.as_ref()?.registrations.get(&ObjectRef::new(name))?;
        Some(registration.as_ref().clone())
    }

    /// The garden cluster identity, read once; empty while unreadable.
    pub async fn garden_identity(&self) -> String {
        if let Some(identity) = self.garden_identity.get() {
            return identity.clone();
        }
        match fetch::garden_identity(self.garden()).await {
            Some(identity) => self
                .garden_identity
                .get_or_init(|| async { identity })
                .await
                .clone(),
            None => String::new(),
        }
    }

    /// Creates the seed's `garden` namespace once per term if it is missing.
    ///
    /// # Errors
    /// [`Error::GardenNamespace`].
    pub async fn ensure_garden_namespace(&self) -> Result<(), Error> {
        if self.garden_namespace_ready.load(Ordering::Relaxed) {
            return Ok(());
        }
        let api: Api<Namespace> = Api::all(self.seed.clone());
        let mut namespace = Namespace::default();
        namespace.metadata.name = Some(namespaces::GARDEN.to_owned());
        match api.create(&PostParams::default(), &namespace).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.is_already_exists() => {}
            Err(source) => return Err(Error::GardenNamespace(source)),
        }
        self.garden_namespace_ready.store(true, Ordering::Relaxed);
        Ok(())
    }
}

impl From<crate::managed_manifests::apply::Error> for Error {
    fn from(error: crate::managed_manifests::apply::Error) -> Self {
        use crate::managed_manifests::apply::Error as Apply;
        match error {
            Apply::WriteSecret { name, source } => Self::WriteSecret { name, source },
            Apply::WriteManagedResource { name, source } => {
                Self::WriteManagedResource { name, source }
            }
        }
    }
}

/// Runs the main controller until `ctx.stop` is cancelled, restarting it on garden client swaps.
pub async fn run(ctx: Arc<AgentContext>) {
    let installer = Arc::new(Installer::new(ctx.clone()));
    let metrics = ctx.metrics.common();
    ctx.run_on_garden(|caches| run_with(caches, installer.clone(), metrics.clone()))
        .await;
}

async fn run_with(caches: Arc<GardenCaches>, installer: Arc<Installer>, metrics: Arc<Metrics>) {
    let garden = caches.client().clone();
    let ctx = installer.clone();
    let seed_name = ctx.seed_name.clone();
    // Selected by `spec.seedRef.name` where the garden can (and the seed authorizer demands it);
    // filtered here too for gardens that cannot.
    let informer = caches.installations().await;
    let reader = informer.store();
    let installations = informer
        .applied_objects()
        .try_filter(move |ci| futures::future::ready(ci.seed_name() == Some(seed_name.as_str())))
        .predicate_filter(relevant_change, PredicateConfig::default());
    // The Seed feeds the injected values and gates installation on `status.clusterIdentity`;
    // heartbeat writes (conditions) are filtered out by the predicate.
    let seed_informer = caches.seed();
    let registration_informer = caches.registrations();
    *installer
        .cached
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(CachedInputs {
        seed: seed_informer.store(),
        registrations: registration_informer.store(),
    });
    let seeds = seed_informer
        .applied_objects()
        .predicate_filter(seed_change, PredicateConfig::default());
    let by_seed = reader.clone();
    let by_deployment = reader.clone();
    let by_registration = reader.clone();
    // Uninstalling waits for the ManagedResource and the extension namespace to disappear; their
    // deletions in the seed re-trigger the installation instead of the pending-requeue timer.
    let seed_client = ctx.seed.clone();
    let managed_resources_gone = deletions(watcher(
        Api::<PartialObjectMeta<ManagedResource>>::namespaced(
            seed_client.clone(),
            namespaces::GARDEN,
        ),
        watcher::Config::default(),
    ));
    let namespaces_gone = deletions(watcher(
        Api::<PartialObjectMeta<Namespace>>::all(seed_client),
        watcher::Config::default(),
    ));
    let controller = seedlet_runtime::controller::Triggers::for_stream(installations, reader)
        .watches_stream(deployment_changes(&garden).await, move |deployment| {
            installations_using_deployment(&by_deployment, &deployment.name_any())
        })
        .watches_stream(seeds, move |_seed| {
            by_seed
                .state()
                .iter()
                .map(|ci| seedlet_runtime::controller::object_ref(ci.as_ref()))
                .collect::<Vec<_>>()
        })
        .watches_stream(
            registration_informer.touched_objects(),
            move |registration| {
                installations_using_registration(&by_registration, &registration.name_any())
            },
        )
        .watches_stream(managed_resources_gone, |mr| {
            installation_of_managed_resource(&mr.name_any())
        })
        .watches_stream(namespaces_gone, |namespace| {
            installation_of_namespace(&namespace.name_any())
        });
    seedlet_runtime::controller::run(controller, installer, ctx.stop.clone(), metrics).await;
}

/// Only the deletions of a metadata watch (applies and the initial list are dropped).
fn deletions<K>(
    events: impl Stream<Item = Result<watcher::Event<PartialObjectMeta<K>>, watcher::Error>>
    + Send
    + 'static,
) -> impl Stream<Item = Result<PartialObjectMeta<K>, watcher::Error>> + Send + 'static
where
    K: Send + 'static,
{
    events
        .backoff(seedlet_runtime::watch::watch_backoff())
        .try_filter_map(|event| {
            futures::future::ready(Ok(match event {
                watcher::Event::Delete(object) => Some(object),
                _ => None,
            }))
        })
}

/// The installation of a ManagedResource in the seed's `garden` namespace (same name).
pub fn installation_of_managed_resource(name: &str) -> Option<ObjectRef<ControllerInstallation>> {
    Some(ObjectRef::new(name))
}

/// The installation of an extension namespace `extension-<installation>`; other namespaces map
/// to none.
pub fn installation_of_namespace(name: &str) -> Option<ObjectRef<ControllerInstallation>> {
    name.strip_prefix(namespaces::EXTENSION_NAMESPACE_PREFIX)
        .filter(|installation| !installation.is_empty())
        .map(ObjectRef::new)
}

/// Predicate of installation events that need a reconcile: spec, deletion, annotations (the
/// `gardener.cloud/operation` ones). Status writes (ours, care's, required's) are dropped, and so
/// are finalizer changes: the one that matters is ours, added by the reconcile that is already
/// installing, and letting it through made every new installation render and apply twice in a
/// row (the second pass queued behind the first, competing with other installations' first).
pub fn relevant_change(ci: &ControllerInstallation) -> Option<u64> {
    let mut hasher = DefaultHasher::new();
    serde_json::to_string(&ci.spec)
        .unwrap_or_default()
        .hash(&mut hasher);
    ci.metadata.deletion_timestamp.is_some().hash(&mut hasher);
    ci.annotations().hash(&mut hasher);
    Some(hasher.finish())
}

/// Predicate of Seed events that change the installation input: spec, labels, annotations and
/// `status.clusterIdentity` (heartbeat condition writes are dropped).
pub fn seed_change(seed: &Seed) -> Option<u64> {
    let mut hasher = DefaultHasher::new();
    serde_json::to_string(&seed.spec)
        .unwrap_or_default()
        .hash(&mut hasher);
    seed.labels().hash(&mut hasher);
    seed.annotations().hash(&mut hasher);
    seed.status
        .as_ref()
        .and_then(|s| s.cluster_identity.as_ref())
        .hash(&mut hasher);
    Some(hasher.finish())
}

/// Installations of this seed whose `deploymentRef` names `deployment`.
pub fn installations_using_deployment(
    store: &Store<ControllerInstallation>,
    deployment: &str,
) -> Vec<ObjectRef<ControllerInstallation>> {
    store
        .state()
        .iter()
        .filter(|ci| {
            ci.spec
                .deployment_ref
                .as_ref()
                .is_some_and(|r| r.name == deployment)
        })
        .map(|ci| seedlet_runtime::controller::object_ref(ci.as_ref()))
        .collect()
}

/// Installations of this seed whose `registrationRef` names `registration`.
pub fn installations_using_registration(
    store: &Store<ControllerInstallation>,
    registration: &str,
) -> Vec<ObjectRef<ControllerInstallation>> {
    store
        .state()
        .iter()
        .filter(|ci| ci.spec.registration_ref.name == registration)
        .map(|ci| seedlet_runtime::controller::object_ref(ci.as_ref()))
        .collect()
}

/// Changes of ControllerDeployments, where the garden lets this seed list them all; a garden with
/// the seed authorizer does not (deployments are then read by name at each reconcile, and a
/// changed deployment is picked up at the next sync of its installations).
async fn deployment_changes(
    garden: &kube::Client,
) -> futures::stream::BoxStream<'static, Result<ControllerDeployment, watcher::Error>> {
    use futures::StreamExt as _;
    if crate::garden_scope::may_list::<ControllerDeployment>(garden).await {
        watcher(
            Api::<ControllerDeployment>::all(garden.clone()),
            watcher::Config::default(),
        )
        .backoff(seedlet_runtime::watch::watch_backoff())
        .touched_objects()
        .boxed()
    } else {
        futures::stream::pending().boxed()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use seedlet_api::common::ObjectReference;
    use seedlet_api::core::ControllerInstallationSpec;

    use super::*;

    fn installation(
        name: &str,
        registration: &str,
        deployment: Option<&str>,
    ) -> ControllerInstallation {
        ControllerInstallation::new(
            name,
            ControllerInstallationSpec {
                registration_ref: ObjectReference {
                    name: registration.into(),
                    ..Default::default()
                },
                deployment_ref: deployment.map(|d| ObjectReference {
                    name: d.into(),
                    ..Default::default()
                }),
                ..Default::default()
            },
        )
    }

    #[test]
    fn deployment_and_registration_changes_map_to_their_installations() {
        let (reader, mut writer) = kube::runtime::reflector::store::<ControllerInstallation>();
        for ci in [
            installation("a", "r1", Some("d1")),
            installation("b", "r2", Some("d2")),
            installation("c", "r1", None),
        ] {
            writer.apply_watcher_event(&watcher::Event::Apply(ci));
        }
        let names = |refs: Vec<ObjectRef<ControllerInstallation>>| {
            let mut names: Vec<_> = refs.into_iter().map(|r| r.name).collect();
            names.sort();
            names
        };
        assert_eq!(names(installations_using_deployment(&reader, "d1")), ["a"]);
        assert_eq!(
            names(installations_using_registration(&reader, "r1")),
            ["a", "c"]
        );
        assert!(installations_using_deployment(&reader, "nope").is_empty());
    }

    #[test]
    fn extension_namespaces_map_to_their_installation_and_others_to_none() {
        let name = |r: Option<ObjectRef<ControllerInstallation>>| r.map(|r| r.name);
        assert_eq!(
            name(installation_of_namespace("extension-ext-a-x1")).as_deref(),
            Some("ext-a-x1")
        );
        assert_eq!(name(installation_of_namespace("extension-")), None);
        assert_eq!(name(installation_of_namespace("garden")), None);
        assert_eq!(
            name(installation_of_managed_resource("ext-a-x1")).as_deref(),
            Some("ext-a-x1")
        );
    }

    #[test]
    fn seed_heartbeats_do_not_trigger_but_cluster_identity_does() {
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        let seed = Seed::new("local", Default::default());
        let mut beat = seed.clone();
        beat.status = Some(seedlet_api::core::SeedStatus {
            conditions: vec![seedlet_api::Condition::initialized("GardenletReady", now)],
            ..Default::default()
        });
        assert_eq!(seed_change(&seed), seed_change(&beat));
        let mut identified = beat.clone();
        identified.status.as_mut().unwrap().cluster_identity = Some("id".into());
        assert_ne!(seed_change(&beat), seed_change(&identified));
    }

    #[test]
    fn status_and_finalizer_changes_do_not_trigger_but_spec_changes_do() {
        let a = installation("a", "r1", Some("d1"));
        let mut b = a.clone();
        b.status = Some(Default::default());
        assert_eq!(relevant_change(&a), relevant_change(&b));
        b.metadata.finalizers = Some(vec![
            seedlet_api::names::finalizers::CONTROLLER_INSTALLATION.to_owned(),
        ]);
        assert_eq!(relevant_change(&a), relevant_change(&b));
        let mut deleted = b.clone();
        deleted.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        assert_ne!(relevant_change(&b), relevant_change(&deleted));
        b.spec.deployment_ref = Some(ObjectReference {
            name: "d1".into(),
            resource_version: Some("2".into()),
            ..Default::default()
        });
        assert_ne!(relevant_change(&a), relevant_change(&b));
    }
}
