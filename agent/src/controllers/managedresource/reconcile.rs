//! One ManagedResource reconcile (spec §5.4, §5.6, §5.7): guards, manifest decoding, pruning,
//! release of `mode=Ignore` objects, server-side apply, health and progressing checks and the
//! status write; the deletion path prunes everything (unless `keepObjects`) and drops the finalizer.
//! Every request is retried in place on transient server errors ([`seedlet_runtime::retry`]), so one failed
//! request does not make the reconcile start over; other errors fail it with their context.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::PropagationPolicy;
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::{Value, json};

use seedlet_api::conditions::ConditionStatus;
use seedlet_api::names::{condition_types, finalizers, managed_resources, reasons};
use seedlet_api::resources::{ManagedResource, ObjectReference};

use seedlet_runtime::finalizer;
use seedlet_runtime::retry::{self, RetryPolicy};

use super::apply::{self, Resolved, identity, split_api_version};
use super::error::Error;
use super::manifests::{self, SecretData, annotation};
use super::status::{StatusWriter, bool_status};
use super::{Applier, cleanup, prune};
use crate::resource_health::{self as health, Observed};
use seedlet_api::names::parses_as_true;
use seedlet_runtime::controller::Reconciler;

impl Reconciler for Applier {
    type Object = ManagedResource;
    type Error = Error;
    const NAME: &'static str = super::NAME;

    /// Reconciles one ManagedResource.
    async fn reconcile(&self, mr: Arc<ManagedResource>) -> Result<Action, Error> {
        reconcile_inner(&mr, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, error: &Error) -> Duration {
        let delay = match error {
            Error::RecreateAfterInvalidUpdate { .. } | Error::Finalizer { .. } => {
                Duration::from_millis(200)
            }
            Error::ReadSecret { .. } => Duration::from_secs(2),
            _ => Duration::from_secs(5),
        };
        delay.min(self.sync_period)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }

    /// Every ManagedResource is applied again each `syncPeriod`, by the runtime's resync.
    fn resync_period(&self) -> Option<Duration> {
        Some(self.sync_period)
    }
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
    let mut status = StatusWriter::new(mr, ctx.clock.now());

    if !deleting && is_ignored(mr) {
        mark_ignored(&mut status);
        status.write(&api, &key).await?;
        return Ok(Action::requeue(ctx.sync_period));
    }
    if deleting || !in_class {
        return cleanup::delete(mr, ctx, &api, &key, status, &finalizer_name).await;
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

    // Fetch: the manifests.
    let secrets = match read_secrets(ctx, &namespace, mr).await {
        Ok(secrets) => secrets,
        Err(error) => return fail_applied(&api, &key, &mut status, error).await,
    };
    let decoded = manifests::decode(&secrets);
    let checksum = manifests::checksum(&secrets);
    let origin = apply::origin(&namespace, &name);
    let old_refs = mr
        .status
        .as_ref()
        .map(|s| s.resources.clone())
        .unwrap_or_default();

    // Decide: the desired set, what is released, and whether checks start over.
    let (desired, released) =
        desired_set(ctx, mr, &key, &decoded.objects, &origin, &old_refs).await?;
    let mut new_refs: Vec<ObjectReference> = desired.iter().map(|d| d.reference.clone()).collect();
    new_refs.sort_by_key(identity);
    let old_checksum = mr
        .status
        .as_ref()
        .and_then(|s| s.secrets_data_checksum.as_deref());
    if new_refs != old_refs || old_checksum != Some(checksum.as_str()) {
        mark_checks_pending(&mut status);
        status.write(&api, &key).await?;
    }

    // Write: prune, release, apply in install order, then record the outcome.
    let stale = prune::to_prune(&old_refs, &new_refs, &released);
    if let Some(action) = prune_stale(ctx, &api, &key, &mut status, &stale).await? {
        return Ok(action);
    }
    for reference in &released {
        if let Err(source) = cleanup::release(ctx, reference, &origin).await {
            let error = Error::Release {
                key: key.clone(),
                object: describe(reference),
                source,
            };
            return fail_applied(&api, &key, &mut status, error).await;
        }
    }
    let mut observed = Vec::with_capacity(desired.len());
    for item in &desired {
        match apply_one(ctx, &key, item).await {
            Ok(live) => observed.push(live),
            Err(error) => return fail_applied(&api, &key, &mut status, error).await,
        }
    }
    record_outcome(&mut status, &decoded.errors, &observed);
    status.resources = Some(new_refs);
    status.checksum = Some(checksum);
    status.observed_generation = mr.metadata.generation;
    status.write(&api, &key).await?;
    Ok(Action::requeue(ctx.sync_period))
}

/// Whether the ManagedResource carries `resources.gardener.cloud/ignore=true`.
fn is_ignored(mr: &ManagedResource) -> bool {
    parses_as_true(
        mr.annotations()
            .get(managed_resources::IGNORE)
            .map(String::as_str),
    )
}

/// The conditions of an ignored ManagedResource: applied, healthy, not progressing.
fn mark_ignored(status: &mut StatusWriter) {
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
}

/// Healthy and progressing start over (`ChecksPending`) when the set or the manifests changed.
fn mark_checks_pending(status: &mut StatusWriter) {
    for type_ in [
        condition_types::RESOURCES_HEALTHY,
        condition_types::RESOURCES_PROGRESSING,
    ] {
        status.set(
            type_,
            ConditionStatus::Unknown,
            reasons::CHECKS_PENDING,
            "Checks are pending.",
        );
    }
    status.applying();
}

/// Records `error` as `ResourcesApplied=False` (its reason, its chain as message) and fails the
/// reconcile with it.
async fn fail_applied(
    api: &Api<ManagedResource>,
    key: &str,
    status: &mut StatusWriter,
    error: Error,
) -> Result<Action, Error> {
    status.set(
        condition_types::RESOURCES_APPLIED,
        ConditionStatus::False,
        error.reason(),
        &seedlet_runtime::error_chain(&error),
    );
    status.write(api, key).await?;
    Err(error)
}

/// Resolves, scopes and prepares every decoded object; splits off those switched to
/// `mode=Ignore` that were applied before (to be released). The desired objects come back in
/// Helm's install order.
///
/// # Errors
/// [`Error::Discovery`] when a kind cannot be looked up.
async fn desired_set(
    ctx: &Applier,
    mr: &ManagedResource,
    key: &str,
    objects: &[Value],
    origin: &str,
    old_refs: &[ObjectReference],
) -> Result<(Vec<Desired>, Vec<ObjectReference>), Error> {
    let mut desired = Vec::new();
    let mut released = Vec::new();
    for object in objects {
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
                key: key.to_owned(),
                kind: format!("{api_version}, Kind={kind}"),
                source,
            })?;
        let target_namespace =
            apply::effective_namespace(object, resolved.as_ref().map(|r| r.namespaced));
        let prepared = apply::prepare(
            object,
            target_namespace.as_deref(),
            origin,
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
    Ok((desired, released))
}

/// Deletes what left the set; `Some(action)` while deletions are pending.
///
/// # Errors
/// [`Error::Prune`] when some objects could not be deleted.
async fn prune_stale(
    ctx: &Applier,
    api: &Api<ManagedResource>,
    key: &str,
    status: &mut StatusWriter,
    stale: &[ObjectReference],
) -> Result<Option<Action>, Error> {
    if stale.is_empty() {
        return Ok(None);
    }
    let pruned = prune::prune(&ctx.client(), &ctx.kinds, stale, ctx.clock.now()).await;
    if !pruned.failed.is_empty() {
        let failures = pruned.failed.join(", ");
        status.set(
            condition_types::RESOURCES_APPLIED,
            ConditionStatus::False,
            reasons::DELETION_FAILED,
            &format!("Could not clean all old resources: {failures}"),
        );
        status.write(api, key).await?;
        return Err(Error::Prune {
            key: key.to_owned(),
            failures,
        });
    }
    if pruned.pending.is_empty() {
        return Ok(None);
    }
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
    status.write(api, key).await?;
    Ok(Some(Action::requeue(cleanup::DELETION_PENDING_REQUEUE)))
}

/// The conditions after a complete apply: applied (or the decoding failures), healthy and
/// progressing from the observed objects.
fn record_outcome(status: &mut StatusWriter, decode_errors: &[String], observed: &[Observed]) {
    if !decode_errors.is_empty() {
        let message = format!(
            "Could not decode all resources: {}",
            decode_errors.join("; ")
        );
        status.set(
            condition_types::RESOURCES_APPLIED,
            ConditionStatus::False,
            reasons::DECODING_FAILED,
            &message,
        );
        return;
    }
    status.set(
        condition_types::RESOURCES_APPLIED,
        ConditionStatus::True,
        reasons::APPLY_SUCCEEDED,
        reasons::APPLY_SUCCEEDED_MESSAGE,
    );
    let verdict = health::healthy(observed);
    status.set(
        condition_types::RESOURCES_HEALTHY,
        bool_status(verdict.status),
        &verdict.reason,
        &verdict.message,
    );
    let verdict = health::progressing(observed);
    status.set(
        condition_types::RESOURCES_PROGRESSING,
        bool_status(verdict.status),
        &verdict.reason,
        &verdict.message,
    );
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

/// `group/Kind` of an object (`Kind` alone for the core group), as a CRD serves it.
fn group_kind(api_version: &str, kind: &str) -> String {
    match split_api_version(api_version).0 {
        "" => kind.to_owned(),
        group => format!("{group}/{kind}"),
    }
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
        return Err(Error::KindNotServed {
            key: key.to_owned(),
            object,
            kind: group_kind(&api_version, &kind),
        });
    };
    let api = apply::dynamic_api(&ctx.client(), &resolved, namespace.as_deref());
    let ignored = parses_as_true(annotation(&item.original, managed_resources::IGNORE));
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
    if parses_as_true(annotation(
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

fn describe(reference: &ObjectReference) -> String {
    let (_, kind, namespace, name) = identity(reference);
    if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
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
    fn a_kind_the_seed_does_not_serve_names_its_crd_and_no_install_hint() {
        assert_eq!(
            group_kind("autoscaling.k8s.io/v1", "VerticalPodAutoscaler"),
            "autoscaling.k8s.io/VerticalPodAutoscaler"
        );
        assert_eq!(group_kind("v1", "ConfigMap"), "ConfigMap");
        let error = Error::KindNotServed {
            key: "garden/vpa".into(),
            object: "VerticalPodAutoscaler garden/x".into(),
            kind: group_kind("autoscaling.k8s.io/v1", "VerticalPodAutoscaler"),
        };
        let message = seedlet_runtime::error_chain(&error);
        assert!(
            message.ends_with(
                "the CRD for autoscaling.k8s.io/VerticalPodAutoscaler is not installed in the seed"
            ),
            "{message}"
        );
        assert!(!message.contains("seedlet crds"), "{message}");
        assert_eq!(error.reason(), reasons::APPLY_FAILED);
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
}
