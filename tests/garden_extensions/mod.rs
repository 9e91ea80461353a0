//! End-to-end tests of extension scheduling through the real garden controller and the real agent:
//! ControllerRegistration + ControllerDeployment in the garden → ControllerInstallation created by
//! the scheduler for the Seed → ManagedResource and Secret in the seed → objects applied in
//! `extension-<installation>` → `Installed`/`Healthy` → Seed `ExtensionsReady`.
//!
//! Covers the scheduler's naming and labels, the deployment policies (Always ↔ OnDemand,
//! AlwaysExceptNoShoots with the last Shoot gone, a seed selector no longer matching) with the
//! installation's objects, namespace and finalizers released each time, deployment changes reaching
//! the seed through the installation's reference versions, the registration/deployment finalizers,
//! and `ExtensionsReady` with its threshold following health and a broken chart. The agent-only
//! paths (chart changes, OCI, v1beta1, applier annotations) are in `controllerinstallation/` and
//! `managedresource.rs`.

mod latency;

use seedlet_testkit as common;

use std::time::{Duration, Instant};

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{
    ControllerDeployment, ControllerDeploymentFields, ControllerInstallation,
    ControllerRegistration, HelmControllerDeployment, Seed, Shoot,
};
use seedlet_api::resources::ManagedResource;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use common::{Clusters, SEED, start_agent, start_garden, wait_condition_of, wait_for, wait_until};

const CHART: &[u8] = include_bytes!("../fixtures/charts/ext-small-v1.tgz");
const CHART_BROKEN: &[u8] = include_bytes!("../fixtures/charts/ext-broken.tgz");
const TIMEOUT: Duration = Duration::from_secs(30);
/// Registration covering the Seed's own provider type (the scheduler requires one).
const PROVIDER: &str = "provider-local";
/// Registration of an extension whose policy the tests change.
const EXTENSION: &str = "ext-always";

fn registration(name: &str, resources: Value, deployment: Value) -> ControllerRegistration {
    serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "ControllerRegistration",
        "metadata": {"name": name},
        "spec": {"resources": resources, "deployment": deployment}
    }))
    .expect("registration")
}

/// `provider-local`: ControlPlane/Infrastructure/Worker of type `local`, policy OnDemand.
fn provider_registration() -> ControllerRegistration {
    registration(
        PROVIDER,
        json!([
            {"kind": "ControlPlane", "type": "local"},
            {"kind": "Infrastructure", "type": "local"},
            {"kind": "Worker", "type": "local"}
        ]),
        json!({"deploymentRefs": [{"name": PROVIDER}]}),
    )
}

/// A non-primary Extension registration (so that a seed selector is allowed) with `policy`.
fn extension_registration(policy: &str) -> ControllerRegistration {
    registration(
        EXTENSION,
        json!([{"kind": "Extension", "type": "small", "primary": false}]),
        json!({"policy": policy, "deploymentRefs": [{"name": EXTENSION}]}),
    )
}

fn deployment(name: &str, chart: &[u8], values: Value) -> ControllerDeployment {
    ControllerDeployment {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: ControllerDeploymentFields {
            helm: Some(HelmControllerDeployment {
                raw_chart: Some(ByteString(chart.to_vec())),
                values: Some(values),
                oci_repository: None,
            }),
            ..Default::default()
        },
    }
}

/// The garden APIs the tests use.
struct Garden {
    registrations: Api<ControllerRegistration>,
    deployments: Api<ControllerDeployment>,
    installations: Api<ControllerInstallation>,
    seeds: Api<Seed>,
}

impl Garden {
    fn new(client: &kube::Client) -> Self {
        Self {
            registrations: Api::all(client.clone()),
            deployments: Api::all(client.clone()),
            installations: Api::all(client.clone()),
            seeds: Api::all(client.clone()),
        }
    }

    async fn register(&self, registration: &ControllerRegistration, chart: &[u8], values: Value) {
        let name = registration.name_any();
        self.deployments
            .create(&PostParams::default(), &deployment(&name, chart, values))
            .await
            .expect("create deployment");
        self.registrations
            .create(&PostParams::default(), registration)
            .await
            .expect("create registration");
    }

    async fn patch_registration(&self, name: &str, patch: Value) {
        self.registrations
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("patch registration");
    }

    /// Installations of `registration` on the test Seed (deleting ones included).
    async fn installations_of(&self, registration: &str) -> Vec<ControllerInstallation> {
        self.installations
            .list(&ListParams::default())
            .await
            .map(|list| list.items)
            .unwrap_or_default()
            .into_iter()
            .filter(|ci| {
                ci.spec.registration_ref.name == registration && ci.seed_name() == Some(SEED)
            })
            .collect()
    }

    /// Waits until the scheduler created an installation of `registration` and returns it.
    async fn wait_installation(&self, registration: &str) -> ControllerInstallation {
        wait_for(
            &format!("installation of {registration}"),
            TIMEOUT,
            || async {
                self.installations_of(registration)
                    .await
                    .into_iter()
                    .find(|ci| ci.metadata.deletion_timestamp.is_none())
            },
        )
        .await
    }

    async fn wait_condition(&self, name: &str, type_: &str, status: &str, reason: &str) -> String {
        let wanted = (type_, status, reason);
        let conditions = ControllerInstallation::conditions;
        wait_condition_of(&self.installations, name, wanted, conditions, TIMEOUT).await
    }

    async fn wait_installed_and_healthy(&self, name: &str) {
        self.wait_condition(name, "Valid", "True", "RegistrationValid")
            .await;
        self.wait_condition(name, "Installed", "True", "InstallationSuccessful")
            .await;
        self.wait_condition(name, "Healthy", "True", "ControllerHealthy")
            .await;
        self.wait_condition(name, "Progressing", "False", "ControllerRolledOut")
            .await;
    }

    /// Waits for the Seed's `ExtensionsReady` with `status` and `reason`; returns its message.
    async fn wait_extensions_ready(&self, status: &str, reason: &str) -> String {
        wait_for(
            &format!("ExtensionsReady={status} {reason}"),
            TIMEOUT,
            || async {
                let seed = self.seeds.get_opt(SEED).await.ok()??;
                let condition =
                    seedlet_api::conditions::find(seed.conditions(), "ExtensionsReady")?;
                (condition.status.to_string() == status && condition.reason == reason)
                    .then(|| condition.message.clone())
            },
        )
        .await
    }
}

/// The seed APIs the tests use.
struct SeedCluster {
    client: kube::Client,
    managed_resources: Api<ManagedResource>,
    secrets: Api<Secret>,
    namespaces: Api<Namespace>,
}

impl SeedCluster {
    fn new(client: &kube::Client) -> Self {
        Self {
            client: client.clone(),
            managed_resources: Api::namespaced(client.clone(), "garden"),
            secrets: Api::namespaced(client.clone(), "garden"),
            namespaces: Api::all(client.clone()),
        }
    }

    /// Waits until the installation's ManagedResource references a Secret and the chart's
    /// ConfigMap is applied in the extension namespace; returns the Secret names.
    async fn wait_applied(&self, installation: &str, release: &str) -> Vec<String> {
        let refs = wait_for("managed resource", TIMEOUT, || async {
            let mr = self.managed_resources.get_opt(installation).await.ok()??;
            let refs: Vec<String> = mr.spec.secret_refs.iter().map(|r| r.name.clone()).collect();
            (!refs.is_empty()).then_some(refs)
        })
        .await;
        let config_maps: Api<ConfigMap> =
            Api::namespaced(self.client.clone(), &format!("extension-{installation}"));
        wait_until("chart objects applied", TIMEOUT, || async {
            matches!(
                config_maps.get_opt(&format!("{release}-config")).await,
                Ok(Some(_))
            )
        })
        .await;
        refs
    }

    /// Asserts that the installation's ManagedResource, its Secrets and its namespace are gone.
    async fn assert_removed(&self, installation: &str, secrets: &[String]) {
        assert!(
            self.managed_resources
                .get_opt(installation)
                .await
                .expect("read managed resource")
                .is_none(),
            "managed resource of {installation} left behind"
        );
        for secret in secrets {
            assert!(
                self.secrets
                    .get_opt(secret)
                    .await
                    .expect("read secret")
                    .is_none(),
                "secret {secret} left behind"
            );
        }
        assert!(
            self.namespaces
                .get_opt(&format!("extension-{installation}"))
                .await
                .expect("read namespace")
                .is_none(),
            "namespace of {installation} left behind"
        );
    }
}

/// Waits until the installation `name` is gone from the garden (finalizer released by the agent),
/// then checks that everything it had in the seed is gone too.
async fn wait_uninstalled(garden: &Garden, seed: &SeedCluster, name: &str, secrets: &[String]) {
    wait_until(&format!("installation {name} gone"), TIMEOUT, || async {
        matches!(garden.installations.get_opt(name).await, Ok(None))
    })
    .await;
    seed.assert_removed(name, secrets).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn registrations_are_scheduled_installed_and_removed_as_policies_change() {
    let clusters = Clusters::start(true).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let garden_controller = start_garden(&clusters, shutdown.clone()).await;
    let garden = Garden::new(&clusters.garden.client());
    let seed = SeedCluster::new(&clusters.seed.client());

    // The Seed's provider type needs a registration: OnDemand, wanted through the Seed itself.
    garden
        .register(
            &provider_registration(),
            CHART,
            json!({"greeting": "provider"}),
        )
        .await;
    let provider = garden.wait_installation(PROVIDER).await;
    let provider_name = provider.name_any();
    assert!(
        provider_name.starts_with("provider-local-")
            && provider_name.len() > "provider-local-".len(),
        "generated name {provider_name}"
    );
    for label in [
        "seed-spec-hash",
        "registration-spec-hash",
        "deployment-hash",
    ] {
        let value = provider.labels().get(label).cloned().unwrap_or_default();
        assert!(
            value.len() == 16 && value.bytes().all(|b| b.is_ascii_hexdigit()),
            "{label}={value:?}"
        );
    }
    assert_eq!(provider.seed_name(), Some(SEED));
    for reference in [
        Some(&provider.spec.registration_ref),
        provider.spec.deployment_ref.as_ref(),
        provider.spec.seed_ref.as_ref(),
    ] {
        let reference = reference.expect("reference set");
        assert!(reference.resource_version.is_some(), "{reference:?}");
    }
    let provider_secrets = seed.wait_applied(&provider_name, PROVIDER).await;
    garden.wait_installed_and_healthy(&provider_name).await;
    let message = garden
        .wait_extensions_ready("True", "AllExtensionsReady")
        .await;
    assert_eq!(
        message,
        "All extensions installed into the seed cluster are ready and healthy."
    );
    for (kind, name) in [
        ("ControllerRegistration", PROVIDER),
        ("ControllerDeployment", PROVIDER),
    ] {
        let finalizers = match kind {
            "ControllerRegistration" => garden
                .registrations
                .get(name)
                .await
                .map(|o| o.finalizers().to_vec()),
            _ => garden
                .deployments
                .get(name)
                .await
                .map(|o| o.finalizers().to_vec()),
        }
        .expect("read");
        assert!(
            finalizers
                .iter()
                .any(|f| f.starts_with("core.gardener.cloud/controller")),
            "{kind} {name} finalizers {finalizers:?}"
        );
    }

    // Always: installed on every (matching) Seed without demand.
    garden
        .register(
            &extension_registration("Always"),
            CHART,
            json!({"greeting": "hi"}),
        )
        .await;
    let always = garden.wait_installation(EXTENSION).await.name_any();
    let always_secrets = seed.wait_applied(&always, EXTENSION).await;
    garden.wait_installed_and_healthy(&always).await;
    garden
        .wait_extensions_ready("True", "AllExtensionsReady")
        .await;

    // A deployment change reaches the seed through the installation's deploymentRef version.
    let mut changed = garden.deployments.get(EXTENSION).await.expect("deployment");
    changed.spec = deployment(EXTENSION, CHART, json!({"greeting": "changed"})).spec;
    let changed = garden
        .deployments
        .replace(EXTENSION, &PostParams::default(), &changed)
        .await
        .expect("update deployment");
    wait_until("deploymentRef follows the deployment", TIMEOUT, || async {
        garden
            .installations
            .get_opt(&always)
            .await
            .ok()
            .flatten()
            .and_then(|ci| ci.spec.deployment_ref)
            .and_then(|r| r.resource_version)
            == changed.metadata.resource_version
    })
    .await;
    let config_maps: Api<ConfigMap> =
        Api::namespaced(seed.client.clone(), &format!("extension-{always}"));
    wait_until("new values applied", TIMEOUT, || async {
        config_maps
            .get_opt(&format!("{EXTENSION}-config"))
            .await
            .ok()
            .flatten()
            .and_then(|cm| cm.data)
            .and_then(|data| data.get("greeting").cloned())
            .as_deref()
            == Some("changed")
    })
    .await;
    let always_secrets = [always_secrets, seed.wait_applied(&always, EXTENSION).await].concat();

    // The deployment is deleted while its registration still lists it: the finalizer holds it
    // (checked again at the end, after all the policy changes below).
    garden
        .deployments
        .delete(EXTENSION, &DeleteParams::default())
        .await
        .expect("delete deployment");

    // Always → OnDemand without demand: the installation goes, with everything it installed.
    garden
        .patch_registration(
            EXTENSION,
            json!({"spec": {"deployment": {"policy": "OnDemand"}}}),
        )
        .await;
    wait_uninstalled(&garden, &seed, &always, &always_secrets).await;
    assert!(garden.installations_of(EXTENSION).await.is_empty());

    // OnDemand → Always: installed again under a new name.
    garden
        .patch_registration(
            EXTENSION,
            json!({"spec": {"deployment": {"policy": "Always"}}}),
        )
        .await;
    let again = garden.wait_installation(EXTENSION).await.name_any();
    assert_ne!(again, always, "a new installation is created");
    let again_secrets = seed.wait_applied(&again, EXTENSION).await;
    garden.wait_installed_and_healthy(&again).await;

    // The seed selector no longer matches the Seed: the installation goes.
    garden
        .patch_registration(
            EXTENSION,
            json!({"spec": {"deployment": {"seedSelector": {"matchLabels": {"env": "production"}}}}}),
        )
        .await;
    wait_uninstalled(&garden, &seed, &again, &again_secrets).await;

    // AlwaysExceptNoShoots with a matching selector and a Shoot on the Seed: installed; the last
    // Shoot gone: removed again.
    let shoots: Api<Shoot> = Api::namespaced(clusters.garden.client(), "garden");
    let shoot: Shoot = serde_json::from_value(json!({
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {"name": "dev", "namespace": "garden"},
        "spec": {"region": "local", "provider": {"type": "local"}, "seedName": SEED}
    }))
    .expect("shoot");
    shoots
        .create(&PostParams::default(), &shoot)
        .await
        .expect("create shoot");
    garden
        .patch_registration(
            EXTENSION,
            json!({"spec": {"deployment": {
                "policy": "AlwaysExceptNoShoots",
                "seedSelector": {"matchLabels": {"env": "test"}}
            }}}),
        )
        .await;
    let with_shoot = garden.wait_installation(EXTENSION).await.name_any();
    let with_shoot_secrets = seed.wait_applied(&with_shoot, EXTENSION).await;
    garden.wait_installed_and_healthy(&with_shoot).await;
    shoots
        .delete("dev", &DeleteParams::default())
        .await
        .expect("delete shoot");
    wait_uninstalled(&garden, &seed, &with_shoot, &with_shoot_secrets).await;
    // The provider installation was never touched by any of this.
    assert_eq!(
        garden
            .installations_of(PROVIDER)
            .await
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>(),
        std::slice::from_ref(&provider_name)
    );
    assert_eq!(
        seed.wait_applied(&provider_name, PROVIDER).await,
        provider_secrets
    );

    // Finalizers: the deployment deleted above is still held by its registration.
    let held = garden
        .deployments
        .get(EXTENSION)
        .await
        .expect("deployment still present");
    assert!(held.metadata.deletion_timestamp.is_some());

    // Deleting a registration with an installation: the installation is removed first, and the
    // registration stays as long as an installation references it; then both it and its deployment
    // are released.
    garden
        .patch_registration(
            EXTENSION,
            json!({"spec": {"deployment": {"policy": "Always"}}}),
        )
        .await;
    let last = garden.wait_installation(EXTENSION).await.name_any();
    let last_secrets = seed.wait_applied(&last, EXTENSION).await;
    garden
        .registrations
        .delete(EXTENSION, &DeleteParams::default())
        .await
        .expect("delete registration");
    let deadline = Instant::now() + TIMEOUT;
    loop {
        // The registration first: installations seen afterwards existed while it was read, so
        // it must still have been there (terminating). The other order races with the release.
        let registration = garden.registrations.get_opt(EXTENSION).await.expect("read");
        let installations = garden.installations_of(EXTENSION).await;
        if !installations.is_empty() {
            assert!(
                registration.is_some_and(|r| r.metadata.deletion_timestamp.is_some()),
                "registration released while installations reference it"
            );
        } else if registration.is_none() {
            break;
        }
        assert!(Instant::now() < deadline, "registration not released");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    seed.assert_removed(&last, &last_secrets).await;
    wait_until("deployment released", TIMEOUT, || async {
        matches!(garden.deployments.get_opt(EXTENSION).await, Ok(None))
    })
    .await;
    garden
        .wait_extensions_ready("True", "AllExtensionsReady")
        .await;

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    garden_controller
        .wait()
        .await
        .expect("garden controller stops");
    clusters.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn extensions_ready_follows_health_and_broken_charts_through_the_threshold() {
    // Without workload simulation the test decides whether the extension's Deployment is available.
    let clusters = Clusters::start(false).await;
    let shutdown = CancellationToken::new();
    let agent = start_agent(&clusters, shutdown.clone()).await;
    let garden_controller = start_garden(&clusters, shutdown.clone()).await;
    let garden = Garden::new(&clusters.garden.client());
    let seed = SeedCluster::new(&clusters.seed.client());

    garden
        .register(
            &provider_registration(),
            CHART,
            json!({"greeting": "provider"}),
        )
        .await;
    let name = garden.wait_installation(PROVIDER).await.name_any();
    let secrets = seed.wait_applied(&name, PROVIDER).await;
    let workloads: Api<Deployment> =
        Api::namespaced(seed.client.clone(), &format!("extension-{name}"));

    // The Deployment has no status yet: not healthy.
    garden
        .wait_condition(&name, "Healthy", "False", "ControllerNotHealthy")
        .await;
    let message = garden
        .wait_extensions_ready("False", "NotAllExtensionsHealthy")
        .await;
    assert!(
        message.starts_with("Some extensions are not healthy: map[") && message.contains(&name),
        "{message}"
    );

    let set_available = |available: &'static str| {
        let workloads = workloads.clone();
        async move {
            let generation = workloads
                .get(PROVIDER)
                .await
                .expect("deployment")
                .metadata
                .generation;
            let status = json!({"status": {
                "observedGeneration": generation, "replicas": 1, "updatedReplicas": 1,
                "readyReplicas": 1, "availableReplicas": 1,
                "conditions": [
                    {"type": "Available", "status": available, "reason": "MinimumReplicasAvailable", "message": "m"},
                    {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "p"}
                ]
            }});
            workloads
                .patch_status(PROVIDER, &PatchParams::default(), &Patch::Merge(&status))
                .await
                .expect("deployment status");
        }
    };
    set_available("True").await;
    garden.wait_installed_and_healthy(&name).await;
    garden
        .wait_extensions_ready("True", "AllExtensionsReady")
        .await;

    // Unavailable: Progressing within the threshold, then False. Measured from before the change
    // (the test sees conditions late under load), with 1 s of slack: condition timestamps are
    // whole seconds (metav1.Time), so the threshold can end up to 1 s early, as in Gardener.
    let progressing_since = Instant::now();
    set_available("False").await;
    garden
        .wait_condition(&name, "Healthy", "False", "ControllerNotHealthy")
        .await;
    garden
        .wait_extensions_ready("Progressing", "NotAllExtensionsHealthy")
        .await;
    garden
        .wait_extensions_ready("False", "NotAllExtensionsHealthy")
        .await;
    assert!(
        progressing_since.elapsed() >= Duration::from_millis(1000),
        "ExtensionsReady went False before the 2s threshold: {:?}",
        progressing_since.elapsed()
    );
    set_available("True").await;
    garden
        .wait_extensions_ready("True", "AllExtensionsReady")
        .await;

    // Broken chart: Valid False with the reason, the last good ManagedResource stays applied, and
    // ExtensionsReady turns False through the threshold with NotAllExtensionsValid.
    let mut broken = garden.deployments.get(PROVIDER).await.expect("deployment");
    broken.spec = deployment(PROVIDER, CHART_BROKEN, json!({})).spec;
    garden
        .deployments
        .replace(PROVIDER, &PostParams::default(), &broken)
        .await
        .expect("break deployment");
    let message = garden
        .wait_condition(&name, "Valid", "False", "ChartCannotBeRendered")
        .await;
    assert!(
        message.starts_with("chart rendering process failed:"),
        "{message}"
    );
    garden
        .wait_extensions_ready("Progressing", "NotAllExtensionsValid")
        .await;
    let message = garden
        .wait_extensions_ready("False", "NotAllExtensionsValid")
        .await;
    assert!(
        message.starts_with("Some extensions are not valid: map[")
            && message.contains("chart rendering process failed"),
        "{message}"
    );
    let mr = seed
        .managed_resources
        .get(&name)
        .await
        .expect("last good managed resource kept");
    assert_eq!(
        mr.spec
            .secret_refs
            .iter()
            .map(|r| r.name.clone())
            .collect::<Vec<_>>(),
        secrets
    );
    assert!(workloads.get_opt(PROVIDER).await.expect("read").is_some());

    // Repaired: valid again, ready again.
    let mut repaired = garden.deployments.get(PROVIDER).await.expect("deployment");
    repaired.spec = deployment(PROVIDER, CHART, json!({"greeting": "provider"})).spec;
    garden
        .deployments
        .replace(PROVIDER, &PostParams::default(), &repaired)
        .await
        .expect("repair deployment");
    garden
        .wait_condition(&name, "Valid", "True", "RegistrationValid")
        .await;
    garden
        .wait_extensions_ready("True", "AllExtensionsReady")
        .await;

    shutdown.cancel();
    agent.wait().await.expect("agent stops");
    garden_controller
        .wait()
        .await
        .expect("garden controller stops");
    clusters.shutdown().await;
}
