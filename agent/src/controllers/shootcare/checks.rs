//! The single checks of shoot care, each over objects read from the seed (spec §7.3, §7.4): the
//! health reports extensions put into their `status.conditions` (with the staleness of their
//! controller's heartbeat), the `Resources*` conditions of ManagedResources, and the control-plane
//! Deployments. Each returns the first problem as a [`Finding`], `None` when all is well. Pure.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::names::{condition_types, managed_resources};
use seedlet_api::resources::ManagedResource;

use crate::resource_health::check_health;
use seedlet_api::names::parses_as_true;

/// Label on a ManagedResource naming the shoot condition its health feeds.
pub const CARE_CONDITION_TYPE_LABEL: &str = "care.gardener.cloud/condition-type";

/// A problem one check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// A failure: the condition goes through the threshold rule (`Progressing` or `False`).
    Failed {
        /// CamelCase reason.
        reason: String,
        /// What failed.
        message: String,
        /// Error codes the source reported.
        codes: Vec<String>,
    },
    /// A status taken over as it is (an extension reporting `Progressing`, an outdated report).
    Reported {
        /// The status.
        status: ConditionStatus,
        /// CamelCase reason.
        reason: String,
        /// Details.
        message: String,
        /// Error codes the source reported.
        codes: Vec<String>,
    },
}

impl Finding {
    fn failed(reason: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding::Failed {
            reason: reason.into(),
            message: message.into(),
            codes: Vec::new(),
        }
    }
}

/// One health condition an extension object reports, with what is known about its controller.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtensionReport {
    /// Kind of the extension object (`Worker`, `Extension`, ...).
    pub kind: String,
    /// Its namespace (empty for the cluster-scoped BackupEntry).
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The reported condition.
    pub condition: Condition,
    /// `spec.renewTime` of the heartbeat Lease of the extension's controller; `None` when the
    /// Lease, its renew time, or the controller serving the kind and type is missing.
    pub heartbeat: Option<Timestamp>,
}

/// The first problem among the extension reports for one condition type, in the given order: a
/// report whose heartbeat is older than `stale_after` (or missing) is `Unknown`
/// (`<Kind>OutdatedHealthCheckReport`) whatever it says; `Progressing` is taken over; `False` and
/// `Unknown` are failures (`<Kind>UnhealthyReport`) carrying the reported codes.
pub fn extension_finding(
    reports: &[ExtensionReport],
    stale_after: Option<Duration>,
    now: Timestamp,
) -> Option<Finding> {
    for report in reports {
        let object = format!("{}/{}", report.namespace, report.name);
        if let Some(threshold) = stale_after {
            let threshold = SignedDuration::try_from(threshold).unwrap_or(SignedDuration::MAX);
            let outdated = report
                .heartbeat
                .is_none_or(|renewed| now.duration_since(renewed) > threshold);
            if outdated {
                let heartbeat = report.heartbeat.map_or_else(
                    || "its controller has no heartbeat Lease".to_owned(),
                    |renewed| format!("its controller last renewed its heartbeat at {renewed}"),
                );
                return Some(Finding::Reported {
                    status: ConditionStatus::Unknown,
                    reason: format!("{}OutdatedHealthCheckReport", report.kind),
                    message: format!(
                        "{} extension ({object}) reports an outdated health status: {heartbeat}.",
                        report.kind
                    ),
                    codes: Vec::new(),
                });
            }
        }
        let condition = &report.condition;
        match condition.status {
            ConditionStatus::Progressing => {
                return Some(Finding::Reported {
                    status: ConditionStatus::Progressing,
                    reason: format!("{}{}", report.kind, condition.reason),
                    message: condition.message.clone(),
                    codes: condition.codes.clone(),
                });
            }
            ConditionStatus::False | ConditionStatus::Unknown => {
                return Some(Finding::Failed {
                    reason: format!("{}UnhealthyReport", report.kind),
                    message: format!(
                        "{} extension ({object}) reports failing health check: {}",
                        report.kind, condition.message
                    ),
                    codes: condition.codes.clone(),
                });
            }
            ConditionStatus::True | ConditionStatus::Other(_) => {}
        }
    }
    None
}

/// Which shoot condition a ManagedResource of the control-plane namespace feeds.
pub fn feeds(mr: &ManagedResource, condition_type: &str) -> bool {
    let label = mr
        .labels()
        .get(CARE_CONDITION_TYPE_LABEL)
        .map_or("", String::as_str);
    match condition_type {
        condition_types::CONTROL_PLANE_HEALTHY => {
            mr.spec.class.is_some() && (label.is_empty() || label == condition_type)
        }
        condition_types::OBSERVABILITY_COMPONENTS_HEALTHY => label == condition_type,
        condition_types::SYSTEM_COMPONENTS_HEALTHY => {
            mr.spec.class.is_none() || label == condition_type
        }
        _ => false,
    }
}

/// The first problem among `resources` that feed `condition_type` (see [`managed_resource_finding`]).
pub fn managed_resources_finding(
    resources: &[ManagedResource],
    condition_type: &str,
    progressing_threshold: Option<Duration>,
    now: Timestamp,
) -> Option<Finding> {
    resources
        .iter()
        .filter(|mr| feeds(mr, condition_type))
        .find_map(|mr| managed_resource_finding(mr, progressing_threshold, now))
}

/// The problem of one ManagedResource: an outdated status (or its apply failure), then
/// `ResourcesApplied`/`ResourcesHealthy` not `False`/`Unknown`, `ResourcesProgressing` not
/// `True`/`Unknown` (a `True` younger than `progressing_threshold` is tolerated; past it the
/// rollout is stuck), and all three present.
pub fn managed_resource_finding(
    mr: &ManagedResource,
    progressing_threshold: Option<Duration>,
    now: Timestamp,
) -> Option<Finding> {
    let found = mr.conditions();
    let generation = mr.metadata.generation.unwrap_or_default();
    let observed = mr
        .status
        .as_ref()
        .and_then(|status| status.observed_generation)
        .unwrap_or_default();
    if generation != observed {
        let applied = conditions::find(found, condition_types::RESOURCES_APPLIED)
            .filter(|c| c.status == ConditionStatus::False && c.reason == "ApplyFailed");
        return Some(match applied {
            Some(applied) => Finding::failed(&applied.reason, &applied.message),
            None => Finding::failed(
                "OutdatedStatus",
                format!(
                    "observed generation of managed resource '{}/{}' outdated ({observed}/{generation})",
                    mr.namespace().unwrap_or_default(),
                    mr.name_any()
                ),
            ),
        });
    }
    let mut missing = Vec::new();
    for type_ in [
        condition_types::RESOURCES_APPLIED,
        condition_types::RESOURCES_HEALTHY,
        condition_types::RESOURCES_PROGRESSING,
    ] {
        let Some(condition) = conditions::find(found, type_) else {
            missing.push(type_);
            continue;
        };
        let fine = if type_ == condition_types::RESOURCES_PROGRESSING {
            not_progressing(condition, progressing_threshold, now)
        } else {
            !matches!(
                condition.status,
                ConditionStatus::False | ConditionStatus::Unknown
            )
        };
        if fine {
            continue;
        }
        if let (condition_types::RESOURCES_PROGRESSING, Some(threshold)) =
            (type_, progressing_threshold)
        {
            return Some(Finding::failed(
                "ProgressingRolloutStuck",
                format!(
                    "ManagedResource {} is progressing for more than {}",
                    mr.name_any(),
                    seedlet_config::Duration::from(threshold)
                ),
            ));
        }
        return Some(Finding::failed(&condition.reason, &condition.message));
    }
    if missing.is_empty() {
        return None;
    }
    Some(Finding::failed(
        "MissingManagedResourceCondition",
        format!(
            "ManagedResource {} is missing the following condition(s), [{}]",
            mr.name_any(),
            missing.join(" ")
        ),
    ))
}

/// `ResourcesProgressing` is fine when not `True`/`Unknown`, or `True` for less than the threshold.
fn not_progressing(condition: &Condition, threshold: Option<Duration>, now: Timestamp) -> bool {
    let progressing = matches!(
        condition.status,
        ConditionStatus::True | ConditionStatus::Unknown
    );
    if !progressing {
        return true;
    }
    threshold.is_some_and(|threshold| {
        let threshold = SignedDuration::try_from(threshold).unwrap_or(SignedDuration::MAX);
        condition.status == ConditionStatus::True
            && now.duration_since(condition.last_transition_time.0) < threshold
    })
}

/// The first unhealthy Deployment (`DeploymentUnhealthy`), in the order given.
pub fn deployments_finding(deployments: &[Deployment]) -> Option<Finding> {
    deployments.iter().find_map(|deployment| {
        let object = serde_json::to_value(deployment).ok()?;
        let error = check_health("apps", "Deployment", &object).err()?;
        Some(Finding::failed(
            "DeploymentUnhealthy",
            format!(
                "Deployment {:?} is unhealthy: {error}",
                deployment.name_any()
            ),
        ))
    })
}

/// The ManagedResources annotated `resources.gardener.cloud/ignore` with a true value.
pub fn ignored_managed_resources(resources: &[ManagedResource]) -> Vec<String> {
    resources
        .iter()
        .filter(|mr| {
            parses_as_true(
                mr.annotations()
                    .get(managed_resources::IGNORE)
                    .map(String::as_str),
            )
        })
        .map(ResourceExt::name_any)
        .collect()
}

#[cfg(test)]
mod tests;
