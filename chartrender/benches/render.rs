//! Criterion benchmark: cold (archive → rendered templates) and cached renders of the fixture charts shaped like
//! extension charts: `ext-basic` (+ `values-gardener.yaml`), `ext-subchart`, and the own fixtures
//! `provider-like` (+ `values-provided-tls.yaml`: helpers, tpl, subcharts, import-values, schema, 2000-line values)
//! and `dns-like` (tpl over 60 entries). The `(thread cpu time)` variants measure the rendering thread's CPU time,
//! which stays meaningful on a machine shared with other builds.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer};

/// (benchmark name, chart directory, values file layered over the chart's own)
const CHARTS: &[(&str, &str, Option<&str>)] = &[
    (
        "ext-basic",
        "charts/ext-basic",
        Some("values-gardener.yaml"),
    ),
    ("ext-subchart", "charts/ext-subchart", None),
    (
        "provider-like",
        "own/provider-like",
        Some("values-provided-tls.yaml"),
    ),
    ("dns-like", "own/dns-like", None),
];

fn fixture(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
}

fn options(dir: &Path, values: Option<&str>) -> RenderOptions {
    let values = values.map_or_else(
        || serde_json::json!({}),
        |file| {
            serde_yaml::from_slice(
                &std::fs::read(dir.join(file)).expect("fixture values are readable"),
            )
            .expect("fixture values are YAML")
        },
    );
    RenderOptions {
        release_name: "demo".into(),
        namespace: "extension-demo".into(),
        values,
        ..RenderOptions::default()
    }
}

/// The chart as a `.tgz`, as a ControllerDeployment or an OCI layer carries it.
fn archive(dir: &Path) -> Vec<u8> {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("chart");
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    builder
        .append_dir_all(name, dir)
        .expect("fixture chart is readable");
    builder
        .into_inner()
        .and_then(|gz| gz.finish())
        .expect("archive is written to memory")
}

/// CPU time consumed by this thread so far (`/proc/thread-self/schedstat`, nanoseconds); `None` where the file
/// does not exist.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace()
        .next()?
        .parse()
        .ok()
        .map(Duration::from_nanos)
}

/// Measures `iters` runs of `f` in thread CPU time (wall time where CPU time is unavailable). The kernel updates
/// the counter at scheduler ticks, so every iteration runs `f` [`REPEAT`] times and the total is scaled back.
fn cpu_time<F: FnMut()>(iters: u64, mut f: F) -> Duration {
    let (cpu_start, wall_start) = (thread_cpu_time(), Instant::now());
    for _ in 0..iters * REPEAT {
        f();
    }
    let total = match (cpu_start, thread_cpu_time()) {
        (Some(start), Some(end)) => end.saturating_sub(start),
        _ => wall_start.elapsed(),
    };
    total / REPEAT as u32
}

/// Inner repetitions per measured iteration of the CPU-time benchmarks.
const REPEAT: u64 = 20;

fn render(c: &mut Criterion) {
    for (name, dir, values) in CHARTS {
        let dir = fixture(dir);
        let options = options(&dir, *values);
        let bytes = archive(&dir);
        let chart = Chart::from_archive(&bytes, &Limits::default()).expect("fixture chart loads");
        let renderer = Renderer::new();
        renderer
            .render(&chart, &options)
            .expect("fixture chart renders");
        let mut group = c.benchmark_group(*name);
        group.measurement_time(Duration::from_secs(4));
        group.bench_function("cached render", |b| {
            b.iter(|| {
                black_box(
                    renderer
                        .render(black_box(&chart), &options)
                        .expect("renders"),
                )
            })
        });
        group.bench_function("cached render (thread cpu time)", |b| {
            b.iter_custom(|iters| {
                cpu_time(iters, || {
                    drop(black_box(
                        renderer.render(&chart, &options).expect("renders"),
                    ))
                })
            })
        });
        group.bench_function("cold load + translate + render", |b| {
            b.iter(|| {
                let chart =
                    Chart::from_archive(black_box(&bytes), &Limits::default()).expect("loads");
                black_box(Renderer::new().render(&chart, &options).expect("renders"))
            })
        });
        group.bench_function("cold load + translate + render (thread cpu time)", |b| {
            b.iter_custom(|iters| {
                cpu_time(iters, || {
                    let chart =
                        Chart::from_archive(black_box(&bytes), &Limits::default()).expect("loads");
                    drop(black_box(
                        Renderer::new().render(&chart, &options).expect("renders"),
                    ));
                })
            })
        });
        group.finish();
    }
}

criterion_group!(benches, render);
criterion_main!(benches);
