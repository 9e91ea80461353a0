//! Render limits: charts that build huge values, huge output or run forever fail promptly with
//! an error naming the limit and the place, instead of exhausting memory or time.

mod common;

use std::time::{Duration, Instant};

use seedlet_chartrender::{Chart, Limits, RenderError, RenderOptions, Renderer};

use common::chart;

/// How long a failing render may take before the test calls the failure not prompt. Generous
/// for debug builds on a shared machine; the runaway templates below would run for minutes or
/// abort the process.
const PROMPT: Duration = Duration::from_secs(30);

fn render_with(chart: &Chart, limits: Limits) -> Result<(), RenderError> {
    let options = RenderOptions {
        limits,
        ..RenderOptions::default()
    };
    Renderer::new().render(chart, &options).map(drop)
}

/// Renders `template` as `templates/t.yaml` and returns the limit error with how long it took.
fn limit_error(template: &str, limits: Limits) -> (&'static str, Option<usize>, String, Duration) {
    let chart = chart(&[("t.yaml", template)], "");
    let started = Instant::now();
    let result = render_with(&chart, limits);
    let took = started.elapsed();
    match result {
        Err(RenderError::Limit {
            template,
            line,
            limit,
            message,
        }) => {
            assert_eq!(template, "test/templates/t.yaml");
            (limit, line, message, took)
        }
        other => panic!("expected a limit error, got {other:?}"),
    }
}

#[test]
fn doubling_a_string_fails_at_the_value_limit_when_print_concatenates() {
    let (limit, line, message, took) = limit_error(
        "a: 1\n{{ $s := \"x\" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}{{ $s }}\n",
        Limits::default(),
    );
    assert_eq!(limit, "maxValueBytes");
    assert_eq!(line, Some(2));
    assert!(message.contains("test/templates/t.yaml:2"), "{message}");
    assert!(
        message.contains("print: a value of 33554432 bytes is over maxValueBytes = 16777216 bytes"),
        "{message}"
    );
    assert!(took < PROMPT, "took {took:?}");
}

#[test]
fn doubling_fails_for_every_concatenating_function() {
    for step in [
        "printf \"%s%s\" $s $s",
        "cat $s $s",
        "list $s $s | join \"\"",
        "replace \"x\" \"xx\" $s",
        "nindent 0 (print $s $s)",
        "regexReplaceAll \"x\" $s \"xx\"",
        "include \"double\" $s",
        // tpl's data is a chartutil.Values holding `Template` (Helm reads its name and base path first).
        "tpl \"{{ .s }}{{ .s }}\" (dict \"s\" $s \"Template\" $.Template)",
        "toYaml (list $s $s)",
    ] {
        let template = format!(
            "{{{{ define \"double\" }}}}{{{{ . }}}}{{{{ . }}}}{{{{ end }}}}{{{{ $s := \"x\" }}}}{{{{ range until 40 }}}}{{{{ $s = {step} }}}}{{{{ end }}}}"
        );
        let limits = Limits {
            max_value_bytes: 1 << 20,
            ..Limits::default()
        };
        let (limit, _, message, took) = limit_error(&template, limits);
        assert_eq!(limit, "maxValueBytes", "{step}: {message}");
        assert!(
            message.contains("maxValueBytes = 1048576 bytes"),
            "{step}: {message}"
        );
        assert!(took < PROMPT, "{step} took {took:?}");
    }
}

#[test]
fn repeating_many_large_strings_fails_at_the_output_limit() {
    let (limit, line, message, _) = limit_error(
        "{{ range until 64 }}{{ repeat 16000000 \"x\" }}\n{{ end }}",
        Limits::default(),
    );
    assert_eq!(limit, "maxOutputBytes");
    assert_eq!(line, Some(1));
    assert!(
        message.contains("over maxOutputBytes = 67108864 bytes"),
        "{message}"
    );
}

#[test]
fn output_limit_counts_all_files_of_the_chart() {
    let big = "{{ repeat 6000000 \"x\" }}\n";
    let chart = chart(&[("a.yaml", big), ("b.yaml", big)], "");
    let limits = Limits {
        max_output_bytes: 10_000_000,
        ..Limits::default()
    };
    let err = render_with(&chart, limits).unwrap_err();
    assert!(
        matches!(
            err,
            RenderError::Limit {
                limit: "maxOutputBytes",
                ..
            }
        ),
        "{err:?}"
    );
    render_with(
        &chart,
        Limits {
            max_output_bytes: 13_000_000,
            ..Limits::default()
        },
    )
    .expect("both files fit under 13 MB");
}

#[test]
fn a_long_running_range_fails_at_the_render_time_limit() {
    let limits = Limits {
        max_render_time: Duration::from_millis(300),
        ..Limits::default()
    };
    // 10^15 iterations that call no function besides the loop itself.
    let (limit, line, message, took) = limit_error(
        "{{ range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}",
        limits,
    );
    assert_eq!(limit, "maxRenderTime");
    assert_eq!(line, Some(1));
    assert!(
        message.contains("rendering takes longer than maxRenderTime = 300ms"),
        "{message}"
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn quadratic_list_growth_fails_at_the_render_time_limit() {
    let limits = Limits {
        max_render_time: Duration::from_millis(300),
        ..Limits::default()
    };
    let (limit, _, _, took) = limit_error(
        "{{ $l := list }}{{ range until 1000000 }}{{ $l = append $l . }}{{ end }}",
        limits,
    );
    assert_eq!(limit, "maxRenderTime");
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn a_huge_list_fails_at_the_item_limit_before_it_is_built() {
    for template in [
        "{{ $l := until 100000000 }}",
        "{{ $l := splitList \"\" (repeat 2000000 \"x\") }}",
        "{{ $l := concat (until 600000) (until 600000) }}",
    ] {
        let (limit, _, message, took) = limit_error(template, Limits::default());
        assert_eq!(limit, "maxValueItems", "{template}: {message}");
        assert!(
            message.contains("is over maxValueItems = 1000000"),
            "{message}"
        );
        assert!(took < PROMPT, "{template} took {took:?}");
    }
}

#[test]
fn printing_exponentially_shared_lists_fails_before_formatting() {
    let (limit, _, message, _) = limit_error(
        "{{ $l := list \"xxxxxxxxxxxxxxxx\" }}{{ range until 64 }}{{ $l = list $l $l }}{{ end }}{{ $l | toJson }}",
        Limits::default(),
    );
    assert_eq!(limit, "maxValueBytes");
    assert!(message.contains("toJson"), "{message}");
}

#[test]
fn configured_limits_replace_the_defaults() {
    let chart = chart(&[("t.yaml", "{{ repeat 2000 \"x\" }}")], "");
    render_with(&chart, Limits::default()).expect("2000 bytes fit the defaults");
    let err = render_with(
        &chart,
        Limits {
            max_value_bytes: 1000,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("repeat: a value of 2000 bytes is over maxValueBytes = 1000 bytes"),
        "{err}"
    );
}

#[test]
fn a_renderer_renders_normally_after_a_chart_hit_a_limit() {
    let renderer = Renderer::new();
    let bomb = chart(&[("t.yaml", "{{ repeat 20000000 \"x\" }}")], "");
    assert!(renderer.render(&bomb, &RenderOptions::default()).is_err());
    let fine = chart(&[("t.yaml", "a: {{ repeat 3 \"x\" }}\n")], "");
    let out = renderer
        .render(&fine, &RenderOptions::default())
        .expect("renders");
    assert_eq!(out.templates["test/templates/t.yaml"], "a: xxx\n");
}

/// Renders `template` and returns the error text (the render must fail).
fn render_error(template: &str) -> String {
    let chart = chart(&[("t.yaml", template)], "");
    match render_with(&chart, Limits::default()) {
        Err(error) => error.to_string(),
        Ok(()) => panic!("expected {template:?} to fail"),
    }
}

#[test]
fn deeply_nested_and_self_containing_values_fail_instead_of_overflowing_the_stack() {
    // Each of these aborted the whole process with a stack overflow when the value was
    // printed, encoded, compared or dropped.
    let cases = [
        (
            r#"{{ $d := dict }}{{ range until 100000 }}{{ $d = dict "a" $d }}{{ end }}{{ toJson $d }}"#,
            "dict: a value nested more than 256 levels deep",
        ),
        (
            "{{ $d := list }}{{ range until 100000 }}{{ $d = list $d }}{{ end }}{{ $d }}",
            "list: a value nested more than 256 levels deep",
        ),
        (
            "{{ $d := list }}{{ range until 100000 }}{{ $d = append (list) $d }}{{ end }}{{ eq $d $d }}",
            "append: a value nested more than 256 levels deep",
        ),
        (
            r#"{{ $d := dict }}{{ $_ := set $d "a" $d }}{{ toYaml $d }}"#,
            "set: a value that would contain itself",
        ),
        (
            r#"{{ $d := dict }}{{ $_ := set $d "l" (list (dict "x" $d)) }}{{ deepCopy $d }}"#,
            "set: a value that would contain itself",
        ),
        (
            r#"{{ $d := dict }}{{ $_ := mergeOverwrite $d (dict "x" $d) }}{{ toJson $d }}"#,
            "mergeOverwrite: a value that would contain itself",
        ),
        (
            r#"{{ $d := dict }}{{ range until 100000 }}{{ $n := dict }}{{ $_ := set $n "a" $d }}{{ $d = $n }}{{ end }}{{ $d }}"#,
            "set: a value nested more than 256 levels deep",
        ),
    ];
    for (template, expected) in cases {
        let started = Instant::now();
        let error = render_error(template);
        assert!(error.contains(expected), "{template}: {error}");
        assert!(started.elapsed() < PROMPT, "{template}");
    }
}

#[test]
fn nesting_up_to_the_bound_and_shared_values_render() {
    let chart = chart(
        &[(
            "t.yaml",
            "{{ $d := dict }}{{ range until 200 }}{{ $d = dict \"a\" $d }}{{ end }}\
             {{ $l := list 1 }}{{ range until 60 }}{{ $l = list $l $l }}{{ end }}\
             n: {{ toJson $d | len }}\n",
        )],
        "",
    );
    render_with(&chart, Limits::default())
        .expect("a 200-level value and a list of 2^60 shared paths render");
}

#[test]
fn deeply_nested_flow_yaml_is_refused_before_the_parser_spends_minutes_on_it() {
    // 100 000 nested `{a: ` took the YAML parser 38 s.
    let deep = format!("{}1{}", "{a: ".repeat(100_000), "}".repeat(100_000));
    let started = Instant::now();
    let template = format!("{{{{ $m := fromYaml {deep:?} }}}}e: {{{{ $m.Error | quote }}}}\n");
    let rendered = Renderer::new()
        .render(
            &chart(&[("t.yaml", &template)], ""),
            &RenderOptions::default(),
        )
        .expect("fromYaml reports its error in the map, as in Helm");
    let text = format!("{rendered:?}");
    assert!(text.contains("nested more than 64 deep"), "{text}");
    let values = format!("a: {deep}\n");
    let archive = common::archive(
        "deep",
        &[
            ("Chart.yaml", "apiVersion: v2\nname: deep\nversion: 0.1.0\n"),
            ("values.yaml", &values),
            ("templates/t.yaml", "a: 1\n"),
        ],
    );
    let error = match Chart::from_archive(&archive, &Limits::default()) {
        Err(error) => seedlet_chartrender_error_chain(&error),
        Ok(_) => panic!("deep values must be refused"),
    };
    assert!(error.contains("nested more than 64 deep"), "{error}");
    let output =
        seedlet_chartrender::parse_documents("deep/templates/t.yaml", &"[".repeat(100_000))
            .expect_err("rendered output is parsed with the same guard");
    assert!(
        seedlet_chartrender_error_chain(&output).contains("nested more than 64 deep"),
        "{output}"
    );
    assert!(started.elapsed() < PROMPT, "took {:?}", started.elapsed());
}

/// An error with its causes.
fn seedlet_chartrender_error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}
