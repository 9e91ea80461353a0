//! The garden process's controllers, one folder each (`mod.rs` wiring, `reconcile.rs` logic,
//! pure decisions beside them), and the list it runs while it leads; a new controller adds its
//! module and one line in [`builtin`].

pub mod backupbuckets_check;
pub mod bastion_expiry;
pub mod controllerregistration;
pub mod csr_approval;
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

use std::sync::Arc;

use crate::context::GardenControllerSpec;

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
        GardenControllerSpec::new(csr_approval::NAME, |ctx| {
            let csr = Arc::new(csr_approval::Ctx {
                client: ctx.client.clone(),
                concurrent_syncs: seedlet_runtime::watch::concurrency(i64::from(
                    ctx.config
                        .controllers
                        .certificate_signing_request
                        .concurrent_syncs,
                )),
                events: ctx
                    .events
                    .named(format!("{}-controller", csr_approval::NAME)),
            });
            Box::pin(async move { csr_approval::run_on(csr, &ctx.caches, ctx.stop.clone()).await })
        }),
        GardenControllerSpec::new(seed_labels::NAME, |ctx| Box::pin(seed_labels::start(ctx))),
        GardenControllerSpec::new(shoot_status_label::NAME, |ctx| {
            Box::pin(shoot_status_label::start(ctx))
        }),
        GardenControllerSpec::new(shoot_hibernation::NAME, |ctx| {
            Box::pin(shoot_hibernation::start(ctx))
        }),
        GardenControllerSpec::new(shoot_retry::NAME, |ctx| Box::pin(shoot_retry::start(ctx))),
        GardenControllerSpec::new(shoot_quota::NAME, |ctx| Box::pin(shoot_quota::start(ctx))),
        GardenControllerSpec::new(shoot_migration::NAME, |ctx| {
            Box::pin(shoot_migration::start(ctx))
        }),
        GardenControllerSpec::new(shoot_conditions::NAME, |ctx| {
            Box::pin(shoot_conditions::start(ctx))
        }),
        GardenControllerSpec::new(shoot_maintenance::NAME, |ctx| {
            Box::pin(shoot_maintenance::start(ctx))
        }),
        GardenControllerSpec::new(managedseedset::NAME, |ctx| {
            Box::pin(managedseedset::start(ctx))
        }),
        GardenControllerSpec::new(seed_lifecycle::NAME, |ctx| {
            Box::pin(async move {
                let lifecycle = Arc::new(seed_lifecycle::Ctx {
                    client: ctx.client.clone(),
                    settings: seed_lifecycle::Settings::from_config(&ctx.config),
                    clock: ctx.clock.clone(),
                    metrics: ctx.metrics.clone(),
                });
                seed_lifecycle::run_on(lifecycle, &ctx.caches, ctx.stop.clone()).await;
            })
        }),
    ]
}
