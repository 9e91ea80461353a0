//! The five shoot conditions of one care pass (spec §7.2, §7.7, §7.9) from what the seed shows:
//! extension health reports, the ManagedResources and the control-plane Deployments of the
//! control-plane namespace. What needs the shoot's own API server (its `/healthz`, its nodes, the
//! tunnel) is never claimed healthy: those parts report `Unknown` (`ConditionCheckError`) once the
//! seed-side checks of the same condition pass. Pure.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::Deployment;
use seedlet_api::common::{LastOperation, LastOperationType};
use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::names::condition_types::{
    API_SERVER_AVAILABLE, CONTROL_PLANE_HEALTHY, EVERY_NODE_READY,
    OBSERVABILITY_COMPONENTS_HEALTHY, SYSTEM_COMPONENTS_HEALTHY,
};
use seedlet_api::names::reasons::CONDITION_CHECK_ERROR;
use seedlet_api::resources::ManagedResource;

use super::checks::{self, ExtensionReport, Finding};
use super::transitions::{self, Judge};

/// The condition types care owns, in the order they are written.
pub const CONDITION_TYPES: [&str; 5] = [
    API_SERVER_AVAILABLE,
    CONTROL_PLANE_HEALTHY,
    OBSERVABILITY_COMPONENTS_HEALTHY,
    EVERY_NODE_READY,
    SYSTEM_COMPONENTS_HEALTHY,
];

/// Why the parts that need the shoot's API server are not checked.
pub const NO_SHOOT_CLIENT: &str = "seedlet has no client for the shoot's API server";

/// What the seed shows about the kube-apiserver Deployment of the control-plane namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiServer {
    /// No such Deployment: seedlet may not deploy one at all, so nothing follows from it.
    Absent,
    /// Present but deleting or scaled to zero.
    NotRunning,
    /// Present with replicas.
    Running,
}

impl ApiServer {
    /// The state of `deployment` (the `kube-apiserver` Deployment, if any).
    pub fn of(deployment: Option<&Deployment>) -> ApiServer {
        let Some(deployment) = deployment else {
            return ApiServer::Absent;
        };
        let replicas = deployment.spec.as_ref().and_then(|spec| spec.replicas);
        if deployment.metadata.deletion_timestamp.is_some() || replicas.unwrap_or(0) == 0 {
            ApiServer::NotRunning
        } else {
            ApiServer::Running
        }
    }
}

/// Everything read for the conditions; an `Err` holds why a read failed.
#[derive(Clone, Debug)]
pub struct Observed {
    /// Health reports of the extension objects, in listing order.
    pub extensions: Result<Vec<ExtensionReport>, String>,
    /// ManagedResources of the control-plane namespace.
    pub managed_resources: Result<Vec<ManagedResource>, String>,
    /// Deployments labelled `gardener.cloud/role=controlplane`.
    pub control_plane: Result<Vec<Deployment>, String>,
    /// Deployments labelled `gardener.cloud/role=monitoring`.
    pub monitoring: Result<Vec<Deployment>, String>,
    /// The kube-apiserver Deployment.
    pub api_server: ApiServer,
}

/// The shoot facts the conditions depend on.
#[derive(Clone, Copy, Debug)]
pub struct Facts<'a> {
    /// `spec.hibernation.enabled` or `status.hibernated`.
    pub hibernated: bool,
    /// No worker pools: no `EveryNodeReady`.
    pub workerless: bool,
    /// `status.lastOperation`.
    pub last_operation: Option<&'a LastOperation>,
    /// Whether `status.lastErrors` is non-empty.
    pub has_last_errors: bool,
}

/// Settings of the checks.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// `staleExtensionHealthChecks.threshold` when enabled.
    pub stale_after: Option<Duration>,
    /// `managedResourceProgressingThreshold`.
    pub progressing_threshold: Option<Duration>,
}

/// The next conditions of care's types (without `EveryNodeReady` for workerless shoots), from the
/// stored ones, pardoned as spec §7.5 says.
pub fn conditions(
    stored: &[Condition],
    facts: &Facts<'_>,
    observed: &Observed,
    settings: &Settings,
    judge: &Judge<'_>,
) -> Vec<Condition> {
    let now = judge.now;
    let previous = |type_: &str| conditions::find_or_init(stored, type_, now);
    let types = CONDITION_TYPES
        .into_iter()
        .filter(|type_| !(facts.workerless && *type_ == EVERY_NODE_READY));
    let next: Vec<Condition> = if facts.hibernated {
        types
            .map(|type_| transitions::hibernated(&previous(type_), transitions::NOT_CHECKED, now))
            .collect()
    } else {
        match &observed.managed_resources {
            Err(error) => types
                .map(|type_| {
                    previous(type_).updated(
                        ConditionStatus::False,
                        "ManagedResourceListingFailed",
                        error.clone(),
                        now,
                    )
                })
                .collect(),
            Ok(resources) => types
                .map(|type_| {
                    let check = Check {
                        facts,
                        observed,
                        resources,
                        settings,
                        judge,
                    };
                    check.condition(&previous(type_))
                })
                .collect(),
        }
    };
    transitions::pardon(
        next,
        stored,
        facts.last_operation,
        facts.has_last_errors,
        now,
    )
}

/// One condition's check.
struct Check<'a> {
    facts: &'a Facts<'a>,
    observed: &'a Observed,
    resources: &'a [ManagedResource],
    settings: &'a Settings,
    judge: &'a Judge<'a>,
}

/// The result of a check: a finding (or why it could not run), or success.
type Verdict = Result<Option<Finding>, String>;

impl Check<'_> {
    fn condition(&self, previous: &Condition) -> Condition {
        let type_ = previous.type_.as_str();
        let not_running = self.observed.api_server == ApiServer::NotRunning;
        match type_ {
            API_SERVER_AVAILABLE if not_running => self.judge.failed(
                previous,
                "APIServerDown",
                "Could not reach API server during client initialization.",
                Vec::new(),
            ),
            API_SERVER_AVAILABLE => unknown(
                previous,
                format!("{NO_SHOOT_CLIENT}, so its /healthz endpoint is not checked."),
                self.judge.now,
            ),
            EVERY_NODE_READY | SYSTEM_COMPONENTS_HEALTHY if not_running => unknown(
                previous,
                not_running_message(self.facts.last_operation).to_owned(),
                self.judge.now,
            ),
            CONTROL_PLANE_HEALTHY => self.apply(
                previous,
                self.extensions(type_).and_then(|found| match found {
                    Some(finding) => Ok(Some(finding)),
                    None => Ok(self
                        .deployments(&self.observed.control_plane)?
                        .or_else(|| self.managed_resources(type_))),
                }),
                (
                    "ControlPlaneRunning",
                    "All control plane components are healthy.",
                ),
            ),
            OBSERVABILITY_COMPONENTS_HEALTHY => self.apply(
                previous,
                self.extensions(type_).and_then(|found| match found {
                    Some(finding) => Ok(Some(finding)),
                    None => Ok(self
                        .deployments(&self.observed.monitoring)?
                        .or_else(|| self.managed_resources(type_))),
                }),
                (
                    "ObservabilityComponentsRunning",
                    "All observability components are healthy.",
                ),
            ),
            EVERY_NODE_READY => self.unchecked_rest(
                previous,
                self.extensions(type_),
                "Extensions report no failing node health; the shoot's nodes are not checked",
            ),
            SYSTEM_COMPONENTS_HEALTHY => self.unchecked_rest(
                previous,
                self.extensions(type_)
                    .map(|found| found.or_else(|| self.managed_resources(type_))),
                "Extensions and ManagedResources report no failing system component; the tunnel \
                 to the shoot is not checked",
            ),
            _ => previous.clone(),
        }
    }

    fn extensions(&self, type_: &str) -> Verdict {
        let reports = self.observed.extensions.as_ref().map_err(Clone::clone)?;
        let relevant: Vec<ExtensionReport> = reports
            .iter()
            .filter(|report| report.condition.type_ == type_)
            .cloned()
            .collect();
        Ok(checks::extension_finding(
            &relevant,
            self.settings.stale_after,
            self.judge.now,
        ))
    }

    fn deployments(&self, deployments: &Result<Vec<Deployment>, String>) -> Verdict {
        let deployments = deployments.as_ref().map_err(Clone::clone)?;
        Ok(checks::deployments_finding(deployments))
    }

    fn managed_resources(&self, type_: &str) -> Option<Finding> {
        checks::managed_resources_finding(
            self.resources,
            type_,
            self.settings.progressing_threshold,
            self.judge.now,
        )
    }

    /// The condition from a verdict: the finding, `Unknown` when the check could not run, else
    /// `True` with `success`.
    fn apply(&self, previous: &Condition, verdict: Verdict, success: (&str, &str)) -> Condition {
        match verdict {
            Ok(None) => {
                previous.updated(ConditionStatus::True, success.0, success.1, self.judge.now)
            }
            Ok(Some(finding)) => self.found(previous, finding),
            Err(error) => unknown(previous, error, self.judge.now),
        }
    }

    /// Like [`Check::apply`], but success is `Unknown`: the part that needs the shoot's API server
    /// is left unchecked.
    fn unchecked_rest(&self, previous: &Condition, verdict: Verdict, passed: &str) -> Condition {
        match verdict {
            Ok(None) => unknown(
                previous,
                format!("{passed}: {NO_SHOOT_CLIENT}."),
                self.judge.now,
            ),
            Ok(Some(finding)) => self.found(previous, finding),
            Err(error) => unknown(previous, error, self.judge.now),
        }
    }

    fn found(&self, previous: &Condition, finding: Finding) -> Condition {
        match finding {
            Finding::Failed {
                reason,
                message,
                codes,
            } => self.judge.failed(previous, &reason, &message, codes),
            Finding::Reported {
                status,
                reason,
                message,
                codes,
            } => previous.updated_with_codes(status, reason, message, codes, self.judge.now),
        }
    }
}

/// `Unknown` `ConditionCheckError` with `message` (conditions and constraints alike).
pub(super) fn unknown(previous: &Condition, message: String, now: Timestamp) -> Condition {
    previous.updated(
        ConditionStatus::Unknown,
        CONDITION_CHECK_ERROR,
        message,
        now,
    )
}

/// Why the parts needing the API server are not checked while it does not run.
pub fn not_running_message(last_operation: Option<&LastOperation>) -> &'static str {
    match last_operation.map(|operation| &operation.type_) {
        None | Some(LastOperationType::Create) => {
            "Shoot control plane has not been fully created yet."
        }
        Some(LastOperationType::Delete) => {
            "Shoot control plane has already been or is about to be deleted."
        }
        Some(_) => "Shoot control plane is not running at the moment.",
    }
}

#[cfg(test)]
mod tests;
