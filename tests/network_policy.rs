//! End-to-end test of the agent's NetworkPolicy controller (spec §4.3): the six policies in the
//! seed's `garden` namespace and in a shoot namespace, API server endpoint changes, a hand-deleted
//! policy, a shoot network change through the Cluster, and the role label removed; further
//! namespaces by `additionalNamespaceSelectors`, and the hostname resolver of the API server.

use seedlet_testkit as common;

use common::{Clusters, wait_for, wait_until};
use k8s_openapi::api::core::v1::{Endpoints, Namespace};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use seedlet_api::core::Shoot;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use seedlet_testkit::shoot_state as support;

use support::{CONTROL_PLANE, PROJECT_NAMESPACE, TIMEOUT, garden_with_shoot};

const POLICIES: [&str; 6] = [
    "deny-all",
    "allow-to-runtime-apiserver",
    "allow-to-public-networks",
    "allow-to-private-networks",
    "allow-to-blocked-cidrs",
    "allow-to-dns",
];

async fn names(api: &Api<NetworkPolicy>) -> Vec<String> {
    let mut names: Vec<String> = api
        .list(&Default::default())
        .await
        .expect("policy")
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    names.sort();
    names
}

fn sorted(list: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
    out.sort();
    out
}

fn spec(policy: &NetworkPolicy) -> Value {
    serde_json::to_value(policy.spec.as_ref().expect("policy")).expect("policy")
}

/// The port of the seed sandbox's endpoint.
fn seed_port(clusters: &Clusters) -> i64 {
    clusters
        .seed
        .endpoint()
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("seed port")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_policies_follow_namespaces_endpoints_and_shoot_networks() {
    let clusters = Clusters::start(false).await;
    let (garden, seed) = (clusters.garden.client(), clusters.seed.client());
    let port = seed_port(&clusters);
    let shutdown = CancellationToken::new();
    let agent = common::start_agent(&clusters, shutdown.clone()).await;

    // The seed's garden namespace gets all six.
    let in_garden: Api<NetworkPolicy> = Api::namespaced(seed.clone(), "garden");
    wait_until("six policies in garden", TIMEOUT, || async {
        names(&in_garden).await == sorted(&POLICIES)
    })
    .await;
    let api_server = in_garden.get("allow-to-runtime-apiserver").await.unwrap();
    // From the endpoints default/kubernetes the seed's API server keeps: its own address.
    assert_eq!(
        spec(&api_server)["egress"],
        json!([{"to": [{"ipBlock": {"cidr": "127.0.0.1/32"}}], "ports": [{"port": port, "protocol": "TCP"}]}])
    );
    assert!(
        api_server
            .metadata
            .annotations
            .unwrap()
            .contains_key("gardener.cloud/description")
    );
    let dns = in_garden.get("allow-to-dns").await.unwrap();
    assert_eq!(
        spec(&dns)["egress"][0]["to"][4],
        json!({"ipBlock": {"cidr": "10.2.0.10/32"}})
    );

    // 1: a new shoot namespace (made by the Cluster sync, role shoot) gets the six as well.
    garden_with_shoot(&garden, "foo", json!({})).await;
    let in_shoot: Api<NetworkPolicy> = Api::namespaced(seed.clone(), CONTROL_PLANE);
    wait_until("six policies in the shoot namespace", TIMEOUT, || async {
        names(&in_shoot).await == sorted(&POLICIES)
    })
    .await;

    // 5: the shoot's networks (through its Cluster) become exceptions of the private networks.
    let networking = json!({"spec": {"networking": {"type": "calico", "nodes": "10.180.0.0/16",
        "pods": "100.96.0.0/11", "services": "100.64.0.0/13"}}});
    Api::<Shoot>::namespaced(garden.clone(), PROJECT_NAMESPACE)
        .patch("foo", &PatchParams::default(), &Patch::Merge(&networking))
        .await
        .unwrap();
    wait_until("shoot networks excepted", TIMEOUT, || async {
        let policy = in_shoot.get("allow-to-private-networks").await.unwrap();
        let to = &spec(&policy)["egress"][0]["to"];
        to[0]["ipBlock"]["except"]
            .as_array()
            .is_some_and(|list| list.contains(&json!("10.180.0.0/16")))
            && to[3]["ipBlock"]["except"] == json!(["100.96.0.0/11", "100.64.0.0/13"])
    })
    .await;
    // The garden namespace is not a shoot namespace: no shoot networks there.
    let private = in_garden.get("allow-to-private-networks").await.unwrap();
    assert!(
        spec(&private)["egress"][0]["to"][3]["ipBlock"]
            .get("except")
            .is_none()
    );

    // 2: an endpoint change updates every matching namespace.
    let endpoints: Api<Endpoints> = Api::namespaced(seed.clone(), "default");
    let patch = json!({"subsets": [{"addresses": [{"ip": "127.0.0.1"}, {"ip": "127.0.0.2"}],
        "ports": [{"name": "https", "port": 443, "protocol": "TCP"}]}]});
    endpoints
        .patch("kubernetes", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    for api in [&in_garden, &in_shoot] {
        wait_until("endpoints followed", TIMEOUT, || async {
            let policy = api.get("allow-to-runtime-apiserver").await.unwrap();
            spec(&policy)["egress"][0]["to"]
                == json!([{"ipBlock": {"cidr": "127.0.0.1/32"}}, {"ipBlock": {"cidr": "127.0.0.2/32"}}])
        })
        .await;
    }

    // 3: a hand-deleted policy comes back.
    in_garden
        .delete("deny-all", &DeleteParams::default())
        .await
        .unwrap();
    wait_for("deny-all recreated", TIMEOUT, || async {
        in_garden.get_opt("deny-all").await.unwrap()
    })
    .await;

    // 1: the role label removed → all six deleted.
    let unlabel = json!({"metadata": {"labels": {"gardener.cloud/role": null}}});
    Api::<Namespace>::all(seed.clone())
        .patch(
            CONTROL_PLANE,
            &PatchParams::default(),
            &Patch::Merge(&unlabel),
        )
        .await
        .unwrap();
    wait_until("policies removed", TIMEOUT, || async {
        names(&in_shoot).await.is_empty()
    })
    .await;

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}

/// `controllers.networkPolicy.additionalNamespaceSelectors`: a namespace matching one gets all six
/// policies although it has no role; once it stops matching they are deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn additional_namespace_selectors_add_namespaces_to_every_policy() {
    let clusters = Clusters::start(false).await;
    let seed = clusters.seed.client();
    let shutdown = CancellationToken::new();
    let agent = common::start_agent_with(&clusters, shutdown.clone(), |config| {
        config.controllers.network_policy =
            Some(seedlet_config::gardenlet::NetworkPolicyController {
                concurrent_syncs: Some(2),
                additional_namespace_selectors: Some(vec![json!({
                    "matchLabels": {"team": "a"},
                    "matchExpressions": [{"key": "stage", "operator": "NotIn", "values": ["dev"]}],
                })]),
            });
    })
    .await;
    let namespaces: Api<Namespace> = Api::all(seed.clone());
    for (name, labels) in [
        ("team-a", json!({"team": "a"})),
        ("team-a-dev", json!({"team": "a", "stage": "dev"})),
    ] {
        let namespace: Namespace = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels}
        }))
        .unwrap();
        namespaces
            .create(&Default::default(), &namespace)
            .await
            .unwrap();
    }
    let team_a: Api<NetworkPolicy> = Api::namespaced(seed.clone(), "team-a");
    wait_until("six policies in team-a", TIMEOUT, || async {
        names(&team_a).await == sorted(&POLICIES)
    })
    .await;
    // The garden namespace has been reconciled as well by now; the excluded stage has none.
    let in_garden: Api<NetworkPolicy> = Api::namespaced(seed.clone(), "garden");
    wait_until("six policies in garden", TIMEOUT, || async {
        names(&in_garden).await == sorted(&POLICIES)
    })
    .await;
    let dev: Api<NetworkPolicy> = Api::namespaced(seed.clone(), "team-a-dev");
    assert!(names(&dev).await.is_empty());

    namespaces
        .patch(
            "team-a",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"stage": "dev"}}})),
        )
        .await
        .unwrap();
    wait_until("policies gone from team-a", TIMEOUT, || async {
        names(&team_a).await.is_empty()
    })
    .await;

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}

/// The hostname resolver: with the seed API server reached as `localhost`, the policy
/// `allow-to-runtime-apiserver` gets one more rule with the host's addresses and the URL's port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_api_server_host_name_is_resolved_into_the_api_server_policy() {
    let clusters = Clusters::start(false).await;
    let seed = clusters.seed.client();
    let port = seed_port(&clusters);
    let shutdown = CancellationToken::new();
    let agent = common::start_agent_from(
        common::agent_config(common::AGENT_CONFIG),
        seed.clone(),
        Some(clusters.garden.client()),
        shutdown.clone(),
        |settings| settings.seed_server = Some(format!("https://localhost:{port}")),
    )
    .await;
    let expected: Vec<String> = tokio::net::lookup_host(("localhost", 443))
        .await
        .expect("localhost resolves")
        .map(|address| match address.ip() {
            std::net::IpAddr::V4(ip) => format!("{ip}/32"),
            std::net::IpAddr::V6(ip) => format!("{ip}/128"),
        })
        .collect();
    let in_garden: Api<NetworkPolicy> = Api::namespaced(seed.clone(), "garden");
    let rules = wait_for("resolved rule", TIMEOUT, || async {
        let policy = in_garden
            .get_opt("allow-to-runtime-apiserver")
            .await
            .ok()??;
        let egress = spec(&policy)["egress"].clone();
        (egress.as_array().map(Vec::len) == Some(2)).then_some(egress)
    })
    .await;
    assert_eq!(
        rules[0],
        json!({"to": [{"ipBlock": {"cidr": "127.0.0.1/32"}}], "ports": [{"port": port, "protocol": "TCP"}]})
    );
    assert_eq!(
        rules[1]["ports"],
        json!([{"port": port, "protocol": "TCP"}])
    );
    let mut resolved: Vec<String> = rules[1]["to"]
        .as_array()
        .expect("to")
        .iter()
        .filter_map(|peer| peer["ipBlock"]["cidr"].as_str().map(str::to_owned))
        .collect();
    resolved.sort();
    let mut expected = expected;
    expected.sort();
    expected.dedup();
    assert_eq!(resolved, expected);

    shutdown.cancel();
    agent.wait().await.unwrap();
    clusters.shutdown().await;
}
