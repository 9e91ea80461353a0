//! The example extension of the demo: the chart in `landscape/example-extension/` registered in
//! the garden as a v1 ControllerDeployment (`helm.rawChart`) plus a ControllerRegistration with
//! policy `Always` covering the Seed's provider type and the example Shoot's needs, and the
//! waits for what follows — the garden controller schedules a ControllerInstallation, the agent
//! renders it into a ManagedResource and applies it in `extension-<installation>`, the
//! installation turns Installed and Healthy, and the Seed's `ExtensionsReady` turns True.

use std::io::Write;
use std::time::Duration;

use flate2::Compression;
use flate2::write::GzEncoder;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::ByteString;
use kube::api::{ObjectMeta, Patch, PatchParams};
use kube::runtime::wait::await_condition;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use seedlet_api::conditions::{self, Condition};
use seedlet_api::core::{
    ControllerDeployment, ControllerDeploymentFields, ControllerInstallation,
    ControllerRegistration, HelmControllerDeployment, Seed,
};
use seedlet_api::names::{condition_types, namespaces};
use seedlet_api::resources::ManagedResource;

use crate::Error;
use crate::progress::Progress;

/// Name of the example's ControllerRegistration and ControllerDeployment (and Helm release).
pub const REGISTRATION: &str = "example";
/// Field manager of the objects the demo registers.
const FIELD_MANAGER: &str = "seedlet-sandbox";
/// Directory name of the chart inside the archive.
const CHART_DIR: &str = "extension-example";
/// The chart's files, embedded so that the binary needs no source tree.
const CHART_FILES: [(&str, &str); 6] = [
    (
        "Chart.yaml",
        include_str!("../example-extension/Chart.yaml"),
    ),
    (
        "values.yaml",
        include_str!("../example-extension/values.yaml"),
    ),
    (
        "templates/_helpers.tpl",
        include_str!("../example-extension/templates/_helpers.tpl"),
    ),
    (
        "templates/configmap.yaml",
        include_str!("../example-extension/templates/configmap.yaml"),
    ),
    (
        "templates/deployment.yaml",
        include_str!("../example-extension/templates/deployment.yaml"),
    ),
    (
        "templates/serviceaccount.yaml",
        include_str!("../example-extension/templates/serviceaccount.yaml"),
    ),
];
/// The `Kind/type`s the registration serves: what the garden wants for a Seed of provider type
/// `local` with DNS provider `local` and backup provider `local` (spec §3.1: the Seed's own
/// provider, DNS and backup types), plus what the example Shoot adds (its network type and its
/// worker pool's machine image). The backup and bastion kinds' controllers are played by the demo
/// ([`crate::backup_provider`], [`crate::bastion_provider`]).
const RESOURCES: [(&str, &str); 9] = [
    ("BackupBucket", crate::backup_provider::PROVIDER_TYPE),
    ("BackupEntry", crate::backup_provider::PROVIDER_TYPE),
    ("Bastion", crate::backup_provider::PROVIDER_TYPE),
    ("ControlPlane", "local"),
    ("Infrastructure", "local"),
    ("Worker", "local"),
    ("DNSRecord", "local"),
    ("Network", crate::shoot::NETWORK_TYPE),
    ("OperatingSystemConfig", crate::shoot::MACHINE_IMAGE),
];

/// The example chart as a gzipped tar archive (`extension-example/...`), as `helm package` makes
/// it.
///
/// # Errors
/// [`Error::Chart`] when the in-memory archive cannot be written.
pub fn chart_archive() -> Result<Vec<u8>, Error> {
    let failed = |source| Error::Chart { source };
    let mut archive = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::default()));
    for (path, text) in CHART_FILES {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        archive
            .append_data(&mut header, format!("{CHART_DIR}/{path}"), text.as_bytes())
            .map_err(failed)?;
    }
    let mut gzip = archive.into_inner().map_err(failed)?;
    gzip.flush().map_err(failed)?;
    gzip.finish().map_err(failed)
}

/// The v1 ControllerDeployment carrying the chart.
pub fn controller_deployment(chart: Vec<u8>) -> ControllerDeployment {
    ControllerDeployment {
        metadata: ObjectMeta {
            name: Some(REGISTRATION.to_owned()),
            ..ObjectMeta::default()
        },
        spec: ControllerDeploymentFields {
            helm: Some(HelmControllerDeployment {
                raw_chart: Some(ByteString(chart)),
                values: Some(serde_json::json!({"replicas": 1})),
                oci_repository: None,
            }),
            ..ControllerDeploymentFields::default()
        },
    }
}

/// The ControllerRegistration: [`RESOURCES`], policy `Always`, the deployment above.
///
/// # Errors
/// Decoding the literal into the typed object (a programming error caught by the unit test).
pub fn controller_registration() -> Result<ControllerRegistration, serde_json::Error> {
    let resources: Vec<_> = RESOURCES
        .iter()
        .map(|(kind, type_)| serde_json::json!({"kind": kind, "type": type_}))
        .collect();
    serde_json::from_value(serde_json::json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "ControllerRegistration",
        "metadata": {"name": REGISTRATION},
        "spec": {
            "resources": resources,
            "deployment": {"policy": "Always", "deploymentRefs": [{"name": REGISTRATION}]}
        }
    }))
}

/// Registers the example in the garden (server-side apply, so a resumed landscape re-applies the
/// same objects); returns a detail line.
///
/// # Errors
/// [`Error::Chart`] or [`Error::Prepare`] naming the object that was refused.
pub async fn register(garden: &kube::Client) -> Result<String, Error> {
    let chart = chart_archive()?;
    let size = chart.len();
    let params = PatchParams::apply(FIELD_MANAGER);
    Api::<ControllerDeployment>::all(garden.clone())
        .patch(
            REGISTRATION,
            &params,
            &Patch::Apply(&controller_deployment(chart)),
        )
        .await
        .map_err(|source| Error::Prepare {
            step: format!("apply ControllerDeployment {REGISTRATION}"),
            source,
        })?;
    let registration = controller_registration().map_err(|source| Error::Prepare {
        step: format!("build ControllerRegistration {REGISTRATION}"),
        source: kube::Error::SerdeError(source),
    })?;
    Api::<ControllerRegistration>::all(garden.clone())
        .patch(REGISTRATION, &params, &Patch::Apply(&registration))
        .await
        .map_err(|source| Error::Prepare {
            step: format!("apply ControllerRegistration {REGISTRATION}"),
            source,
        })?;
    let kinds: Vec<String> = RESOURCES
        .iter()
        .map(|(kind, type_)| format!("{kind}/{type_}"))
        .collect();
    Ok(format!(
        "chart {CHART_DIR} ({size} bytes), {}",
        kinds.join(", ")
    ))
}

/// Waits until the garden controller created the Seed's installation of the example; returns
/// its name.
///
/// # Errors
/// [`Error::Timeout`].
pub async fn scheduled(
    garden: &kube::Client,
    seed_name: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    let mut stream = watcher(installations, watcher::Config::default())
        .applied_objects()
        .try_filter(|ci| {
            futures::future::ready(
                ci.spec.registration_ref.name == REGISTRATION
                    && ci.seed_name() == Some(seed_name)
                    && ci.metadata.deletion_timestamp.is_none(),
            )
        })
        .boxed();
    let found = stream.try_next();
    let what = format!("ControllerInstallation of {REGISTRATION} for Seed {seed_name}");
    match tokio::time::timeout(timeout, found).await {
        Ok(Ok(Some(ci))) => Ok(ci.name_any()),
        Ok(Ok(None)) => Err(Error::timeout(what, timeout, "watch ended".to_owned())),
        Ok(Err(error)) => Err(Error::timeout(
            what,
            timeout,
            format!("watch failed: {error}"),
        )),
        Err(_) => Err(Error::timeout(what, timeout, "not created".to_owned())),
    }
}

/// Waits until the installation's ManagedResource in the seed is applied; returns how many
/// objects it holds and where.
///
/// # Errors
/// [`Error::Timeout`] with the `ResourcesApplied` condition as last seen.
pub async fn applied(
    seed: &kube::Client,
    installation: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let managed_resources: Api<ManagedResource> = Api::namespaced(seed.clone(), namespaces::GARDEN);
    let is_applied = |mr: Option<&ManagedResource>| {
        mr.and_then(|mr| conditions::find(mr.conditions(), condition_types::RESOURCES_APPLIED))
            .is_some_and(Condition::is_true)
    };
    let waited = tokio::time::timeout(
        timeout,
        await_condition(managed_resources.clone(), installation, is_applied),
    )
    .await;
    let what = format!("ManagedResource garden/{installation} applied");
    match waited {
        Ok(Ok(mr)) => {
            let count = mr
                .and_then(|mr| mr.status)
                .map(|status| status.resources.len())
                .unwrap_or_default();
            Ok(format!(
                "{count} objects in {}",
                namespaces::extension_namespace(installation)
            ))
        }
        Ok(Err(error)) => Err(Error::timeout(
            what,
            timeout,
            format!("watch failed: {error}"),
        )),
        Err(_) => {
            let last = managed_resources
                .get_opt(installation)
                .await
                .ok()
                .flatten()
                .and_then(|mr| {
                    conditions::find(mr.conditions(), condition_types::RESOURCES_APPLIED)
                        .map(describe)
                })
                .unwrap_or_else(|| "no ResourcesApplied condition".to_owned());
            Err(Error::timeout(what, timeout, last))
        }
    }
}

/// Waits until the installation is `Installed` and `Healthy` in the garden.
///
/// # Errors
/// [`Error::Timeout`] with the installation's conditions as last seen.
pub async fn healthy(
    garden: &kube::Client,
    installation: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let installations: Api<ControllerInstallation> = Api::all(garden.clone());
    let ready = |ci: Option<&ControllerInstallation>| {
        ci.is_some_and(|ci| {
            [condition_types::INSTALLED, condition_types::HEALTHY]
                .iter()
                .all(|type_| {
                    conditions::find(ci.conditions(), type_).is_some_and(Condition::is_true)
                })
        })
    };
    let waited = tokio::time::timeout(
        timeout,
        await_condition(installations.clone(), installation, ready),
    )
    .await;
    let what = format!("ControllerInstallation {installation} Installed and Healthy");
    match waited {
        Ok(Ok(_)) => Ok(String::new()),
        Ok(Err(error)) => Err(Error::timeout(
            what,
            timeout,
            format!("watch failed: {error}"),
        )),
        Err(_) => {
            let last = installations
                .get_opt(installation)
                .await
                .ok()
                .flatten()
                .map(|ci| {
                    ci.conditions()
                        .iter()
                        .map(|c| format!("{}={}", c.type_, describe(c)))
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .unwrap_or_else(|| "installation gone".to_owned());
            Err(Error::timeout(what, timeout, last))
        }
    }
}

/// Waits until the Seed's `ExtensionsReady` is True.
///
/// # Errors
/// [`Error::Timeout`] with the condition as last seen.
pub async fn extensions_ready(
    garden: &kube::Client,
    seed_name: &str,
    timeout: Duration,
) -> Result<String, Error> {
    let seeds: Api<Seed> = Api::all(garden.clone());
    let ready = |seed: Option<&Seed>| {
        seed.and_then(|seed| conditions::find(seed.conditions(), condition_types::EXTENSIONS_READY))
            .is_some_and(Condition::is_true)
    };
    let waited =
        tokio::time::timeout(timeout, await_condition(seeds.clone(), seed_name, ready)).await;
    let what = format!("Seed {seed_name} condition ExtensionsReady True");
    match waited {
        Ok(Ok(seed)) => Ok(seed
            .and_then(|seed| {
                conditions::find(seed.conditions(), condition_types::EXTENSIONS_READY)
                    .map(|c| c.reason.clone())
            })
            .unwrap_or_default()),
        Ok(Err(error)) => Err(Error::timeout(
            what,
            timeout,
            format!("watch failed: {error}"),
        )),
        Err(_) => {
            let last = seeds
                .get_opt(seed_name)
                .await
                .ok()
                .flatten()
                .and_then(|seed| {
                    conditions::find(seed.conditions(), condition_types::EXTENSIONS_READY)
                        .map(describe)
                })
                .unwrap_or_else(|| "no ExtensionsReady condition".to_owned());
            Err(Error::timeout(what, timeout, last))
        }
    }
}

/// The step that registers the example extension in the garden. The demo takes it before the
/// agent starts, as operators register extensions before seeds join: the garden's scheduler then
/// never sees the Seed without a registration for its provider type.
pub(crate) async fn register_step(
    garden: &kube::Client,
    progress: &mut Progress,
) -> Result<(), Error> {
    progress
        .step(
            "register the example extension: ControllerDeployment + ControllerRegistration (policy Always)",
            async { register(garden).await.map(|detail| ((), detail)) },
        )
        .await
}

/// Follows the registered example extension to `ExtensionsReady`; returns the name of its
/// ControllerInstallation.
pub(crate) async fn install(
    garden: &kube::Client,
    seed: &kube::Client,
    progress: &mut Progress,
    timeout: Duration,
    seed_name: &str,
) -> Result<String, Error> {
    let installation = progress
        .step(
            "garden controller schedules a ControllerInstallation for the Seed",
            async {
                scheduled(garden, seed_name, timeout)
                    .await
                    .map(|name| (name.clone(), name))
            },
        )
        .await?;
    progress
        .step(
            &format!("agent renders the chart and applies ManagedResource garden/{installation}"),
            async {
                applied(seed, &installation, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step(
            &format!("ControllerInstallation {installation} Installed and Healthy"),
            async {
                healthy(garden, &installation, timeout)
                    .await
                    .map(|detail| ((), detail))
            },
        )
        .await?;
    progress
        .step("Seed condition ExtensionsReady True", async {
            extensions_ready(garden, seed_name, timeout)
                .await
                .map(|detail| ((), detail))
        })
        .await?;
    Ok(installation)
}

/// `Status Reason: message` of a condition.
fn describe(condition: &Condition) -> String {
    format!(
        "{} {}: {}",
        condition.status, condition.reason, condition.message
    )
}

#[cfg(test)]
mod tests {
    use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer};

    use super::*;

    #[test]
    fn chart_archive_loads_and_renders_the_example_objects() {
        let archive = chart_archive().expect("archive");
        let chart = Chart::from_archive(&archive, &Limits::default()).expect("chart loads");
        let options = RenderOptions {
            release_name: REGISTRATION.to_owned(),
            namespace: "extension-example-abc".to_owned(),
            values: serde_json::json!({"gardener": {"seed": {"name": "local", "provider": "local"}}}),
            ..RenderOptions::default()
        };
        let rendered = Renderer::new().render(&chart, &options).expect("renders");
        let text: String = rendered.templates.values().cloned().collect();
        for expected in [
            "kind: ConfigMap",
            "kind: Deployment",
            "kind: ServiceAccount",
            "--seed=local",
        ] {
            assert!(text.contains(expected), "{expected} missing in\n{text}");
        }
    }

    #[test]
    fn registration_covers_the_seed_provider_and_dns_types_with_policy_always() {
        let registration = controller_registration().expect("registration");
        let covered: Vec<String> = registration
            .spec
            .resources
            .iter()
            .map(|r| format!("{}/{}", r.kind, r.type_))
            .collect();
        for wanted in [
            "BackupBucket/local",
            "BackupEntry/local",
            "Bastion/local",
            "ControlPlane/local",
            "Infrastructure/local",
            "Worker/local",
            "DNSRecord/local",
        ] {
            assert!(covered.iter().any(|c| c == wanted), "{wanted} not covered");
        }
        assert_eq!(
            registration.policy(),
            seedlet_api::core::ControllerDeploymentPolicy::Always
        );
        assert_eq!(registration.deployment_name(), Some(REGISTRATION));
    }
}
