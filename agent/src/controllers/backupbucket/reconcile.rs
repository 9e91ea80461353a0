//! One BackupBucket reconcile (spec §1.2): finalizers, credentials into the seed, the extension
//! object by §0.1, then the core status, provider status and generated secret. Deletion is in
//! [`super::delete`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};
use seedlet_api::common::{LastOperationState, LastOperationType};
use seedlet_api::core::BackupBucket;
use seedlet_api::extensions;
use seedlet_api::names::{annotations, finalizers, namespaces};
use serde_json::{Value, json};

use super::desired::{self, CREDENTIALS_FINALIZER};
use super::io::{
    Error, buckets, context_of, credentials_of, event, extension_buckets, write_status,
};
use super::{BackupBuckets, NAME};
use crate::extension_sync::decide::{self, Decision, Rules};
use crate::extension_sync::{credentials, object, operation};
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::error_chain;
use seedlet_runtime::events::EventType;

impl Reason for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Bucket { .. } => "BackupBucketError",
            Error::NoCredentials { .. } | Error::Credentials { .. } => "CredentialsError",
            Error::CredentialsFinalizer { .. } => "CredentialsFinalizerError",
            Error::Extension { .. } => "ExtensionError",
            Error::GeneratedSecret { .. } => "GeneratedSecretError",
            Error::ExtensionDeletion { .. } => "DeleteError",
        }
    }
}

impl Reconciler for BackupBuckets {
    type Object = BackupBucket;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Reconciles one core BackupBucket of this seed.
    async fn reconcile(&self, bucket: Arc<BackupBucket>) -> Result<Action, Error> {
        let name = bucket.name_any();
        run(&name, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(5)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn run(name: &str, ctx: &BackupBuckets) -> Result<Action, Error> {
    let api = buckets(ctx);
    let Some(bucket) = api.get_opt(name).await.map_err(|source| Error::Bucket {
        step: "reading",
        bucket: name.to_owned(),
        source,
    })?
    else {
        return Ok(Action::await_change());
    };
    if bucket.spec.seed_name.as_deref() != Some(ctx.seed_name.as_str()) {
        return Ok(Action::await_change());
    }
    if bucket.metadata.deletion_timestamp.is_some() {
        if !bucket
            .finalizers()
            .iter()
            .any(|f| f == finalizers::GARDENER)
        {
            return Ok(Action::await_change());
        }
        return super::delete::run(&bucket, ctx).await;
    }
    let bucket = if bucket
        .annotations()
        .get(annotations::OPERATION)
        .map(String::as_str)
        == Some(annotations::OPERATION_RECONCILE)
    {
        // What gardener-apiserver does on write; see the module docs.
        let patch = json!({"metadata": {"annotations": {annotations::OPERATION: null}}});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| Error::Bucket {
                step: "removing operation annotation",
                bucket: name.to_owned(),
                source,
            })?
    } else {
        bucket
    };
    seedlet_runtime::finalizer::ensure(&api, &bucket, finalizers::GARDENER)
        .await
        .map_err(|source| Error::Bucket {
            step: "adding finalizer",
            bucket: name.to_owned(),
            source,
        })?;
    reconcile_bucket(&bucket, ctx).await
}

async fn reconcile_bucket(bucket: &BackupBucket, ctx: &BackupBuckets) -> Result<Action, Error> {
    let name = bucket.name_any();
    let now = ctx.clock.now();
    let type_ = operation_type(bucket);
    let started = operation::last_operation(
        type_,
        LastOperationState::Processing,
        0,
        desired::RECONCILE_STARTED,
        now,
    );
    let generation = bucket.metadata.generation;
    let last_error = bucket.status.as_ref().and_then(|s| s.last_error.as_ref());
    write_status(
        ctx,
        &name,
        operation::status_fields(&started, last_error, generation),
    )
    .await?;

    let credentials = match credentials_of(bucket, ctx).await {
        Ok(credentials) => credentials,
        Err(error) => {
            let description = error_chain(&error);
            event(
                ctx,
                bucket,
                EventType::Warning,
                "ReconcileError",
                "Reconcile",
                &description,
            )
            .await;
            let failed = operation::last_operation(
                type_,
                LastOperationState::Error,
                50,
                description.clone(),
                now,
            );
            let last = operation::last_error(description, Vec::new());
            write_status(
                ctx,
                &name,
                operation::status_fields(&failed, Some(&last), generation),
            )
            .await?;
            return Err(error);
        }
    };
    let seed_secret = credentials::write_seed_secret(
        &ctx.seed,
        &desired::seed_secret_name(&name),
        &credentials,
        &context_of(bucket),
        now,
        false,
        ctx.field_manager,
    )
    .await
    .map_err(|source| Error::Credentials {
        bucket: name.clone(),
        source,
    })?;

    let spec = desired::extension_spec(bucket, &name);
    let extensions_api = extension_buckets(ctx);
    let existing = extensions_api
        .get_opt(&name)
        .await
        .map_err(|source| Error::Extension {
            step: "reading",
            bucket: name.clone(),
            source,
        })?;
    let rules = Rules {
        credentials: Some(decide::Credentials {
            changed: seed_secret.changed,
            timestamp: seed_secret.timestamp,
        }),
        redeploy_without_annotation: true,
        refresh_after: Some(decide::BUCKET_REFRESH),
    };
    match decide::decide(existing.as_ref(), &spec, &rules, now) {
        Decision::Deploy => {
            deploy(ctx, existing.as_ref(), &name, &spec).await?;
            Ok(Action::await_change())
        }
        Decision::Error {
            error,
            deploy: redeploy,
        } => {
            event(
                ctx,
                bucket,
                EventType::Warning,
                "ReconcileError",
                "Reconcile",
                &error.description,
            )
            .await;
            let failed = operation::last_operation(
                type_,
                LastOperationState::Error,
                50,
                error.description.clone(),
                now,
            );
            let last = operation::last_error(error.description, error.codes);
            write_status(
                ctx,
                &name,
                operation::status_fields(&failed, Some(&last), generation),
            )
            .await?;
            if redeploy {
                deploy(ctx, existing.as_ref(), &name, &spec).await?;
            }
            Ok(Action::await_change())
        }
        Decision::Waiting => Ok(Action::await_change()),
        Decision::Succeeded => {
            let extension = existing.as_ref().expect("Succeeded implies an object");
            sync_generated_secret(bucket, extension, ctx).await?;
            let done = operation::last_operation(
                type_,
                LastOperationState::Succeeded,
                100,
                desired::RECONCILE_SUCCEEDED,
                now,
            );
            let mut status = operation::status_fields(&done, None, generation);
            if let Some(provider_status) = extension
                .status
                .as_ref()
                .and_then(|s| s.provider_status.clone())
            {
                status["providerStatus"] = provider_status;
            }
            write_status(ctx, &name, status).await?;
            Ok(Action::await_change())
        }
    }
}

/// The OT of the bucket (spec §0).
pub fn operation_type(bucket: &BackupBucket) -> LastOperationType {
    operation::operation_type(
        bucket.annotations(),
        bucket.metadata.deletion_timestamp.is_some(),
        bucket
            .status
            .as_ref()
            .and_then(|s| s.last_operation.as_ref()),
    )
}

async fn deploy(
    ctx: &BackupBuckets,
    existing: Option<&extensions::BackupBucket>,
    name: &str,
    spec: &Value,
) -> Result<(), Error> {
    let stamp = operation::timestamp(ctx.clock.now());
    let annotations = object::deploy_annotations(
        annotations::OPERATION_RECONCILE,
        &stamp,
        &[(desired::GENERATED_SECRET_NAMESPACE, namespaces::GARDEN)],
    );
    object::deploy(
        &extension_buckets(ctx),
        existing,
        name,
        None,
        spec,
        &annotations,
        ctx.field_manager,
    )
    .await
    .map_err(|source| Error::Extension {
        step: "deploying",
        bucket: name.to_owned(),
        source,
    })
}

/// Spec §1.5: the core reference first, then the garden copy of the extension's generated secret.
async fn sync_generated_secret(
    bucket: &BackupBucket,
    extension: &extensions::BackupBucket,
    ctx: &BackupBuckets,
) -> Result<(), Error> {
    let Some(reference) = object::status_extra(extension, "generatedSecretRef") else {
        return Ok(());
    };
    let name = bucket.name_any();
    let target = desired::generated_secret_name(&name);
    let reference_status =
        json!({"generatedSecretRef": {"name": target, "namespace": namespaces::GARDEN}});
    write_status(ctx, &name, reference_status).await?;
    let source_name = reference
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let source_namespace = reference
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or(namespaces::GARDEN);
    let generated_error = |step: String| {
        let bucket = name.clone();
        move |source| Error::GeneratedSecret {
            step,
            bucket,
            source,
        }
    };
    let source = Api::<Secret>::namespaced(ctx.seed.clone(), source_namespace)
        .get(source_name)
        .await
        .map_err(generated_error(format!(
            "reading seed secret {source_namespace}/{source_name}"
        )))?;
    let data = source.data.unwrap_or_default();
    let api: Api<Secret> = Api::namespaced(ctx.garden.clone(), namespaces::GARDEN);
    let owner = owner_reference(bucket);
    let write_step = format!("writing garden secret {}/{target}", namespaces::GARDEN);
    match api
        .get_opt(&target)
        .await
        .map_err(generated_error(write_step.clone()))?
    {
        None => {
            let secret = Secret {
                metadata: kube::api::ObjectMeta {
                    name: Some(target.clone()),
                    namespace: Some(namespaces::GARDEN.to_owned()),
                    owner_references: Some(vec![owner]),
                    finalizers: Some(vec![CREDENTIALS_FINALIZER.to_owned()]),
                    ..Default::default()
                },
                data: Some(data),
                ..Secret::default()
            };
            let params = PostParams {
                field_manager: Some(ctx.field_manager.to_owned()),
                ..PostParams::default()
            };
            api.create(&params, &secret)
                .await
                .map_err(generated_error(write_step))?;
        }
        Some(existing) => {
            let mut finalizers = existing.finalizers().to_vec();
            if !finalizers.iter().any(|f| f == CREDENTIALS_FINALIZER) {
                finalizers.push(CREDENTIALS_FINALIZER.to_owned());
            }
            let mut data_patch: BTreeMap<String, Value> = existing
                .data
                .unwrap_or_default()
                .into_keys()
                .map(|key| (key, Value::Null))
                .collect();
            for (key, value) in &data {
                data_patch.insert(key.clone(), json!(value));
            }
            // The finalizer list goes out whole: guarded by the resourceVersion read, a
            // concurrent writer's finalizer is never dropped (409, the queue retries).
            let mut patch =
                seedlet_runtime::finalizer::guarded_patch(&existing.metadata, &finalizers);
            patch["metadata"]["ownerReferences"] = json!([owner]);
            patch["data"] = json!(data_patch);
            api.patch(&target, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(generated_error(write_step))?;
        }
    }
    Ok(())
}

/// The controller reference from the generated secret to its BackupBucket.
pub fn owner_reference(bucket: &BackupBucket) -> OwnerReference {
    OwnerReference {
        api_version: BackupBucket::api_version(&()).into_owned(),
        kind: BackupBucket::kind(&()).into_owned(),
        name: bucket.name_any(),
        uid: bucket.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}
