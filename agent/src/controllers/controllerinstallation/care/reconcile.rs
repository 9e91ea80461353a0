//! One care pass (spec §2.8): read the ManagedResource `garden/<installation>` in the seed and
//! derive `Installed`, `Healthy` and `Progressing` (pure, [`care_conditions`]); write them.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};

use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::core::ControllerInstallation;
use seedlet_api::names::{condition_types, namespaces, reasons};
use seedlet_api::resources::ManagedResource;

use super::Care;
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::retry::{self, RetryPolicy};
use seedlet_runtime::status::update_conditions;

use crate::controllers::controllerinstallation::events::installed_event;

/// Requeue delay while the ManagedResource does not exist yet.
pub const MISSING_REQUEUE: Duration = Duration::from_secs(1);

/// Errors of one care pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the ManagedResource failed.
    #[error("reading managed resource garden/{name}")]
    ReadManagedResource {
        /// Name.
        name: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the conditions failed.
    #[error("writing conditions of controller installation {name}")]
    WriteConditions {
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
            Error::ReadManagedResource { .. } => reasons::SEED_READ_ERROR,
            Error::WriteConditions { .. } => "ConditionsWriteError",
        }
    }
}

impl Reconciler for Care {
    type Object = ControllerInstallation;
    type Error = Error;
    const NAME: &'static str = super::NAME;

    /// Runs one care pass for `ci`.
    async fn reconcile(&self, ci: Arc<ControllerInstallation>) -> Result<Action, Error> {
        care(&ci, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(2).min(self.sync_period)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// Every installation's care runs again each `syncPeriod`, by the runtime's resync.
    fn resync_period(&self) -> Option<Duration> {
        Some(self.sync_period)
    }
}

async fn care(ci: &ControllerInstallation, ctx: &Care) -> Result<Action, Error> {
    if ci.seed_name() != Some(ctx.seed_name.as_str()) || ci.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let name = ci.name_any();
    let garden: Api<ControllerInstallation> = Api::all(ctx.garden.client());
    let managed_resources: Api<ManagedResource> =
        Api::namespaced(ctx.seed.clone(), namespaces::GARDEN);
    let now = ctx.clock.now();
    let (garden, name) = (&garden, &name);
    let write = move |updates: Vec<Condition>| async move {
        update_conditions(garden, name, &updates)
            .await
            .map_err(|source| Error::WriteConditions {
                name: name.clone(),
                source,
            })
    };
    match retry::idempotent(&RetryPolicy::RECONCILE, || managed_resources.get(name)).await {
        Ok(mr) => {
            let updates = care_conditions(&mr, name, ci.conditions(), now);
            write(updates.to_vec()).await?;
            let before = conditions::find(ci.conditions(), condition_types::INSTALLED)
                .map(|c| (&c.status, c.reason.as_str()));
            let installed = updates
                .iter()
                .find(|c| c.type_ == condition_types::INSTALLED);
            if let Some((kind, reason, note)) =
                installed.and_then(|after| installed_event(before, after))
            {
                ctx.events
                    .publish(ci, kind, reason, "Reconcile", note)
                    .await;
            }
            Ok(Action::requeue(ctx.sync_period))
        }
        Err(source) => {
            let message = format!("Failed to get ManagedResource \"garden/{name}\": {source}");
            let updates = [
                condition_types::INSTALLED,
                condition_types::HEALTHY,
                condition_types::PROGRESSING,
            ]
            .map(|type_| {
                conditions::find_or_init(ci.conditions(), type_, now).updated(
                    ConditionStatus::Unknown,
                    reasons::SEED_READ_ERROR,
                    message.clone(),
                    now,
                )
            });
            write(updates.to_vec()).await?;
            match source {
                kube::Error::Api(status) if status.is_not_found() => {
                    Ok(Action::requeue(MISSING_REQUEUE))
                }
                source => Err(Error::ReadManagedResource {
                    name: name.clone(),
                    source,
                }),
            }
        }
    }
}

/// `Installed`, `Healthy` and `Progressing` from the ManagedResource (spec §2.8 steps 2–4).
pub fn care_conditions(
    mr: &ManagedResource,
    name: &str,
    existing: &[Condition],
    now: jiff::Timestamp,
) -> [Condition; 3] {
    let key = format!("garden/{name}");
    let old = |type_: &str| conditions::find_or_init(existing, type_, now);
    let status_conditions = mr.conditions();
    let check = |type_: &str, expected: ConditionStatus| -> Result<(), String> {
        match conditions::find(status_conditions, type_) {
            None => Err(format!(
                "condition {type_} for managed resource {key} has not been reported yet"
            )),
            Some(condition) if condition.status == expected => Ok(()),
            Some(condition) => Err(format!(
                "condition {type_} of managed resource {key} is {}: {}",
                condition.status, condition.message
            )),
        }
    };

    let observed = mr
        .status
        .as_ref()
        .and_then(|s| s.observed_generation)
        .unwrap_or(0);
    let generation = mr.metadata.generation.unwrap_or(0);
    let installed_check = if observed != generation {
        Err(format!(
            "observed generation of managed resource {key} outdated ({observed}/{generation})"
        ))
    } else {
        check(condition_types::RESOURCES_APPLIED, ConditionStatus::True)
    };
    let installed = match installed_check {
        Ok(()) => old(condition_types::INSTALLED).updated(
            ConditionStatus::True,
            reasons::INSTALLATION_SUCCESSFUL,
            reasons::INSTALLATION_SUCCESSFUL_MESSAGE,
            now,
        ),
        Err(message) => old(condition_types::INSTALLED).updated(
            ConditionStatus::False,
            reasons::INSTALLATION_PENDING,
            message,
            now,
        ),
    };
    let healthy = match check(condition_types::RESOURCES_HEALTHY, ConditionStatus::True) {
        Ok(()) => old(condition_types::HEALTHY).updated(
            ConditionStatus::True,
            reasons::CONTROLLER_HEALTHY,
            reasons::CONTROLLER_HEALTHY_MESSAGE,
            now,
        ),
        Err(message) => old(condition_types::HEALTHY).updated(
            ConditionStatus::False,
            reasons::CONTROLLER_NOT_HEALTHY,
            message,
            now,
        ),
    };
    let progressing = match check(
        condition_types::RESOURCES_PROGRESSING,
        ConditionStatus::False,
    ) {
        Ok(()) => old(condition_types::PROGRESSING).updated(
            ConditionStatus::False,
            reasons::CONTROLLER_ROLLED_OUT,
            reasons::CONTROLLER_ROLLED_OUT_MESSAGE,
            now,
        ),
        Err(message) => old(condition_types::PROGRESSING).updated(
            ConditionStatus::True,
            reasons::CONTROLLER_NOT_ROLLED_OUT,
            message,
            now,
        ),
    };
    [installed, healthy, progressing]
}

#[cfg(test)]
mod tests {
    use seedlet_api::resources::ManagedResourceStatus;

    use super::*;

    fn now() -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_700_000_000).unwrap()
    }

    fn mr(
        generation: i64,
        observed: i64,
        conditions: &[(&str, ConditionStatus, &str)],
    ) -> ManagedResource {
        let mut mr = ManagedResource::new("ci", Default::default());
        mr.metadata.generation = Some(generation);
        mr.status = Some(ManagedResourceStatus {
            observed_generation: Some(observed),
            conditions: conditions
                .iter()
                .map(|(type_, status, message)| {
                    Condition::initialized(*type_, now()).updated(
                        status.clone(),
                        "R",
                        *message,
                        now(),
                    )
                })
                .collect(),
            ..Default::default()
        });
        mr
    }

    fn summary(conditions: &[Condition; 3]) -> Vec<(String, String, String)> {
        conditions
            .iter()
            .map(|c| (c.status.to_string(), c.reason.clone(), c.message.clone()))
            .collect()
    }

    #[test]
    fn healthy_managed_resource_gives_installed_healthy_rolled_out() {
        use ConditionStatus::*;
        let mr = mr(
            1,
            1,
            &[
                ("ResourcesApplied", True, ""),
                ("ResourcesHealthy", True, ""),
                ("ResourcesProgressing", False, ""),
            ],
        );
        let out = care_conditions(&mr, "ci", &[], now());
        assert_eq!(
            summary(&out),
            [
                (
                    "True".into(),
                    "InstallationSuccessful".into(),
                    "The controller was successfully installed in the seed cluster.".into()
                ),
                (
                    "True".into(),
                    "ControllerHealthy".into(),
                    "The controller running in the seed cluster is healthy.".into()
                ),
                (
                    "False".into(),
                    "ControllerRolledOut".into(),
                    "The controller has been rolled out successfully.".into()
                ),
            ]
        );
    }

    #[test]
    fn outdated_generation_and_missing_conditions_are_reported() {
        use ConditionStatus::*;
        let mr = mr(
            2,
            1,
            &[
                ("ResourcesApplied", True, ""),
                ("ResourcesHealthy", False, "Deployment \"x\" is unhealthy"),
            ],
        );
        let out = care_conditions(&mr, "ci", &[], now());
        assert_eq!(
            summary(&out),
            [
                ("False".into(), "InstallationPending".into(), "observed generation of managed resource garden/ci outdated (1/2)".into()),
                ("False".into(), "ControllerNotHealthy".into(), "condition ResourcesHealthy of managed resource garden/ci is False: Deployment \"x\" is unhealthy".into()),
                ("True".into(), "ControllerNotRolledOut".into(), "condition ResourcesProgressing for managed resource garden/ci has not been reported yet".into()),
            ]
        );
    }
}
