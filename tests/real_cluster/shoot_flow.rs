//! The Shoot controller on a real seed: with the simulated provider of
//! `landscape::shoot_provider` answering the extension objects in the real seed, a Shoot with a
//! worker pool reaches `lastOperation` Create Succeeded 100 % through the agent process (under its
//! chart's RBAC and the seed authorizer), hibernates and wakes, fails with the code an extension
//! reports and succeeds on the retry request, and its deletion runs the delete flow until the
//! Shoot, its Cluster and its namespace are gone.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use seedlet_api::core::Shoot;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::checks::{create, wait_state};
use super::daemons::Daemon;
use super::landscape::SeedCluster;

const PROJECT_NAMESPACE: &str = "garden-dev";
/// Creation and deletion each: the flows poll extension objects from 250 ms up to 5–10 s.
const FLOW_TIMEOUT: Duration = Duration::from_secs(120);

/// Creates Shoot `flow` on `seed` (Project `dev` and CloudProfile `local` exist), waits for
/// Create Succeeded 100 %, deletes it and waits until it, its Cluster and namespace are gone.
/// Returns (creation, deletion) durations.
pub async fn create_and_delete(garden: &kube::Client, seed: &SeedCluster) -> (Duration, Duration) {
    let stop = CancellationToken::new();
    let releases = seedlet_landscape::shoot_provider::Releases::default();
    tokio::spawn(seedlet_landscape::shoot_provider::run_recording(
        seed.admin.clone(),
        stop.clone(),
        releases.clone(),
    ));
    let agent = [&seed.agent];
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let started = Instant::now();
    create::<Shoot>(
        shoots.clone(),
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "flow", "namespace": PROJECT_NAMESPACE},
            "spec": {"cloudProfile": {"name": "local"}, "region": "local", "seedName": seed.name,
                "kubernetes": {"version": "1.32.0"},
                "networking": {"type": "calico", "pods": "10.3.0.0/16", "services": "10.4.0.0/16"},
                "provider": {"type": "local", "workers": [{"name": "pool-a", "minimum": 1, "maximum": 2,
                    "machine": {"type": "local", "image": {"name": "local", "version": "1.0.0"}}}]}}}),
    )
    .await;
    wait_state(
        "Shoot flow: Create Succeeded 100 %",
        FLOW_TIMEOUT,
        &agent,
        || async {
            let shoot = shoots.get("flow").await.map_err(|e| e.to_string())?;
            let operation = shoot.last_operation().cloned();
            match operation {
                Some(op)
                    if format!("{:?}/{:?}/{}", op.type_, op.state, op.progress)
                        == "Create/Succeeded/100" =>
                {
                    Ok(())
                }
                other => Err(format!("{other:?}")),
            }
        },
    )
    .await;
    let created = started.elapsed();
    hibernate_and_wake(&shoots, &agent).await;
    fail_and_retry(&shoots, &agent).await;

    let deleting = Instant::now();
    shoots
        .delete("flow", &Default::default())
        .await
        .expect("shoot deleted");
    let namespaces: Api<Namespace> = Api::all(seed.admin.clone());
    wait_state(
        "Shoot flow: Shoot and namespace gone",
        FLOW_TIMEOUT,
        &agent,
        || async {
            let shoot = shoots.get_opt("flow").await.map_err(|e| e.to_string())?;
            let namespace = namespaces
                .get_opt("shoot--dev--flow")
                .await
                .map_err(|e| e.to_string())?;
            match (shoot, namespace) {
                (None, None) => Ok(()),
                (shoot, namespace) => Err(format!(
                    "shoot: {:?}, namespace present: {}",
                    shoot.and_then(|s| s.status).and_then(|s| s.last_operation),
                    namespace.is_some()
                )),
            }
        },
    )
    .await;
    let deleted = deleting.elapsed();
    stop.cancel();
    let released = releases.lock().expect("releases").clone();
    assert!(
        released
            .iter()
            .all(|r| r.confirmed && !r.namespace_terminating),
        "every extension object deleted with confirmation before the namespace: {released:?}"
    );
    let position = |kind: &str| {
        released
            .iter()
            .position(|r| r.kind == kind)
            .unwrap_or_else(|| panic!("no {kind} released: {released:?}"))
    };
    assert!(
        position("Worker") < position("Infrastructure"),
        "{released:?}"
    );
    (created, deleted)
}

/// `type/state/progress` of the last operation, `hibernated`, and the codes of every last error.
fn summary(shoot: &Shoot) -> (String, bool, Vec<String>) {
    let status = shoot.status.as_ref();
    let operation = shoot.last_operation().map_or_else(String::new, |op| {
        format!("{:?}/{:?}/{}", op.type_, op.state, op.progress)
    });
    let hibernated = status.and_then(|s| s.hibernated).unwrap_or(false);
    let codes = status
        .map(|s| s.last_errors.iter().flat_map(|e| e.codes.clone()).collect())
        .unwrap_or_default();
    (operation, hibernated, codes)
}

async fn patch(shoots: &Api<Shoot>, value: serde_json::Value) {
    shoots
        .patch("flow", &PatchParams::default(), &Patch::Merge(&value))
        .await
        .expect("shoot patched");
}

/// Waits until the shoot's [`summary`] is `want` (the operation as a prefix); a success only
/// counts for the generation the agent observed (a failure stops the shoot wherever it is).
async fn wait_summary(
    shoots: &Api<Shoot>,
    agent: &[&Daemon],
    what: &str,
    want: (&str, bool, &[&str]),
) {
    wait_state(what, FLOW_TIMEOUT, agent, || async {
        let shoot = shoots.get("flow").await.map_err(|e| e.to_string())?;
        let observed = shoot.status.as_ref().and_then(|s| s.observed_generation);
        let got = summary(&shoot);
        if (observed == shoot.metadata.generation || !want.0.contains("Succeeded"))
            && got.0.starts_with(want.0)
            && got.1 == want.1
            && got.2.iter().map(String::as_str).eq(want.2.iter().copied())
        {
            Ok(())
        } else {
            Err(format!(
                "{got:?} at observed generation {observed:?} of {:?}",
                shoot.metadata.generation
            ))
        }
    })
    .await;
}

/// Hibernation on and off: each a Reconcile that ends with `status.hibernated` following.
async fn hibernate_and_wake(shoots: &Api<Shoot>, agent: &[&Daemon]) {
    for (enabled, what) in [(true, "hibernated"), (false, "woken up")] {
        patch(
            shoots,
            json!({"spec": {"hibernation": {"enabled": enabled}}}),
        )
        .await;
        wait_summary(
            shoots,
            agent,
            &format!("Shoot flow: {what}"),
            ("Reconcile/Succeeded/100", enabled, &[]),
        )
        .await;
    }
}

/// The Network extension reports a rate-limit error (the simulated provider, asked through the
/// Shoot's annotation, which the Cluster carries to the seed): the reconcile the `reconcile`
/// request starts fails with the code. The provider recovers and a `retry` request (what the
/// garden's shoot-retry controller writes) reconciles it; a CRD-served garden bumps no generation
/// for either, the agent takes both requests and removes them.
async fn fail_and_retry(shoots: &Api<Shoot>, agent: &[&Daemon]) {
    patch(
        shoots,
        json!({"metadata": {"annotations": {
            "seedlet.gardener.cloud/simulate-error": "Network:ERR_INFRA_RATE_LIMITS_EXCEEDED",
            "gardener.cloud/operation": "reconcile"}}}),
    )
    .await;
    wait_summary(
        shoots,
        agent,
        "Shoot flow: Reconcile Failed with the extension's code",
        (
            "Reconcile/Failed/",
            false,
            &["ERR_INFRA_RATE_LIMITS_EXCEEDED"],
        ),
    )
    .await;
    patch(
        shoots,
        json!({"metadata": {"annotations": {
            "seedlet.gardener.cloud/simulate-error": null,
            "gardener.cloud/operation": "retry"}}}),
    )
    .await;
    wait_summary(
        shoots,
        agent,
        "Shoot flow: Reconcile Succeeded after the retry",
        ("Reconcile/Succeeded/100", false, &[]),
    )
    .await;
    let shoot = shoots.get("flow").await.expect("shoot");
    assert_eq!(
        shoot.annotations().get("gardener.cloud/operation"),
        None,
        "the agent removed the retry request"
    );
}

/// Control-plane migration between two seedlet seeds on real control planes: Shoot `mover`
/// created on `source` reaches Create Succeeded, `spec.seedName` moves to `destination` (what the
/// garden's `shoots/binding` writes), the garden controller confirms `ReadyForMigration`, the
/// source migrates (its namespace goes) and the destination restores to Restore Succeeded 100 %
/// with `status.seedName` the destination; then the Shoot is deleted there. Each seed's agent
/// reads only what the seed authorizer lets it. Returns (create, migrate+restore, delete).
pub async fn migrate(
    garden: &kube::Client,
    source: &SeedCluster,
    destination: &SeedCluster,
) -> (Duration, Duration, Duration) {
    let stop = CancellationToken::new();
    for seed in [source, destination] {
        tokio::spawn(seedlet_landscape::shoot_provider::run(
            seed.admin.clone(),
            stop.clone(),
        ));
    }
    let agents = [&source.agent, &destination.agent];
    let shoots: Api<Shoot> = Api::namespaced(garden.clone(), PROJECT_NAMESPACE);
    let operation_of = |name: &'static str| {
        let shoots = shoots.clone();
        move || {
            let shoots = shoots.clone();
            async move {
                let shoot = shoots.get(name).await.map_err(|e| e.to_string())?;
                let status = shoot.status.as_ref();
                Ok::<_, String>((
                    shoot.last_operation().map_or_else(String::new, |op| {
                        format!("{:?}/{:?}/{}", op.type_, op.state, op.progress)
                    }),
                    status.and_then(|s| s.seed_name.clone()),
                ))
            }
        }
    };
    let started = Instant::now();
    create::<Shoot>(
        shoots.clone(),
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "mover", "namespace": PROJECT_NAMESPACE},
            "spec": {"cloudProfile": {"name": "local"}, "region": "local", "seedName": source.name,
                "kubernetes": {"version": "1.32.0"},
                "networking": {"type": "calico", "pods": "10.3.0.0/16", "services": "10.4.0.0/16"},
                "provider": {"type": "local", "workers": [{"name": "pool-a", "minimum": 1, "maximum": 2,
                    "machine": {"type": "local", "image": {"name": "local", "version": "1.0.0"}}}]}}}),
    )
    .await;
    let current = operation_of("mover");
    wait_state(
        "Shoot mover: Create Succeeded 100 %",
        FLOW_TIMEOUT,
        &agents,
        || {
            let current = current();
            async move {
                match current.await? {
                    (op, _) if op == "Create/Succeeded/100" => Ok(()),
                    other => Err(format!("{other:?}")),
                }
            }
        },
    )
    .await;
    let created = started.elapsed();

    let moving = Instant::now();
    shoots
        .patch(
            "mover",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"seedName": destination.name}})),
        )
        .await
        .expect("bound to the destination");
    let want_seed = destination.name.clone();
    wait_state(
        "Shoot mover: Restore Succeeded 100 % on the destination",
        FLOW_TIMEOUT,
        &agents,
        || {
            let current = current();
            let want_seed = want_seed.clone();
            async move {
                match current.await? {
                    (op, Some(seed)) if op == "Restore/Succeeded/100" && seed == want_seed => {
                        Ok(())
                    }
                    other => Err(format!("{other:?}")),
                }
            }
        },
    )
    .await;
    let migrated = moving.elapsed();
    for (seed, present) in [(source, false), (destination, true)] {
        let namespace = Api::<Namespace>::all(seed.admin.clone())
            .get_opt("shoot--dev--mover")
            .await
            .expect("read namespace");
        assert_eq!(
            namespace.is_some_and(|n| n.metadata.deletion_timestamp.is_none()),
            present,
            "control-plane namespace on {}",
            seed.name
        );
    }

    let deleting = Instant::now();
    shoots
        .delete("mover", &Default::default())
        .await
        .expect("shoot deleted");
    wait_state("Shoot mover: gone", FLOW_TIMEOUT, &agents, || {
        let shoots = shoots.clone();
        async move {
            match shoots.get_opt("mover").await.map_err(|e| e.to_string())? {
                None => Ok(()),
                Some(shoot) => Err(format!("{:?}", shoot.status.and_then(|s| s.last_operation))),
            }
        }
    })
    .await;
    stop.cancel();
    (created, migrated, deleting.elapsed())
}
