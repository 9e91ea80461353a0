//! YAML 1.1 scalars as Helm reads values: its parser (sigs.k8s.io/yaml over go-yaml v2) takes the plain scalars
//! `y`, `yes`, `on` (and `n`, `no`, `off`, in any of their three spellings) for booleans, where the YAML 1.2 parser
//! used here sees strings. A key `y:` therefore becomes the key `"true"`, and `a: off` the value `false`. Its
//! numbers differ too: go-yaml v2 drops `_` from a plain scalar that starts with a digit, a sign or a dot, reads a
//! leading `0` as octal (`017` is 15, `08` the float 8) and the prefixes `0x`, `0o`, `0b` in either case; the
//! YAML 1.2 parser reads `1_000`, `017` and `0X1F` otherwise. Sexagesimal `1:30` is a string in both.
//!
//! The rewrite works on block-style lines before parsing: a plain key or a plain value that is the whole rest of
//! its line (a mapping value or a list item, comments allowed) is replaced, and so are the plain scalars of a flow
//! collection (`[017, y]`, `{on: 1}`), on one line or spread over several up to its closing bracket (comments
//! inside allowed, nesting bounded by yamlguard's flow depth); text inside block scalars (`|`, `>`) and quoted
//! scalars is left alone. Multi-line plain scalars keep YAML 1.2's reading.
//! A value tagged `!!bool`, `!!int` or `!!float` is read alike when its text is of the tag's kind (`!!bool yes`,
//! `!!int 017`); go-yaml v2 resolves the text first and then checks the tag, so `!!int yes` stays for the parser
//! to refuse.
//! A `!!binary` value is decoded into its string, as go-yaml v2 does ([`binary`]).
//!
//! Keys follow the same reading and then sigs.k8s.io/yaml's conversion of a non-string key to a JSON key: an
//! integer in decimal (`0x1F:` is `"31"`, `1_0:` is `"10"`), a float through Go's `FormatFloat(f, 'g', -1, 32)`
//! (`1e3:` is `"1000"`, `1234567.0:` is `"1.234567e+06"`, `.NaN:` is `".nan"`), a boolean as `"true"`/`"false"`
//! (`True:` too). Keys Helm refuses (a null, an integer above `int64` in any base) are left for the parser, or
//! spelled in decimal for it, where [`crate::values_yaml`] refuses them as Helm does.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

mod binary;
mod flow;

pub(crate) use binary::InvalidBase64;
use flow::{open_flow_end, rewrite_flow};

/// The go-yaml v2 boolean spelled `word`, if it is one that YAML 1.2 reads as a string.
fn yaml11_bool(word: &str) -> Option<bool> {
    match word {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// Whether `line` may be rewritten: it holds a word go-yaml v2 reads as a boolean (a rewritten key or value is such
/// a word standing alone between non-letters) or text that may be a number read unlike YAML 1.2.
fn has_candidate(line: &str) -> bool {
    has_boolean_word(line) || may_hold_number_candidate(line) || may_have_numeric_key(line)
}

/// Whether `text` holds one of the words [`yaml11_bool`] or [`yaml12_bool_key`] know as a whole run of ASCII letters.
/// Runs are found byte by byte (a byte of a multi-byte character is no ASCII letter, as the character is not), and
/// only runs that start with a letter some word starts with are measured and compared: every such word starts with
/// one of `yYnNoOTF`, and one table lookup per byte tells both whether it is a letter and whether it may start one
/// (splitting by characters and comparing every word was most of loading shoot-cert-service's values; looking at
/// every run of letters still half of the check).
fn has_boolean_word(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut after_letter = false;
    for (at, &byte) in bytes.iter().enumerate() {
        let class = BYTE_CLASS[usize::from(byte)];
        if class == WORD_START && !after_letter && boolean_word_at(text, at) {
            return true;
        }
        after_letter = class != 0;
    }
    false
}

/// Whether the run of ASCII letters starting at byte `at` of `text` is one of the words [`yaml11_bool`] or
/// [`yaml12_bool_key`] know (none is longer than five letters, so a longer run is measured no further).
fn boolean_word_at(text: &str, at: usize) -> bool {
    let run = text.as_bytes()[at..]
        .iter()
        .take(6)
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    if run > 5 {
        return false;
    }
    let word = &text[at..at + run];
    yaml11_bool(word).is_some() || yaml12_bool_key(word).is_some()
}

/// [`BYTE_CLASS`] of an ASCII letter.
const LETTER: u8 = 1;
/// [`BYTE_CLASS`] of an ASCII letter that a word of [`yaml11_bool`] or [`yaml12_bool_key`] starts with.
const WORD_START: u8 = 2;

/// Per byte: 0, [`LETTER`] or [`WORD_START`].
static BYTE_CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        if (b as u8).is_ascii_alphabetic() {
            table[b] = LETTER;
        }
        b += 1;
    }
    let starts = b"yYnNoOTF";
    let mut i = 0;
    while i < starts.len() {
        table[starts[i] as usize] = WORD_START;
        i += 1;
    }
    table
};

/// Whether `line` may hold a key go-yaml v2 reads as a number: a block key that starts like a number, or one in a
/// flow mapping (whose keys [`rewrite_flow`] looks at).
fn may_have_numeric_key(line: &str) -> bool {
    let mut content = line.trim_start_matches([' ', '\t']);
    while let Some(rest) = content
        .strip_prefix('-')
        .filter(|r| r.starts_with([' ', '\t']))
    {
        content = rest.trim_start_matches([' ', '\t']);
    }
    let unsigned = content.strip_prefix('-').unwrap_or(content);
    let numeric_start = unsigned
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'+' | b'.'));
    let numeric = |b: u8| b.is_ascii_digit() || matches!(b, b'+' | b'.' | b'-');
    // In a flow mapping, a key starting like a number right after `{` or `,` (`{}` and `{a: 1}` are no candidates).
    let flow_key = line.contains('{')
        && line.match_indices(['{', ',']).any(|(at, _)| {
            line[at + 1..]
                .trim_start_matches([' ', '\t'])
                .bytes()
                .next()
                .is_some_and(numeric)
        });
    (numeric_start && content.contains(':')) || flow_key
}

/// The YAML 1.2 booleans spelled other than `true`/`false`, which keep their spelling as keys there.
fn yaml12_bool_key(word: &str) -> Option<bool> {
    match word {
        "True" | "TRUE" => Some(true),
        "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// The JSON key sigs.k8s.io/yaml makes of the plain key `word` when go-yaml v2 reads it as a boolean or a number,
/// or `None` when it stays as written. An integer above `int64` (Helm refuses it as a key) is spelled in decimal,
/// which the YAML 1.2 parser reads as the `u64` that [`crate::values_yaml`] refuses: `01000000000000000000000:`
/// is octal 2^63 to go-yaml v2 and a 22-digit decimal to YAML 1.2.
fn yaml11_key(word: &str) -> Option<String> {
    if let Some(b) = yaml11_bool(word).or_else(|| yaml12_bool_key(word)) {
        return Some(b.to_string());
    }
    let key = match word {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => ".inf".to_string(),
        "-.inf" | "-.Inf" | "-.INF" => "-.inf".to_string(),
        ".nan" | ".NaN" | ".NAN" => ".nan".to_string(),
        _ => match yaml11_number(word)? {
            Number::Integer(n) => n.to_string(),
            // Go's ParseFloat refuses a value out of range, so go-yaml v2 keeps the string.
            Number::Float(f) if f.is_finite() => go_float32_key(f),
            Number::Float(_) => return None,
        },
    };
    (key != word).then_some(key)
}

/// The text that replaces the plain key `word` ([`yaml11_key`]): the JSON key quoted, except an integer above `int64`,
/// left bare in decimal for the parser to refuse.
fn written_key(word: &str) -> Option<String> {
    let key = yaml11_key(word)?;
    let refused = key.parse::<u64>().is_ok_and(|n| i64::try_from(n).is_err());
    Some(if refused { key } else { format!("\"{key}\"") })
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)` with `+Inf`, `-Inf`, `NaN` as `.inf`, `-.inf`, `.nan` (the spelling
/// sigs.k8s.io/yaml gives a float key): the shortest digits that read back as the same `float32`, in exponent form
/// when the exponent is below -4 or at least 6.
pub(crate) fn go_float32_key(f: f64) -> String {
    // `as` rounds to the nearest float32 and saturates to infinity, like Go's conversion.
    #[allow(clippy::cast_possible_truncation)]
    let x = f as f32;
    if x.is_nan() {
        return ".nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    // Rust's `{:e}` writes the shortest round-trip digits: `-1.6777216e7`, `1e-6`, `0e0`.
    let scientific = format!("{x:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if digits == "0" {
        return format!("{sign}0");
    }
    if !(-4..6).contains(&exponent) {
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{mantissa}e{exponent_sign}{:02}", exponent.abs());
    }
    let point = exponent + 1;
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    };
    format!("{sign}{body}")
}

/// A block line: indentation and list dashes, an optional plain key, and the rest.
static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<lead>[ \t]*(?:-[ \t]+)*)(?:(?P<key>[A-Za-z0-9_.+-][A-Za-z0-9_./+-]*)(?P<colon>[ \t]*:)(?P<gap>[ \t]+|$))?(?P<rest>(?s:.*))$")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// A plain scalar filling the rest of a line, before an optional comment.
static REST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<word>[A-Za-z]+)(?P<tail>[ \t]*(?:#.*)?)$")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// A plain scalar that may be a go-yaml v2 number, filling the rest of a line before an optional comment.
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<word>[-+.0-9][0-9A-Za-z_.+-]*)(?P<tail>[ \t]*(?:#.*)?)$")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// Whether `text` may hold a number go-yaml v2 reads unlike YAML 1.2: an underscore, or a `0` that starts a word
/// (at the start or after a byte other than an ASCII letter, digit or `.`) followed by a digit or an upper-case base
/// letter (`X`, `O`, `B`). One pass over the bytes; the regex `_|(?:^|[^0-9A-Za-z.])0[0-9XOB]` it replaces took 1.5 %
/// of a cold shoot-cert-service render. A byte of a multi-byte character is no ASCII letter, as the character is not.
fn may_hold_number_candidate(text: &str) -> bool {
    let bytes = text.as_bytes();
    if memchr::memchr(b'_', bytes).is_some() {
        return true;
    }
    let mut at = 0;
    while let Some(i) = memchr::memchr(b'0', &bytes[at..]) {
        let zero = at + i;
        if zero_starts_number_candidate(bytes, zero) {
            return true;
        }
        at = zero + 1;
    }
    false
}

/// Whether the `0` at `bytes[zero]` starts a word and a digit or a base letter (`X`, `O`, `B`)
/// follows it: the start of a number candidate.
fn zero_starts_number_candidate(bytes: &[u8], zero: usize) -> bool {
    let starts_word = zero == 0 || {
        let before = bytes[zero - 1];
        !(before.is_ascii_alphanumeric() || before == b'.')
    };
    starts_word
        && bytes
            .get(zero + 1)
            .is_some_and(|&b| b.is_ascii_digit() || matches!(b, b'X' | b'O' | b'B'))
}

/// go-yaml v2's float syntax (`yamlStyleFloat`), tried after the integer forms.
static YAML_FLOAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// The tag go-yaml v2's `resolve` gives the scalar text `word` when it checks it against an explicit core tag
/// (`!!int x` fails as "cannot decode !!str `x` as a !!int"): `!!null`, `!!bool`, `!!int`, `!!float`, `!!merge` or
/// `!!str`. Timestamps are only tried for untagged scalars and `!!timestamp`, so they are strings here.
pub(crate) fn go_yaml_plain_tag(word: &str) -> &'static str {
    if let Some(tag) = crate::funcs::goyaml::resolve_table_tag(word) {
        return tag;
    }
    match yaml11_number(word) {
        Some(Number::Integer(_)) => "!!int",
        Some(Number::Float(_)) => "!!float",
        None => "!!str",
    }
}

/// A number as go-yaml v2 resolves a plain scalar.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    /// An `int`, `int64` or `uint64`.
    Integer(i128),
    Float(f64),
}

/// The number go-yaml v2 makes of the plain scalar `word`, if it makes one (its `resolve` for scalars starting
/// with a digit, a sign or a dot; the words it looks up in a table, `.inf` and the like, are left out).
fn yaml11_number(word: &str) -> Option<Number> {
    let first = word.bytes().next()?;
    if first == b'.' {
        let plain = underscores_between_digits(word)?;
        return plain.parse().ok().map(Number::Float);
    }
    if !(first.is_ascii_digit() || first == b'-' || first == b'+') {
        return None;
    }
    let plain = word.replace('_', "");
    if let Some(n) = go_parse_integer(&plain) {
        return Some(Number::Integer(n));
    }
    if YAML_FLOAT.is_match(&plain) {
        return plain.parse().ok().map(Number::Float);
    }
    None
}

/// `strconv.ParseInt(text, 0, 64)`, then `strconv.ParseUint(text, 0, 64)` (no sign) as go-yaml v2 tries them.
fn go_parse_integer(text: &str) -> Option<i128> {
    let (sign, digits) = match text.as_bytes().first()? {
        b'-' => (Some(-1), &text[1..]),
        b'+' => (Some(1), &text[1..]),
        _ => (None, text),
    };
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(hex) = lower.strip_prefix("0x") {
        (16, hex)
    } else if let Some(octal) = lower.strip_prefix("0o") {
        (8, octal)
    } else if let Some(binary) = lower.strip_prefix("0b") {
        (2, binary)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(body, radix).ok()?;
    let signed = i128::try_from(magnitude).ok()?;
    match sign {
        Some(-1) => (magnitude <= 1u128 << 63).then_some(-signed),
        Some(_) => (signed <= i128::from(i64::MAX)).then_some(signed),
        None => (magnitude <= u128::from(u64::MAX)).then_some(signed),
    }
}

/// `text` without underscores, if each one stands between two digits (Go's rule for number literals).
fn underscores_between_digits(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'_' {
            let before = i.checked_sub(1).map(|j| bytes[j]);
            let after = bytes.get(i + 1).copied();
            if !before.is_some_and(|c| c.is_ascii_digit())
                || !after.is_some_and(|c| c.is_ascii_digit())
            {
                return None;
            }
        }
    }
    Some(text.replace('_', ""))
}

/// The YAML 1.2 spelling of a go-yaml v2 number, or `None` when `word` already reads the same.
fn yaml12_spelling(word: &str) -> Option<String> {
    let text = match yaml11_number(word)? {
        Number::Integer(n) => n.to_string(),
        Number::Float(f) if f.is_finite() => format!("{f:?}"),
        Number::Float(_) => return None,
    };
    (text != word).then_some(text)
}

/// A line that opens a block scalar (`key: |`, `- >-`, `|2` …).
static BLOCK_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[ \t:-])[|>][-+0-9]*[ \t]*(?:#.*)?$")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// Whether [`as_yaml11`] may rewrite `line`: its key and value (not its comment) hold a candidate. A text none of
/// whose lines may change is its own YAML 1.1 reading.
pub(crate) fn line_may_change(line: &str) -> bool {
    if surely_unchanged(line) {
        return false;
    }
    // Without a `#` there is no comment to cut (most lines of a values file).
    let content = if memchr::memchr(b'#', line.as_bytes()).is_some() {
        before_comment(line)
    } else {
        line
    };
    !content.trim_start().is_empty() && has_candidate(content)
}

/// [`QUICK_CLASS`] of a byte that some number candidate needs: `_` and `0` ([`may_hold_number_candidate`]), `{`
/// ([`may_have_numeric_key`]'s flow keys).
const TRIGGER: u8 = 4;

/// Per byte: [`BYTE_CLASS`], with [`TRIGGER`] added for `_`, `0` and `{`.
static QUICK_CLASS: [u8; 256] = {
    let mut table = BYTE_CLASS;
    table[b'_' as usize] |= TRIGGER;
    table[b'0' as usize] |= TRIGGER;
    table[b'{' as usize] |= TRIGGER;
    table
};

/// Whether `line` surely holds no candidate ([`has_candidate`] is false for it and for its text before a comment,
/// which [`line_may_change`] looks at): the three checks of [`has_candidate`] in one pass of a table lookup per
/// byte, where they walked the line three times and more (about 700 instructions a line of a values file, read on
/// every cold render). It gives up (`false`) on a `_` or `{` and on a line start a numeric key could have, which the
/// full check then looks at. A text before a comment ends in a space or tab (the `#` follows one), so its runs of
/// letters and digits are those of the line and it holds a candidate only if the line does.
fn surely_unchanged(line: &str) -> bool {
    let bytes = line.as_bytes();
    let Some(first) = bytes.iter().position(|&b| b != b' ' && b != b'\t') else {
        return true;
    };
    // A key that may be numeric starts with a digit, a sign or a dot (after list dashes, which start with `-`).
    if matches!(bytes[first], b'0'..=b'9' | b'+' | b'.' | b'-') {
        return false;
    }
    let mut after_letter = false;
    for (at, &byte) in bytes.iter().enumerate().skip(first) {
        let class = QUICK_CLASS[usize::from(byte)];
        if class & TRIGGER != 0 {
            if byte != b'0' {
                return false;
            }
            if zero_starts_number_candidate(bytes, at) {
                return false;
            }
        } else if class == WORD_START && !after_letter && boolean_word_at(line, at) {
            return false;
        }
        after_letter = class & (LETTER | WORD_START) != 0;
    }
    true
}

/// `text` with YAML 1.1 boolean keys written as `"true"`/`"false"`, boolean values as `true`/`false`, numbers
/// go-yaml v2 reads unlike YAML 1.2 in their YAML 1.2 spelling (`1_000` → `1000`, `017` → `15`) and `!!binary`
/// values decoded ([`binary`]), or go-yaml's refusal of a `!!binary` value that is no base64.
pub(crate) fn as_yaml11(text: &str) -> Result<Cow<'_, str>, InvalidBase64> {
    // First one pass over the whole text: words and the number pattern never span a line break (a line break is a
    // non-letter, and stands for a line start before `0`), so this is `lines().any(has_candidate)` without a
    // regex search per line, except for numeric keys: a block key is looked for at every line start (over the
    // whole text only the first line's key would be seen). Then the lines again without full-line comments, which
    // are never rewritten but often hold candidates (`no`, `on`, `_`): gardenlet's values file has them only in
    // comments, and rewriting it line by line was 5 % of a cold render.
    // Comments after a value are left out too (dns-service's values file names a `set_dependency_…` script after an
    // image tag): a line is rewritten only in its key and value, never in its comment.
    let binary = text.contains(binary::TAG);
    if !binary
        && (!(has_candidate(text) || text.lines().any(may_have_numeric_key))
            || !text.lines().any(line_may_change))
    {
        return Ok(Cow::Borrowed(text));
    }
    let mut out = String::with_capacity(text.len() + 16);
    // Indentation of the line that opened a block scalar: deeper (or blank) lines are its content.
    let mut block: Option<usize> = None;
    let mut at = 0;
    while at < text.len() {
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
        let line = &text[at..line_end];
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let indent = body.len() - body.trim_start_matches([' ', '\t']).len();
        at = line_end;
        if let Some(open) = block {
            if body.trim().is_empty() || indent > open {
                out.push_str(line);
                continue;
            }
            block = None;
        }
        if binary && body.contains(binary::TAG) {
            if binary::opens_block(body) {
                let content_end = binary::block_content_end(text, at, indent);
                if let Some(line) = binary::block_line(body, &text[at..content_end]) {
                    // The key is read like any other (`on: !!binary aGk=` is the key "true").
                    out.push_str(&rewrite_line(&line?));
                    out.push_str(ending);
                    at = content_end;
                    continue;
                }
            } else if let Some(line) = binary::value_line(body) {
                out.push_str(&rewrite_line(&line?));
                out.push_str(ending);
                continue;
            }
        }
        // The regexes run only where they can match: a block scalar opens with `|` or `>`, and a line is
        // rewritten only when it holds a boolean word or a number candidate (values files are long, their
        // candidate lines few).
        if body.contains(['|', '>'])
            && BLOCK_START.is_match(body)
            && !body.trim_start().starts_with('#')
        {
            block = Some(indent);
        }
        // A flow collection left open on this line takes the lines up to its end as one unit.
        if body.contains(['[', '{'])
            && let Some(end) = open_flow_end(body, &text[at..])
        {
            let unit = flow_binaries_decoded(&text[line_end - line.len()..at + end], binary)?;
            at += end;
            if has_candidate(&unit) {
                out.push_str(&rewrite_line(&unit));
            } else {
                out.push_str(&unit);
            }
            continue;
        }
        let body = flow_binaries_decoded(body, binary && body.contains(['[', '{']))?;
        if has_candidate(&body) {
            out.push_str(&rewrite_line(&body));
        } else {
            out.push_str(&body);
        }
        out.push_str(ending);
    }
    Ok(Cow::Owned(out))
}

/// `text` (a line, or a flow collection over several lines) with the `!!binary` values of its flow collections
/// decoded ([`binary::flow_values`]), when `may_hold` them.
fn flow_binaries_decoded(text: &str, may_hold: bool) -> Result<Cow<'_, str>, InvalidBase64> {
    if !(may_hold && text.contains(binary::TAG)) {
        return Ok(Cow::Borrowed(text));
    }
    Ok(match binary::flow_values(text) {
        Some(decoded) => Cow::Owned(decoded?),
        None => Cow::Borrowed(text),
    })
}

/// `line` without its comment: the text before the first `#` that opens the line or follows a space or tab outside
/// quotes. Quotes are paired as they come, which a quote inside a plain scalar (`it's`) can misread; a cut is
/// therefore made only when no quote follows it, so a `#` inside a quoted scalar that closes on this line never
/// cuts (the line is kept whole), and one inside a scalar that goes on past the line cuts only quoted text, which
/// is never rewritten.
fn before_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(open), _) if b == open => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'#') if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => {
                let comment = &bytes[i..];
                return if comment.contains(&b'"') || comment.contains(&b'\'') {
                    line
                } else {
                    &line[..i]
                };
            }
            (None, _) => {}
        }
    }
    line
}

/// A byte-by-byte walk over flow collection text that tracks quotes and comments.
#[derive(Default)]
struct FlowScan {
    quote: Option<u8>,
    escaped: bool,
    comment: bool,
    after_space: bool,
}

impl FlowScan {
    /// Whether the next byte stands outside quotes and comments.
    fn outside(&self) -> bool {
        self.quote.is_none() && !self.comment
    }

    /// Steps over byte `b` at `i` of `bytes`: `Some(true)` when it closes the outermost collection, `None` when the
    /// nesting passes yamlguard's bound.
    fn step(&mut self, bytes: &[u8], i: usize, b: u8, depth: &mut usize) -> Option<bool> {
        if self.comment {
            self.comment = b != b'\n';
            self.after_space = true;
            return Some(false);
        }
        if let Some(quote) = self.quote {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' && quote == b'"' {
                self.escaped = true;
            } else if b == quote && !(quote == b'\'' && bytes.get(i + 1) == Some(&b'\'')) {
                self.quote = None;
            } else if b == quote {
                // The first of a doubled single quote; the second is skipped as escaped.
                self.escaped = true;
            }
            return Some(false);
        }
        let space = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        match b {
            b'"' | b'\'' => self.quote = Some(b),
            b'#' if self.after_space || i == 0 => self.comment = true,
            b'[' | b'{' => {
                *depth += 1;
                if *depth > seedlet_yamlguard::MAX_FLOW_DEPTH {
                    return None;
                }
            }
            b']' | b'}' => {
                *depth = depth.checked_sub(1)?;
                if *depth == 0 {
                    return Some(true);
                }
            }
            _ => {}
        }
        self.after_space = space;
        Some(false)
    }
}

fn rewrite_line(body: &str) -> Cow<'_, str> {
    let Some(parts) = LINE.captures(body) else {
        return Cow::Borrowed(body);
    };
    let lead = parts.name("lead").map_or("", |m| m.as_str());
    let rest = parts.name("rest").map_or("", |m| m.as_str());
    let mut changed = false;
    let mut out = String::from(lead);
    if let Some(key) = parts.name("key") {
        match written_key(key.as_str()) {
            Some(written) => {
                out.push_str(&written);
                changed = true;
            }
            None => out.push_str(key.as_str()),
        }
        out.push_str(parts.name("colon").map_or("", |m| m.as_str()));
        out.push_str(parts.name("gap").map_or("", |m| m.as_str()));
    }
    // A value: after a key, or a list item's whole content.
    let is_value = parts.name("key").is_some() || lead.trim_end().ends_with('-');
    // go-yaml v2 resolves the text of a scalar tagged `!!bool`, `!!int` or `!!float` as a plain one and then
    // checks the tag (`!!bool yes` is true, `!!int 0x1F` is 31), so the tag stays and its scalar is read alike.
    // A text of another kind than its tag is left for the parser, which refuses it (`!!int yes`).
    let (tag, rest) = split_core_tag(rest);
    out.push_str(tag);
    let (booleans, numbers) = match tag.trim_end() {
        "!!bool" => (true, false),
        "!!int" | "!!float" => (false, true),
        _ => (true, true),
    };
    match REST.captures(rest).filter(|_| is_value && booleans) {
        Some(value) if yaml11_bool(&value["word"]).is_some() => {
            let b = yaml11_bool(&value["word"]).unwrap_or(false);
            out.push_str(if b { "true" } else { "false" });
            out.push_str(&value["tail"]);
            changed = true;
        }
        _ => match NUMBER
            .captures(rest)
            .filter(|_| is_value && numbers)
            .and_then(|value| Some((yaml12_spelling(&value["word"])?, value)))
        {
            Some((spelling, value)) => {
                out.push_str(&spelling);
                out.push_str(&value["tail"]);
                changed = true;
            }
            None => match rewrite_flow(rest).filter(|_| is_value && tag.is_empty()) {
                Some(flow) => {
                    out.push_str(&flow);
                    changed = true;
                }
                None => out.push_str(rest),
            },
        },
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(body)
    }
}

/// `text` split after a leading `!!bool`, `!!int` or `!!float` tag and its blanks, or `("", text)`.
fn split_core_tag(text: &str) -> (&str, &str) {
    for tag in ["!!bool", "!!int", "!!float"] {
        if let Some(after) = text.strip_prefix(tag) {
            let value = after.trim_start_matches([' ', '\t']);
            if value.len() < after.len() {
                return text.split_at(text.len() - value.len());
            }
        }
    }
    ("", text)
}

#[cfg(test)]
mod tests;
