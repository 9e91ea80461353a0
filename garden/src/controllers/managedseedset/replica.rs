//! Pure ManagedSeedSet decisions (spec §12): a replica's status, readiness and deletability,
//! the scale-in victim, and what one step does with a replica.

use std::cmp::Ordering;

use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::conditions::{self, ConditionStatus};
use seedlet_api::core::{Seed, Shoot};
use seedlet_api::names::{annotations, condition_types, shoot_lifecycle};
use seedlet_api::seedmanagement::ManagedSeed;

/// Annotation that protects a replica's Shoot or ManagedSeed from scale-in.
pub const PROTECT_FROM_DELETION: &str = "seedmanagement.gardener.cloud/protect-from-deletion";
/// ManagedSeed condition: the seed registered.
pub const SEED_REGISTERED: &str = "SeedRegistered";

/// One replica: its Shoot and, once created, its ManagedSeed and Seed.
#[derive(Debug, Clone)]
pub struct Replica {
    /// `<set>-<ordinal>`.
    pub name: String,
    /// The trailing `-<n>` of the name, or -1.
    pub ordinal: i64,
    /// The replica's Shoot.
    pub shoot: Shoot,
    /// Its ManagedSeed, if created.
    pub managed_seed: Option<ManagedSeed>,
    /// Its Seed, if registered.
    pub seed: Option<Seed>,
    /// Whether the Seed hosts Shoots.
    pub seed_hosts_shoots: bool,
}

/// A replica's status, in priority order (lower = scaled in first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Not known.
    Unknown,
    /// The Shoot's create/reconcile failed.
    ShootReconcileFailed,
    /// The Shoot's deletion failed.
    ShootDeleteFailed,
    /// The Shoot is being created or reconciled.
    ShootReconciling,
    /// The Shoot is being deleted.
    ShootDeleting,
    /// The Shoot is reconciled.
    ShootReconciled,
    /// The ManagedSeed exists, its Seed is not registered yet.
    ManagedSeedPreparing,
    /// The ManagedSeed is being deleted.
    ManagedSeedDeleting,
    /// The Seed is registered.
    ManagedSeedRegistered,
}

/// The ordinal of `<set>-<n>`, or -1.
pub fn ordinal(name: &str) -> i64 {
    name.rsplit_once('-')
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(-1)
}

fn observed_shoot(shoot: &Shoot) -> bool {
    shoot.status.as_ref().and_then(|s| s.observed_generation) == shoot.metadata.generation
}

impl Replica {
    /// The replica's status.
    pub fn status(&self) -> Status {
        if let Some(managed_seed) = &self.managed_seed {
            if managed_seed.metadata.deletion_timestamp.is_some() {
                return Status::ManagedSeedDeleting;
            }
            let status = managed_seed.status.as_ref();
            let registered = status
                .and_then(|s| conditions::find(&s.conditions, SEED_REGISTERED))
                .is_some_and(|c| c.is_true());
            let observed =
                status.and_then(|s| s.observed_generation) == managed_seed.metadata.generation;
            return if registered && observed {
                Status::ManagedSeedRegistered
            } else {
                Status::ManagedSeedPreparing
            };
        }
        let operation = self.shoot.last_operation();
        if self.shoot.metadata.deletion_timestamp.is_some() {
            return match operation {
                Some(op)
                    if op.type_ == LastOperationType::Delete
                        && op.state == LastOperationState::Failed =>
                {
                    Status::ShootDeleteFailed
                }
                _ => Status::ShootDeleting,
            };
        }
        match operation {
            Some(op)
                if matches!(
                    op.type_,
                    LastOperationType::Create | LastOperationType::Reconcile
                ) =>
            {
                match op.state {
                    LastOperationState::Failed if observed_shoot(&self.shoot) => {
                        Status::ShootReconcileFailed
                    }
                    LastOperationState::Succeeded if observed_shoot(&self.shoot) => {
                        Status::ShootReconciled
                    }
                    _ => Status::ShootReconciling,
                }
            }
            _ => Status::ShootReconciling,
        }
    }

    /// Whether the Seed is observed, not deleting, `GardenletReady` and
    /// `SeedSystemComponentsHealthy` True and `BackupBucketsReady` absent or True.
    pub fn seed_ready(&self) -> bool {
        let Some(seed) = &self.seed else {
            return false;
        };
        let observed = seed
            .status
            .as_ref()
            .and_then(|s| s.observed_generation)
            .unwrap_or(0)
            >= seed.metadata.generation.unwrap_or(0);
        let is_true =
            |type_: &str| conditions::find(seed.conditions(), type_).is_some_and(|c| c.is_true());
        observed
            && seed.metadata.deletion_timestamp.is_none()
            && is_true(condition_types::GARDENLET_READY)
            && is_true(condition_types::SEED_SYSTEM_COMPONENTS_HEALTHY)
            && conditions::find(seed.conditions(), condition_types::BACKUP_BUCKETS_READY)
                .is_none_or(|c| c.status == ConditionStatus::True)
    }

    /// The Shoot's status label (`progressing` when absent).
    pub fn shoot_health(&self) -> &str {
        self.shoot
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(shoot_lifecycle::STATUS_LABEL))
            .map_or("progressing", String::as_str)
    }

    /// Registered, Seed ready and Shoot healthy.
    pub fn ready(&self) -> bool {
        self.status() == Status::ManagedSeedRegistered
            && self.seed_ready()
            && self.shoot_health() == "healthy"
    }

    /// Whether scale-in may remove it: its Seed hosts no Shoots and nothing is protected.
    pub fn deletable(&self) -> bool {
        let protected = |annotations: Option<&std::collections::BTreeMap<String, String>>| {
            annotations
                .and_then(|a| a.get(PROTECT_FROM_DELETION))
                .is_some_and(|v| v == "true")
        };
        !self.seed_hosts_shoots
            && !protected(self.shoot.metadata.annotations.as_ref())
            && !self
                .managed_seed
                .as_ref()
                .is_some_and(|m| protected(m.metadata.annotations.as_ref()))
    }
}

/// Health rank for scale-in (worse first).
fn health_rank(health: &str) -> u8 {
    match health {
        "unhealthy" => 0,
        "unknown" => 1,
        "progressing" => 2,
        _ => 3,
    }
}

/// The replica to remove first: lowest status, then not-ready seed, then worse health, then
/// lower ordinal; only deletable ones.
pub fn scale_in_victim(replicas: &[Replica]) -> Option<&Replica> {
    replicas.iter().filter(|r| r.deletable()).min_by(|a, b| {
        a.status()
            .cmp(&b.status())
            .then_with(|| a.seed_ready().cmp(&b.seed_ready()))
            .then_with(|| health_rank(a.shoot_health()).cmp(&health_rank(b.shoot_health())))
            .then_with(|| a.ordinal.cmp(&b.ordinal))
            .then(Ordering::Equal)
    })
}

/// What one step does with a replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Annotate `gardener.cloud/operation: retry`; event reason; new pending reason and retries.
    Retry {
        /// Event reason.
        event: &'static str,
        /// Pending reason.
        pending: &'static str,
        /// Retries after this one.
        retries: i32,
    },
    /// Nothing to do but wait; event reason, pending reason, retries to keep.
    Wait {
        /// Event reason.
        event: &'static str,
        /// Pending reason.
        pending: &'static str,
        /// Retries kept.
        retries: Option<i32>,
    },
    /// Create the ManagedSeed.
    CreateManagedSeed,
    /// Confirm and delete the Shoot.
    DeleteShoot,
    /// The replica needs nothing: go on with the next.
    Continue,
}

/// The step for `replica` (spec §12's table, first match); `retries` is the pending replica's
/// count when it names this replica with `retry_reason` for the reconcile or delete path.
pub fn step(
    replica: &Replica,
    scaling_in: bool,
    pending: Option<(&str, &str, Option<i32>)>,
    max_retries: i32,
) -> Action {
    // The count is read from this replica's pending entry while it is on the same path. Unlike
    // upstream (which reads it only with reason ShootReconciling/ShootDeleting), a replica the
    // set gave up on (ShootReconcileFailed/ShootDeleteFailed) keeps its count, so another trigger
    // does not start a new round of retries.
    let retries_for = |reason: &str| {
        let given_up = match reason {
            "ShootReconciling" => "ShootReconcileFailed",
            "ShootDeleting" => "ShootDeleteFailed",
            other => other,
        };
        pending
            .filter(|(name, pending_reason, _)| {
                *name == replica.name && (*pending_reason == reason || *pending_reason == given_up)
            })
            .and_then(|(_, _, retries)| retries)
    };
    // A retry that was asked for and not yet taken up is not counted again (upstream would
    // retry once more on any other trigger in between).
    let retry_asked = replica
        .shoot
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(annotations::OPERATION))
        .is_some_and(|op| op == shoot_lifecycle::OPERATION_RETRY);
    match replica.status() {
        Status::ShootReconcileFailed if !scaling_in && retry_asked => Action::Wait {
            event: "WaitingForShootReconciled",
            pending: "ShootReconciling",
            retries: retries_for("ShootReconciling"),
        },
        Status::ShootDeleteFailed if retry_asked => Action::Wait {
            event: "WaitingForShootDeleted",
            pending: "ShootDeleting",
            retries: retries_for("ShootDeleting"),
        },
        Status::ShootReconcileFailed if !scaling_in => {
            let retries = retries_for("ShootReconciling").unwrap_or(0);
            if retries < max_retries {
                Action::Retry {
                    event: "RetryingShootReconciliation",
                    pending: "ShootReconciling",
                    retries: retries + 1,
                }
            } else {
                Action::Wait {
                    event: "NotRetryingShootReconciliation",
                    pending: "ShootReconcileFailed",
                    retries: Some(retries),
                }
            }
        }
        Status::ShootDeleteFailed => {
            let retries = retries_for("ShootDeleting").unwrap_or(0);
            if retries < max_retries {
                Action::Retry {
                    event: "RetryingShootDeletion",
                    pending: "ShootDeleting",
                    retries: retries + 1,
                }
            } else {
                Action::Wait {
                    event: "NotRetryingShootDeletion",
                    pending: "ShootDeleteFailed",
                    retries: Some(retries),
                }
            }
        }
        Status::ShootReconciling if !scaling_in => Action::Wait {
            event: "WaitingForShootReconciled",
            pending: "ShootReconciling",
            retries: retries_for("ShootReconciling"),
        },
        Status::ShootDeleting => Action::Wait {
            event: "WaitingForShootDeleted",
            pending: "ShootDeleting",
            retries: retries_for("ShootDeleting"),
        },
        Status::ShootReconciled if !scaling_in => Action::CreateManagedSeed,
        Status::ShootReconciled => Action::DeleteShoot,
        Status::ManagedSeedPreparing if !scaling_in => Action::Wait {
            event: "WaitingForManagedSeedRegistered",
            pending: "ManagedSeedPreparing",
            retries: None,
        },
        Status::ManagedSeedDeleting => Action::Wait {
            event: "WaitingForManagedSeedDeleted",
            pending: "ManagedSeedDeleting",
            retries: None,
        },
        _ if !scaling_in && !replica.seed_ready() => Action::Wait {
            event: "WaitingForSeedReady",
            pending: "SeedNotReady",
            retries: None,
        },
        _ if !scaling_in && replica.shoot_health() != "healthy" => Action::Wait {
            event: "WaitingForShootHealthy",
            pending: "ShootNotHealthy",
            retries: None,
        },
        _ => Action::Continue,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shoot(
        name: &str,
        operation: Option<(&str, &str)>,
        deleting: bool,
        label: Option<&str>,
    ) -> Shoot {
        let mut value = serde_json::json!({
            "metadata": {"name": name, "namespace": "garden", "generation": 1},
            "spec": {"region": "r", "provider": {"type": "local"}},
            "status": {"observedGeneration": 1},
        });
        if let Some((type_, state)) = operation {
            value["status"]["lastOperation"] = serde_json::json!({
                "type": type_, "state": state, "description": "", "progress": 0,
                "lastUpdateTime": "2025-01-01T00:00:00Z",
            });
        }
        if deleting {
            value["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z".into();
        }
        if let Some(label) = label {
            value["metadata"]["labels"] = serde_json::json!({"shoot.gardener.cloud/status": label});
        }
        serde_json::from_value(value).expect("shoot")
    }

    fn replica(name: &str, shoot: Shoot) -> Replica {
        Replica {
            name: name.to_owned(),
            ordinal: ordinal(name),
            shoot,
            managed_seed: None,
            seed: None,
            seed_hosts_shoots: false,
        }
    }

    fn managed_seed(registered: bool) -> ManagedSeed {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "m", "namespace": "garden", "generation": 1},
            "spec": {"shoot": {"name": "m"}},
            "status": {"observedGeneration": 1, "conditions": [{
                "type": "SeedRegistered", "status": if registered { "True" } else { "False" },
                "reason": "R", "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z",
                "lastUpdateTime": "2025-01-01T00:00:00Z",
            }]},
        }))
        .expect("managed seed")
    }

    #[test]
    fn replica_status_follows_shoot_and_managed_seed() {
        let table = [
            (
                shoot("s-0", Some(("Create", "Failed")), false, None),
                None,
                Status::ShootReconcileFailed,
            ),
            (
                shoot("s-0", Some(("Delete", "Failed")), true, None),
                None,
                Status::ShootDeleteFailed,
            ),
            (
                shoot("s-0", Some(("Create", "Processing")), false, None),
                None,
                Status::ShootReconciling,
            ),
            (
                shoot("s-0", None, false, None),
                None,
                Status::ShootReconciling,
            ),
            (
                shoot("s-0", Some(("Delete", "Processing")), true, None),
                None,
                Status::ShootDeleting,
            ),
            (
                shoot("s-0", Some(("Reconcile", "Succeeded")), false, None),
                None,
                Status::ShootReconciled,
            ),
            (
                shoot("s-0", Some(("Reconcile", "Succeeded")), false, None),
                Some(managed_seed(false)),
                Status::ManagedSeedPreparing,
            ),
            (
                shoot("s-0", Some(("Reconcile", "Succeeded")), false, None),
                Some(managed_seed(true)),
                Status::ManagedSeedRegistered,
            ),
        ];
        for (shoot, managed_seed, expected) in table {
            let mut r = replica("s-0", shoot);
            r.managed_seed = managed_seed;
            assert_eq!(r.status(), expected);
        }
        assert_eq!(ordinal("set-12"), 12);
        assert_eq!(ordinal("set"), -1);
    }

    #[test]
    fn steps_retry_until_the_limit_and_wait_otherwise() {
        let failed = replica(
            "s-0",
            shoot("s-0", Some(("Reconcile", "Failed")), false, None),
        );
        assert_eq!(
            step(&failed, false, None, 3),
            Action::Retry {
                event: "RetryingShootReconciliation",
                pending: "ShootReconciling",
                retries: 1
            }
        );
        assert_eq!(
            step(
                &failed,
                false,
                Some(("s-0", "ShootReconciling", Some(2))),
                3
            ),
            Action::Retry {
                event: "RetryingShootReconciliation",
                pending: "ShootReconciling",
                retries: 3
            }
        );
        assert_eq!(
            step(
                &failed,
                false,
                Some(("s-0", "ShootReconciling", Some(3))),
                3
            ),
            Action::Wait {
                event: "NotRetryingShootReconciliation",
                pending: "ShootReconcileFailed",
                retries: Some(3)
            }
        );
        // A retry asked for and not yet taken up is waited for, not counted again.
        let mut asked = failed.clone();
        asked.shoot.metadata.annotations =
            Some([("gardener.cloud/operation".to_owned(), "retry".to_owned())].into());
        assert_eq!(
            step(&asked, false, Some(("s-0", "ShootReconciling", Some(1))), 3),
            Action::Wait {
                event: "WaitingForShootReconciled",
                pending: "ShootReconciling",
                retries: Some(1)
            }
        );
        // Given up stays given up.
        assert_eq!(
            step(
                &failed,
                false,
                Some(("s-0", "ShootReconcileFailed", Some(3))),
                3
            ),
            Action::Wait {
                event: "NotRetryingShootReconciliation",
                pending: "ShootReconcileFailed",
                retries: Some(3)
            }
        );
        // Another replica's count is not read.
        assert_eq!(
            step(
                &failed,
                false,
                Some(("s-1", "ShootReconciling", Some(3))),
                3
            ),
            Action::Retry {
                event: "RetryingShootReconciliation",
                pending: "ShootReconciling",
                retries: 1
            }
        );
        let reconciled = replica(
            "s-0",
            shoot("s-0", Some(("Reconcile", "Succeeded")), false, None),
        );
        assert_eq!(step(&reconciled, false, None, 3), Action::CreateManagedSeed);
        assert_eq!(step(&reconciled, true, None, 3), Action::DeleteShoot);
        let mut registered = replica(
            "s-0",
            shoot(
                "s-0",
                Some(("Reconcile", "Succeeded")),
                false,
                Some("healthy"),
            ),
        );
        registered.managed_seed = Some(managed_seed(true));
        assert_eq!(
            step(&registered, false, None, 3),
            Action::Wait {
                event: "WaitingForSeedReady",
                pending: "SeedNotReady",
                retries: None
            }
        );
        assert_eq!(step(&registered, true, None, 3), Action::Continue);
    }

    #[test]
    fn scale_in_prefers_not_ready_replicas_and_skips_protected_ones() {
        let mut registered = replica(
            "s-0",
            shoot(
                "s-0",
                Some(("Reconcile", "Succeeded")),
                false,
                Some("healthy"),
            ),
        );
        registered.managed_seed = Some(managed_seed(true));
        let reconciling = replica(
            "s-1",
            shoot("s-1", Some(("Create", "Processing")), false, None),
        );
        let replicas = vec![registered.clone(), reconciling.clone()];
        assert_eq!(
            scale_in_victim(&replicas).map(|r| r.name.as_str()),
            Some("s-1")
        );
        let mut protected = reconciling;
        protected.shoot.metadata.annotations =
            Some([(PROTECT_FROM_DELETION.to_owned(), "true".to_owned())].into());
        let mut hosting = registered;
        hosting.seed_hosts_shoots = true;
        assert!(scale_in_victim(&[hosting, protected]).is_none());
    }
}
