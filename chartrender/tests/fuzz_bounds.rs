//! Fuzzing the chart renderer's public API for a bounded time in CI, beyond `proptests.rs`:
//! template text built from Helm's own vocabulary (actions, pipelines, the common functions,
//! named templates) with arbitrary values, and arbitrary text through `parse_documents` and
//! `Rendered::manifests`. Every case must end within [`BOUND`] with output or a clean error (a
//! non-empty message, no panic), and the run must stay within [`MAX_PEAK_RSS_MIB`] of peak memory
//! (`VmHWM`). Inputs stay small and loops short: the renderer's resource limits are tested
//! where they are defined, this checks that nothing in between panics or hangs.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::Value;

/// Longest one render may take (a debug build on a busy two-core machine).
const BOUND: Duration = Duration::from_secs(10);

/// Peak resident memory of the test process allowed after each case.
const MAX_PEAK_RSS_MIB: u64 = 1024;

/// Runs `work` on its own thread; fails the test when it panics or outlives [`BOUND`].
fn bounded<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, outcome) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            let _ = done.send(work());
        })
        .expect("thread spawns");
    match outcome.recv_timeout(BOUND) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("took longer than {BOUND:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let payload = worker.join().err();
            let message = payload.as_ref().and_then(|payload| {
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            });
            panic!("panicked: {message:?}")
        }
    }
}

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

/// Renders `template` (beside a helper file) with `values`; the error text when it fails.
fn render_bounded(template: String, values: Value) -> Result<(), String> {
    bounded(move || {
        let chart = common::chart(
            &[
                ("t.yaml", &template),
                (
                    "_helpers.tpl",
                    "{{- define \"h\" -}}{{ . | toYaml }}{{- end -}}\
                     {{- define \"n\" -}}{{ .Values | toJson }}{{- end -}}",
                ),
            ],
            "a: [1, 2]\nb: {c: d}\ns: text\n",
        );
        match common::render(&chart, values) {
            Ok(rendered) => {
                let _ = rendered.manifests();
                Ok(())
            }
            Err(error) => {
                assert!(!error.is_empty(), "an error without a message");
                Err(error)
            }
        }
    })
}

/// Operands: fields, variables and small literals.
fn operand() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(".Values.a"),
        Just(".Values.b.c"),
        Just(".Values.s"),
        Just(".Values.missing"),
        Just(".Release.Name"),
        Just(".Chart.Name"),
        Just(".Capabilities.KubeVersion.Version"),
        Just("."),
        Just("$"),
        Just("$x"),
        Just("\"s\""),
        Just("`r`"),
        Just("'c'"),
        Just("nil"),
        Just("true"),
        Just("0"),
        Just("-3"),
        Just("2.5"),
        Just("(list 1 2 3)"),
        Just("(dict \"k\" \"v\")"),
    ]
    .prop_map(str::to_owned)
}

/// A pipeline: an operand or call, then functions.
fn pipeline() -> impl Strategy<Value = String> {
    let function = prop_oneof![
        Just("quote"),
        Just("squote"),
        Just("upper"),
        Just("trim"),
        Just("toYaml"),
        Just("toJson"),
        Just("fromYaml"),
        Just("b64enc"),
        Just("b64dec"),
        Just("len"),
        Just("default \"d\""),
        Just("indent 2"),
        Just("nindent 4"),
        Just("printf \"%v-%d\""),
        Just("required \"r\""),
        Just("first"),
        Just("keys"),
        Just("int"),
        Just("toString"),
        Just("sha256sum"),
        Just("tpl"),
        Just("not"),
        Just("empty"),
    ];
    (
        prop_oneof![
            operand(),
            (operand(), operand()).prop_map(|(a, b)| format!("eq {a} {b}")),
            (operand(), operand()).prop_map(|(a, b)| format!("index {a} {b}")),
            operand().prop_map(|a| format!("include \"h\" {a}")),
            operand().prop_map(|a| format!("get {a} \"k\"")),
            operand().prop_map(|a| format!("fail {a}")),
        ],
        proptest::collection::vec(function, 0..4),
    )
        .prop_map(|(head, functions)| {
            std::iter::once(head)
                .chain(functions.into_iter().map(str::to_owned))
                .collect::<Vec<_>>()
                .join(" | ")
        })
}

/// Template text: text, actions and (possibly unbalanced) control structures.
fn template() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z: \n-]{0,12}",
        pipeline().prop_map(|p| format!("{{{{ {p} }}}}")),
        pipeline().prop_map(|p| format!("{{{{- $x := {p} -}}}}")),
        pipeline().prop_map(|p| format!("{{{{ if {p} }}}}")),
        pipeline().prop_map(|p| format!("{{{{ range $i, $v := {p} }}}}")),
        pipeline().prop_map(|p| format!("{{{{ with {p} }}}}")),
        Just("{{ else }}".to_owned()),
        Just("{{ end }}".to_owned()),
        Just("{{ break }}".to_owned()),
        Just("{{ template \"n\" . }}".to_owned()),
        Just("{{ define \"d\" }}x{{ end }}".to_owned()),
        Just("{{/* c */}}".to_owned()),
        Just("{{".to_owned()),
        Just("}}".to_owned()),
        Just("\n---\n".to_owned()),
        "\\PC{0,4}",
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

/// Values given on top of `values.yaml`.
fn values() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-5i64..20).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        Just(Value::String("{{ .Values.s }}".into())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn templates_from_helms_vocabulary_render_or_fail_cleanly(text in template(), values in values()) {
        let values = match values {
            Value::Object(map) => Value::Object(map),
            other => serde_json::json!({"a": other}),
        };
        let _ = render_bounded(text, values);
        assert_peak_rss_bounded();
    }

    #[test]
    fn arbitrary_manifests_text_is_parsed_or_refused_cleanly(text in "\\PC{0,400}") {
        let outcome = bounded(move || {
            seedlet_chartrender::parse_documents("t.yaml", &text).map_err(|error| error.to_string())
        });
        if let Err(message) = outcome {
            prop_assert!(!message.is_empty());
        }
    }
}

#[test]
fn a_template_error_names_its_template() {
    let error = render_bounded("{{ if }}".to_owned(), serde_json::json!({})).unwrap_err();
    assert!(error.contains("t.yaml"), "{error}");
    let error =
        render_bounded("{{ fail \"boom\" }}".to_owned(), serde_json::json!({})).unwrap_err();
    assert!(error.contains("boom"), "{error}");
}
