//! API throughput and watch fan-out of the sandbox, measured with a real kube-rs client over HTTPS.
//!
//! Run with `cargo bench -p seedlet-sandbox --bench api`.
//! - `requests/*`: requests per second (criterion's elements/s) for create, get and list (100
//!   objects per page), one request at a time and [`CONCURRENCY`] requests in flight.
//! - `scale/*`: create and merge-patch rates with [`STORED`] objects already stored (a fifth of
//!   them owned by another object, as garbage collection sees them), which shows what a write
//!   costs the built-in controllers; and a list with a label selector that [`SAMPLED`] of them
//!   match.
//! - `watch fan-out`: the time from one write until all [`WATCHERS`] open watches have received
//!   its event, as p50/p99 over [`FAN_OUT_SAMPLES`] writes (printed, not a criterion benchmark,
//!   since criterion reports means).
//! - `watch beside idle watchers`: the time from one write until the one watch of its resource has
//!   received it while [`OTHER_WATCHERS`] watches of another resource stay open, as p50/p99 over
//!   [`FAN_OUT_SAMPLES`] writes; it shows what a write costs watchers that do not want it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use seedlet_sandbox::Sandbox;
use serde_json::json;

/// Requests in flight in the concurrent benchmarks.
const CONCURRENCY: usize = 16;
/// Open watches in the fan-out measurement.
const WATCHERS: usize = 100;
/// Open watches of another resource in the idle-watcher measurement (over several connections:
/// an HTTP/2 connection carries at most 200 streams at once).
const OTHER_WATCHERS: usize = 1_000;
/// Watches per client connection in the idle-watcher measurement.
const WATCHES_PER_CONNECTION: usize = 100;
/// Writes timed in the fan-out measurements.
const FAN_OUT_SAMPLES: usize = 200;
/// Objects stored before the scale benchmarks.
const STORED: usize = 5_000;
/// Stored objects labelled `sample=yes` (one in fifty).
const SAMPLED: usize = STORED / 50;

/// Names come from a counter: with thousands of objects, generateName's five random characters
/// collide (409 AlreadyExists, as on kube-apiserver), which a benchmark must not count.
static NAMES: AtomicUsize = AtomicUsize::new(0);

fn config_map(prefix: &str) -> ConfigMap {
    let name = format!("{prefix}{}", NAMES.fetch_add(1, Ordering::Relaxed));
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"k": "v"}}))
        .expect("valid configmap")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

async fn sandbox(name: &str) -> Sandbox {
    Sandbox::builder()
        .name(name)
        .workload_simulation(true)
        .start()
        .await
        .expect("sandbox starts")
}

fn requests(c: &mut Criterion) {
    let runtime = runtime();
    let sandbox = runtime.block_on(sandbox("bench"));
    let maps: Api<ConfigMap> = Api::namespaced(sandbox.client(), "default");
    runtime.block_on(async {
        for _ in 0..100 {
            maps.create(&PostParams::default(), &config_map("seed-"))
                .await
                .expect("seed object");
        }
    });
    let name = runtime.block_on(async {
        maps.create(&PostParams::default(), &config_map("get-"))
            .await
            .expect("target")
            .metadata
            .name
            .expect("named")
    });
    let list = ListParams::default().limit(100);

    let mut group = c.benchmark_group("requests");
    group.throughput(Throughput::Elements(1));
    group.bench_function("create", |b| {
        b.to_async(&runtime).iter(|| async {
            maps.create(&PostParams::default(), &config_map("c-"))
                .await
                .expect("create")
        })
    });
    group.bench_function("get", |b| {
        b.to_async(&runtime)
            .iter(|| async { maps.get(&name).await.expect("get") })
    });
    group.bench_function("list_100", |b| {
        b.to_async(&runtime)
            .iter(|| async { maps.list(&list).await.expect("list") })
    });
    group.throughput(Throughput::Elements(CONCURRENCY as u64));
    group.bench_function("create_16_concurrent", |b| {
        b.to_async(&runtime).iter(|| async {
            futures::future::try_join_all((0..CONCURRENCY).map(|_| async {
                maps.create(&PostParams::default(), &config_map("cc-"))
                    .await
            }))
            .await
            .expect("creates")
        })
    });
    group.bench_function("get_16_concurrent", |b| {
        b.to_async(&runtime).iter(|| async {
            futures::future::try_join_all((0..CONCURRENCY).map(|_| maps.get(&name)))
                .await
                .expect("gets")
        })
    });
    group.bench_function("list_100_16_concurrent", |b| {
        b.to_async(&runtime).iter(|| async {
            futures::future::try_join_all((0..CONCURRENCY).map(|_| maps.list(&list)))
                .await
                .expect("lists")
        })
    });
    group.finish();
    runtime.block_on(sandbox.shutdown());
}

fn scale(c: &mut Criterion) {
    let runtime = runtime();
    let sandbox = runtime.block_on(sandbox("scale"));
    let maps: Api<ConfigMap> = Api::namespaced(sandbox.client(), "default");
    let names: Vec<String> = runtime.block_on(async {
        let owner = maps
            .create(&PostParams::default(), &config_map("owner-"))
            .await
            .expect("owner");
        let owner_reference = json!([{
            "apiVersion": "v1", "kind": "ConfigMap",
            "name": owner.metadata.name, "uid": owner.metadata.uid,
        }]);
        let mut names = Vec::with_capacity(STORED);
        for batch in 0..STORED / CONCURRENCY {
            let created = futures::future::try_join_all((0..CONCURRENCY).map(|i| {
                let name = format!("stored-{}", NAMES.fetch_add(1, Ordering::Relaxed));
                let mut object = json!({"metadata": {"name": name}, "data": {"k": "v"}});
                if (batch * CONCURRENCY + i).is_multiple_of(5) {
                    object["metadata"]["ownerReferences"] = owner_reference.clone();
                }
                if (batch * CONCURRENCY + i).is_multiple_of(STORED / SAMPLED) {
                    object["metadata"]["labels"] = json!({"sample": "yes"});
                }
                let object: ConfigMap = serde_json::from_value(object).expect("valid configmap");
                let maps = maps.clone();
                async move { maps.create(&PostParams::default(), &object).await }
            }))
            .await
            .expect("stored objects");
            names.extend(created.into_iter().filter_map(|o| o.metadata.name));
        }
        names
    });
    let next = AtomicUsize::new(0);
    let patch = PatchParams::default();
    let sampled = ListParams::default().labels("sample=yes");

    let mut group = c.benchmark_group("scale");
    group.throughput(Throughput::Elements(1));
    group.bench_function("list_labelled_with_5000_stored", |b| {
        b.to_async(&runtime).iter(|| async {
            let list = maps.list(&sampled).await.expect("list");
            assert_eq!(list.items.len(), SAMPLED, "every sampled object is listed");
        })
    });
    group.throughput(Throughput::Elements(CONCURRENCY as u64));
    group.bench_function("create_16_concurrent_with_5000_stored", |b| {
        b.to_async(&runtime).iter(|| async {
            futures::future::try_join_all((0..CONCURRENCY).map(|_| async {
                maps.create(&PostParams::default(), &config_map("sc-"))
                    .await
            }))
            .await
            .expect("creates")
        })
    });
    group.bench_function("patch_16_concurrent_with_5000_stored", |b| {
        b.to_async(&runtime).iter(|| async {
            futures::future::try_join_all((0..CONCURRENCY).map(|_| {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let body = Patch::Merge(json!({"data": {"n": n.to_string()}}));
                let name = &names[n % names.len()];
                let maps = &maps;
                let patch = &patch;
                async move { maps.patch(name, patch, &body).await }
            }))
            .await
            .expect("patches")
        })
    });
    group.finish();
    runtime.block_on(sandbox.shutdown());
}

/// Prints p50/p99 of the time from a create until all watchers saw it.
fn watch_fan_out(_: &mut Criterion) {
    let runtime = runtime();
    let sandbox = runtime.block_on(sandbox("fan-out"));
    let maps: Api<ConfigMap> = Api::namespaced(sandbox.client(), "default");
    let mut latencies = runtime.block_on(async {
        let mut watchers = Vec::new();
        for _ in 0..WATCHERS {
            let stream = maps
                .watch(&WatchParams::default().labels("fanout=yes"), "0")
                .await
                .expect("watch");
            watchers.push(stream.boxed());
        }
        let mut latencies = Vec::with_capacity(FAN_OUT_SAMPLES);
        for _ in 0..FAN_OUT_SAMPLES {
            let mut object = config_map("fan-");
            object.metadata.labels = Some([("fanout".to_string(), "yes".to_string())].into());
            let start = Instant::now();
            maps.create(&PostParams::default(), &object)
                .await
                .expect("create");
            let receipts = watchers.iter_mut().map(|s| async move {
                loop {
                    match s.try_next().await.expect("watch stream") {
                        Some(WatchEvent::Added(_)) => return,
                        Some(_) => continue,
                        None => panic!("watch ended"),
                    }
                }
            });
            futures::future::join_all(receipts).await;
            latencies.push(start.elapsed());
        }
        latencies
    });
    latencies.sort();
    let percentile = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    println!(
        "watch fan-out to {WATCHERS} watchers (create → ADDED at all, n = {FAN_OUT_SAMPLES}): p50 = {:.2?}, p99 = {:.2?}",
        percentile(50),
        percentile(99)
    );
    runtime.block_on(sandbox.shutdown());
}

/// Prints p50/p99 of the time from a create until the one watcher of its resource saw it, while
/// [`OTHER_WATCHERS`] watches of Secrets are open.
fn watch_beside_idle_watchers(_: &mut Criterion) {
    let runtime = runtime();
    let sandbox = runtime.block_on(sandbox("idle-watchers"));
    let mut latencies = runtime.block_on(async {
        let mut idle = Vec::new();
        for _ in 0..OTHER_WATCHERS / WATCHES_PER_CONNECTION {
            let config = kube::Config::from_custom_kubeconfig(
                sandbox.admin_kubeconfig(),
                &kube::config::KubeConfigOptions::default(),
            )
            .await
            .expect("kubeconfig");
            let client = kube::Client::try_from(config).expect("client");
            let secrets: Api<Secret> = Api::namespaced(client, "default");
            for _ in 0..WATCHES_PER_CONNECTION {
                let stream = secrets
                    .watch(&WatchParams::default(), "0")
                    .await
                    .expect("watch");
                idle.push(stream.boxed());
            }
        }
        let maps: Api<ConfigMap> = Api::namespaced(sandbox.client(), "default");
        let mut watcher = maps
            .watch(&WatchParams::default(), "0")
            .await
            .expect("watch")
            .boxed();
        let mut latencies = Vec::with_capacity(FAN_OUT_SAMPLES);
        for _ in 0..FAN_OUT_SAMPLES {
            let start = Instant::now();
            maps.create(&PostParams::default(), &config_map("idle-"))
                .await
                .expect("create");
            loop {
                match watcher.try_next().await.expect("watch stream") {
                    Some(WatchEvent::Added(_)) => break,
                    Some(_) => continue,
                    None => panic!("watch ended"),
                }
            }
            latencies.push(start.elapsed());
        }
        drop(idle);
        latencies
    });
    latencies.sort();
    let percentile = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    println!(
        "watch beside {OTHER_WATCHERS} watchers of another resource (create → ADDED at its one watcher, n = {FAN_OUT_SAMPLES}): p50 = {:.2?}, p99 = {:.2?}",
        percentile(50),
        percentile(99)
    );
    runtime.block_on(sandbox.shutdown());
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = requests, scale, watch_fan_out, watch_beside_idle_watchers
}
criterion_main!(benches);
