//! The garden process's controllers, one folder each (`mod.rs` wiring, `reconcile.rs` logic,
//! pure decisions beside them), and the list it runs while it leads. Every controller is one
//! [`entry::GardenReconciler`] type; a new one adds its module and one line in [`builtin`].

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

use seedlet_api::core::{
    BackupEntry, CloudProfile, ControllerDeployment, CredentialsBinding, ExposureClass,
    NamespacedCloudProfile, Quota, SecretBinding, Seed, Shoot,
};
use seedlet_api::seedmanagement::ManagedSeed;

use crate::context::GardenControllerSpec;
use entry::spec;

/// Every built-in garden-side controller, one per kind where a family shares a generic type.
pub fn builtin() -> Vec<GardenControllerSpec> {
    vec![
        spec::<controllerregistration::Scheduling>(),
        spec::<finalizers::SeedFinalizer>(),
        spec::<finalizers::RegistrationFinalizer>(),
        spec::<finalizers::DeploymentFinalizer>(),
        spec::<protection::Protection<CloudProfile>>(),
        spec::<protection::Protection<NamespacedCloudProfile>>(),
        spec::<protection::Protection<SecretBinding>>(),
        spec::<protection::Protection<CredentialsBinding>>(),
        spec::<protection::Protection<Quota>>(),
        spec::<protection::Protection<ExposureClass>>(),
        spec::<references::References<Shoot>>(),
        spec::<references::References<Seed>>(),
        spec::<references::References<ControllerDeployment>>(),
        spec::<project::Projects>(),
        spec::<extension_clusterrole::ExtensionClusterRoles>(),
        spec::<event_ttl::EventTtl>(),
        spec::<project_stale::StaleProjects>(),
        spec::<project_activity::ProjectActivity>(),
        spec::<project_resourcequota::ProjectResourceQuotas>(),
        spec::<shootstate_finalizer::ShootStateFinalizer>(),
        spec::<extensions_check::ExtensionsCheck>(),
        spec::<seed_secrets::SeedSecrets>(),
        spec::<bastion_expiry::BastionExpiry>(),
        spec::<backupbuckets_check::BackupBucketsCheck>(),
        spec::<csr_approval::CsrApproval>(),
        spec::<seed_labels::SeedLabels<Shoot>>(),
        spec::<seed_labels::SeedLabels<BackupEntry>>(),
        spec::<seed_labels::SeedLabels<Seed>>(),
        spec::<seed_labels::SeedLabels<ManagedSeed>>(),
        spec::<shoot_status_label::StatusLabel>(),
        spec::<shoot_hibernation::Hibernation>(),
        spec::<shoot_retry::ShootRetry>(),
        spec::<shoot_quota::ShootQuota>(),
        spec::<shoot_migration::ShootMigration>(),
        spec::<shoot_conditions::ShootConditions>(),
        spec::<shoot_maintenance::Maintenance>(),
        spec::<managedseedset::ManagedSeedSets>(),
        spec::<seed_lifecycle::SeedLifecycle>(),
    ]
}
