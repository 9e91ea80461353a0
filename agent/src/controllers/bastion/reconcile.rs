//! One Bastion reconcile (spec §3.2): the Shoot, the finalizer, the extension object by §0.1's
//! basic rules, `BastionReady` and `status.ingress`; and the deletion.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::conditions::{self, ConditionStatus};
use seedlet_api::core::Shoot;
use seedlet_api::extensions;
use seedlet_api::names::{annotations, finalizers};
use seedlet_api::operations::Bastion;
use serde_json::{Value, json};

use super::desired::{self, BASTION_READY, FORCE_DELETION};
use super::{Bastions, NAME};
use crate::extension_sync::decide::{self, Decision, Rules};
use crate::extension_sync::{object, operation};
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::error_chain;
use seedlet_runtime::policy;

/// Poll period while the extension object is being deleted.
pub const DELETION_POLL: Duration = Duration::from_secs(5);

/// Errors of one Bastion reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Bastion's Shoot cannot be read.
    #[error("could not get shoot {key}")]
    Shoot {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// The Shoot has no technical ID yet.
    #[error("shoot {key} has no status.technicalID yet")]
    NoTechnicalId {
        /// `namespace/name`.
        key: String,
    },
    /// Reading or writing the Bastion failed.
    #[error("{step} of Bastion {key}")]
    Bastion {
        /// What was done.
        step: &'static str,
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the extension object failed.
    #[error("failed to ensure bastion extension resource")]
    Extension(#[source] kube::Error),
}

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Shoot { .. } | Error::NoTechnicalId { .. } => "ShootError",
            Error::Bastion { .. } => "BastionError",
            Error::Extension(_) => "FailedReconciling",
        }
    }
}

impl Reconciler for Bastions {
    type Object = Bastion;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Reconciles one Bastion of this seed.
    async fn reconcile(&self, bastion: Arc<Bastion>) -> Result<Action, Error> {
        run(&bastion, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn run(cached: &Bastion, ctx: &Bastions) -> Result<Action, Error> {
    let namespace = cached.namespace().unwrap_or_default();
    let api: Api<Bastion> = Api::namespaced(ctx.garden.clone(), &namespace);
    let Some(bastion) = api
        .get_opt(&cached.name_any())
        .await
        .map_err(|source| Error::Bastion {
            step: "reading",
            key: policy::object_key(cached),
            source,
        })?
    else {
        return Ok(Action::await_change());
    };
    if bastion.spec.seed_name.as_deref() != Some(ctx.seed_name.as_str()) {
        return Ok(Action::await_change());
    }
    let deleting = bastion.metadata.deletion_timestamp.is_some();
    if deleting
        && !bastion
            .finalizers()
            .iter()
            .any(|f| f == finalizers::GARDENER)
    {
        return Ok(Action::await_change());
    }
    let shoot_key = format!("{namespace}/{}", bastion.spec.shoot_ref.name);
    let shoot = match Api::<Shoot>::namespaced(ctx.garden.clone(), &namespace)
        .get(&bastion.spec.shoot_ref.name)
        .await
    {
        Ok(shoot) => shoot,
        Err(source) => {
            let error = Error::Shoot {
                key: shoot_key,
                source,
            };
            let message =
                desired::waiting_error(&namespace, &bastion.name_any(), &error_chain(&error));
            ready(
                ctx,
                &bastion,
                ConditionStatus::False,
                "FailedReconciling",
                &message,
                json!({}),
            )
            .await?;
            return Err(error);
        }
    };
    let technical_id = shoot
        .status
        .as_ref()
        .and_then(|s| s.technical_id.clone())
        .ok_or(Error::NoTechnicalId { key: shoot_key })?;
    let extensions_api: Api<extensions::Bastion> = Api::namespaced(ctx.seed.clone(), &technical_id);
    if deleting {
        return delete(&api, &bastion, &extensions_api, ctx).await;
    }
    seedlet_runtime::finalizer::ensure(&api, &bastion, finalizers::GARDENER)
        .await
        .map_err(|source| Error::Bastion {
            step: "adding finalizer",
            key: policy::object_key(&bastion),
            source,
        })?;

    let name = bastion.name_any();
    let spec = desired::extension_spec(&bastion);
    let existing = extensions_api
        .get_opt(&name)
        .await
        .map_err(Error::Extension)?;
    let rules = Rules {
        credentials: None,
        redeploy_without_annotation: false,
        refresh_after: None,
    };
    let now = ctx.clock.now();
    match decide::decide(existing.as_ref(), &spec, &rules, now) {
        Decision::Deploy => {
            let annotations = object::deploy_annotations(
                annotations::OPERATION_RECONCILE,
                &operation::timestamp(now),
                &[],
            );
            if let Err(source) = object::deploy(
                &extensions_api,
                existing.as_ref(),
                &name,
                Some(&technical_id),
                &spec,
                &annotations,
                ctx.field_manager,
            )
            .await
            {
                let error = Error::Extension(source);
                ready(
                    ctx,
                    &bastion,
                    ConditionStatus::False,
                    "FailedReconciling",
                    &error_chain(&error),
                    json!({}),
                )
                .await?;
                return Err(error);
            }
            Ok(Action::await_change())
        }
        Decision::Error { error, .. } => {
            let message = desired::waiting_error(&namespace, &name, &error.description);
            ready(
                ctx,
                &bastion,
                ConditionStatus::False,
                "FailedReconciling",
                &message,
                json!({}),
            )
            .await?;
            Ok(Action::await_change())
        }
        Decision::Waiting => Ok(Action::await_change()),
        Decision::Succeeded => {
            let ingress = existing
                .as_ref()
                .and_then(|x| object::status_extra(x, "ingress").cloned())
                .unwrap_or(Value::Null);
            let extra =
                json!({"ingress": ingress, "observedGeneration": bastion.metadata.generation});
            ready(
                ctx,
                &bastion,
                ConditionStatus::True,
                "SuccessfullyReconciled",
                "The bastion has been reconciled successfully.",
                extra,
            )
            .await?;
            Ok(Action::await_change())
        }
    }
}

async fn delete(
    api: &Api<Bastion>,
    bastion: &Bastion,
    extensions_api: &Api<extensions::Bastion>,
    ctx: &Bastions,
) -> Result<Action, Error> {
    ready(
        ctx,
        bastion,
        ConditionStatus::False,
        "DeletionInProgress",
        "The bastion is being deleted.",
        json!({}),
    )
    .await?;
    let name = bastion.name_any();
    if bastion
        .annotations()
        .get(FORCE_DELETION)
        .is_some_and(|value| value == "true")
    {
        let force = BTreeMap::from([(FORCE_DELETION.to_owned(), "true".to_owned())]);
        object::annotate(extensions_api, &name, &force)
            .await
            .map_err(Error::Extension)?;
    }
    match extensions_api.delete(&name, &DeleteParams::default()).await {
        Ok(_) => Ok(Action::requeue(DELETION_POLL)),
        Err(error) if object::is_gone(&error) => {
            let fresh = api.get(&name).await.map_err(|source| Error::Bastion {
                step: "reading",
                key: policy::object_key(bastion),
                source,
            })?;
            seedlet_runtime::finalizer::remove(api, &fresh, finalizers::GARDENER)
                .await
                .map_err(|source| Error::Bastion {
                    step: "removing finalizer",
                    key: policy::object_key(bastion),
                    source,
                })?;
            Ok(Action::await_change())
        }
        Err(error) => Err(Error::Extension(error)),
    }
}

/// One status patch: `BastionReady` (merged into the conditions) plus `extra` status fields.
async fn ready(
    ctx: &Bastions,
    bastion: &Bastion,
    status: ConditionStatus,
    reason: &str,
    message: &str,
    mut extra: Value,
) -> Result<(), Error> {
    let now = ctx.clock.now();
    let existing = bastion.conditions();
    let next = conditions::find_or_init(existing, BASTION_READY, now)
        .updated(status, reason, message, now);
    let unchanged = conditions::find(existing, BASTION_READY).is_some_and(|c| c.same_state(&next));
    if unchanged && extra.as_object().is_none_or(serde_json::Map::is_empty) {
        return Ok(());
    }
    extra["conditions"] = json!(conditions::merge(existing, [next]));
    Api::<Bastion>::namespaced(ctx.garden.clone(), &bastion.namespace().unwrap_or_default())
        .patch_status(
            &bastion.name_any(),
            &PatchParams {
                field_manager: Some(ctx.field_manager.to_owned()),
                ..PatchParams::default()
            },
            &Patch::Merge(&json!({ "status": extra })),
        )
        .await
        .map(|_| ())
        .map_err(|source| Error::Bastion {
            step: "writing status",
            key: policy::object_key(bastion),
            source,
        })
}
