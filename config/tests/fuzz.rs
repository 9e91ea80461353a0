//! Fuzzing the configuration decoder for a bounded time in CI: `seedlet_config::parse` with
//! arbitrary bytes, arbitrary YAML trees under both configuration kinds, and mutations of
//! Gardener's example files must never panic, must answer within [`BOUND`] each, and the whole
//! run must stay within [`MAX_PEAK_RSS_MIB`] of peak memory (`VmHWM`). A fixed number of cases
//! per property (256) keeps the run to seconds. YAML's two classic bombs, aliases that expand
//! exponentially and nesting deep enough to overflow a recursive decoder, are regression tests.

use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::Value;

/// Longest one decode may take (a debug build on a busy two-core machine).
const BOUND: Duration = Duration::from_secs(5);

/// Peak resident memory of the test process allowed at the end of a property.
const MAX_PEAK_RSS_MIB: u64 = 512;

const GARDENLET: &str = include_str!("fixtures/20-componentconfig-gardenlet.yaml");
const CONTROLLER_MANAGER: &str =
    include_str!("fixtures/20-componentconfig-gardener-controller-manager.yaml");

/// Decodes `text` on its own thread; fails the test when it panics or takes longer than
/// [`BOUND`]. Returns whether the text was a valid configuration.
fn parse_bounded(text: String) -> bool {
    let (done, outcome) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let result = seedlet_config::parse(&text, "fuzz.yaml");
            if let Err(error) = &result {
                // Errors must render: a Display that panics is a panic in check-config.
                assert!(!error.to_string().is_empty());
            }
            let _ = done.send(result.is_ok());
        })
        .expect("thread spawns");
    match outcome.recv_timeout(BOUND) {
        Ok(valid) => valid,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("parse took longer than {BOUND:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let panic = worker.join().err().map(|payload| {
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default()
            });
            panic!("parse panicked: {panic:?}")
        }
    }
}

/// Peak resident set of this process in MiB (`VmHWM`), `None` off Linux.
fn peak_rss_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

fn assert_peak_rss_bounded() {
    if let Some(peak) = peak_rss_mib() {
        assert!(peak < MAX_PEAK_RSS_MIB, "peak RSS {peak} MiB");
    }
}

/// Arbitrary JSON-like trees, as YAML documents would decode.
fn tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,20}".prop_map(Value::String),
        prop_oneof![
            Just("10s"),
            Just("-1m"),
            Just("1e400"),
            Just("100Mi"),
            Just("0.5"),
            Just("garden"),
            Just("10.1.0.0/16"),
            Just("9999999999999999999h")
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(field_name(), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// Field names a configuration has, and some it has not.
fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop_oneof![
            Just("gardenClientConnection"),
            Just("seedClientConnection"),
            Just("kubeconfig"),
            Just("controllers"),
            Just("seed"),
            Just("syncPeriod"),
            Just("concurrentSyncs"),
            Just("leaderElection"),
            Just("leaseDuration"),
            Just("seedConfig"),
            Just("metadata"),
            Just("name"),
            Just("spec"),
            Just("provider"),
            Just("networks"),
            Just("resources"),
            Just("capacity"),
            Just("server"),
            Just("logLevel"),
            Just("featureGates"),
            Just("qps"),
            Just("burst"),
        ]
        .prop_map(str::to_owned),
        "[a-zA-Z]{1,12}",
    ]
}

fn header(kind: usize) -> &'static str {
    match kind % 2 {
        0 => "apiVersion: gardenlet.config.gardener.cloud/v1alpha1\nkind: GardenletConfiguration\n",
        _ => "apiVersion: seedlet.gardener.cloud/v1alpha1\nkind: GardenControllerConfiguration\n",
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        parse_bounded(String::from_utf8_lossy(&bytes).into_owned());
        assert_peak_rss_bounded();
    }

    #[test]
    fn arbitrary_trees_of_either_kind_never_panic(kind in 0usize..2, body in tree()) {
        let mut text = header(kind).to_owned();
        if let Value::Object(_) = body {
            text.push_str(&serde_yaml::to_string(&body).expect("a tree encodes"));
        }
        parse_bounded(text);
        assert_peak_rss_bounded();
    }

    #[test]
    fn mutated_gardener_examples_never_panic(
        which in 0usize..2,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), "\\PC{0,8}"), 1..8),
    ) {
        let mut text = [GARDENLET, CONTROLLER_MANAGER][which].to_owned();
        for (at, len, insert) in edits {
            let start = at.index(text.len() + 1);
            let start = (0..=start).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            let end = (start + len.index(16)).min(text.len());
            let end = (end..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
            text.replace_range(start..end, &insert);
        }
        parse_bounded(text);
        assert_peak_rss_bounded();
    }
}

#[test]
fn the_examples_parse_so_the_mutations_start_from_valid_files() {
    assert!(parse_bounded(format!(
        "{GARDENLET}\nseedConfig:\n  metadata: {{name: a}}\n  spec:\n    provider: {{type: local, region: local}}\n    networks: {{pods: 10.1.0.0/16, services: 10.2.0.0/16}}\n"
    )));
    assert!(parse_bounded(CONTROLLER_MANAGER.to_owned()));
}

#[test]
fn an_alias_bomb_is_refused_within_the_bounds() {
    let mut text = header(0).to_owned();
    text.push_str("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..12 {
        let previous = format!("*a{}", level - 1);
        let list = [previous.as_str(); 10].join(", ");
        text.push_str(&format!("a{level}: &a{level} [{list}]\n"));
    }
    assert!(!parse_bounded(text), "10^12 strings are no configuration");
    assert_peak_rss_bounded();
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    for open in ["[", "{a: ", "- "] {
        let mut text = header(0).to_owned();
        text.push_str("seedConfig: ");
        text.push_str(&open.repeat(100_000));
        assert!(!parse_bounded(text), "{open}");
    }
    assert_peak_rss_bounded();
}
