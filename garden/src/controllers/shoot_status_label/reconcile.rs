//! Status-label logic: compute the label and merge-patch it when it differs.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_api::names::shoot_lifecycle;
use seedlet_runtime::policy;
use serde_json::json;

use super::label::shoot_health;
use super::{Ctx, NAME};

/// Errors of one status-label reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Shoot has no namespace.
    #[error("shoot {0} without a namespace")]
    MissingNamespace(String),
    /// Patching the label failed.
    #[error("patching label {} of shoot {shoot}", shoot_lifecycle::STATUS_LABEL)]
    PatchLabel {
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// CamelCase reason for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace(_) => "ShootInvalid",
            Error::PatchLabel { .. } => "ShootPatchError",
        }
    }
}

/// Sets `shoot.gardener.cloud/status` to the computed health when it is missing or differs.
/// Idempotent; no requeue (the next change of the Shoot triggers again).
///
/// # Errors
/// When the patch fails (NotFound = the Shoot is gone, which is success).
pub async fn reconcile(shoot: Arc<Shoot>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let object = policy::object_key(shoot.as_ref());
    let result = policy::measured(&ctx.metrics, NAME, &object, label(&shoot, &ctx)).await;
    result.map(|()| Action::await_change())
}

/// Requeues after a short delay and logs the error once.
pub fn error_policy(shoot: Arc<Shoot>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    policy::requeue_after_failure(
        NAME,
        &policy::object_key(shoot.as_ref()),
        error.reason(),
        error,
        Duration::from_secs(5),
    )
}

async fn label(shoot: &Shoot, ctx: &Ctx) -> Result<(), Error> {
    let name = shoot.name_any();
    let namespace = shoot
        .namespace()
        .ok_or_else(|| Error::MissingNamespace(name.clone()))?;
    let computed = shoot_health(shoot.status.as_ref()).as_str();
    if shoot
        .labels()
        .get(shoot_lifecycle::STATUS_LABEL)
        .is_some_and(|stored| stored == computed)
    {
        return Ok(());
    }
    let patch = json!({"metadata": {"labels": {shoot_lifecycle::STATUS_LABEL: computed}}});
    let shoots: Api<Shoot> = Api::namespaced(ctx.client.clone(), &namespace);
    match shoots
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => {
            tracing::debug!(shoot = %format!("{namespace}/{name}"), status = computed, "shoot status label set");
            Ok(())
        }
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(Error::PatchLabel {
            shoot: format!("{namespace}/{name}"),
            source,
        }),
    }
}
