//! The main project controller (`project`, spec §3.1–§3.3): the project namespace (created or
//! adopted), its ResourceQuota, the project RBAC, the phase, and the release of the namespace
//! when the Project is deleted (only once no Shoot is left in it).
//!
//! Triggered by generation and deletion changes of Projects, by deleted project namespaces, by
//! changed or deleted RoleBindings the Project owns, and by deleted Shoots (→ the Project of their namespace, which may be waiting for its last
//! shoot). Pure decisions: [`namespace`], [`rbac`], [`quota`].

pub mod namespace;
pub mod quota;
pub mod rbac;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use seedlet_api::core::{Project, Shoot};
use seedlet_config::garden_projects::ProjectQuota;
use seedlet_runtime::controller::Triggers;
use seedlet_runtime::events::Recorder;
use seedlet_runtime::triggers::{changes, key_of};
use seedlet_runtime::watch::concurrency;

pub use reconcile::Error;

use crate::caches::GardenCaches;
use crate::context::GardenContext;
use crate::controllers::entry::GardenReconciler;

/// Controller name.
pub const NAME: &str = "project";

/// The project controller: what its reconciles need (its `Reconciler` impl is in `reconcile.rs`).
pub struct Projects {
    /// Garden client.
    pub client: kube::Client,
    /// Events as `project-controller`.
    pub events: Recorder,
    /// `controllers.project.quotas`.
    pub quotas: Vec<ProjectQuota>,
    /// Parallel reconciles (`concurrentSyncs`).
    pub concurrency: u16,
}

impl std::fmt::Debug for Projects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Projects").finish_non_exhaustive()
    }
}

impl GardenReconciler for Projects {
    fn from_garden(garden: &GardenContext) -> Option<Self> {
        let config = &garden.config.controllers.project;
        Some(Self {
            client: garden.client.clone(),
            events: garden.events.named(format!("{NAME}-controller")),
            quotas: config.quotas.clone(),
            concurrency: concurrency(i64::from(config.concurrent_syncs)),
        })
    }

    fn triggers(&self, caches: &GardenCaches) -> Triggers<Project> {
        let project_informer = caches.all::<Project>();
        let reader = project_informer.store();
        // Only first sightings and deletions pass (constant key).
        let namespaces = changes(
            Api::<Namespace>::all(self.client.clone()),
            watcher::Config::default().labels(namespace::PROJECT_NAME_LABEL),
            |_| String::new(),
        );
        let shoots = crate::caches::changes(&caches.all::<Shoot>(), |_| String::new());
        // Owned RoleBindings: deletions and changes of roleRef or subjects (drift is repaired).
        let bindings = changes(
            Api::<RoleBinding>::all(self.client.clone()),
            watcher::Config::default(),
            |binding: &RoleBinding| key_of(&(&binding.role_ref, &binding.subjects)),
        );
        let store = reader.clone();
        crate::caches::controller_on_changes(&project_informer, trigger_key)
            .watches_stream(bindings, |binding: RoleBinding| owning_project(&binding))
            .watches_stream(namespaces, |namespace: Namespace| {
                let name = namespace.labels().get(namespace::PROJECT_NAME_LABEL)?;
                Some(ObjectRef::<Project>::new(name))
            })
            .watches_stream(shoots, move |shoot: Shoot| {
                let shoot_namespace = shoot.namespace();
                store
                    .state()
                    .into_iter()
                    .filter(|p| {
                        p.metadata.deletion_timestamp.is_some()
                            && p.spec.namespace == shoot_namespace
                    })
                    .map(|p| ObjectRef::from_obj(p.as_ref()))
                    .collect::<Vec<_>>()
            })
    }
}

/// The change key of a Project for this controller: generation, deletion and finalizers.
pub fn trigger_key(project: &Project) -> String {
    key_of(&(
        project.metadata.generation,
        project.metadata.deletion_timestamp.is_some(),
        project.finalizers(),
    ))
}

/// The Project controlling `object` (its controller owner reference), if any.
pub fn owning_project<K: kube::Resource>(object: &K) -> Option<ObjectRef<Project>> {
    object
        .owner_references()
        .iter()
        .find(|r| {
            r.controller == Some(true)
                && r.kind == "Project"
                && r.api_version.starts_with("core.gardener.cloud/")
        })
        .map(|r| ObjectRef::new(&r.name))
}
