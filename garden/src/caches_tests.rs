//! The whole garden process (every built-in controller and the webhooks' graph) against a
//! sandbox garden, behind a client that records its watch requests: each kind and scope is
//! watched once (ControllerInstallations, stored by nobody, included), except the store-less
//! kinds listed in `STORELESS`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::testing::Env;

/// Watches several store-less readers open on purpose (see `crate::caches`): ServiceAccounts
/// are read by the extension ClusterRole controller and the graph, neither stores them.
/// (ControllerInstallations, read by five store-less readers, have one shared watch.)
const STORELESS: &[&str] = &["/api/v1/serviceaccounts"];

/// Watch requests per path and selectors.
type Watches = Arc<Mutex<BTreeMap<String, usize>>>;

/// `path?selectors` of a watch request (`None` for other requests): what tells two scopes apart.
fn watch_scope(uri: &http::Uri) -> Option<String> {
    let query = uri.query()?;
    let mut watch = false;
    let mut selectors = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("watch", "true" | "1")) => watch = true,
            Some(("labelSelector" | "fieldSelector", _)) => selectors.push(pair),
            _ => {}
        }
    }
    watch.then(|| format!("{}?{}", uri.path(), selectors.join("&")))
}

#[test]
fn watch_scopes_keep_path_and_selectors_only() {
    let cases = [
        (
            "/api/v1/namespaces?watch=true&resourceVersion=5&labelSelector=a%3Db&timeoutSeconds=290",
            Some("/api/v1/namespaces?labelSelector=a%3Db"),
        ),
        (
            "/apis/core.gardener.cloud/v1beta1/shoots?allowWatchBookmarks=true&watch=true&resourceVersion=9",
            Some("/apis/core.gardener.cloud/v1beta1/shoots?"),
        ),
        ("/apis/core.gardener.cloud/v1beta1/shoots?limit=500", None),
        ("/apis/core.gardener.cloud/v1beta1/shoots", None),
    ];
    for (uri, scope) in cases {
        let uri: http::Uri = uri.parse().expect("uri");
        assert_eq!(watch_scope(&uri).as_deref(), scope, "{uri}");
    }
}

/// A client that records the watch requests it sends, per path and selectors.
fn recording(client: kube::Client) -> (kube::Client, Watches) {
    let watches = Watches::default();
    let recorded = watches.clone();
    let client = seedlet_sandbox::setup::observed_client(
        client,
        Arc::new(move |request| {
            if let Some(scope) = watch_scope(request.uri()) {
                *recorded
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(scope)
                    .or_default() += 1;
            }
            Box::pin(async {})
        }),
    );
    (client, watches)
}

fn snapshot(watches: &Watches) -> BTreeMap<String, usize> {
    watches
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

#[tokio::test]
async fn every_kind_and_scope_is_watched_once() {
    let env = Env::start().await;
    let certificates = tempfile::tempdir().expect("dir");
    env.write_serving_certificate(certificates.path());
    let yaml = format!(
        "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenControllerConfiguration\n\
         webhooks:\n  server:\n    bindAddress: 127.0.0.1\n    freePort: true\n  tls:\n    serverCertDir: {}\n",
        certificates.path().display()
    );
    let config = match seedlet_config::parse(&yaml, "garden.yaml").expect("valid config") {
        seedlet_config::AnyConfig::GardenController(config) => *config,
        other => panic!("unexpected config kind {}", other.kind()),
    };
    let (client, watches) = recording(env.client.clone());
    let address: std::net::SocketAddr = "127.0.0.1:0".parse().expect("address");
    let stop = CancellationToken::new();
    let running = crate::Garden::new(config, client)
        .expect("garden controller")
        .with_addresses(address, address)
        .with_leader_election(None)
        .start(stop.clone())
        .await
        .expect("garden controller starts");
    assert!(running.webhook_address.is_some(), "the webhooks run");

    // Every watch is open once the set of scopes has not grown for two seconds.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = snapshot(&watches);
    let mut stable_since = Instant::now();
    while stable_since.elapsed() < Duration::from_secs(2) {
        assert!(Instant::now() < deadline, "watches still opening: {seen:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = snapshot(&watches);
        if now.len() != seen.len() {
            stable_since = Instant::now();
        }
        seen = now;
    }
    stop.cancel();
    running.wait().await.expect("garden controller stops");

    // The counting works: the kinds most readers share were watched.
    for kind in [
        "shoots",
        "seeds",
        "projects",
        "controllerregistrations",
        "controllerinstallations",
    ] {
        let scope = format!("/apis/core.gardener.cloud/v1beta1/{kind}?");
        assert_eq!(seen.get(&scope), Some(&1), "{scope} in {seen:#?}");
    }
    let repeated: Vec<_> = seen
        .iter()
        .filter(|(scope, count)| {
            **count > 1
                && !STORELESS
                    .iter()
                    .any(|path| scope.split('?').next() == Some(path))
        })
        .collect();
    assert!(
        repeated.is_empty(),
        "kinds and scopes watched more than once: {repeated:?} (all: {seen:#?})"
    );
}
