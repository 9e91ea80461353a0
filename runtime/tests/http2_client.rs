//! `seedlet_runtime::client::build` against a sandbox API server: many watches and requests share
//! one HTTP/2 connection (kube's default stack opens one HTTP/1.1 connection per concurrent
//! watch), the watches deliver events, and a server without HTTP/2 is still served.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ListParams, PostParams, WatchEvent, WatchParams};
use kube::config::KubeConfigOptions;
use seedlet_sandbox::{Connections, Sandbox};
use serde_json::json;

const WATCHES: usize = 20;

async fn config(sandbox: &Sandbox) -> kube::Config {
    kube::Config::from_custom_kubeconfig(sandbox.admin_kubeconfig(), &KubeConfigOptions::default())
        .await
        .expect("client configuration")
}

fn opened_since(before: Connections, after: Connections) -> (u64, u64) {
    (after.http2 - before.http2, after.http1 - before.http1)
}

/// Opens `WATCHES` watches on ConfigMaps, creates one ConfigMap, and waits until every watch has
/// seen it; lists in parallel meanwhile.
async fn watch_and_request(client: kube::Client) {
    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    let version = maps
        .list_metadata(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("list resourceVersion");
    let mut watches = Vec::new();
    for _ in 0..WATCHES {
        let stream = maps
            .watch(&WatchParams::default().timeout(60), &version)
            .await
            .expect("watch")
            .boxed();
        watches.push(stream);
    }
    let list_params = ListParams::default();
    let lists = futures::future::try_join_all((0..30).map(|_| maps.list_metadata(&list_params)));
    let post_params = PostParams::default();
    let map: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "seen-by-all"}})).expect("ConfigMap");
    let created = maps.create(&post_params, &map);
    let (lists, created) = tokio::join!(lists, created);
    lists.expect("lists");
    created.expect("create");
    for mut stream in watches {
        let seen = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while let Some(event) = stream.try_next().await.expect("watch event") {
                if let WatchEvent::Added(map) = event
                    && map.metadata.name.as_deref() == Some("seen-by-all")
                {
                    return true;
                }
            }
            false
        })
        .await
        .expect("event in time");
        assert!(seen, "every watch sees the created ConfigMap");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_and_requests_share_one_http2_connection() {
    let sandbox = Sandbox::builder().start().await.expect("sandbox");
    let before = sandbox.connections();
    let client = seedlet_runtime::client::build(config(&sandbox).await).expect("client");
    watch_and_request(client).await;
    let (http2, http1) = opened_since(before, sandbox.connections());
    assert_eq!(
        (http2, http1),
        (1, 0),
        "one HTTP/2 connection for everything"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubes_default_stack_opens_a_connection_per_watch() {
    // The comparison the builder exists for, kept as a test so that a kube upgrade that starts
    // offering HTTP/2 itself shows up here.
    let sandbox = Sandbox::builder().start().await.expect("sandbox");
    let before = sandbox.connections();
    let client = kube::Client::try_from(config(&sandbox).await).expect("client");
    watch_and_request(client).await;
    let (http2, http1) = opened_since(before, sandbox.connections());
    assert_eq!(http2, 0);
    assert!(http1 > WATCHES as u64, "{http1} HTTP/1.1 connections");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_the_server_does_not_trust_is_answered_401_over_http2() {
    // The agent tells a refused credential from an outage by this 401 (then it re-bootstraps);
    // over HTTP/2 a TLS alert after the handshake would surface as a broken connection instead.
    let sandbox = Sandbox::builder().start().await.expect("sandbox");
    let other = Sandbox::builder()
        .name("other")
        .start()
        .await
        .expect("second sandbox");
    let mut foreign = other
        .kubeconfig_for("admin", &["system:masters"])
        .expect("issued");
    foreign.clusters[0].cluster = sandbox.admin_kubeconfig().clusters[0].cluster.clone();
    let config = kube::Config::from_custom_kubeconfig(foreign, &KubeConfigOptions::default())
        .await
        .expect("client configuration");
    let before = sandbox.connections();
    let client = seedlet_runtime::client::build(config).expect("client");
    for _ in 0..3 {
        let answer = Api::<ConfigMap>::namespaced(client.clone(), "default")
            .list(&ListParams::default())
            .await;
        assert!(
            matches!(&answer, Err(kube::Error::Api(status)) if status.code == 401),
            "{answer:?}"
        );
    }
    assert_eq!(opened_since(before, sandbox.connections()), (1, 0));
}
