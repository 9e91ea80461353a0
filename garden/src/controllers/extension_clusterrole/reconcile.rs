//! One extension ClusterRole reconcile (spec §2.9): read the selector, list the matching
//! ServiceAccounts, create or merge-patch the ClusterRoleBinding.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_runtime::controller::{Reason, Reconciler};

use super::subjects::{self, SelectorError};
use super::{ExtensionClusterRoles, NAME};

/// Delay before a failed reconcile is retried.
pub const RETRY_DELAY: Duration = Duration::from_secs(5);

/// Errors of a reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The selector annotation is missing or invalid.
    #[error(transparent)]
    Selector(#[from] SelectorError),
    /// An API call failed.
    #[error("{what}")]
    Api {
        /// What was done.
        what: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Selector(_) => "InvalidSelector",
            Error::Api { .. } => "ApiError",
        }
    }
}

impl Reconciler for ExtensionClusterRoles {
    type Object = ClusterRole;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Binds the ClusterRole to its extension ServiceAccounts; idempotent.
    async fn reconcile(&self, role: Arc<ClusterRole>) -> Result<Action, Error> {
        let result = run(&role, self).await;
        result.map(|()| Action::await_change())
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        RETRY_DELAY
    }

    fn concurrency(&self) -> u16 {
        super::CONCURRENT_SYNCS
    }
}

async fn run(role: &ClusterRole, ctx: &ExtensionClusterRoles) -> Result<(), Error> {
    let api_error = |what: String| move |source| Error::Api { what, source };
    let Some(role) = Api::<ClusterRole>::all(ctx.client.clone())
        .get_opt(&role.name_any())
        .await
        .map_err(api_error(format!(
            "reading ClusterRole {}",
            role.name_any()
        )))?
    else {
        return Ok(());
    };
    if role.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let selector = subjects::selector(&role)?;
    let query = crate::selector::to_query(&selector).unwrap_or_default();
    let accounts: Vec<ServiceAccount> = Api::<ServiceAccount>::all(ctx.client.clone())
        .list(&ListParams::default().labels(&query))
        .await
        .map_err(api_error("listing ServiceAccounts".to_owned()))?
        .items;
    let desired = subjects::binding(&role, &accounts);
    let bindings: Api<ClusterRoleBinding> = Api::all(ctx.client.clone());
    let name = role.name_any();
    match bindings
        .get_opt(&name)
        .await
        .map_err(api_error(format!("reading ClusterRoleBinding {name}")))?
    {
        None => {
            bindings
                .create(&PostParams::default(), &desired)
                .await
                .map_err(api_error(format!("creating ClusterRoleBinding {name}")))?;
        }
        Some(existing)
            if existing.subjects != desired.subjects
                || existing.metadata.owner_references != desired.metadata.owner_references =>
        {
            let patch = serde_json::json!({
                "metadata": {"ownerReferences": desired.metadata.owner_references},
                "subjects": desired.subjects,
            });
            bindings
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(api_error(format!("patching ClusterRoleBinding {name}")))?;
        }
        Some(_) => {}
    }
    Ok(())
}
