//! The Shoot "Main" controller (gardenlet's `shoot` controller, spec `gardenlet-shoot-flow.md`):
//! watches the garden Shoots of this seed (creations, generation changes and operation requests
//! only, so its own status writes do not trigger it: [`trigger`]) and, when the decision of [`decide`] says so, runs the
//! reconcile flow of [`flow`] over the extension objects in the seed's control-plane namespace,
//! reporting `lastOperation`, progress and `lastErrors` on the Shoot ([`status`]). Requeues after
//! `controllers.shoot.syncPeriod` (1 h) or into the next maintenance window.
//!
//! The Cluster sync (`controllers/cluster`) keeps the finalizer, technical ID, Cluster and
//! namespace; this controller waits for the technical ID before it starts. A deleting shoot runs
//! the delete flow of [`delete`] (spec §5), which ends with the namespace, Cluster, ShootState
//! and finalizer. A shoot moving to another seed runs the migrate flow of [`migrate`] here (the
//! source) and the restore phase of [`restore`] on the destination (spec §6).
//! `controllers.shoot.enabled: false` (a seedlet addition) switches the controller off; the
//! Cluster sync then deletes shoots itself.

pub mod control_plane;
pub mod decide;
pub mod delete;
pub mod delete_flow;
pub mod delete_force;
pub mod desired;
pub mod flow;
pub mod migrate;
pub mod migrate_flow;
pub mod migrate_tasks;
pub mod reconcile;
pub mod restore;
pub mod startup;
pub mod status;
pub mod tasks;
pub mod trigger;

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::reflector::Store;
use seedlet_api::core::{ControllerRegistration, GardenerInfo, Seed};
use tokio_util::sync::CancellationToken;

pub use reconcile::Error;

use crate::caches::GardenCaches;
use crate::context::AgentContext;
use crate::shoot_flow_switches;

/// Controller name (logs, metrics label).
pub const NAME: &str = "shoot";
/// `controllers.shoot.retryDuration` default.
pub const DEFAULT_RETRY_DURATION: Duration = Duration::from_secs(12 * 3600);
/// `controllers.shoot.concurrentSyncs` default for this controller (spec §8).
pub const DEFAULT_CONCURRENT_SYNCS: u16 = 20;

/// Dependencies of the controller for one garden client.
pub struct Shoots {
    /// Field manager of our writes.
    pub field_manager: &'static str,
    /// Process metrics (the migrate flow's ShootState sync records its writes).
    pub metrics: Arc<crate::metrics::AgentMetrics>,
    /// Parallel reconciles (`controllers.shoot.concurrentSyncs`).
    pub concurrency: u16,
    /// Seed client.
    pub seed: kube::Client,
    /// Our Seed's name.
    pub seed_name: String,
    /// Garden client of this run.
    pub garden: kube::Client,
    /// Time source.
    pub clock: Arc<dyn seedlet_runtime::clock::Clock>,
    /// The agent's `status.gardener`.
    pub identity: GardenerInfo,
    /// Decision settings.
    pub settings: decide::Settings,
    /// `controllers.shoot.retryDuration`.
    pub retry_duration: Duration,
    /// `controllers.shoot.progressReportPeriod` (`None`: after every task).
    pub progress_report_period: Option<Duration>,
    /// Our Seed.
    pub seeds: Store<Seed>,
    /// ControllerRegistrations.
    pub registrations: Store<ControllerRegistration>,
    /// Events on Shoots.
    pub events: seedlet_runtime::events::Recorder,
    /// Cancelled at the end of the leadership term (running flows stop).
    pub stop: CancellationToken,
    /// `controllers.shoot.controlPlaneChart`, if configured.
    pub control_plane_chart: Option<Arc<control_plane::ChartSource>>,
}

impl std::fmt::Debug for Shoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shoots")
            .field("seed", &self.seed_name)
            .finish_non_exhaustive()
    }
}

/// Runs the controller until the leadership term ends, restarting it when the garden client is
/// swapped; when it is switched off it only waits for the end of the term (a controller that
/// returns early counts as crashed and would be restarted every few seconds).
pub async fn run(agent: Arc<AgentContext>) {
    if !shoot_flow_switches::enabled(&agent.config) {
        tracing::info!("shoot controller disabled (controllers.shoot.enabled: false)");
        agent.stop.cancelled().await;
        return;
    }
    agent
        .run_on_garden(|caches| run_on(agent.clone(), caches))
        .await;
}

async fn run_on(agent: Arc<AgentContext>, caches: Arc<GardenCaches>) {
    let garden = caches.client().clone();
    let config = agent.config.controllers.shoot.clone().unwrap_or_default();
    let sync_period = shoot_flow_switches::sync_period(&agent.config);
    let concurrency = config.concurrent_syncs.filter(|syncs| *syncs > 0).map_or(
        DEFAULT_CONCURRENT_SYNCS,
        seedlet_runtime::watch::concurrency,
    );
    // A flow writes the Shoot's status after every task while progressReportPeriod is unset
    // (upstream's default): one write per task, some 30 tasks for a flow that extensions answer
    // at once. Bounded by the flow, above the default budget (5/s, burst 10).
    seedlet_runtime::budget::allow_rate(NAME, shoot_flow_switches::FLOW_WRITES_PER_SECOND);
    let identity = crate::gardener_identity::gardener_info();
    let settings = decide::Settings {
        sync_period,
        respect_sync_period_overwrite: config.respect_sync_period_overwrite.unwrap_or(false),
        reconcile_in_maintenance_only: config.reconcile_in_maintenance_only.unwrap_or(false),
        version: identity.version.clone(),
    };
    let seed_informer = caches.seed();
    let seeds = seed_informer.store();
    let seed_events = seed_informer.applied_objects();
    let registration_informer = caches.registrations();
    let registrations = registration_informer.store();
    let registration_events = registration_informer.applied_objects();
    let shoot_informer = caches.shoots().await;
    let shoots = shoot_informer.store();
    // Flows of the previous agent or term were cut off: their Shoots are marked Aborted first.
    if let Err(error) =
        startup::abort_interrupted(&garden, caches.shoot_scope().await, &agent.seed_name).await
    {
        tracing::warn!(error = %seedlet_runtime::error_chain(&error), "could not list the shoots to mark interrupted operations Aborted");
    }
    // Creations (incl. the initial list), generation changes, deletions, appearing operation
    // requests and the hand-over of a migration ([`trigger`]).
    let shoot_events = trigger::triggers(shoot_informer.events());
    let ctx = Arc::new(Shoots {
        field_manager: agent.field_manager,
        metrics: agent.metrics.clone(),
        concurrency,
        seed: agent.seed.clone(),
        seed_name: agent.seed_name.clone(),
        garden: garden.clone(),
        clock: agent.clock.clone(),
        identity,
        settings,
        retry_duration: config
            .retry_duration
            .map_or(DEFAULT_RETRY_DURATION, |d| d.as_std()),
        progress_report_period: config.progress_report_period.map(|d| d.as_std()),
        seeds,
        registrations,
        events: agent.events.named("shoot-controller"),
        stop: agent.stop.clone(),
        control_plane_chart: control_plane::ChartSource::configured(&agent.config),
    });
    let controller = seedlet_runtime::controller::Triggers::for_stream(shoot_events, shoots)
        .watches_stream(seed_events, |_: Seed| std::iter::empty())
        .watches_stream(registration_events, |_: ControllerRegistration| {
            std::iter::empty()
        });
    seedlet_runtime::controller::run(controller, ctx, agent.stop.clone(), agent.metrics.common())
        .await;
}
