//! ShootState sync: watches the extension objects (BackupEntry, ContainerRuntime, ControlPlane,
//! DNSRecord, Extension, Infrastructure, Network, OperatingSystemConfig, Worker), the Secrets
//! labelled `persist=true` in shoot control-plane namespaces and the Clusters of the seed, and
//! writes the shoot's `ShootState` in the garden (name and namespace of the shoot, found through
//! the Cluster named like the namespace).
//!
//! Event driven (spec §3.1): a change of an object's `status.state` or `status.resources`, its
//! deletion, or a persisted Secret's change updates that one entry (copying the objects
//! `status.resources` references into `spec.resources`); other status changes cause no write.
//! Writes to one ShootState are batched: at most one per `controllers.shootState.eventBatchPeriod`
//! (100 ms), the first change after a quiet period immediately. Safety net (spec §3.2): a full
//! snapshot listed fresh from the seed replaces the spec every `controllers.shootState.syncPeriod`
//! (6 h) ± 1/24 of it, timed by the ShootState's `gardener.cloud/timestamp`; `concurrentSyncs: 0`
//! switches the snapshot off. A restart re-lists everything, so nothing observed before it is
//! lost.
//!
//! It is a [`Reconciler`](seedlet_runtime::controller::Reconciler) of Clusters ([`sync`]) from the
//! shared Cluster informer. The extension objects and Secrets are not stored in full: their
//! watches reduce each event to a compact item ([`entries`]) and apply it to the sync's
//! [`model::Model`] before they trigger the reconcile of the namespace's Cluster; the batching is
//! a per-namespace spacing in the reconcile ([`seedlet_runtime::spacing`]); the snapshot is
//! written by the first reconcile after it is due, which the controller's resync (a sixteenth of
//! the snapshot period) brings at the latest ([`sync`]).

pub mod model;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod schedule;
pub mod sync;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::stream::{self, BoxStream};
use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use seedlet_api::extensions::{
    BackupEntry, Cluster, ContainerRuntime, ControlPlane, DNSRecord, Extension, ExtensionObject,
    Infrastructure, Network, OperatingSystemConfig, Worker,
};
use seedlet_api::names::technical_id;
use seedlet_config::GardenletConfiguration;

pub use model::{Model, Source, Update};
pub use sync::ShootStateSync;

use crate::caches::GardenCaches;
use crate::cluster_shoot::ShootRef;
use crate::context::AgentContext;
use crate::shoot_state::entries::{self, ExtensionItem, SecretItem};

/// Controller name (logs, metrics label).
pub const NAME: &str = "shootstate";

/// Timing and parallelism of the sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// At most one write per ShootState per this period.
    pub batch_period: Duration,
    /// Full snapshot period; `None` switches the snapshot off.
    pub snapshot_period: Option<Duration>,
    /// Writes in flight at once (different ShootStates).
    pub concurrency: u16,
}

impl Settings {
    /// The settings of `config.controllers.shootState`.
    pub fn from_config(config: &GardenletConfiguration) -> Self {
        let shoot_state = &config.controllers.shoot_state;
        let snapshot = shoot_state.concurrent_syncs > 0 && !shoot_state.sync_period.is_zero();
        Self {
            batch_period: shoot_state.event_batch_period.as_std(),
            snapshot_period: snapshot.then(|| shoot_state.sync_period.as_std()),
            concurrency: seedlet_runtime::watch::concurrency(shoot_state.concurrent_syncs.into()),
        }
    }
}

/// Runs the sync until `ctx.stop` is cancelled, restarting it (with a fresh model, from fresh
/// lists) when the garden client is swapped.
pub async fn run(agent: Arc<AgentContext>) {
    let batch_period = Settings::from_config(&agent.config).batch_period;
    if !batch_period.is_zero() {
        // The sync bounds itself to one write per event batch period and ShootState (plus a
        // snapshot per sync period); a burst of extension state changes runs at that bound, which
        // is above the default write budget (10/s at the default 100 ms).
        seedlet_runtime::budget::allow_rate(NAME, 1.0 / batch_period.as_secs_f64() + 1.0);
    }
    agent
        .run_on_garden(|caches| run_on(agent.clone(), caches))
        .await;
}

async fn run_on(agent: Arc<AgentContext>, caches: Arc<GardenCaches>) {
    let settings = Settings::from_config(&agent.config);
    let ctx = Arc::new(reconcile::Ctx::new(
        agent.seed.clone(),
        caches.client().clone(),
        agent.metrics.clone(),
        agent.clock.clone(),
        agent.field_manager,
    ));
    let model = Arc::new(Mutex::new(Model::new(
        settings.batch_period,
        settings.snapshot_period,
        agent.clock.clone(),
    )));
    let clusters = agent.caches.clusters();
    let controller = seedlet_runtime::controller::Triggers::for_stream(
        observed_clusters(clusters.events(), model.clone()),
        clusters.store(),
    )
    .reconcile_on(triggers(updates(&agent.seed), model.clone()));
    let sync = ShootStateSync::new(ctx, model, settings.concurrency, settings.snapshot_period);
    seedlet_runtime::controller::run(
        controller,
        Arc::new(sync),
        agent.stop.clone(),
        agent.metrics.common(),
    )
    .await;
}

/// The Cluster events applied to `model`, passing on every Cluster that exists (its reconcile
/// trigger).
pub fn observed_clusters(
    events: impl Stream<Item = Result<watcher::Event<Cluster>, watcher::Error>> + Send + 'static,
    model: Arc<Mutex<Model>>,
) -> impl Stream<Item = Result<Cluster, watcher::Error>> + Send + 'static {
    events.filter_map(move |event| {
        let (update, passed) = match event {
            Ok(watcher::Event::Apply(cluster) | watcher::Event::InitApply(cluster)) => {
                (cluster_updates(cluster.clone(), true), Some(Ok(cluster)))
            }
            Ok(watcher::Event::Delete(cluster)) => (cluster_updates(cluster, false), None),
            Ok(watcher::Event::Init) => (Some(Update::Relist(Source::Cluster)), None),
            Ok(watcher::Event::InitDone) => (Some(Update::Listed(Source::Cluster)), None),
            Err(error) => (None, Some(Err(error))),
        };
        if let Some(update) = update {
            observe(&model, update);
        }
        futures::future::ready(passed)
    })
}

/// The reconcile triggers of `updates`: each is applied to `model` first, then the Clusters of
/// the namespaces it marked are to be reconciled.
pub fn triggers(
    updates: impl Stream<Item = Update> + Send + 'static,
    model: Arc<Mutex<Model>>,
) -> impl Stream<Item = ObjectRef<Cluster>> + Send + 'static {
    updates.flat_map(move |update| {
        stream::iter(
            observe(&model, update)
                .into_iter()
                .map(|namespace| ObjectRef::new(&namespace)),
        )
    })
}

fn observe(model: &Mutex<Model>, update: Update) -> Vec<String> {
    model
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .observe(update, Instant::now())
}

/// The watches of the extension objects and persisted Secrets of the seed, merged into one stream
/// of [`Update`]s.
pub fn updates(seed: &kube::Client) -> impl Stream<Item = Update> + Send + 'static {
    let streams: Vec<BoxStream<'static, Update>> = vec![
        extension_updates::<BackupEntry>(seed),
        extension_updates::<ContainerRuntime>(seed),
        extension_updates::<ControlPlane>(seed),
        extension_updates::<DNSRecord>(seed),
        extension_updates::<Extension>(seed),
        extension_updates::<Infrastructure>(seed),
        extension_updates::<Network>(seed),
        extension_updates::<OperatingSystemConfig>(seed),
        extension_updates::<Worker>(seed),
        watch(
            Api::<Secret>::all(seed.clone()),
            watcher::Config::default().labels(&entries::persisted_selector()),
            Source::Secret,
            secret_updates,
        ),
    ];
    stream::select_all(streams)
}

fn extension_updates<K: ExtensionObject>(seed: &kube::Client) -> BoxStream<'static, Update> {
    let Some(kind) = entries::KINDS
        .into_iter()
        .map(seedlet_api::extensions::ExtensionKind::as_str)
        .find(|kind| *kind == K::kind(&()).as_ref())
    else {
        return stream::empty().boxed();
    };
    watch(
        Api::<K>::all(seed.clone()),
        watcher::Config::default(),
        Source::Extension(kind),
        move |object: K, exists| extension_update(kind, &object, exists),
    )
}

/// A watch reduced to [`Update`]s by `reduce(object, exists)`; watch errors are retried with
/// back-off by the watcher and only logged here.
fn watch<K, F>(
    api: Api<K>,
    config: watcher::Config,
    source: Source,
    reduce: F,
) -> BoxStream<'static, Update>
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + 'static,
    F: Fn(K, bool) -> Option<Update> + Send + 'static,
{
    watcher::watcher(api, config)
        .backoff(seedlet_runtime::watch::watch_backoff())
        .filter_map(move |event| {
            let update = match event {
                Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
                    reduce(object, true)
                }
                Ok(watcher::Event::Delete(object)) => reduce(object, false),
                Ok(watcher::Event::Init) => Some(Update::Relist(source)),
                Ok(watcher::Event::InitDone) => Some(Update::Listed(source)),
                Err(error) => {
                    tracing::debug!(source = ?source, error = %seedlet_runtime::error_chain(&error), "shootstate watch error, retrying");
                    None
                }
            };
            futures::future::ready(update)
        })
        .boxed()
}

/// The update for an extension object that exists or is gone; `None` outside shoot namespaces.
pub fn extension_update<K: ExtensionObject>(
    kind: &'static str,
    object: &K,
    exists: bool,
) -> Option<Update> {
    let item = ExtensionItem::of(object)?;
    Some(if exists {
        Update::Extension(item)
    } else {
        Update::ExtensionGone {
            namespace: item.namespace,
            kind,
            name: item.name,
        }
    })
}

/// The update for a persisted Secret that exists or is gone; `None` for other Secrets.
pub fn secret_updates(secret: Secret, exists: bool) -> Option<Update> {
    if exists {
        return SecretItem::of(&secret).map(Update::Secret);
    }
    let namespace = secret.metadata.namespace?;
    if !technical_id::is_shoot_namespace(&namespace) {
        return None;
    }
    Some(Update::SecretGone {
        namespace,
        name: secret.metadata.name?,
    })
}

/// The update for a Cluster that exists or is gone.
pub fn cluster_updates(cluster: Cluster, exists: bool) -> Option<Update> {
    if !exists {
        return cluster.metadata.name.map(Update::ClusterGone);
    }
    let (namespace, shoot) = ShootRef::of_cluster(&cluster)?;
    Some(Update::Cluster(namespace, shoot))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn settings_switch_the_snapshot_off_with_zero_concurrent_syncs() {
        let mut config = GardenletConfiguration::default();
        config.controllers.shoot_state.concurrent_syncs = 5;
        config.controllers.shoot_state.sync_period = seedlet_config::Duration::from_hours(6);
        config.controllers.shoot_state.event_batch_period =
            seedlet_config::Duration::from_millis(100);
        let settings = Settings::from_config(&config);
        assert_eq!(
            settings.snapshot_period,
            Some(Duration::from_secs(6 * 3600))
        );
        assert_eq!(settings.batch_period, Duration::from_millis(100));
        assert_eq!(settings.concurrency, 5);
        config.controllers.shoot_state.concurrent_syncs = 0;
        let settings = Settings::from_config(&config);
        assert_eq!(settings.snapshot_period, None);
        assert_eq!(settings.concurrency, 1);
    }

    #[test]
    fn secret_updates_report_deletions_only_in_shoot_namespaces() {
        let mut secret = Secret::default();
        secret.metadata.name = Some("ca".into());
        secret.metadata.namespace = Some("garden".into());
        assert!(secret_updates(secret.clone(), false).is_none());
        secret.metadata.namespace = Some("shoot--dev--foo".into());
        assert!(matches!(
            secret_updates(secret.clone(), false),
            Some(Update::SecretGone { .. })
        ));
        // Unlabelled Secrets never count as existing.
        assert!(secret_updates(secret, true).is_none());
    }

    #[test]
    fn extension_update_names_the_gone_object() {
        let worker: Worker = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "w", "namespace": "shoot--dev--foo"},
            "spec": {"type": "local"}
        }))
        .unwrap();
        match extension_update("Worker", &worker, false) {
            Some(Update::ExtensionGone {
                namespace,
                kind,
                name,
            }) => assert_eq!(
                (namespace.as_str(), kind, name.as_str()),
                ("shoot--dev--foo", "Worker", "w")
            ),
            other => panic!("unexpected {other:?}"),
        }
    }
}
