//! Tests of the Go template parser (`super`).

use super::*;

fn known(name: &str) -> bool {
    matches!(name, "include" | "quote" | "default" | "eq" | "and")
}

fn parse_ok(source: &str) -> Parsed<'_> {
    parse("t", source, &known).unwrap()
}

#[test]
fn parse_builds_pipelines_with_arguments() {
    let parsed = parse_ok(r#"{{ include "x" . | quote }}"#);
    let Node::Action { pipe, .. } = &parsed.body[0] else {
        panic!("expected action")
    };
    assert_eq!(pipe.commands.len(), 2);
    assert_eq!(pipe.commands[0].args[0], Operand::Function("include"));
    assert_eq!(pipe.commands[0].args[2], Operand::Field(vec![]));
}

#[test]
fn parse_treats_spaced_fields_as_new_arguments() {
    let parsed = parse_ok("{{ quote $ .A }}");
    let Node::Action { pipe, .. } = &parsed.body[0] else {
        panic!("expected action")
    };
    assert_eq!(pipe.commands[0].args.len(), 3);
}

#[test]
fn parse_nests_else_if_into_the_else_branch() {
    let parsed = parse_ok("{{ if .A }}a{{ else if .B }}b{{ else }}c{{ end }}");
    let Node::Branch {
        otherwise: Some(otherwise),
        ..
    } = &parsed.body[0]
    else {
        panic!("expected branch")
    };
    assert!(matches!(
        &otherwise[0],
        Node::Branch {
            otherwise: Some(_),
            ..
        }
    ));
}

#[test]
fn parse_collects_defines_and_blocks() {
    let parsed = parse_ok(r#"{{ define "a" }}x{{ end }}{{ block "b" . }}y{{ end }}"#);
    assert_eq!(parsed.defines.len(), 2);
    assert!(matches!(&parsed.body[0], Node::Template { name, .. } if name == "b"));
}

#[test]
fn parse_reads_range_declarations_and_chains() {
    let parsed = parse_ok("{{ range $k, $v := .M }}{{ ($v).x.y }}{{ break }}{{ end }}");
    let Node::Range { pipe, body, .. } = &parsed.body[0] else {
        panic!("expected range")
    };
    assert_eq!(pipe.vars, ["k", "v"]);
    assert!(
        matches!(&body[0], Node::Action { pipe, .. } if matches!(&pipe.commands[0].args[0], Operand::Chain(_, path) if path.len() == 2))
    );
}

#[test]
fn parse_reports_unexpected_eof_at_the_last_line() {
    let err = parse("t", "a\n{{ if .X }}\nb\n", &known).unwrap_err();
    assert_eq!((err.line, err.message.as_str()), (4, "unexpected EOF"));
}

#[test]
fn parse_rejects_unknown_functions_and_stray_ends() {
    assert!(
        parse("t", "{{ nope 1 }}", &known)
            .unwrap_err()
            .message
            .contains("\"nope\" not defined")
    );
    assert!(parse("t", "{{ end }}", &known).is_err());
    assert!(parse("t", "{{ break }}", &known).is_err());
    // A constant given arguments is Go's error when it runs, one in a later pipeline stage its parser's.
    assert!(parse("t", "{{ 1 2 }}", &known).is_ok());
    assert_eq!(
        parse("t", "{{ 1 | quote | 2 }}", &known)
            .unwrap_err()
            .message,
        "non executable command in pipeline stage 3"
    );
}

#[test]
fn parse_number_reads_go_literals() {
    assert_eq!(parse_number("0x1F"), Some(Operand::Int(31)));
    assert_eq!(parse_number("1_000"), Some(Operand::Int(1000)));
    assert_eq!(parse_number("-2.5"), Some(Operand::Float(-2.5)));
    assert_eq!(parse_number("1e3"), Some(Operand::Float(1000.0)));
    assert_eq!(parse_number("1.2.3"), None);
    assert_eq!(parse_number("-0x1.8p1"), Some(Operand::Float(-3.0)));
    assert_eq!(parse_number("0X1P-2"), Some(Operand::Float(0.25)));
    assert_eq!(parse_number("0x1.8"), None);
}

/// Go's `(*parse.Tree).add` within one file: an empty body gives way, a second body that is not empty is an error at
/// its `{{end}}`'s line (texts from Helm v3.11.3's engine).
#[test]
fn a_name_defined_twice_in_one_file_follows_gos_empty_tree_rule() {
    let defined = |source| -> Result<Vec<String>, String> {
        let parsed = parse("t", source, &known).map_err(|e| e.to_string())?;
        Ok(parsed
            .defines
            .iter()
            .map(|(name, body)| match body.first() {
                Some(Node::Text { text, .. }) => format!("{name}={}", text.trim()),
                Some(_) => format!("{name}=<action>"),
                None => format!("{name}="),
            })
            .collect())
    };
    let cases: [(&str, Result<Vec<&str>, &str>); 6] = [
        (
            "{{define \"d\"}}one{{end}}{{define \"d\"}} {{/* c */}} {{end}}",
            Ok(vec!["d=one"]),
        ),
        (
            "{{define \"d\"}} {{end}}{{define \"d\"}}two{{end}}",
            Ok(vec!["d=two"]),
        ),
        (
            "{{define \"d\"}}{{end}}{{define \"e\"}}e{{end}}{{define \"d\"}}{{.}}{{end}}",
            Ok(vec!["d=<action>", "e=e"]),
        ),
        (
            "{{define \"g\"}}one{{end}}\n{{define \"g\"}}\ntwo\n{{end}}",
            Err("parse error at (t:4): multiple definition of template \"g\""),
        ),
        (
            "{{block \"g\" .}}one{{end}}\n{{define \"g\"}}two{{end}}",
            Err("parse error at (t:2): multiple definition of template \"g\""),
        ),
        (
            "{{define \"g\"}}one{{end}}{{define \"h\"}}two{{end}}",
            Ok(vec!["g=one", "h=two"]),
        ),
    ];
    for (source, want) in cases {
        let want = want
            .map(|names| names.into_iter().map(String::from).collect())
            .map_err(String::from);
        assert_eq!(defined(source), want, "{source}");
    }
}

#[test]
fn empty_trees_hold_only_blank_text() {
    for (source, empty) in [
        ("", true),
        (" \n\t", true),
        ("{{/* note */}}  ", true),
        ("{{- /* note */ -}}\u{a0}", true),
        ("x", false),
        ("{{ . }}", false),
        ("{{ if . }}{{ end }}", false),
    ] {
        assert_eq!(is_empty_tree(&parse_ok(source).body), empty, "{source:?}");
    }
}
