//! A simulated provider for the shoot extension kinds (Infrastructure, ControlPlane, Network,
//! Worker, OperatingSystemConfig, ContainerRuntime, Extension, DNSRecord): the demo and the
//! end-to-end tests run no extension pods, so this controller answers every such object in a
//! control-plane namespace labelled `shoot.gardener.cloud/provider=local`.
//!
//! On `gardener.cloud/operation` (`reconcile`, `migrate`, `restore`), a missing `lastOperation`
//! or a new generation it adds its finalizer, removes the annotation and reports `lastOperation`
//! Succeeded with the observed generation and healthy conditions; an OperatingSystemConfig also
//! gets its cloud-config Secret (`status.cloudConfig.secretRef`), a Worker one machine deployment
//! per pool (replicas = pool minimum, 0 while the shoot is hibernated). Deletion removes the
//! finalizer (and the cloud-config Secret), a `migrate` too after reporting.
//!
//! State for migrations ([`simulated_state`]): every object it serves carries `status.state`
//! naming the object that first created the simulated provider resources (its uid) and how often
//! that state was restored. A `migrate` keeps the state and leaves the (simulated) resources
//! alone; a `restore` that finds the state injected from the ShootState counts one more restore,
//! so a test can tell a restored object from a new one. As with real extensions, `migrate` wins
//! over a deletion that arrives while the annotation is still there, and an object annotated
//! `wait-for-state` is left alone until the agent has injected its state.
//!
//! Failure injection: the annotation `seedlet.gardener.cloud/simulate-error=<code>` on the object,
//! or on its Shoot (read from the namespace's Cluster), makes it report `lastOperation` Error and
//! `lastError` with that code (e.g. `ERR_INFRA_RATE_LIMITS_EXCEEDED`) instead of succeeding. A
//! value `<Kind>:<code>` (e.g. `Network:ERR_INFRA_RATE_LIMITS_EXCEEDED`) limits it to one kind.
//! `seedlet.gardener.cloud/simulate-delete-error` does the same for deletions: the object
//! reports the error and keeps its finalizer, unless the Shoot is force-deleted
//! (`confirmation.gardener.cloud/force-deletion`).
//!
//! [`run_recording`] also records every release of a deleted object (kind, name, whether the
//! deletion carried `confirmation.gardener.cloud/deletion=true`, whether the namespace was
//! already terminating), so tests can check the order of a shoot's deletion.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::common::LastOperationType;
use seedlet_api::extensions::{self, Cluster, ExtensionObject};
use seedlet_api::names::{annotations, labels};
use seedlet_runtime::watch::{RunWith, Runner};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub use crate::backup_provider::Step;

/// Controller name (logs).
pub const NAME: &str = "simulated-shoot-provider";
/// The shoot provider type whose control-plane namespaces it serves.
pub const PROVIDER_TYPE: &str = "local";
/// Its finalizer on the objects it serves.
pub const FINALIZER: &str = "seedlet.gardener.cloud/simulated-provider";
const FIELD_MANAGER: &str = "seedlet-simulated-shoot-provider";
const RETRY: Duration = Duration::from_secs(2);

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[error("{step} for {kind} {key}")]
pub struct Error {
    /// What was done.
    pub step: &'static str,
    /// Kind.
    pub kind: String,
    /// `namespace/name`.
    pub key: String,
    /// Cause.
    #[source]
    pub source: kube::Error,
}

/// What a kind adds: its health condition types.
pub trait ShootKind:
    ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
{
    /// Condition types reported `True` after success.
    const CONDITIONS: &'static [&'static str];
}

macro_rules! shoot_kind {
    ($kind:ty, [$($condition:literal),*]) => {
        impl ShootKind for $kind {
            const CONDITIONS: &'static [&'static str] = &[$($condition),*];
        }
    };
}

shoot_kind!(extensions::Infrastructure, []);
shoot_kind!(extensions::ControlPlane, ["ControlPlaneHealthy"]);
shoot_kind!(extensions::Network, ["SystemComponentsHealthy"]);
shoot_kind!(
    extensions::Worker,
    ["EveryNodeReady", "ControlPlaneHealthy"]
);
shoot_kind!(extensions::OperatingSystemConfig, []);
shoot_kind!(extensions::ContainerRuntime, ["SystemComponentsHealthy"]);
shoot_kind!(extensions::Extension, []);
shoot_kind!(extensions::DNSRecord, []);

/// The step for an object of a served namespace: deleting → delete; an operation annotation →
/// that operation; no lastOperation → Create; an unobserved generation → Reconcile; else ignore.
pub fn decide<K: ExtensionObject>(object: &K) -> Step {
    let operation = object
        .annotations()
        .get(annotations::OPERATION)
        .map(String::as_str);
    if operation == Some(annotations::OPERATION_MIGRATE) {
        return Step::Operate(LastOperationType::Migrate);
    }
    if operation == Some(annotations::OPERATION_WAIT_FOR_STATE) {
        // The agent is still injecting the state of a restore; extensions leave it alone.
        return Step::Ignore;
    }
    if object.meta().deletion_timestamp.is_some() {
        return Step::Delete;
    }
    let status = object.extension_status();
    let reported = status.and_then(|s| s.last_operation.as_ref()).is_some();
    match operation {
        Some(annotations::OPERATION_RESTORE) => return Step::Operate(LastOperationType::Restore),
        Some(annotations::OPERATION_RECONCILE) if reported => {
            return Step::Operate(LastOperationType::Reconcile);
        }
        Some(annotations::OPERATION_RECONCILE) => return Step::Operate(LastOperationType::Create),
        _ => {}
    }
    if !reported {
        return Step::Operate(LastOperationType::Create);
    }
    let observed = status.and_then(|s| s.observed_generation);
    if object.meta().generation.is_some() && observed < object.meta().generation {
        return Step::Operate(LastOperationType::Reconcile);
    }
    Step::Ignore
}

/// One released object of a deletion, as [`run_recording`] records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// Kind.
    pub kind: String,
    /// `namespace/name`.
    pub key: String,
    /// The object carried `confirmation.gardener.cloud/deletion=true`.
    pub confirmed: bool,
    /// Its namespace was already terminating.
    pub namespace_terminating: bool,
}

/// The releases seen so far, in order.
pub type Releases = Arc<std::sync::Mutex<Vec<Release>>>;

/// Dependencies.
pub struct Ctx {
    /// Seed client.
    pub seed: kube::Client,
    /// Where releases are recorded, if anywhere.
    pub releases: Option<Releases>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// Runs the controller for every shoot extension kind until `stop` is cancelled.
pub async fn run(seed: kube::Client, stop: CancellationToken) {
    run_with(seed, stop, None).await;
}

/// [`run`], recording every release of a deleted object into `releases`.
pub async fn run_recording(seed: kube::Client, stop: CancellationToken, releases: Releases) {
    run_with(seed, stop, Some(releases)).await;
}

async fn run_with(seed: kube::Client, stop: CancellationToken, releases: Option<Releases>) {
    let ctx = Arc::new(Ctx {
        seed: seed.clone(),
        releases,
    });
    futures::join!(
        run_kind::<extensions::Infrastructure>(&ctx, &stop),
        run_kind::<extensions::ControlPlane>(&ctx, &stop),
        run_kind::<extensions::Network>(&ctx, &stop),
        run_kind::<extensions::Worker>(&ctx, &stop),
        run_kind::<extensions::OperatingSystemConfig>(&ctx, &stop),
        run_kind::<extensions::ContainerRuntime>(&ctx, &stop),
        run_kind::<extensions::Extension>(&ctx, &stop),
        run_kind::<extensions::DNSRecord>(&ctx, &stop),
    );
}

async fn run_kind<K: ShootKind>(ctx: &Arc<Ctx>, stop: &CancellationToken) {
    seedlet_runtime::watch::controller(
        Api::<K>::all(ctx.seed.clone()),
        kube::runtime::watcher::Config::default(),
    )
    .run_with(
        Runner::new(NAME, stop.clone()),
        reconcile::<K>,
        error_policy::<K>,
        ctx.clone(),
    )
    .await;
}

/// Retries after 2 s.
pub fn error_policy<K: ShootKind>(object: Arc<K>, error: &Error, _ctx: Arc<Ctx>) -> Action {
    if let Some(action) = seedlet_runtime::status::conflict_requeue(&object.name_any(), error) {
        return action;
    }
    tracing::warn!(controller = NAME, object = %object.name_any(), error = %seedlet_runtime::error_chain(error), "reconcile failed");
    Action::requeue(RETRY)
}

fn failed<K: ShootKind>(object: &K, step: &'static str) -> impl FnOnce(kube::Error) -> Error {
    let key = format!(
        "{}/{}",
        object.namespace().unwrap_or_default(),
        object.name_any()
    );
    move |source| Error {
        step,
        kind: K::kind(&()).into_owned(),
        key,
        source,
    }
}

/// Reconciles one object.
///
/// # Errors
/// [`Error`] naming the failing step.
pub async fn reconcile<K: ShootKind>(object: Arc<K>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let namespace = object.namespace().unwrap_or_default();
    let namespaces: Api<Namespace> = Api::all(ctx.seed.clone());
    let Some(served) = namespaces
        .get_opt(&namespace)
        .await
        .map_err(failed(object.as_ref(), "read the namespace"))?
        .filter(|ns| {
            ns.labels().get(labels::SHOOT_PROVIDER).map(String::as_str) == Some(PROVIDER_TYPE)
        })
    else {
        return Ok(Action::await_change());
    };
    let api: Api<K> = Api::namespaced(ctx.seed.clone(), &namespace);
    match decide(object.as_ref()) {
        Step::Ignore => Ok(Action::await_change()),
        Step::Delete => {
            let terminating = served.metadata.deletion_timestamp.is_some();
            delete(object.as_ref(), &api, &ctx, terminating).await
        }
        Step::Operate(type_) => operate(object.as_ref(), type_, &api, &ctx).await,
    }
}

/// Releases a deleted object (removes the cloud-config Secret of an OSC and the finalizer), or
/// reports the simulated deletion error and keeps it.
async fn delete<K: ShootKind>(
    object: &K,
    api: &Api<K>,
    ctx: &Ctx,
    namespace_terminating: bool,
) -> Result<Action, Error> {
    if !object.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(Action::await_change());
    }
    let cluster = cluster(object, ctx).await?;
    let shoot = cluster.map(|c| c.spec.shoot).unwrap_or(Value::Null);
    // A force deletion (spec §5.5) releases the object without the provider's cleanup, so a
    // simulated deletion error does not hold it.
    let forced = shoot
        .pointer(&format!(
            "/metadata/annotations/{}",
            annotations::CONFIRMATION_FORCE_DELETION.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        .is_some_and(|value| matches!(value, "1" | "t" | "T" | "true" | "TRUE" | "True"));
    if let Some(code) =
        requested_code(object, &shoot, annotations::SIMULATE_DELETE_ERROR).filter(|_| !forced)
    {
        let reported = object
            .extension_status()
            .and_then(|s| s.last_error.as_ref())
            .is_some_and(|error| error.codes.contains(&code));
        if reported {
            // Written once: the status write would otherwise trigger the next write.
            return Ok(Action::await_change());
        }
        let now = jiff::Timestamp::now().to_string();
        let status = json!({"status": {
            "lastOperation": {"type": "Delete", "state": "Error", "progress": 50,
                "description": format!("simulated deletion error {code}"), "lastUpdateTime": now},
            "lastError": {"description": format!("simulated provider deletion error {code}"),
                "codes": [code], "lastUpdateTime": now},
        }});
        api.patch_status(
            &object.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&status),
        )
        .await
        .map_err(failed(object, "report the deletion error"))?;
        return Ok(Action::await_change());
    }
    delete_cloud_config(object, ctx).await?;
    seedlet_runtime::finalizer::remove(api, object, FINALIZER)
        .await
        .map_err(failed(object, "remove the finalizer"))?;
    if let Some(releases) = &ctx.releases {
        let confirmed = object
            .annotations()
            .get(annotations::CONFIRMATION_DELETION)
            .is_some_and(|value| value == "true");
        releases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Release {
                kind: K::kind(&()).into_owned(),
                key: format!(
                    "{}/{}",
                    object.namespace().unwrap_or_default(),
                    object.name_any()
                ),
                confirmed,
                namespace_terminating,
            });
    }
    Ok(Action::await_change())
}

/// The code a `simulate-…` annotation (`annotation`) on the object or its Shoot asks the
/// object's kind to report.
fn requested_code<K: ShootKind>(object: &K, shoot: &Value, annotation: &str) -> Option<String> {
    object
        .annotations()
        .get(annotation)
        .cloned()
        .or_else(|| {
            shoot
                .pointer(&format!(
                    "/metadata/annotations/{}",
                    annotation.replace('/', "~1")
                ))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .and_then(|value| simulated_code(&value, &K::kind(&())))
}

async fn operate<K: ShootKind>(
    object: &K,
    type_: LastOperationType,
    api: &Api<K>,
    ctx: &Ctx,
) -> Result<Action, Error> {
    let migrate = type_ == LastOperationType::Migrate;
    if !migrate {
        seedlet_runtime::finalizer::ensure(api, object, FINALIZER)
            .await
            .map_err(failed(object, "add the finalizer"))?;
    }
    let cluster = cluster(object, ctx).await?;
    let shoot = cluster
        .as_ref()
        .map(|c| c.spec.shoot.clone())
        .unwrap_or(Value::Null);
    let code = requested_code(object, &shoot, annotations::SIMULATE_ERROR);
    let mut extra = json!({});
    if code.is_none() && !migrate {
        extra = kind_status(object, &shoot, ctx).await?;
        if let Some(state) = simulated_state(
            object.extension_status().and_then(|s| s.state.as_ref()),
            type_,
            object.uid().as_deref().unwrap_or_default(),
        ) {
            extra["state"] = state;
        }
    }
    let unannotate = json!({"metadata": {"annotations": {annotations::OPERATION: null}}});
    api.patch(
        &object.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&unannotate),
    )
    .await
    .map_err(failed(object, "remove the operation annotation"))?;
    let status = status_patch::<K>(
        object,
        type_,
        code.as_deref(),
        extra,
        jiff::Timestamp::now(),
    );
    api.patch_status(
        &object.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": status})),
    )
    .await
    .map_err(failed(object, "report the status"))?;
    if migrate {
        seedlet_runtime::finalizer::remove(api, object, FINALIZER)
            .await
            .map_err(failed(object, "remove the finalizer"))?;
    }
    Ok(Action::await_change())
}

async fn cluster<K: ShootKind>(object: &K, ctx: &Ctx) -> Result<Option<Cluster>, Error> {
    let clusters: Api<Cluster> = Api::all(ctx.seed.clone());
    clusters
        .get_opt(&object.namespace().unwrap_or_default())
        .await
        .map_err(failed(object, "read the Cluster"))
}

/// Kind-specific status fields: an OSC's cloud-config Secret, a Worker's machine deployments.
async fn kind_status<K: ShootKind>(object: &K, shoot: &Value, ctx: &Ctx) -> Result<Value, Error> {
    let namespace = object.namespace().unwrap_or_default();
    match K::kind(&()).as_ref() {
        "OperatingSystemConfig" => {
            let name = format!("cloud-config-{}", object.name_any());
            let secret = json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": name, "namespace": namespace},
                "data": {"cloud_config": base64_text(&format!("# simulated cloud config of {}\n", object.name_any()))},
            });
            let secrets: Api<Secret> = Api::namespaced(ctx.seed.clone(), &namespace);
            secrets
                .patch(
                    &name,
                    &PatchParams::apply(FIELD_MANAGER).force(),
                    &Patch::Apply(&secret),
                )
                .await
                .map_err(failed(object, "write the cloud-config Secret"))?;
            Ok(json!({"cloudConfig": {"secretRef": {"name": name, "namespace": namespace}}}))
        }
        "Worker" => Ok(worker_status(object.spec_extra().get("pools"), shoot)),
        "Infrastructure" => Ok(json!({"providerStatus": {
            "apiVersion": "local.provider.extensions.gardener.cloud/v1alpha1", "kind": "InfrastructureStatus"}})),
        _ => Ok(json!({})),
    }
}

/// The `status.state` to write after a successful operation other than `migrate`: a restore
/// counts one more `restores` on an existing simulated state; without any state, a new one
/// naming `uid` as the creator of the simulated resources; otherwise `None` — the state is left
/// as it is (a write from an older view of the object must not undo a restore that happened
/// meanwhile, and a state someone else wrote, like the demo's, is not ours to replace).
pub fn simulated_state(
    existing: Option<&Value>,
    type_: LastOperationType,
    uid: &str,
) -> Option<Value> {
    match existing {
        Some(state) if type_ == LastOperationType::Restore && state.get("createdBy").is_some() => {
            let mut state = state.clone();
            let restores = state.get("restores").and_then(Value::as_i64).unwrap_or(0);
            state["restores"] = json!(restores + 1);
            Some(state)
        }
        Some(_) => None,
        None => Some(json!({"createdBy": uid, "restores": 0})),
    }
}

/// The code a `simulate-error` value asks `kind` to report: `<code>` for every kind, or
/// `<Kind>:<code>` for that kind only.
pub fn simulated_code(value: &str, kind: &str) -> Option<String> {
    match value.split_once(':') {
        Some((target, code)) if target == kind && !code.is_empty() => Some(code.to_owned()),
        Some(_) => None,
        None if value.is_empty() => None,
        None => Some(value.to_owned()),
    }
}

/// `machineDeployments` of a Worker: one per pool, replicas = minimum (0 when hibernated).
pub fn worker_status(pools: Option<&Value>, shoot: &Value) -> Value {
    let hibernated = shoot
        .pointer("/spec/hibernation/enabled")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let deployments: Vec<Value> = pools
        .and_then(Value::as_array)
        .map(|pools| {
            pools
                .iter()
                .map(|pool| {
                    let name = pool.get("name").and_then(Value::as_str).unwrap_or_default();
                    let minimum = pool.get("minimum").and_then(Value::as_i64).unwrap_or(0);
                    let maximum = pool.get("maximum").and_then(Value::as_i64).unwrap_or(0);
                    json!({"name": name, "minimum": if hibernated { 0 } else { minimum },
                           "maximum": if hibernated { 0 } else { maximum }})
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"machineDeployments": deployments, "machineDeploymentsLastUpdateTime": jiff::Timestamp::now().to_string()})
}

async fn delete_cloud_config<K: ShootKind>(object: &K, ctx: &Ctx) -> Result<(), Error> {
    if K::kind(&()) != "OperatingSystemConfig" {
        return Ok(());
    }
    let secrets: Api<Secret> =
        Api::namespaced(ctx.seed.clone(), &object.namespace().unwrap_or_default());
    match secrets
        .delete(
            &format!("cloud-config-{}", object.name_any()),
            &Default::default(),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(error) => Err(failed(object, "delete the cloud-config Secret")(error)),
    }
}

fn base64_text(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// The status merge patch: Succeeded with conditions and `extra`, or Error with the simulated code.
pub fn status_patch<K: ShootKind>(
    object: &K,
    type_: LastOperationType,
    code: Option<&str>,
    extra: Value,
    now: jiff::Timestamp,
) -> Value {
    let time = now.to_string();
    let kind = K::kind(&());
    let mut status = match code {
        None => json!({
            "lastOperation": {"type": type_, "state": "Succeeded", "progress": 100,
                "description": format!("{kind} {} reconciled by the simulated provider.", object.name_any()),
                "lastUpdateTime": time},
            "lastError": null,
            "conditions": K::CONDITIONS.iter().map(|t| json!({"type": t, "status": "True",
                "reason": "SimulatedHealthy", "message": "The simulated provider reports healthy.",
                "lastTransitionTime": time, "lastUpdateTime": time})).collect::<Vec<_>>(),
        }),
        Some(code) => json!({
            "lastOperation": {"type": type_, "state": "Error", "progress": 50,
                "description": format!("simulated error {code}"), "lastUpdateTime": time},
            "lastError": {"description": format!("simulated provider error {code}"), "codes": [code],
                "lastUpdateTime": time},
        }),
    };
    status["observedGeneration"] = json!(object.meta().generation);
    if let (Some(status), Value::Object(extra)) = (status.as_object_mut(), extra) {
        status.extend(extra);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn network(annotations: Value, generation: i64, status: Value) -> extensions::Network {
        serde_json::from_value(json!({
            "apiVersion": "extensions.gardener.cloud/v1alpha1", "kind": "Network",
            "metadata": {"name": "s", "namespace": "shoot--dev--s", "generation": generation, "annotations": annotations},
            "spec": {"type": "calico"}, "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn decide_answers_operations_new_objects_and_new_generations() {
        let done = json!({"observedGeneration": 1, "lastOperation": {"type": "Create", "state": "Succeeded",
            "progress": 100, "description": "", "lastUpdateTime": "2025-01-01T00:00:00Z"}});
        let cases = [
            (
                json!({}),
                1,
                json!({}),
                Step::Operate(LastOperationType::Create),
            ),
            (
                json!({"gardener.cloud/operation": "reconcile"}),
                1,
                done.clone(),
                Step::Operate(LastOperationType::Reconcile),
            ),
            (
                json!({"gardener.cloud/operation": "migrate"}),
                1,
                done.clone(),
                Step::Operate(LastOperationType::Migrate),
            ),
            (
                json!({"gardener.cloud/operation": "restore"}),
                1,
                done.clone(),
                Step::Operate(LastOperationType::Restore),
            ),
            (
                json!({}),
                2,
                done.clone(),
                Step::Operate(LastOperationType::Reconcile),
            ),
            (json!({}), 1, done.clone(), Step::Ignore),
            (
                json!({"gardener.cloud/operation": "wait-for-state"}),
                1,
                json!({}),
                Step::Ignore,
            ),
        ];
        let mut deleting = network(json!({"gardener.cloud/operation": "migrate"}), 1, json!({}));
        deleting.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        assert_eq!(
            decide(&deleting),
            Step::Operate(LastOperationType::Migrate),
            "migrate wins"
        );
        deleting.metadata.annotations = None;
        assert_eq!(decide(&deleting), Step::Delete);
        for (annotations, generation, status, want) in cases {
            assert_eq!(
                decide(&network(annotations.clone(), generation, status)),
                want,
                "{annotations} {generation}"
            );
        }
    }

    #[test]
    fn status_reports_success_with_conditions_or_the_simulated_code() {
        let object = network(json!({}), 3, json!({}));
        let now: jiff::Timestamp = "2025-01-01T00:00:00Z".parse().unwrap();
        let ok = status_patch(&object, LastOperationType::Create, None, json!({}), now);
        assert_eq!(ok["lastOperation"]["state"], "Succeeded");
        assert_eq!(ok["observedGeneration"], 3);
        assert_eq!(ok["conditions"][0]["type"], "SystemComponentsHealthy");
        let failed = status_patch(
            &object,
            LastOperationType::Create,
            Some("ERR_INFRA_RATE_LIMITS_EXCEEDED"),
            json!({}),
            now,
        );
        assert_eq!(failed["lastOperation"]["state"], "Error");
        assert_eq!(
            failed["lastError"]["codes"],
            json!(["ERR_INFRA_RATE_LIMITS_EXCEEDED"])
        );
    }

    #[test]
    fn state_names_its_creator_and_counts_restores() {
        use LastOperationType as T;
        let created = json!({"createdBy": "uid-a", "restores": 0});
        let restored = json!({"createdBy": "uid-a", "restores": 1});
        let fresh = json!({"createdBy": "uid-b", "restores": 0});
        let cases = [
            (None, T::Create, Some(fresh.clone())),
            (None, T::Restore, Some(fresh)),
            (Some(json!({"foreign": 1})), T::Reconcile, None),
            (Some(json!({"foreign": 1})), T::Restore, None),
            (Some(created.clone()), T::Reconcile, None),
            (Some(created.clone()), T::Create, None),
            (Some(created), T::Restore, Some(restored.clone())),
            (
                Some(restored),
                T::Restore,
                Some(json!({"createdBy": "uid-a", "restores": 2})),
            ),
        ];
        for (existing, type_, want) in cases {
            assert_eq!(
                simulated_state(existing.as_ref(), type_, "uid-b"),
                want,
                "{existing:?} {type_:?}"
            );
        }
    }

    #[test]
    fn simulated_codes_may_target_one_kind() {
        let cases = [
            ("ERR_X", "Network", Some("ERR_X")),
            ("Network:ERR_X", "Network", Some("ERR_X")),
            ("Network:ERR_X", "Worker", None),
            ("Network:", "Network", None),
            ("", "Network", None),
        ];
        for (value, kind, want) in cases {
            assert_eq!(
                simulated_code(value, kind).as_deref(),
                want,
                "{value} {kind}"
            );
        }
    }

    #[test]
    fn worker_replicas_drop_to_zero_while_hibernated() {
        let pools = json!([{"name": "a", "minimum": 1, "maximum": 3}]);
        let awake = worker_status(Some(&pools), &json!({"spec": {}}));
        assert_eq!(awake["machineDeployments"][0]["minimum"], 1);
        let asleep = worker_status(
            Some(&pools),
            &json!({"spec": {"hibernation": {"enabled": true}}}),
        );
        assert_eq!(asleep["machineDeployments"][0]["maximum"], 0);
    }
}
