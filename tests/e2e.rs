//! The end-to-end suite in one test binary: every module below starts sandbox API servers
//! in-process on `127.0.0.1:0` and runs the real agent and garden code against them.
//!
//! One binary rather than one per file because each links the whole system; run one part with
//! `cargo test --test e2e <module>::` (for example `cargo test --test e2e heartbeat::`).

// Helpers several modules share, compiled once (the others live in `seedlet_testkit`).
#[path = "registry/mod.rs"]
mod registry;

mod backup;
mod backup_entry;
mod backup_workload_identity;
mod bastion;
mod bootstrap;
mod chart_seed_view;
mod charts;
mod cli;
mod controllerinstallation;
mod crd_schemas;
mod example_backup_provider;
mod faults;
mod garden_cloudprofiles;
mod garden_events_roles;
mod garden_extensions;
mod garden_projects;
mod garden_protection;
mod garden_seed;
mod heartbeat;
mod landscape;
mod managedresource;
mod managedseedset;
mod network_policy;
mod real_cluster;
mod scale;
mod seed_authorizer;
mod seed_care;
mod seed_lifecycle;
mod seed_status;
mod shoot_care;
mod shoot_crd;
mod shoot_flow;
mod shoot_helpers;
mod shoot_hibernation;
mod shoot_maintenance;
mod shoot_migration;
mod shoot_state;
mod shoot_status_label;
mod startup_errors;
mod systemd;
