//! One ManagedResource reconcile (spec §5.4, §5.6, §5.7): guards, manifest decoding, pruning,
//! release of `mode=Ignore` objects, server-side apply, health and progressing checks and the
//! status write; the deletion path prunes everything (unless `keepObjects`) and drops the finalizer.
//! Every request is retried in place on transient server errors ([`seedlet_runtime::retry`]), so one failed
//! request does not make the reconcile start over; other errors fail it with their context.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams, PropagationPolicy};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::{Value, json};

use seedlet_api::conditions::{self, Condition, ConditionStatus};
use seedlet_api::names::{condition_types, finalizers, managed_resources, reasons};
use seedlet_api::resources::{ManagedResource, ObjectReference};

use super::apply::{self, Resolved, identity, split_api_version};
use super::health::{self, Observed};
use super::manifests::{self, SecretData, annotation, truthy};
use super::prune;
use seedlet_runtime::finalizer;

use super::Applier;
use seedlet_runtime::retry::{self, RetryPolicy};

/// Requeue delay while deletions are pending (spec §5.4 step 7).
pub const DELETION_PENDING_REQUEUE: Duration = Duration::from_secs(5);

/// Errors of one ManagedResource reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ManagedResource has no namespace.
    #[error("managed resource {name} has no namespace")]
    MissingNamespace {
        /// Name.
        name: String,
    },
    /// Adding or removing the finalizer failed.
    #[error("updating finalizer of managed resource {key}")]
    Finalizer {
        /// `namespace/name`.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// A referenced Secret could not be read.
    #[error("reading secret {secret} of managed resource {key}")]
    ReadSecret {
        /// `namespace/name` of the MR.
        key: String,
        /// Secret name.
        secret: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Resolving a kind through discovery failed.
    #[error("discovering kind {kind} for managed resource {key}")]
    Discovery {
        /// `namespace/name` of the MR.
        key: String,
        /// `apiVersion, Kind=...`.
        kind: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Applying an object failed.
    #[error("applying {object} of managed resource {key}")]
    Apply {
        /// `namespace/name` of the MR.
        key: String,
        /// `Kind namespace/name`.
        object: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// An object rejected an update as invalid and was deleted to be re-created on the next pass.
    #[error(
        "deleted {object} of managed resource {key} after an invalid update, re-creating on next pass"
    )]
    RecreateAfterInvalidUpdate {
        /// `namespace/name` of the MR.
        key: String,
        /// `Kind namespace/name`.
        object: String,
    },
    /// An object's deletion annotations are invalid.
    #[error("invalid annotation on {object} of managed resource {key}: {message}")]
    InvalidAnnotation {
        /// `namespace/name` of the MR.
        key: String,
        /// `Kind namespace/name`.
        object: String,
        /// What is wrong.
        message: String,
    },
    /// Pruning objects failed.
    #[error("deleting objects of managed resource {key}: {failures}")]
    Prune {
        /// `namespace/name` of the MR.
        key: String,
        /// One entry per failed object.
        failures: String,
    },
    /// Releasing a `mode=Ignore` object failed.
    #[error("releasing {object} of managed resource {key}")]
    Release {
        /// `namespace/name` of the MR.
        key: String,
        /// `Kind namespace/name`.
        object: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the status failed.
    #[error("writing status of managed resource {key}")]
    WriteStatus {
        /// `namespace/name` of the MR.
        key: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// The condition reason for this failure.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::ReadSecret { .. } => reasons::CANNOT_READ_SECRET,
            Error::Prune { .. } => reasons::DELETION_FAILED,
            Error::Release { .. } => reasons::RELEASE_OF_ORPHANED_RESOURCES_FAILED,
            _ => reasons::APPLY_FAILED,
        }
    }
}

/// Reconciles one ManagedResource.
///
/// # Errors
/// See [`Error`]; the failure is also recorded in `ResourcesApplied` where the spec says so.
pub async fn reconcile(mr: Arc<ManagedResource>, ctx: Arc<Applier>) -> Result<Action, Error> {
    let started = tokio::time::Instant::now();
    let result = reconcile_inner(&mr, &ctx).await;
    ctx.agent
        .metrics
        .reconciled(super::NAME, started.elapsed(), result.is_ok());
    result
}

/// Maps an error to a retry delay: quick for conflicts and transient failures, capped at the sync period.
pub fn error_policy(mr: Arc<ManagedResource>, error: &Error, ctx: Arc<Applier>) -> Action {
    tracing::warn!(managed_resource = %key(&mr), error = %seedlet_runtime::error_chain(error), "reconciling managed resource failed");
    let delay = match error {
        Error::RecreateAfterInvalidUpdate { .. } | Error::Finalizer { .. } => {
            Duration::from_millis(200)
        }
        Error::ReadSecret { .. } => Duration::from_secs(2),
        _ => Duration::from_secs(5),
    };
    Action::requeue(delay.min(ctx.sync_period))
}

fn key(mr: &ManagedResource) -> String {
    format!("{}/{}", mr.namespace().unwrap_or_default(), mr.name_any())
}

async fn reconcile_inner(mr: &ManagedResource, ctx: &Applier) -> Result<Action, Error> {
    let name = mr.name_any();
    let namespace = mr
        .namespace()
        .ok_or_else(|| Error::MissingNamespace { name: name.clone() })?;
    let key = format!("{namespace}/{name}");
    let api: Api<ManagedResource> = Api::namespaced(ctx.client(), &namespace);
    let finalizer_name = finalizers::resource_manager(Some(managed_resources::CLASS_SEED));
    let in_class = mr.spec.class.as_deref() == Some(managed_resources::CLASS_SEED);
    let has_finalizer = mr.finalizers().iter().any(|f| f == &finalizer_name);
    if !in_class && !has_finalizer {
        return Ok(Action::await_change());
    }
    let deleting = mr.metadata.deletion_timestamp.is_some();
    let mut status = StatusWriter::new(mr, ctx.agent.clock.now());

    if !deleting
        && truthy(
            mr.annotations()
                .get(managed_resources::IGNORE)
                .map(String::as_str),
        )
    {
        let (reason, message) = (
            reasons::MANAGED_RESOURCE_IGNORED,
            reasons::MANAGED_RESOURCE_IGNORED_MESSAGE,
        );
        status.set(
            condition_types::RESOURCES_APPLIED,
            ConditionStatus::True,
            reason,
            message,
        );
        status.set(
            condition_types::RESOURCES_HEALTHY,
            ConditionStatus::True,
            reason,
            message,
        );
        status.set(
            condition_types::RESOURCES_PROGRESSING,
            ConditionStatus::False,
            reason,
            message,
        );
        status.write(&api, &key).await?;
        return Ok(Action::requeue(ctx.sync_period));
    }
    if deleting || !in_class {
        return delete(mr, ctx, &api, &key, status, &finalizer_name).await;
    }
    // Guarded by resourceVersion: a retry after a write that did land fails with 409, which is
    // returned like any conflict.
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        finalizer::ensure(&api, mr, &finalizer_name)
    })
    .await
    .map_err(|source| Error::Finalizer {
        key: key.clone(),
        source,
    })?;

    // Manifests.
    let secrets = match read_secrets(ctx, &namespace, mr).await {
        Ok(secrets) => secrets,
        Err(error) => {
            status.set(
                condition_types::RESOURCES_APPLIED,
                ConditionStatus::False,
                reasons::CANNOT_READ_SECRET,
                &seedlet_runtime::error_chain(&error),
            );
            status.write(&api, &key).await?;
            return Err(error);
        }
    };
    let decoded = manifests::decode(&secrets);
    let checksum = manifests::checksum(&secrets);
    let origin = apply::origin(&namespace, &name);
    let old_refs = mr
        .status
        .as_ref()
        .map(|s| s.resources.clone())
        .unwrap_or_default();

    // Desired set: scope, prepare, split off released (`mode=Ignore`) objects.
    let mut desired = Vec::new();
    let mut released = Vec::new();
    for object in &decoded.objects {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let resolved = ctx
            .kinds
            .resolve(&ctx.client(), api_version, kind)
            .await
            .map_err(|source| Error::Discovery {
                key: key.clone(),
                kind: format!("{api_version}, Kind={kind}"),
                source,
            })?;
        let target_namespace =
            apply::effective_namespace(object, resolved.as_ref().map(|r| r.namespaced));
        let prepared = apply::prepare(
            object,
            target_namespace.as_deref(),
            &origin,
            &mr.spec.inject_labels,
        );
        let reference = apply::reference(&prepared);
        if manifests::is_mode_ignore(object) {
            if old_refs
                .iter()
                .any(|old| identity(old) == identity(&reference))
            {
                released.push(reference);
            }
            continue;
        }
        desired.push(Desired {
            original: object.clone(),
            prepared,
            reference,
            resolved,
        });
    }
    desired.sort_by_key(|d| apply::install_order(&d.prepared));
    let mut new_refs: Vec<ObjectReference> = desired.iter().map(|d| d.reference.clone()).collect();
    new_refs.sort_by_key(identity);

    let old_checksum = mr
        .status
        .as_ref()
        .and_then(|s| s.secrets_data_checksum.clone());
    if new_refs != old_refs || old_checksum.as_deref() != Some(checksum.as_str()) {
        status.set(
            condition_types::RESOURCES_HEALTHY,
            ConditionStatus::Unknown,
            reasons::CHECKS_PENDING,
            "Checks are pending.",
        );
        status.set(
            condition_types::RESOURCES_PROGRESSING,
            ConditionStatus::Unknown,
            reasons::CHECKS_PENDING,
            "Checks are pending.",
        );
        status.applying();
        status.write(&api, &key).await?;
    }

    // Prune what left the set.
    let stale = prune::to_prune(&old_refs, &new_refs, &released);
    if !stale.is_empty() {
        let pruned = prune::prune(&ctx.client(), &ctx.kinds, &stale, ctx.agent.clock.now()).await;
        if !pruned.failed.is_empty() {
            let failures = pruned.failed.join(", ");
            status.set(
                condition_types::RESOURCES_APPLIED,
                ConditionStatus::False,
                reasons::DELETION_FAILED,
                &format!("Could not clean all old resources: {failures}"),
            );
            status.write(&api, &key).await?;
            return Err(Error::Prune { key, failures });
        }
        if !pruned.pending.is_empty() {
            let message = format!(
                "Deletion of old resources is still pending: [{}]",
                pruned.pending.join(", ")
            );
            status.set(
                condition_types::RESOURCES_APPLIED,
                ConditionStatus::Progressing,
                reasons::DELETION_PENDING,
                &message,
            );
            status.write(&api, &key).await?;
            return Ok(Action::requeue(DELETION_PENDING_REQUEUE));
        }
    }

    // Release objects switched to `mode=Ignore`.
    for reference in &released {
        if let Err(error) = release(ctx, reference, &origin).await {
            let error = Error::Release {
                key: key.clone(),
                object: describe(reference),
                source: error,
            };
            status.set(
                condition_types::RESOURCES_APPLIED,
                ConditionStatus::False,
                error.reason(),
                &seedlet_runtime::error_chain(&error),
            );
            status.write(&api, &key).await?;
            return Err(error);
        }
    }

    // Apply in install order.
    let mut observed = Vec::with_capacity(desired.len());
    for item in &desired {
        match apply_one(ctx, &key, item).await {
            Ok(live) => observed.push(live),
            Err(error) => {
                status.set(
                    condition_types::RESOURCES_APPLIED,
                    ConditionStatus::False,
                    error.reason(),
                    &seedlet_runtime::error_chain(&error),
                );
                status.write(&api, &key).await?;
                return Err(error);
            }
        }
    }

    if decoded.errors.is_empty() {
        status.set(
            condition_types::RESOURCES_APPLIED,
            ConditionStatus::True,
            reasons::APPLY_SUCCEEDED,
            reasons::APPLY_SUCCEEDED_MESSAGE,
        );
        let verdict = health::healthy(&observed);
        status.set(
            condition_types::RESOURCES_HEALTHY,
            bool_status(verdict.status),
            &verdict.reason,
            &verdict.message,
        );
        let verdict = health::progressing(&observed);
        status.set(
            condition_types::RESOURCES_PROGRESSING,
            bool_status(verdict.status),
            &verdict.reason,
            &verdict.message,
        );
    } else {
        let message = format!(
            "Could not decode all resources: {}",
            decoded.errors.join("; ")
        );
        status.set(
            condition_types::RESOURCES_APPLIED,
            ConditionStatus::False,
            reasons::DECODING_FAILED,
            &message,
        );
    }
    status.resources = Some(new_refs);
    status.checksum = Some(checksum);
    status.observed_generation = mr.metadata.generation;
    status.write(&api, &key).await?;
    Ok(Action::requeue(ctx.sync_period))
}

/// One desired object.
struct Desired {
    original: Value,
    prepared: Value,
    reference: ObjectReference,
    resolved: Option<Resolved>,
}

async fn read_secrets(
    ctx: &Applier,
    namespace: &str,
    mr: &ManagedResource,
) -> Result<Vec<SecretData>, Error> {
    let secrets: Api<Secret> = Api::namespaced(ctx.client(), namespace);
    let mut out = Vec::with_capacity(mr.spec.secret_refs.len());
    for reference in &mr.spec.secret_refs {
        let secret = retry::idempotent(&RetryPolicy::RECONCILE, || secrets.get(&reference.name))
            .await
            .map_err(|source| Error::ReadSecret {
                key: key(mr),
                secret: reference.name.clone(),
                source,
            })?;
        out.push(SecretData {
            name: reference.name.clone(),
            data: secret
                .data
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.0))
                .collect(),
        });
    }
    Ok(out)
}

/// Applies one object and returns what the health checks need.
async fn apply_one(ctx: &Applier, key: &str, item: &Desired) -> Result<Observed, Error> {
    let reference = &item.reference;
    let api_version = reference.api_version.clone().unwrap_or_default();
    let kind = reference.kind.clone().unwrap_or_default();
    let name = reference.name.clone().unwrap_or_default();
    let namespace = reference.namespace.clone();
    let object = describe(reference);
    let resolved = match &item.resolved {
        Some(resolved) => Some(resolved.clone()),
        // A kind unknown before may be served now (a CRD applied earlier in this pass).
        None => ctx
            .kinds
            .resolve(&ctx.client(), &api_version, &kind)
            .await
            .map_err(|source| Error::Discovery {
                key: key.to_owned(),
                kind: format!("{api_version}, Kind={kind}"),
                source,
            })?,
    };
    let Some(resolved) = resolved else {
        let status = kube::core::Status::failure(
            &format!("no matches for kind {kind:?} in version {api_version:?}"),
            "NotFound",
        )
        .with_code(404);
        return Err(Error::Apply {
            key: key.to_owned(),
            object,
            source: kube::Error::Api(status.boxed()),
        });
    };
    let api = apply::dynamic_api(&ctx.client(), &resolved, namespace.as_deref());
    let ignored = truthy(annotation(&item.original, managed_resources::IGNORE));
    let result = if ignored {
        let mut verbatim = item.original.clone();
        if let (Some(map), Some(namespace)) = (
            verbatim
                .pointer_mut("/metadata")
                .and_then(Value::as_object_mut),
            &namespace,
        ) {
            map.insert("namespace".into(), json!(namespace));
        }
        apply::create_if_absent(&api, &name, &verbatim).await
    } else {
        apply::server_side_apply(&api, &name, &item.prepared, ctx.field_manager).await
    };
    let live = match result {
        Ok(live) => live,
        Err(kube::Error::Api(status))
            if status.is_invalid() && recreate_on_invalid(&item.original) =>
        {
            let propagation = propagation_on_invalid(&item.original).map_err(|message| {
                Error::InvalidAnnotation {
                    key: key.to_owned(),
                    object: object.clone(),
                    message,
                }
            })?;
            let group = split_api_version(&api_version).0;
            apply::delete(&api, group, &name, propagation)
                .await
                .map_err(|source| Error::Apply {
                    key: key.to_owned(),
                    object: object.clone(),
                    source,
                })?;
            return Err(Error::RecreateAfterInvalidUpdate {
                key: key.to_owned(),
                object,
            });
        }
        Err(source) => {
            return Err(Error::Apply {
                key: key.to_owned(),
                object,
                source,
            });
        }
    };
    ctx.watches.ensure(&resolved);
    Ok(Observed {
        group: resolved.resource.group.clone(),
        kind,
        namespace: namespace.unwrap_or_default(),
        name,
        object: Some(live),
    })
}

/// Delete and re-create on `Invalid`: annotated `delete-on-invalid-update`, or an immutable v1 ConfigMap/Secret.
fn recreate_on_invalid(object: &Value) -> bool {
    if truthy(annotation(
        object,
        managed_resources::DELETE_ON_INVALID_UPDATE,
    )) {
        return true;
    }
    let core = object.get("apiVersion").and_then(Value::as_str) == Some("v1");
    let kind = object.get("kind").and_then(Value::as_str);
    core && matches!(kind, Some("ConfigMap" | "Secret"))
        && object.get("immutable").and_then(Value::as_bool) == Some(true)
}

/// The propagation policy of `deletion-propagation-on-invalid-update`.
fn propagation_on_invalid(object: &Value) -> Result<Option<PropagationPolicy>, String> {
    match annotation(
        object,
        managed_resources::DELETION_PROPAGATION_ON_INVALID_UPDATE,
    ) {
        None => Ok(None),
        Some("Background") => Ok(Some(PropagationPolicy::Background)),
        Some("Foreground") => Ok(Some(PropagationPolicy::Foreground)),
        Some("Orphan") => Ok(Some(PropagationPolicy::Orphan)),
        Some(other) => Err(format!("unsupported deletion propagation policy {other:?}")),
    }
}

/// Removes origin and description from a released object if it still names this MR.
async fn release(
    ctx: &Applier,
    reference: &ObjectReference,
    origin: &str,
) -> Result<(), kube::Error> {
    let api_version = reference.api_version.as_deref().unwrap_or_default();
    let kind = reference.kind.as_deref().unwrap_or_default();
    let Some(resolved) = ctx.kinds.resolve(&ctx.client(), api_version, kind).await? else {
        return Ok(());
    };
    let api = apply::dynamic_api(&ctx.client(), &resolved, reference.namespace.as_deref());
    let name = reference.name.as_deref().unwrap_or_default();
    let Some(live) = retry::idempotent(&RetryPolicy::RECONCILE, || api.get_opt(name)).await? else {
        return Ok(());
    };
    if live
        .annotations()
        .get(managed_resources::ORIGIN)
        .map(String::as_str)
        != Some(origin)
    {
        return Ok(());
    }
    let patch = json!({"metadata": {"annotations": {managed_resources::ORIGIN: null, managed_resources::DESCRIPTION: null}}});
    let (params, patch) = (PatchParams::default(), Patch::Merge(&patch));
    retry::idempotent(&RetryPolicy::RECONCILE, || api.patch(name, &params, &patch)).await?;
    Ok(())
}

/// The deletion path (spec §5.6).
async fn delete(
    mr: &ManagedResource,
    ctx: &Applier,
    api: &Api<ManagedResource>,
    key: &str,
    mut status: StatusWriter,
    finalizer_name: &str,
) -> Result<Action, Error> {
    status.set(
        condition_types::RESOURCES_HEALTHY,
        ConditionStatus::False,
        reasons::DELETION_PENDING,
        reasons::DELETION_PENDING_MESSAGE,
    );
    status.set(
        condition_types::RESOURCES_PROGRESSING,
        ConditionStatus::True,
        reasons::DELETION_PENDING,
        reasons::DELETION_PENDING_MESSAGE,
    );
    if mr.spec.keep_objects != Some(true) {
        status.set(
            condition_types::RESOURCES_APPLIED,
            ConditionStatus::Progressing,
            reasons::DELETION_PENDING,
            reasons::DELETION_PENDING_MESSAGE,
        );
        let refs = mr
            .status
            .as_ref()
            .map(|s| s.resources.clone())
            .unwrap_or_default();
        let pruned = prune::prune(&ctx.client(), &ctx.kinds, &refs, ctx.agent.clock.now()).await;
        if !pruned.failed.is_empty() {
            let failures = pruned.failed.join(", ");
            status.set(
                condition_types::RESOURCES_APPLIED,
                ConditionStatus::False,
                reasons::DELETION_FAILED,
                &format!("Could not delete all resources: {failures}"),
            );
            status.write(api, key).await?;
            return Err(Error::Prune {
                key: key.to_owned(),
                failures,
            });
        }
        if !pruned.pending.is_empty() {
            status.write(api, key).await?;
            return Ok(Action::requeue(DELETION_PENDING_REQUEUE));
        }
    }
    status.write(api, key).await?;
    retry::idempotent(&RetryPolicy::RECONCILE, || {
        finalizer::remove(api, mr, finalizer_name)
    })
    .await
    .map_err(|source| Error::Finalizer {
        key: key.to_owned(),
        source,
    })?;
    Ok(Action::await_change())
}

fn describe(reference: &ObjectReference) -> String {
    let (_, kind, namespace, name) = identity(reference);
    if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}

fn bool_status(value: bool) -> ConditionStatus {
    if value {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    }
}

/// Accumulates status changes and writes them as one JSON merge patch on `/status` when anything changed.
struct StatusWriter {
    original: Vec<Condition>,
    conditions: Vec<Condition>,
    written: Vec<Condition>,
    resources: Option<Vec<ObjectReference>>,
    checksum: Option<String>,
    observed_generation: Option<i64>,
    original_resources: Vec<ObjectReference>,
    original_checksum: Option<String>,
    original_generation: Option<i64>,
    now: Timestamp,
}

impl StatusWriter {
    fn new(mr: &ManagedResource, now: Timestamp) -> Self {
        let status = mr.status.clone().unwrap_or_default();
        Self {
            original: status.conditions.clone(),
            conditions: status.conditions.clone(),
            written: status.conditions,
            resources: None,
            checksum: None,
            observed_generation: None,
            original_resources: status.resources,
            original_checksum: status.secrets_data_checksum,
            original_generation: status.observed_generation,
            now,
        }
    }

    fn set(&mut self, type_: &str, status: ConditionStatus, reason: &str, message: &str) {
        conditions::set(
            &mut self.conditions,
            type_,
            status,
            reason,
            message,
            self.now,
        );
    }

    /// `ResourcesApplied=Progressing ApplyProgressing`, keeping a failure's reason and message.
    fn applying(&mut self) {
        let previous = conditions::find(&self.original, condition_types::RESOURCES_APPLIED);
        let keep = previous.filter(|c| {
            matches!(
                c.reason.as_str(),
                reasons::APPLY_FAILED | reasons::DELETION_FAILED | reasons::DELETION_PENDING
            )
        });
        let (reason, message) = match keep {
            Some(c) => (c.reason.clone(), c.message.clone()),
            None => (
                reasons::APPLY_PROGRESSING.to_owned(),
                "The resources are currently being applied.".to_owned(),
            ),
        };
        self.set(
            condition_types::RESOURCES_APPLIED,
            ConditionStatus::Progressing,
            &reason,
            &message,
        );
    }

    async fn write(&mut self, api: &Api<ManagedResource>, key: &str) -> Result<(), Error> {
        let mut patch = serde_json::Map::new();
        if self.conditions != self.written {
            patch.insert("conditions".into(), json!(self.conditions));
        }
        if let Some(resources) = &self.resources
            && *resources != self.original_resources
        {
            patch.insert("resources".into(), json!(resources));
        }
        if let Some(checksum) = &self.checksum
            && Some(checksum) != self.original_checksum.as_ref()
        {
            patch.insert("secretsDataChecksum".into(), json!(checksum));
        }
        if self.observed_generation.is_some()
            && self.observed_generation != self.original_generation
        {
            patch.insert("observedGeneration".into(), json!(self.observed_generation));
        }
        if patch.is_empty() {
            return Ok(());
        }
        let name = key.rsplit_once('/').map_or(key, |(_, name)| name);
        let body = json!({"status": patch});
        let (params, patch) = (PatchParams::default(), Patch::Merge(&body));
        // The patch sets fixed values, so writing it twice is harmless.
        match retry::idempotent(&RetryPolicy::RECONCILE, || {
            api.patch_status(name, &params, &patch)
        })
        .await
        {
            Ok(_) => {}
            // The MR vanished (its finalizer was just removed elsewhere): nothing to report.
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(source) => {
                return Err(Error::WriteStatus {
                    key: key.to_owned(),
                    source,
                });
            }
        }
        self.written = self.conditions.clone();
        if let Some(resources) = &self.resources {
            self.original_resources = resources.clone();
        }
        if self.checksum.is_some() {
            self.original_checksum = self.checksum.clone();
        }
        if self.observed_generation.is_some() {
            self.original_generation = self.observed_generation;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immutable_core_config_maps_and_annotated_objects_are_recreated_on_invalid() {
        let cases = [
            (
                json!({"apiVersion": "v1", "kind": "ConfigMap", "immutable": true}),
                true,
            ),
            (
                json!({"apiVersion": "v1", "kind": "Secret", "immutable": false}),
                false,
            ),
            (
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"annotations": {"resources.gardener.cloud/delete-on-invalid-update": "true"}}}),
                true,
            ),
            (
                json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
                false,
            ),
        ];
        for (object, expected) in cases {
            assert_eq!(recreate_on_invalid(&object), expected, "{object}");
        }
    }

    #[test]
    fn propagation_on_invalid_accepts_known_policies_only() {
        let object = |value: &str| json!({"metadata": {"annotations": {"resources.gardener.cloud/deletion-propagation-on-invalid-update": value}}});
        assert!(matches!(
            propagation_on_invalid(&object("Orphan")),
            Ok(Some(PropagationPolicy::Orphan))
        ));
        assert!(propagation_on_invalid(&object("Whatever")).is_err());
        assert!(matches!(propagation_on_invalid(&json!({})), Ok(None)));
    }

    #[test]
    fn applying_keeps_failure_reason_and_message() {
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let mut mr = ManagedResource::new("x", Default::default());
        let failed = Condition::initialized(condition_types::RESOURCES_APPLIED, now).updated(
            ConditionStatus::False,
            reasons::APPLY_FAILED,
            "boom",
            now,
        );
        mr.status = Some(seedlet_api::resources::ManagedResourceStatus {
            conditions: vec![failed],
            ..Default::default()
        });
        let mut writer = StatusWriter::new(&mr, now);
        writer.applying();
        let applied =
            conditions::find(&writer.conditions, condition_types::RESOURCES_APPLIED).unwrap();
        assert_eq!(
            (
                applied.status.clone(),
                applied.reason.as_str(),
                applied.message.as_str()
            ),
            (ConditionStatus::Progressing, reasons::APPLY_FAILED, "boom")
        );

        let mut writer = StatusWriter::new(&ManagedResource::new("y", Default::default()), now);
        writer.applying();
        let applied =
            conditions::find(&writer.conditions, condition_types::RESOURCES_APPLIED).unwrap();
        assert_eq!(applied.reason, reasons::APPLY_PROGRESSING);
    }
}
