//! Property tests: the loader and the Go-template translator never panic on arbitrary input.

mod common;

use proptest::prelude::*;
use seedlet_chartrender::{Chart, Limits};

fn small_limits() -> Limits {
    Limits {
        max_entries: 50,
        max_total_bytes: 1 << 20,
        max_file_bytes: 1 << 18,
        max_depth: 3,
        ..Limits::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn loader_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = Chart::from_bytes(&bytes, &small_limits());
        let _ = Chart::from_archive(&common::gzip(&bytes), &small_limits());
    }

    #[test]
    fn loader_never_panics_on_mutated_archives(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = common::archive("c", &[("Chart.yaml", "name: c\nversion: 1.0.0\n"), ("templates/a.yaml", "a: {{ .Values.x }}\n")]);
        for (index, value) in flips {
            let i = index.index(bytes.len());
            bytes[i] = value;
        }
        let _ = Chart::from_archive(&bytes, &small_limits());
    }

    #[test]
    fn translator_never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let chart = common::chart(&[("t.yaml", &text)], "");
        let _ = common::render(&chart, serde_json::json!({}));
    }

    #[test]
    fn translator_never_panics_on_template_like_text(
        parts in proptest::collection::vec(prop_oneof![
            Just("{{"), Just("}}"), Just("{{-"), Just("-}}"), Just(" "), Just("\n"), Just("if"), Just("else"), Just("end"),
            Just("range"), Just("with"), Just("define"), Just("template"), Just("block"), Just("break"), Just("$x"), Just(":="),
            Just("="), Just("|"), Just("("), Just(")"), Just(".Values.a"), Just("."), Just("$"), Just("\"s\""), Just("1"),
            Just("-2.5"), Just("include"), Just("quote"), Just("default"), Just("toYaml"), Just("tpl"), Just("/*"), Just("*/"),
            Just("{%"), Just("#}"), Just("`raw`"), Just("'c'"), Just(","), Just("nil"), Just("true"), Just("and"), Just("not"),
        ], 0..40)
    ) {
        let text: String = parts.concat();
        let chart = common::chart(&[("t.yaml", &text), ("_h.tpl", "{{ define \"x\" }}{{ include \"x\" . }}{{ end }}")], "a: [1, 2]\n");
        let _ = common::render(&chart, serde_json::json!({}));
    }
}
