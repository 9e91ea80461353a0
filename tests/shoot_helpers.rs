//! End-to-end tests of the smaller shoot helpers in a sandbox garden: `shoot-retry` (rate-limited
//! failures annotated for retry after the retry period) and `shoot-quota` (expiration
//! annotation from the smallest quota lifetime, deletion once expired).

#[path = "shoot_lifecycle/support.rs"]
mod shoot_lifecycle;

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::api::PostParams;
use kube::{Api, ResourceExt};
use seedlet_api::core::{CredentialsBinding, Quota, SecretBinding, Shoot};
use seedlet_garden::controllers::{shoot_quota, shoot_retry};
use seedlet_runtime::clock::{Clock, FakeClock};
use seedlet_runtime::metrics::Metrics;
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
    let ctx = Arc::new(shoot_retry::Ctx {
        client: client.clone(),
        retry_period: SignedDuration::from_mins(10),
        retry_jitter_period: SignedDuration::from_millis(200),
        clock: Arc::new(shoot_lifecycle::RunningClock::starting_at(start)),
        metrics: Arc::new(Metrics::new("garden")),
    });
    let controller = tokio::spawn(shoot_retry::run(ctx, 2, stop.clone()));

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
    let ctx = Arc::new(shoot_quota::Ctx {
        client: client.clone(),
        sync_period: Duration::from_secs(60),
        clock,
        metrics: Arc::new(Metrics::new("garden")),
    });
    let controller = tokio::spawn(shoot_quota::run(ctx, 2, stop.clone()));

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
