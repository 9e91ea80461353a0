//! The shoot control plane on a seedlet seed: gardenlet deploys etcd, kube-apiserver and the
//! other control-plane components itself (spec §3.6); a seedlet instead renders the Helm chart
//! named by `controllers.shoot.controlPlaneChart` per Shoot and applies it as the
//! ManagedResource `control-plane` (class `seed`, with its manifest Secret) in the shoot's
//! control-plane namespace, through the ControllerInstallation controller's ManagedResource
//! writer. The flows deploy it before the ControlPlane and wait for `ResourcesApplied` and
//! `ResourcesHealthy`; the delete flow removes it after the ControlPlane.
//!
//! Loading and rendering are bounded by `controllers.controllerInstallation.chartLimits`;
//! errors name the configuration field.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::DeleteParams;
use kube::{Api, ResourceExt};
use seedlet_api::conditions::ConditionStatus;
use seedlet_api::core::Shoot;
use seedlet_api::names::condition_types;
use seedlet_api::resources::ManagedResource;
use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer};
use seedlet_config::gardenlet::ControlPlaneChart;
use serde_json::{Value, json};

use super::tasks::{FlowCtx, TaskError};
use crate::extension_sync::wait::{FIRST_PAUSE, WaitTiming};
use crate::managed_manifests::{self, apply};

/// Name of the ManagedResource (and prefix of its Secrets) and of the Helm release.
pub const NAME: &str = "control-plane";
/// The configuration field the chart comes from (error messages).
pub const FIELD: &str = "controllers.shoot.controlPlaneChart";
/// Success description suffix when no chart is configured.
pub const NOT_CONFIGURED: &str = "The shoot control plane was not deployed: no controllers.shoot.controlPlaneChart is configured.";

/// A configured control-plane chart: where it comes from, its bounds and the renderer (which
/// caches compiled templates by chart digest).
pub struct ChartSource {
    config: ControlPlaneChart,
    limits: Limits,
    renderer: Renderer,
}

impl std::fmt::Debug for ChartSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChartSource")
            .field("path", &self.config.path)
            .finish_non_exhaustive()
    }
}

impl ChartSource {
    /// The chart of `config`, bounded by `limits`.
    pub fn new(config: ControlPlaneChart, limits: Limits) -> ChartSource {
        ChartSource {
            config,
            limits,
            renderer: Renderer::new(),
        }
    }

    /// The configured chart of the agent configuration, if any.
    pub fn configured(config: &seedlet_config::GardenletConfiguration) -> Option<Arc<ChartSource>> {
        let chart = config
            .controllers
            .shoot
            .as_ref()?
            .control_plane_chart
            .clone()?;
        let limits =
            crate::chart_limits::limits(&config.controllers.controller_installation.chart_limits);
        Some(Arc::new(ChartSource::new(chart, limits)))
    }

    /// Loads the chart (a directory, an archive file, or the inline archive).
    ///
    /// # Errors
    /// A message naming the field.
    pub fn load(&self) -> Result<Chart, String> {
        match (&self.config.path, &self.config.raw_chart) {
            (Some(path), _) => {
                let path = std::path::Path::new(path);
                let loaded = if path.is_dir() {
                    Chart::from_dir(path, &self.limits)
                } else {
                    let metadata = std::fs::metadata(path)
                        .map_err(|error| format!("{FIELD}.path {}: {error}", path.display()))?;
                    if metadata.len() > self.limits.max_total_bytes {
                        return Err(format!(
                            "{FIELD}.path {}: archive of {} bytes exceeds maxTotalBytes {}",
                            path.display(),
                            metadata.len(),
                            self.limits.max_total_bytes
                        ));
                    }
                    let bytes = std::fs::read(path)
                        .map_err(|error| format!("{FIELD}.path {}: {error}", path.display()))?;
                    Chart::from_archive(&bytes, &self.limits)
                };
                loaded.map_err(|error| {
                    format!(
                        "{FIELD}.path {}: {}",
                        path.display(),
                        seedlet_runtime::error_chain(&error)
                    )
                })
            }
            (None, Some(raw)) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(raw.trim())
                    .map_err(|error| format!("{FIELD}.rawChart: not base64: {error}"))?;
                Chart::from_archive(&bytes, &self.limits).map_err(|error| {
                    format!("{FIELD}.rawChart: {}", seedlet_runtime::error_chain(&error))
                })
            }
            (None, None) => Err(format!("{FIELD}: set path or rawChart")),
        }
    }

    /// Renders the chart for `shoot` into ManagedResource data (`path → manifests`).
    ///
    /// # Errors
    /// A message naming the field.
    pub fn render(
        &self,
        shoot: &Shoot,
        seed: &str,
        namespace: &str,
    ) -> Result<BTreeMap<String, String>, String> {
        let chart = self.load()?;
        let options = RenderOptions {
            release_name: NAME.to_owned(),
            namespace: namespace.to_owned(),
            values: values(shoot, seed, namespace),
            limits: self.limits,
            ..RenderOptions::default()
        };
        let rendered = self.renderer.render(&chart, &options).map_err(|error| {
            format!(
                "{FIELD}: rendering failed: {}",
                seedlet_runtime::error_chain(&error)
            )
        })?;
        managed_manifests::manifest_data(&rendered.templates, None)
            .map_err(|error| format!("{FIELD}: {}", seedlet_runtime::error_chain(&error)))
    }
}

/// The values the chart is rendered with (documented in `docs/configuration.md`).
pub fn values(shoot: &Shoot, seed: &str, namespace: &str) -> Value {
    let hibernated = shoot.hibernation_enabled();
    let uid = shoot
        .status
        .as_ref()
        .and_then(|s| s.uid.clone())
        .filter(|uid| !uid.is_empty())
        .or_else(|| shoot.metadata.uid.clone())
        .unwrap_or_default();
    json!({
        "shoot": {
            "name": shoot.name_any(),
            "namespace": shoot.namespace().unwrap_or_default(),
            "technicalID": namespace,
            "uid": uid,
            "kubernetesVersion": shoot.spec.kubernetes.as_ref().and_then(|k| k.version.clone()).unwrap_or_default(),
            "hibernated": hibernated,
            "workerless": shoot.is_workerless(),
            "purpose": shoot.spec.purpose.clone().unwrap_or_default(),
        },
        "seed": {"name": seed},
        "replicas": if hibernated { 0 } else { 1 },
    })
}

/// Renders and applies the chart of `ctx`'s shoot as ManagedResource [`NAME`].
///
/// # Errors
/// Render and write failures.
pub async fn deploy(ctx: &FlowCtx, source: Arc<ChartSource>) -> Result<(), TaskError> {
    let shoot = ctx.shoot.clone();
    let seed = ctx.seed_object.name_any();
    let namespace = ctx.namespace.clone();
    let data = tokio::task::spawn_blocking(move || source.render(&shoot, &seed, &namespace))
        .await
        .map_err(|error| TaskError::plain(format!("{FIELD}: rendering failed: {error}")))?
        .map_err(TaskError::plain)?;
    let secret = managed_manifests::secret_name(NAME, &data);
    let labels = json!({"gardener.cloud/role": "controlplane"});
    let desired = managed_manifests::managed_resource(&ctx.namespace, NAME, &labels, &secret);
    apply::apply_managed_resource(&ctx.seed, &ctx.namespace, NAME, &data, &desired)
        .await
        .map_err(|error| TaskError::plain(seedlet_runtime::error_chain(&error)))
}

/// Why the ManagedResource is not healthy yet, `None` when it is: its generation observed and
/// `ResourcesApplied` and `ResourcesHealthy` True.
pub fn unhealthy(managed: &ManagedResource) -> Option<String> {
    let status = managed.status.as_ref();
    let generation = managed.metadata.generation.unwrap_or(0);
    let observed = status.and_then(|s| s.observed_generation).unwrap_or(0);
    if observed < generation {
        return Some(format!(
            "observed generation outdated ({observed}/{generation})"
        ));
    }
    for type_ in [
        condition_types::RESOURCES_APPLIED,
        condition_types::RESOURCES_HEALTHY,
    ] {
        match status.and_then(|s| s.conditions.iter().find(|c| c.type_ == type_)) {
            None => return Some(format!("condition {type_:?} has not been reported yet")),
            Some(c) if c.status != ConditionStatus::True => {
                return Some(format!(
                    "condition {type_:?} is {:?}: {}",
                    c.status, c.message
                ));
            }
            Some(_) => {}
        }
    }
    None
}

/// Waits until ManagedResource [`NAME`] is healthy.
///
/// # Errors
/// At the timeout, with the last reason.
pub async fn wait_healthy(ctx: &FlowCtx, timing: WaitTiming) -> Result<(), TaskError> {
    let api: Api<ManagedResource> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    poll(timing, || async {
        match api.get_opt(NAME).await {
            Ok(Some(managed)) => unhealthy(&managed),
            Ok(None) => Some("managed resource not found".to_owned()),
            Err(error) => Some(seedlet_runtime::error_chain(&error)),
        }
    })
    .await
    .map_err(|last| {
        TaskError::plain(format!(
            "managed resource {}/{NAME} is not healthy (retry timeout exceeded): {last}",
            ctx.namespace
        ))
    })
}

/// Deletes ManagedResource [`NAME`] (its objects go with it), waits until it is gone and
/// deletes its manifest Secrets.
///
/// # Errors
/// API failures, or the timeout.
pub async fn destroy(ctx: &FlowCtx, timing: WaitTiming) -> Result<(), TaskError> {
    let api: Api<ManagedResource> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    match api.delete(NAME, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.is_not_found() => {}
        Err(error) => {
            return Err(TaskError::plain(format!(
                "deleting managed resource {}/{NAME}: {}",
                ctx.namespace,
                seedlet_runtime::error_chain(&error)
            )));
        }
    }
    poll(timing, || async {
        match api.get_opt(NAME).await {
            Ok(None) => None,
            Ok(Some(_)) => Some("still present".to_owned()),
            Err(error) => Some(seedlet_runtime::error_chain(&error)),
        }
    })
    .await
    .map_err(|last| {
        TaskError::plain(format!(
            "managed resource {}/{NAME} was not deleted (retry timeout exceeded): {last}",
            ctx.namespace
        ))
    })?;
    let secrets: Api<Secret> = Api::namespaced(ctx.seed.clone(), &ctx.namespace);
    apply::delete_manifest_secrets(&secrets, NAME, None)
        .await
        .map_err(|error| TaskError::plain(seedlet_runtime::error_chain(&error)))
}

/// Polls `check` (pauses doubling from 250 ms up to the interval) until it returns `None`; at
/// the timeout the last reason.
async fn poll<F, Fut>(timing: WaitTiming, check: F) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Option<String>>,
{
    let started = tokio::time::Instant::now();
    let mut pause = FIRST_PAUSE.min(timing.interval);
    loop {
        let Some(reason) = check().await else {
            return Ok(());
        };
        if started.elapsed() + pause > timing.timeout {
            return Err(reason);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(timing.interval);
    }
}

#[cfg(test)]
#[path = "control_plane_tests.rs"]
mod tests;
