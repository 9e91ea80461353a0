//! Side-by-side render speed of seedlet's chart renderer and Helm v3.11.3's engine (the reference renderer's
//! `--bench` mode) on the same archives and values, in one run.
//!
//! ```text
//! cargo run --release -p seedlet-chartrender --example render_bench -- \
//!     --reference ../shared/helm/helm-reference [--rounds 5] [--iterations 200] [--seedlet-only]
//!     [--only cold|cached] [CHART[=VALUES] …]
//! ```
//!
//! Without charts it measures every archive in `benches/charts` (with `values-seed.yaml`) and the `ext-basic`
//! fixture (with its `values-gardener.yaml`). A directory is packed into a `.tgz` first. Each round measures, chart
//! by chart, Helm's medians (one `--bench N` child process: cold = archive → loaded → rendered, cached = values and
//! render of the loaded chart) and then seedlet's medians of N iterations in this process (cold = archive →
//! `Chart::from_archive` → a fresh `Renderer` → render; cached = the same `Renderer` and `Chart` again), so both
//! see the same machine load. The table gives, per chart, the median over rounds of each median and the min and
//! median over rounds of the per-round ratio Helm / seedlet. Before measuring, each chart's output is compared
//! with Helm's (`HTPL_JSON=1`): templates whose text differs are counted in the `output` column.
//! `--seedlet-only` skips Helm (for profiling seedlet's loop under a sampler); `--only cold` or `--only cached`
//! runs only that half of seedlet's loop, so a profile holds one phase (the other column then shows 0).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer};

// The allocator of the seedlet binaries that render charts (src/allocator.rs), so the bench measures what they do.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// One chart to measure: its archive on disk (Helm reads the file) and in memory.
struct Case {
    name: String,
    archive: PathBuf,
    bytes: Vec<u8>,
    values_file: PathBuf,
    options: RenderOptions,
}

/// Medians of one round for one chart, nanoseconds.
#[derive(Clone, Copy, Default)]
struct Sample {
    helm_cold: f64,
    helm_cached: f64,
    ours_cold: f64,
    ours_cached: f64,
}

/// One half of seedlet's loop.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Cold,
    Cached,
}

struct Args {
    reference: Option<PathBuf>,
    rounds: usize,
    iterations: usize,
    seedlet_only: bool,
    /// Which of seedlet's loops to run: both, or only the cold or the cached one.
    only: Option<Phase>,
    charts: Vec<(PathBuf, Option<PathBuf>)>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        reference: std::env::var_os("SEEDLET_HELM_REFERENCE").map(PathBuf::from),
        rounds: 5,
        iterations: 200,
        seedlet_only: false,
        only: None,
        charts: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--reference" => args.reference = Some(PathBuf::from(value("--reference")?)),
            "--rounds" => args.rounds = number(&value("--rounds")?)?,
            "--iterations" => args.iterations = number(&value("--iterations")?)?,
            "--seedlet-only" => args.seedlet_only = true,
            "--only" => {
                args.only = match value("--only")?.as_str() {
                    "cold" => Some(Phase::Cold),
                    "cached" => Some(Phase::Cached),
                    other => return Err(format!("--only takes cold or cached, not {other:?}")),
                }
            }
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
            chart => {
                let (chart, values) = match chart.split_once('=') {
                    Some((c, v)) => (PathBuf::from(c), Some(PathBuf::from(v))),
                    None => (PathBuf::from(chart), None),
                };
                args.charts.push((chart, values));
            }
        }
    }
    if args.reference.is_none() && !args.seedlet_only {
        return Err("name the reference renderer (--reference or SEEDLET_HELM_REFERENCE) or pass --seedlet-only".into());
    }
    Ok(args)
}

fn number(text: &str) -> Result<usize, String> {
    match text.parse() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a count between 1 and 100000")),
    }
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The default charts: the real extension archives and `ext-basic`.
fn default_charts() -> Result<Vec<(PathBuf, Option<PathBuf>)>, String> {
    let dir = manifest_dir().join("benches/charts");
    let mut archives: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "tgz"))
        .collect();
    archives.sort();
    let mut charts: Vec<_> = archives.into_iter().map(|a| (a, None)).collect();
    let basic = manifest_dir().join("tests/fixtures/charts/ext-basic");
    charts.push((basic.clone(), Some(basic.join("values-gardener.yaml"))));
    Ok(charts)
}

fn load_case(
    chart: &Path,
    values: Option<&Path>,
    scratch: &Path,
) -> Result<Case, Box<dyn std::error::Error>> {
    let name = chart
        .file_stem()
        .and_then(|n| n.to_str())
        .unwrap_or("chart")
        .to_string();
    let archive = if chart.is_dir() {
        let path = scratch.join(format!("{name}.tgz"));
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        ));
        builder.append_dir_all(&name, chart)?;
        std::fs::write(&path, builder.into_inner()?.finish()?)?;
        path
    } else {
        chart.to_path_buf()
    };
    let values_file = match values {
        Some(v) => v.to_path_buf(),
        None => manifest_dir().join("benches/charts/values-seed.yaml"),
    };
    let values: serde_json::Value = serde_yaml::from_slice(&std::fs::read(&values_file)?)?;
    Ok(Case {
        name,
        bytes: std::fs::read(&archive)?,
        archive,
        values_file,
        options: RenderOptions {
            release_name: "demo".into(),
            namespace: "extension-demo".into(),
            values,
            ..RenderOptions::default()
        },
    })
}

fn reference_command(reference: &Path, case: &Case) -> Command {
    let mut command = Command::new(reference);
    command
        .arg(&case.archive)
        .arg(&case.values_file)
        .arg("demo")
        .arg("extension-demo");
    command
}

/// How many of the chart's templates render to other text than Helm's (`None`: both agree on every template).
fn compare_output(
    reference: &Path,
    case: &Case,
) -> Result<Option<String>, Box<dyn std::error::Error>> {
    let output = reference_command(reference, case)
        .env("HTPL_JSON", "1")
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "Helm failed on {}: {}",
            case.name,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let helm: BTreeMap<String, String> = serde_json::from_slice(&output.stdout)?;
    let chart = Chart::from_archive(&case.bytes, &Limits::default())?;
    let ours = Renderer::new().render(&chart, &case.options)?.templates;
    let differing: Vec<&String> = helm
        .keys()
        .chain(ours.keys())
        .filter(|path| helm.get(*path) != ours.get(*path))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    Ok((!differing.is_empty()).then(|| {
        format!(
            "{} of {} differ ({})",
            differing.len(),
            helm.len(),
            differing
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }))
}

fn helm_bench(reference: &Path, case: &Case, iterations: usize) -> Result<(f64, f64), String> {
    let output = Command::new(reference)
        .arg("--bench")
        .arg(iterations.to_string())
        .arg(&case.archive)
        .arg(&case.values_file)
        .arg("demo")
        .arg("extension-demo")
        .output()
        .map_err(|e| format!("{}: {e}", reference.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let field = |key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key)?.trim().parse::<f64>().ok())
            .ok_or_else(|| format!("no {key} in Helm's bench output: {text}"))
    };
    Ok((field("cold_ns")?, field("cached_ns")?))
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len().is_multiple_of(2) {
        (samples[mid - 1] + samples[mid]) / 2.0
    } else {
        samples[mid]
    }
}

/// Median nanoseconds of `iterations` runs of `f` after a warm-up of a tenth as many.
fn time_median(iterations: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..iterations.div_ceil(10) {
        f();
    }
    let samples = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_nanos() as f64
        })
        .collect();
    median(samples)
}

fn seedlet_bench(case: &Case, iterations: usize, only: Option<Phase>) -> (f64, f64) {
    let limits = Limits::default();
    let run = |phase: Phase| only.is_none_or(|only| only == phase);
    let cold = if !run(Phase::Cold) {
        0.0
    } else {
        time_median(iterations, || {
            let chart = Chart::from_archive(black_box(&case.bytes), &limits).expect("chart loads");
            black_box(
                Renderer::new()
                    .render(&chart, &case.options)
                    .expect("chart renders"),
            );
        })
    };
    if !run(Phase::Cached) {
        return (cold, 0.0);
    }
    let chart = Chart::from_archive(&case.bytes, &limits).expect("chart loads");
    let renderer = Renderer::new();
    let cached = time_median(iterations, || {
        black_box(
            renderer
                .render(black_box(&chart), &case.options)
                .expect("chart renders"),
        );
    });
    (cold, cached)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

fn ratio(samples: &[Sample], pick: impl Fn(&Sample) -> f64) -> String {
    let ratios: Vec<f64> = samples.iter().map(pick).collect();
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    format!("{min:.1}× / {:.1}×", median(ratios))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args().map_err(|e| format!("render_bench: {e}"))?;
    let charts = if args.charts.is_empty() {
        default_charts()?
    } else {
        args.charts.clone()
    };
    let scratch = tempfile::tempdir()?;
    let cases = charts
        .iter()
        .map(|(chart, values)| load_case(chart, values.as_deref(), scratch.path()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut outputs = Vec::new();
    for case in &cases {
        outputs.push(match (&args.reference, args.seedlet_only) {
            (Some(reference), false) => {
                compare_output(reference, case)?.unwrap_or_else(|| "equal".into())
            }
            _ => "not compared".into(),
        });
    }
    let load_before = load_average();
    let started = Instant::now();
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); cases.len()];
    for round in 0..args.rounds {
        for (case, series) in cases.iter().zip(&mut samples) {
            let mut sample = Sample::default();
            if let (Some(reference), false) = (&args.reference, args.seedlet_only) {
                (sample.helm_cold, sample.helm_cached) =
                    helm_bench(reference, case, args.iterations)?;
            }
            (sample.ours_cold, sample.ours_cached) =
                seedlet_bench(case, args.iterations, args.only);
            eprintln!(
                "round {} {}: Helm {} / {}, seedlet {} / {}",
                round + 1,
                case.name,
                ms(sample.helm_cold),
                ms(sample.helm_cached),
                ms(sample.ours_cold),
                ms(sample.ours_cached)
            );
            series.push(sample);
        }
    }
    println!(
        "{} rounds × {} iterations, load average {load_before} before, {} after, {:.0?}",
        args.rounds,
        args.iterations,
        load_average(),
        Duration::from_secs(started.elapsed().as_secs())
    );
    println!();
    println!(
        "| chart | Helm cold | seedlet cold | cold × (min / median) | Helm cached | seedlet cached | cached × (min / median) | output vs Helm |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for ((case, samples), output) in cases.iter().zip(&samples).zip(&outputs) {
        let med = |pick: fn(&Sample) -> f64| median(samples.iter().map(pick).collect());
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            case.name,
            ms(med(|s| s.helm_cold)),
            ms(med(|s| s.ours_cold)),
            ratio(samples, |s| s.helm_cold / s.ours_cold),
            ms(med(|s| s.helm_cached)),
            ms(med(|s| s.ours_cached)),
            ratio(samples, |s| s.helm_cached / s.ours_cached),
            output
        );
    }
    Ok(())
}
