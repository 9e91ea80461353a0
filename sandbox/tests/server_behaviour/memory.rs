//! Memory bounds measured as resident set size (VmRSS): a JSON patch copy-bomb must not grow
//! the sandbox, and what 2 000 closed watches held goes back to the kernel. RSS is per
//! process, so each measurement runs in a child process of this test binary running just that
//! test (the kube-rs client's connections count too: they live in the same process).

use std::time::{Duration, Instant};

use futures::StreamExt;
use http::StatusCode;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, WatchParams};

use super::limits::{copy_bomb, patch, post};
use super::sandbox;

const CHILD: &str = "SEEDLET_SANDBOX_MEMORY_CHILD";

/// Resident set size of this process in MiB.
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS line");
    kib / 1024.0
}

/// Runs `test` alone in a child process (so RSS is its own) and fails when the child fails.
pub(super) fn in_child(test: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("child runs");
    let text = String::from_utf8_lossy(&output.stdout);
    println!("{text}{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "child {test} failed");
    assert!(text.contains("1 passed"), "child ran {test}");
    false
}

#[test]
fn a_copy_bomb_leaves_rss_bounded() {
    if !in_child("server_behaviour::memory::a_copy_bomb_leaves_rss_bounded") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let sb = sandbox("copy-bomb-rss").await;
        let (seed, operations) = copy_bomb();
        let path = "/api/v1/namespaces/default/configmaps";
        assert_eq!(post(&sb, path, &seed).await.0, StatusCode::CREATED);
        let before = rss_mib();
        let started = Instant::now();
        let mut peak = before;
        for _ in 0..5 {
            let (status, _) = patch(
                &sb,
                &format!("{path}/bomb"),
                "application/json-patch+json",
                &operations,
            )
            .await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
            peak = peak.max(rss_mib());
        }
        let took = started.elapsed() / 5;
        println!(
            "copy-bomb: {took:?} per refused patch, RSS {before:.1} MiB before, {peak:.1} MiB peak"
        );
        assert!(took < Duration::from_secs(1));
        assert!(peak - before < 64.0, "RSS grew {:.1} MiB", peak - before);
    });
}

#[test]
fn closed_watches_give_their_memory_back() {
    if !in_child("server_behaviour::memory::closed_watches_give_their_memory_back") {
        return;
    }
    // As `seedlet` does at start (src/allocator.rs): jemalloc purges freed pages in the
    // background.
    tikv_jemalloc_ctl::background_thread::write(true).expect("background thread");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let sb = sandbox("watch-rss").await;
        let client = sb.client();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let idle = rss_mib();
        let mut rounds = Vec::new();
        for round in 0..2 {
            let open = open_watches(&client, round, 2000).await;
            let with_watches = rss_mib();
            drop(open);
            let started = Instant::now();
            let closed = settled_rss(idle + RETURNED_WITHIN_MIB, Duration::from_secs(40)).await;
            rounds.push((with_watches, closed, started.elapsed()));
        }
        println!("watches: RSS {idle:.1} MiB idle; 2000 open, then closed (MiB, MiB, time to return), twice: {rounds:.1?}");
        for (open, closed, _) in rounds {
            assert!(open - idle > 4.0 * RETURNED_WITHIN_MIB, "2000 watches hold memory: {open:.1} MiB");
            assert!(
                closed <= idle + RETURNED_WITHIN_MIB,
                "RSS {closed:.1} MiB after closing, idle {idle:.1} MiB"
            );
        }
    });
}

/// How far above its idle RSS the process may stay once closed watches' memory is returned
/// (allocator metadata, the grown object store's tables, thread caches).
const RETURNED_WITHIN_MIB: f64 = 32.0;

/// Polls RSS every 250 ms until it is at most `target` MiB or `timeout` passed; returns the last
/// reading.
async fn settled_rss(target: f64, timeout: Duration) -> f64 {
    let deadline = Instant::now() + timeout;
    loop {
        let rss = rss_mib();
        if rss <= target || Instant::now() >= deadline {
            return rss;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Opens `count` watches of ConfigMaps, each in its own namespace (one store channel each).
async fn open_watches(
    client: &kube::Client,
    round: usize,
    count: usize,
) -> Vec<futures::stream::BoxStream<'static, kube::Result<kube::api::WatchEvent<ConfigMap>>>> {
    let mut open = Vec::new();
    for batch in 0..count / 100 {
        let watches = (0..100).map(|i| {
            let api: Api<ConfigMap> =
                Api::namespaced(client.clone(), &format!("w{round}-{batch}-{i}"));
            async move {
                let params = WatchParams::default().timeout(290);
                api.watch(&params, "0").await.expect("watch starts").boxed()
            }
        });
        open.extend(futures::future::join_all(watches).await);
    }
    open
}
