//! Control-plane migration of a Shoot between two seedlet seeds (spec `gardenlet-shoot-flow.md`
//! §6) end to end: one garden with the garden controller (its `shoot-migration` controller sets
//! `ReadyForMigration`), two seed sandboxes each with an agent and the simulated provider of
//! `landscape::shoot_provider`. A Shoot created on the first seed is moved to the second the way
//! the garden's `shoots/binding` does (a new `spec.seedName`); the source migrates (extension
//! objects migrated and shallow-deleted, namespace and Cluster gone, the ShootState holding every
//! object's state) and the destination restores the objects from that state.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Namespace};
use kube::Api;
use kube::api::{Patch, PatchParams};
use seedlet_api::core::{Shoot, ShootState};
use seedlet_api::extensions::{
    Cluster, ContainerRuntime, ControlPlane, ExtensionObject, Infrastructure, Network,
    OperatingSystemConfig, Worker,
};
use seedlet_testkit as common;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use common::{Clusters, SEED};

const PROJECT_NAMESPACE: &str = "garden-dev";
const DESTINATION: &str = "other";
const CONTROL_PLANE_NAMESPACE: &str = "shoot--dev--mover";
/// Generous: each agent's flow waits for its Seed to be ready, the migration runs ~20 tasks.
const TIMEOUT: Duration = Duration::from_secs(180);

async fn garden_basics(garden: &kube::Client) {
    common::create_project_and_cloud_profile(garden, PROJECT_NAMESPACE).await;
    common::create_object::<Shoot>(
        Api::namespaced(garden.clone(), PROJECT_NAMESPACE),
        json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "mover", "namespace": PROJECT_NAMESPACE},
            "spec": {"cloudProfile": {"name": "local"}, "region": "local", "seedName": SEED,
                "kubernetes": {"version": "1.32.0"},
                "networking": {"type": "calico", "pods": "10.3.0.0/16", "services": "10.4.0.0/16"},
                "provider": {"type": "local", "workers": [{"name": "pool-a", "minimum": 1, "maximum": 2,
                    "machine": {"type": "local", "image": {"name": "local", "version": "1.0"}},
                    "cri": {"name": "containerd", "containerRuntimes": [{"type": "gvisor"}]}}]}},
        }),
    )
    .await;
}

fn enable_shoots(config: &mut seedlet_config::GardenletConfiguration) {
    if let Some(shoot) = config.controllers.shoot.as_mut() {
        shoot.enabled = Some(true);
    }
}

/// `(type, state, progress)` of the shoot's last operation.
fn operation(shoot: &Shoot) -> Option<(String, String, i32)> {
    shoot.last_operation().map(|op| {
        (
            format!("{:?}", op.type_),
            format!("{:?}", op.state),
            op.progress,
        )
    })
}

/// Polls the shoot until `done`; every operation seen on the way is recorded in `seen`. On
/// timeout the panic shows the last status.
async fn wait_shoot(
    shoots: &Api<Shoot>,
    what: &str,
    seen: &mut Vec<(String, String)>,
    done: impl Fn(&Shoot) -> bool,
) -> Shoot {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let shoot = shoots.get_opt("mover").await.expect("get shoot");
        if let Some((type_, state, _)) = shoot.as_ref().and_then(operation)
            && seen.last() != Some(&(type_.clone(), state.clone()))
        {
            seen.push((type_, state));
        }
        if let Some(shoot) = shoot.as_ref().filter(|shoot| done(shoot)) {
            return shoot.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}; operations seen {seen:?}; last status: {}",
            serde_json::to_string(&shoot.and_then(|s| s.status)).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `status.state` of each extension object of the control-plane namespace, by `Kind/name`.
async fn states(seed: &kube::Client) -> Vec<(String, Value)> {
    async fn of<K>(seed: &kube::Client, out: &mut Vec<(String, Value)>)
    where
        K: ExtensionObject + kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    {
        let api: Api<K> = Api::namespaced(seed.clone(), CONTROL_PLANE_NAMESPACE);
        for object in api.list(&Default::default()).await.expect("list").items {
            let state = object
                .extension_status()
                .and_then(|s| s.state.clone())
                .unwrap_or(Value::Null);
            let name = object.meta().name.clone().unwrap_or_default();
            out.push((format!("{}/{name}", K::kind(&())), state));
        }
    }
    let mut out = Vec::new();
    of::<ContainerRuntime>(seed, &mut out).await;
    of::<ControlPlane>(seed, &mut out).await;
    of::<Infrastructure>(seed, &mut out).await;
    of::<Network>(seed, &mut out).await;
    of::<OperatingSystemConfig>(seed, &mut out).await;
    of::<Worker>(seed, &mut out).await;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shoot_migrates_to_a_second_seed_and_is_restored_there_from_its_shoot_state() {
    let clusters = Clusters::start(false).await;
    let stop = CancellationToken::new();
    let garden = clusters.garden.client();
    let source = clusters.seed.client();
    let _garden_controller = common::start_garden(&clusters, stop.clone()).await;
    let _source_agent = common::start_agent_with(&clusters, stop.clone(), enable_shoots).await;
    tokio::spawn(seedlet_landscape::shoot_provider::run(
        source.clone(),
        stop.clone(),
    ));
    let other = seedlet_sandbox::Sandbox::builder()
        .name(DESTINATION)
        .start()
        .await
        .expect("destination seed sandbox");
    let destination = other.client();
    common::prepare_seed(&destination).await;
    common::ensure_namespace(&garden, &format!("seed-{DESTINATION}")).await;
    let mut config = common::agent_config(common::AGENT_CONFIG);
    enable_shoots(&mut config);
    if let Some(template) = config.seed_config.as_mut() {
        template.metadata.name = Some(DESTINATION.into());
    }
    let _destination_agent = common::start_agent_from(
        config,
        destination.clone(),
        Some(garden.clone()),
        stop.clone(),
        |_| {},
    )
    .await;
    tokio::spawn(seedlet_landscape::shoot_provider::run(
        destination.clone(),
        stop.clone(),
    ));

    garden_basics(&garden).await;
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let mut seen = Vec::new();
    wait_shoot(&shoots, "Create Succeeded", &mut seen, |shoot| {
        operation(shoot) == Some(("Create".into(), "Succeeded".into(), 100))
    })
    .await;
    let created = states(&source).await;
    assert_eq!(
        created.len(),
        7,
        "every extension object on the source: {created:?}"
    );
    for (object, state) in &created {
        assert_eq!(state["restores"], 0, "{object}: {state}");
        assert!(
            state["createdBy"]
                .as_str()
                .is_some_and(|uid| !uid.is_empty()),
            "{object}: {state}"
        );
    }

    // The garden's `shoots/binding` moves the shoot: only `spec.seedName` changes.
    shoots
        .patch(
            "mover",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"seedName": DESTINATION}})),
        )
        .await
        .expect("bind to the destination");
    let restored = wait_shoot(&shoots, "Restore Succeeded", &mut seen, |shoot| {
        operation(shoot) == Some(("Restore".into(), "Succeeded".into(), 100))
    })
    .await;
    let status = restored.status.as_ref().expect("status");
    assert_eq!(status.seed_name.as_deref(), Some(DESTINATION));
    assert!(status.last_errors.is_empty(), "{:?}", status.last_errors);
    let description = restored
        .last_operation()
        .map(|op| op.description.as_str())
        .unwrap_or_default();
    assert!(
        description.starts_with("Shoot cluster has been successfully restored."),
        "{description}"
    );
    assert!(
        seen.contains(&("Migrate".into(), "Processing".into())),
        "the source ran the migration: {seen:?}"
    );
    // `Migrate Succeeded` lasts only until the destination starts (milliseconds); the source's
    // Events tell the whole story.
    let events = Api::<Event>::namespaced(garden.clone(), PROJECT_NAMESPACE)
        .list(&Default::default())
        .await
        .expect("events");
    let reasons: Vec<&str> = events
        .items
        .iter()
        .filter(|e| e.involved_object.name.as_deref() == Some("mover"))
        .filter_map(|e| e.reason.as_deref())
        .collect();
    for reason in [
        "PrepareMigration",
        "MigrationPrepared",
        "Restoring",
        "Reconciled",
    ] {
        assert!(reasons.contains(&reason), "{reason} in {reasons:?}");
    }

    // The source holds nothing of the shoot any more.
    assert!(
        Api::<Namespace>::all(source.clone())
            .get_opt(CONTROL_PLANE_NAMESPACE)
            .await
            .expect("namespace")
            .is_none(),
        "source namespace gone"
    );
    assert!(
        Api::<Cluster>::all(source.clone())
            .get_opt(CONTROL_PLANE_NAMESPACE)
            .await
            .expect("cluster")
            .is_none(),
        "source Cluster gone"
    );
    assert!(states(&source).await.is_empty());

    // The ShootState kept every object's state from the source; the destination's objects were
    // restored from it: same creator, and the simulated provider counted one restore.
    let state = Api::<ShootState>::namespaced(garden.clone(), PROJECT_NAMESPACE)
        .get("mover")
        .await
        .expect("shootstate");
    for (object, source_state) in &created {
        let (kind, name) = object.split_once('/').expect("kind/name");
        let entry = state
            .spec
            .extensions
            .iter()
            .find(|e| e.kind == kind && e.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("{object} in the ShootState: {:?}", state.spec.extensions));
        let kept = entry.state.as_ref().expect("state");
        assert_eq!(kept["createdBy"], source_state["createdBy"], "{object}");
    }
    let moved = states(&destination).await;
    let names: Vec<&String> = moved.iter().map(|(object, _)| object).collect();
    let expected: Vec<&String> = created.iter().map(|(object, _)| object).collect();
    assert_eq!(names, expected, "the same objects on the destination");
    for ((object, before), (_, after)) in created.iter().zip(&moved) {
        assert_eq!(
            after["createdBy"], before["createdBy"],
            "{object} restored from the source's state"
        );
        assert_eq!(
            after["restores"], 1,
            "{object}: {after}; all {moved:?}; state {:?}",
            state.spec.extensions
        );
    }
    stop.cancel();
}
