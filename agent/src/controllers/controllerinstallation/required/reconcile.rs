//! One required pass (spec §2.9): from the registration's kind/type pairs and the known type sets
//! decide `Required` (pure, [`required_condition`]) and write it on change.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};

use seedlet_api::conditions::{Condition, ConditionStatus, find_or_init};
use seedlet_api::core::{ControllerInstallation, ControllerRegistration, ControllerResource};
use seedlet_api::names::{condition_types, reasons};

use super::Required;
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::status::update_conditions;

/// Errors of one required pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the ControllerRegistration failed.
    #[error("reading controller registration {name}")]
    ReadRegistration {
        /// Registration name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the condition failed.
    #[error("writing Required of controller installation {name}")]
    WriteCondition {
        /// Installation name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::ReadRegistration { .. } => "RegistrationReadError",
            Error::WriteCondition { .. } => "ConditionWriteError",
        }
    }
}

impl Reconciler for Required {
    type Object = ControllerInstallation;
    type Error = Error;
    const NAME: &'static str = super::NAME;

    /// Runs one required pass for `ci`.
    async fn reconcile(&self, ci: Arc<ControllerInstallation>) -> Result<Action, Error> {
        required(&ci, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn required(ci: &ControllerInstallation, ctx: &Required) -> Result<Action, Error> {
    if ci.seed_name() != Some(ctx.seed_name.as_str()) {
        return Ok(Action::await_change());
    }
    let garden = ctx.garden.client();
    let registration_name = ci.spec.registration_ref.name.clone();
    let registration = Api::<ControllerRegistration>::all(garden.clone())
        .get(&registration_name)
        .await
        .map_err(|source| Error::ReadRegistration {
            name: registration_name,
            source,
        })?;
    let now = ctx.clock.now();
    let previous = find_or_init(ci.conditions(), condition_types::REQUIRED, now);
    let Some(next) = required_condition(
        &registration.spec.resources,
        |kind| ctx.kinds.types(kind),
        &previous,
        now,
    ) else {
        return Ok(Action::await_change());
    };
    let name = ci.name_any();
    update_conditions(&Api::<ControllerInstallation>::all(garden), &name, &[next])
        .await
        .map_err(|source| Error::WriteCondition { name, source })?;
    Ok(Action::await_change())
}

/// `Required` from the registration's resources and the known type sets (`None` per kind while
/// undecided): any match → True `ExtensionObjectsExist`; none but some undecided → no change
/// (`None`); otherwise (also without resources) False `NoExtensionObjects`.
pub fn required_condition(
    resources: &[ControllerResource],
    types_of: impl Fn(&str) -> Option<BTreeSet<String>>,
    previous: &Condition,
    now: jiff::Timestamp,
) -> Option<Condition> {
    let mut required = Vec::new();
    let mut undecided = false;
    for resource in resources {
        match types_of(&resource.kind) {
            None => undecided = true,
            Some(types) if types.contains(&resource.type_) => required.push(
                seedlet_api::extensions::kind_type(&resource.kind, &resource.type_),
            ),
            Some(_) => {}
        }
    }
    if !required.is_empty() {
        let message = format!(
            "extension objects still exist in the seed: [{}]",
            required.join(" ")
        );
        return Some(previous.updated(
            ConditionStatus::True,
            reasons::EXTENSION_OBJECTS_EXIST,
            message,
            now,
        ));
    }
    if undecided {
        return None;
    }
    Some(previous.updated(
        ConditionStatus::False,
        reasons::NO_EXTENSION_OBJECTS,
        reasons::NO_EXTENSION_OBJECTS_MESSAGE,
        now,
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn resource(kind: &str, type_: &str) -> ControllerResource {
        ControllerResource {
            kind: kind.into(),
            type_: type_.into(),
            ..Default::default()
        }
    }

    fn now() -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_700_000_000).unwrap()
    }

    #[test]
    fn required_follows_known_type_sets() {
        let known: BTreeMap<&str, BTreeSet<String>> = BTreeMap::from([
            ("BackupBucket", BTreeSet::from(["local".to_owned()])),
            ("Network", BTreeSet::new()),
        ]);
        let types_of = |kind: &str| known.get(kind).cloned();
        let previous = Condition::initialized("Required", now());
        // (resources, expected (status, reason) or None for no change)
        type Case = (
            Vec<ControllerResource>,
            Option<(&'static str, &'static str)>,
        );
        let cases: Vec<Case> = vec![
            (
                vec![resource("BackupBucket", "local")],
                Some(("True", "ExtensionObjectsExist")),
            ),
            (
                vec![resource("Network", "calico")],
                Some(("False", "NoExtensionObjects")),
            ),
            (vec![], Some(("False", "NoExtensionObjects"))),
            (vec![resource("Worker", "local")], None),
            (
                vec![
                    resource("Worker", "local"),
                    resource("BackupBucket", "local"),
                ],
                Some(("True", "ExtensionObjectsExist")),
            ),
        ];
        for (resources, expected) in cases {
            let got = required_condition(&resources, types_of, &previous, now());
            let got = got.as_ref().map(|c| (c.status.as_str(), c.reason.as_str()));
            assert_eq!(got, expected, "{resources:?}");
        }
    }

    #[test]
    fn required_message_lists_kind_type_pairs() {
        let types_of = |_: &str| Some(BTreeSet::from(["local".to_owned()]));
        let previous = Condition::initialized("Required", now());
        let condition = required_condition(
            &[resource("BackupBucket", "local")],
            types_of,
            &previous,
            now(),
        )
        .unwrap();
        assert_eq!(
            condition.message,
            "extension objects still exist in the seed: [BackupBucket/local]"
        );
    }
}
