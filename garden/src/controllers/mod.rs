//! The garden process's controllers, one folder each (`mod.rs` wiring, `reconcile.rs` logic,
//! pure decisions beside them), and the list it runs while it leads; a new controller adds its
//! module and one line in [`builtin`].

pub mod backupbuckets_check;
pub mod bastion_expiry;
pub mod controllerregistration;
pub mod csr_approval;
pub mod entry;
pub mod event_ttl;
pub mod extension_clusterrole;
pub mod extensions_check;
pub mod field_selection;
pub mod finalizers;
pub mod managedseedset;
pub mod project;
pub mod project_activity;
pub mod project_resourcequota;
pub mod project_stale;
pub mod protection;
pub mod references;
pub mod seed_check;
pub mod seed_labels;
pub mod seed_lifecycle;
pub mod seed_secrets;
pub mod shoot_conditions;
pub mod shoot_hibernation;
pub mod shoot_maintenance;
pub mod shoot_migration;
pub mod shoot_quota;
pub mod shoot_retry;
pub mod shoot_status_label;
pub mod shootstate_finalizer;

use crate::context::GardenControllerSpec;
use entry::spec;

/// Every built-in garden-side controller.
pub fn builtin() -> Vec<GardenControllerSpec> {
    vec![
        GardenControllerSpec::new(controllerregistration::NAME, |ctx| {
            Box::pin(controllerregistration::start(ctx))
        }),
        GardenControllerSpec::new(finalizers::NAME, |ctx| Box::pin(finalizers::start(ctx))),
        GardenControllerSpec::new(protection::NAME, |ctx| Box::pin(protection::start(ctx))),
        GardenControllerSpec::new(references::NAME, |ctx| Box::pin(references::start(ctx))),
        GardenControllerSpec::new(project::NAME, |ctx| Box::pin(project::start(ctx))),
        GardenControllerSpec::new(extension_clusterrole::NAME, |ctx| {
            Box::pin(extension_clusterrole::start(ctx))
        }),
        GardenControllerSpec::new(event_ttl::NAME, |ctx| Box::pin(event_ttl::start(ctx))),
        GardenControllerSpec::new(project_stale::NAME, |ctx| {
            Box::pin(project_stale::start(ctx))
        }),
        GardenControllerSpec::new(project_activity::NAME, |ctx| {
            Box::pin(project_activity::start(ctx))
        }),
        GardenControllerSpec::new(project_resourcequota::NAME, |ctx| {
            Box::pin(project_resourcequota::start(ctx))
        }),
        GardenControllerSpec::new(shootstate_finalizer::NAME, |ctx| {
            Box::pin(shootstate_finalizer::start(ctx))
        }),
        GardenControllerSpec::new(extensions_check::NAME, |ctx| {
            Box::pin(extensions_check::start(ctx))
        }),
        GardenControllerSpec::new(seed_secrets::NAME, |ctx| Box::pin(seed_secrets::start(ctx))),
        GardenControllerSpec::new(bastion_expiry::NAME, |ctx| {
            Box::pin(bastion_expiry::start(ctx))
        }),
        GardenControllerSpec::new(backupbuckets_check::NAME, |ctx| {
            Box::pin(backupbuckets_check::start(ctx))
        }),
        spec::<csr_approval::CsrApproval>(),
        GardenControllerSpec::new(seed_labels::NAME, |ctx| Box::pin(seed_labels::start(ctx))),
        spec::<shoot_status_label::StatusLabel>(),
        spec::<shoot_hibernation::Hibernation>(),
        spec::<shoot_retry::ShootRetry>(),
        spec::<shoot_quota::ShootQuota>(),
        spec::<shoot_migration::ShootMigration>(),
        spec::<shoot_conditions::ShootConditions>(),
        spec::<shoot_maintenance::Maintenance>(),
        GardenControllerSpec::new(managedseedset::NAME, |ctx| {
            Box::pin(managedseedset::start(ctx))
        }),
        spec::<seed_lifecycle::SeedLifecycle>(),
    ]
}
