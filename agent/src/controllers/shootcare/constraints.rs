//! The shoot constraints of one care pass (spec §7.6, §7.9) as far as the seed shows them:
//! expiring CA certificates in the control-plane namespace, ignored ManagedResources and worker
//! pools waiting for a manual in-place update. The two webhook constraints need the shoot's API
//! server and report `Unknown`; the CRD conversion-webhook constraint, which needs it as well, is
//! left out as upstream does when it has no shoot client. Optional constraints appear only while
//! not `True`. Pure.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use seedlet_api::common::LastOperation;
use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::names::condition_types::{
    HIBERNATION_POSSIBLE, MAINTENANCE_PRECONDITIONS_SATISFIED,
};

use super::health::{NO_SHOOT_CLIENT, unknown};
use super::transitions::{self, CONSTRAINT_NOT_CHECKED};

/// Constraint: no CA certificate expires within a year.
pub const CA_CERTIFICATE_VALIDITIES_ACCEPTABLE: &str = "CACertificateValiditiesAcceptable";
/// Constraint: no CRD with several stored versions converts through a webhook.
pub const CRDS_WITH_PROBLEMATIC_CONVERSION_WEBHOOKS: &str = "CRDsWithProblematicConversionWebhooks";
/// Constraint: no worker pool waits for a manual in-place update.
pub const MANUAL_IN_PLACE_WORKERS_UPDATED: &str = "ManualInPlaceWorkersUpdated";
/// Constraint: no ManagedResource of the shoot is ignored.
pub const HAS_IGNORED_MANAGED_RESOURCES: &str = "HasIgnoredManagedResources";

/// The constraint types care owns: entries of these types not written by a pass are removed.
pub const CONSTRAINT_TYPES: [&str; 6] = [
    HIBERNATION_POSSIBLE,
    MAINTENANCE_PRECONDITIONS_SATISFIED,
    CA_CERTIFICATE_VALIDITIES_ACCEPTABLE,
    CRDS_WITH_PROBLEMATIC_CONVERSION_WEBHOOKS,
    MANUAL_IN_PLACE_WORKERS_UPDATED,
    HAS_IGNORED_MANAGED_RESOURCES,
];

/// Labels of the persisted secrets-manager Secrets gardenlet keeps CAs in.
pub const CA_SECRET_SELECTOR: &str =
    "managed-by=secrets-manager,manager-identity=gardenlet,persist=true";

/// A CA counts as expiring when it is valid for less than this (365 days).
const MINIMUM_CA_VALIDITY: SignedDuration = SignedDuration::from_hours(24 * 365);

/// A CA certificate kept in the control-plane namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaCertificate {
    /// Its secrets-manager name (label `name`, else the Secret's name).
    pub name: String,
    /// End of its validity (label `valid-until-time`, Unix seconds).
    pub valid_until: Timestamp,
}

/// The CA certificates among secrets-manager Secrets (those holding `ca.crt` and `ca.key`).
///
/// # Errors
/// A CA Secret whose `valid-until-time` label is not a Unix time.
pub fn ca_certificates(secrets: &[Secret]) -> Result<Vec<CaCertificate>, String> {
    let mut out = Vec::new();
    for secret in secrets {
        let data = secret.data.as_ref();
        let holds = |key: &str| data.is_some_and(|data| data.contains_key(key));
        if !holds("ca.crt") || !holds("ca.key") {
            continue;
        }
        let labels = secret.labels();
        let label = labels.get("valid-until-time").map_or("", String::as_str);
        let valid_until = label
            .parse::<i64>()
            .ok()
            .and_then(|seconds| Timestamp::from_second(seconds).ok())
            .ok_or_else(|| {
                format!(
                    "could not parse the valid-until-time label {label:?} of secret {:?}",
                    secret.name_any()
                )
            })?;
        out.push(CaCertificate {
            name: labels
                .get("name")
                .cloned()
                .unwrap_or_else(|| secret.name_any()),
            valid_until,
        });
    }
    Ok(out)
}

/// Everything read for the constraints; an `Err` holds why a read failed.
#[derive(Clone, Debug)]
pub struct Observed {
    /// `spec.hibernation.enabled` or `status.hibernated`.
    pub hibernated: bool,
    /// `status.inPlaceUpdates.pendingWorkerUpdates.manualInPlaceUpdate` (empty for workerless).
    pub manual_in_place_pending: Vec<String>,
    /// Names of the ignored ManagedResources.
    pub ignored_managed_resources: Result<Vec<String>, String>,
    /// CA certificates of the control-plane namespace.
    pub ca_certificates: Result<Vec<CaCertificate>, String>,
}

/// The next constraints of care's types, from the stored ones, pardoned as spec §7.5 says.
pub fn constraints(
    stored: &[Condition],
    observed: &Observed,
    last_operation: Option<&LastOperation>,
    has_last_errors: bool,
    now: Timestamp,
) -> Vec<Condition> {
    let previous = |type_: &str| conditions::find_or_init(stored, type_, now);
    let ignored = match &observed.ignored_managed_resources {
        Ok(names) if names.is_empty() => previous(HAS_IGNORED_MANAGED_RESOURCES).updated(
            ConditionStatus::True,
            "NoManagedResourcesIgnored",
            "No ManagedResource of the shoot is ignored.",
            now,
        ),
        Ok(names) => previous(HAS_IGNORED_MANAGED_RESOURCES).updated(
            ConditionStatus::False,
            "ManagedResourcesIgnored",
            format!(
                "These ManagedResources carry resources.gardener.cloud/ignore and are not reconciled: {}",
                names.join(", ")
            ),
            now,
        ),
        Err(error) => unknown(&previous(HAS_IGNORED_MANAGED_RESOURCES), error.clone(), now),
    };
    let mut always = Vec::new();
    let mut optional = vec![ignored];
    if observed.hibernated {
        for type_ in [HIBERNATION_POSSIBLE, MAINTENANCE_PRECONDITIONS_SATISFIED] {
            always.push(transitions::hibernated(
                &previous(type_),
                CONSTRAINT_NOT_CHECKED,
                now,
            ));
        }
        // [QUIRK] upstream writes the CA and CRD constraints of a hibernated shoot as True
        // without its usual filter of optional constraints; seedlet filters them like any other
        // True optional constraint, so they are left out.
    } else {
        // Upstream derives both from webhooks in the shoot, which seedlet cannot read. They are
        // reported True `ConstraintNotChecked` (as upstream does for a hibernated shoot) rather
        // than Unknown: gardener-apiserver refuses to enable hibernation while
        // HibernationPossible exists and is not True, so Unknown would forbid every hibernation.
        for type_ in [HIBERNATION_POSSIBLE, MAINTENANCE_PRECONDITIONS_SATISFIED] {
            always.push(previous(type_).updated(
                ConditionStatus::True,
                CONSTRAINT_NOT_CHECKED,
                format!("{NO_SHOOT_CLIENT}, so its webhooks are not checked."),
                now,
            ));
        }
        optional.push(ca_constraint(
            &previous(CA_CERTIFICATE_VALIDITIES_ACCEPTABLE),
            &observed.ca_certificates,
            now,
        ));
        optional.push(manual_in_place(
            &previous(MANUAL_IN_PLACE_WORKERS_UPDATED),
            &observed.manual_in_place_pending,
            now,
        ));
    }
    always.extend(
        optional
            .into_iter()
            .filter(|constraint| constraint.status != ConditionStatus::True),
    );
    transitions::pardon(always, stored, last_operation, has_last_errors, now)
}

fn ca_constraint(
    previous: &Condition,
    certificates: &Result<Vec<CaCertificate>, String>,
    now: Timestamp,
) -> Condition {
    let certificates = match certificates {
        Ok(certificates) => certificates,
        Err(error) => return unknown(previous, error.clone(), now),
    };
    let expiring: Vec<String> = certificates
        .iter()
        .filter(|ca| ca.valid_until.duration_since(now) < MINIMUM_CA_VALIDITY)
        .map(|ca| format!("{:?} (until {})", ca.name, ca.valid_until))
        .collect();
    if expiring.is_empty() {
        return previous.updated(
            ConditionStatus::True,
            "NoExpiringCACertificates",
            "Every CA certificate stays valid for at least another 365 days.",
            now,
        );
    }
    previous.updated(
        ConditionStatus::False,
        "ExpiringCACertificates",
        format!(
            "These CA certificates expire within 365 days and should be rotated: {}",
            expiring.join(", ")
        ),
        now,
    )
}

fn manual_in_place(previous: &Condition, pending: &[String], now: Timestamp) -> Condition {
    if pending.is_empty() {
        return previous.updated(
            ConditionStatus::True,
            "NoWorkerPoolsWithManualInPlaceUpdateStrategyPending",
            "No worker pool with the ManualInPlaceUpdate strategy waits for its update.",
            now,
        );
    }
    previous.updated(
        ConditionStatus::False,
        "WorkerPoolsWithManualInPlaceUpdateStrategyPending",
        format!(
            "These worker pools with the ManualInPlaceUpdate strategy wait for their update: {}",
            pending.join(", ")
        ),
        now,
    )
}

#[cfg(test)]
mod tests;
