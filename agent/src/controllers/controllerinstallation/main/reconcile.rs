//! Installing one ControllerInstallation (spec §2.2): resolve registration, seed and deployment
//! ([`super::fetch`], judged by [`super::conditions`]), compute the values and render the chart
//! (decide), write namespace, manifest Secret and ManagedResource in the seed ([`super::write`]),
//! and keep `Valid`/`Installed` in the garden. Deletion is in [`super::delete`].

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::{Value, json};

use seedlet_api::conditions::ConditionStatus;
use seedlet_api::core::{
    ControllerDeployment, ControllerInstallation, ControllerRegistration, HelmControllerDeployment,
    Seed,
};
use seedlet_api::names::{finalizers, namespaces, reasons};
use seedlet_chartrender::{Chart, GardenerInfo, RenderOptions, Rendered};
use seedlet_runtime::finalizer;

use super::conditions::{Conditions, registration_or_condition, seed_or_condition};
use super::{Error, Installer, desired, fetch, values, write};
use seedlet_runtime::controller::Reconciler;

/// What a step of the install decided: go on with its result, or stop with this action (a
/// condition already says why).
type Step<T> = ControlFlow<Action, T>;

impl Reconciler for Installer {
    type Object = ControllerInstallation;
    type Error = Error;
    const NAME: &'static str = super::NAME;

    /// Reconciles one ControllerInstallation of this seed.
    async fn reconcile(&self, ci: Arc<ControllerInstallation>) -> Result<Action, Error> {
        dispatch(&ci, self).await
    }

    /// Retry delay after a failure (the runtime logs it once; main, care and required share
    /// the object, so the lost write race is routine and retried at once by the runtime).
    fn retry_after(&self, error: &Error) -> Duration {
        match error {
            Error::Finalizer { .. } | Error::WriteConditions { .. } => Duration::from_millis(200),
            Error::ClusterIdentityMissing { .. }
            | Error::RegistrationNotFound { .. }
            | Error::SeedNotFound { .. } => Duration::from_secs(5),
            _ => Duration::from_secs(2),
        }
    }

    fn concurrency(&self) -> u16 {
        self.concurrency
    }
}

async fn dispatch(ci: &ControllerInstallation, ctx: &Installer) -> Result<Action, Error> {
    if ci.seed_name() != Some(ctx.seed_name.as_str()) {
        return Ok(Action::await_change());
    }
    if ci.metadata.deletion_timestamp.is_some() {
        return super::delete::delete(ci, ctx).await;
    }
    let name = ci.name_any();
    let api: Api<ControllerInstallation> = Api::all(ctx.garden());
    // The reads do not depend on the finalizer, so they share its round trip; nothing is
    // written in the seed before the finalizer is on.
    let (ensured, inputs) = tokio::join!(
        finalizer::ensure_retrying(&api, ci, finalizers::CONTROLLER_INSTALLATION),
        fetch_inputs(ci, ctx)
    );
    ensured.map_err(|source| Error::Finalizer {
        name: name.clone(),
        source,
    })?;

    let now = ctx.clock.now();
    let mut conditions = Conditions::load(ci, now);
    let result = install(ci, ctx, inputs, &mut conditions).await;
    let written = conditions.write(&api, &name).await;
    if let (Ok(true), Some((kind, reason, message))) = (&written, conditions.installed_event()) {
        ctx.events
            .publish(ci, kind, reason, "Reconcile", message)
            .await;
    }
    match (result, written) {
        // A lost condition write (e.g. 409 against care/required) is retried via the queue.
        (Ok(_), Err(source)) => Err(Error::WriteConditions { name, source }),
        (result, _) => result,
    }
}

async fn install(
    ci: &ControllerInstallation,
    ctx: &Installer,
    mut inputs: Inputs,
    conditions: &mut Conditions,
) -> Result<Action, Error> {
    let name = ci.name_any();
    let registration_name = ci.spec.registration_ref.name.clone();
    let hosts_garden = std::mem::replace(&mut inputs.hosts_garden, Ok(false));
    let ControlFlow::Continue((seed, deployment, helm)) =
        resolve_references(inputs, &registration_name, &ctx.seed_name, conditions)?
    else {
        return Ok(Action::await_change());
    };
    let ControlFlow::Continue(deployment_values) =
        deployment_values(ctx, &deployment, &helm, conditions).await
    else {
        return Ok(Action::await_change());
    };

    let hosts_garden = hosts_garden?;
    // The namespace is applied while the chart renders (gardenlet applies it first, whatever the
    // render's outcome; both finish before their results are judged, the namespace's first).
    let (namespace, rendered) = tokio::join!(
        write::ensure_namespace(ctx, ci, &registration_name, &seed, hosts_garden),
        async {
            let chart_values =
                chart_values(ctx, &name, &seed, &deployment, &deployment_values).await?;
            render(
                ctx,
                &helm,
                &name,
                &registration_name,
                chart_values,
                conditions,
            )
            .await
        }
    );
    namespace?;
    let data = match rendered? {
        ControlFlow::Continue(data) => data,
        ControlFlow::Break(action) => return Ok(action),
    };
    conditions.valid(
        ConditionStatus::True,
        reasons::REGISTRATION_VALID,
        reasons::REGISTRATION_VALID_MESSAGE,
    );

    if let Err(error) = write::write_managed_resource(ctx, &name, &registration_name, &data).await {
        conditions.installed(
            ConditionStatus::False,
            reasons::INSTALLATION_FAILED,
            &format!(
                "Creation of ManagedResource {name:?} failed: {}",
                seedlet_runtime::error_chain(&error)
            ),
        );
        return Err(error);
    }
    if conditions.installed.status == ConditionStatus::Unknown {
        conditions.installed(
            ConditionStatus::False,
            reasons::INSTALLATION_PENDING,
            &format!("Installation of ManagedResource {name:?} is still pending."),
        );
    }
    // No periodic requeue: changes of the installation, its registration or deployment trigger.
    Ok(Action::await_change())
}

/// The independent reads of an install.
struct Inputs {
    registration: Result<Option<ControllerRegistration>, kube::Error>,
    seed: Result<Option<Seed>, kube::Error>,
    /// The `deploymentRef` name and its read; `None` without a reference.
    deployment: Option<(String, Result<Option<ControllerDeployment>, Error>)>,
    hosts_garden: Result<bool, Error>,
}

/// Reads the registration, Seed, deployment and Gardens in the seed together (registration and
/// Seed from the shared stores, the garden only on a miss): at most one round trip instead of
/// four. They are judged afterwards in the order gardenlet reads them, so conditions and errors
/// are those of sequential reads.
async fn fetch_inputs(ci: &ControllerInstallation, ctx: &Installer) -> Inputs {
    let registration_name = &ci.spec.registration_ref.name;
    let deployment_name = ci.spec.deployment_ref.as_ref().map(|r| r.name.clone());
    let (registration, seed, deployment, hosts_garden) = tokio::join!(
        fetch::fetch_registration(ctx, registration_name),
        fetch::fetch_seed(ctx),
        async {
            match deployment_name {
                Some(name) => {
                    let read = fetch::read_deployment(ctx, &name).await;
                    Some((name, read))
                }
                None => None,
            }
        },
        fetch::seed_hosts_garden(ctx),
    );
    Inputs {
        registration,
        seed,
        deployment,
        hosts_garden,
    }
}

/// Judges the reads in gardenlet's order: registration, Seed, deployment, its Helm section.
/// Stops without error for installations that are not (or not validly) Helm deployments.
fn resolve_references(
    inputs: Inputs,
    registration_name: &str,
    seed_name: &str,
    conditions: &mut Conditions,
) -> Result<Step<(Seed, ControllerDeployment, HelmControllerDeployment)>, Error> {
    registration_or_condition(inputs.registration, registration_name, conditions)?;
    let seed = seed_or_condition(inputs.seed, seed_name, conditions)?;
    // Only Helm deployments are handled; without a deploymentRef there is nothing to install.
    let Some((deployment_name, deployment)) = inputs.deployment else {
        return Ok(ControlFlow::Break(Action::await_change()));
    };
    let Some(deployment) = deployment? else {
        return Err(Error::DeploymentNotFound {
            name: deployment_name,
        });
    };
    match deployment.helm_deployment() {
        Ok(Some(helm)) => Ok(ControlFlow::Continue((seed, deployment, helm))),
        Ok(None) => Ok(ControlFlow::Break(Action::await_change())),
        Err(source) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::CHART_INFORMATION_INVALID,
                &format!("chart information cannot be decoded: {source}"),
            );
            Ok(ControlFlow::Break(Action::await_change()))
        }
    }
}

/// The deployment's Helm values, with value templates rendered from the resources it
/// references; a `Valid=False` condition when they cannot be decoded or rendered.
async fn deployment_values(
    ctx: &Installer,
    deployment: &ControllerDeployment,
    helm: &HelmControllerDeployment,
    conditions: &mut Conditions,
) -> Step<Value> {
    let values = match values::deployment_values(helm.values.as_ref()) {
        Ok(values) => values,
        Err(message) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::CHART_INFORMATION_INVALID,
                &format!("chart values cannot be unmarshalled: {message}"),
            );
            return ControlFlow::Break(Action::await_change());
        }
    };
    if helm.values.is_none() || deployment.spec.resources.is_empty() {
        return ControlFlow::Continue(values);
    }
    let rendered = match fetch::referenced_data(ctx, deployment).await {
        Ok(data) => values::render_value_templates(&values, &data),
        Err(message) => Err(message),
    };
    match rendered {
        Ok(rendered) => ControlFlow::Continue(rendered),
        Err(message) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::RENDERING_HELM_VALUES_FAILED,
                &format!("helm values cannot be rendered: {message}"),
            );
            ControlFlow::Break(Action::await_change())
        }
    }
}

/// The deployment's values merged with the `gardener` values gardenlet injects (the Seed with
/// its cluster identity, the garden identity, feature gates).
///
/// # Errors
/// [`Error::ClusterIdentityMissing`] before the seed status controller wrote the identity.
async fn chart_values(
    ctx: &Installer,
    name: &str,
    seed: &Seed,
    deployment: &ControllerDeployment,
    deployment_values: &Value,
) -> Result<Value, Error> {
    let Some(seed_identity) = seed
        .status
        .as_ref()
        .and_then(|s| s.cluster_identity.clone())
    else {
        return Err(Error::ClusterIdentityMissing {
            seed: seed.name_any(),
        });
    };
    if deployment.spec.inject_garden_kubeconfig == Some(true) {
        // Not implemented: the generic garden kubeconfig and token-requestor Secret need a
        // TokenRequestor in the seed, which seedlet does not run (spec §2.6).
        tracing::warn!(controller_installation = %name, "injectGardenKubeconfig is not supported by seedlet, installing without garden access");
    }
    let mut seed_json = serde_json::to_value(seed).map_err(|source| Error::Encode {
        name: name.to_owned(),
        source,
    })?;
    seed_json["status"]["clusterIdentity"] = json!(seed_identity);
    let info = GardenerInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        garden_cluster_identity: ctx.garden_identity().await,
        generic_kubeconfig_secret_name: None,
        feature_gates: ctx
            .config
            .feature_gates
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect(),
    };
    Ok(values::merged(
        deployment_values,
        &seedlet_chartrender::gardener_values(&seed_json, &info),
    ))
}

/// Renders the chart (raw, or pulled from its OCI registry) into the manifest Secret's data; a
/// `Valid` condition for archives that cannot be pulled, read or rendered, `Installed=False` for
/// workloads the agent refuses. Nothing is written before this succeeds.
///
/// # Errors
/// [`Error::Mutate`] for an unsupported workload.
async fn render(
    ctx: &Installer,
    helm: &HelmControllerDeployment,
    name: &str,
    registration_name: &str,
    chart_values: Value,
    conditions: &mut Conditions,
) -> Result<Step<BTreeMap<String, String>>, Error> {
    let bytes = match super::chart::archive(ctx, helm).await {
        Ok(bytes) => bytes,
        Err((reason, message)) => {
            conditions.valid(ConditionStatus::False, reason, &message);
            return Ok(ControlFlow::Break(Action::await_change()));
        }
    };
    let extension_namespace = namespaces::extension_namespace(name);
    let options = RenderOptions {
        release_name: registration_name.to_owned(),
        namespace: extension_namespace.clone(),
        values: chart_values,
        limits: crate::chart_limits::limits(
            &ctx.config.controllers.controller_installation.chart_limits,
        ),
        ..RenderOptions::default()
    };
    let rendered = match render_on_seed(ctx, bytes, options).await {
        Ok(Ok(rendered)) => rendered,
        Ok(Err(message)) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::CHART_CANNOT_BE_RENDERED,
                &format!("chart rendering process failed: {message}"),
            );
            return Ok(ControlFlow::Break(Action::await_change()));
        }
        Err(Error::Lookup { message }) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::CHART_CANNOT_BE_RENDERED,
                &format!("chart rendering process failed: {message}"),
            );
            // A failed read of the seed may pass next time: retried, unlike a broken chart.
            return Err(Error::Lookup { message });
        }
        Err(error) => return Err(error),
    };
    match desired::secret_data(&rendered.templates, &extension_namespace, &ctx.seed_name) {
        Ok(data) => Ok(ControlFlow::Continue(data)),
        Err(crate::managed_manifests::DataError::Yaml { template, message }) => {
            conditions.valid(
                ConditionStatus::False,
                reasons::CHART_CANNOT_BE_RENDERED,
                &format!(
                    "chart rendering process failed: YAML parse error on {template}: {message}"
                ),
            );
            Ok(ControlFlow::Break(Action::await_change()))
        }
        Err(error @ crate::managed_manifests::DataError::UnsupportedWorkload { .. }) => {
            conditions.valid(
                ConditionStatus::True,
                reasons::REGISTRATION_VALID,
                reasons::REGISTRATION_VALID_MESSAGE,
            );
            conditions.installed(
                ConditionStatus::False,
                reasons::INSTALLATION_FAILED,
                &error.to_string(),
            );
            Err(Error::Mutate {
                name: name.to_owned(),
                source: error,
            })
        }
    }
}

/// Renders `archive` with `.Capabilities` and `lookup` from the seed, on a blocking thread (lookups block it
/// on the async reads). A chart that asked `.Capabilities.APIVersions.Has` about a version absent from a
/// discovery snapshot older than this render is rendered once more if re-read discovery serves one of them
/// (see [`super::capabilities`]). `Ok(Err(message))` is a chart that cannot be loaded or rendered.
///
/// # Errors
/// [`Error::Discovery`] when the seed's discovery cannot be read, [`Error::Lookup`] when the render failed
/// because a `lookup` could not read the seed.
async fn render_on_seed(
    ctx: &Installer,
    archive: Arc<[u8]>,
    mut options: RenderOptions,
) -> Result<Result<Rendered, String>, Error> {
    let started = tokio::time::Instant::now();
    let mut snapshot = ctx.discovery.current().await.map_err(Error::Discovery)?;
    let limits = options.limits;
    let chart = match tokio::task::spawn_blocking(move || {
        Chart::from_archive(&archive, &limits).map_err(|error| seedlet_runtime::error_chain(&error))
    })
    .await
    {
        Ok(Ok(chart)) => Arc::new(chart),
        Ok(Err(message)) => return Ok(Err(message)),
        Err(join) => return Ok(Err(format!("loading the chart failed: {join}"))),
    };
    let mut rerendered = false;
    loop {
        options.kube_version.clone_from(&snapshot.kube_version);
        options.api_versions.clone_from(&snapshot.api_versions);
        let lookup = Arc::new(super::lookup::SeedLookup::new(
            ctx.seed.clone(),
            Arc::clone(&ctx.discovery),
            Arc::clone(&snapshot),
            started,
            tokio::runtime::Handle::current(),
        ));
        options.lookup = Some(Arc::clone(&lookup) as Arc<dyn seedlet_chartrender::Lookup>);
        let (renderer, chart, run_options) = (
            Arc::clone(&ctx.renderer),
            Arc::clone(&chart),
            options.clone(),
        );
        let rendered = match tokio::task::spawn_blocking(move || {
            renderer
                .render(&chart, &run_options)
                .map_err(|error| seedlet_runtime::error_chain(&error))
        })
        .await
        {
            Ok(Ok(rendered)) => rendered,
            Ok(Err(message)) if lookup.failed() => return Err(Error::Lookup { message }),
            Ok(Err(message)) => return Ok(Err(message)),
            Err(join) => return Ok(Err(format!("rendering the chart failed: {join}"))),
        };
        if rerendered || rendered.api_version_misses.is_empty() || snapshot.taken >= started {
            return Ok(Ok(rendered));
        }
        let fresh = ctx
            .discovery
            .fresh_since(started)
            .await
            .map_err(Error::Discovery)?;
        if !rendered.api_version_misses.iter().any(|v| fresh.has(v)) {
            return Ok(Ok(rendered));
        }
        tracing::debug!(misses = ?rendered.api_version_misses, "seed discovery serves API versions the chart asked about, rendering again");
        snapshot = fresh;
        rerendered = true;
    }
}
