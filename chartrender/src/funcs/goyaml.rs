//! `toYaml` output as Helm produces it (sigs.k8s.io/yaml over go-yaml v2): key order, quoting and block styles.

use std::cmp::Ordering;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value as Json;

use super::value::format_float;

/// Serialises JSON-compatible data like `yaml.Marshal` from sigs.k8s.io/yaml (ends with a newline).
pub(crate) fn to_yaml(value: &Json) -> String {
    let mut out = String::new();
    match value {
        Json::Object(map) if !map.is_empty() => write_map(&mut out, map, 0, false),
        Json::Array(items) if !items.is_empty() => write_seq(&mut out, items, 0, false),
        scalar => {
            // A document that is one scalar still indents like a nested one (go-yaml's emitter: `|-` bodies by 2).
            write_scalar(&mut out, scalar, 2);
            out.push('\n');
        }
    }
    out
}

fn write_map(
    out: &mut String,
    map: &serde_json::Map<String, Json>,
    indent: usize,
    first_inline: bool,
) {
    let mut keys: Vec<&String> = map.keys().collect();
    sort_keys(&mut keys);
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 || !first_inline {
            push_indent(out, indent);
        }
        write_string(out, key, indent, true);
        out.push(':');
        match &map[key] {
            Json::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                write_map(out, inner, indent + 2, false);
            }
            Json::Array(items) if !items.is_empty() => {
                out.push('\n');
                write_seq(out, items, indent, false);
            }
            scalar => {
                out.push(' ');
                write_scalar(out, scalar, indent + 2);
                out.push('\n');
            }
        }
    }
}

fn write_seq(out: &mut String, items: &[Json], indent: usize, first_inline: bool) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 || !first_inline {
            push_indent(out, indent);
        }
        out.push_str("- ");
        match item {
            Json::Object(inner) if !inner.is_empty() => write_map(out, inner, indent + 2, true),
            Json::Array(inner) if !inner.is_empty() => write_seq(out, inner, indent + 2, true),
            scalar => {
                write_scalar(out, scalar, indent + 2);
                out.push('\n');
            }
        }
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// Writes a scalar (or empty collection); block scalars put their content at `content_indent`.
fn write_scalar(out: &mut String, value: &Json, content_indent: usize) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => out.push_str(&yaml_number(n)),
        Json::String(s) => write_string(out, s, content_indent, false),
        Json::Array(_) => out.push_str("[]"),
        Json::Object(_) => out.push_str("{}"),
    }
}

/// A JSON number after the JSON → YAML round trip: integral values print as integers.
fn yaml_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    // encoding/json writes integral floats below 1e21 without exponent, which YAML then reads as an int.
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // Shortest digits, like strconv's 'f' with precision -1: 1.2345678901234567e19 is 12345678901234567000.
        // JSON's `-0` reads back as the integer 0. Digits beyond int64/uint64 read back as a float (1e20 is
        // `1e+20`, 9.999999999999999e20 stays so).
        if f == 0.0 {
            return "0".to_string();
        }
        let digits = format!("{f}");
        if digits.parse::<i64>().is_ok() || digits.parse::<u64>().is_ok() {
            return digits;
        }
    }
    format_float(f)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

fn write_string(out: &mut String, s: &str, content_indent: usize, is_key: bool) {
    let style = string_style(s, is_key);
    match style {
        Style::Plain if is_key => out.push_str(s),
        Style::Single if is_key => {
            out.push('\'');
            out.push_str(&s.replace('\'', "''"));
            out.push('\'');
        }
        Style::Double if is_key => write_double_quoted(out, s),
        Style::Plain | Style::Single | Style::Double => write_folded(out, s, style, content_indent),
        Style::Literal => write_literal(out, s, content_indent),
    }
}

/// Past this column go-yaml breaks a value's line at its next single space (`best_width`).
const BEST_WIDTH: usize = 80;

/// A plain or quoted value as go-yaml's emitter writes it: at a space once the line is longer than
/// [`BEST_WIDTH`] (and the next character is no space), the line breaks and continues at `indent`; a double-quoted
/// scalar keeps a following space with a `\` escape. Quoted scalars never break at their first or last character.
fn write_folded(out: &mut String, s: &str, style: Style, indent: usize) {
    let mut column = out
        .rsplit('\n')
        .next()
        .map_or(0, |line| line.chars().count());
    let push = |out: &mut String, text: &str, column: &mut usize| {
        out.push_str(text);
        *column += text.chars().count();
    };
    match style {
        Style::Single => push(out, "'", &mut column),
        Style::Double => push(out, "\"", &mut column),
        _ => {}
    }
    let chars: Vec<char> = s.chars().collect();
    let mut spaces = false;
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let next_is_space = chars.get(i + 1) == Some(&' ');
            let inner = i > 0 && i + 1 < chars.len();
            let may_break = match style {
                Style::Plain => !next_is_space,
                Style::Single => inner && !next_is_space,
                _ => inner,
            };
            if !spaces && column > BEST_WIDTH && may_break {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent));
                column = indent;
                if style == Style::Double && next_is_space {
                    push(out, "\\", &mut column);
                }
            } else {
                push(out, " ", &mut column);
            }
            spaces = true;
            continue;
        }
        spaces = false;
        match style {
            Style::Single if c == '\'' => push(out, "''", &mut column),
            Style::Double => {
                let mut escaped = String::new();
                write_double_quoted(&mut escaped, &c.to_string());
                push(out, &escaped[1..escaped.len() - 1], &mut column);
            }
            _ => {
                let mut buf = [0u8; 4];
                push(out, c.encode_utf8(&mut buf), &mut column);
            }
        }
    }
    match style {
        Style::Single => push(out, "'", &mut column),
        Style::Double => push(out, "\"", &mut column),
        _ => {}
    }
}

fn write_literal(out: &mut String, s: &str, content_indent: usize) {
    out.push('|');
    if s.starts_with([' ', '\n']) {
        out.push('2');
    }
    let trailing = s.len() - s.trim_end_matches('\n').len();
    let body = match trailing {
        0 => {
            out.push('-');
            s
        }
        // go-yaml keeps a string that is one line break whole (`+`), as it does two or more.
        1 if s.len() == 1 => {
            out.push('+');
            ""
        }
        1 => &s[..s.len() - 1],
        _ => {
            out.push('+');
            &s[..s.len() - 1]
        }
    };
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            push_indent(out, content_indent);
            out.push_str(line);
        }
    }
}

fn write_double_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '\u{85}' => out.push_str("\\N"),
            '\u{a0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if !is_printable(c) => {
                let code = c as u32;
                if code <= 0xff {
                    out.push_str(&format!("\\x{code:02X}"));
                } else if code <= 0xffff {
                    out.push_str(&format!("\\u{code:04X}"));
                } else {
                    out.push_str(&format!("\\U{code:08X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// libyaml's printable set (tab is not in it, so strings with tabs end up double-quoted).
fn is_printable(c: char) -> bool {
    let code = c as u32;
    code == 0x0A
        || (0x20..=0x7E).contains(&code)
        || code == 0x85
        || (0xA0..=0xD7FF).contains(&code)
        || ((0xE000..=0xFFFD).contains(&code) && code != 0xFEFF)
        || (0x10000..=0x10FFFF).contains(&code)
}

/// Chooses the style go-yaml v2 would emit a string in.
fn string_style(s: &str, is_key: bool) -> Style {
    let analysis = analyze(s);
    if s.contains('\n') {
        if is_key || !analysis.block_allowed {
            return Style::Double;
        }
        return Style::Literal;
    }
    if resolves_to_non_string(s) || is_base60_float(s) {
        return Style::Double;
    }
    if analysis.plain_allowed {
        Style::Plain
    } else if analysis.single_allowed {
        Style::Single
    } else {
        Style::Double
    }
}

struct Analysis {
    plain_allowed: bool,
    single_allowed: bool,
    block_allowed: bool,
}

/// A port of libyaml's `yaml_emitter_analyze_scalar` for block context.
fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            plain_allowed: false,
            single_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let mut special = false;
    let mut line_breaks = false;
    let (mut space_break, mut break_space) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let blank_or_end = |i: usize| {
        chars
            .get(i + 1)
            .is_none_or(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
    };
    for (i, &c) in chars.iter().enumerate() {
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    block_indicators = true;
                }
                '?' | ':' | '-' if blank_or_end(i) => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if blank_or_end(i) => block_indicators = true,
                '#' if matches!(chars[i - 1], ' ' | '\t' | '\n' | '\r') => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) || c == '\u{feff}' {
            special = true;
        }
        if c == '\n' {
            line_breaks = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i + 1 == chars.len() {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if c == '\n' {
            if i == 0 {
                leading_break = true;
            }
            if i + 1 == chars.len() {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
    }
    let mut plain_allowed = !(leading_space || leading_break || trailing_space || trailing_break);
    let mut single_allowed = true;
    let mut block_allowed = !trailing_space;
    if break_space {
        plain_allowed = false;
        single_allowed = false;
    }
    if space_break || special {
        plain_allowed = false;
        single_allowed = false;
        block_allowed = false;
    }
    if line_breaks || block_indicators {
        plain_allowed = false;
    }
    Analysis {
        plain_allowed,
        single_allowed,
        block_allowed,
    }
}

static YAML_FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
        .expect("the float pattern is a valid regex")
});
static BASE60_FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")
        .expect("the base 60 pattern is a valid regex")
});
static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]*)?(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?)?)?$")
        .expect("the timestamp pattern is a valid regex")
});

/// The tag go-yaml v2's resolve table (`resolveMap`) gives the plain scalar `s`: its null, boolean and special
/// float spellings and the merge key; `None` for every other text.
pub(crate) fn resolve_table_tag(s: &str) -> Option<&'static str> {
    Some(match s {
        "" | "~" | "null" | "Null" | "NULL" => "!!null",
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" | "n"
        | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            "!!bool"
        }
        ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF"
        | "-.inf" | "-.Inf" | "-.INF" => "!!float",
        "<<" => "!!merge",
        _ => return None,
    })
}

/// Whether go-yaml v2 would read the plain scalar `s` as something other than a string (null, bool, number, …).
pub(crate) fn resolves_to_non_string(s: &str) -> bool {
    if resolve_table_tag(s).is_some() {
        return true;
    }
    match s.as_bytes().first() {
        Some(b'.') => s.parse::<f64>().is_ok() && !s.eq_ignore_ascii_case(".inf") && s != ".",
        Some(b'+' | b'-' | b'0'..=b'9') => {
            if TIMESTAMP.is_match(s) {
                return true;
            }
            let plain = s.replace('_', "");
            crate::funcs::value::parse_go_int(&plain).is_some_and(|_| !plain.contains('.'))
                || plain
                    .strip_prefix('+')
                    .unwrap_or(&plain)
                    .parse::<u64>()
                    .is_ok()
                // Go's ParseFloat refuses a value out of range (`1e400` stays a string).
                || (YAML_FLOAT.is_match(&plain) && plain.parse::<f64>().is_ok_and(f64::is_finite))
                || plain
                    .strip_prefix("0b")
                    .is_some_and(|b| i64::from_str_radix(b, 2).is_ok())
                || plain
                    .strip_prefix("-0b")
                    .is_some_and(|b| i64::from_str_radix(b, 2).is_ok())
        }
        _ => false,
    }
}

fn is_base60_float(s: &str) -> bool {
    !s.is_empty() && BASE60_FLOAT.is_match(s)
}

/// Sorts map keys by [`key_order`] with a merge sort of its own. go-yaml v2's comparison is not a total order
/// (`v1beta1` < `v2` < `v10` < `v1beta1`), so Helm, which sorts keys in Go's random map order, prints such sets
/// in varying orders; here they come out in one fixed order, and a comparison that contradicts itself cannot make
/// the sort panic as the standard library's sorts may.
fn sort_keys(keys: &mut Vec<&String>) {
    if keys.len() < 2 {
        return;
    }
    // A fixed starting order: the keys' byte order.
    keys.sort_unstable();
    let mut scratch = keys.clone();
    let mut width = 1;
    while width < keys.len() {
        for start in (0..keys.len()).step_by(2 * width) {
            let middle = (start + width).min(keys.len());
            let end = (start + 2 * width).min(keys.len());
            let (mut left, mut right) = (start, middle);
            for slot in &mut scratch[start..end] {
                let take_right =
                    left == middle || (right < end && key_order(keys[right], keys[left]).is_lt());
                if take_right {
                    *slot = keys[right];
                    right += 1;
                } else {
                    *slot = keys[left];
                    left += 1;
                }
            }
        }
        std::mem::swap(keys, &mut scratch);
        width *= 2;
    }
}

/// go-yaml v2's map key order: letters before digits, digit runs compared numerically (as Go's `int64`, which
/// wraps past 19 digits).
pub(crate) fn key_order(a: &str, b: &str) -> Ordering {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .wrapping_mul(10)
                .wrapping_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .wrapping_mul(10)
                .wrapping_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn to_yaml_sorts_keys_and_does_not_indent_sequences() {
        let yaml =
            to_yaml(&json!({"b": [1, {"z": 2, "x": "s"}], "a": {}, "c": {"d": null}, "y": "n"}));
        // go-yaml v2 reads `y` and `n` as booleans, so they are quoted even as keys.
        assert_eq!(
            yaml,
            "a: {}\nb:\n- 1\n- x: s\n  z: 2\nc:\n  d: null\n\"y\": \"n\"\n"
        );
    }

    #[test]
    fn to_yaml_quotes_strings_that_would_change_type() {
        let yaml = to_yaml(
            &json!({"a": "true", "b": "1.5", "c": "yes", "d": "", "e": "plain text", "f": "2024-01-02", "g": "0x1F"}),
        );
        assert_eq!(
            yaml,
            "a: \"true\"\nb: \"1.5\"\nc: \"yes\"\nd: \"\"\ne: plain text\nf: \"2024-01-02\"\ng: \"0x1F\"\n"
        );
    }

    #[test]
    fn to_yaml_uses_single_quotes_for_indicators_and_literals_for_multiline() {
        let yaml = to_yaml(
            &json!({"a": "- x", "b": "a: b", "c": " lead", "d": "*star", "e": "line1\nline2\n", "f": "x\ny"}),
        );
        assert_eq!(
            yaml,
            "a: '- x'\nb: 'a: b'\nc: ' lead'\nd: '*star'\ne: |\n  line1\n  line2\nf: |-\n  x\n  y\n"
        );
        // A lone line break keeps its chomping (`+`), as Helm v3.11.3 writes it.
        assert_eq!(
            to_yaml(&json!({"k": "\n", "l": "\n\n"})),
            "k: |2+\n\nl: |2+\n\n\n"
        );
    }

    #[test]
    fn to_yaml_prints_numbers_after_the_json_round_trip() {
        assert_eq!(
            to_yaml(&json!([1.0, 2.5, 1e6, -3])),
            "- 1\n- 2.5\n- 1000000\n- -3\n"
        );
        assert_eq!(to_yaml(&json!("tab\there")), "\"tab\\there\"\n");
        assert_eq!(to_yaml(&json!(null)), "null\n");
        // Integral floats past uint64 read back as floats (Helm v3.11.3: 1e+20, 9.999999999999999e+20).
        assert_eq!(
            to_yaml(&json!([
                1e20,
                9.999999999999999e20,
                1.2345678901234567e19,
                1e21
            ])),
            "- 1e+20\n- 9.999999999999999e+20\n- 12345678901234567000\n- 1e+21\n"
        );
    }

    #[test]
    fn key_order_compares_digit_runs_numerically() {
        let cases: [(&[&str], &[&str]); 4] = [
            (&["a10", "a2", "b", "A"], &["A", "a2", "a10", "b"]),
            (
                &["100", "5", "1000.5", "0.5", "-1"],
                &["-1", "0.5", "5", "100", "1000.5"],
            ),
            // Go's int64 wraps: twenty digits compare below a sign.
            (
                &["-.inf", "-9223372036854775808"],
                &["-9223372036854775808", "-.inf"],
            ),
            (&[], &[]),
        ];
        for (input, want) in cases {
            let owned: Vec<String> = input.iter().map(|k| (*k).to_string()).collect();
            let mut keys: Vec<&String> = owned.iter().collect();
            sort_keys(&mut keys);
            assert_eq!(keys, want, "{input:?}");
        }
    }

    #[test]
    fn keys_whose_order_contradicts_itself_sort_in_one_fixed_order() {
        // v1beta1 < v2 < v10 < v1beta1 by go-yaml v2's comparison.
        let owned: Vec<String> = ["v10", "v1beta1", "v2", "10", "1e-06", "5"]
            .iter()
            .map(|k| (*k).to_string())
            .collect();
        let mut first: Vec<&String> = owned.iter().collect();
        sort_keys(&mut first);
        let mut second: Vec<&String> = owned.iter().rev().collect();
        sort_keys(&mut second);
        assert_eq!(first, second);
        assert_eq!(first.len(), owned.len());
    }

    #[test]
    fn nested_sequences_and_maps_in_sequences_are_inline() {
        assert_eq!(
            to_yaml(&json!([[1, 2], {"a": [3]}])),
            "- - 1\n  - 2\n- a:\n  - 3\n"
        );
    }
}
