//! One ShootState finalizer reconcile (spec §3.5): read the shoot's last operation, decide
//! (pure) whether `core.gardener.cloud/shootstate` must be added or removed, and merge-patch the
//! finalizer list guarded by the resourceVersion.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::{LastOperation, LastOperationType};
use seedlet_api::core::{Shoot, ShootState};
use seedlet_api::names::finalizers;
use serde_json::json;

use super::{Ctx, NAME};
use seedlet_runtime::error_chain;

/// Delay before a failed reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// Errors of one ShootState finalizer reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ShootState has no namespace.
    #[error("shootstate {name} has no namespace")]
    MissingNamespace {
        /// ShootState name.
        name: String,
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
    /// The shoot of the ShootState does not exist.
    #[error("shoot {key} of the shootstate not found")]
    ShootNotFound {
        /// `namespace/name`.
        key: String,
    },
    /// The shoot has no last operation yet.
    #[error("shoot {key} has no last operation")]
    NoLastOperation {
        /// `namespace/name`.
        key: String,
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
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace { .. } => "ShootStateNamespaceMissing",
            Error::ReadShoot { .. } => "ShootReadError",
            Error::ShootNotFound { .. } => "ShootNotFound",
            Error::NoLastOperation { .. } => "ShootLastOperationMissing",
            Error::Patch { .. } => "ShootStatePatchError",
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

/// Adds or removes the finalizer as the shoot's last operation demands; idempotent.
///
/// # Errors
/// See [`Error`]; a conflict is returned and retried on fresh state.
pub async fn reconcile(state: Arc<ShootState>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let started = Instant::now();
    let result = update(&state, &ctx).await;
    ctx.metrics
        .reconciled(NAME, started.elapsed(), result.is_ok());
    result.map(|()| Action::await_change())
}

/// Retries after [`RETRY_DELAY`] and logs the error once.
pub fn error_policy(state: Arc<ShootState>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    tracing::warn!(
        shoot_state = %state.name_any(),
        reason = error.reason(),
        error = %error_chain(error),
        "shootstate finalizer reconcile failed"
    );
    Action::requeue(RETRY_DELAY)
}

async fn update(state: &ShootState, ctx: &Ctx) -> Result<(), Error> {
    let name = state.name_any();
    let namespace = state
        .namespace()
        .ok_or_else(|| Error::MissingNamespace { name: name.clone() })?;
    let key = format!("{namespace}/{name}");
    let shoot = Api::<Shoot>::namespaced(ctx.client.clone(), &namespace)
        .get_opt(&name)
        .await
        .map_err(|source| Error::ReadShoot {
            key: key.clone(),
            source,
        })?
        .ok_or_else(|| Error::ShootNotFound { key: key.clone() })?;
    let operation = shoot
        .last_operation()
        .ok_or_else(|| Error::NoLastOperation { key: key.clone() })?;
    let mut current = state.finalizers().to_vec();
    let has = current.iter().any(|f| f == finalizers::SHOOT_STATE);
    match finalizer_action(operation, has) {
        FinalizerAction::Keep => return Ok(()),
        FinalizerAction::Add => current.push(finalizers::SHOOT_STATE.to_owned()),
        FinalizerAction::Remove => current.retain(|f| f != finalizers::SHOOT_STATE),
    }
    // A merge patch replaces the whole list: the resourceVersion makes sure no other
    // controller's entry added meanwhile is lost.
    let patch = json!({"metadata": {
        "finalizers": current,
        "resourceVersion": state.metadata.resource_version,
    }});
    Api::<ShootState>::namespaced(ctx.client.clone(), &namespace)
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::Patch { key, source })?;
    Ok(())
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
}
