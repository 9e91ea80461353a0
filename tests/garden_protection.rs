//! End-to-end tests of the garden's reference protection (spec garden-controllers §2): the
//! `gardener` finalizer on CloudProfiles, NamespacedCloudProfiles, bindings, Quotas and
//! ExposureClasses, deletion blocked (with its Event) while in use and released after, the marks
//! the bindings put on credentials and Quotas, and the reference finalizer of Shoots and Seeds on
//! the Secrets and ConfigMaps they reference. Runs the real garden controller, configured by
//! Gardener's example `ControllerManagerConfiguration`, against a garden sandbox.

use seedlet_testkit as common;

use std::time::Duration;

use common::{wait_for, wait_until};
use k8s_openapi::api::core::v1::{ConfigMap, Event, Secret};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::CredentialsBinding;
use seedlet_api::core::{
    CloudProfile, ExposureClass, NamespacedCloudProfile, Quota, SecretBinding, Seed, Shoot,
};
use seedlet_api::security::WorkloadIdentity;
use seedlet_sandbox::Sandbox;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(20);
const NS: &str = "garden-dev";

/// Gardener's own example `ControllerManagerConfiguration`, unchanged: the garden controller runs
/// from it.
const CONFIG: &str =
    include_str!("../config/tests/fixtures/20-componentconfig-gardener-controller-manager.yaml");

struct Garden {
    sandbox: Sandbox,
    client: kube::Client,
    shutdown: CancellationToken,
}

async fn garden() -> Garden {
    let sandbox = seedlet_testkit::start_sandbox("garden").await;
    let client = sandbox.client();
    common::prepare_garden(&client).await;
    common::ensure_namespace(&client, NS).await;
    let shutdown = CancellationToken::new();
    common::start_garden_from(
        client.clone(),
        common::garden_config(CONFIG),
        shutdown.clone(),
        |g| g,
    )
    .await;
    Garden {
        sandbox,
        client,
        shutdown,
    }
}

impl Garden {
    async fn stop(self) {
        self.shutdown.cancel();
        self.sandbox.shutdown().await;
    }
}

async fn create<K>(api: &Api<K>, value: Value) -> K
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + serde::Serialize,
{
    let object: K = serde_json::from_value(value).expect("object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("create")
}

fn shoot(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["provider"] = json!({"type": "local"});
    spec["region"] = json!("local");
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec
    })
}

async fn has_finalizer<K>(api: &Api<K>, name: &str, finalizer: &str) -> bool
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    api.get_opt(name)
        .await
        .expect("get")
        .is_some_and(|o| o.finalizers().iter().any(|f| f == finalizer))
}

async fn wait_finalizer<K>(api: &Api<K>, name: &str, finalizer: &str, present: bool)
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    wait_until(
        &format!("{name} finalizer {finalizer} present={present}"),
        TIMEOUT,
        || async { has_finalizer(api, name, finalizer).await == present },
    )
    .await;
}

async fn wait_gone<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    wait_until(&format!("{name} gone"), TIMEOUT, || async {
        api.get_opt(name).await.expect("get").is_none()
    })
    .await;
}

async fn delete<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    api.delete(name, &DeleteParams::default())
        .await
        .expect("delete");
}

/// Waits for a `ResourceReferenced` Event about `name` with `message`; returns its type.
async fn wait_event(client: &kube::Client, name: &str, message: &str) -> (String, String) {
    let events: Api<Event> = Api::all(client.clone());
    wait_for(&format!("event {message:?}"), TIMEOUT, || async {
        events
            .list(&Default::default())
            .await
            .expect("events")
            .items
            .into_iter()
            .find(|e| {
                e.involved_object.name.as_deref() == Some(name)
                    && e.reason.as_deref() == Some("ResourceReferenced")
                    && e.message.as_deref() == Some(message)
            })
            .map(|e| (e.type_.unwrap_or_default(), e.action.unwrap_or_default()))
    })
    .await
}

async fn still_deleting<K>(api: &Api<K>, name: &str) -> bool
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    api.get_opt(name)
        .await
        .expect("get")
        .is_some_and(|o| o.meta().deletion_timestamp.is_some())
}

#[tokio::test]
async fn cloud_profile_waits_for_its_namespaced_profiles_then_its_shoots() {
    let garden = garden().await;
    let client = garden.client.clone();
    let profiles: Api<CloudProfile> = Api::all(client.clone());
    let children: Api<NamespacedCloudProfile> = Api::namespaced(client.clone(), NS);
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), NS);
    create(
        &profiles,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
        "metadata": {"name": "p"}, "spec": {"type": "local"}}),
    )
    .await;
    create(&children, json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "NamespacedCloudProfile",
        "metadata": {"name": "n", "namespace": NS}, "spec": {"parent": {"kind": "CloudProfile", "name": "p"}}}))
    .await;
    create(
        &shoots,
        shoot(
            "s",
            json!({"cloudProfile": {"kind": "CloudProfile", "name": "p"}}),
        ),
    )
    .await;
    create(
        &shoots,
        shoot(
            "t",
            json!({"cloudProfile": {"kind": "NamespacedCloudProfile", "name": "n"}}),
        ),
    )
    .await;
    wait_finalizer(&profiles, "p", "gardener", true).await;
    wait_finalizer(&children, "n", "gardener", true).await;

    // With a child only the child is named.
    delete(&profiles, "p").await;
    let (type_, action) = wait_event(
        &client,
        "p",
        "Cannot delete CloudProfile, because the following NamespacedCloudProfiles are still referencing it: [garden-dev/n]",
    )
    .await;
    assert_eq!((type_.as_str(), action.as_str()), ("Normal", "Delete"));
    assert!(still_deleting(&profiles, "p").await);

    // The child is used by shoot t.
    delete(&children, "n").await;
    let (type_, action) = wait_event(
        &client,
        "n",
        "Cannot delete NamespacedCloudProfile, because the following Shoots are still referencing it: [garden-dev/t]",
    )
    .await;
    assert_eq!((type_.as_str(), action.as_str()), ("Normal", "Reconcile"));
    delete(&shoots, "t").await;
    wait_gone(&children, "n").await;

    // Now shoot s blocks the parent; its deletion releases it.
    wait_event(
        &client,
        "p",
        "Cannot delete CloudProfile, because the following Shoots are still referencing it: [garden-dev/s]",
    )
    .await;
    assert!(still_deleting(&profiles, "p").await);
    delete(&shoots, "s").await;
    wait_gone(&profiles, "p").await;
    garden.stop().await;
}

fn labels_of<K: kube::Resource>(object: &K) -> Vec<(String, String)> {
    object
        .labels()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[tokio::test]
async fn secret_bindings_protect_their_secret_and_quotas_until_the_last_one_goes() {
    let garden = garden().await;
    let client = garden.client.clone();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let quotas: Api<Quota> = Api::namespaced(client.clone(), NS);
    let bindings: Api<SecretBinding> = Api::namespaced(client.clone(), NS);
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), NS);
    create(&secrets, json!({"metadata": {"name": "creds", "namespace": NS, "finalizers": ["gardener.cloud/gardener"]}})).await;
    for quota in ["q", "shared"] {
        create(&quotas, json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Quota",
            "metadata": {"name": quota, "namespace": NS}, "spec": {"scope": {"apiVersion": "v1", "kind": "Secret"}}}))
        .await;
    }
    // `shared` is listed by both bindings: it keeps its label until the last one goes.
    for (name, quotas) in [
        (
            "b1",
            json!([{"name": "q", "namespace": NS}, {"name": "shared", "namespace": NS}]),
        ),
        ("b2", json!([{"name": "shared", "namespace": NS}])),
    ] {
        create(
            &bindings,
            json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "SecretBinding",
            "metadata": {"name": name, "namespace": NS},
            "secretRef": {"name": "creds", "namespace": NS},
            "provider": {"type": "aws,gcp"}, "quotas": quotas}),
        )
        .await;
    }
    create(&shoots, shoot("s", json!({"secretBindingName": "b1"}))).await;

    // Protected: finalizer (legacy one dropped), provider and reference labels; quota labelled.
    wait_until("secret protected", TIMEOUT, || async {
        let secret = secrets.get("creds").await.expect("secret");
        let labels = labels_of(&secret);
        secret.finalizers() == ["gardener.cloud/secretbinding"]
            && [
                "provider.shoot.gardener.cloud/aws",
                "provider.shoot.gardener.cloud/gcp",
                "reference.gardener.cloud/secretbinding",
            ]
            .iter()
            .all(|key| labels.contains(&((*key).to_owned(), "true".to_owned())))
    })
    .await;
    wait_until("quota labelled", TIMEOUT, || async {
        quotas
            .get("q")
            .await
            .expect("quota")
            .labels()
            .get("reference.gardener.cloud/secretbinding")
            == Some(&"true".to_owned())
    })
    .await;
    wait_finalizer(&quotas, "q", "gardener", true).await;

    // b1 is used by s; the quota is listed by the deleting b1 and stays too.
    delete(&bindings, "b1").await;
    let (type_, action) = wait_event(
        &client,
        "b1",
        "Cannot delete SecretBinding, because the following Shoots are still referencing it: [garden-dev/s]",
    )
    .await;
    assert_eq!((type_.as_str(), action.as_str()), ("Warning", "Reconcile"));
    delete(&quotas, "q").await;
    wait_event(
        &client,
        "q",
        "Cannot delete Quota, because the following resources are still referencing it: SecretBindings - [garden-dev/b1], CredentialsBindings - []",
    )
    .await;
    assert!(still_deleting(&quotas, "q").await);

    // The shoot goes: b1 is released, the quota follows; b2 still protects the secret.
    delete(&shoots, "s").await;
    wait_gone(&bindings, "b1").await;
    wait_gone(&quotas, "q").await;
    let secret = secrets.get("creds").await.expect("secret");
    assert_eq!(secret.finalizers(), ["gardener.cloud/secretbinding"]);
    assert!(
        secret
            .labels()
            .contains_key("reference.gardener.cloud/secretbinding")
    );

    let label = |quota: Quota| {
        quota
            .labels()
            .get("reference.gardener.cloud/secretbinding")
            .cloned()
    };
    assert_eq!(
        label(quotas.get("shared").await.expect("quota")).as_deref(),
        Some("true")
    );

    // The last binding releases the secret entirely, and unlabels the quota.
    delete(&bindings, "b2").await;
    wait_gone(&bindings, "b2").await;
    wait_until("shared quota unlabelled", TIMEOUT, || async {
        label(quotas.get("shared").await.expect("quota")).is_none()
    })
    .await;
    wait_until("secret released", TIMEOUT, || async {
        let secret = secrets.get("creds").await.expect("secret");
        secret.finalizers().is_empty() && secret.labels().is_empty()
    })
    .await;
    garden.stop().await;
}

#[tokio::test]
async fn credentials_binding_on_a_workload_identity_and_exposure_class_protection() {
    let garden = garden().await;
    let client = garden.client.clone();
    let identities: Api<WorkloadIdentity> = Api::namespaced(client.clone(), NS);
    let bindings: Api<CredentialsBinding> = Api::namespaced(client.clone(), NS);
    let classes: Api<ExposureClass> = Api::all(client.clone());
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), NS);
    create(&identities, json!({"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity",
        "metadata": {"name": "wi", "namespace": NS, "labels": {"provider.shoot.gardener.cloud/aws": "true"}},
        "spec": {"audiences": ["x"], "targetSystem": {"type": "aws"}}}))
    .await;
    create(&bindings, json!({"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "CredentialsBinding",
        "metadata": {"name": "cb", "namespace": NS},
        "credentialsRef": {"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity", "namespace": NS, "name": "wi"},
        "provider": {"type": "aws"}}))
    .await;
    create(
        &classes,
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ExposureClass",
        "metadata": {"name": "internet"}, "handler": "internet-config"}),
    )
    .await;
    create(
        &shoots,
        shoot(
            "s",
            json!({"credentialsBindingName": "cb", "exposureClassName": "internet"}),
        ),
    )
    .await;

    wait_until("workload identity marked", TIMEOUT, || async {
        let identity = identities.get("wi").await.expect("wi");
        identity.finalizers() == ["gardener.cloud/credentialsbinding"]
            && labels_of(&identity)
                == [(
                    "reference.gardener.cloud/credentialsbinding".to_owned(),
                    "true".to_owned(),
                )]
    })
    .await;
    wait_finalizer(&classes, "internet", "gardener", true).await;

    delete(&bindings, "cb").await;
    delete(&classes, "internet").await;
    let (type_, action) = wait_event(
        &client,
        "cb",
        "Cannot delete CredentialsBinding, because the following Shoots are still referencing it: [garden-dev/s]",
    )
    .await;
    assert_eq!((type_.as_str(), action.as_str()), ("Warning", "Delete"));
    wait_event(
        &client,
        "internet",
        "Cannot delete ExposureClass, because it is still associated by the following Shoots: [garden-dev/s]",
    )
    .await;
    delete(&shoots, "s").await;
    wait_gone(&bindings, "cb").await;
    wait_gone(&classes, "internet").await;
    wait_until("workload identity released", TIMEOUT, || async {
        let identity = identities.get("wi").await.expect("wi");
        identity.finalizers().is_empty() && identity.labels().is_empty()
    })
    .await;
    garden.stop().await;
}

const REFERENCE: &str = "gardener.cloud/reference-protection";

fn resource(name: &str, kind: &str, target: &str) -> Value {
    json!({"name": name, "resourceRef": {"apiVersion": "v1", "kind": kind, "name": target}})
}

#[tokio::test]
async fn shoots_and_seeds_protect_what_they_reference_until_released() {
    let garden = garden().await;
    let client = garden.client.clone();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), NS);
    let shoots: Api<Shoot> = Api::namespaced(client.clone(), NS);
    for name in ["a", "dns"] {
        create(
            &secrets,
            json!({"metadata": {"name": name, "namespace": NS}}),
        )
        .await;
    }
    create(
        &config_maps,
        json!({"metadata": {"name": "audit", "namespace": NS}}),
    )
    .await;
    // `b` is missing: the existing references are protected, the shoot is not.
    create(&shoots, json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
        "metadata": {"name": "s", "namespace": NS, "finalizers": ["gardener"]},
        "spec": {
            "provider": {"type": "local"}, "region": "local",
            "dns": {"providers": [{"type": "aws", "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "dns"}}]},
            "kubernetes": {"kubeAPIServer": {"auditConfig": {"auditPolicy": {"configMapRef": {"name": "audit"}}}}},
            "resources": [resource("r1", "Secret", "a"), resource("r2", "Secret", "b")]
        }
    }))
    .await;
    wait_finalizer(&secrets, "a", REFERENCE, true).await;
    wait_finalizer(&secrets, "dns", REFERENCE, true).await;
    wait_finalizer(&config_maps, "audit", REFERENCE, true).await;
    assert!(!has_finalizer(&shoots, "s", REFERENCE).await);
    create(
        &secrets,
        json!({"metadata": {"name": "b", "namespace": NS}}),
    )
    .await;
    wait_finalizer(&shoots, "s", REFERENCE, true).await;
    wait_finalizer(&secrets, "b", REFERENCE, true).await;

    // Dropping a reference releases that secret only.
    let patch = json!({"spec": {"resources": [resource("r2", "Secret", "b")]}});
    shoots
        .patch("s", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch shoot");
    wait_finalizer(&secrets, "a", REFERENCE, false).await;
    assert!(has_finalizer(&secrets, "b", REFERENCE).await);

    // Deleting: references stay while `gardener` is on the shoot, go after.
    delete(&shoots, "s").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(has_finalizer(&secrets, "b", REFERENCE).await);
    let patch = json!({"metadata": {"finalizers": [REFERENCE]}});
    shoots
        .patch("s", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("drop gardener");
    wait_gone(&shoots, "s").await;
    wait_finalizer(&secrets, "b", REFERENCE, false).await;
    wait_finalizer(&secrets, "dns", REFERENCE, false).await;
    wait_finalizer(&config_maps, "audit", REFERENCE, false).await;

    // A Seed protects its `garden` resources the same way.
    let garden_secrets: Api<Secret> = Api::namespaced(client.clone(), "garden");
    create(
        &garden_secrets,
        json!({"metadata": {"name": "seed-res", "namespace": "garden"}}),
    )
    .await;
    let seeds: Api<Seed> = Api::all(client.clone());
    create(
        &seeds,
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
            "metadata": {"name": "s1"},
            "spec": {
                "provider": {"type": "local", "region": "local"},
                "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
                "resources": [resource("r", "Secret", "seed-res")]
            }
        }),
    )
    .await;
    wait_finalizer(&garden_secrets, "seed-res", REFERENCE, true).await;
    wait_finalizer(&seeds, "s1", REFERENCE, true).await;
    delete(&seeds, "s1").await;
    wait_gone(&seeds, "s1").await;
    wait_finalizer(&garden_secrets, "seed-res", REFERENCE, false).await;
    garden.stop().await;
}

#[tokio::test]
async fn cloud_profile_status_classifies_every_version() {
    let garden = garden().await;
    let profiles: Api<CloudProfile> = Api::all(garden.client.clone());
    let later = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_hours(3))
        .expect("time");
    let later = jiff::Timestamp::from_second(later.as_second()).expect("time");
    create(&profiles, json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
        "metadata": {"name": "classified"},
        "spec": {
            "type": "local",
            "kubernetes": {"versions": [
                {"version": "1.30.0", "expirationDate": "2020-01-01T00:00:00Z"},
                {"version": "1.31.0", "lifecycle": [{"classification": "supported", "startTime": later.to_string()}]},
                {"version": "1.32.0"}
            ]},
            "machineImages": [{"name": "gl", "versions": [{"version": "1.0.0", "classification": "preview"}]}]
        }}))
    .await;
    let status = wait_for("cloud profile status", TIMEOUT, || async {
        profiles
            .get("classified")
            .await
            .expect("get")
            .status
            .map(|s| serde_json::to_value(s).expect("json"))
    })
    .await;
    assert_eq!(
        status,
        json!({
            "kubernetes": {"versions": [
                {"version": "1.30.0", "classification": "expired"},
                {"version": "1.31.0", "classification": "unavailable"},
                {"version": "1.32.0", "classification": "supported"}
            ]},
            "machineImages": [{"name": "gl", "versions": [{"version": "1.0.0", "classification": "preview"}]}]
        })
    );
    garden.stop().await;
}
