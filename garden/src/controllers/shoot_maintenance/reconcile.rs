//! Maintenance logic: window check, CloudProfile read, the pure run, a dry run of the write,
//! then the Shoot's status (`lastMaintenance`) and spec/annotations, and Events.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use rand::Rng as _;
use seedlet_api::core::{CloudProfile, NamespacedCloudProfile, Shoot};
use seedlet_api::names::{annotations, shoot_lifecycle};
use seedlet_runtime::controller::{Reason, Reconciler};
use seedlet_runtime::events::EventType;
use seedlet_runtime::status;
use serde_json::{Value, json};

use super::run::{self, Outcome, Step};
use super::window::Window;
use super::{Maintenance, NAME, cleanups, migrate, operation, rotation};

/// Errors of one maintenance reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Shoot has no namespace.
    #[error("shoot {0} without a namespace")]
    MissingNamespace(String),
    /// The Shoot references no cloud profile.
    #[error("shoot {0} references no cloud profile")]
    MissingCloudProfile(String),
    /// Reading the cloud profile failed.
    #[error("reading {kind} {name} of shoot {shoot}")]
    ReadCloudProfile {
        /// `CloudProfile` or `NamespacedCloudProfile`.
        kind: String,
        /// Profile name.
        name: String,
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing `status.lastMaintenance` failed.
    #[error("patching status.lastMaintenance of shoot {shoot}")]
    PatchStatus {
        /// `namespace/name` of the Shoot.
        shoot: String,
        /// Cause.
        #[source]
        source: kube::Error,
    },
    /// Writing the maintained spec and annotations failed.
    #[error("updating maintained shoot {shoot}")]
    PatchShoot {
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
            Error::MissingCloudProfile(_) => "CloudProfileMissing",
            Error::ReadCloudProfile { .. } => "CloudProfileReadError",
            Error::PatchStatus { .. } => "ShootStatusPatchError",
            Error::PatchShoot { .. } => "MaintenanceFailed",
        }
    }
}

impl Reconciler for Maintenance {
    type Object = Shoot;
    type Error = Error;
    const NAME: &'static str = NAME;

    /// Maintains the Shoot when asked or inside its window and requeues to a random instant of the
    /// next window. Idempotent apart from the window: a second run inside the same window maintains
    /// again only when triggered (the trigger filter and the requeue keep that to once per window).
    async fn reconcile(&self, shoot: Arc<Shoot>) -> Result<Action, Error> {
        maintain(&shoot, self).await
    }

    /// Retry delay after a failure (the runtime logs it once).
    fn retry_after(&self, _: &Error) -> Duration {
        Duration::from_secs(15)
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

/// Maintains `shoot`, starting over from a fresh read when a guarded write loses to another writer
/// (the agent writes a busy Shoot's status many times a minute): a conflict is neither a refusal to
/// record as `Failed` nor a failure to wait 15 s for, and the whole run is planned again from what
/// is stored, up to [`status::CONFLICT_ATTEMPTS`] times; then the 409 goes to the runtime, which requeues.
async fn maintain(shoot: &Shoot, ctx: &Maintenance) -> Result<Action, Error> {
    let name = shoot.name_any();
    let namespace = shoot
        .namespace()
        .ok_or_else(|| Error::MissingNamespace(name.clone()))?;
    let shoots: Api<Shoot> = Api::namespaced(ctx.client.clone(), &namespace);
    let (api, namespace) = (&shoots, namespace.as_str());
    status::retry_on_fresh_copy(api, shoot, |current| {
        Box::pin(async move { maintain_once(&current, ctx, api, namespace).await })
    })
    .await
}

/// One maintenance run on `shoot` as read.
async fn maintain_once(
    shoot: &Shoot,
    ctx: &Maintenance,
    shoots: &Api<Shoot>,
    namespace: &str,
) -> Result<Action, Error> {
    if shoot.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let name = shoot.name_any();
    let key = format!("{namespace}/{name}");
    let now = ctx.clock.now();
    let window = time_window(shoot);
    let requested = operation::lists(
        shoot.annotations().get(annotations::OPERATION),
        shoot_lifecycle::OPERATION_MAINTAIN,
    );
    let requeue = Action::requeue(
        Duration::try_from(window.next_delay(now, rand::rng().random::<f64>()))
            .unwrap_or(Duration::ZERO),
    );
    if !requested && !window.contains(now) {
        return Ok(requeue);
    }
    tracing::info!(shoot = %key, requested, "maintaining shoot");
    let profile = cloud_profile(ctx, shoot, namespace, &key).await?;
    let spec = serde_json::to_value(&shoot.spec).unwrap_or(Value::Null);
    let Plan {
        spec: mut maintained_spec,
        steps,
        mut texts,
        mut annotations,
    } = plan(shoot, &spec, &profile, now, ctx.disable_nginx_ingress);
    migrate_binding(ctx, namespace, &spec, &mut maintained_spec, &mut texts).await;
    operation::add_tasks(
        &mut annotations,
        ctx.restart_control_plane,
        ctx.restart_core_addons,
    );
    let planned = shoot_patch(
        shoot,
        shoot.resource_version(),
        &spec,
        &maintained_spec,
        &annotations,
    );
    let dry_run = PatchParams {
        dry_run: true,
        ..PatchParams::default()
    };
    match shoots.patch(&name, &dry_run, &Patch::Merge(&planned)).await {
        Ok(_) => {}
        // The Shoot changed since it was read: not a refusal of the maintained spec.
        Err(source) if status::is_conflict(&source) => {
            return Err(Error::PatchShoot { shoot: key, source });
        }
        Err(refusal) => {
            record_refusal(shoots, shoot, &refusal, now, &key).await?;
            return Ok(requeue);
        }
    }
    let resource_version = write_last_maintenance(shoots, shoot, &steps, &texts, now, &key)
        .await?
        .or_else(|| shoot.resource_version());
    let patch = shoot_patch(
        shoot,
        resource_version,
        &spec,
        &maintained_spec,
        &annotations,
    );
    if let Err(source) = shoots
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        let error = Error::PatchShoot { shoot: key, source };
        if status::conflict_in_chain(&error) {
            return Err(error);
        }
        ctx.events
            .publish(
                shoot,
                EventType::Warning,
                "MaintenanceFailed",
                "Reconcile",
                &seedlet_runtime::error_chain(&error).to_string(),
            )
            .await;
        return Err(error);
    }
    let processing = !steps.is_empty() || !texts.is_empty();
    let failed = steps.iter().any(|step| step.failed());
    if processing && !failed {
        // Written as Processing before the update; the update went through.
        shoots
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": {"lastMaintenance": {"state": "Succeeded"}}})),
            )
            .await
            .map_err(|source| Error::PatchStatus {
                shoot: key.clone(),
                source,
            })?;
    }
    publish_events(ctx, shoot, &steps).await;
    Ok(requeue)
}

/// Moves a Shoot crossing Kubernetes 1.34 from its SecretBinding to a CredentialsBinding (§6.6)
/// and records the outcome among the texts, before the 1.35 cleanups as upstream orders them.
async fn migrate_binding(
    ctx: &Maintenance,
    namespace: &str,
    spec: &Value,
    maintained: &mut Value,
    texts: &mut Vec<String>,
) {
    let version = |spec: &Value| {
        spec.pointer("/kubernetes/version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let Some(binding) = maintained
        .get("secretBindingName")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return;
    };
    if maintained.get("credentialsBindingName").is_some()
        || !migrate::crosses_1_34(&version(spec), &version(maintained))
    {
        return;
    }
    let text = match migrate::migrate(&ctx.client, namespace, &binding).await {
        Ok(credentials) => {
            if let Some(object) = maintained.as_object_mut() {
                object.remove("secretBindingName");
                object.insert("credentialsBindingName".into(), Value::String(credentials));
            }
            migrate::MIGRATED.to_owned()
        }
        Err(error) => {
            format!("Failed to migrate from secretBindingName to credentialsBindingName: {error}")
        }
    };
    let later = [
        ".spec.kubernetes.kubeScheduler.",
        ".spec.kubernetes.kubeAPIServer.watchCacheSizes",
        ".spec.addons",
        ".spec.dns.providers",
        "Added ",
    ];
    let at = texts
        .iter()
        .position(|t| later.iter().any(|prefix| t.starts_with(prefix)))
        .unwrap_or(texts.len());
    texts.insert(at, text);
}

/// What a maintenance run changes: the spec, the step results, the other texts for
/// `lastMaintenance`, and the annotations (§6.5).
struct Plan {
    spec: Value,
    steps: Vec<Step>,
    texts: Vec<String>,
    annotations: BTreeMap<String, String>,
}

/// The pure part of a run at `now`: versions, rotations, cleanups, operation annotation and, with
/// the feature gate, the nginx-ingress addon.
fn plan(
    shoot: &Shoot,
    spec: &Value,
    profile: &Value,
    now: Timestamp,
    disable_nginx_ingress: bool,
) -> Plan {
    let mut maintained = run::maintain(spec, profile, now);
    let status = shoot
        .status
        .as_ref()
        .and_then(|status| serde_json::to_value(status).ok());
    let created = shoot
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |t| t.0);
    let rotations = rotation::due_rotations(spec, status.as_ref(), created, now);
    let started: Vec<&str> = rotations
        .iter()
        .filter(|(_, outcome)| matches!(outcome, Outcome::Updated { .. }))
        .map(|(key, _)| *key)
        .collect();
    maintained.steps.extend(
        rotations
            .iter()
            .map(|(key, outcome)| Step::Rotation((*key).to_owned(), outcome.clone())),
    );
    let version = |spec: &Value| {
        spec.pointer("/kubernetes/version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (old, new) = (version(spec), version(&maintained.spec));
    let mut texts = cleanups::version_cleanups(&mut maintained.spec, &old, &new);
    let mut annotations = shoot.annotations().clone();
    if let Some(operation) =
        operation::apply_operation(&mut annotations, shoot.last_operation(), &started)
        && operation != annotations::OPERATION_RECONCILE
    {
        texts.push(format!("Added \"{operation}\" operation annotation"));
    }
    if disable_nginx_ingress {
        texts.extend(cleanups::disable_nginx_ingress(&mut maintained.spec));
    }
    Plan {
        spec: maintained.spec,
        steps: maintained.steps,
        texts,
        annotations,
    }
}

fn time_window(shoot: &Shoot) -> Window {
    let window = shoot
        .spec
        .maintenance
        .as_ref()
        .and_then(|maintenance| maintenance.time_window.as_ref());
    Window::from_spec(
        window.map(|w| w.begin.as_str()),
        window.map(|w| w.end.as_str()),
    )
}

/// The profile spec: a CloudProfile's `spec` or a NamespacedCloudProfile's merged
/// `status.cloudProfileSpec`.
async fn cloud_profile(
    ctx: &Maintenance,
    shoot: &Shoot,
    namespace: &str,
    key: &str,
) -> Result<Value, Error> {
    let reference = shoot
        .cloud_profile()
        .ok_or_else(|| Error::MissingCloudProfile(key.to_owned()))?;
    let read_error = |source| Error::ReadCloudProfile {
        kind: reference.kind_or_default().to_owned(),
        name: reference.name.clone(),
        shoot: key.to_owned(),
        source,
    };
    if reference.kind_or_default() == "NamespacedCloudProfile" {
        let api: Api<NamespacedCloudProfile> = Api::namespaced(ctx.client.clone(), namespace);
        let profile = api.get(&reference.name).await.map_err(read_error)?;
        return Ok(profile
            .status
            .and_then(|status| status.cloud_profile_spec)
            .unwrap_or(Value::Null));
    }
    let api: Api<CloudProfile> = Api::all(ctx.client.clone());
    let profile = api.get(&reference.name).await.map_err(read_error)?;
    Ok(Value::Object(profile.spec.fields.into_iter().collect()))
}

/// Writes `status.lastMaintenance`: `Processing` (or `Failed` with the failure reason) when a
/// step ran; else a stored `Failed` or `Processing` becomes `Succeeded`. Returns the Shoot's new
/// `resourceVersion` when it wrote.
async fn write_last_maintenance(
    shoots: &Api<Shoot>,
    shoot: &Shoot,
    steps: &[Step],
    texts: &[String],
    now: Timestamp,
    key: &str,
) -> Result<Option<String>, Error> {
    let stored = shoot
        .status
        .as_ref()
        .and_then(|status| status.last_maintenance.as_ref());
    let last = match run::summary(steps, texts) {
        Some((description, failure)) => json!({
            "description": description,
            "triggeredTime": Time(now),
            "state": if failure.is_some() { "Failed" } else { "Processing" },
            "failureReason": failure,
        }),
        None => match stored.map(|s| s.state.as_str()) {
            Some("Failed") => json!({
                "description": "Maintenance succeeded",
                "state": "Succeeded",
                "failureReason": null,
            }),
            Some("Processing") => json!({"state": "Succeeded"}),
            _ => return Ok(None),
        },
    };
    shoots
        .patch_status(
            &shoot.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"lastMaintenance": last}})),
        )
        .await
        .map(|patched| patched.resource_version())
        .map_err(|source| Error::PatchStatus {
            shoot: key.to_owned(),
            source,
        })
}

/// Records a maintenance whose dry run the API server refused (§6.2): `lastMaintenance` Failed
/// with the refusal and `gardener.cloud/operation` dropped when it lists `maintain`, in one
/// merge patch of the status endpoint guarded by the Shoot's resourceVersion (a conflict is an
/// error, retried with the fresh Shoot). gardener-apiserver keeps the metadata part of a status
/// write; a CRD-served garden drops it, so the annotation is then removed through the Shoot
/// itself (a refusal of that is logged: the failure is recorded, the next window maintains).
async fn record_refusal(
    shoots: &Api<Shoot>,
    shoot: &Shoot,
    refusal: &kube::Error,
    now: Timestamp,
    key: &str,
) -> Result<(), Error> {
    let message = match refusal {
        kube::Error::Api(status) => status.message.clone(),
        other => seedlet_runtime::error_chain(other),
    };
    let reason = format!("Updates to the Shoot failed to be applied: {message}");
    tracing::info!(shoot = %key, %reason, "shoot maintenance failed");
    let maintain_listed = |shoot: &Shoot| {
        operation::lists(
            shoot.annotations().get(annotations::OPERATION),
            shoot_lifecycle::OPERATION_MAINTAIN,
        )
    };
    let mut metadata = json!({"resourceVersion": shoot.resource_version()});
    if maintain_listed(shoot) {
        metadata["annotations"] = json!({annotations::OPERATION: null});
    }
    let patch = json!({
        "metadata": metadata,
        "status": {"lastMaintenance": {
            "description": "Maintenance failed",
            "state": "Failed",
            "failureReason": reason,
            "triggeredTime": Time(now),
        }},
    });
    let name = shoot.name_any();
    let recorded = shoots
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::PatchStatus {
            shoot: key.to_owned(),
            source,
        })?;
    if maintain_listed(shoot) && maintain_listed(&recorded) {
        let removal = json!({"metadata": {
            "resourceVersion": recorded.resource_version(),
            "annotations": {annotations::OPERATION: null},
        }});
        if let Err(error) = shoots
            .patch(&name, &PatchParams::default(), &Patch::Merge(&removal))
            .await
        {
            tracing::warn!(
                shoot = %key,
                error = %seedlet_runtime::error_chain(&error),
                "removing the maintain operation after a failed maintenance"
            );
        }
    }
    Ok(())
}

/// A merge patch guarded by `resource_version` (the Shoot's as read, or after the status write):
/// the spec changes of the run and the annotations (removed ones null).
fn shoot_patch(
    shoot: &Shoot,
    resource_version: Option<String>,
    spec: &Value,
    maintained: &Value,
    wanted: &BTreeMap<String, String>,
) -> Value {
    let mut annotations = serde_json::Map::new();
    for (key, value) in wanted {
        if shoot.annotations().get(key) != Some(value) {
            annotations.insert(key.clone(), Value::String(value.clone()));
        }
    }
    for key in shoot.annotations().keys() {
        if !wanted.contains_key(key) {
            annotations.insert(key.clone(), Value::Null);
        }
    }
    let spec_patch = cleanups::merge_patch(spec, maintained).unwrap_or_else(|| json!({}));
    json!({
        "metadata": {"resourceVersion": resource_version, "annotations": annotations},
        "spec": spec_patch,
    })
}

async fn publish_events(ctx: &Maintenance, shoot: &Shoot, steps: &[Step]) {
    for step in steps {
        let (reason, subject, outcome, kind) = match step {
            // Rotations are reported in lastMaintenance only.
            Step::Rotation(..) => continue,
            Step::ControlPlane(o) => (
                "KubernetesVersionMaintenance",
                "Control Plane".to_owned(),
                o,
                "Kubernetes",
            ),
            Step::PoolKubernetes(pool, o) => (
                "KubernetesVersionMaintenance",
                format!("Worker pool \"{pool}\""),
                o,
                "Kubernetes",
            ),
            Step::PoolImage(pool, o) => (
                "MachineImageVersionMaintenance",
                format!("Worker pool \"{pool}\""),
                o,
                "Machine image",
            ),
        };
        let (type_, message) = match outcome {
            Outcome::Updated {
                description,
                reason,
            } => (
                EventType::Normal,
                format!("{subject}: {description}. Reason: {reason}."),
            ),
            Outcome::Failed { error, reason } => (
                EventType::Warning,
                format!(
                    "{subject}: {kind} version maintenance failed. Reason for update: {reason}. Error: {error}"
                ),
            ),
        };
        ctx.events
            .publish(shoot, type_, reason, "Reconcile", &message)
            .await;
    }
}
