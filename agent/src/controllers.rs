//! The controllers the agent runs while it leads; each controller module adds one line here.

use crate::ControllerSpec;
use crate::cluster;
use crate::controllerinstallation;
use crate::heartbeat;
use crate::managedresource;
use crate::seed;
use crate::shootstate;

/// Every built-in controller, in start order. The heartbeat comes first so that health and the
/// seed Lease do not wait for other controllers' caches.
pub fn builtin() -> Vec<ControllerSpec> {
    let mut controllers = vec![
        ControllerSpec::new(heartbeat::NAME, |ctx| Box::pin(heartbeat::run(ctx))),
        ControllerSpec::new(managedresource::NAME, |ctx| {
            Box::pin(managedresource::run(ctx))
        }),
        ControllerSpec::new(seed::NAME, |ctx| Box::pin(seed::run(ctx))),
        ControllerSpec::new(cluster::NAME, |ctx| Box::pin(cluster::run(ctx))),
        ControllerSpec::new(shootstate::NAME, |ctx| Box::pin(shootstate::run(ctx))),
    ];
    controllers.extend(controllerinstallation::controllers());
    controllers
}
