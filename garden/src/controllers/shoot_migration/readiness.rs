//! Pure migration decisions: whether a Shoot is migrating, whether the destination seed is ready
//! for it, and the `ReadyForMigration` constraint that says so.

use jiff::Timestamp;
use seedlet_api::common::LastOperationType;
use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::{condition_types, shoot_lifecycle};

/// Message of a ready destination.
pub const READY_MESSAGE: &str = "Destination seed cluster is ready for the shoot migration";
/// Message of a deleting destination.
pub const IN_DELETION_MESSAGE: &str = "Seed is being deleted";

/// What the trigger looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationView {
    /// `spec.seedName`.
    pub spec_seed: Option<String>,
    /// Whether the Shoot is migrating.
    pub migrating: bool,
    /// Whether `ReadyForMigration` is among the constraints.
    pub constrained: bool,
    /// Whether the last operation is a `Migrate`.
    pub migrate_operation: bool,
}

/// The Shoot's view.
pub fn view(shoot: &Shoot) -> MigrationView {
    MigrationView {
        spec_seed: shoot.spec.seed_name.clone(),
        migrating: migration(shoot).is_some(),
        constrained: conditions::find(constraints(shoot), shoot_lifecycle::READY_FOR_MIGRATION)
            .is_some(),
        migrate_operation: shoot.last_operation_is(LastOperationType::Migrate),
    }
}

/// The trigger: a migrating Shoot's first sighting, a changed `spec.seedName`, or a constraint
/// present while the last operation is not a migration (to be kept or removed).
pub fn relevant(previous: Option<&MigrationView>, current: &MigrationView) -> bool {
    let changed_seed = match previous {
        None => current.migrating,
        Some(previous) => previous.spec_seed != current.spec_seed,
    };
    changed_seed || (current.constrained && !current.migrate_operation)
}

/// `(source, destination)` seed names when `spec.seedName` and `status.seedName` are both set
/// and differ.
pub fn migration(shoot: &Shoot) -> Option<(String, String)> {
    let destination = shoot.spec.seed_name.as_deref()?;
    let source = shoot.status.as_ref()?.seed_name.as_deref()?;
    (source != destination).then(|| (source.to_owned(), destination.to_owned()))
}

/// The Shoot's constraints.
pub fn constraints(shoot: &Shoot) -> &[Condition] {
    shoot
        .status
        .as_ref()
        .map(|status| status.constraints.as_slice())
        .unwrap_or_default()
}

/// Why the destination seed is not ready for a migration from `source`, or `Ok`.
///
/// # Errors
/// The first failed check's message.
pub fn check_destination(source: &Seed, destination: &Seed) -> Result<(), String> {
    let version = |seed: &Seed| {
        seed.status
            .as_ref()
            .and_then(|status| status.gardener.as_ref())
            .map(|gardener| gardener.version.clone())
    };
    let (Some(source_version), Some(destination_version)) = (version(source), version(destination))
    else {
        return Err(
            "missing Gardener version information on source or destination seed".to_owned(),
        );
    };
    if source_version != destination_version {
        return Err(format!(
            "observing Gardener version not up to date ({destination_version}/{source_version})"
        ));
    }
    let observed = destination
        .status
        .as_ref()
        .and_then(|status| status.observed_generation)
        .unwrap_or(0);
    let generation = destination.metadata.generation.unwrap_or(0);
    if observed < generation {
        return Err(format!(
            "observed generation outdated ({observed}/{generation})"
        ));
    }
    for type_ in [
        condition_types::GARDENLET_READY,
        condition_types::SEED_SYSTEM_COMPONENTS_HEALTHY,
    ] {
        let Some(condition) = conditions::find(destination.conditions(), type_) else {
            return Err(format!("condition \"{type_}\" is missing"));
        };
        if !condition.is_true() {
            return Err(format!(
                "condition \"{type_}\" has invalid status {} (expected True) due to {}: {}",
                condition.status, condition.reason, condition.message
            ));
        }
    }
    Ok(())
}

/// The `ReadyForMigration` constraint for `destination` (status, reason, message), starting from
/// the stored one.
pub fn constraint(
    stored: &[Condition],
    source: &Seed,
    destination: &Seed,
    now: Timestamp,
) -> Condition {
    let current = conditions::find_or_init(stored, shoot_lifecycle::READY_FOR_MIGRATION, now);
    if destination.metadata.deletion_timestamp.is_some() {
        return current.updated(
            ConditionStatus::False,
            shoot_lifecycle::DESTINATION_SEED_IN_DELETION,
            IN_DELETION_MESSAGE,
            now,
        );
    }
    match check_destination(source, destination) {
        Ok(()) => current.updated(
            ConditionStatus::True,
            shoot_lifecycle::DESTINATION_SEED_READY,
            READY_MESSAGE,
            now,
        ),
        Err(message) => current.updated(
            ConditionStatus::False,
            shoot_lifecycle::DESTINATION_SEED_UNREADY,
            message,
            now,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(
        version: Option<&str>,
        generation: i64,
        observed: i64,
        conditions: &[(&str, &str)],
    ) -> Seed {
        let mut status = serde_json::json!({
            "observedGeneration": observed,
            "conditions": conditions.iter().map(|(type_, status)| serde_json::json!({
                "type": type_, "status": status, "reason": "Checked", "message": "all good",
                "lastTransitionTime": "2025-01-01T00:00:00Z", "lastUpdateTime": "2025-01-01T00:00:00Z",
            })).collect::<Vec<_>>(),
        });
        if let Some(version) = version {
            status["gardener"] =
                serde_json::json!({"id": "x", "name": "gardenlet", "version": version});
        }
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "dest", "generation": generation},
            "spec": {"provider": {"type": "local", "region": "local"}, "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}},
            "status": status,
        }))
        .expect("seed")
    }

    const READY: &[(&str, &str)] = &[
        ("GardenletReady", "True"),
        ("SeedSystemComponentsHealthy", "True"),
    ];

    #[test]
    fn destination_checks_report_the_first_failure() {
        let source = seed(Some("1.0"), 1, 1, READY);
        let table = [
            (seed(Some("1.0"), 2, 2, READY), Ok(())),
            (
                seed(None, 1, 1, READY),
                Err("missing Gardener version information on source or destination seed"),
            ),
            (
                seed(Some("1.1"), 1, 1, READY),
                Err("observing Gardener version not up to date (1.1/1.0)"),
            ),
            (
                seed(Some("1.0"), 3, 2, READY),
                Err("observed generation outdated (2/3)"),
            ),
            (
                seed(Some("1.0"), 1, 1, &[("GardenletReady", "True")]),
                Err("condition \"SeedSystemComponentsHealthy\" is missing"),
            ),
            (
                seed(
                    Some("1.0"),
                    1,
                    1,
                    &[
                        ("GardenletReady", "Unknown"),
                        ("SeedSystemComponentsHealthy", "True"),
                    ],
                ),
                Err(
                    "condition \"GardenletReady\" has invalid status Unknown (expected True) due to Checked: all good",
                ),
            ),
        ];
        for (destination, expected) in table {
            assert_eq!(
                check_destination(&source, &destination),
                expected.map_err(str::to_owned)
            );
        }
    }

    #[test]
    fn constraint_says_why_and_deleting_destinations_win() {
        let now: Timestamp = "2025-01-06T10:00:00Z".parse().expect("time");
        let source = seed(Some("1.0"), 1, 1, READY);
        let ready = constraint(&[], &source, &seed(Some("1.0"), 1, 1, READY), now);
        assert_eq!(
            (
                ready.status.as_str(),
                ready.reason.as_str(),
                ready.message.as_str()
            ),
            ("True", "DestinationSeedReady", READY_MESSAGE)
        );
        let mut deleting = seed(Some("1.0"), 1, 1, READY);
        deleting.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now));
        let gone = constraint(std::slice::from_ref(&ready), &source, &deleting, now);
        assert_eq!(
            (
                gone.status.as_str(),
                gone.reason.as_str(),
                gone.message.as_str()
            ),
            ("False", "DestinationSeedInDeletion", IN_DELETION_MESSAGE)
        );
        let unready = constraint(&[ready], &source, &seed(Some("2.0"), 1, 1, READY), now);
        assert_eq!(unready.reason, "DestinationSeedUnready");
    }

    #[test]
    fn trigger_passes_migrations_seed_changes_and_stale_constraints() {
        let idle = MigrationView {
            spec_seed: Some("a".into()),
            migrating: false,
            constrained: false,
            migrate_operation: false,
        };
        let moving = MigrationView {
            spec_seed: Some("b".into()),
            migrating: true,
            ..idle.clone()
        };
        let stale = MigrationView {
            constrained: true,
            ..idle.clone()
        };
        let migrating_with_constraint = MigrationView {
            constrained: true,
            migrate_operation: true,
            ..moving.clone()
        };
        assert!(!relevant(None, &idle));
        assert!(relevant(None, &moving));
        assert!(relevant(Some(&idle), &moving));
        assert!(!relevant(Some(&idle), &idle));
        assert!(relevant(Some(&idle), &stale));
        assert!(!relevant(
            Some(&migrating_with_constraint),
            &migrating_with_constraint
        ));
    }
}
