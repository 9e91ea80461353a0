//! Go template semantics kept through the translation: control flow, scoping, functions, objects and errors.

mod common;

use common::{chart, render, render_one};

#[test]
fn range_over_maps_is_key_sorted_with_index_and_value() {
    let out = render_one(
        "{{ range $k, $v := .Values.m }}{{ $k }}={{ $v }};{{ end }}",
        "m: {b: 2, a: 1, c: x}\n",
    )
    .unwrap();
    assert_eq!(out, "a=1;b=2;c=x;");
}

#[test]
fn range_supports_break_continue_and_else() {
    let template = "{{ range $i, $e := .Values.l }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ if gt $e 3.0 }}{{ break }}{{ end }}{{ $e }}{{ end }}|{{ range .Values.none }}x{{ else }}empty{{ end }}";
    assert_eq!(
        render_one(template, "l: [1, 2, 3, 4, 5]\n").unwrap(),
        "13|empty"
    );
}

#[test]
fn variables_assigned_in_range_are_visible_after_it() {
    let template =
        "{{- $sum := 0 }}{{ range .Values.l }}{{ $sum = add $sum . }}{{ end }}{{ $sum }}";
    assert_eq!(render_one(template, "l: [1, 2, 3]\n").unwrap(), "6");
}

#[test]
fn with_rebinds_dot_and_dollar_stays_root() {
    let template = "{{ with .Values.a }}{{ .b }}-{{ $.Release.Name }}{{ else }}none{{ end }}|{{ with .Values.missing }}x{{ else }}{{ .Release.Namespace }}{{ end }}";
    assert_eq!(
        render_one(template, "a: {b: deep}\n").unwrap(),
        "deep-rel|ns"
    );
}

#[test]
fn else_if_chains_pick_the_first_true_branch_and_else_with_is_refused() {
    let template = "{{ if eq .Values.m \"a\" }}A{{ else if eq .Values.m \"b\" }}B{{ else if .Values.w }}W{{ .Values.w }}{{ else }}O{{ end }}";
    assert_eq!(render_one(template, "m: b\n").unwrap(), "B");
    assert_eq!(render_one(template, "m: z\nw: 1\n").unwrap(), "W1");
    assert_eq!(render_one(template, "m: z\n").unwrap(), "O");
    // Helm v3.11.3 is built with Go 1.19, whose parser has no `{{else with}}` (Go 1.23 added it).
    let err = render_one(
        "{{ with .Values.a }}a{{ else with .Values.w }}w{{ end }}",
        "w: 1\n",
    )
    .unwrap_err();
    assert!(err.contains("unexpected <with> in else"), "{err}");
}

#[test]
fn and_or_return_operands_and_short_circuit() {
    let template = "{{ or .Values.missing \"fallback\" }}|{{ and 1 \"last\" }}|{{ and false (fail \"not evaluated\") }}|{{ not .Values.missing }}";
    assert_eq!(
        render_one(template, "").unwrap(),
        "fallback|last|false|true"
    );
}

#[test]
fn missing_values_print_nothing_and_fields_on_them_fail() {
    assert_eq!(
        render_one("[{{ .Values.missing }}][{{ .Values.nul }}]", "nul: null\n").unwrap(),
        "[][]"
    );
    let err = render_one("a\n{{ .Values.missing.deeper }}", "").unwrap_err();
    assert!(err.contains("test/templates/t.yaml:2"), "{err}");
    assert!(err.contains(".Values.missing.deeper"), "{err}");
}

#[test]
fn include_returns_a_string_usable_in_pipelines_and_dollar_is_its_argument() {
    let helpers = "{{- define \"h\" -}}{{ $.name }}:{{ .name | upper }}{{- end -}}";
    let chart = chart(
        &[
            ("_h.tpl", helpers),
            (
                "t.yaml",
                "{{ include \"h\" (dict \"name\" \"x\") | quote }}{{ template \"h\" .Values }}",
            ),
        ],
        "name: v\n",
    );
    let out = render(&chart, serde_json::json!({})).unwrap();
    assert_eq!(out.templates["test/templates/t.yaml"], "\"x:X\"v:V");
    assert!(!out.templates.contains_key("test/templates/_h.tpl"));
}

#[test]
fn block_defines_a_default_that_a_define_can_override() {
    let chart = chart(
        &[
            ("a.yaml", "{{ block \"b\" . }}default{{ end }}"),
            ("_o.tpl", ""),
        ],
        "",
    );
    assert_eq!(
        render(&chart, serde_json::json!({})).unwrap().templates["test/templates/a.yaml"],
        "default"
    );
}

#[test]
fn recursive_includes_hit_the_depth_limit_instead_of_overflowing() {
    let chart = chart(
        &[
            ("_r.tpl", "{{ define \"r\" }}{{ include \"r\" . }}{{ end }}"),
            ("t.yaml", "{{ include \"r\" . }}"),
        ],
        "",
    );
    let err = render(&chart, serde_json::json!({})).unwrap_err();
    assert!(
        err.ends_with(
            "error calling include: rendering template has a nested reference name: r: unable to execute template"
        ),
        "{}",
        &err[err.len().saturating_sub(300)..]
    );
}

/// Helm counts open `include` calls per name and refuses the one that finds more than 1000 open: 1001 nested
/// calls of one name render, the 1002nd fails (checked against Helm v3.11.3's engine).
#[test]
fn a_thousand_and_one_nested_includes_of_one_name_render_and_one_more_fails() {
    let template = |levels: usize| {
        let define = format!(
            "{{{{ define \"r\" }}}}{{{{ if lt (len .) {levels} }}}}{{{{ include \"r\" (append . 1) }}}}{{{{ else }}}}{{{{ len . }}}}{{{{ end }}}}{{{{ end }}}}"
        );
        chart(
            &[
                ("_r.tpl", define.as_str()),
                ("t.yaml", "{{ include \"r\" (list) }}"),
            ],
            "",
        )
    };
    let out = render(&template(1000), serde_json::json!({})).unwrap();
    assert_eq!(out.templates["test/templates/t.yaml"], "1000");
    let err = render(&template(1001), serde_json::json!({})).unwrap_err();
    assert!(
        err.ends_with(
            "rendering template has a nested reference name: r: unable to execute template"
        ),
        "{}",
        &err[err.len().saturating_sub(300)..]
    );
}

#[test]
fn tpl_renders_strings_with_the_template_set() {
    let chart = chart(
        &[
            ("_h.tpl", "{{ define \"n\" }}named{{ end }}"),
            ("t.yaml", "{{ tpl .Values.s . }}|{{ tpl \"plain\" . }}"),
        ],
        "s: \"{{ .Release.Name }}-{{ include \\\"n\\\" . }}-{{ index .Values.ports 1 }}\"\nports: [80, 443]\n",
    );
    assert_eq!(
        render(&chart, serde_json::json!({})).unwrap().templates["test/templates/t.yaml"],
        "rel-named-443|plain"
    );
}

#[test]
fn required_and_fail_report_template_line_and_message() {
    let err = render_one("a: 1\nb: {{ required \"b is required\" .Values.b }}", "").unwrap_err();
    assert_eq!(
        err,
        "execution error at (test/templates/t.yaml:2:6): b is required"
    );
    let chart = chart(
        &[
            ("_h.tpl", "{{ define \"f\" }}\n{{ fail \"boom\" }}{{ end }}"),
            ("t.yaml", "{{ include \"f\" . }}"),
        ],
        "",
    );
    let err = render(&chart, serde_json::json!({})).unwrap_err();
    // Helm names the outermost call that led to the failure (checked with Helm v3.11.3's engine).
    assert_eq!(err, "execution error at (test/templates/t.yaml:1:3): boom");
}

#[test]
fn long_texts_print_verbatim_and_keep_the_lines_of_later_errors() {
    // Texts of 256 bytes or more are printed from globals instead of minijinja source: their output and the
    // Go line of a later failure must be as for short texts (Helm: `t.yaml:<line>:<column>`).
    let long = "# {% not jinja %} {# nor this #}\n".repeat(12);
    let lines = long.lines().count();
    let template = format!("{long}{{{{ .Values.a }}}}\n{long}{{{{ fail \"boom\" }}}}");
    let err = render_one(&template, "a: x\n").unwrap_err();
    let want_line = 2 * lines + 2;
    assert_eq!(
        err,
        format!("execution error at (test/templates/t.yaml:{want_line}:3): boom")
    );
    let ok = render_one(
        &format!("{long}{{{{ .Values.a }}}}\n{long}<no value>"),
        "a: x\n",
    )
    .unwrap();
    assert_eq!(ok, format!("{long}x\n{long}"));
}

#[test]
fn values_changed_by_one_render_are_fresh_in_the_next() {
    // A renderer reuses the `.Values` maps of a render that changed no map; revision 2 changes them, so
    // revision 3 must start again from the chart's values.
    let chart = chart(
        &[(
            "t.yaml",
            "{{ if eq .Release.Revision 2 }}{{ $_ := set .Values \"x\" 1 }}{{ end }}x={{ .Values.x }}",
        )],
        "y: 0\n",
    );
    let renderer = seedlet_chartrender::Renderer::new();
    let render = |revision: i64| {
        let options = seedlet_chartrender::RenderOptions {
            revision,
            ..Default::default()
        };
        renderer.render(&chart, &options).unwrap().templates["test/templates/t.yaml"].clone()
    };
    let outputs: Vec<String> = [1, 1, 2, 3, 1].into_iter().map(render).collect();
    assert_eq!(outputs, ["x=", "x=", "x=1", "x=", "x="]);
}

#[test]
fn root_data_kept_between_renders_follows_the_release_and_forgets_changes() {
    // A renderer keeps every template's root data (`.`, `.Release`, `.Capabilities`, `.Template`) of a render
    // that changed no map. Another release name must be seen, a render that sets a key on `.` must not leak it
    // into the next one, and each render reports its own `.Capabilities.APIVersions.Has` misses.
    let chart = chart(
        &[(
            "t.yaml",
            "{{ .Release.Name }} {{ .Capabilities.APIVersions.Has \"x/v1\" }} {{ .Template.Name }} k={{ .k }}\
             {{ if eq .Release.Name \"b\" }}{{ $_ := set . \"k\" 1 }}{{ end }}",
        )],
        "",
    );
    let renderer = seedlet_chartrender::Renderer::new();
    for name in ["a", "a", "b", "a", "c", "c"] {
        let options = seedlet_chartrender::RenderOptions {
            release_name: name.into(),
            ..Default::default()
        };
        let rendered = renderer.render(&chart, &options).unwrap();
        assert_eq!(
            rendered.templates["test/templates/t.yaml"],
            format!("{name} false test/templates/t.yaml k=")
        );
        assert_eq!(
            rendered.api_version_misses.into_iter().collect::<Vec<_>>(),
            ["x/v1"],
            "{name}"
        );
    }
}

#[test]
fn field_paths_keep_their_results_and_errors_in_files_and_defines() {
    // Chart templates read paths such as `.Values.a.b` through one name each, resolved when read: the results and
    // the errors (a field of a missing value, on its line) must stay those of the field lookups.
    let values = "a: {b: x, n: null}\n";
    let cases = [
        (
            "{{ .Values.a.b }}|{{ .Values.missing }}|{{ $.Values.a.b }}|{{ .Values.a.n }}|{{ .Release.Name }}",
            Ok("x||x||rel"),
        ),
        (
            "{{ define \"d\" }}{{ .a.b }}{{ end }}{{ include \"d\" .Values }}|{{ range .Values.a }}{{ $.Values.a.b }}{{ end }}",
            Ok("x|xx"),
        ),
        (
            "line 1\n\n{{ .Values.missing.b }}",
            Err(
                "template: test/templates/t.yaml:3:10: executing \"test/templates/t.yaml\" at <.Values.missing.b>",
            ),
        ),
        (
            "{{ define \"d\" }}\n{{ .x.y }}{{ end }}{{ include \"d\" .Values.a.b }}",
            Err(
                "error calling include: template: test/templates/t.yaml:2:5: executing \"d\" at <.x.y>",
            ),
        ),
    ];
    for (template, want) in cases {
        let got = render_one(template, values);
        match (want, &got) {
            (Ok(want), Ok(got)) => assert_eq!(got, want, "{template}"),
            (Err(want), Err(got)) => {
                assert!(got.contains(want), "{template}: {got}");
                assert!(
                    got.ends_with("nil pointer evaluating interface {}.b")
                        || got.ends_with("can't evaluate field x in type string"),
                    "{template}: {got}"
                );
            }
            _ => panic!("{template}: {got:?}"),
        }
    }
}

#[test]
fn parse_errors_name_template_and_line() {
    let err = render_one("a\n{{ if .X }}\n", "").unwrap_err();
    assert_eq!(
        err,
        "parse error at (test/templates/t.yaml:3): unexpected EOF"
    );
    let err = render_one("{{ nosuchfunc 1 }}", "").unwrap_err();
    assert!(err.contains("function \"nosuchfunc\" not defined"), "{err}");
}

#[test]
fn to_yaml_and_nindent_produce_helm_layout() {
    let template = "spec:{{ toYaml .Values.s | nindent 2 }}";
    let out = render_one(template, "s: {b: [1, 2], a: {c: \"true\"}}\n").unwrap();
    assert_eq!(out, "spec:\n  a:\n    c: \"true\"\n  b:\n  - 1\n  - 2");
}

#[test]
fn printf_and_print_follow_go_fmt() {
    let out = render_one("{{ printf \"%s-%d-%v-%05.1f\" \"a\" 3 .Values.f 2.25 }}|{{ print \"a\" 1 2 }}|{{ .Values.big }}", "f: 1.5\nbig: 1000000\n").unwrap();
    assert_eq!(out, "a-3-1.5-002.2|a1 2|1e+06");
}

#[test]
fn set_and_unset_change_values_seen_by_later_actions() {
    let template = "{{- $c := fromYaml \"a: {b: 1, name: x}\" }}{{ $_ := unset $c.a \"name\" }}{{ $_ := set $c \"k\" \"v\" }}{{ toJson $c }}";
    assert_eq!(
        render_one(template, "").unwrap(),
        r#"{"a":{"b":1},"k":"v"}"#
    );
}

#[test]
fn files_and_capabilities_are_available() {
    let mut files: Vec<(&str, &str)> = vec![
        ("Chart.yaml", "apiVersion: v2\nname: test\nversion: 1.2.3\n"),
        ("files/a.conf", "x=1\n"),
        ("files/b.conf", "y=2\n"),
        (
            "templates/t.yaml",
            "{{ .Files.Get \"files/a.conf\" }}{{ (.Files.Glob \"files/*.conf\").AsConfig }}\n{{ .Capabilities.KubeVersion.Version }} {{ .Capabilities.APIVersions.Has \"v1\" }} {{ .Capabilities.APIVersions.Has \"example.com/v1\" }} {{ .Template.BasePath }} {{ .Chart.Name }}-{{ .Chart.Version }}",
        ),
    ];
    files.sort();
    let chart = seedlet_chartrender::Chart::from_archive(
        &common::archive("test", &files),
        &Default::default(),
    )
    .unwrap();
    let out = render(&chart, serde_json::json!({})).unwrap();
    assert_eq!(
        out.templates["test/templates/t.yaml"],
        "x=1\na.conf: |\n  x=1\nb.conf: |\n  y=2\nv1.20.0 true false test/templates test-1.2.3"
    );
    // Helm's `helm template` defaults: its built-in version set, the absent version recorded as a miss.
    assert_eq!(
        out.api_version_misses.into_iter().collect::<Vec<_>>(),
        ["example.com/v1"]
    );
}

#[test]
fn capabilities_come_from_the_options() {
    let chart = chart(
        &[(
            "t.yaml",
            "{{ .Capabilities.KubeVersion.Minor }} {{ .Capabilities.APIVersions.Has \"example.com/v1/Widget\" }} {{ .Capabilities.APIVersions.Has \"apps/v1\" }} {{ len .Capabilities.APIVersions }}",
        )],
        "",
    );
    let options = seedlet_chartrender::RenderOptions {
        kube_version: "v1.31.2".into(),
        api_versions: vec!["example.com/v1".into(), "example.com/v1/Widget".into()],
        ..Default::default()
    };
    let out = seedlet_chartrender::Renderer::new()
        .render(&chart, &options)
        .unwrap();
    assert_eq!(out.templates["test/templates/t.yaml"], "31 true false 2");
    assert_eq!(
        out.api_version_misses.into_iter().collect::<Vec<_>>(),
        ["apps/v1"]
    );
}

#[test]
fn subcharts_get_scoped_values_globals_conditions_and_aliases() {
    let files: Vec<(&str, &str)> = vec![
        (
            "Chart.yaml",
            "apiVersion: v2\nname: parent\nversion: 1.0.0\ndependencies:\n- name: sub\n  alias: renamed\n- name: gone\n  condition: gone.enabled\n",
        ),
        (
            "values.yaml",
            "global: {reg: parent-reg}\nrenamed: {port: 1}\ngone: {enabled: false}\n",
        ),
        ("charts/sub/Chart.yaml", "name: sub\nversion: 0.1.0\n"),
        (
            "charts/sub/values.yaml",
            "port: 9\nother: d\nglobal: {reg: sub-reg, own: o}\n",
        ),
        (
            "charts/sub/templates/s.yaml",
            "{{ .Chart.Name }} {{ .Values.port }} {{ .Values.other }} {{ .Values.global.reg }} {{ .Values.global.own }}",
        ),
        // Not `off`: Helm reads a plain `off` as the boolean false, in Chart.yaml and values alike.
        ("charts/gone/Chart.yaml", "name: gone\nversion: 0.1.0\n"),
        ("charts/gone/templates/o.yaml", "never"),
        ("templates/p.yaml", "{{ .Values.renamed.other }}"),
    ];
    let chart = seedlet_chartrender::Chart::from_archive(
        &common::archive("parent", &files),
        &Default::default(),
    )
    .unwrap();
    let out = render(&chart, serde_json::json!({"renamed": {"other": "user"}})).unwrap();
    assert_eq!(
        out.templates["parent/charts/renamed/templates/s.yaml"],
        "renamed 1 user parent-reg o"
    );
    assert_eq!(out.templates["parent/templates/p.yaml"], "user");
    assert!(!out.templates.keys().any(|k| k.contains("/gone/")));
}

#[test]
fn supplied_null_removes_a_default_and_supplied_values_win() {
    let chart = chart(
        &[(
            "t.yaml",
            "{{ .Values.replicas }}|{{ .Values.foo | default \"gone\" }}",
        )],
        "replicas: 1\nfoo: bar\n",
    );
    let out = render(&chart, serde_json::json!({"replicas": 3, "foo": null})).unwrap();
    assert_eq!(out.templates["test/templates/t.yaml"], "3|gone");
}

#[test]
fn manifests_drop_notes_hooks_and_comment_only_documents() {
    let chart = chart(
        &[
            ("NOTES.txt", "notes"),
            (
                "a.yaml",
                "# only a comment\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: h\n  annotations:\n    helm.sh/hook: pre-install\n",
            ),
            (
                "b.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n",
            ),
        ],
        "",
    );
    let out = render(&chart, serde_json::json!({})).unwrap();
    assert!(!out.templates.contains_key("test/templates/NOTES.txt"));
    let kinds: Vec<String> = out
        .manifests()
        .unwrap()
        .iter()
        .map(|m| m.object["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["Namespace", "Secret"]);
}

#[test]
fn invalid_yaml_output_names_the_template() {
    let chart = chart(&[("bad.yaml", "a: [unclosed\n")], "");
    let err = render(&chart, serde_json::json!({}))
        .unwrap()
        .manifests()
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("YAML parse error on test/templates/bad.yaml"),
        "{err}"
    );
}

#[test]
fn jinja_syntax_in_chart_text_is_kept_literally() {
    assert_eq!(
        render_one("{% raw %} {# x #} {{ \"{{\" }}", "").unwrap(),
        "{% raw %} {# x #} {{"
    );
}

#[test]
fn repeated_includes_see_mutations_made_by_and_between_calls() {
    let helpers = "{{- define \"inc\" }}{{ $_ := set . \"n\" (add1 .n) }}{{ .n }}{{ end -}}{{- define \"show\" }}{{ .a }}{{ end -}}";
    let template = "{{- $c := dict \"n\" 0 }}{{ include \"inc\" $c }}{{ include \"inc\" $c }}|{{ $d := dict \"a\" \"x\" }}{{ include \"show\" $d }}{{ include \"show\" $d }}{{ $_ := set $d \"a\" \"y\" }}{{ include \"show\" $d }}";
    let chart = chart(&[("_h.tpl", helpers), ("t.yaml", template)], "");
    assert_eq!(
        render(&chart, serde_json::json!({})).unwrap().templates["test/templates/t.yaml"],
        "12|xxy"
    );
}

#[test]
fn globals_reach_grandchildren_and_only_subcharts_get_an_empty_global() {
    // Facts from Helm v3.11.3's engine: the top chart's values have `global` only when defined; every subchart
    // gets one, and the parent's globals reach the subchart's own subcharts.
    let files: Vec<(&str, &str)> = vec![
        ("Chart.yaml", "apiVersion: v2\nname: p\nversion: 1.0.0\n"),
        ("values.yaml", "x: 1\n"),
        ("templates/p.yaml", "{{ toJson .Values }}"),
        (
            "charts/a/Chart.yaml",
            "apiVersion: v2\nname: a\nversion: 0.1.0\n",
        ),
        ("charts/a/values.yaml", "x: 1\n"),
        ("charts/a/templates/a.yaml", "{{ toJson .Values }}"),
        (
            "charts/a/charts/b/Chart.yaml",
            "apiVersion: v2\nname: b\nversion: 0.1.0\n",
        ),
        ("charts/a/charts/b/templates/b.yaml", "{{ toJson .Values }}"),
    ];
    let chart = seedlet_chartrender::Chart::from_archive(
        &common::archive("p", &files),
        &Default::default(),
    )
    .unwrap();
    let out = render(&chart, serde_json::json!({})).unwrap();
    assert_eq!(
        out.templates["p/templates/p.yaml"],
        r#"{"a":{"b":{"global":{}},"global":{},"x":1},"x":1}"#
    );
    let out = render(&chart, serde_json::json!({"global": {"g": 1}})).unwrap();
    assert_eq!(
        out.templates["p/charts/a/charts/b/templates/b.yaml"],
        r#"{"global":{"g":1}}"#
    );
    assert_eq!(
        out.templates["p/templates/p.yaml"],
        r#"{"a":{"b":{"global":{"g":1}},"global":{"g":1},"x":1},"global":{"g":1},"x":1}"#
    );
}

#[test]
fn private_use_characters_pass_through_renders_that_made_no_stray_byte() {
    // U+10FF80… stand for stray bytes only in a render that has stray bytes: a cut character here
    // does not make the same characters in another render's values read as bytes.
    let cut = render_one(r#"{{ "ü" | substr 0 1 }}|{{ "\xc3" }}"#, "").unwrap();
    assert_eq!(cut, "\u{FFFD}|\u{FFFD}");
    let private = "\u{10FF80}\u{10FFFF}";
    let values = format!("text: \"{private}\"\n");
    let plain = render_one("{{ .Values.text }}|{{ len .Values.text }}", &values).unwrap();
    assert_eq!(plain, format!("{private}|8"));
    // In the render that cuts a character, the same characters are read as the bytes they stand for.
    let mixed = render_one(
        r#"{{ .Values.text }}|{{ "ü" | substr 0 1 }}|{{ len .Values.text }}"#,
        &values,
    )
    .unwrap();
    assert_eq!(mixed, "\u{FFFD}\u{FFFD}|\u{FFFD}|2");
}

#[test]
fn escaped_bytes_of_a_translated_chart_print_as_go_prints_them_on_every_render() {
    // The `"\xc3"` literal is unquoted once, when the chart is translated; each render must still know that its
    // templates hold a stray byte.
    let chart = chart(&[("t.yaml", r#"{{ "\xc3" }}|{{ "\xc3" | len }}"#)], "");
    let renderer = seedlet_chartrender::Renderer::new();
    let options = seedlet_chartrender::RenderOptions::default();
    for _ in 0..2 {
        let out = renderer.render(&chart, &options).unwrap();
        assert_eq!(out.templates["test/templates/t.yaml"], "\u{FFFD}|1");
    }
}

/// Answers `lookup` with one ConfigMap, or nothing.
#[derive(Debug)]
struct OneConfigMap(bool);

impl seedlet_chartrender::Lookup for OneConfigMap {
    fn lookup(
        &self,
        _api_version: &str,
        _kind: &str,
        _namespace: &str,
        _name: &str,
    ) -> Result<Option<serde_json::Value>, String> {
        Ok(self
            .0
            .then(|| serde_json::json!({"data": {"mode": "changed"}})))
    }
}

#[test]
fn field_paths_kept_from_an_unchanged_render_are_read_again_after_a_set() {
    // The first two renders change no map, so the third reuses their root data and what its paths gave; its
    // `lookup` answer (not part of what decides reuse) makes it `set` a value, which the reads after it see.
    let chart = chart(
        &[(
            "t.yaml",
            r#"{{ .Values.a.mode }}{{ $cm := lookup "v1" "ConfigMap" "ns" "x" }}{{ if $cm }}{{ $_ := set .Values.a "mode" $cm.data.mode }}{{ end }}-{{ .Values.a.mode }}"#,
        )],
        "a:\n  mode: orig\n",
    );
    let renderer = seedlet_chartrender::Renderer::new();
    let render_with = |found: bool| {
        let options = seedlet_chartrender::RenderOptions {
            lookup: Some(std::sync::Arc::new(OneConfigMap(found))),
            ..Default::default()
        };
        renderer.render(&chart, &options).unwrap().templates["test/templates/t.yaml"].clone()
    };
    assert_eq!(render_with(false), "orig-orig");
    assert_eq!(render_with(false), "orig-orig");
    assert_eq!(render_with(true), "orig-changed");
    assert_eq!(
        render_with(false),
        "orig-orig",
        "the changed root data is not kept"
    );
}

#[test]
fn the_last_definition_wins_when_templates_are_compiled_while_translating() {
    // Two files large enough to be translated with the helper thread (which compiles what it translated early)
    // define the same name; Helm keeps the definition parsed last (reverse lexical order: `x1.yaml`'s).
    // `x1.yaml` is the larger: the calling thread translates it, and the helper translates (and compiles) `x2.yaml`.
    let body = |word: &str, lines: usize| {
        let lines = "{{ .Values.a }}\n".repeat(lines);
        format!("{{{{ define \"shared\" }}}}{word}{{{{ end }}}}{lines}")
    };
    let (one, two) = (body("one", 700), body("two", 600));
    for (x1, x2) in [
        (one.as_str(), two.as_str()),
        (
            "{{ define \"shared\" }}one{{ end }}",
            "{{ define \"shared\" }}two{{ end }}",
        ),
    ] {
        let chart = chart(
            &[
                ("x1.yaml", x1),
                ("x2.yaml", x2),
                ("use.yaml", "{{ include \"shared\" . }}"),
            ],
            "a: 1\n",
        );
        let out = render(&chart, serde_json::json!({})).unwrap();
        assert_eq!(out.templates["test/templates/use.yaml"], "one");
    }
}

/// Helm's engine gives the templates of one chart one root map, setting `.Template` before each, and names each
/// subchart's root map under `.Subcharts` (`tests/fixtures/own/shared-root`; the texts are Helm v3.11.3's).
#[test]
fn templates_of_a_chart_share_their_root_data_and_subcharts_name_theirs() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/own/shared-root");
    let chart = seedlet_chartrender::Chart::from_dir(&dir, &seedlet_chartrender::Limits::default())
        .unwrap();
    let out = render(&chart, serde_json::json!({})).unwrap().templates;
    assert_eq!(
        out["shared-root/templates/a.yaml"],
        "a: from-b shared-root/templates/a.yaml vb true\n\
         keys-a: Capabilities,Chart,Files,Release,Subcharts,Template,Values,leak\n\
         sub: s  map[string]interface {} shared-root/charts/s/templates/c.yaml by-c\n\
         template: chartutil.Values shared-root/templates\n"
    );
    assert_eq!(
        out["shared-root/templates/b.yaml"],
        "b: shared-root/templates/b.yaml \n\
         keys-b: Capabilities,Chart,Files,Release,Subcharts,Template,Values,leak\n"
    );
    assert_eq!(
        out["shared-root/charts/s/templates/d.yaml"],
        "d:  shared-root/charts/s/templates/d.yaml map[string]interface {}\n"
    );
    assert_eq!(
        out["shared-root/charts/s/templates/c.yaml"],
        "c:  shared-root/charts/s/templates/c.yaml \n"
    );
}

/// A `tpl` string renders in Helm's set for it: the string first, then every chart file but the calling one, each
/// `define` replacing the one before unless its body is empty (`tests/fixtures/own/tpl-template-set`; the texts are
/// Helm v3.11.3's). So the calling file's definitions give way to another file's, the string's own give way to
/// another file's, and an empty `define` keeps the earlier body, in the chart's set too.
#[test]
fn tpl_strings_render_in_helms_template_set_for_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/own/tpl-template-set");
    let chart = seedlet_chartrender::Chart::from_dir(&dir, &seedlet_chartrender::Limits::default())
        .unwrap();
    let out = render(&chart, serde_json::json!({})).unwrap().templates;
    assert_eq!(
        out["tpl-template-set/templates/Last.yaml"],
        "include-x: x from Last\n\
         tpl-x: x from _helpers 1\n\
         tpl-own-y: y from _helpers\n\
         tpl-own-z: z from the string\n\
         include-e: e from _helpers text\n\
         tpl-e: e from _helpers text\n\
         include-blank: blank from Last\n\
         tpl-blank: [ ]\n"
    );
    assert_eq!(
        out["tpl-template-set/templates/other.yaml"],
        "other-tpl-x: x from Last\nother-tpl-blank: blank from Last\n"
    );
}
