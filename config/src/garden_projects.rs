//! The garden controller's reference protection, Project and Event controller settings
//! (`controllers.cloudProfile` … `controllers.event`), named and defaulted like
//! gardener-controller-manager's (spec garden-controllers §1).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::duration::Duration;
use crate::validate::Checker;

/// Default `concurrentSyncs` of every garden-side controller.
pub const DEFAULT_CONCURRENT_SYNCS: u32 = 5;

/// A controller block with only `concurrentSyncs` (`cloudProfile`, `secretBinding`,
/// `shootReference`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ConcurrentSyncs {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
}

impl Default for ConcurrentSyncs {
    fn default() -> Self {
        Self {
            concurrent_syncs: DEFAULT_CONCURRENT_SYNCS,
        }
    }
}

/// `controllers.project`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProjectController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Days a project (or its last activity) must be old before it can become stale.
    pub minimum_lifetime_days: u32,
    /// Days a project stays stale before an auto-delete timestamp is set.
    pub stale_grace_period_days: u32,
    /// Days after `staleSinceTimestamp` at which a stale project is deleted.
    pub stale_expiration_time_days: u32,
    /// Period of the stale check (also its reconcile timeout).
    pub stale_sync_period: Duration,
    /// Default ResourceQuotas for project namespaces: the first entry whose selector matches.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quotas: Vec<ProjectQuota>,
}

impl Default for ProjectController {
    fn default() -> Self {
        Self {
            concurrent_syncs: DEFAULT_CONCURRENT_SYNCS,
            minimum_lifetime_days: 30,
            stale_grace_period_days: 14,
            stale_expiration_time_days: 90,
            stale_sync_period: Duration::from_secs(12 * 3600),
            quotas: Vec::new(),
        }
    }
}

/// `controllers.project.quotas[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProjectQuota {
    /// A `v1` ResourceQuota (labels, annotations and `spec.hard` are used).
    pub config: Value,
    /// Label selector (`matchLabels`, `matchExpressions`) on Project labels; absent = all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_selector: Option<Value>,
}

/// `controllers.event`: deletes non-Shoot events after a TTL. Absent = controller off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EventController {
    /// Parallel reconciles.
    pub concurrent_syncs: u32,
    /// Age after which a non-Shoot event is deleted.
    pub ttl_non_shoot_events: Duration,
}

impl Default for EventController {
    fn default() -> Self {
        Self {
            concurrent_syncs: DEFAULT_CONCURRENT_SYNCS,
            ttl_non_shoot_events: Duration::from_secs(3600),
        }
    }
}

/// The `controllers` fields of this module, for validation (see [`validate`]).
pub(crate) struct Blocks<'a> {
    /// `(field name, block)` of every concurrentSyncs-only block.
    pub simple: Vec<(&'static str, &'a ConcurrentSyncs)>,
    /// `controllers.project`.
    pub project: &'a ProjectController,
    /// `controllers.event`.
    pub event: Option<&'a EventController>,
}

/// Reports every invalid field of the blocks of this module.
pub(crate) fn validate(checker: &mut Checker, blocks: &Blocks<'_>) {
    for (name, block) in &blocks.simple {
        checker.at_least(
            &format!("controllers.{name}.concurrentSyncs"),
            block.concurrent_syncs,
            1,
        );
    }
    let project = blocks.project;
    checker.at_least(
        "controllers.project.concurrentSyncs",
        project.concurrent_syncs,
        1,
    );
    checker.positive_duration(
        "controllers.project.staleSyncPeriod",
        project.stale_sync_period,
    );
    for (index, quota) in project.quotas.iter().enumerate() {
        let path = format!("controllers.project.quotas[{index}]");
        if !quota.config.is_object() {
            checker.report(format!("{path}.config"), "must be a ResourceQuota object");
        }
        if let Some(selector) = &quota.project_selector
            && !selector.is_object()
        {
            checker.report(
                format!("{path}.projectSelector"),
                "must be a label selector object",
            );
        }
    }
    if let Some(event) = blocks.event {
        checker.at_least(
            "controllers.event.concurrentSyncs",
            event.concurrent_syncs,
            1,
        );
        checker.positive_duration(
            "controllers.event.ttlNonShootEvents",
            event.ttl_non_shoot_events,
        );
    }
}
