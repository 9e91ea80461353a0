//! The agent's controllers, one folder each (`mod.rs` wiring, `reconcile.rs` logic, pure
//! decisions beside them), and the list the agent runs while it leads; a new controller adds its
//! module and one line in [`builtin`].

pub mod backupbucket;
pub mod backupentry;
pub mod bastion;
pub mod cluster;
pub mod controllerinstallation;
pub mod heartbeat;
pub mod managedresource;
pub mod networkpolicy;
pub mod seed;
pub mod seedcare;
pub mod shoot;
pub mod shootcare;
pub mod shootmigration;
pub mod shootstate;

use crate::context::ControllerSpec;

/// Every built-in controller, in start order. The heartbeat comes first so that health and the
/// seed Lease do not wait for other controllers' caches.
pub fn builtin() -> Vec<ControllerSpec> {
    let mut controllers = vec![
        ControllerSpec::new(heartbeat::NAME, |ctx| Box::pin(heartbeat::run(ctx))),
        ControllerSpec::new(managedresource::NAME, |ctx| {
            Box::pin(managedresource::run(ctx))
        }),
        ControllerSpec::new(seed::NAME, |ctx| Box::pin(seed::run(ctx))),
        ControllerSpec::new(seedcare::NAME, |ctx| Box::pin(seedcare::run(ctx))),
        ControllerSpec::new(cluster::NAME, |ctx| Box::pin(cluster::run(ctx))),
        ControllerSpec::new(shootstate::NAME, |ctx| Box::pin(shootstate::run(ctx))),
        ControllerSpec::new(shoot::NAME, |ctx| Box::pin(shoot::run(ctx))),
        ControllerSpec::new(shootcare::NAME, |ctx| Box::pin(shootcare::run(ctx))),
        ControllerSpec::new(shootmigration::NAME, |ctx| {
            Box::pin(shootmigration::run(ctx))
        }),
        ControllerSpec::new(backupbucket::NAME, |ctx| Box::pin(backupbucket::run(ctx))),
        ControllerSpec::new(backupentry::NAME, |ctx| Box::pin(backupentry::run(ctx))),
        ControllerSpec::new(bastion::NAME, |ctx| Box::pin(bastion::run(ctx))),
        ControllerSpec::new(networkpolicy::NAME, |ctx| Box::pin(networkpolicy::run(ctx))),
    ];
    controllers.extend(controllerinstallation::controllers());
    controllers
}
