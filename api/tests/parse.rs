//! Parses Gardener-shaped YAML (upstream examples and fixtures written from the specs) into the
//! typed API and checks that serialising back yields the same object, unknown fields included.

// Test helpers outside #[test] fns: a panic is how they report a broken fixture.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use seedlet_api::conditions::ConditionStatus;
use seedlet_api::core::{
    BackupBucket, BackupEntry, CloudProfile, ControllerDeployment, ControllerDeploymentPolicy,
    ControllerDeploymentV1beta1, ControllerInstallation, ControllerRegistration,
    NamespacedCloudProfile, Project, Seed, Shoot, ShootState,
};
use seedlet_api::extensions::{self, Cluster, ExtensionObject};
use seedlet_api::resources::ManagedResource;

fn fixture(path: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    fs::read_to_string(&path).unwrap_or_else(|err| panic!("reading {}: {err}", path.display()))
}

/// All non-empty documents of a fixture, as JSON.
fn documents(path: &str) -> Vec<Value> {
    let text = fixture(path);
    serde_yaml::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).unwrap())
        .filter(|value| !value.is_null())
        .collect()
}

/// The single document of a fixture, as JSON.
fn document(path: &str) -> Value {
    let mut all = documents(path);
    assert_eq!(all.len(), 1, "{path} should hold one document");
    all.remove(0)
}

/// Removes null values from maps (JSON `null` means absent to the API server).
fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// Parses `value` as `T` and asserts that serialising gives the same JSON back.
fn round_trip<T: DeserializeOwned + Serialize>(value: &Value) -> T {
    let typed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|err| panic!("parsing {}: {err}", value["kind"]));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        without_nulls(&back),
        without_nulls(value),
        "round trip of {}",
        value["kind"]
    );
    typed
}

#[test]
fn upstream_seed_example_round_trips() {
    let seed: Seed = round_trip(&document("upstream/50-seed.yaml"));
    assert_eq!(seed.spec.provider.region, "europe-1");
    assert_eq!(seed.spec.provider.zones, ["europe-1a"]);
    assert_eq!(
        seed.spec.dns.provider.as_ref().unwrap().type_,
        "aws-route53"
    );
    assert_eq!(
        seed.spec.dns.internal.as_ref().unwrap().domain,
        "internal.dev.example.com"
    );
    assert_eq!(seed.spec.networks.block_cidrs, ["169.254.169.254/32"]);
    assert!(
        seed.spec
            .settings
            .as_ref()
            .unwrap()
            .scheduling
            .as_ref()
            .unwrap()
            .visible
    );
    assert!(
        seed.spec
            .settings
            .as_ref()
            .unwrap()
            .dependency_watchdog
            .is_some()
    );
    assert_eq!(seed.spec.ingress.as_ref().unwrap().controller.kind, "nginx");
    assert_eq!(seed.spec.extensions[0].type_, "foobar");
}

#[test]
fn upstream_shoot_example_round_trips() {
    let shoot: Shoot = round_trip(&document("upstream/90-shoot.yaml"));
    assert_eq!(shoot.cloud_profile().unwrap().name, "cloudprofile1");
    assert_eq!(
        shoot.cloud_profile().unwrap().kind_or_default(),
        "CloudProfile"
    );
    assert_eq!(
        shoot.spec.credentials_binding_name.as_deref(),
        Some("my-provider-account")
    );
    let worker = &shoot.spec.provider.workers[0];
    assert_eq!((worker.minimum, worker.maximum), (Some(3), Some(5)));
    assert_eq!(
        worker.machine.image.as_ref().unwrap().name,
        "<some-image-name>"
    );
    assert_eq!(worker.volume.as_ref().unwrap().size, "20Gi");
    let maintenance = shoot.spec.maintenance.as_ref().unwrap();
    assert_eq!(
        maintenance.time_window.as_ref().unwrap().begin,
        "220000+0100"
    );
    assert!(worker.extra.is_empty() && shoot.spec.extra.is_empty());
    assert!(
        shoot.spec.kubernetes.is_none(),
        "`kubernetes:` is null in the example"
    );
    assert_eq!(shoot.technical_id("dev"), "shoot--dev--crazy-botany");
}

#[test]
fn upstream_controller_examples_round_trip() {
    let registration: ControllerRegistration =
        round_trip(&document("upstream/25-controllerregistration.yaml"));
    assert_eq!(registration.spec.resources[0].kind, "OperatingSystemConfig");
    assert!(registration.spec.resources[0].is_primary());
    assert_eq!(registration.deployment_name(), Some("os-gardenlinux"));
    assert_eq!(registration.policy(), ControllerDeploymentPolicy::OnDemand);

    let deployment: ControllerDeployment =
        round_trip(&document("upstream/25-controllerdeployment.yaml"));
    let helm = deployment.helm_deployment().unwrap().unwrap();
    assert_eq!(
        helm.oci_repository.unwrap().pull_reference().as_deref(),
        Some("registry.example.com/foo:1.0.0@sha256:abc")
    );
    assert_eq!(helm.values, Some(serde_json::json!({"foo": "bar"})));

    let installation: ControllerInstallation =
        round_trip(&document("upstream/25-controllerinstallation.yaml"));
    assert_eq!(installation.seed_name(), Some("my-seed"));
    assert_eq!(installation.spec.registration_ref.name, "os-gardenlinux");
}

#[test]
fn upstream_cloud_profile_keeps_its_spec_verbatim() {
    let profile: CloudProfile = round_trip(&document("upstream/30-cloudprofile.yaml"));
    assert_eq!(profile.spec.provider_type(), Some("<some-provider-name>"));
    assert!(profile.spec.fields.contains_key("machineImages"));
}

#[test]
fn seed_with_status_round_trips_and_exposes_conditions() {
    let seed: Seed = round_trip(&document("own/seed-with-status.yaml"));
    let status = seed.status.as_ref().unwrap();
    assert_eq!(
        status.cluster_identity.as_deref(),
        Some("seed-local-identity")
    );
    assert_eq!(status.gardener.as_ref().unwrap().version, "v1.120.0");
    assert_eq!(status.capacity["shoots"].0, "250");
    let ready = seedlet_api::conditions::find(seed.conditions(), "GardenletReady").unwrap();
    assert!(ready.is_true());
    let extensions_ready =
        seedlet_api::conditions::find(seed.conditions(), "ExtensionsReady").unwrap();
    assert_eq!(extensions_ready.status, ConditionStatus::Progressing);
    assert!(seed.has_taint("seed.gardener.cloud/protected"));
    assert_eq!(
        seed.spec.dns.defaults.as_ref().unwrap()[0].domain,
        "local.gardener.cloud"
    );
    assert!(seed.spec.access_restrictions.is_some());
    assert_eq!(
        status
            .client_certificate_expiration_timestamp
            .as_ref()
            .unwrap()
            .0
            .to_string(),
        "2026-12-31T23:59:59Z"
    );
}

#[test]
fn shoot_with_status_round_trips() {
    let shoot: Shoot = round_trip(&document("own/shoot-with-status.yaml"));
    let status = shoot.status.as_ref().unwrap();
    assert_eq!(shoot.technical_id("ignored"), "shoot--dev--foo");
    assert_eq!(status.hibernated, Some(false));
    assert_eq!(
        status.last_errors[0].task_id.as_deref(),
        Some("deployInfrastructure")
    );
    assert_eq!(
        shoot.cloud_profile().unwrap().kind_or_default(),
        "NamespacedCloudProfile"
    );
    assert_eq!(
        shoot.spec.provider.workers[0]
            .cri
            .as_ref()
            .unwrap()
            .container_runtimes[0]
            .type_,
        "gvisor"
    );
    assert!(!shoot.hibernation_enabled());
    assert!(shoot.spec.extensions[1].is_disabled());
    assert_eq!(
        shoot.spec.dns.as_ref().unwrap().providers[0].primary,
        Some(true)
    );
    assert!(!shoot.is_workerless());
    assert_eq!(status.gardener.as_ref().unwrap().name, "gardenlet-xyz");
    assert_eq!(status.networking.as_ref().unwrap().nodes, ["10.10.0.0/16"]);
    assert!(status.extra.is_empty() && shoot.spec.extra.is_empty());
}

#[test]
fn controller_objects_round_trip() {
    let installation: ControllerInstallation =
        round_trip(&document("own/controllerinstallation-with-status.yaml"));
    assert_eq!(installation.conditions().len(), 3);
    assert_eq!(
        installation.spec.resource_refs[0]
            .resource_version
            .as_deref(),
        Some("78")
    );

    let registration: ControllerRegistration =
        round_trip(&document("own/controllerregistration-full.yaml"));
    assert_eq!(
        registration.policy(),
        ControllerDeploymentPolicy::AlwaysExceptNoShoots
    );
    assert!(registration.spec.resources[0].auto_enabled_for("seed"));
    assert_eq!(
        registration.spec.resources[1].continuous_endpoint_update,
        Some(false)
    );

    let v1: ControllerDeployment = round_trip(&document("own/controllerdeployment-v1-raw.yaml"));
    let helm = v1.helm_deployment().unwrap().unwrap();
    assert_eq!(helm.raw_chart.unwrap().0, b"hello chart");
    assert_eq!(v1.spec.resources[0].resource_ref.name, "foo-creds");

    let old_value = document("own/controllerdeployment-v1beta1.yaml");
    let old: ControllerDeploymentV1beta1 = round_trip(&old_value);
    assert_eq!(old.spec.type_, "helm");
    let converted = old.clone().try_into_v1().unwrap();
    assert_eq!(ControllerDeployment::from(old), converted);
    let helm = converted.spec.helm.clone().unwrap();
    assert_eq!(&helm.raw_chart.unwrap().0[..2], &[0x1f, 0x8b], "gzip magic");
    assert_eq!(helm.values.unwrap()["replicaCount"], 2);
    // The same object read through v1 without conversion (development garden) gives the same chart.
    let unconverted: ControllerDeployment = serde_json::from_value(old_value).unwrap();
    assert_eq!(unconverted.helm_deployment().unwrap(), converted.spec.helm);
}

#[test]
fn shoot_state_round_trips() {
    let state: ShootState = round_trip(&document("own/shootstate.yaml"));
    assert_eq!(state.spec.gardener[1].type_, "machine-state");
    assert_eq!(
        state.spec.extensions[1].purpose.as_deref(),
        Some("provision")
    );
    assert_eq!(state.spec.resources[0].data["metadata"]["name"], "tf");
}

#[test]
fn remaining_core_kinds_round_trip() {
    let docs = documents("own/core-misc.yaml");
    let bucket: BackupBucket = round_trip(&docs[0]);
    assert_eq!(bucket.spec.provider.type_, "local");
    let entry: BackupEntry = round_trip(&docs[1]);
    assert_eq!(entry.spec.bucket_name, bucket.metadata.name.unwrap());
    let project: Project = round_trip(&docs[2]);
    assert_eq!(project.spec.namespace.as_deref(), Some("garden-dev"));
    let profile: NamespacedCloudProfile = round_trip(&docs[3]);
    assert_eq!(
        profile.status.unwrap().cloud_profile_spec.unwrap()["type"],
        "local"
    );
}

/// Parses one extension document as `K` and checks the generic accessors.
fn extension<K>(value: &Value, kind: &str) -> K
where
    K: DeserializeOwned + Serialize + ExtensionObject,
{
    assert_eq!(value["kind"], kind);
    let object: K = round_trip(value);
    assert_eq!(
        object.default_spec().type_,
        value["spec"]["type"].as_str().unwrap()
    );
    object
}

#[test]
fn every_extension_kind_round_trips_with_kind_specific_fields() {
    let docs = documents("own/extensions.yaml");
    let infra: extensions::Infrastructure = extension(&docs[0], "Infrastructure");
    let status = infra.extension_status().unwrap();
    assert_eq!(status.resources[0].resource_ref.kind, "ConfigMap");
    assert!(status.state.is_some());
    assert!(status.last_operation.as_ref().unwrap().succeeded());
    assert_eq!(status.extra["nodesCIDR"], "10.10.0.0/16");
    assert_eq!(infra.spec.extra["region"], "local");
    assert_eq!(infra.default_spec().class_or_default(), "shoot");

    let osc: extensions::OperatingSystemConfig = extension(&docs[1], "OperatingSystemConfig");
    assert_eq!(osc.purpose(), Some("provision"));
    let _: extensions::Worker = extension(&docs[2], "Worker");
    let dns: extensions::DNSRecord = extension(&docs[3], "DNSRecord");
    assert_eq!(dns.default_spec().class.as_deref(), Some("shoot"));
    let _: extensions::Network = extension(&docs[4], "Network");
    let _: extensions::ControlPlane = extension(&docs[5], "ControlPlane");
    let _: extensions::Extension = extension(&docs[6], "Extension");
    let _: extensions::ContainerRuntime = extension(&docs[7], "ContainerRuntime");
    let bastion: extensions::Bastion = extension(&docs[8], "Bastion");
    assert_eq!(
        bastion.extension_status().unwrap().extra["ingress"]["ip"],
        "1.2.3.4"
    );
    let _: extensions::SelfHostedShootExposure = extension(&docs[9], "SelfHostedShootExposure");
    let _: extensions::BackupBucket = extension(&docs[10], "BackupBucket");
    let _: extensions::BackupEntry = extension(&docs[11], "BackupEntry");
    assert_eq!(docs.len(), 12);
}

#[test]
fn cluster_and_managed_resource_round_trip() {
    let docs = documents("own/seed-objects.yaml");
    let cluster: Cluster = round_trip(&docs[0]);
    let shoot = cluster.spec.shoot().unwrap();
    assert_eq!(
        shoot.status.unwrap().technical_id.as_deref(),
        Some("shoot--dev--foo")
    );
    assert_eq!(
        cluster.spec.seed().unwrap().unwrap().spec.provider.type_,
        "local"
    );
    assert_eq!(
        cluster.spec.cloud_profile().unwrap().spec.provider_type(),
        Some("local")
    );

    let managed: ManagedResource = round_trip(&docs[1]);
    assert_eq!(managed.class_or_default(), "seed");
    assert_eq!(managed.spec.equivalences[0][1].group, "apps");
    assert!(managed.is_healthy(true));
    let status = managed.status.as_ref().unwrap();
    assert_eq!(status.resources[1].namespace, None);
    assert_eq!(status.resources[0].annotations["foo"], "bar");
}

#[test]
fn upstream_operations_bastion_is_not_an_extension_bastion() {
    // `100-bastion.yaml` is the garden-side `operations.gardener.cloud` Bastion, which has no
    // `spec.type`; it must not be mistaken for the extension kind.
    let value = document("upstream/100-bastion.yaml");
    assert_eq!(value["apiVersion"], "operations.gardener.cloud/v1alpha1");
    assert!(serde_json::from_value::<extensions::Bastion>(value).is_err());
}
