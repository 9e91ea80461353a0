//! Table tests of the YAML 1.1 rewrite (`super`), from go-yaml v2's and sigs.k8s.io/yaml's behaviour.

use super::*;

/// [`as_yaml11`] of a text it does not refuse.
fn yaml11_of(text: &str) -> Cow<'_, str> {
    as_yaml11(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

#[test]
fn booleans_are_read_like_go_yaml_v2() {
    let cases = [
        ("y: 1\n", "\"true\": 1\n"),
        (
            "n: 1\nyes: 2\nOFF: 3\n",
            "\"false\": 1\n\"true\": 2\n\"false\": 3\n",
        ),
        ("a: yes\nb: Off # c\n", "a: true\nb: false # c\n"),
        (
            "l:\n  - on\n  - no\n  - y: n\n",
            "l:\n  - true\n  - false\n  - \"true\": false\n",
        ),
        // Not plain booleans: quoted, other words, inside text.
        (
            "a: \"yes\"\nb: 'on'\nc: yesterday\nd: yes please\n",
            "a: \"yes\"\nb: 'on'\nc: yesterday\nd: yes please\n",
        ),
        // Block scalars keep their text; the next key is read again.
        (
            "s: |\n  y: 1\n  on\nn: x\n",
            "s: |\n  y: 1\n  on\n\"false\": x\n",
        ),
        (
            "s: >-\n  off\n\n  yes\nt: on\n",
            "s: >-\n  off\n\n  yes\nt: true\n",
        ),
        // Comments stay as written.
        ("# y: 1\na: 1\n", "# y: 1\na: 1\n"),
        ("x-y: on\nport.name: N\n", "x-y: true\nport.name: false\n"),
        // Lines without a candidate between rewritten ones are copied as they are.
        (
            "a: 1\nb: on\nc: 2 # x|\nd: n\n",
            "a: 1\nb: true\nc: 2 # x|\nd: false\n",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(yaml11_of(input), want, "{input:?}");
    }
}

/// Each spelling's reading checked against Helm v3.11.3 (`typeOf` and the printed value of a values entry).
#[test]
fn numbers_are_read_like_go_yaml_v2() {
    let cases = [
        ("1_000", Some("1000")),
        ("1__0", Some("10")),
        ("1_", Some("1")),
        ("-_1", Some("-1")),
        ("017", Some("15")),
        ("0_17", Some("15")),
        ("00", Some("0")),
        ("-0o17", Some("-15")),
        ("0X1F", Some("31")),
        ("0x_1F", Some("31")),
        ("0B11", Some("3")),
        ("0O17", Some("15")),
        ("+0x10", Some("16")),
        ("08", Some("8.0")),
        ("09.5", Some("9.5")),
        ("1_0.5", Some("10.5")),
        ("1_000.000_1", Some("1000.0001")),
        ("1_000e1", Some("10000.0")),
        (".5_0", Some("0.5")),
        ("0.5e1_0", Some("5000000000.0")),
        ("9223372036854775808", None),
        ("18446744073709551615", None),
        ("18446744073709551616", Some("1.8446744073709552e19")),
        // Already read alike, or strings in both.
        ("42", None),
        ("0", None),
        ("-7", None),
        ("0x1F", Some("31")),
        ("1:30", None),
        ("0o", None),
        ("0x", None),
        ("1e", None),
        ("2001-12-14", None),
        ("1.2.3", None),
    ];
    for (word, want) in cases {
        assert_eq!(yaml12_spelling(word).as_deref(), want, "{word}");
    }
    assert_eq!(
        yaml11_of("a: 1_000 # n\nl:\n  - 017\ns: \"017\"\nb: |\n  017\n"),
        "a: 1000 # n\nl:\n  - 15\ns: \"017\"\nb: |\n  017\n"
    );
}

/// Each line's reading checked against Helm v3.11.3 (`toJson .Values`).
#[test]
fn flow_collections_on_one_line_are_read_like_go_yaml_v2() {
    let cases = [
        ("l: [017, 1_000, 0X1F]\n", "l: [15, 1000, 31]\n"),
        (
            "m: {a: 017, y: on} # c\n",
            "m: {a: 15, \"true\": true} # c\n",
        ),
        ("- [y, \"y\", 'n', no]\n", "- [true, \"y\", 'n', false]\n"),
        ("c: [{a: [1_0]}, x]\n", "c: [{a: [10]}, x]\n"),
        // Nothing to change, or not closed on the line.
        ("a: [1, b, \"017\"]\n", "a: [1, b, \"017\"]\n"),
    ];
    for (input, want) in cases {
        assert_eq!(yaml11_of(input), want, "{input:?}");
    }
}

/// Each case checked against Helm v3.11.3 (`toJson .Values`).
#[test]
fn flow_collections_over_several_lines_are_read_like_go_yaml_v2() {
    let cases = [
        ("b: [017,\n  1_0]\n", "b: [15,\n  10]\n"),
        (
            "m: {\n  y: on, # y: on\n  a: [0x1F,\n    \"y\"]\n}\nn: off\n",
            "m: {\n  \"true\": true, # y: on\n  a: [31,\n    \"y\"]\n}\n\"false\": false\n",
        ),
        (
            "l:\n- [\n  'it''s ]', y\n  ]\nz: 017\n",
            "l:\n- [\n  'it''s ]', true\n  ]\nz: 15\n",
        ),
        (
            "x:\n  - {a: 1_0,\n     b: [y,\n  n]}\n  - 017\n",
            "x:\n  - {a: 10,\n     b: [true,\n  false]}\n  - 15\n",
        ),
        // Never closed: left to the YAML 1.2 reading, line by line.
        ("a: [017,\n  1_0\nb: 017\n", "a: [017,\n  1_0\nb: 15\n"),
    ];
    for (input, want) in cases {
        assert_eq!(yaml11_of(input), want, "{input:?}");
    }
}

/// Each key's reading checked against Helm v3.11.3 (`toJson .Values`).
#[test]
fn keys_become_json_keys_like_sigs_k8s_yaml() {
    let cases = [
        ("1_0", Some("10")),
        ("017", Some("15")),
        ("0x1F", Some("31")),
        ("-0x1", Some("-1")),
        ("+12", Some("12")),
        ("0b101", Some("5")),
        ("1e3", Some("1000")),
        ("1.0e+2", Some("100")),
        (".5", Some("0.5")),
        ("0.1", None),
        ("08", Some("8")),
        ("-0.0", Some("-0")),
        ("16777217.0", Some("1.6777216e+07")),
        ("1234567.0", Some("1.234567e+06")),
        ("0.000001", Some("1e-06")),
        ("3.4028235e38", Some("3.4028235e+38")),
        ("1e39", Some(".inf")),
        ("+.Inf", Some(".inf")),
        (".NaN", Some(".nan")),
        ("True", Some("true")),
        ("y", Some("true")),
        ("OFF", Some("false")),
        ("-9223372036854775808", None),
        // Strings in go-yaml v2 too, or refused by Helm (left as they are).
        ("1e400", None),
        ("_1", None),
        ("2001-12-14", None),
        ("9223372036854775808", None),
        ("a1", None),
        // Integers above `int64` in another base: spelled in decimal, which the parser reads as a `u64`.
        ("01000000000000000000000", Some("9223372036854775808")),
        ("0x8000000000000000", Some("9223372036854775808")),
        ("01777777777777777777777", Some("18446744073709551615")),
    ];
    for (word, want) in cases {
        assert_eq!(yaml11_key(word).as_deref(), want, "{word}");
    }
    assert_eq!(
        yaml11_of("1e3: a\n- 017: b\n  -1: c\nm: {0x10: x, 1.5: [017]}\n.nan: d\nx1: 1\n"),
        "\"1000\": a\n- \"15\": b\n  -1: c\nm: {\"16\": x, 1.5: [15]}\n.nan: d\nx1: 1\n"
    );
    // A refused key stays bare for the parser, in a block line and in a flow mapping alike.
    assert_eq!(
        yaml11_of("01000000000000000000000: a\nm: {0X8000000000000000: b, 017: c}\n"),
        "9223372036854775808: a\nm: {9223372036854775808: b, \"15\": c}\n"
    );
}

#[test]
fn boolean_words_are_found_only_as_whole_letter_runs() {
    let cases = [
        ("y", true),
        ("a: Off", true),
        ("x,no]", true),
        ("é y", true),
        ("TRUE: 1", true),
        ("yesterday", false),
        ("only", false),
        ("éy", true),
        ("a_on", true),
        ("nothing here", false),
        ("", false),
    ];
    for (text, want) in cases {
        assert_eq!(has_boolean_word(text), want, "{text:?}");
        let split = text
            .split(|c: char| !c.is_ascii_alphabetic())
            .any(|word| yaml11_bool(word).is_some() || yaml12_bool_key(word).is_some());
        assert_eq!(split, want, "the character split agrees on {text:?}");
    }
}

#[test]
fn comments_are_cut_only_where_no_quote_can_hide_them() {
    let cases = [
        ("a: 1 # x_y", "a: 1 "),
        ("# all comment", ""),
        ("a: 1\t# x", "a: 1\t"),
        ("a#b: 1", "a#b: 1"),
        ("a: \"v\" # x_y", "a: \"v\" "),
        ("a: 'it''s' # on", "a: 'it''s' "),
        ("a: \"x # y\"", "a: \"x # y\""),
        ("a: [it's, 'b # c', y]", "a: [it's, 'b # c', y]"),
        ("a: \"open # on", "a: \"open # on"),
        ("a: b", "a: b"),
    ];
    for (line, want) in cases {
        assert_eq!(before_comment(line), want, "{line:?}");
    }
}

#[test]
fn text_without_candidates_is_borrowed() {
    assert!(matches!(yaml11_of("a: 1\nb: [x]\n"), Cow::Borrowed(_)));
    assert!(matches!(
        yaml11_of("a: {}\nb: {c: 1, d: x}\nTrueish: 2\n"),
        Cow::Borrowed(_)
    ));
    // Candidates in full-line comments only: nothing to rewrite.
    let commented = "# no: on, 017, a_b\na: 1\n  # yes\n";
    assert!(matches!(yaml11_of(commented), Cow::Borrowed(_)));
    // A candidate on a line that is not all comment still rewrites the text.
    assert_eq!(yaml11_of("# no\na: yes # on\n"), "# no\na: true # on\n");
    // Candidates only in comments after values (dns-service's image tag line), after quoted values too.
    let trailing = "image:\n  tag: \"v1\" # set_version, on 017\n  name: 'x' # y\n";
    assert!(matches!(yaml11_of(trailing), Cow::Borrowed(_)));
    // A `#` inside a word opens no comment: `_` in the key is still a candidate (the key stays a string).
    assert!(matches!(yaml11_of("a#b_c: x\n"), Cow::Owned(_)));
    assert_eq!(yaml11_of("a#b_c: x\n"), "a#b_c: x\n");
    // A `#` followed by a quote may be inside a quoted scalar: the rest of the line is still looked at.
    assert_eq!(yaml11_of("a: [\"x # q\", y]\n"), "a: [\"x # q\", true]\n");
    assert_eq!(
        yaml11_of("a: [it's, 'b # c', y]\n"),
        "a: [it's, 'b # c', true]\n"
    );
    assert_eq!(
        yaml11_of("a: 'x' # b\nc: on # d\n"),
        "a: 'x' # b\nc: true # d\n"
    );
    // A numeric block key below the first line is found by the first pass over the whole text too.
    assert!(matches!(yaml11_of("a: 1\n1e3: x\n"), Cow::Owned(_)));
}

#[test]
fn number_candidates_are_found_like_the_pattern_they_replace() {
    // `_|(?:^|[^0-9A-Za-z.])0[0-9XOB]`, the regex the byte scan replaces, gives the expected answer of every case.
    let pattern = regex::Regex::new(r"_|(?:^|[^0-9A-Za-z.])0[0-9XOB]").unwrap();
    let cases = [
        ("", false),
        ("a: 1", false),
        ("a_b: 1", true),
        ("0", false),
        ("00", true),
        ("07: x", true),
        ("0X1F", true),
        ("0x1f", false),
        ("0O17", true),
        ("0B101", true),
        ("0b101", false),
        ("a: 0.5", false),
        ("a: 10", false),
        ("a: 100", false),
        ("a: 1.05", false),
        ("v0.01", false),
        ("a: 012", true),
        ("a: -012", true),
        ("a: [012]", true),
        ("x\n09", true),
        ("é09", true),
        ("a0X", false),
        ("tag: \"0.2.9\"", false),
        ("tag: \"00.2\"", true),
        ("port: 8080", false),
        ("10250", false),
        ("a: 0", false),
    ];
    for (text, want) in cases {
        assert_eq!(may_hold_number_candidate(text), want, "{text:?}");
        assert_eq!(pattern.is_match(text), want, "pattern on {text:?}");
    }
}

#[test]
fn boolean_words_are_found_only_as_whole_runs_of_letters() {
    // The word list, split by characters as the first version of the check did, gives the expected answer.
    let reference = |text: &str| {
        text.split(|c: char| !c.is_ascii_alphabetic())
            .any(|word| yaml11_bool(word).is_some() || yaml12_bool_key(word).is_some())
    };
    let cases = [
        ("", false),
        ("y", true),
        ("a: y", true),
        ("ay: 1", false),
        ("yy: 1", false),
        ("key: yes", true),
        ("key: yesno", false),
        ("key: Yes1", true),
        ("on", true),
        ("onion: On", true),
        ("onion: one", false),
        ("OFF", true),
        ("OFFSET", false),
        ("True: 1", true),
        ("true: 1", false),
        ("TRUE", true),
        ("Falsey", false),
        ("x: FALSE # c", true),
        ("n-1", true),
        ("nn", false),
        ("éno", true),
        ("énoé", true),
        ("äN", true),
        ("no_way", true),
        ("enabled: false", false),
        ("port: 8080", false),
        ("image: eu.gcr.io/gardener-project/cert", false),
    ];
    for (text, want) in cases {
        assert_eq!(has_boolean_word(text), want, "{text:?}");
        assert_eq!(reference(text), want, "reference on {text:?}");
    }
}

/// The general check [`line_may_change`] makes when [`surely_unchanged`] lets a line through.
fn general_may_change(line: &str) -> bool {
    let content = if line.contains('#') {
        before_comment(line)
    } else {
        line
    };
    !content.trim_start().is_empty() && has_candidate(content)
}

#[test]
fn surely_unchanged_lines_are_unchanged_for_the_general_check() {
    // Every line of up to four bytes from the bytes the checks look at, and some longer ones.
    let alphabet = b" \t-0123_{,:#\"'.+eyonNOTFax\r";
    let mut lines = vec![String::new()];
    let mut last = vec![String::new()];
    for _ in 0..4 {
        let mut next = Vec::new();
        for prefix in &last {
            for &b in alphabet {
                let mut line = prefix.clone();
                line.push(char::from(b));
                next.push(line);
            }
        }
        lines.extend(next.iter().cloned());
        last = next;
    }
    lines.extend(
        [
            "image:",
            "  repository: europe-docker.pkg.dev/gardener-project/public/gardener/extensions/os",
            "  pullPolicy: IfNotPresent",
            "  tag: latest # on",
            "  - name: x",
            "  - 10.0.0.0/8",
            "  port: 8080",
            "  port: 443",
            "  enabled: true",
            "  enabled: no",
            "  a: {b: 1}",
            "  a: {1: b}",
            "  a: [on, off]",
            "  mode: \"InPlaceOrRecreate\"",
            "  x: a_b",
            "  - -1: x",
            "  .5: x",
            "  ämter: ön",
            "Yes: 1",
            "  sizes: 1Gi",
        ]
        .map(String::from),
    );
    let mut clear = 0;
    for line in &lines {
        if surely_unchanged(line) {
            clear += 1;
            assert!(!general_may_change(line), "{line:?}");
        }
        assert_eq!(line_may_change(line), general_may_change(line), "{line:?}");
    }
    // The shortcut does take most lines of a values file.
    assert!(clear > lines.len() / 10, "{clear} of {}", lines.len());
}

#[test]
fn scalars_with_a_core_tag_are_read_like_plain_ones() {
    // go-yaml v2 resolves the text and then checks the tag (Helm v3.11.3: `fromYaml "a: !!bool yes"` is
    // `{"a":true}`, `!!int 017` is 15); other tags and texts stay for the parser.
    let cases = [
        ("a: !!bool yes\n", "a: !!bool true\n"),
        ("- !!bool Off # c\n", "- !!bool false # c\n"),
        ("a: !!int 017\n", "a: !!int 15\n"),
        ("a: !!float 1_000\n", "a: !!float 1000\n"),
        ("a: !!bool x\n", "a: !!bool x\n"),
        ("a: !!str yes\n", "a: !!str yes\n"),
        ("a: !!boolean yes\n", "a: !!boolean yes\n"),
        ("a: !!int yes\n", "a: !!int yes\n"),
        ("a: !!bool 017\n", "a: !!bool 017\n"),
    ];
    for (input, expected) in cases {
        assert_eq!(yaml11_of(input), expected, "{input:?}");
    }
}

#[test]
fn explicit_tags_check_the_tag_go_yaml_v2_resolves_the_text_to() {
    for (word, tag) in [
        ("", "!!null"),
        ("~", "!!null"),
        ("NULL", "!!null"),
        ("yes", "!!bool"),
        ("False", "!!bool"),
        ("017", "!!int"),
        ("0x1F", "!!int"),
        ("1_000", "!!int"),
        ("1.5", "!!float"),
        (".5", "!!float"),
        ("-.inf", "!!float"),
        (".NaN", "!!float"),
        ("<<", "!!merge"),
        ("x", "!!str"),
        ("2001-12-14", "!!str"),
        ("1:30", "!!str"),
    ] {
        assert_eq!(go_yaml_plain_tag(word), tag, "{word:?}");
    }
}

#[test]
fn binary_values_are_decoded_under_keys_read_like_go_yaml_v2() {
    let cases = [
        ("a: !!binary aGk=\n", "a: \"hi\"\n"),
        ("on: !!binary aGk=\n", "\"true\": \"hi\"\n"),
        (
            "a: !!binary |\n  aGVs\n  bG8=\nb: yes\n",
            "a: \"hello\"\nb: true\n",
        ),
        (
            "a: !!binary >\n  aGk=\nb: [!!binary aGk=, 'x !!binary y', {c: !!binary \"aGk=\"}]\n",
            "a: \"hi\"\nb: [\"hi\", 'x !!binary y', {c: \"hi\"}]\n",
        ),
        (
            "b: [\n  !!binary aGk=, # c !!binary x\n  on]\n",
            "b: [\n  \"hi\", # c !!binary x\n  true]\n",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(yaml11_of(input), expected, "{input:?}");
    }
    // Text that is no base64 is go-yaml's error for the whole document.
    for input in [
        "a: !!binary aGk\n",
        "a: !!binary >\n  aGVs\n  bG8=\n",
        "a: [1, !!binary '%%']\n",
        "a: !!binary |\n  aGVs\n  bG8\n",
    ] {
        assert_eq!(as_yaml11(input), Err(InvalidBase64), "{input:?}");
    }
}
