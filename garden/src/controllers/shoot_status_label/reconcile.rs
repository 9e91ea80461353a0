//! Status-label logic: compute the label and merge-patch it when it differs.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use seedlet_api::names::shoot_lifecycle;
use seedlet_runtime::controller::{Reason, Reconciler};
use serde_json::json;

use super::label::shoot_health;
use super::{NAME, StatusLabel};

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

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace(_) => "ShootInvalid",
            Error::PatchLabel { .. } => "ShootPatchError",
        }
    }
}

impl Reconciler for StatusLabel {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Sets `shoot.gardener.cloud/status` to the computed health when it is missing or differs.
    /// Idempotent; no requeue (the next change of the Shoot triggers again).
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        let result = label(&shoot, self).await;
        result.map(|()| Action::await_change())
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn label(shoot: &Shoot, ctx: &StatusLabel) -> Result<(), Error> {
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
