//! Reconcile tests against in-process garden and seed sandboxes: a real ControllerInstallation,
//! its registration and deployment (a small chart built here) and the Seed are created in the
//! garden, [`reconcile`] is called directly, and the seed's namespace, manifest Secret and
//! ManagedResource and the installation's finalizer and conditions are read back.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use seedlet_api::core::{ControllerInstallation, Seed};
use seedlet_api::names::{finalizers, reasons};
use seedlet_api::resources::ManagedResource;
use seedlet_bootstrap::GardenClient;
use seedlet_chartrender::Renderer;
use serde_json::json;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use super::{Error, Installer, capabilities, chart};
use crate::testing::{Env, SEED, create};
use seedlet_runtime::controller::Reconciler as _;

const NAME: &str = "ext-1";
const CHART_YAML: &str = "apiVersion: v2\nname: ext\nversion: 0.1.0\n";
const TEMPLATE: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\n  namespace: {{ .Release.Namespace }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n";

fn ctx(env: &Env) -> Arc<Installer> {
    Arc::new(Installer {
        clock: env.clock(),
        config: Arc::new(seedlet_config::GardenletConfiguration::default()),
        events: env.events(),
        garden: GardenClient::new(env.garden.clone(), None),
        concurrency: 1,
        seed: env.seed.clone(),
        seed_name: SEED.to_owned(),
        stop: CancellationToken::new(),
        renderer: Arc::new(Renderer::new()),
        discovery: Arc::new(capabilities::SeedDiscovery::new(env.seed.clone())),
        pullers: chart::Pullers::default(),
        cached: std::sync::Mutex::new(None),
        garden_identity: OnceCell::new(),
        garden_namespace_ready: AtomicBool::new(false),
    })
}

/// A gzipped chart archive of `files` under the top directory `ext/`.
fn chart_archive(files: &[(&str, &str)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, content) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, format!("ext/{path}"), content.as_bytes())
            .unwrap();
    }
    let tarball = builder.into_inner().unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut encoder, &tarball).unwrap();
    encoder.finish().unwrap()
}

fn good_chart() -> Vec<u8> {
    chart_archive(&[
        ("Chart.yaml", CHART_YAML),
        ("values.yaml", "greeting: default\n"),
        ("templates/configmap.yaml", TEMPLATE),
    ])
}

/// Our Seed, with a cluster identity when `identified`.
async fn seed(env: &Env, identified: bool) {
    crate::testing::seed(&env.garden).await;
    if identified {
        Api::<Seed>::all(env.garden.clone())
            .patch_status(
                SEED,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"clusterIdentity": "seed-identity"}})),
            )
            .await
            .unwrap();
    }
}

async fn registration_and_deployment(env: &Env, archive: &[u8]) {
    create::<seedlet_api::core::ControllerRegistration>(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerRegistration",
               "metadata": {"name": "ext"},
               "spec": {"resources": [{"kind": "Extension", "type": "small"}],
                        "deployment": {"deploymentRefs": [{"name": "ext"}]}}}),
    )
    .await;
    let raw = base64::engine::general_purpose::STANDARD.encode(archive);
    create::<seedlet_api::core::ControllerDeployment>(
        &env.garden,
        json!({"apiVersion": "core.gardener.cloud/v1", "kind": "ControllerDeployment",
               "metadata": {"name": "ext"},
               "helm": {"rawChart": raw, "values": {"greeting": "hello"}}}),
    )
    .await;
}

async fn installation(env: &Env, seed: &str) -> Arc<ControllerInstallation> {
    Arc::new(
        create(
            &env.garden,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ControllerInstallation",
                   "metadata": {"name": NAME},
                   "spec": {"registrationRef": {"name": "ext"}, "deploymentRef": {"name": "ext"},
                            "seedRef": {"name": seed}}}),
        )
        .await,
    )
}

async fn stored(env: &Env) -> Option<ControllerInstallation> {
    Api::<ControllerInstallation>::all(env.garden.clone())
        .get_opt(NAME)
        .await
        .unwrap()
}

async fn fresh(env: &Env) -> Arc<ControllerInstallation> {
    Arc::new(stored(env).await.expect("installation"))
}

/// `(status, reason)` of condition `type_` of the stored installation.
async fn condition(env: &Env, type_: &str) -> Option<(String, String)> {
    let ci = stored(env).await?;
    ci.conditions().iter().find(|c| c.type_ == type_).map(|c| {
        let status = serde_json::to_value(&c.status).unwrap();
        (
            status.as_str().unwrap_or_default().to_owned(),
            c.reason.clone(),
        )
    })
}

fn pair(status: &str, reason: &str) -> Option<(String, String)> {
    Some((status.to_owned(), reason.to_owned()))
}

async fn managed_resource(env: &Env) -> Option<ManagedResource> {
    Api::<ManagedResource>::namespaced(env.seed.clone(), "garden")
        .get_opt(NAME)
        .await
        .unwrap()
}

#[tokio::test]
async fn an_installation_renders_the_chart_into_a_managed_resource_in_the_seed() {
    let env = Env::start().await;
    seed(&env, true).await;
    registration_and_deployment(&env, &good_chart()).await;
    let created = installation(&env, SEED).await;

    let action = ctx(&env).reconcile(created).await.unwrap();
    assert_eq!(action, Action::await_change());
    let ci = stored(&env).await.unwrap();
    assert_eq!(ci.finalizers(), [finalizers::CONTROLLER_INSTALLATION]);
    assert_eq!(
        condition(&env, "Valid").await,
        pair("True", reasons::REGISTRATION_VALID)
    );
    assert_eq!(
        condition(&env, "Installed").await,
        pair("False", reasons::INSTALLATION_PENDING)
    );
    let namespace = Api::<Namespace>::all(env.seed.clone())
        .get_opt("extension-ext-1")
        .await
        .unwrap();
    assert!(namespace.is_some(), "extension namespace");

    let mr = managed_resource(&env).await.expect("managed resource");
    assert_eq!(mr.spec.class.as_deref(), Some("seed"));
    let secret_name = &mr.spec.secret_refs[0].name;
    assert!(secret_name.starts_with("ext-1-"), "{secret_name}");
    let secret = Api::<Secret>::namespaced(env.seed.clone(), "garden")
        .get(secret_name)
        .await
        .unwrap();
    let manifests: Vec<String> = secret
        .data
        .unwrap_or_default()
        .values()
        .map(|v| String::from_utf8_lossy(&v.0).into_owned())
        .collect();
    let all = manifests.join("\n---\n");
    assert!(all.contains("name: ext-config"), "{all}");
    assert!(all.contains("namespace: extension-ext-1"), "{all}");
    assert!(
        all.contains("greeting: hello"),
        "deployment values win: {all}"
    );
    env.shutdown().await;
}

#[tokio::test]
async fn installations_of_other_seeds_are_left_alone() {
    let env = Env::start().await;
    seed(&env, true).await;
    registration_and_deployment(&env, &good_chart()).await;
    let created = installation(&env, "other").await;

    assert_eq!(
        ctx(&env).reconcile(created).await.unwrap(),
        Action::await_change()
    );
    let ci = stored(&env).await.unwrap();
    assert!(ci.finalizers().is_empty());
    assert!(ci.conditions().is_empty());
    assert!(managed_resource(&env).await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_registration_is_reported_in_valid_and_retried() {
    let env = Env::start().await;
    seed(&env, true).await;
    let created = installation(&env, SEED).await;

    let error = ctx(&env).reconcile(created.clone()).await.unwrap_err();
    assert!(
        matches!(error, Error::RegistrationNotFound { .. }),
        "{error}"
    );
    assert_eq!(
        condition(&env, "Valid").await,
        pair("False", reasons::REGISTRATION_NOT_FOUND)
    );
    assert_eq!(
        ctx(&env).error_policy(&created, &error),
        Action::requeue(Duration::from_secs(5))
    );
    assert!(managed_resource(&env).await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn nothing_is_installed_before_the_seed_has_a_cluster_identity() {
    let env = Env::start().await;
    seed(&env, false).await;
    registration_and_deployment(&env, &good_chart()).await;
    let created = installation(&env, SEED).await;

    let error = ctx(&env).reconcile(created).await.unwrap_err();
    assert_eq!(error.reason(), "ClusterIdentityMissing");
    assert!(managed_resource(&env).await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_chart_that_cannot_be_loaded_makes_the_installation_invalid_without_writes() {
    let env = Env::start().await;
    seed(&env, true).await;
    let broken = chart_archive(&[
        ("Chart.yaml", CHART_YAML),
        ("templates/configmap.yaml", "{{ .Values.greeting "),
    ]);
    registration_and_deployment(&env, &broken).await;
    let created = installation(&env, SEED).await;

    // A broken chart stays broken until the deployment changes: no retry.
    assert_eq!(
        ctx(&env).reconcile(created).await.unwrap(),
        Action::await_change()
    );
    assert_eq!(
        condition(&env, "Valid").await,
        pair("False", reasons::CHART_CANNOT_BE_RENDERED)
    );
    assert!(managed_resource(&env).await.is_none());
    env.shutdown().await;
}

#[tokio::test]
async fn a_stale_copy_reads_again_when_its_finalizer_write_loses_the_race() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    seed(&env, true).await;
    registration_and_deployment(&env, &good_chart()).await;
    let stale = installation(&env, SEED).await;
    // Another writer changed the installation since this copy was read (care controllers write
    // the status of a new installation at once): the guarded finalizer patch gets a 409, is
    // read again and written, and the install goes on without a requeue.
    Api::<ControllerInstallation>::all(env.garden.clone())
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();

    ctx.clone().reconcile(stale).await.unwrap();
    let stored = fresh(&env).await;
    assert_eq!(
        stored.metadata.finalizers,
        Some(vec![finalizers::CONTROLLER_INSTALLATION.to_owned()])
    );
    assert_eq!(
        stored.labels().get("touched").map(String::as_str),
        Some("yes")
    );
    assert!(managed_resource(&env).await.is_some());
    env.shutdown().await;
}

#[tokio::test]
async fn deletion_removes_the_managed_resource_and_namespace_before_the_finalizer() {
    let env = Env::start().await;
    let ctx = ctx(&env);
    seed(&env, true).await;
    registration_and_deployment(&env, &good_chart()).await;
    ctx.clone()
        .reconcile(installation(&env, SEED).await)
        .await
        .unwrap();
    let secret_name = managed_resource(&env).await.unwrap().spec.secret_refs[0]
        .name
        .clone();
    Api::<ControllerInstallation>::all(env.garden.clone())
        .delete(NAME, &DeleteParams::default())
        .await
        .unwrap();

    // Pass 1: the ManagedResource and its Secret go, the namespace deletion starts.
    let action = ctx.clone().reconcile(fresh(&env).await).await.unwrap();
    assert_eq!(
        action,
        Action::requeue(super::delete::DELETION_PENDING_REQUEUE)
    );
    assert!(managed_resource(&env).await.is_none());
    assert!(
        Api::<Secret>::namespaced(env.seed.clone(), "garden")
            .get_opt(&secret_name)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        condition(&env, "Installed").await,
        pair("False", reasons::DELETION_PENDING)
    );
    assert!(stored(&env).await.is_some(), "the finalizer holds");

    // The seed finishes the namespace; the next pass drops the finalizer.
    let namespaces = Api::<Namespace>::all(env.seed.clone());
    seedlet_sandbox::setup::wait_until("namespace gone", Duration::from_secs(10), || {
        let namespaces = namespaces.clone();
        async move {
            namespaces
                .get_opt("extension-ext-1")
                .await
                .unwrap()
                .is_none()
        }
    })
    .await;
    assert_eq!(
        ctx.reconcile(fresh(&env).await).await.unwrap(),
        Action::await_change()
    );
    assert!(stored(&env).await.is_none(), "gone with its finalizer");
    env.shutdown().await;
}

#[tokio::test]
async fn the_seed_and_registration_come_from_the_shared_stores_and_a_miss_from_the_garden() {
    let env = Env::start().await;
    // The garden's Seed has no cluster identity yet; the store holds a newer copy that has one.
    seed(&env, false).await;
    registration_and_deployment(&env, &good_chart()).await;
    let created = installation(&env, SEED).await;
    let installer = ctx(&env);
    let without_store = installer.reconcile(created.clone()).await;
    assert!(
        matches!(without_store, Err(Error::ClusterIdentityMissing { .. })),
        "{without_store:?}"
    );

    let mut identified = Api::<Seed>::all(env.garden.clone())
        .get(SEED)
        .await
        .unwrap();
    identified.status.get_or_insert_default().cluster_identity = Some("seed-identity".into());
    let (seeds, mut seed_writer) = kube::runtime::reflector::store::<Seed>();
    seed_writer.apply_watcher_event(&kube::runtime::watcher::Event::Apply(identified));
    // The registration store is empty: the registration is read from the garden.
    let (registrations, _) =
        kube::runtime::reflector::store::<seedlet_api::core::ControllerRegistration>();
    *installer.cached.lock().unwrap() = Some(super::CachedInputs {
        seed: seeds,
        registrations,
    });
    installer.reconcile(fresh(&env).await).await.unwrap();
    assert_eq!(
        condition(&env, "Valid").await,
        pair("True", reasons::REGISTRATION_VALID)
    );
    assert!(managed_resource(&env).await.is_some(), "managed resource");
}

#[tokio::test]
async fn a_stored_seed_without_identity_is_read_again_from_the_garden() {
    let env = Env::start().await;
    // The garden's Seed has its identity; the store still holds the copy from before it.
    seed(&env, true).await;
    registration_and_deployment(&env, &good_chart()).await;
    let created = installation(&env, SEED).await;
    let installer = ctx(&env);
    let mut stale = Api::<Seed>::all(env.garden.clone())
        .get(SEED)
        .await
        .unwrap();
    stale.status.get_or_insert_default().cluster_identity = None;
    let (seeds, mut seed_writer) = kube::runtime::reflector::store::<Seed>();
    seed_writer.apply_watcher_event(&kube::runtime::watcher::Event::Apply(stale));
    let (registrations, _) =
        kube::runtime::reflector::store::<seedlet_api::core::ControllerRegistration>();
    *installer.cached.lock().unwrap() = Some(super::CachedInputs {
        seed: seeds,
        registrations,
    });
    installer.reconcile(created).await.unwrap();
    assert_eq!(
        condition(&env, "Valid").await,
        pair("True", reasons::REGISTRATION_VALID)
    );
    assert!(managed_resource(&env).await.is_some(), "managed resource");
}
