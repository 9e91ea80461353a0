//! The `Valid` and `Installed` conditions one reconcile leaves, and the pure decisions that set
//! them for missing or unreadable references (the messages are gardenlet's).

use kube::Api;
use seedlet_api::conditions::{Condition, ConditionStatus, find_or_init};
use seedlet_api::core::{ControllerInstallation, ControllerRegistration, Seed};
use seedlet_api::names::{condition_types, reasons};
use seedlet_runtime::events::EventType;
use seedlet_runtime::status::update_conditions;

use super::Error;

/// `Valid` and `Installed` as this reconcile leaves them.
pub struct Conditions {
    pub valid: Condition,
    pub installed: Condition,
    pub installed_touched: bool,
    pub now: jiff::Timestamp,
    /// `Installed` status and reason before this reconcile, to tell a transition.
    installed_before: (ConditionStatus, String),
}

impl Conditions {
    pub fn load(ci: &ControllerInstallation, now: jiff::Timestamp) -> Self {
        let installed = find_or_init(ci.conditions(), condition_types::INSTALLED, now);
        Self {
            valid: find_or_init(ci.conditions(), condition_types::VALID, now),
            installed_before: (installed.status.clone(), installed.reason.clone()),
            installed,
            installed_touched: false,
            now,
        }
    }

    /// Fresh `Valid` and `Installed` for the deletion flow, which rewrites both (upstream's quirk of
    /// picking list positions is not copied); the transition is still judged against `ci`'s.
    pub fn for_deletion(ci: &ControllerInstallation, now: jiff::Timestamp) -> Self {
        Self {
            valid: Condition::initialized(condition_types::VALID, now),
            installed: Condition::initialized(condition_types::INSTALLED, now),
            installed_touched: true,
            ..Self::load(ci, now)
        }
    }

    /// The Event for the change of `Installed` this reconcile made, if it is worth one.
    pub fn installed_event(&self) -> Option<(EventType, &str, &str)> {
        if !self.installed_touched {
            return None;
        }
        let before = (&self.installed_before.0, self.installed_before.1.as_str());
        super::super::events::installed_event(Some(before), &self.installed)
    }

    pub fn valid(&mut self, status: ConditionStatus, reason: &str, message: &str) {
        self.valid = self.valid.updated(status, reason, message, self.now);
    }

    pub fn installed(&mut self, status: ConditionStatus, reason: &str, message: &str) {
        self.installed = self.installed.updated(status, reason, message, self.now);
        self.installed_touched = true;
    }

    /// Writes `Valid` (always) and `Installed` (when this reconcile changed it).
    ///
    /// # Errors
    /// The read or patch error.
    pub async fn write(
        &self,
        api: &Api<ControllerInstallation>,
        name: &str,
    ) -> Result<bool, kube::Error> {
        let mut updates = vec![self.valid.clone()];
        if self.installed_touched {
            updates.push(self.installed.clone());
        }
        update_conditions(api, name, &updates).await
    }
}

/// The registration, or the `Valid` condition and error for a missing or unreadable one.
pub fn registration_or_condition(
    read: Result<Option<ControllerRegistration>, kube::Error>,
    registration_name: &str,
    conditions: &mut Conditions,
) -> Result<ControllerRegistration, Error> {
    let name = registration_name.to_owned();
    match read {
        Ok(Some(registration)) => Ok(registration),
        Ok(None) => {
            let message = format!(
                "Referenced ControllerRegistration does not exist: controllerregistrations.core.gardener.cloud {name:?} not found"
            );
            conditions.valid(
                ConditionStatus::False,
                reasons::REGISTRATION_NOT_FOUND,
                &message,
            );
            Err(Error::RegistrationNotFound { name })
        }
        Err(source) => {
            conditions.valid(
                ConditionStatus::Unknown,
                reasons::REGISTRATION_READ_ERROR,
                &format!("Referenced ControllerRegistration cannot be read: {source}"),
            );
            Err(Error::ReadRegistration { name, source })
        }
    }
}

/// The Seed, or the `Valid` condition and error for a missing or unreadable one.
pub fn seed_or_condition(
    read: Result<Option<Seed>, kube::Error>,
    seed_name: &str,
    conditions: &mut Conditions,
) -> Result<Seed, Error> {
    let seed_name = seed_name.to_owned();
    match read {
        Ok(Some(seed)) => Ok(seed),
        Ok(None) => {
            conditions.valid(ConditionStatus::False, reasons::SEED_NOT_FOUND, &format!("Referenced Seed does not exist: seeds.core.gardener.cloud {seed_name:?} not found"));
            Err(Error::SeedNotFound { name: seed_name })
        }
        Err(source) => {
            conditions.valid(
                ConditionStatus::Unknown,
                reasons::SEED_READ_ERROR,
                &format!("Referenced Seed cannot be read: {source}"),
            );
            Err(Error::ReadSeed {
                name: seed_name,
                source,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(second: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(second).unwrap()
    }

    fn server_error() -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("etcd timeout", "InternalError")
                .with_code(500)
                .boxed(),
        )
    }

    #[test]
    fn valid_is_false_with_gardenlets_message_when_the_seed_is_missing() {
        let mut conditions = Conditions::load(&ControllerInstallation::default(), at(10));
        let error = seed_or_condition(Ok(None), "local", &mut conditions).unwrap_err();
        assert!(matches!(error, Error::SeedNotFound { .. }));
        assert_eq!(conditions.valid.status, ConditionStatus::False);
        assert_eq!(conditions.valid.reason, reasons::SEED_NOT_FOUND);
        assert_eq!(
            conditions.valid.message,
            "Referenced Seed does not exist: seeds.core.gardener.cloud \"local\" not found"
        );
        assert!(!conditions.installed_touched);
    }

    #[test]
    fn valid_is_unknown_when_the_registration_cannot_be_read() {
        let mut conditions = Conditions::load(&ControllerInstallation::default(), at(10));
        let error =
            registration_or_condition(Err(server_error()), "ext", &mut conditions).unwrap_err();
        assert!(matches!(error, Error::ReadRegistration { .. }));
        assert_eq!(conditions.valid.status, ConditionStatus::Unknown);
        assert_eq!(conditions.valid.reason, reasons::REGISTRATION_READ_ERROR);
    }

    #[test]
    fn found_references_leave_the_conditions_alone() {
        let mut conditions = Conditions::load(&ControllerInstallation::default(), at(10));
        let before = conditions.valid.clone();
        assert!(seed_or_condition(Ok(Some(Seed::default())), "local", &mut conditions).is_ok());
        assert!(
            registration_or_condition(
                Ok(Some(ControllerRegistration::default())),
                "ext",
                &mut conditions
            )
            .is_ok()
        );
        assert_eq!(conditions.valid, before);
    }
}
