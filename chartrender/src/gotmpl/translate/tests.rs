//! Tests of the Go template → minijinja translation (`super`).

use super::super::parser::parse;
use super::*;

fn known(name: &str) -> bool {
    matches!(
        name,
        "include"
            | "quote"
            | "default"
            | "eq"
            | "and"
            | "or"
            | "not"
            | "list"
            | "add"
            | "hasKey"
            | "keys"
    )
}

fn jinja(source: &str) -> String {
    let parsed = parse("t", source, &known).unwrap();
    translate("t", source, &parsed.body, None).unwrap().source
}

#[test]
fn translate_passes_the_piped_value_last() {
    assert_eq!(
        jinja(r#"{{ .Values.x | default "a" | quote }}"#),
        r#"{{f_quote(f_default("a",_d0.Values.x))}}"#
    );
}

#[test]
fn translate_maps_and_or_not_to_operators() {
    assert_eq!(
        jinja("{{ and .A (or .B .C) | not }}"),
        "{{(not (_d0.A and ((_d0.B or _d0.C))))}}"
    );
}

#[test]
fn translate_rebinds_dot_in_with_and_range() {
    assert_eq!(
        jinja("{{ with .A }}{{ .B }}{{ $.C }}{{ end }}"),
        "{% set _d1 = _d0.A %}{%if _d1%}{{_d1.B}}{{_d0.C}}{%endif%}"
    );
    assert_eq!(
        jinja("{{ range $k, $v := .M }}{{ $k }}={{ $v.x }}{{ else }}none{{ end }}"),
        "{% for _k1, _d1 in f_range_pairs(_d0.M) %}{{f_tick()}}{{_k1}}={{_d1.x}}{%else%}none{%endfor%}"
    );
}

#[test]
fn a_range_with_an_else_records_its_own_breaks_only() {
    // minijinja would run the `else` after a `break` in the first iteration; Go runs it only for an empty range.
    assert_eq!(
        jinja("{{ range .L }}{{ break }}{{ else }}none{{ end }}"),
        "{% set _v = namespace() %}{% set _v.b1 = false %}{% for _d1 in f_range_values(_d0.L) %}{{f_tick()}}{% set _v.b1 = true %}{%break%}{%else%}{%if not _v.b1%}none{%endif%}{%endfor%}"
    );
    // A break in an `else` list ends that range statement: the list runs in a loop of one.
    assert_eq!(
        jinja("{{ range .L }}{{ range .M }}{{ else }}{{ break }}x{{ end }}{{ end }}"),
        "{% for _d1 in f_range_values(_d0.L) %}{{f_tick()}}{% for _d2 in f_range_values(_d1.M) %}{{f_tick()}}{%else%}{% for _once in [0] %}{%break%}x{%endfor%}{%endfor%}{%endfor%}"
    );
    // A break of a nested range, or of a range without an else, is left as it is.
    assert_eq!(
        jinja("{{ range .L }}{{ range .M }}{{ break }}{{ end }}{{ else }}none{{ end }}"),
        "{% for _d1 in f_range_values(_d0.L) %}{{f_tick()}}{% for _d2 in f_range_values(_d1.M) %}{{f_tick()}}{%break%}{%endfor%}{%else%}none{%endfor%}"
    );
}

#[test]
fn translate_keeps_variables_in_a_namespace_with_go_scoping() {
    let out = jinja("{{ $c := 0 }}{{ range .L }}{{ $c = add $c . }}{{ end }}{{ $c }}");
    assert_eq!(
        out,
        "{% set _v = namespace() %}{% set _v.v1 = 0 %}{% for _d2 in f_range_values(_d0.L) %}{{f_tick()}}{% set _v.v1 = f_add(_v.v1,_d2) %}{%endfor%}{{_v.v1}}"
    );
    let text = "{{ if .A }}{{ $x := 1 }}{{ end }}{{ $x }}";
    let parsed = parse("t", text, &known).unwrap();
    assert!(
        translate("t", text, &parsed.body, None)
            .unwrap_err()
            .message
            .contains("undefined variable")
    );
}

#[test]
fn needs_escape_finds_minijinja_openers() {
    let cases = [
        ("", false),
        ("plain: text", false),
        ("json: {\"a\": 1}", false),
        ("a {{ b", true),
        ("a {% b", true),
        ("a {# b", true),
        ("ends with {", true),
        ("{ {x} }", false),
        ("{x{{", true),
    ];
    for (text, want) in cases {
        assert_eq!(needs_escape(text), want, "{text:?}");
    }
}

#[test]
fn translate_preserves_line_numbers_across_trimmed_newlines() {
    let out = jinja("a\n{{- .X }}\n\n{{- .Y }}");
    assert_eq!(out, "a{#\n#}{{_d0.X}}{#\n\n#}{{_d0.Y}}");
}

#[test]
fn translate_escapes_jinja_delimiters_in_text_and_calls_methods() {
    assert_eq!(jinja("{% raw %} {#"), r#"{{"{% raw %} {#"}}"#);
    assert_eq!(
        jinja(r#"{{ .Files.Get "a" }}"#),
        r#"{{_d0.Files.Get("a")}}"#
    );
    assert_eq!(
        jinja(r#"{{ template "x" }}"#),
        r#"{{f_template("x",none)}}"#
    );
    assert_eq!(
        jinja(r#"{{ (list 1 -2).x }}"#),
        r#"{{f__field((f_list(1,(-2))),"x")}}"#
    );
}

#[test]
fn translate_chains_unwrapped_values_through_field_and_checks_declared_lookups() {
    let cases = [
        // Declared variables and pipelines are unwrapped by Go: their chains go through `f__field`.
        (
            "{{ $x := 1 }}{{ $x.a.b }}",
            r#"{% set _v = namespace() %}{% set _v.v1 = 1 %}{{f__field(_v.v1,"a","b")}}"#,
        ),
        ("{{ list.a }}", r#"{{f__field((f_list()),"a")}}"#),
        // A field given to a map parameter is checked for nil; a variable or a pipeline is not.
        (
            "{{ hasKey .m \"x\" }}{{ hasKey (.m) \"x\" }}{{ .m | keys }}",
            r#"{{f_hasKey(f__map_arg(_d0.m),"x")}}{{f_hasKey((_d0.m),"x")}}{{f_keys(_d0.m)}}"#,
        ),
        // `$`, `.` and range variables stay attribute lookups.
        ("{{ $.a.b }}{{ .c }}", "{{_d0.a.b}}{{_d0.c}}"),
        (
            "{{ range $v := .L }}{{ $v.a }}{{ end }}",
            "{% for _d1 in f_range_values(_d0.L) %}{{f_tick()}}{{_d1.a}}{%endfor%}",
        ),
        // A declaration of a lookup tests the chain, so a field of a non-map fails even if never read (and the
        // failure points at the chain).
        (
            "{{ $x := .a.b }}",
            "{% set _v = namespace() %}{% set _v.v1 = _d0.a.b %}{%if _d0.a.b%}{%endif%}",
        ),
        (
            "{{ $x := list }}",
            "{% set _v = namespace() %}{% set _v.v1 = f_list() %}",
        ),
    ];
    for (go, want) in cases {
        assert_eq!(jinja(go), want, "{go}");
    }
}

#[test]
fn output_tags_keep_a_space_before_a_sign() {
    // `{{-` and `{{+` would be whitespace control.
    assert_eq!(jinja("{{ -1 }}{{ +2 }}{{ 3 }}"), "{{(-1)}}{{2}}{{3}}");
    for (written, want) in [
        ("{{-1}}", "{{ -1}}"),
        ("{{+x}}", "{{ +x}}"),
        ("{{x-1}}", "{{x-1}}"),
    ] {
        let mut out = written.to_string();
        space_before_sign(&mut out, 2);
        assert_eq!(out, want);
    }
}

#[test]
fn actions_are_kept_as_their_place_in_the_template_text() {
    let text = "a {{ .X }}\n{{ if .Y }}b{{ end }}{{ template \"t\" }}";
    let parsed = parse("t", text, &known).unwrap();
    let translated = translate("t", text, &parsed.body, None).unwrap();
    let actions: Vec<(usize, &str)> = translated
        .actions
        .iter()
        .map(|(line, range)| (*line, &text[range.clone()]))
        .collect();
    assert_eq!(
        actions,
        [
            (1, "{{ .X }}"),
            (2, "{{ if .Y }}"),
            (2, "{{ template \"t\" }}")
        ]
    );
    assert_eq!(span_in(text, "elsewhere"), 0..0);
}

#[test]
fn alias_paths_are_their_names_joined_by_dots() {
    let text = "{{ .Values.a.b }}{{ $.Release.Name }}{{ .Values.a.b }}{{ .Values.x }}";
    let parsed = parse("t", text, &known).unwrap();
    let translated = translate("t", text, &parsed.body, Some("_t0_0")).unwrap();
    assert_eq!(translated.source, "{{_p0}}{{_p1}}{{_p0}}{{_p2}}");
    assert_eq!(
        translated.aliases,
        ["Values.a.b", "Release.Name", "Values.x"]
    );
}

#[test]
fn operands_given_arguments_are_named_as_go_prints_them() {
    let known = |name: &str| matches!(name, "print" | "quote");
    for (source, want) in [
        ("{{ 3 4 }}", Some("3")),
        ("{{ \"a\" 4 }}", Some("\"a\"")),
        ("{{ . 4 }}", Some(".")),
        ("{{ $ 4 }}", Some("$")),
        ("{{ nil 4 }}", Some("nil")),
        (
            "{{ (print 1 .a $.b | quote) 4 }}",
            Some("print 1 .a $.b | quote"),
        ),
        ("{{ ((3)) 4 }}", Some("(3)")),
        ("{{ .a 4 }}", None),
        ("{{ print 4 }}", None),
    ] {
        let parsed = super::super::parser::parse("t", source, &known).unwrap();
        let Node::Action { pipe, .. } = &parsed.body[0] else {
            panic!("{source}: no action")
        };
        let head = &pipe.commands[0].args[0];
        assert_eq!(
            super::emit::non_function_text(head).as_deref(),
            want,
            "{source}"
        );
    }
}
