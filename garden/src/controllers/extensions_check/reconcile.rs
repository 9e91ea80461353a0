//! One extensions check: list the Seed's ControllerInstallations → decide `ExtensionsReady`
//! ([`extensions_ready`], pure) → merge-patch the Seed status when it changed.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use kube::{Api, ResourceExt};
use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::core::{ControllerInstallation, Seed};
use seedlet_api::names::{condition_types, field_managers, reasons};
use seedlet_runtime::controller::Reason;

use crate::controllers::field_selection::list_by_field;
use crate::controllers::seed_check::Check;

/// Message of an installation without conditions.
pub const NOT_YET_INSTALLED: &str = "extension was not yet installed";
/// Message of an installation lacking one of the checked conditions.
pub const MISSING_CONDITIONS: &str = "not all required conditions found in ControllerInstallation";

/// Errors of one extensions check.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Listing ControllerInstallations failed.
    #[error("listing controllerinstallations of seed {seed}")]
    ListInstallations {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing `ExtensionsReady` failed.
    #[error("patching ExtensionsReady of seed {seed}")]
    PatchSeed {
        /// Seed name.
        seed: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::ListInstallations { .. } => "ControllerInstallationListError",
            Error::PatchSeed { .. } => "SeedPatchError",
        }
    }
}

/// Checks one Seed (see the module docs).
///
/// # Errors
/// See [`Error`].
pub async fn check(seed: &Seed, ctx: &Check) -> Result<(), Error> {
    if seed.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let name = seed.name_any();
    let seeds: Api<Seed> = Api::all(ctx.client.clone());
    // The store copy may be older than our last write; read the latest status to merge into.
    let Some(seed) = seeds
        .get_opt(&name)
        .await
        .map_err(|source| Error::PatchSeed {
            seed: name.clone(),
            source,
        })?
    else {
        return Ok(());
    };
    // Only this Seed's where the garden can select them: listing every installation per Seed
    // check is S × N objects.
    let installations: Vec<ControllerInstallation> = list_by_field(
        &Api::<ControllerInstallation>::all(ctx.client.clone()),
        "spec.seedRef.name",
        &name,
    )
    .await
    .map_err(|source| Error::ListInstallations {
        seed: name.clone(),
        source,
    })?
    .into_iter()
    .filter(|installation| installation.seed_name() == Some(name.as_str()))
    .collect();
    let now = ctx.clock.now();
    let existing = seed.conditions();
    let previous = conditions::find_or_init(existing, condition_types::EXTENSIONS_READY, now);
    let next = extensions_ready(&installations, &previous, ctx.settings.threshold, now);
    if conditions::find(existing, condition_types::EXTENSIONS_READY)
        .is_some_and(|c| c.same_state(&next))
    {
        return Ok(());
    }
    let merged = conditions::merge(existing, [next]);
    seedlet_runtime::status::write_conditions(&seeds, &seed, &merged, Some(field_managers::GARDEN))
        .await
        .map_err(|source| Error::PatchSeed { seed: name, source })
}

/// The next `ExtensionsReady` from the installations (spec §3.3): the first failing class
/// (not valid, not installed, not healthy, progressing) passes the threshold rule of
/// [`conditions::progressing_or_false`]; otherwise `True` / `AllExtensionsReady`.
pub fn extensions_ready(
    installations: &[ControllerInstallation],
    previous: &Condition,
    threshold: Option<Duration>,
    now: Timestamp,
) -> Condition {
    let mut not_valid = BTreeMap::new();
    let mut not_installed = BTreeMap::new();
    let mut not_healthy = BTreeMap::new();
    let mut progressing = BTreeMap::new();
    for installation in installations {
        let name = installation.name_any();
        let found = installation.conditions();
        if found.is_empty() {
            not_installed.insert(name, NOT_YET_INSTALLED.to_owned());
            continue;
        }
        let mut missing = false;
        for type_ in super::CHECKED_CONDITIONS {
            let Some(condition) = conditions::find(found, type_) else {
                missing = true;
                continue;
            };
            let (failing, target) = match type_ {
                condition_types::VALID => {
                    (condition.status != ConditionStatus::True, &mut not_valid)
                }
                condition_types::INSTALLED => (
                    condition.status != ConditionStatus::True,
                    &mut not_installed,
                ),
                condition_types::HEALTHY => {
                    (condition.status != ConditionStatus::True, &mut not_healthy)
                }
                _ => (condition.status != ConditionStatus::False, &mut progressing),
            };
            if failing {
                target.insert(name.clone(), condition.message.clone());
            }
        }
        if missing {
            not_healthy
                .entry(name)
                .or_insert_with(|| MISSING_CONDITIONS.to_owned());
        }
    }
    let failure = [
        (
            not_valid,
            reasons::NOT_ALL_EXTENSIONS_VALID,
            "Some extensions are not valid",
        ),
        (
            not_installed,
            reasons::NOT_ALL_EXTENSIONS_INSTALLED,
            "Some extensions are not installed",
        ),
        (
            not_healthy,
            reasons::NOT_ALL_EXTENSIONS_HEALTHY,
            "Some extensions are not healthy",
        ),
        (
            progressing,
            reasons::SOME_EXTENSIONS_PROGRESSING,
            "Some extensions are progressing",
        ),
    ]
    .into_iter()
    .find(|(map, _, _)| !map.is_empty());
    match failure {
        Some((map, reason, text)) => {
            let message = format!("{text}: {}", go_map(&map));
            conditions::progressing_or_false(previous, threshold, reason, &message, now)
        }
        None => previous.updated(
            ConditionStatus::True,
            reasons::ALL_EXTENSIONS_READY,
            reasons::ALL_EXTENSIONS_READY_MESSAGE,
            now,
        ),
    }
}

/// A map printed like Go's `%v`: `map[a:x b:y]`, keys sorted.
pub fn go_map(map: &BTreeMap<String, String>) -> String {
    let entries: Vec<String> = map
        .iter()
        .map(|(key, value)| format!("{key}:{value}"))
        .collect();
    format!("map[{}]", entries.join(" "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn installation(name: &str, statuses: &[(&str, &str)]) -> ControllerInstallation {
        let conditions: Vec<_> = statuses
            .iter()
            .map(|(type_, status)| {
                json!({"type": type_, "status": status, "reason": "r", "message": format!("{type_} is {status}"),
                    "lastTransitionTime": "2024-01-01T00:00:00Z", "lastUpdateTime": "2024-01-01T00:00:00Z"})
            })
            .collect();
        serde_json::from_value(json!({"metadata": {"name": name},
            "spec": {"registrationRef": {"name": "r"}, "seedRef": {"name": "s"}},
            "status": {"conditions": conditions}}))
        .unwrap()
    }

    const READY: [(&str, &str); 4] = [
        ("Valid", "True"),
        ("Installed", "True"),
        ("Healthy", "True"),
        ("Progressing", "False"),
    ];

    #[test]
    fn extensions_ready_reports_first_failing_class() {
        let initial = Condition::initialized("ExtensionsReady", at(0));
        let cases: Vec<(Vec<ControllerInstallation>, ConditionStatus, &str, &str)> = vec![
            (
                vec![],
                ConditionStatus::True,
                "AllExtensionsReady",
                reasons::ALL_EXTENSIONS_READY_MESSAGE,
            ),
            (
                vec![installation("a", &READY)],
                ConditionStatus::True,
                "AllExtensionsReady",
                reasons::ALL_EXTENSIONS_READY_MESSAGE,
            ),
            (
                vec![installation("a", &[])],
                ConditionStatus::False,
                "NotAllExtensionsInstalled",
                "Some extensions are not installed: map[a:extension was not yet installed]",
            ),
            (
                vec![installation(
                    "a",
                    &[
                        ("Valid", "False"),
                        ("Installed", "False"),
                        ("Healthy", "True"),
                        ("Progressing", "False"),
                    ],
                )],
                ConditionStatus::False,
                "NotAllExtensionsValid",
                "Some extensions are not valid: map[a:Valid is False]",
            ),
            (
                vec![
                    installation(
                        "b",
                        &[
                            ("Valid", "True"),
                            ("Installed", "True"),
                            ("Healthy", "False"),
                            ("Progressing", "False"),
                        ],
                    ),
                    installation("a", &[("Valid", "True"), ("Installed", "True")]),
                ],
                ConditionStatus::False,
                "NotAllExtensionsHealthy",
                "Some extensions are not healthy: map[a:not all required conditions found in ControllerInstallation b:Healthy is False]",
            ),
            (
                vec![installation(
                    "a",
                    &[
                        ("Valid", "True"),
                        ("Installed", "True"),
                        ("Healthy", "True"),
                        ("Progressing", "True"),
                    ],
                )],
                ConditionStatus::False,
                "SomeExtensionsProgressing",
                "Some extensions are progressing: map[a:Progressing is True]",
            ),
        ];
        for (installations, status, reason, message) in cases {
            let got = extensions_ready(&installations, &initial, None, at(10));
            assert_eq!(
                (got.status, got.reason.as_str(), got.message.as_str()),
                (status, reason, message)
            );
        }
    }

    #[test]
    fn failure_of_a_ready_seed_is_progressing_within_threshold_then_false() {
        let ready = Condition::initialized("ExtensionsReady", at(0)).updated(
            ConditionStatus::True,
            "AllExtensionsReady",
            "ok",
            at(0),
        );
        let failing = [installation("a", &[])];
        let threshold = Some(Duration::from_secs(60));
        let first = extensions_ready(&failing, &ready, threshold, at(10));
        assert_eq!(first.status, ConditionStatus::Progressing);
        let within = extensions_ready(&failing, &first, threshold, at(60));
        assert_eq!(within.status, ConditionStatus::Progressing);
        let after = extensions_ready(&failing, &within, threshold, at(80));
        assert_eq!(after.status, ConditionStatus::False);
        let without_threshold = extensions_ready(&failing, &ready, None, at(10));
        assert_eq!(without_threshold.status, ConditionStatus::False);
    }

    #[test]
    fn go_map_prints_sorted_entries() {
        let map: BTreeMap<String, String> =
            [("b".into(), "y".into()), ("a".into(), "x".into())].into();
        assert_eq!(go_map(&map), "map[a:x b:y]");
        assert_eq!(go_map(&BTreeMap::new()), "map[]");
    }
}
