//! Real agents under the seed authorizer: one holding an issued certificate, and two that start
//! from bootstrap tokens alone.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};
use seedlet_api::core::{ControllerInstallation, Seed, ShootState};
use seedlet_sandbox::Sandbox;
use seedlet_testkit as common;
use serde_json::json;

use super::{TIMEOUT, create, forbidden_because, outcome, seed_client, start};

/// An agent holding only seed `a`'s certificate (no `*/*/*` role) registers, renews its lease,
/// syncs its shoot's Cluster and reaches Ready through the authorizer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_works_with_only_the_narrow_rbac() {
    let env = start().await;
    let seed_cluster = Sandbox::builder()
        .name("seed-a")
        .start()
        .await
        .expect("seed");
    common::prepare_seed(&seed_cluster.client()).await;
    let garden_identity = seed_client(&env.garden, "a").await;
    let config = common::agent_config(&common::AGENT_CONFIG.replace("name: local", "name: a"));
    let agent = common::start_agent_from(
        config,
        seed_cluster.client(),
        Some(garden_identity),
        env.shutdown.clone(),
        |_| {},
    )
    .await;
    let seeds: Api<Seed> = Api::all(env.garden.client());
    common::wait_until("seed a ready", Duration::from_secs(30), || async {
        common::condition_of(&seeds, "a", "GardenletReady", |s: &Seed| s.conditions())
            .await
            .is_some_and(|(status, _, _)| status == "True")
    })
    .await;
    let clusters: Api<seedlet_api::extensions::Cluster> = Api::all(seed_cluster.client());
    common::wait_until("cluster of shoot-a", TIMEOUT, || async {
        clusters
            .get_opt("shoot--dev--shoot-a")
            .await
            .ok()
            .flatten()
            .is_some()
    })
    .await;
    drop(agent);
    env.shutdown.cancel();
}

/// The agent configuration of seed `name` that bootstraps from the seed Secret
/// `garden/gardenlet-kubeconfig-bootstrap` and keeps its certificate kubeconfig in
/// `garden/gardenlet-kubeconfig`.
fn bootstrapping_agent_config(name: &str) -> seedlet_config::GardenletConfiguration {
    let connection = format!(
        "gardenClientConnection:\n  bootstrapKubeconfig:\n    name: {}\n    namespace: garden\n  kubeconfigSecret:\n    name: {}\n    namespace: garden\n",
        seedlet_landscape::files::BOOTSTRAP_SECRET,
        seedlet_landscape::files::KUBECONFIG_SECRET,
    );
    common::agent_config(
        &common::AGENT_CONFIG
            .replace(
                "gardenClientConnection:\n  kubeconfig: /nonexistent/garden-kubeconfig\n",
                &connection,
            )
            .replace("name: local", &format!("name: {name}")),
    )
}

/// The garden client an agent built from the certificate kubeconfig it stored in its seed.
async fn stored_garden_client(seed: &kube::Client) -> Client {
    let stored = Api::<Secret>::namespaced(seed.clone(), "garden")
        .get(seedlet_landscape::files::KUBECONFIG_SECRET)
        .await
        .expect("certificate kubeconfig stored in the seed");
    let text = stored
        .data
        .as_ref()
        .and_then(|data| data.get("kubeconfig"))
        .map(|bytes| String::from_utf8(bytes.0.clone()).expect("utf-8 kubeconfig"))
        .expect("kubeconfig key");
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&text).expect("kubeconfig parses");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    Client::try_from(config).expect("client")
}

/// Two seeds start from nothing but a bootstrap token each, as an operator hands them out: both
/// agents get their certificates through CSRs, register and reach `GardenletReady` with only the
/// narrow RBAC (the authorizer and SeedRestriction on), remove their bootstrap tokens from the
/// garden, and each certificate reaches its own seed's objects but not the other's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_agents_bootstrap_from_tokens_with_only_the_narrow_rbac() {
    let env = start().await;
    let admin = env.garden.client();
    let mut seeds = Vec::new();
    for name in ["a", "b"] {
        common::ensure_namespace(&admin, &format!("seed-{name}")).await;
        let token_id = format!("{name}{name}0001");
        let token = format!("{token_id}.0123456789abcdef");
        create::<Secret>(
            Api::namespaced(admin.clone(), "kube-system"),
            json!({
                "metadata": {"name": format!("bootstrap-token-{token_id}")},
                "type": "bootstrap.kubernetes.io/token",
                "stringData": {
                    "token-id": token_id, "token-secret": "0123456789abcdef",
                    "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
                    "description": format!("bootstrap of seed {name}")
                }
            }),
        )
        .await;
        let cluster = Sandbox::builder()
            .name(format!("seed-{name}"))
            .start()
            .await
            .expect("seed");
        common::prepare_seed(&cluster.client()).await;
        let kubeconfig = seedlet_landscape::files::bootstrap_kubeconfig(
            &env.garden.endpoint(),
            &env.garden.ca_cert_pem(),
            &token,
        );
        seedlet_landscape::garden_setup::store_bootstrap_kubeconfig(&cluster.client(), &kubeconfig)
            .await
            .expect("bootstrap kubeconfig stored");
        let agent = common::start_agent_from(
            bootstrapping_agent_config(name),
            cluster.client(),
            None,
            env.shutdown.clone(),
            |settings| settings.bootstrap.retry_interval = Duration::from_millis(500),
        )
        .await;
        seeds.push((name, token_id, cluster, agent));
    }
    let seed_api: Api<Seed> = Api::all(admin.clone());
    let tokens: Api<Secret> = Api::namespaced(admin.clone(), "kube-system");
    for (name, token_id, _, _) in &seeds {
        common::wait_until(
            &format!("seed {name} ready"),
            Duration::from_secs(60),
            || async {
                common::condition_of(&seed_api, name, "GardenletReady", |s: &Seed| s.conditions())
                    .await
                    .is_some_and(|(status, _, _)| status == "True")
            },
        )
        .await;
        common::wait_until(
            &format!("bootstrap token of {name} removed"),
            TIMEOUT,
            || async {
                tokens
                    .get_opt(&format!("bootstrap-token-{token_id}"))
                    .await
                    .expect("read token")
                    .is_none()
            },
        )
        .await;
    }
    for (name, _, cluster, _) in &seeds {
        let other = if *name == "a" { "b" } else { "a" };
        let garden = stored_garden_client(&cluster.client()).await;
        let leases: Api<Lease> = Api::namespaced(garden.clone(), "gardener-system-seed-lease");
        outcome(leases.get(name).await).expect("own lease readable");
        forbidden_because(outcome(leases.get(other).await), "no relationship found");
        let installations: Api<ControllerInstallation> = Api::all(garden.clone());
        outcome(installations.get(&format!("ci-{name}")).await).expect("own installation");
        forbidden_because(
            outcome(installations.get(&format!("ci-{other}")).await),
            "no relationship found",
        );
        let states: Api<ShootState> = Api::namespaced(garden, "garden-dev");
        outcome(states.get(&format!("shoot-{name}")).await).expect("own shoot state");
        forbidden_because(
            outcome(states.get(&format!("shoot-{other}")).await),
            "no relationship found",
        );
    }
    drop(seeds);
    env.shutdown.cancel();
}
