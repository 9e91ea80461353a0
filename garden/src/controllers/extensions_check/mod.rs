//! Seed extensions check (`seed-extensions-check`, spec §3.3): per Seed in the garden, derives the
//! Seed condition `ExtensionsReady` from the `Valid`/`Installed`/`Healthy`/`Progressing`
//! conditions of the Seed's ControllerInstallations (failures pass the configured condition
//! threshold first) and merge-patches it into the Seed status when it changed.
//!
//! Triggered by Seed creation/deletion and by ControllerInstallation creation/deletion and changes
//! of those four conditions' status/reason/message (→ `spec.seedRef.name`); requeued every
//! `controllers.seedExtensionsCheck.syncPeriod`.

pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;

use kube::runtime::reflector::ObjectRef;
use seedlet_api::conditions;
use seedlet_api::core::{ControllerInstallation, Seed};
use seedlet_api::names::condition_types;
use seedlet_runtime::controller::Triggers;

use crate::caches::{GardenCaches, controller_on_changes};

pub use reconcile::{Error, extensions_ready};

use seedlet_runtime::triggers::key_of;

/// Controller name (logs, metrics label).
pub const NAME: &str = "seed-extensions-check";

/// The installation conditions the check reads.
pub const CHECKED_CONDITIONS: [&str; 4] = [
    condition_types::VALID,
    condition_types::INSTALLED,
    condition_types::HEALTHY,
    condition_types::PROGRESSING,
];

pub use crate::controllers::seed_check::{Check, Judge, SeedCheck, Settings};

/// The settings of this check from the garden controller configuration.
pub fn settings(config: &seedlet_config::GardenControllerConfiguration) -> Settings {
    let check = &config.controllers.seed_extensions_check;
    Settings::from_block(
        check.concurrent_syncs,
        check.sync_period,
        &check.condition_thresholds,
        condition_types::EXTENSIONS_READY,
    )
}

/// This check's controller.
pub type ExtensionsCheck = SeedCheck<ExtensionsReady>;

/// The `ExtensionsReady` check.
#[derive(Debug)]
pub struct ExtensionsReady;

impl Judge for ExtensionsReady {
    const NAME: &'static str = NAME;
    type Error = Error;

    fn settings(config: &seedlet_config::GardenControllerConfiguration) -> Settings {
        settings(config)
    }

    async fn check(seed: &Seed, check: &Check) -> Result<(), Error> {
        reconcile::check(seed, check).await
    }

    fn triggers(_check: &Check, caches: &GardenCaches) -> Triggers<Seed> {
        // Seed status changes (heartbeats, our own writes) must not trigger: the periodic requeue
        // covers the Seed itself.
        controller_on_changes(&caches.all::<Seed>(), |seed: &Seed| {
            key_of(&seed.metadata.deletion_timestamp.is_some())
        })
        .watches_stream(
            caches.installations().changes(installation_key),
            installation_seed,
        )
    }
}

/// Change key of an installation: its Seed and status/reason/message of the checked conditions.
pub fn installation_key(installation: &ControllerInstallation) -> String {
    let checked: Vec<_> = CHECKED_CONDITIONS
        .iter()
        .map(|type_| {
            conditions::find(installation.conditions(), type_)
                .map(|c| (c.status.to_string(), c.reason.clone(), c.message.clone()))
        })
        .collect();
    key_of(&(installation.seed_name(), checked))
}

/// The Seed of an installation.
pub fn installation_seed(installation: ControllerInstallation) -> Option<ObjectRef<Seed>> {
    installation.seed_name().map(ObjectRef::new)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn installation(conditions: serde_json::Value) -> ControllerInstallation {
        serde_json::from_value(json!({"metadata": {"name": "ci"},
            "spec": {"registrationRef": {"name": "r"}, "seedRef": {"name": "s"}},
            "status": {"conditions": conditions}}))
        .unwrap()
    }

    fn condition(type_: &str, status: &str, time: &str) -> serde_json::Value {
        json!({"type": type_, "status": status, "reason": "r", "message": "m",
            "lastTransitionTime": time, "lastUpdateTime": time})
    }

    #[test]
    fn installation_key_ignores_times_and_required() {
        let a = installation(json!([condition(
            "Healthy",
            "True",
            "2024-01-01T00:00:00Z"
        )]));
        let b = installation(json!([
            condition("Healthy", "True", "2024-02-01T00:00:00Z"),
            condition("Required", "True", "2024-01-01T00:00:00Z")
        ]));
        let c = installation(json!([condition(
            "Healthy",
            "False",
            "2024-01-01T00:00:00Z"
        )]));
        assert_eq!(installation_key(&a), installation_key(&b));
        assert_ne!(installation_key(&a), installation_key(&c));
    }

    #[test]
    fn settings_take_the_extensions_ready_threshold() {
        let mut config = seedlet_config::GardenControllerConfiguration::default();
        config
            .controllers
            .seed_extensions_check
            .condition_thresholds = vec![seedlet_config::ConditionThreshold {
            condition_type: "ExtensionsReady".into(),
            duration: seedlet_config::Duration::from_secs(60),
        }];
        let settings = super::settings(&config);
        assert_eq!(settings.threshold, Some(std::time::Duration::from_secs(60)));
        assert_eq!(settings.sync_period, std::time::Duration::from_secs(30));
    }
}
