//! End-to-end tests of the smaller shoot helpers in a sandbox garden: `shoot-retry` (rate-limited
//! failures annotated for retry after the retry period) and `shoot-quota` (expiration
//! annotation from the smallest quota lifetime, deletion once expired).

use seedlet_testkit::shoot_lifecycle;

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::api::PostParams;
use kube::{Api, ResourceExt};
use seedlet_api::core::{CredentialsBinding, Quota, SecretBinding, Shoot};
use seedlet_garden::controllers::entry::run_alone;
use seedlet_garden::controllers::{shoot_quota, shoot_retry};
use seedlet_runtime::clock::{Clock, FakeClock};
use shoot_lifecycle::{NAMESPACE, create_shoot, patch_status, shoots, wait_shoot};
use tokio_util::sync::CancellationToken;

fn operation_annotation(shoot: &Shoot) -> Option<String> {
    shoot.annotations().get("gardener.cloud/operation").cloned()
}

fn failed_status(shoot: &Shoot, failed_at: Timestamp, code: &str) -> serde_json::Value {
    serde_json::json!({
        "observedGeneration": shoot.metadata.generation,
        "lastOperation": shoot_lifecycle::last_operation("Reconcile", "Failed", failed_at),
        "lastErrors": [{"description": "provider said no", "codes": [code]}],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limited_shoots_are_retried_after_the_retry_period() {
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    let start: Timestamp = "2025-01-06T10:09:58Z".parse().expect("time");
    let due = create_shoot(&client, "due", serde_json::json!({})).await;
    let failed_at = |value: &str| value.parse::<Timestamp>().expect("time");
    patch_status(
        &client,
        "due",
        failed_status(
            &due,
            failed_at("2025-01-06T09:50:00Z"),
            "ERR_INFRA_RATE_LIMITS_EXCEEDED",
        ),
    )
    .await;
    let quota = create_shoot(&client, "quota", serde_json::json!({})).await;
    patch_status(
        &client,
        "quota",
        failed_status(
            &quota,
            failed_at("2025-01-06T09:50:00Z"),
            "ERR_INFRA_QUOTA_EXCEEDED",
        ),
    )
    .await;
    let waiting = create_shoot(&client, "waiting", serde_json::json!({})).await;

    let stop = CancellationToken::new();
    let ctx = Arc::new(shoot_retry::ShootRetry {
        client: client.clone(),
        retry_period: SignedDuration::from_mins(10),
        retry_jitter_period: SignedDuration::from_millis(200),
        clock: Arc::new(shoot_lifecycle::RunningClock::starting_at(start)),
        concurrency: 2,
    });
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));

    let retried = wait_shoot(&client, "due", "due retried", operation_annotation).await;
    assert_eq!(retried, "retry");
    // "waiting" fails now (rate-limited from not failed): retried 10 minutes after 10:00:00,
    // i.e. two seconds after the start of the clock.
    patch_status(
        &client,
        "waiting",
        failed_status(
            &waiting,
            failed_at("2025-01-06T10:00:00Z"),
            "ERR_INFRA_RATE_LIMITS_EXCEEDED",
        ),
    )
    .await;
    let shoot = shoots(&client).get("waiting").await.expect("shoot");
    assert_eq!(
        operation_annotation(&shoot),
        None,
        "not before the retry period"
    );
    let retried = wait_shoot(&client, "waiting", "waiting retried", operation_annotation).await;
    assert_eq!(retried, "retry");
    let shoot = shoots(&client).get("quota").await.expect("shoot");
    assert_eq!(
        operation_annotation(&shoot),
        None,
        "other failures are not retried"
    );

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}

async fn create_quota(client: &kube::Client, name: &str, days: Option<i32>) {
    let mut quota = Quota::new(name, seedlet_api::core::QuotaSpec::default());
    quota.spec.cluster_lifetime_days = days;
    Api::<Quota>::namespaced(client.clone(), NAMESPACE)
        .create(&PostParams::default(), &quota)
        .await
        .expect("create quota");
}

fn binding<K: serde::de::DeserializeOwned>(
    kind: &str,
    api_version: &str,
    name: &str,
    quotas: &[&str],
) -> K {
    serde_json::from_value(serde_json::json!({
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": NAMESPACE},
        "provider": {"type": "local"},
        "quotas": quotas.iter().map(|q| serde_json::json!({"name": q, "namespace": NAMESPACE})).collect::<Vec<_>>(),
    }))
    .expect("binding")
}

fn expiration(shoot: &Shoot) -> Option<String> {
    shoot
        .annotations()
        .get("shoot.gardener.cloud/expiration-timestamp")
        .cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_lifetime_sets_the_expiration_and_deletes_expired_shoots() {
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    create_quota(&client, "two-weeks", Some(14)).await;
    create_quota(&client, "one-week", Some(7)).await;
    create_quota(&client, "unlimited", None).await;
    Api::<SecretBinding>::namespaced(client.clone(), NAMESPACE)
        .create(
            &PostParams::default(),
            &binding(
                "SecretBinding",
                "core.gardener.cloud/v1beta1",
                "long",
                &["two-weeks", "unlimited"],
            ),
        )
        .await
        .expect("secret binding");
    Api::<CredentialsBinding>::namespaced(client.clone(), NAMESPACE)
        .create(
            &PostParams::default(),
            &binding(
                "CredentialsBinding",
                "security.gardener.cloud/v1alpha1",
                "short",
                &["two-weeks", "one-week"],
            ),
        )
        .await
        .expect("credentials binding");
    let long = create_shoot(
        &client,
        "long",
        serde_json::json!({"secretBindingName": "long"}),
    )
    .await;
    create_shoot(
        &client,
        "short",
        serde_json::json!({"credentialsBindingName": "short"}),
    )
    .await;
    let free = create_shoot(&client, "free", serde_json::json!({})).await;
    shoots(&client)
        .patch(
            "free",
            &Default::default(),
            &kube::api::Patch::Merge(serde_json::json!({"metadata": {"annotations": {"shoot.gardener.cloud/expiration-timestamp": "2025-01-01T00:00:00Z"}}})),
        )
        .await
        .expect("annotate");
    assert!(free.metadata.creation_timestamp.is_some());

    // Eight days after the shoots were created: the one-week shoot has expired.
    let created = long.metadata.creation_timestamp.clone().expect("created").0;
    let clock: Arc<dyn Clock> =
        Arc::new(FakeClock::new(created + SignedDuration::from_hours(8 * 24)));
    let stop = CancellationToken::new();
    let ctx = Arc::new(shoot_quota::ShootQuota {
        client: client.clone(),
        sync_period: Duration::from_secs(60),
        clock,
        concurrency: 2,
    });
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));

    let expires = wait_shoot(&client, "long", "long annotated", expiration).await;
    let expected = (created + SignedDuration::from_hours(14 * 24))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    assert_eq!(expires, expected);
    wait_shoot(&client, "free", "free annotation removed", |shoot| {
        expiration(shoot).is_none().then_some(())
    })
    .await;
    seedlet_testkit::wait_until("short deleted", Duration::from_secs(10), || {
        let api = shoots(&client);
        async move { matches!(api.get_opt("short").await, Ok(None)) }
    })
    .await;
    assert!(
        shoots(&client)
            .get_opt("long")
            .await
            .expect("get")
            .is_some()
    );

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}

fn ready_seed(version: &str) -> serde_json::Value {
    serde_json::json!({
        "gardener": {"id": "a", "name": "gardenlet", "version": version},
        "observedGeneration": 1,
        "conditions": [
            shoot_lifecycle::condition("GardenletReady", "True"),
            shoot_lifecycle::condition("SeedSystemComponentsHealthy", "True"),
        ],
    })
}

fn ready_for_migration(shoot: &Shoot) -> Option<(String, String, String)> {
    let status = shoot.status.as_ref()?;
    let constraint = seedlet_api::conditions::find(&status.constraints, "ReadyForMigration")?;
    Some((
        constraint.status.to_string(),
        constraint.reason.clone(),
        constraint.message.clone(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_for_migration_reports_the_destination_seed_and_goes_when_migration_ends() {
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    shoot_lifecycle::create_seed(&client, "source", ready_seed("1.0")).await;
    shoot_lifecycle::create_seed(&client, "ready", ready_seed("1.0")).await;
    shoot_lifecycle::create_seed(&client, "newer", ready_seed("2.0")).await;
    for (name, destination) in [
        ("to-ready", "ready"),
        ("to-newer", "newer"),
        ("settled", "source"),
    ] {
        create_shoot(&client, name, serde_json::json!({"seedName": destination})).await;
        patch_status(&client, name, serde_json::json!({"seedName": "source"})).await;
    }
    // A constraint left over from an earlier migration.
    patch_status(
        &client,
        "settled",
        serde_json::json!({"constraints": [shoot_lifecycle::condition("ReadyForMigration", "True")]}),
    )
    .await;

    let stop = CancellationToken::new();
    let ctx = Arc::new(
        seedlet_garden::controllers::shoot_migration::ShootMigration {
            client: client.clone(),
            clock: Arc::new(seedlet_runtime::clock::SystemClock),
            concurrency: 2,
        },
    );
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));

    let ready = wait_shoot(
        &client,
        "to-ready",
        "to-ready constraint",
        ready_for_migration,
    )
    .await;
    assert_eq!(
        ready,
        (
            "True".to_owned(),
            "DestinationSeedReady".to_owned(),
            "Destination seed cluster is ready for the shoot migration".to_owned()
        )
    );
    let newer = wait_shoot(
        &client,
        "to-newer",
        "to-newer constraint",
        ready_for_migration,
    )
    .await;
    assert_eq!(
        newer,
        (
            "False".to_owned(),
            "DestinationSeedUnready".to_owned(),
            "observing Gardener version not up to date (2.0/1.0)".to_owned()
        )
    );
    wait_shoot(&client, "settled", "settled constraint removed", |shoot| {
        ready_for_migration(shoot).is_none().then_some(())
    })
    .await;
    // The migration of "to-ready" ends: the constraint goes.
    patch_status(
        &client,
        "to-ready",
        serde_json::json!({"seedName": "ready"}),
    )
    .await;
    wait_shoot(
        &client,
        "to-ready",
        "to-ready constraint removed",
        |shoot| ready_for_migration(shoot).is_none().then_some(()),
    )
    .await;

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}

fn condition_types(shoot: &Shoot) -> Vec<String> {
    shoot
        .status
        .as_ref()
        .map(|status| {
            status
                .conditions
                .iter()
                .map(|c| format!("{}={}", c.type_, c.status))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managed_seed_conditions_are_merged_into_their_shoot() {
    use seedlet_api::seedmanagement::ManagedSeed;
    let garden = shoot_lifecycle::garden().await;
    let client = garden.client();
    shoot_lifecycle::create_shoot_in(&client, "garden", "infra", serde_json::json!({})).await;
    let infra: Api<Shoot> = Api::namespaced(client.clone(), "garden");
    infra
        .patch_status(
            "infra",
            &Default::default(),
            &kube::api::Patch::Merge(serde_json::json!({"status": {"conditions": [
                shoot_lifecycle::condition("APIServerAvailable", "True"),
            ]}})),
        )
        .await
        .expect("shoot status");
    shoot_lifecycle::create_seed(
        &client,
        "infra",
        serde_json::json!({"conditions": [shoot_lifecycle::condition("GardenletReady", "True")]}),
    )
    .await;
    let managed_seeds: Api<ManagedSeed> = Api::namespaced(client.clone(), "garden");
    let managed_seed: ManagedSeed = serde_json::from_value(serde_json::json!({
        "apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "ManagedSeed",
        "metadata": {"name": "infra", "namespace": "garden"},
        "spec": {"shoot": {"name": "infra"}},
    }))
    .expect("managed seed");
    managed_seeds
        .create(&PostParams::default(), &managed_seed)
        .await
        .expect("create managed seed");

    let stop = CancellationToken::new();
    let ctx = Arc::new(
        seedlet_garden::controllers::shoot_conditions::ShootConditions {
            client: client.clone(),
            concurrency: 2,
        },
    );
    let controller = tokio::spawn(run_alone(ctx, client.clone(), stop.clone()));
    let wait_types = |expected: Vec<&'static str>| {
        let infra = infra.clone();
        async move {
            seedlet_testkit::wait_until("shoot conditions", Duration::from_secs(10), || {
                let infra = infra.clone();
                let expected = expected.clone();
                async move {
                    infra
                        .get("infra")
                        .await
                        .is_ok_and(|shoot| condition_types(&shoot) == expected)
                }
            })
            .await;
        }
    };
    wait_types(vec!["APIServerAvailable=True", "GardenletReady=True"]).await;

    // A change of the Seed's conditions reaches the Shoot.
    shoot_lifecycle::patch_seed_status(
        &client,
        "infra",
        serde_json::json!({"conditions": [
            shoot_lifecycle::condition("GardenletReady", "True"),
            shoot_lifecycle::condition("SeedSystemComponentsHealthy", "False"),
        ]}),
    )
    .await;
    wait_types(vec![
        "APIServerAvailable=True",
        "GardenletReady=True",
        "SeedSystemComponentsHealthy=False",
    ])
    .await;

    // No longer a managed seed: the seed's conditions go.
    managed_seeds
        .delete("infra", &Default::default())
        .await
        .expect("delete managed seed");
    wait_types(vec!["APIServerAvailable=True"]).await;

    stop.cancel();
    controller.await.expect("controller stops");
    garden.shutdown().await;
}
