//! API throughput and watch fan-out of the sandbox, measured with a real kube-rs client over HTTPS.
//!
//! `create`/`get`/`list` report requests per second (criterion's elements/s): one request at a time
//! and 16 concurrent requests. `watch_fan_out_100` is the time from one write until all 100 open
//! watches have received its event.

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use seedlet_sandbox::Sandbox;
use serde_json::json;

const CONCURRENCY: usize = 16;
const WATCHERS: usize = 100;

fn config_map(generate: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"generateName": generate}, "data": {"k": "v"}}))
        .expect("valid configmap")
}

fn api(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let sandbox = runtime.block_on(async {
        Sandbox::builder()
            .name("bench")
            .workload_simulation(false)
            .start()
            .await
            .expect("sandbox starts")
    });
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
        b.to_async(&runtime).iter(|| async {
            maps.list(&ListParams::default().limit(100))
                .await
                .expect("list")
        })
    });
    group.throughput(Throughput::Elements(CONCURRENCY as u64));
    group.bench_function("get_16_concurrent", |b| {
        b.to_async(&runtime).iter(|| async {
            futures::future::try_join_all((0..CONCURRENCY).map(|_| maps.get(&name)))
                .await
                .expect("gets")
        })
    });
    group.finish();

    let mut fan_out = c.benchmark_group("watch");
    fan_out
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    let watchers = runtime.block_on(async {
        let mut streams = Vec::new();
        for _ in 0..WATCHERS {
            let stream = maps
                .watch(&WatchParams::default().labels("fanout=yes"), "0")
                .await
                .expect("watch");
            streams.push(stream.boxed());
        }
        streams
    });
    let watchers = std::sync::Arc::new(tokio::sync::Mutex::new(watchers));
    fan_out.bench_function("fan_out_100", |b| {
        b.to_async(&runtime).iter(|| {
            let watchers = watchers.clone();
            let maps = maps.clone();
            async move {
                let mut watchers = watchers.lock().await;
                let mut object = config_map("fan-");
                object.metadata.labels = Some([("fanout".to_string(), "yes".to_string())].into());
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
            }
        })
    });
    fan_out.finish();
    runtime.block_on(sandbox.shutdown());
}

criterion_group!(benches, api);
criterion_main!(benches);
