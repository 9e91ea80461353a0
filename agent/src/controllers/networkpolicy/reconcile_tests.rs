//! Reconcile tests against an in-process seed sandbox: [`reconcile`] is called directly on real
//! namespaces and the written NetworkPolicies are read back.

use std::net::IpAddr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Endpoints, Namespace};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::NetworkPolicies;
use crate::testing::{Env, FIELD_MANAGER, create};
use seedlet_runtime::controller::{Reason as _, Reconciler as _};

fn ctx(env: &Env, networks: Value, resolved: Option<(u16, Vec<IpAddr>)>) -> Arc<NetworkPolicies> {
    Arc::new(NetworkPolicies {
        field_manager: FIELD_MANAGER,
        concurrency: 1,
        seed: env.seed.clone(),
        inputs: super::reconcile::seed_inputs(&json!({ "networks": networks })),
        additional_selectors: Vec::new(),
        resolved: resolved.map(|(port, addresses)| (port, watch::channel(addresses).1)),
    })
}

fn networks() -> Value {
    json!({"pods": "10.1.0.0/16", "services": "10.2.0.0/16", "nodes": "10.3.0.0/16"})
}

/// `default/kubernetes` pointing at `ip:6443`, as the seed's API server publishes it (the
/// sandbox publishes its own address there, like kube-apiserver; the tests take it over).
async fn endpoints(env: &Env, ip: &str) {
    crate::testing::ensure_namespace(&env.seed, "default").await;
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints",
           "metadata": {"name": "kubernetes", "namespace": "default"},
           "subsets": [{"addresses": [{"ip": ip}],
                        "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]});
    Api::<Endpoints>::namespaced(env.seed.clone(), "default")
        .patch(
            "kubernetes",
            &PatchParams::apply("networkpolicy-test").force(),
            &Patch::Apply(&endpoints),
        )
        .await
        .expect("default/kubernetes taken over");
}

/// Removes the `default/kubernetes` Endpoints the sandbox publishes.
async fn no_endpoints(env: &Env) {
    match Api::<Endpoints>::namespaced(env.seed.clone(), "default")
        .delete("kubernetes", &Default::default())
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => {}
        Err(error) => panic!("delete default/kubernetes: {error}"),
    }
}

async fn namespace(env: &Env, name: &str) -> Arc<Namespace> {
    Arc::new(
        Api::<Namespace>::all(env.seed.clone())
            .get(name)
            .await
            .unwrap(),
    )
}

async fn policy_names(env: &Env, namespace: &str) -> Vec<String> {
    let mut names: Vec<String> = Api::<NetworkPolicy>::namespaced(env.seed.clone(), namespace)
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    names.sort();
    names
}

fn egress(policy: &NetworkPolicy) -> Value {
    serde_json::to_value(policy.spec.as_ref().expect("spec"))
        .unwrap()
        .get("egress")
        .cloned()
        .unwrap_or_default()
}

const ALL: [&str; 6] = [
    "allow-to-blocked-cidrs",
    "allow-to-dns",
    "allow-to-private-networks",
    "allow-to-public-networks",
    "allow-to-runtime-apiserver",
    "deny-all",
];

#[tokio::test]
async fn the_garden_namespace_gets_all_six_policies_and_manual_edits_are_reverted() {
    let env = Env::start().await;
    endpoints(&env, "10.0.0.1").await;
    let ctx = ctx(&env, networks(), None);

    ctx.clone()
        .reconcile(namespace(&env, "garden").await)
        .await
        .unwrap();
    assert_eq!(policy_names(&env, "garden").await, ALL);
    let policies = Api::<NetworkPolicy>::namespaced(env.seed.clone(), "garden");
    let api_server = policies.get("allow-to-runtime-apiserver").await.unwrap();
    assert_eq!(
        egress(&api_server),
        json!([{"to": [{"ipBlock": {"cidr": "10.0.0.1/32"}}],
                "ports": [{"port": 6443, "protocol": "TCP"}]}])
    );
    assert!(
        api_server
            .annotations()
            .contains_key("gardener.cloud/description")
    );

    // A hand-edited policy is written back on the next pass.
    let edit = json!({"spec": {"egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}]}});
    policies
        .patch(
            "allow-to-runtime-apiserver",
            &PatchParams::default(),
            &Patch::Merge(&edit),
        )
        .await
        .unwrap();
    ctx.reconcile(namespace(&env, "garden").await)
        .await
        .unwrap();
    let restored = policies.get("allow-to-runtime-apiserver").await.unwrap();
    assert_eq!(egress(&restored), egress(&api_server));
    env.shutdown().await;
}

#[tokio::test]
async fn a_namespace_losing_its_role_loses_the_policies() {
    let env = Env::start().await;
    endpoints(&env, "10.0.0.1").await;
    let ctx = ctx(&env, networks(), None);
    let _: Namespace = create(
        &env.seed,
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": "extension-a", "labels": {"gardener.cloud/role": "extension"}}}),
    )
    .await;

    ctx.clone()
        .reconcile(namespace(&env, "extension-a").await)
        .await
        .unwrap();
    let with_role = policy_names(&env, "extension-a").await;
    assert!(with_role.contains(&"deny-all".to_owned()), "{with_role:?}");
    assert!(
        with_role.contains(&"allow-to-runtime-apiserver".to_owned()),
        "{with_role:?}"
    );

    let unlabel = json!({"metadata": {"labels": {"gardener.cloud/role": null}}});
    Api::<Namespace>::all(env.seed.clone())
        .patch(
            "extension-a",
            &PatchParams::default(),
            &Patch::Merge(&unlabel),
        )
        .await
        .unwrap();
    ctx.reconcile(namespace(&env, "extension-a").await)
        .await
        .unwrap();
    assert!(policy_names(&env, "extension-a").await.is_empty());
    env.shutdown().await;
}

#[tokio::test]
async fn a_resolved_api_server_host_adds_its_addresses_to_the_api_server_policy() {
    let env = Env::start().await;
    endpoints(&env, "10.0.0.1").await;
    let resolved: IpAddr = "192.0.2.7".parse().unwrap();
    let ctx = ctx(&env, networks(), Some((443, vec![resolved])));

    ctx.reconcile(namespace(&env, "garden").await)
        .await
        .unwrap();
    let api_server = Api::<NetworkPolicy>::namespaced(env.seed.clone(), "garden")
        .get("allow-to-runtime-apiserver")
        .await
        .unwrap();
    assert_eq!(
        egress(&api_server),
        json!([{"to": [{"ipBlock": {"cidr": "10.0.0.1/32"}}],
                "ports": [{"port": 6443, "protocol": "TCP"}]},
               {"to": [{"ipBlock": {"cidr": "192.0.2.7/32"}}],
                "ports": [{"port": 443, "protocol": "TCP"}]}])
    );
    env.shutdown().await;
}

#[tokio::test]
async fn missing_endpoints_and_invalid_seed_networks_fail_with_their_reasons() {
    let env = Env::start().await;
    no_endpoints(&env).await;
    let error = ctx(&env, networks(), None)
        .reconcile(namespace(&env, "garden").await)
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "EndpointsError");
    assert!(policy_names(&env, "garden").await.is_empty());

    endpoints(&env, "10.0.0.1").await;
    let invalid = json!({"pods": "10.1.0.0/99", "services": "10.2.0.0/16"});
    let error = ctx(&env, invalid, None)
        .reconcile(namespace(&env, "garden").await)
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "SeedNetworksInvalid");
    assert!(error.to_string().contains("pods"), "{error}");
    assert!(policy_names(&env, "garden").await.is_empty());
    env.shutdown().await;
}
