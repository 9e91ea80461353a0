//! One ShootState finalizer reconcile (spec §3.5): read the ShootState fresh and its shoot,
//! decide (pure, [`decide`]) what the shoot's state demands, and write it.
//!
//! Beyond §3.5 (issue #15): a ShootState whose shoot is gone or deleting is removed, as
//! Gardener's shoot deletion flow does (`confirmation.gardener.cloud/deletion=true`, then DELETE,
//! our finalizer released first), instead of erroring forever; a shoot without
//! `status.lastOperation` yet is a normal state that waits for the next change. The finalizer is
//! written with [`seedlet_runtime::finalizer`] against the object just read, and losing that
//! guarded write to a concurrent writer (409, or 422 from a failed JSON Patch `test`) is a quiet
//! requeue, not an error.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastOperation, LastOperationType};
use seedlet_api::core::{Shoot, ShootState};
use seedlet_api::names::{annotations, finalizers};
use seedlet_runtime::controller::{Reason, Reconciler, routine_failure};
use serde_json::json;

use super::{NAME, ShootStateFinalizer};
use seedlet_runtime::error_chain;

/// Delay before a failed reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// Delay before a reconcile that lost a guarded write to a concurrent writer runs again.
pub const CONFLICT_DELAY: Duration = Duration::from_millis(200);

/// Errors of one ShootState finalizer reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ShootState has no namespace.
    #[error("shootstate {name} has no namespace")]
    MissingNamespace {
        /// ShootState name.
        name: String,
    },
    /// Reading the ShootState failed.
    #[error("reading shootstate {key}")]
    ReadShootState {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Reading the shoot failed.
    #[error("reading shoot {key}")]
    ReadShoot {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the finalizers failed.
    #[error("patching finalizers of shootstate {key}")]
    Patch {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Deleting the ShootState of a deleted shoot failed.
    #[error("deleting shootstate {key} of a deleted shoot")]
    Delete {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace { .. } => "ShootStateNamespaceMissing",
            Error::ReadShootState { .. } => "ShootStateReadError",
            Error::ReadShoot { .. } => "ShootReadError",
            Error::Patch { .. } => "ShootStatePatchError",
            Error::Delete { .. } => "ShootStateDeleteError",
        }
    }
}

impl Error {
    /// Whether the error is a lost guarded write (409 Conflict, or 422 from a JSON Patch `test`
    /// that no longer holds): the object changed under us, a retry on fresh state settles it.
    pub fn is_conflict(&self) -> bool {
        match self {
            Error::Patch {
                source: kube::Error::Api(status),
                ..
            } => status.is_conflict() || matches!(status.code, 409 | 422),
            _ => false,
        }
    }
}

/// What to do with the finalizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinalizerAction {
    /// Add it (migration or unfinished restore: the state must survive).
    Add,
    /// Remove it (restore succeeded, or back to reconciling).
    Remove,
    /// Leave the list as it is.
    Keep,
}

/// What one reconcile does with a ShootState.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The shoot is gone or deleting: release our finalizer (when present) and delete the
    /// ShootState (unless it is already deleting).
    Remove {
        /// Whether our finalizer is on the ShootState.
        release: bool,
        /// Whether the ShootState still needs its DELETE.
        delete: bool,
    },
    /// The shoot has a last operation: apply [`finalizer_action`].
    Finalizer(FinalizerAction),
    /// The shoot has no last operation yet: nothing to protect, wait for a change.
    Wait,
}

/// The decision for a ShootState that `has` our finalizer (and is `deleting` or not) and its
/// `shoot` (`None` when it does not exist).
pub fn decide(shoot: Option<&Shoot>, has: bool, deleting: bool) -> Step {
    let Some(shoot) = shoot.filter(|shoot| shoot.metadata.deletion_timestamp.is_none()) else {
        return Step::Remove {
            release: has,
            delete: !deleting,
        };
    };
    match shoot.last_operation() {
        Some(operation) => Step::Finalizer(finalizer_action(operation, has)),
        None => Step::Wait,
    }
}
/// The decision of spec §3.5 for a shoot in `operation` and a ShootState that `has` the
/// finalizer or not.
pub fn finalizer_action(operation: &LastOperation, has: bool) -> FinalizerAction {
    let protect = operation.type_ == LastOperationType::Migrate
        || (operation.type_ == LastOperationType::Restore && !operation.succeeded());
    let release = (operation.type_ == LastOperationType::Restore && operation.succeeded())
        || operation.type_ == LastOperationType::Reconcile;
    match (protect, release, has) {
        (true, _, false) => FinalizerAction::Add,
        (false, true, true) => FinalizerAction::Remove,
        _ => FinalizerAction::Keep,
    }
}

/// Whether a change of a shoot's last operation from `old` to `new` concerns the finalizer:
/// non-Migrate → Migrate, Migrate → Restore, Restore (not Succeeded) → Restore Succeeded or
/// Reconcile. Both must be set.
pub fn is_relevant_transition(old: Option<&LastOperation>, new: Option<&LastOperation>) -> bool {
    let (Some(old), Some(new)) = (old, new) else {
        return false;
    };
    use LastOperationType::{Migrate, Reconcile, Restore};
    let restoring = old.type_ == Restore && !old.succeeded();
    (old.type_ != Migrate && new.type_ == Migrate)
        || (old.type_ == Migrate && new.type_ == Restore)
        || (restoring && new.type_ == Restore && new.succeeded())
        || (restoring && new.type_ == Reconcile)
}

impl Reconciler for ShootStateFinalizer {
    type Object = ShootState;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Removes a ShootState whose shoot is gone, or adds or removes the finalizer as the shoot's
    /// last operation demands; idempotent.
    async fn reconcile(&self, state: Arc<ShootState>) -> Result<Action, Error> {
        update(&state, self).await.map(|()| Action::await_change())
    }

    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// A lost guarded write is no failure: a debug line and a quiet retry on fresh state after
    /// [`CONFLICT_DELAY`]; everything else takes the runtime's route.
    fn error_policy(&self, state: &ShootState, error: &Error) -> Action {
        if error.is_conflict() {
            tracing::debug!(
                shoot_state = %state.name_any(),
                error = %error_chain(error),
                "shootstate changed while writing its finalizers, retrying on fresh state"
            );
            return Action::requeue(CONFLICT_DELAY);
        }
        routine_failure(self, state, error)
    }
}

async fn update(state: &ShootState, ctx: &ShootStateFinalizer) -> Result<(), Error> {
    let name = state.name_any();
    let namespace = state
        .namespace()
        .ok_or_else(|| Error::MissingNamespace { name: name.clone() })?;
    let key = format!("{namespace}/{name}");
    let states = Api::<ShootState>::namespaced(ctx.client.clone(), &namespace);
    // The cache may lag behind a write of our own: decide and guard on the object as it is now.
    let Some(state) = states
        .get_opt(&name)
        .await
        .map_err(|source| Error::ReadShootState {
            key: key.clone(),
            source,
        })?
    else {
        return Ok(());
    };
    let shoot = Api::<Shoot>::namespaced(ctx.client.clone(), &namespace)
        .get_opt(&name)
        .await
        .map_err(|source| Error::ReadShoot {
            key: key.clone(),
            source,
        })?;
    let has = state
        .finalizers()
        .iter()
        .any(|f| f == finalizers::SHOOT_STATE);
    let deleting = state.metadata.deletion_timestamp.is_some();
    let patch_error = |source| Error::Patch {
        key: key.clone(),
        source,
    };
    match decide(shoot.as_ref(), has, deleting) {
        Step::Wait | Step::Finalizer(FinalizerAction::Keep) => {}
        Step::Finalizer(FinalizerAction::Add) => {
            seedlet_runtime::finalizer::ensure(&states, &state, finalizers::SHOOT_STATE)
                .await
                .map_err(patch_error)?;
        }
        Step::Finalizer(FinalizerAction::Remove) => {
            seedlet_runtime::finalizer::remove(&states, &state, finalizers::SHOOT_STATE)
                .await
                .map_err(patch_error)?;
        }
        Step::Remove { release, delete } => {
            if release {
                seedlet_runtime::finalizer::remove(&states, &state, finalizers::SHOOT_STATE)
                    .await
                    .map_err(patch_error)?;
            }
            if delete {
                delete_state(&states, &name, &key).await?;
                tracing::info!(shoot_state = %key, "deleted the shootstate of a deleted shoot");
            }
        }
    }
    Ok(())
}

/// Gardener's ShootState deletion: confirm, then DELETE; a vanished object counts as done.
async fn delete_state(states: &Api<ShootState>, name: &str, key: &str) -> Result<(), Error> {
    let delete_error = |source| Error::Delete {
        key: key.to_owned(),
        source,
    };
    let confirm = json!({"metadata": {"annotations": {
        (annotations::CONFIRMATION_DELETION): "true",
    }}});
    match states
        .patch(name, &PatchParams::default(), &Patch::Merge(&confirm))
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.is_not_found() => return Ok(()),
        Err(source) => return Err(delete_error(source)),
    }
    match states.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(delete_error(source)),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use seedlet_api::common::LastOperationState;

    use super::*;

    fn op(type_: LastOperationType, state: LastOperationState) -> LastOperation {
        LastOperation {
            description: String::new(),
            last_update_time: Time(jiff::Timestamp::UNIX_EPOCH),
            progress: 0,
            state,
            type_,
        }
    }

    use LastOperationState::{Processing, Succeeded};
    use LastOperationType::{Create, Migrate, Reconcile, Restore};

    #[test]
    fn finalizer_is_added_on_migrate_and_unfinished_restore() {
        assert_eq!(
            finalizer_action(&op(Migrate, Processing), false),
            FinalizerAction::Add
        );
        assert_eq!(
            finalizer_action(&op(Restore, Processing), false),
            FinalizerAction::Add
        );
        assert_eq!(
            finalizer_action(&op(Migrate, Processing), true),
            FinalizerAction::Keep
        );
    }

    #[test]
    fn finalizer_is_removed_after_successful_restore_or_on_reconcile() {
        assert_eq!(
            finalizer_action(&op(Restore, Succeeded), true),
            FinalizerAction::Remove
        );
        assert_eq!(
            finalizer_action(&op(Reconcile, Processing), true),
            FinalizerAction::Remove
        );
        assert_eq!(
            finalizer_action(&op(Reconcile, Succeeded), false),
            FinalizerAction::Keep
        );
        assert_eq!(
            finalizer_action(&op(Create, Processing), true),
            FinalizerAction::Keep
        );
    }

    #[test]
    fn relevant_transitions_are_the_four_of_the_spec() {
        let cases = [
            (op(Reconcile, Succeeded), op(Migrate, Processing), true),
            (op(Migrate, Succeeded), op(Restore, Processing), true),
            (op(Restore, Processing), op(Restore, Succeeded), true),
            (op(Restore, Processing), op(Reconcile, Processing), true),
            (op(Migrate, Processing), op(Migrate, Succeeded), false),
            (op(Reconcile, Processing), op(Reconcile, Succeeded), false),
            (op(Restore, Succeeded), op(Reconcile, Processing), false),
        ];
        for (old, new, expected) in cases {
            assert_eq!(
                is_relevant_transition(Some(&old), Some(&new)),
                expected,
                "{old:?} -> {new:?}"
            );
        }
        assert!(!is_relevant_transition(
            None,
            Some(&op(Migrate, Processing))
        ));
    }

    fn shoot(operation: Option<LastOperation>, deleting: bool) -> Shoot {
        let mut shoot: Shoot = serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "foo", "namespace": "garden-p"},
            "spec": {"cloudProfile": {"name": "local"}, "provider": {"type": "local"},
                     "region": "local", "networking": {"type": "calico"}},
        }))
        .expect("shoot");
        if deleting {
            shoot.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        }
        if let Some(operation) = operation {
            shoot.status = Some(serde_json::from_value(json!({})).expect("status"));
            if let Some(status) = shoot.status.as_mut() {
                status.last_operation = Some(operation);
            }
        }
        shoot
    }

    #[test]
    fn decide_removes_the_state_of_a_missing_or_deleting_shoot_and_waits_without_operation() {
        let migrating = shoot(Some(op(Migrate, Processing)), false);
        let fresh = shoot(None, false);
        let deleting = shoot(Some(op(Reconcile, Succeeded)), true);
        let cases = [
            (
                None,
                false,
                false,
                Step::Remove {
                    release: false,
                    delete: true,
                },
            ),
            (
                None,
                true,
                false,
                Step::Remove {
                    release: true,
                    delete: true,
                },
            ),
            (
                None,
                true,
                true,
                Step::Remove {
                    release: true,
                    delete: false,
                },
            ),
            (
                Some(&deleting),
                false,
                false,
                Step::Remove {
                    release: false,
                    delete: true,
                },
            ),
            (Some(&fresh), false, false, Step::Wait),
            (Some(&fresh), true, false, Step::Wait),
            (
                Some(&migrating),
                false,
                false,
                Step::Finalizer(FinalizerAction::Add),
            ),
            (
                Some(&migrating),
                true,
                true,
                Step::Finalizer(FinalizerAction::Keep),
            ),
        ];
        for (shoot, has, deleting, expected) in cases {
            assert_eq!(
                decide(shoot, has, deleting),
                expected,
                "shoot {:?} has {has} deleting {deleting}",
                shoot.map(|s| s.last_operation())
            );
        }
    }

    #[test]
    fn lost_guarded_writes_are_conflicts_other_errors_are_not() {
        let api = |code: u16| {
            let status: kube::core::Status =
                serde_json::from_value(json!({"status": "Failure", "code": code})).expect("status");
            kube::Error::Api(status.boxed())
        };
        let patch = |code| Error::Patch {
            key: "p/foo".into(),
            source: api(code),
        };
        assert!(patch(409).is_conflict());
        assert!(patch(422).is_conflict());
        assert!(!patch(500).is_conflict());
        assert!(
            !Error::Delete {
                key: "p/foo".into(),
                source: api(409)
            }
            .is_conflict()
        );
    }
}
