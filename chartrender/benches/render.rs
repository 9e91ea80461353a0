//! Criterion benchmark: rendering the `ext-basic` fixture chart with `values-gardener.yaml`, cached and cold.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer};

fn options() -> RenderOptions {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/charts/ext-basic");
    let values: serde_json::Value = serde_yaml::from_slice(
        &std::fs::read(dir.join("values-gardener.yaml")).expect("fixture values are readable"),
    )
    .expect("fixture values are YAML");
    RenderOptions {
        release_name: "demo".into(),
        namespace: "extension-demo".into(),
        values,
        ..RenderOptions::default()
    }
}

/// The chart as a `.tgz`, as a ControllerDeployment carries it.
fn archive() -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/charts/ext-basic");
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    builder
        .append_dir_all("ext-basic", &dir)
        .expect("fixture chart is readable");
    builder
        .into_inner()
        .and_then(|gz| gz.finish())
        .expect("archive is written to memory")
}

/// CPU time consumed by this thread so far (`/proc/thread-self/schedstat`, nanoseconds), so the numbers stay
/// meaningful on a machine shared with other builds; `None` where the file does not exist.
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
const REPEAT: u64 = 50;

fn render(c: &mut Criterion) {
    let options = options();
    let bytes = archive();
    let chart = Chart::from_archive(&bytes, &Limits::default()).expect("fixture chart loads");
    let renderer = Renderer::new();
    renderer
        .render(&chart, &options)
        .expect("fixture chart renders");
    c.bench_function("ext-basic cached render", |b| {
        b.iter(|| {
            black_box(
                renderer
                    .render(black_box(&chart), &options)
                    .expect("renders"),
            )
        })
    });
    c.bench_function("ext-basic cached render + manifests", |b| {
        b.iter(|| {
            black_box(
                renderer
                    .render(&chart, &options)
                    .expect("renders")
                    .manifests()
                    .expect("parses"),
            )
        })
    });
    c.bench_function("ext-basic cached render (thread cpu time)", |b| {
        b.iter_custom(|iters| {
            cpu_time(iters, || {
                drop(black_box(
                    renderer.render(&chart, &options).expect("renders"),
                ))
            })
        })
    });
    c.bench_function(
        "ext-basic cold load + translate + render (thread cpu time)",
        |b| {
            b.iter_custom(|iters| {
                cpu_time(iters, || {
                    let chart =
                        Chart::from_archive(black_box(&bytes), &Limits::default()).expect("loads");
                    drop(black_box(
                        Renderer::new().render(&chart, &options).expect("renders"),
                    ));
                })
            })
        },
    );
    c.bench_function("ext-basic cold load + translate + render", |b| {
        b.iter(|| {
            let chart = Chart::from_archive(black_box(&bytes), &Limits::default()).expect("loads");
            black_box(Renderer::new().render(&chart, &options).expect("renders"))
        })
    });
}

criterion_group!(benches, render);
criterion_main!(benches);
