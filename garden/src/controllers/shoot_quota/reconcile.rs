//! Quota expiry logic: read binding and quotas, decide (pure), annotate or delete, requeue.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{CredentialsBinding, Quota, QuotaReference, SecretBinding, Shoot};
use seedlet_api::names::{annotations, shoot_lifecycle};
use seedlet_runtime::controller::{Reason, Reconciler};
use serde_json::json;

use super::expiry::{self, InvalidTimestamp};
use super::{NAME, ShootQuota};

/// Errors of one quota reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Shoot has no namespace.
    #[error("shoot {0} without a namespace")]
    MissingNamespace(String),
    /// Reading the Shoot's SecretBinding or CredentialsBinding failed.
    #[error("reading {kind} {binding} of shoot {shoot}")]
    ReadBinding {
        /// `SecretBinding` or `CredentialsBinding`.
        kind: &'static str,
        /// `namespace/name` of the binding.
        binding: String,
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Reading a Quota failed.
    #[error("reading quota {quota} of shoot {shoot}")]
    ReadQuota {
        /// `namespace/name` of the Quota.
        quota: String,
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The expiration annotation does not parse.
    #[error("shoot {shoot}")]
    InvalidAnnotation {
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: InvalidTimestamp,
    },
    /// Writing the annotation, the deletion confirmation or deleting failed.
    #[error("{step} shoot {shoot}")]
    Write {
        /// What was being written.
        step: &'static str,
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The reconcile did not finish within the sync period.
    #[error("quota reconcile of shoot {shoot} timed out")]
    Timeout {
        /// `namespace/name` of the Shoot.
        shoot: String,
    },
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::MissingNamespace(_) => "ShootInvalid",
            Error::ReadBinding { .. } => "BindingReadError",
            Error::ReadQuota { .. } => "QuotaReadError",
            Error::InvalidAnnotation { .. } => "InvalidExpirationTimestamp",
            Error::Write { .. } => "ShootPatchError",
            Error::Timeout { .. } => "ReconcileTimeout",
        }
    }
}

impl Reconciler for ShootQuota {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Keeps the expiration annotation current and deletes an expired Shoot; requeues every sync
    /// period. Idempotent.
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        let bounded = async {
            match tokio::time::timeout(self.sync_period, expire(&shoot, self)).await {
                Ok(result) => result,
                Err(_) => Err(Error::Timeout {
                    shoot: shoot.name_any(),
                }),
            }
        };
        let result = bounded.await;
        result.map(|()| Action::requeue(self.sync_period))
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        self.sync_period.min(Duration::from_secs(5))
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn expire(shoot: &Shoot, ctx: &ShootQuota) -> Result<(), Error> {
    if shoot.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let name = shoot.name_any();
    let namespace = shoot
        .namespace()
        .ok_or_else(|| Error::MissingNamespace(name.clone()))?;
    let key = format!("{namespace}/{name}");
    let quotas = quotas_of(ctx, shoot, &namespace, &key).await?;
    let now = ctx.clock.now();
    let created = shoot
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |t| t.0);
    let annotation = shoot
        .annotations()
        .get(shoot_lifecycle::EXPIRATION_TIMESTAMP)
        .map(String::as_str);
    let decided = expiry::decide(annotation, expiry::lifetime_days(&quotas), created, now)
        .map_err(|source| Error::InvalidAnnotation {
            shoot: key.clone(),
            source,
        })?;
    let shoots: Api<Shoot> = Api::namespaced(ctx.client.clone(), &namespace);
    if let Some(value) = decided.annotation {
        let patch =
            json!({"metadata": {"annotations": {shoot_lifecycle::EXPIRATION_TIMESTAMP: value}}});
        write(
            "annotating",
            &key,
            shoots.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)),
        )
        .await?;
    }
    if decided.expired {
        tracing::info!(shoot = %key, "deleting shoot whose quota lifetime expired");
        let confirm = json!({"metadata": {"annotations": {
            annotations::CONFIRMATION_DELETION: "true",
            annotations::TIMESTAMP: now.strftime("%Y-%m-%dT%H:%M:%S%.fZ").to_string(),
        }}});
        write(
            "confirming deletion of",
            &key,
            shoots.patch(&name, &PatchParams::default(), &Patch::Merge(&confirm)),
        )
        .await?;
        write(
            "deleting",
            &key,
            shoots.delete(&name, &DeleteParams::default()),
        )
        .await?;
    }
    Ok(())
}

/// Runs one write; NotFound (the Shoot is gone) counts as done.
async fn write<T>(
    step: &'static str,
    shoot: &str,
    request: impl std::future::Future<Output = Result<T, kube::Error>>,
) -> Result<(), Error> {
    match request.await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(source) => Err(Error::Write {
            step,
            shoot: shoot.to_owned(),
            source,
        }),
    }
}

/// The Quotas listed by the Shoot's SecretBinding, else its CredentialsBinding.
async fn quotas_of(
    ctx: &ShootQuota,
    shoot: &Shoot,
    namespace: &str,
    key: &str,
) -> Result<Vec<Quota>, Error> {
    let references = if let Some(binding) = shoot.spec.secret_binding_name.as_deref() {
        let api: Api<SecretBinding> = Api::namespaced(ctx.client.clone(), namespace);
        api.get(binding)
            .await
            .map_err(|source| Error::ReadBinding {
                kind: "SecretBinding",
                binding: format!("{namespace}/{binding}"),
                shoot: key.to_owned(),
                source,
            })?
            .quotas
    } else if let Some(binding) = shoot.spec.credentials_binding_name.as_deref() {
        let api: Api<CredentialsBinding> = Api::namespaced(ctx.client.clone(), namespace);
        api.get(binding)
            .await
            .map_err(|source| Error::ReadBinding {
                kind: "CredentialsBinding",
                binding: format!("{namespace}/{binding}"),
                shoot: key.to_owned(),
                source,
            })?
            .quotas
    } else {
        Vec::new()
    };
    let mut quotas = Vec::with_capacity(references.len());
    for QuotaReference {
        name,
        namespace: quota_namespace,
    } in references
    {
        let quota_namespace = quota_namespace.unwrap_or_else(|| namespace.to_owned());
        let api: Api<Quota> = Api::namespaced(ctx.client.clone(), &quota_namespace);
        quotas.push(api.get(&name).await.map_err(|source| Error::ReadQuota {
            quota: format!("{quota_namespace}/{name}"),
            shoot: key.to_owned(),
            source,
        })?);
    }
    Ok(quotas)
}
