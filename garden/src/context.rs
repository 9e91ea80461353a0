//! What a garden controller may use during one leadership term of the `seedlet garden` process.

use std::sync::Arc;

use seedlet_config::GardenControllerConfiguration;

use crate::caches::GardenCaches;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::events::Recorder;
use seedlet_runtime::metrics::Metrics;
use tokio_util::sync::CancellationToken;

/// Dependencies of the garden-side controllers, valid for one leadership term. Each controller
/// takes from it only what its own type needs (`GardenReconciler::from_garden`).
pub struct GardenContext {
    /// Garden client.
    pub client: kube::Client,
    /// The process's shared informers (they outlive the term; see [`crate::caches`]).
    pub caches: Arc<GardenCaches>,
    /// The whole configuration.
    pub config: Arc<GardenControllerConfiguration>,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
    /// Kubernetes Events; a controller writes through `events.named("<name>-controller")`.
    pub events: Recorder,
    /// Cancelled when this leadership term ends.
    pub stop: CancellationToken,
}

impl std::fmt::Debug for GardenContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GardenContext")
            .field("stopped", &self.stop.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// A garden-side controller run while this replica leads.
pub type GardenControllerSpec = seedlet_runtime::process::ControllerSpec<GardenContext>;
