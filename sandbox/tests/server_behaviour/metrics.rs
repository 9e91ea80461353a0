//! `/metrics` through HTTP: kube-apiserver's request, latency, long-running and storage families
//! in the Prometheus text format, moving with the requests a client sends.

use std::time::Duration;

use futures::StreamExt;
use http::{Method, StatusCode};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, WatchParams};
use serde_json::json;

use super::{sandbox, send};

/// The value of the sample `name{labels}` whose labels include all of `wanted` (`key="value"`).
fn sample(text: &str, name: &str, wanted: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (metric, labels) = series.split_once('{').unwrap_or((series, ""));
            (metric == name && wanted.iter().all(|w| labels.contains(w)))
                .then(|| value.parse().ok())?
        })
        .reduce(|a, b| a + b)
}

async fn scrape(sb: &seedlet_sandbox::Sandbox) -> String {
    let (status, content_type, body) = send(sb, Method::GET, "/metrics", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    body.as_str().expect("text exposition").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_watches_and_stored_objects() {
    let sb = sandbox("metrics").await;
    let path = "/api/v1/namespaces/default/configmaps";
    let before = scrape(&sb).await;
    let configmaps = sample(
        &before,
        "apiserver_storage_objects",
        &[r#"resource="configmaps""#],
    )
    .expect("configmaps are reported");
    let size_before = sample(&before, "apiserver_storage_size_bytes", &[]).expect("size");
    assert!(size_before > 0.0);

    for name in ["one", "two"] {
        let (status, _, _) = send(
            &sb,
            Method::POST,
            path,
            None,
            Some(json!({"metadata": {"name": name}, "data": {"payload": "x".repeat(4096)}})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let (status, _, _) = send(&sb, Method::GET, &format!("{path}/missing"), None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let text = scrape(&sb).await;
    let created = [
        r#"verb="POST""#,
        r#"resource="configmaps""#,
        r#"scope="namespace""#,
        r#"code="201""#,
        r#"component="apiserver""#,
    ];
    assert_eq!(
        sample(&text, "apiserver_request_total", &created),
        Some(2.0)
    );
    let missing = [r#"verb="GET""#, r#"scope="resource""#, r#"code="404""#];
    assert_eq!(
        sample(&text, "apiserver_request_total", &missing),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            "apiserver_request_duration_seconds_count",
            &[r#"verb="POST""#, r#"resource="configmaps""#]
        ),
        Some(2.0)
    );
    assert_eq!(
        sample(
            &text,
            "apiserver_request_duration_seconds_bucket",
            &[r#"verb="POST""#, r#"resource="configmaps""#, r#"le="60.0""#]
        ),
        Some(2.0)
    );
    assert_eq!(
        sample(
            &text,
            "apiserver_storage_objects",
            &[r#"resource="configmaps""#]
        ),
        Some(configmaps + 2.0)
    );
    let size = sample(&text, "apiserver_storage_size_bytes", &[]).expect("size");
    assert!(size >= size_before + 8192.0, "{size_before} -> {size}");

    // An open watch is a long-running request until the client goes away.
    let watching = [
        r#"verb="WATCH""#,
        r#"resource="configmaps""#,
        r#"scope="namespace""#,
    ];
    let api: Api<ConfigMap> = Api::namespaced(sb.client(), "default");
    let stream = api
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch opens");
    let mut stream = Box::pin(stream);
    let _ = tokio::time::timeout(Duration::from_secs(2), stream.next()).await;
    let text = scrape(&sb).await;
    assert_eq!(
        sample(&text, "apiserver_longrunning_requests", &watching),
        Some(1.0)
    );
    drop(stream);
    let closed = async {
        loop {
            let text = scrape(&sb).await;
            if sample(&text, "apiserver_longrunning_requests", &watching) == Some(0.0) {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let text = tokio::time::timeout(Duration::from_secs(10), closed)
        .await
        .expect("a closed watch leaves the gauge");
    assert_eq!(
        sample(
            &text,
            "apiserver_request_total",
            &[r#"verb="WATCH""#, r#"code="200""#]
        ),
        Some(1.0)
    );
    sb.shutdown().await;
}
