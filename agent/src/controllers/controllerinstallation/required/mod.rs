//! ControllerInstallation required controller (spec §2.9): watches the twelve extension kinds in
//! the seed (objects of class `shoot` or `seed`, unset = `shoot`) and keeps the `Required`
//! condition of every installation of this seed in the garden. A kind becomes "known" once its
//! initial list finished (or its CRD is missing: none); a change of a kind's type set enqueues
//! all installations. No periodic requeue; restarts on a garden client swap.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
mod type_counts;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use futures::channel::mpsc::UnboundedSender;
use futures::{StreamExt, TryStreamExt};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::{PredicateConfig, WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use seedlet_api::core::ControllerInstallation;
use seedlet_api::extensions::{CLASS_GARDEN, ExtensionKind};
use seedlet_api::names::groups;

use crate::caches::GardenCaches;
use crate::context::AgentContext;
use seedlet_runtime::metrics::Metrics;

pub use reconcile::Error;
use seedlet_runtime::triggers::id_of;
use type_counts::TypeCounts;

/// Controller name (metrics label, logs).
pub const NAME: &str = "controllerinstallation-required";

/// Per kind: `None` while undecided, else the set of types of counted objects.
#[derive(Debug, Default)]
pub struct KindTypes {
    kinds: Mutex<BTreeMap<String, BTreeSet<String>>>,
}

impl KindTypes {
    /// The type set of `kind`, `None` while the kind is not known yet.
    pub fn types(&self, kind: &str) -> Option<BTreeSet<String>> {
        self.kinds
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(kind)
            .cloned()
    }

    /// Records the type set of `kind`; returns whether it changed (or became known).
    pub fn store(&self, kind: &str, types: BTreeSet<String>) -> bool {
        let mut kinds = self.kinds.lock().unwrap_or_else(PoisonError::into_inner);
        if kinds.get(kind) == Some(&types) {
            return false;
        }
        kinds.insert(kind.to_owned(), types);
        true
    }
}

/// Dependencies of the required controller.
pub struct Required {
    /// Time source for timestamps.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
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
    /// Known type sets by kind.
    pub kinds: Arc<KindTypes>,
}

impl std::fmt::Debug for Required {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Required")
            .field("seed", &self.seed_name)
            .finish_non_exhaustive()
    }
}

/// Runs the required controller until `ctx.stop` is cancelled.
pub async fn run(ctx: Arc<AgentContext>) {
    let kinds = Arc::new(KindTypes::default());
    let (sender, receiver) = futures::channel::mpsc::unbounded::<()>();
    let watch_stop = ctx.stop.child_token();
    let mut tasks = Vec::new();
    for kind in ExtensionKind::ALL.map(ExtensionKind::as_str) {
        tasks.push(tokio::spawn(watch_kind(
            ctx.seed.clone(),
            kind,
            kinds.clone(),
            sender.clone(),
            watch_stop.clone(),
        )));
    }
    let concurrency = seedlet_runtime::watch::concurrency(i64::from(
        ctx.config
            .controllers
            .controller_installation_required
            .concurrent_syncs,
    ));
    let required = Arc::new(Required {
        clock: ctx.clock.clone(),
        garden: ctx.garden.clone(),
        concurrency,
        seed: ctx.seed.clone(),
        seed_name: ctx.seed_name.clone(),
        stop: ctx.stop.clone(),
        kinds,
    });
    let metrics = ctx.metrics.common();
    let receiver = Arc::new(tokio::sync::Mutex::new(receiver));
    ctx.run_on_garden(|caches| {
        run_with(caches, required.clone(), metrics.clone(), receiver.clone())
    })
    .await;
    watch_stop.cancel();
    for task in tasks {
        task.abort();
    }
}

async fn run_with(
    caches: Arc<GardenCaches>,
    required: Arc<Required>,
    metrics: Arc<Metrics>,
    changes: Arc<tokio::sync::Mutex<futures::channel::mpsc::UnboundedReceiver<()>>>,
) {
    let ctx = required.clone();
    let seed_name = ctx.seed_name.clone();
    let informer = caches.installations().await;
    let reader = informer.store();
    let installations = informer
        .applied_objects()
        .try_filter(move |ci| futures::future::ready(ci.seed_name() == Some(seed_name.as_str())))
        .predicate_filter(
            |ci: &ControllerInstallation| Some(hash_of(&ci.uid())),
            PredicateConfig::default(),
        );
    // Kind changes arrive on one channel that outlives controller restarts.
    let triggers = futures::stream::unfold(changes, |changes| async move {
        let next = changes.lock().await.next().await;
        next.map(|()| ((), changes))
    });
    let controller = seedlet_runtime::controller::Triggers::for_stream(installations, reader)
        .reconcile_all_on(triggers);
    seedlet_runtime::controller::run(controller, required, ctx.stop.clone(), metrics).await;
}

fn hash_of(value: &impl std::hash::Hash) -> u64 {
    use std::hash::Hasher;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// Keeps the type set of one extension kind current.
async fn watch_kind(
    seed: kube::Client,
    kind: &'static str,
    kinds: Arc<KindTypes>,
    sender: UnboundedSender<()>,
    stop: CancellationToken,
) {
    let resource = extension_resource(kind);
    let api: Api<DynamicObject> = Api::all_with(seed, &resource);
    let mut events = std::pin::pin!(
        watcher(api, watcher::Config::default()).backoff(seedlet_runtime::watch::watch_backoff())
    );
    let mut objects = TypeCounts::default();
    let mut initial = TypeCounts::default();
    loop {
        let event = tokio::select! {
            () = stop.cancelled() => return,
            event = events.next() => event,
        };
        let Some(event) = event else { return };
        let changed = match event {
            Ok(watcher::Event::Init) => {
                initial = TypeCounts::default();
                false
            }
            Ok(watcher::Event::InitApply(object)) => {
                initial.set(id_of(&object), counted_type(&object).as_deref());
                false
            }
            Ok(watcher::Event::InitDone) => {
                objects = std::mem::take(&mut initial);
                true
            }
            Ok(watcher::Event::Apply(object)) => {
                objects.set(id_of(&object), counted_type(&object).as_deref())
            }
            Ok(watcher::Event::Delete(object)) => objects.remove(id_of(&object)),
            Err(watcher::Error::InitialListFailed(kube::Error::Api(status)))
                if status.code == 404 =>
            {
                // The kind is not served in the seed: no objects of it exist.
                objects = TypeCounts::default();
                true
            }
            Err(error) => {
                tracing::debug!(kind, error = %seedlet_runtime::error_chain(&error), "watching extension kind failed, retrying");
                false
            }
        };
        // The first list (or a missing CRD) makes the kind known, with or without objects.
        if changed && kinds.store(kind, objects.types()) {
            // A closed channel means the controller stopped; the loop ends with the stop token.
            let _ = sender.unbounded_send(());
        }
    }
}

/// The ApiResource of an extension kind (`extensions.gardener.cloud/v1alpha1`; plural = lower-case
/// kind + `s`, or `ies` for a trailing `y`, as the CRDs name them).
pub fn extension_resource(kind: &str) -> ApiResource {
    let gvk = GroupVersionKind::gvk(groups::EXTENSIONS, "v1alpha1", kind);
    let lower = kind.to_lowercase();
    let plural = match lower.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{lower}s"),
    };
    ApiResource::from_gvk_with_plural(&gvk, &plural)
}

/// The `spec.type` of an object that counts (class `shoot`/`seed`, unset = `shoot`; not `garden`).
pub fn counted_type(object: &DynamicObject) -> Option<String> {
    let spec = object.data.get("spec")?;
    if spec.get("class").and_then(Value::as_str) == Some(CLASS_GARDEN) {
        return None;
    }
    spec.get("type").and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(class: Option<&str>, type_: &str) -> DynamicObject {
        let mut spec = serde_json::json!({"type": type_});
        if let Some(class) = class {
            spec["class"] = class.into();
        }
        serde_json::from_value(serde_json::json!({"apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "BackupBucket", "metadata": {"name": "b"}, "spec": spec})).unwrap()
    }

    #[test]
    fn garden_class_objects_do_not_count() {
        assert_eq!(
            counted_type(&object(None, "local")).as_deref(),
            Some("local")
        );
        assert_eq!(
            counted_type(&object(Some("seed"), "local")).as_deref(),
            Some("local")
        );
        assert_eq!(counted_type(&object(Some("garden"), "local")), None);
    }

    #[test]
    fn kind_types_report_changes_only() {
        let kinds = KindTypes::default();
        assert_eq!(kinds.types("Network"), None);
        assert!(kinds.store("Network", BTreeSet::new()));
        assert!(!kinds.store("Network", BTreeSet::new()));
        assert!(kinds.store("Network", BTreeSet::from(["calico".to_owned()])));
        assert_eq!(
            kinds.types("Network"),
            Some(BTreeSet::from(["calico".to_owned()]))
        );
    }

    #[test]
    fn extension_resources_use_plural_kind_names() {
        let resource = extension_resource("DNSRecord");
        assert_eq!(resource.plural, "dnsrecords");
        assert_eq!(resource.api_version, "extensions.gardener.cloud/v1alpha1");
        assert_eq!(extension_resource("BackupEntry").plural, "backupentries");
    }
}
