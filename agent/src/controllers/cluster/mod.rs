//! Cluster sync: watches Shoots in the garden (ours by `spec.seedName`, or `status.seedName`
//! during a migration), our Seed, CloudProfiles, NamespacedCloudProfiles, Projects and
//! ControllerRegistrations, and keeps per shoot, in the seed, the cluster-scoped
//! `extensions.gardener.cloud/v1alpha1` `Cluster` named after the technical ID (embedding the
//! CloudProfile, Seed and Shoot) and the control-plane namespace of the same name (labels and
//! annotations of spec §1.6). A shoot without `status.technicalID` gets it written first, so the
//! Cluster never exists before the ID. Hibernated and Failed shoots are synced like any other.
//!
//! The shoot sync puts gardenlet's `gardener` finalizer on each shoot of this seed before it
//! writes anything for it; a deleting shoot runs the delete flow of [`delete`] (Bastions gone,
//! namespace with its extension objects, Cluster, garden ShootState, then the finalizer).
//!
//! A second controller watches the Clusters (plus shoot and control-plane namespace events): a
//! Cluster whose shoot is gone, scheduled elsewhere or deleting without our finalizer loses its
//! namespace first and is deleted once the namespace is gone. Both look at every object again each
//! `controllers.shoot.syncPeriod` (1 h; the runtime's resync, spread over the period).

pub mod delete;
pub mod desired;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use seedlet_api::core::{
    CloudProfile, ControllerRegistration, NamespacedCloudProfile, Project, Seed, Shoot,
};
use seedlet_api::extensions::Cluster;
use seedlet_api::names::labels;

pub use reconcile::Error;

use crate::caches::GardenCaches;
use crate::context::AgentContext;
use crate::garden_scope;
use crate::shoot_flow_switches;

/// Controller name (logs, metrics label) of the shoot → Cluster sync.
pub const NAME: &str = "cluster";
/// Controller name (metrics label) of the Cluster teardown.
pub const CLEANUP_NAME: &str = "cluster-cleanup";
/// Parallel shoot reconciles when `controllers.shoot.concurrentSyncs` is unset.
pub const DEFAULT_CONCURRENT_SYNCS: u16 = 5;

/// Dependencies of both controllers for one garden client.
pub struct ClusterSync {
    /// Field manager of our writes.
    pub field_manager: &'static str,
    /// Parallel reconciles of each of the two controllers (`controllers.shoot.concurrentSyncs`).
    pub concurrency: u16,
    /// Client of the seed cluster.
    pub seed: kube::Client,
    /// Name of our Seed.
    pub seed_name: String,
    /// The garden client of this run.
    pub garden: kube::Client,
    /// Time source (ShootState deletion timestamps).
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// The shoots of the shoot watch (a 403 for a shoot it no longer holds means gone).
    pub shoots: Store<Shoot>,
    /// Our Seed.
    pub seeds: Store<Seed>,
    /// CloudProfiles.
    pub cloud_profiles: Store<CloudProfile>,
    /// NamespacedCloudProfiles.
    pub namespaced_cloud_profiles: Store<NamespacedCloudProfile>,
    /// Projects (shoot namespace → project name).
    pub projects: Store<Project>,
    /// ControllerRegistrations (auto-enabled extensions).
    pub registrations: Store<ControllerRegistration>,
    /// Requeue period.
    pub sync_period: Duration,
    /// The Shoot controller runs the delete flow (`controllers.shoot.enabled`); this sync then
    /// only shows the deletion in the Cluster.
    pub shoot_flow_deletes: bool,
}

/// The Cluster teardown: the Cluster sync's dependencies, reconciling Clusters.
#[derive(Debug)]
pub struct ClusterTeardown(pub Arc<ClusterSync>);

impl std::fmt::Debug for ClusterSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSync")
            .field("seed", &self.seed_name)
            .field("sync_period", &self.sync_period)
            .finish_non_exhaustive()
    }
}

/// Runs both controllers until `ctx.stop` is cancelled, restarting them when the garden client
/// is swapped.
pub async fn run(agent: Arc<AgentContext>) {
    agent
        .run_on_garden(|caches| run_on(agent.clone(), caches))
        .await;
}

async fn run_on(agent: Arc<AgentContext>, caches: Arc<GardenCaches>) {
    let garden = caches.client().clone();
    // The Cluster embeds the Shoot, status included, so it is rewritten once per Shoot write:
    // as often as the Shoot controller's flows report progress (one write per finished task).
    seedlet_runtime::budget::allow_rate(NAME, shoot_flow_switches::FLOW_WRITES_PER_SECOND);
    let shoot_config = agent.config.controllers.shoot.as_ref();
    let sync_period = shoot_flow_switches::sync_period(&agent.config);
    let concurrency = shoot_config
        .and_then(|shoot| shoot.concurrent_syncs)
        .filter(|syncs| *syncs > 0)
        .map_or(DEFAULT_CONCURRENT_SYNCS, |syncs| {
            seedlet_runtime::watch::concurrency(syncs)
        });

    let shoot_informer = caches.shoots().await;
    let shoots = shoot_informer.store();
    let shoot_events = shoot_informer.applied_objects();
    let seed_informer = caches.seed();
    let seeds = seed_informer.store();
    let seed_events = seed_informer.applied_objects();
    let cloud_profile_informer = caches.shared().all::<CloudProfile>();
    let cloud_profiles = cloud_profile_informer.store();
    let cloud_profile_events = cloud_profile_informer.applied_objects();
    // Where the garden lets a seed list only its own objects, projects and namespaced profiles
    // are read by name in the reconcile instead of being cached (and re-read each sync period).
    let (namespaced_cloud_profiles, namespaced_events) =
        if garden_scope::may_list::<NamespacedCloudProfile>(&garden).await {
            let informer = caches.shared().all::<NamespacedCloudProfile>();
            (informer.store(), informer.applied_objects().boxed())
        } else {
            (reflector::store().0, futures::stream::pending().boxed())
        };
    let (projects, project_events) = if garden_scope::may_list::<Project>(&garden).await {
        let informer = caches.shared().all::<Project>();
        (informer.store(), informer.applied_objects().boxed())
    } else {
        (reflector::store().0, futures::stream::pending().boxed())
    };
    let registration_informer = caches.registrations();
    let registrations = registration_informer.store();
    let registration_events = registration_informer.applied_objects();

    let ctx = Arc::new(ClusterSync {
        field_manager: agent.field_manager,
        concurrency,
        seed: agent.seed.clone(),
        seed_name: agent.seed_name.clone(),
        garden: garden.clone(),
        clock: agent.clock.clone(),
        shoots: shoots.clone(),
        seeds,
        cloud_profiles,
        namespaced_cloud_profiles,
        projects,
        registrations,
        sync_period,
        shoot_flow_deletes: shoot_flow_switches::enabled(&agent.config),
    });
    let mapper_inputs = || (shoots.clone(), agent.seed_name.clone());
    let (by_seed, seed_a) = mapper_inputs();
    let (by_profile, seed_b) = mapper_inputs();
    let (by_namespaced, seed_c) = mapper_inputs();
    let (by_project, seed_d) = mapper_inputs();
    let (by_registration, seed_e) = mapper_inputs();
    let shoot_sync = seedlet_runtime::controller::Triggers::for_stream(shoot_events, shoots)
        .watches_stream(seed_events, move |_: Seed| {
            shoots_of_seed(&by_seed.state(), &seed_a)
        })
        .watches_stream(cloud_profile_events, move |profile: CloudProfile| {
            shoots_of_cloud_profile(&by_profile.state(), &seed_b, &profile)
        })
        .watches_stream(namespaced_events, move |profile: NamespacedCloudProfile| {
            shoots_of_namespaced_cloud_profile(&by_namespaced.state(), &seed_c, &profile)
        })
        .watches_stream(project_events, move |project: Project| {
            shoots_of_project(&by_project.state(), &seed_d, &project)
        })
        .watches_stream(registration_events, move |_: ControllerRegistration| {
            shoots_of_seed(&by_registration.state(), &seed_e)
        });
    let metrics = agent.metrics.common();
    let shoot_sync = seedlet_runtime::controller::run(
        shoot_sync,
        ctx.clone(),
        agent.stop.clone(),
        metrics.clone(),
    );

    let shoot_changes = shoot_informer.touched_objects();
    let namespace_changes = watcher::watcher(
        Api::<Namespace>::all(agent.seed.clone()),
        watcher::Config::default().labels(&format!("{}={}", labels::ROLE, labels::ROLE_SHOOT)),
    )
    .backoff(seedlet_runtime::watch::watch_backoff())
    .touched_objects();
    // The teardown reads only the embedded shoot's identity: the shared Cluster informer keeps
    // no embedded CloudProfile, Seed and Shoot (most of the agent's cached bytes otherwise).
    let clusters = agent.caches.clusters();
    let cleanup = seedlet_runtime::controller::Triggers::for_stream(
        clusters.applied_objects(),
        clusters.store(),
    )
    .watches_stream(shoot_changes, |shoot: Shoot| cluster_of_shoot(&shoot))
    .watches_stream(namespace_changes, |namespace: Namespace| {
        namespace
            .metadata
            .name
            .map(|name| ObjectRef::<Cluster>::new(&name))
    });
    let cleanup = seedlet_runtime::controller::run(
        cleanup,
        Arc::new(ClusterTeardown(ctx)),
        agent.stop.clone(),
        metrics,
    );
    tokio::join!(shoot_sync, cleanup);
}

fn refs<'a>(shoots: impl Iterator<Item = &'a Arc<Shoot>>) -> Vec<ObjectRef<Shoot>> {
    shoots
        .map(|shoot| seedlet_runtime::controller::object_ref(shoot.as_ref()))
        .collect()
}

/// Mapper: every shoot of `seed` (our Seed or a ControllerRegistration changed).
pub fn shoots_of_seed(shoots: &[Arc<Shoot>], seed: &str) -> Vec<ObjectRef<Shoot>> {
    refs(
        shoots
            .iter()
            .filter(|shoot| desired::is_scheduled_to(shoot, seed)),
    )
}

/// Mapper: the shoots of `seed` using `profile` directly (`kind: CloudProfile`).
pub fn shoots_of_cloud_profile(
    shoots: &[Arc<Shoot>],
    seed: &str,
    profile: &CloudProfile,
) -> Vec<ObjectRef<Shoot>> {
    let name = profile.metadata.name.as_deref();
    refs(shoots.iter().filter(|shoot| {
        desired::is_scheduled_to(shoot, seed)
            && shoot.cloud_profile().is_some_and(|reference| {
                reference.kind_or_default() == "CloudProfile"
                    && Some(reference.name.as_str()) == name
            })
    }))
}

/// Mapper: the shoots of `seed` in the profile's namespace using it.
pub fn shoots_of_namespaced_cloud_profile(
    shoots: &[Arc<Shoot>],
    seed: &str,
    profile: &NamespacedCloudProfile,
) -> Vec<ObjectRef<Shoot>> {
    let name = profile.metadata.name.as_deref();
    refs(shoots.iter().filter(|shoot| {
        desired::is_scheduled_to(shoot, seed)
            && shoot.metadata.namespace == profile.metadata.namespace
            && shoot.cloud_profile().is_some_and(|reference| {
                reference.kind_or_default() == "NamespacedCloudProfile"
                    && Some(reference.name.as_str()) == name
            })
    }))
}

/// Mapper: the shoots of `seed` in the project's namespace that still need a technical ID.
pub fn shoots_of_project(
    shoots: &[Arc<Shoot>],
    seed: &str,
    project: &Project,
) -> Vec<ObjectRef<Shoot>> {
    refs(shoots.iter().filter(|shoot| {
        desired::is_scheduled_to(shoot, seed)
            && shoot.metadata.namespace == project.spec.namespace
            && crate::cluster_shoot::stored_technical_id(shoot).is_none()
    }))
}

/// Mapper: the Cluster of a shoot, by its stored technical ID.
pub fn cluster_of_shoot(shoot: &Shoot) -> Option<ObjectRef<Cluster>> {
    crate::cluster_shoot::stored_technical_id(shoot).map(ObjectRef::new)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shoot(name: &str, seed: &str, profile: serde_json::Value, id: Option<&str>) -> Arc<Shoot> {
        let mut value = json!({
            "metadata": {"name": name, "namespace": "garden-dev"},
            "spec": {"provider": {"type": "local"}, "region": "r", "seedName": seed,
                     "cloudProfile": profile},
        });
        if let Some(id) = id {
            value["status"] = json!({"technicalID": id});
        }
        Arc::new(serde_json::from_value(value).unwrap())
    }

    fn names(refs: Vec<ObjectRef<Shoot>>) -> Vec<String> {
        refs.into_iter().map(|r| r.name).collect()
    }

    #[test]
    fn mappers_select_only_shoots_of_this_seed_using_the_object() {
        let shoots = vec![
            shoot("a", "local", json!({"name": "p"}), Some("shoot--dev--a")),
            shoot("b", "other", json!({"name": "p"}), None),
            shoot(
                "c",
                "local",
                json!({"name": "q", "kind": "NamespacedCloudProfile"}),
                None,
            ),
        ];
        assert_eq!(names(shoots_of_seed(&shoots, "local")), ["a", "c"]);
        let profile = CloudProfile::new("p", Default::default());
        assert_eq!(
            names(shoots_of_cloud_profile(&shoots, "local", &profile)),
            ["a"]
        );
        let mut namespaced = NamespacedCloudProfile::new("q", Default::default());
        namespaced.metadata.namespace = Some("garden-dev".into());
        assert_eq!(
            names(shoots_of_namespaced_cloud_profile(
                &shoots,
                "local",
                &namespaced
            )),
            ["c"]
        );
        let mut project = Project::new("dev", Default::default());
        project.spec.namespace = Some("garden-dev".into());
        assert_eq!(names(shoots_of_project(&shoots, "local", &project)), ["c"]);
    }

    #[test]
    fn cluster_of_shoot_needs_a_stored_technical_id() {
        let with_id = shoot("a", "local", json!({"name": "p"}), Some("shoot-dev-a"));
        assert_eq!(cluster_of_shoot(&with_id).unwrap().name, "shoot-dev-a");
        let without = shoot("b", "local", json!({"name": "p"}), None);
        assert!(cluster_of_shoot(&without).is_none());
    }
}
