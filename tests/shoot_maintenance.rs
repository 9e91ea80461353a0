//! End-to-end `shoot-maintenance` in a sandbox garden with a fixed clock: a Shoot asked for
//! maintenance outside its window is maintained from the CloudProfile (Kubernetes patch update,
//! expired machine image forced), starts its due SSH keypair rotation and gets its operation
//! annotation, tasks, `lastMaintenance` and Events; a failed Shoot inside its window gets
//! `retry`; a Shoot without last operation gets no operation annotation but its tasks; a Shoot
//! outside its window is left alone. A Shoot whose dry-run update an admission webhook refuses
//! records the failure with its spec untouched and is maintained once the webhook relents.

use seedlet_testkit::shoot_lifecycle;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::{CloudProfile, Shoot};
use seedlet_garden::controllers::entry::run_alone;
use seedlet_garden::controllers::shoot_maintenance;
use seedlet_runtime::clock::FakeClock;
use shoot_lifecycle::{create_shoot, patch_status, shoots, wait_shoot};
use tokio_util::sync::CancellationToken;

const INSIDE: (&str, &str) = ("220000+0100", "230000+0100");
const OUTSIDE: (&str, &str) = ("100000+0000", "110000+0000");

fn spec(window: (&str, &str), auto: bool, image: &str) -> serde_json::Value {
    serde_json::json!({
        "cloudProfileName": "local",
        "kubernetes": {"version": "1.31.1"},
        "maintenance": {
            "timeWindow": {"begin": window.0, "end": window.1},
            "autoUpdate": {"kubernetesVersion": auto, "machineImageVersion": auto},
        },
        "provider": {"type": "local", "workers": [{
            "name": "pool",
            "machine": {"type": "small", "image": {"name": "gardenlinux", "version": image}},
        }]},
    })
}

async fn annotate(client: &kube::Client, name: &str, annotations: serde_json::Value) {
    shoots(client)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"annotations": annotations}})),
        )
        .await
        .expect("annotate");
}

fn annotations(shoot: &Shoot) -> BTreeMap<String, String> {
    shoot.annotations().clone()
}

fn tasks_set(shoot: &Shoot) -> Option<BTreeMap<String, String>> {
    shoot
        .annotations()
        .contains_key("shoot.gardener.cloud/tasks")
        .then(|| annotations(shoot))
}

/// The controller's dependencies: a clock standing at `now`, control-plane restarts as given,
/// the other switches off.
fn maintenance_ctx(
    client: &kube::Client,
    now: Timestamp,
    restart_control_plane: bool,
) -> Arc<shoot_maintenance::Maintenance> {
    Arc::new(shoot_maintenance::Maintenance {
        client: client.clone(),
        restart_control_plane,
        restart_core_addons: false,
        disable_nginx_ingress: false,
        clock: Arc::new(FakeClock::new(now)),
        events: seedlet_runtime::events::Recorder::new(
            client.clone(),
            "shoot-maintenance-controller",
        ),
        concurrency: 2,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_updates_versions_annotations_and_status_when_asked_or_in_window() {
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    let profile: CloudProfile = serde_json::from_value(serde_json::json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
        "metadata": {"name": "local"},
        "spec": {
            "type": "local",
            "kubernetes": {"versions": [
                {"version": "1.31.1"}, {"version": "1.31.2"},
                {"version": "1.32.0", "classification": "preview"},
            ]},
            "machineTypes": [{"name": "small", "cpu": "2", "gpu": "0", "memory": "4Gi"}],
            "machineImages": [{"name": "gardenlinux", "updateStrategy": "minor", "versions": [
                {"version": "1.0.0", "expirationDate": "2025-01-01T00:00:00Z"},
                {"version": "1.1.0"},
            ]}],
        },
    }))
    .expect("profile");
    Api::<CloudProfile>::all(client.clone())
        .create(&PostParams::default(), &profile)
        .await
        .expect("create profile");
    let succeeded = serde_json::json!({"lastOperation": shoot_lifecycle::last_operation(
        "Reconcile", "Succeeded", "2025-06-01T20:00:00Z".parse().expect("time"))});
    let failed = serde_json::json!({"lastOperation": shoot_lifecycle::last_operation(
        "Reconcile", "Failed", "2025-06-01T20:00:00Z".parse().expect("time"))});

    let mut asked_spec = spec(OUTSIDE, true, "1.0.0");
    asked_spec["maintenance"]["autoRotation"] =
        serde_json::json!({"credentials": {"sshKeypair": {"rotationPeriod": "168h"}}});
    create_shoot(&client, "asked", asked_spec).await;
    annotate(
        &client,
        "asked",
        serde_json::json!({"gardener.cloud/operation": "maintain"}),
    )
    .await;
    patch_status(&client, "asked", succeeded.clone()).await;
    patch_status(
        &client,
        "asked",
        serde_json::json!({"credentials": {"rotation": {"sshKeypair": {"lastCompletionTime": "2025-05-01T00:00:00Z"}}}}),
    )
    .await;
    create_shoot(&client, "failed", spec(INSIDE, false, "1.1.0")).await;
    annotate(
        &client,
        "failed",
        serde_json::json!({"maintenance.shoot.gardener.cloud/needs-retry-operation": "true"}),
    )
    .await;
    patch_status(&client, "failed", failed).await;
    create_shoot(&client, "new", spec(INSIDE, false, "1.1.0")).await;
    create_shoot(&client, "outside", spec(OUTSIDE, true, "1.0.0")).await;
    patch_status(&client, "outside", succeeded).await;

    let now: Timestamp = "2025-06-01T21:10:00Z".parse().expect("time");
    let stop = CancellationToken::new();
    let ctx = maintenance_ctx(&client, now, true);
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));

    // Asked outside its window: maintained.
    let asked = wait_shoot(&client, "asked", "asked maintained", |shoot| {
        let state = last_maintenance(shoot).get("state")?.clone();
        (tasks_set(shoot).is_some() && state == "Succeeded").then(|| shoot.clone())
    })
    .await;
    assert_eq!(
        asked
            .spec
            .kubernetes
            .as_ref()
            .and_then(|k| k.version.as_deref()),
        Some("1.31.2")
    );
    assert_eq!(
        asked.spec.provider.workers[0]
            .machine
            .image
            .as_ref()
            .and_then(|i| i.version.as_deref()),
        Some("1.1.0")
    );
    let asked_annotations = annotations(&asked);
    assert_eq!(
        asked_annotations["gardener.cloud/operation"],
        "reconcile;rotate-ssh-keypair"
    );
    assert_eq!(
        asked_annotations["shoot.gardener.cloud/tasks"],
        "deployInfrastructure,deployDNSRecordInternal,deployDNSRecordExternal,deployDNSRecordIngress,restartControlPlanePods"
    );
    let last = &last_maintenance(&asked);
    // Processing while the update ran, Succeeded once it went through.
    assert_eq!(last["state"], "Succeeded");
    assert_eq!(last["triggeredTime"], "2025-06-01T21:10:00Z");
    assert_eq!(
        last["description"],
        "All maintenance operations successful. \
         Control Plane: Updated Kubernetes version from \"1.31.1\" to \"1.31.2\". Reason: Automatic update of Kubernetes version configured, \
         Worker pool \"pool\": Updated machine image \"gardenlinux\" from \"1.0.0\" to \"1.1.0\". Reason: Machine image version expired - force update required (image update strategy: minor), \
         Credentials \"rotate-ssh-keypair\": SSH keypair rotation started. Reason: Automatic rotation of SSH keypair configured, \
         Added \"reconcile;rotate-ssh-keypair\" operation annotation"
    );

    // Failed inside its window and marked for retry: `retry`, the marker removed.
    let failed = wait_shoot(&client, "failed", "failed maintained", tasks_set).await;
    assert_eq!(failed["gardener.cloud/operation"], "retry");
    assert!(!failed.contains_key("maintenance.shoot.gardener.cloud/needs-retry-operation"));
    // No last operation: no operation annotation, tasks still added, no lastMaintenance.
    let new = wait_shoot(&client, "new", "new maintained", |shoot| {
        tasks_set(shoot).map(|_| shoot.clone())
    })
    .await;
    assert!(!new.annotations().contains_key("gardener.cloud/operation"));
    assert!(
        new.status
            .as_ref()
            .is_none_or(|s| s.last_maintenance.is_none())
    );

    // The events of the asked shoot.
    let events: Api<k8s_openapi::api::core::v1::Event> =
        Api::namespaced(client.clone(), shoot_lifecycle::NAMESPACE);
    let messages = seedlet_testkit::wait_for("maintenance events", Duration::from_secs(10), || {
        let events = events.clone();
        async move {
            let mut found: Vec<String> = events
                .list(&Default::default())
                .await
                .ok()?
                .items
                .into_iter()
                .filter(|e| e.involved_object.name.as_deref() == Some("asked"))
                .map(|e| {
                    format!(
                        "{} {}",
                        e.reason.unwrap_or_default(),
                        e.message.unwrap_or_default()
                    )
                })
                .collect();
            found.sort();
            (found.len() == 2).then_some(found)
        }
    })
    .await;
    assert_eq!(
        messages,
        [
            "KubernetesVersionMaintenance Control Plane: Updated Kubernetes version from \"1.31.1\" to \"1.31.2\". Reason: Automatic update of Kubernetes version configured.",
            "MachineImageVersionMaintenance Worker pool \"pool\": Updated machine image \"gardenlinux\" from \"1.0.0\" to \"1.1.0\". Reason: Machine image version expired - force update required (image update strategy: minor).",
        ]
    );

    // Outside its window and not asked: untouched.
    let outside = shoots(&client).get("outside").await.expect("shoot");
    assert!(tasks_set(&outside).is_none());
    assert_eq!(
        outside
            .spec
            .kubernetes
            .as_ref()
            .and_then(|k| k.version.as_deref()),
        Some("1.31.1")
    );

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crossing_1_34_migrates_secret_bindings_to_credentials_bindings() {
    use seedlet_api::core::{CredentialsBinding, SecretBinding};
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    let profile: CloudProfile = serde_json::from_value(serde_json::json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
        "metadata": {"name": "local"},
        "spec": {
            "type": "local",
            "kubernetes": {"versions": [
                {"version": "1.33.4", "expirationDate": "2025-01-01T00:00:00Z"},
                {"version": "1.34.1"},
            ]},
            "machineTypes": [{"name": "small", "cpu": "2", "gpu": "0", "memory": "4Gi"}],
            "machineImages": [{"name": "gardenlinux", "versions": [{"version": "1.1.0"}]}],
        },
    }))
    .expect("profile");
    Api::<CloudProfile>::all(client.clone())
        .create(&PostParams::default(), &profile)
        .await
        .expect("create profile");
    let secret_binding = |name: &str, secret: &str| -> SecretBinding {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "SecretBinding",
            "metadata": {"name": name, "namespace": shoot_lifecycle::NAMESPACE},
            "secretRef": {"name": secret, "namespace": shoot_lifecycle::NAMESPACE},
            "provider": {"type": "local"},
            "quotas": [{"name": "q", "namespace": "garden"}],
        }))
        .expect("secret binding")
    };
    let secret_bindings: Api<SecretBinding> =
        Api::namespaced(client.clone(), shoot_lifecycle::NAMESPACE);
    let credentials: Api<CredentialsBinding> =
        Api::namespaced(client.clone(), shoot_lifecycle::NAMESPACE);
    for (name, secret) in [("fresh", "fresh-secret"), ("known", "known-secret")] {
        secret_bindings
            .create(&PostParams::default(), &secret_binding(name, secret))
            .await
            .expect("create secret binding");
    }
    // A CredentialsBinding for the known Secret and quotas already exists.
    let existing: CredentialsBinding = serde_json::from_value(serde_json::json!({
        "apiVersion": "security.gardener.cloud/v1alpha1", "kind": "CredentialsBinding",
        "metadata": {"name": "alpha", "namespace": shoot_lifecycle::NAMESPACE},
        "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "known-secret", "namespace": shoot_lifecycle::NAMESPACE},
        "provider": {"type": "local"},
        "quotas": [{"name": "q", "namespace": "garden"}],
    }))
    .expect("credentials binding");
    credentials
        .create(&PostParams::default(), &existing)
        .await
        .expect("create credentials binding");
    for (shoot, binding) in [("fresh", "fresh"), ("known", "known")] {
        let mut spec = spec(INSIDE, false, "1.1.0");
        spec["kubernetes"]["version"] = "1.33.4".into();
        spec["secretBindingName"] = binding.into();
        create_shoot(&client, shoot, spec).await;
    }

    let stop = CancellationToken::new();
    let ctx = maintenance_ctx(
        &client,
        "2025-06-01T21:10:00Z".parse().expect("time"),
        false,
    );
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));

    for (shoot, expected) in [("fresh", "force-migrated-fresh"), ("known", "alpha")] {
        let migrated = wait_shoot(&client, shoot, "migrated", |shoot| {
            shoot
                .spec
                .credentials_binding_name
                .clone()
                .map(|name| (name, shoot.clone()))
        })
        .await;
        assert_eq!(migrated.0, expected, "{shoot}");
        assert_eq!(migrated.1.spec.secret_binding_name, None);
        assert_eq!(
            migrated
                .1
                .spec
                .kubernetes
                .as_ref()
                .and_then(|k| k.version.as_deref()),
            Some("1.34.1")
        );
        let description = last_maintenance(&migrated.1)["description"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            description.ends_with(".spec.secretBindingName was migrated to .spec.credentialsBindingName. Reason: SecretBinding is deprecated and can no longer be used for Shoot clusters using Kubernetes version 1.34+"),
            "{description}"
        );
    }
    let created = credentials
        .get("force-migrated-fresh")
        .await
        .expect("created binding");
    assert_eq!(
        created
            .labels()
            .get("credentialsbinding.gardener.cloud/status")
            .map(String::as_str),
        Some("force-migrated")
    );
    assert_eq!(created.extra["credentialsRef"]["name"], "fresh-secret");
    assert_eq!(created.quotas.len(), 1);

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}

/// Edge case §13.15 end to end: the running controller's dry run is refused by a validating
/// webhook freezing Shoot specs → `Failed`, `Updates to the Shoot failed to be applied: …`, spec
/// untouched, `maintain` removed; after the freeze lifts, asking again maintains the Shoot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_dry_run_fails_the_maintenance_until_the_webhook_relents() {
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    let profile: CloudProfile = serde_json::from_value(serde_json::json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
        "metadata": {"name": "local"},
        "spec": {
            "type": "local",
            "kubernetes": {"versions": [{"version": "1.31.1"}, {"version": "1.31.2"}]},
            "machineTypes": [{"name": "small", "cpu": "2", "gpu": "0", "memory": "4Gi"}],
            "machineImages": [{"name": "gardenlinux", "versions": [{"version": "1.1.0"}]}],
        },
    }))
    .expect("profile");
    Api::<CloudProfile>::all(client.clone())
        .create(&PostParams::default(), &profile)
        .await
        .expect("create profile");
    let freeze = seedlet_sandbox::setup::gate::SpecFreeze::register(
        &client,
        "shoot-freeze",
        serde_json::json!([{"operations": ["UPDATE"], "apiGroups": ["core.gardener.cloud"],
                            "apiVersions": ["*"], "resources": ["shoots"]}]),
    )
    .await;
    freeze.close("a change freeze is in effect");
    create_shoot(&client, "frozen", spec(OUTSIDE, true, "1.1.0")).await;
    patch_status(
        &client,
        "frozen",
        serde_json::json!({"lastOperation": shoot_lifecycle::last_operation(
            "Reconcile", "Succeeded", "2025-06-01T20:00:00Z".parse().expect("time"))}),
    )
    .await;
    annotate(
        &client,
        "frozen",
        serde_json::json!({"gardener.cloud/operation": "maintain"}),
    )
    .await;

    let stop = CancellationToken::new();
    let ctx = maintenance_ctx(
        &client,
        "2025-06-01T21:10:00Z".parse().expect("time"),
        false,
    );
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));

    let last_state = |shoot: &Shoot| {
        last_maintenance(shoot)
            .get("state")?
            .as_str()
            .map(str::to_owned)
    };
    let refused = wait_shoot(&client, "frozen", "maintenance failed", |shoot| {
        (last_state(shoot).as_deref() == Some("Failed")
            && !shoot.annotations().contains_key("gardener.cloud/operation"))
        .then(|| shoot.clone())
    })
    .await;
    let last = &last_maintenance(&refused);
    assert_eq!(last["description"], "Maintenance failed");
    assert_eq!(
        last["failureReason"],
        "Updates to the Shoot failed to be applied: admission webhook \"shoot-freeze.seedlet.test\" \
         denied the request: a change freeze is in effect"
    );
    assert_eq!(
        refused
            .spec
            .kubernetes
            .as_ref()
            .and_then(|k| k.version.as_deref()),
        Some("1.31.1")
    );
    assert!(tasks_set(&refused).is_none(), "nothing but status written");

    freeze.open();
    annotate(
        &client,
        "frozen",
        serde_json::json!({"gardener.cloud/operation": "maintain"}),
    )
    .await;
    let maintained = wait_shoot(&client, "frozen", "maintained after the freeze", |shoot| {
        (last_state(shoot).as_deref() == Some("Succeeded")).then(|| shoot.clone())
    })
    .await;
    assert_eq!(
        maintained
            .spec
            .kubernetes
            .as_ref()
            .and_then(|k| k.version.as_deref()),
        Some("1.31.2")
    );
    let last = &last_maintenance(&maintained);
    assert!(last.get("failureReason").is_none(), "{last}");

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}

/// `status.lastMaintenance` as JSON (`null` when unset).
fn last_maintenance(shoot: &Shoot) -> serde_json::Value {
    let last = shoot
        .status
        .as_ref()
        .and_then(|status| status.last_maintenance.as_ref());
    serde_json::to_value(last).expect("a lastMaintenance serialises")
}
