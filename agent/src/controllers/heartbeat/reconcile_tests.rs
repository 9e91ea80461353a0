//! Heartbeat tests against in-process garden and seed sandboxes: [`beat`] is called directly with
//! a plain [`Ctx`] and the Lease and the Seed's `GardenletReady` are read back.

use jiff::SignedDuration;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use seedlet_api::core::Seed;
use seedlet_bootstrap::GardenClient;
use seedlet_runtime::clock::Clock;
use seedlet_runtime::controller::Reason;

use super::reconcile::beat;
use super::{Ctx, Error, Settings};
use crate::testing::{Env, SEED, ensure_namespace};

fn ctx(env: &Env) -> Ctx {
    Ctx {
        seed_name: SEED.to_owned(),
        seed: env.seed.clone(),
        garden: GardenClient::new(env.garden.clone(), None),
        settings: Settings::default(),
        clock: env.clock(),
    }
}

async fn lease(env: &Env) -> Lease {
    Api::<Lease>::namespaced(env.garden.clone(), "gardener-system-seed-lease")
        .get(SEED)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_beat_renews_the_lease_and_sets_gardenlet_ready_once() {
    let env = Env::start().await;
    ensure_namespace(&env.garden, "gardener-system-seed-lease").await;
    let seed: Seed = crate::testing::seed(&env.garden).await;
    let ctx = ctx(&env);

    let first = beat(&ctx).await.unwrap();
    assert!(first.condition_written);
    assert_eq!(first.renewed_at, env.clock.now());
    let renewed = lease(&env).await;
    let spec = renewed.spec.clone().unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some(SEED));
    assert_eq!(spec.renew_time.map(|t| t.0), Some(env.clock.now()));
    assert_eq!(spec.lease_duration_seconds, Some(2));
    let owner = &renewed.metadata.owner_references.unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("Seed", seed.metadata.uid.as_deref().unwrap())
    );
    let stored = Api::<Seed>::all(env.garden.clone())
        .get(SEED)
        .await
        .unwrap();
    let ready = seedlet_api::conditions::find(stored.conditions(), "GardenletReady").unwrap();
    assert_eq!(ready.status.to_string(), "True");

    // Later: the Lease moves on, the unchanged condition is not rewritten.
    env.clock.advance(SignedDuration::from_secs(2));
    let second = beat(&ctx).await.unwrap();
    assert!(!second.condition_written);
    assert_eq!(
        lease(&env).await.spec.unwrap().renew_time.map(|t| t.0),
        Some(env.clock.now())
    );
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_seed_fails_without_touching_health_or_the_lease() {
    let env = Env::start().await;
    ensure_namespace(&env.garden, "gardener-system-seed-lease").await;
    let error = beat(&ctx(&env)).await.unwrap_err();
    assert!(matches!(error, Error::SeedNotFound { .. }), "{error}");
    assert_eq!(error.reason(), "SeedNotFound");
    assert!(!error.affects_health());
    assert!(
        Api::<Lease>::namespaced(env.garden.clone(), "gardener-system-seed-lease")
            .get_opt(SEED)
            .await
            .unwrap()
            .is_none()
    );
    env.shutdown().await;
}
