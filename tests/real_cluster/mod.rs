//! The real-cluster suite: garden and seeds on real kube-apiserver and kube-controller-manager
//! v1.32 (the binaries in `$SEEDLET_KUBE_ASSETS`, etcd from Debian), the seed authorizer wired
//! both ways, SeedRestriction from the garden chart, each daemon a real process with exactly its
//! chart's RBAC. Without `SEEDLET_KUBE_ASSETS` every test prints that it is skipped and passes
//! (a fresh clone has no binaries); `.ci/run` sets it.
//!
//! Measured numbers are printed as `real-cluster: …` lines (`--nocapture`).

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use seedlet_testkit::realkube::KubeAssets;
use serde_json::{Value, json};

mod care;
mod checks;
mod daemons;
mod discovery;
mod landscape;
mod shoot_flow;
mod shoot_lifecycle;
use crate::registry;

use checks::{create, gardenlet_ready, wait};
use landscape::{AuthorizerWiring, CONVERGE, Garden, NAMESPACE, SeedCluster};

/// Serialises the real-cluster tests: each runs two or three control planes (~400 MiB and a
/// good share of the two cores each), and their timing bounds assume they do not run together.
async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    SERIAL.lock().await
}

/// Seed `name`'s spec; its backup credentials are named by `backup` (`secretRef` or
/// `credentialsRef`).
fn seed_spec(backup: Value) -> Value {
    json!({
        "provider": {"type": "local", "region": "local", "zones": ["a"]},
        "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16", "nodes": "10.3.0.0/16"},
        "backup": backup,
    })
}

/// The backup Secret of seed `seed` in the garden.
async fn backup_secret(garden: &kube::Client, seed: &str) {
    create::<Secret>(
        Api::namespaced(garden.clone(), NAMESPACE),
        json!({"metadata": {"name": format!("backup-{seed}")}, "data": {"key": "c2VjcmV0"}}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_garden_with_structured_authorization_runs_two_seeds_end_to_end() {
    let Some(assets) = KubeAssets::or_skip("real_cluster::structured") else {
        return;
    };
    let _serial = one_at_a_time().await;
    seedlet_testkit::init_test_logging();
    let started = Instant::now();
    let mut garden = Garden::start(&assets, AuthorizerWiring::Structured).await;
    let admin = garden.admin.clone();
    println!(
        "real-cluster: garden control plane ready {:?} after kube-apiserver start, landscape prepared after {:?}",
        garden.plane.apiserver_ready_after,
        started.elapsed()
    );
    backup_secret(&admin, "seed-a").await;
    backup_secret(&admin, "seed-b").await;

    // Bootstrap from the token alone: CSR, certificate, Seed, Lease, GardenletReady.
    let bootstrap = Instant::now();
    let seed_a = SeedCluster::start(
        &assets,
        &garden,
        "seed-a",
        seed_spec(json!({"provider": "local", "region": "local",
            "secretRef": {"name": "backup-seed-a", "namespace": NAMESPACE}})),
    )
    .await;
    let agent_started = Instant::now();
    wait(
        "seed-a GardenletReady",
        CONVERGE,
        &[&seed_a.agent, &garden.controller],
        || gardenlet_ready(&admin, "seed-a"),
    )
    .await;
    println!(
        "real-cluster: seed-a bootstrap token → GardenletReady {:?} after the agent started ({:?} with its control plane)",
        agent_started.elapsed(),
        bootstrap.elapsed()
    );
    checks::bootstrap_consumed(&admin, &seed_a).await;

    // A second seed; each reaches its own objects and not the other's.
    let mut seed_b = SeedCluster::start(
        &assets,
        &garden,
        "seed-b",
        seed_spec(json!({"provider": "local", "region": "local",
            "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "backup-seed-b", "namespace": NAMESPACE}})),
    )
    .await;
    wait(
        "seed-b GardenletReady",
        CONVERGE,
        &[&seed_b.agent, &garden.controller],
        || gardenlet_ready(&admin, "seed-b"),
    )
    .await;
    checks::seeds_reach_only_their_own(&garden, &seed_a, &seed_b).await;

    // Extensions: v1 rawChart, v1beta1 providerConfig and v1 OCI → ManagedResource applied →
    // conditions. The OCI chart comes from a real distribution registry (Debian's
    // docker-registry; .ci/run installs it) with basic auth.
    let binary = registry::binary().expect("docker-registry is installed (.ci/run does it)");
    let oci =
        registry::Registry::start(&binary, Some(&registry::htpasswd_line("puller", "s3cret")))
            .await;
    let took = checks::extensions_install(&garden, &seed_a, &oci).await;
    println!(
        "real-cluster: three extension registrations (v1 rawChart, v1beta1 providerConfig, v1 OCI) → installations Installed+Healthy in {took:?}"
    );

    // Network policies: gardenlet's egress policies, the API server's from the real Endpoints.
    checks::network_policies(&seed_a).await;

    // A Shoot: Cluster, namespace, ShootState (the other seed: 403), a Bastion; deleted:
    // everything gone in seed and garden.
    let (created, deleted) = shoot_lifecycle::shoot_lifecycle(&admin, &seed_a, &seed_b).await;
    println!(
        "real-cluster: Shoot → Cluster+namespace in {created:?}; deletion → Bastion, Cluster, namespace, ShootState and Shoot gone in {deleted:?}"
    );

    // The Shoot controller's flows against the real seed, the simulated provider in-process.
    let (created, deleted) = shoot_flow::create_and_delete(&admin, &seed_a).await;
    println!(
        "real-cluster: Shoot with a worker pool → Create Succeeded 100 % in {created:?}; delete flow → Shoot and namespace gone in {deleted:?}"
    );
    let (created, migrated, deleted) = shoot_flow::migrate(&admin, &seed_a, &seed_b).await;
    println!(
        "real-cluster: Shoot migration seed-a → seed-b: Create Succeeded in {created:?}; spec.seedName moved → Restore Succeeded 100 % on seed-b in {migrated:?}; deleted there in {deleted:?}"
    );

    // Backups: a Seed's bucket with secretRef (seed-a) and credentialsRef (seed-b) reaches the
    // seed's extension BackupBucket with the credentials copied.
    for seed in [&seed_a, &seed_b] {
        checks::backup_bucket_reaches_the_seed(&admin, seed).await;
    }

    // renew: a new certificate in place, annotation removed.
    let took = checks::renew(&admin, &seed_a).await;
    println!("real-cluster: renew annotation → new certificate stored in {took:?}");

    // Garden API server down: the Lease is renewed again after it returns.
    let outage = Instant::now();
    garden.plane.restart_apiserver(Duration::from_secs(5)).await;
    let back = Instant::now();
    let since = jiff::Timestamp::now();
    wait(
        "Lease renewed after the garden outage",
        CONVERGE,
        &[&seed_a.agent],
        || checks::renewed_after(&admin, "seed-a", since),
    )
    .await;
    println!(
        "real-cluster: garden kube-apiserver down {:?}: seed-a Lease renewed {:?} after /readyz",
        back - outage,
        back.elapsed()
    );

    // kill -9: the stored certificate is reused, no new CSR.
    let took = checks::agent_killed(&admin, &mut seed_b).await;
    println!("real-cluster: agent SIGKILLed and restarted → Lease renewed in {took:?}, no new CSR");

    // Steady state: no WARN or ERROR line repeats in either daemon's log.
    checks::steady_state(&garden, &[&seed_a, &seed_b], Duration::from_secs(60)).await;

    let Garden { mut controller, .. } = garden;
    controller.stop().await;
    println!(
        "real-cluster: structured suite took {:?}",
        started.elapsed()
    );
    drop((seed_a, seed_b));
}

/// The legacy flags (`--authorization-mode=RBAC,Webhook`): every request RBAC does not cover
/// reaches the webhook, including the SubjectAccessReviews the webhook itself sends. A non-seed
/// request is answered at once (no opinion → 403 from kube-apiserver) and a seed bootstraps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_garden_with_the_legacy_authorization_flags_answers_without_deadlock() {
    let Some(assets) = KubeAssets::or_skip("real_cluster::legacy") else {
        return;
    };
    let _serial = one_at_a_time().await;
    seedlet_testkit::init_test_logging();
    let garden = Garden::start(&assets, AuthorizerWiring::LegacyFlags).await;
    let admin = garden.admin.clone();
    backup_secret(&admin, "seed-a").await;
    let seed_a = SeedCluster::start(
        &assets,
        &garden,
        "seed-a",
        seed_spec(json!({"provider": "local", "region": "local",
            "secretRef": {"name": "backup-seed-a", "namespace": NAMESPACE}})),
    )
    .await;
    let took = wait(
        "seed-a GardenletReady",
        CONVERGE,
        &[&seed_a.agent, &garden.controller],
        || gardenlet_ready(&admin, "seed-a"),
    )
    .await;
    println!("real-cluster (legacy flags): bootstrap token → GardenletReady in {took:?}");

    // A user RBAC knows nothing about: the webhook has no opinion, kube-apiserver answers 403
    // without waiting for a timeout.
    let stranger = seedlet_testkit::realkube::client_from(
        garden.plane.certificate_kubeconfig("stranger", None),
    )
    .await;
    let mut slowest = Duration::ZERO;
    for _ in 0..5 {
        let asked = Instant::now();
        let answer = Api::<Secret>::namespaced(stranger.clone(), "kube-system")
            .get("x")
            .await;
        slowest = slowest.max(asked.elapsed());
        assert!(checks::forbidden(answer), "a stranger is refused");
    }
    assert!(slowest < Duration::from_secs(2), "refused in {slowest:?}");
    println!(
        "real-cluster (legacy flags): a non-seed request RBAC does not cover refused in ≤ {slowest:?}"
    );
    // A client certificate another CA signed completes the TLS handshake and is answered 401
    // (the sandbox does the same; the agent's re-bootstrap on a refused credential relies on it).
    let foreign = seedlet_testkit::realkube::client_from(
        garden
            .plane
            .foreign_certificate_kubeconfig("gardener.cloud:system:seed:seed-a"),
    )
    .await;
    let answer = Api::<Secret>::namespaced(foreign, "kube-system")
        .get("x")
        .await;
    assert!(
        matches!(&answer, Err(kube::Error::Api(status)) if status.code == 401),
        "a certificate from another CA is answered 401, got {answer:?}"
    );
    checks::bootstrap_consumed(&admin, &seed_a).await;
    checks::steady_state(&garden, &[&seed_a], Duration::from_secs(20)).await;
}
