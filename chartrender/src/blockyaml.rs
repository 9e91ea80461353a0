//! A fast reader for the plain block-style YAML that `Chart.yaml` and `values.yaml` files are nearly always
//! written in: block mappings and sequences, plain and simple quoted scalars, comments, `{}` and `[]`.
//!
//! It answers exactly what the full parser (`serde_yaml`, after [`crate::yaml11`]'s rewrite) answers for the
//! documents it accepts, scalars resolved by the same rules, and gives up (`None`) on anything else — flow
//! collections with content, block scalars, anchors and tags, escapes, multi-line scalars, tabs, non-ASCII text,
//! duplicate keys, numbers in other than plain decimal or float notation — so the caller falls back to the full
//! parser, which also reports every error. The full parser costs several microseconds even for a small file
//! (a third of loading a small chart), this one a fraction of that.

use serde_json::{Map, Number, Value};

/// Nesting beyond this gives up (the full parser bounds it on its own terms).
const MAX_DEPTH: usize = 64;

/// The document as a map, or `None` when it is not in the subset read here (or not a map at all).
pub(crate) fn parse_map(data: &[u8]) -> Option<Value> {
    parse_map_where(data, |_| true)
}

/// [`parse_map`] of a values file's YAML 1.1 reading ([`crate::yaml11::as_yaml11`]), or `None` as there, or when
/// that reading may differ from the text: when any line is one `as_yaml11` may rewrite. Otherwise `as_yaml11`
/// leaves the text as it is, and this spares it its two passes over the text (it checks the lines only after a
/// first pass over the whole text found a candidate, which values files nearly always hold in some comment).
pub(crate) fn parse_yaml11_map(text: &str) -> Option<Value> {
    parse_map_where(text.as_bytes(), |line| {
        !crate::yaml11::line_may_change(line)
    })
}

/// [`parse_map`], giving up as well when a line (comments and blank lines included) fails `line_ok`.
fn parse_map_where(data: &[u8], line_ok: impl Fn(&str) -> bool) -> Option<Value> {
    if !data
        .iter()
        .all(|&b| b == b'\n' || (0x20..0x7f).contains(&b))
    {
        return None;
    }
    let text = std::str::from_utf8(data).ok()?;
    let mut lines = Vec::with_capacity(crate::gotmpl::count_newlines(text) + 1);
    for line in crate::gotmpl::split_ascii(text, b'\n') {
        if !line_ok(line) {
            return None;
        }
        let content = line.trim_start_matches(' ');
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let indent = line.len() - content.len();
        if indent == 0 && (content.starts_with("---") || content.starts_with("...")) {
            return None;
        }
        lines.push(Line { indent, content });
    }
    let first = lines.first()?;
    if first.indent != 0 || is_item(first.content) {
        return None;
    }
    let mut reader = Reader { lines, at: 0 };
    let value = reader.map(0, 0)?;
    (reader.at == reader.lines.len()).then_some(value)
}

/// A line holding content: its indentation and the rest.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    indent: usize,
    content: &'a str,
}

struct Reader<'a> {
    lines: Vec<Line<'a>>,
    at: usize,
}

/// Whether `content` starts a block sequence item (`- x` or a lone `-`).
fn is_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.at).copied()
    }

    /// The block node starting at the current line, indented by `indent`.
    fn node(&mut self, indent: usize, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        if is_item(self.peek()?.content) {
            self.sequence(indent, depth)
        } else {
            self.map(indent, depth)
        }
    }

    /// The value after `key:` with nothing else on its line: a more indented block, a sequence at the key's own
    /// indentation, or null.
    fn empty_value(&mut self, indent: usize, depth: usize) -> Option<Value> {
        match self.peek() {
            Some(next) if next.indent > indent => self.node(next.indent, depth + 1),
            Some(next) if next.indent == indent && is_item(next.content) => {
                self.sequence(indent, depth + 1)
            }
            _ => Some(Value::Null),
        }
    }

    /// A block mapping whose keys are indented by `indent`.
    fn map(&mut self, indent: usize, depth: usize) -> Option<Value> {
        let mut map = Map::new();
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent || is_item(line.content) {
                return None;
            }
            let (key, rest) = split_key(line.content)?;
            self.at += 1;
            let value = if rest.is_empty() {
                self.empty_value(indent, depth)?
            } else {
                let value = scalar(rest)?;
                if self.peek().is_some_and(|next| next.indent > indent) {
                    // A continued plain scalar or a misplaced block: the full parser decides.
                    return None;
                }
                value
            };
            if map.insert(key, value).is_some() {
                return None;
            }
        }
        Some(Value::Object(map))
    }

    /// A block sequence whose dashes are indented by `indent`.
    fn sequence(&mut self, indent: usize, depth: usize) -> Option<Value> {
        let mut items = Vec::new();
        while let Some(line) = self.peek() {
            // A line back at the dashes' indentation that is no item continues the enclosing mapping (whose key
            // may sit at the same indentation as these items).
            if line.indent < indent || (line.indent == indent && !is_item(line.content)) {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let rest = line.content[1..].trim_start_matches(' ');
            if rest.is_empty() || rest.starts_with('#') {
                self.at += 1;
                items.push(match self.peek() {
                    Some(next) if next.indent > indent => self.node(next.indent, depth + 1)?,
                    _ => Value::Null,
                });
                continue;
            }
            let inner = indent + (line.content.len() - rest.len());
            if is_item(rest) || split_key(rest).is_some() {
                // A compact nested node (`- key: value`, `- - x`): the rest of the line opens a block at its column.
                self.lines[self.at] = Line {
                    indent: inner,
                    content: rest,
                };
                items.push(self.node(inner, depth + 1)?);
                continue;
            }
            self.at += 1;
            items.push(scalar(rest)?);
            if self.peek().is_some_and(|next| next.indent > indent) {
                return None;
            }
        }
        Some(Value::Array(items))
    }
}

/// Splits `key: rest` (or `key:` alone) with a plain or simply quoted key; `rest` keeps its comment.
fn split_key(content: &str) -> Option<(String, &str)> {
    let (key, after) = if let Some(quote @ ('"' | '\'')) = content.chars().next() {
        let (key, after) = quoted(content, quote)?;
        (key, after.strip_prefix(':')?)
    } else {
        let colon = memchr::memchr_iter(b':', content.as_bytes())
            .find(|&i| matches!(content.as_bytes().get(i + 1), None | Some(b' ')))?;
        let key = &content[..colon];
        if !plain_key(key) {
            return None;
        }
        (key.to_string(), &content[colon + 1..])
    };
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    let rest = after.trim_start_matches(' ');
    let rest = if rest.starts_with('#') { "" } else { rest };
    Some((key, rest))
}

/// A plain key read as the same string by every YAML resolver: a letter or `_` first, then word characters,
/// `.`, `/`, `-`; none of the null and boolean words.
///
/// Of [`resolve_plain`]'s rules only those words apply to such a key: it has no sign, no leading digit and no
/// leading `.`, so it is no integer, and Rust's float syntax takes a letter first only in `inf`, `infinity` and
/// `nan`, which [`float`] refuses as not finite. Comparing the words spares resolving (and allocating) every key.
fn plain_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-'))
        && !matches!(
            key,
            "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False" | "FALSE"
        )
}

/// A quoted scalar at the start of `text` (no escapes, on one line) and what follows its closing quote.
fn quoted(text: &str, quote: char) -> Option<(String, &str)> {
    let body = &text[1..];
    if quote == '"' {
        let end = body.find('"')?;
        if body[..end].contains('\\') {
            return None;
        }
        return Some((body[..end].to_string(), &body[end + 1..]));
    }
    let mut out = String::new();
    let mut rest = body;
    loop {
        let end = rest.find('\'')?;
        out.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        match rest.strip_prefix('\'') {
            Some(after) => {
                out.push('\'');
                rest = after;
            }
            None => return Some((out, rest)),
        }
    }
}

/// A scalar value filling the rest of a line (after `key: ` or `- `), with an optional comment.
fn scalar(rest: &str) -> Option<Value> {
    match rest.as_bytes()[0] {
        quote @ (b'"' | b'\'') => {
            let (text, after) = quoted(rest, char::from(quote))?;
            let after = after.trim_start_matches(' ');
            (after.is_empty() || after.starts_with('#')).then_some(Value::String(text))
        }
        b'{' | b'[' => {
            let flow = rest.get(..2)?;
            let after = rest[2..].trim_start_matches(' ');
            if !(after.is_empty() || after.starts_with('#')) {
                return None;
            }
            match flow {
                "{}" => Some(Value::Object(Map::new())),
                "[]" => Some(Value::Array(Vec::new())),
                _ => None,
            }
        }
        b'-' | b'?' | b':' | b',' | b']' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>'
        | b'%' | b'@' | b'`' => {
            // Indicators, and plain scalars starting with them (`-1`, `-x`): left to the full parser.
            if rest.as_bytes()[0] == b'-' {
                return resolve_plain(plain(rest)?).filter(|v| !v.is_string());
            }
            None
        }
        _ => resolve_plain(plain(rest)?),
    }
}

/// The plain scalar of `rest`: up to a comment, trailing spaces dropped; `None` if it holds a mapping indicator.
fn plain(rest: &str) -> Option<&str> {
    // Single bytes found with memchr and their neighbour checked: a substring search sets up a searcher per call,
    // which cost more than the rest of reading the scalar.
    let bytes = rest.as_bytes();
    let end = memchr::memchr_iter(b'#', bytes)
        .find(|&at| at > 0 && bytes[at - 1] == b' ')
        .map_or(rest.len(), |at| at - 1);
    let text = rest[..end].trim_end_matches(' ');
    let text_bytes = text.as_bytes();
    let mapping = memchr::memchr_iter(b':', text_bytes)
        .any(|at| text_bytes.get(at + 1).is_none_or(|&b| b == b' '));
    (!mapping).then_some(text)
}

/// The value `serde_yaml` makes of the plain scalar `text` (its untagged scalar rules), or `None` for the integer
/// forms left to it (signs, base prefixes, leading zeros, more than 18 digits).
fn resolve_plain(text: &str) -> Option<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        _ => {}
    }
    let (negative, unsigned) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => return None,
        _ => (false, text),
    };
    if unsigned.starts_with("0x") || unsigned.starts_with("0o") || unsigned.starts_with("0b") {
        return None;
    }
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        if unsigned.len() > 18 || (unsigned.len() > 1 && unsigned.starts_with('0')) {
            return None;
        }
        let magnitude: i64 = unsigned.parse().ok()?;
        return Some(Value::Number(if negative {
            Number::from(-magnitude)
        } else {
            Number::from(magnitude.unsigned_abs())
        }));
    }
    if let Some(float) = float(text) {
        return Some(Number::from_f64(float).map_or(Value::Null, Value::Number));
    }
    Some(Value::String(text.to_string()))
}

/// `serde_yaml`'s float reading of a plain scalar that is no integer (`.inf` and `.nan` spellings, then Rust's
/// float syntax for finite values).
fn float(text: &str) -> Option<f64> {
    let unpositive = text.strip_prefix('+').unwrap_or(text);
    match unpositive {
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        _ => {}
    }
    match text {
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    unpositive.parse::<f64>().ok().filter(|f| f.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the full parser makes of `text`.
    fn full(text: &str) -> Option<Value> {
        serde_yaml::from_str::<Value>(text).ok()
    }

    #[test]
    fn accepted_documents_read_as_the_full_parser_reads_them() {
        let documents = [
            "a: 1\nb: -2\nc: 0\nd: 1.5\ne: 1e3\nf: .5\ng: x\nh: true\ni: False\nj: ~\nk:\nl: null\n",
            "m: 64Mi\nn: 1.2.3\no: v1.2\np: 10.0.0.0/8\nq: 8080 # port\nr: a#b\ns: http://x:80/y\n",
            "inf: inf\nnan: nan\ninfinity: Infinity\nt: .inf\nu: -.inf\nv: 1_000\nw: 1e\nx: 5e-3\n",
            "q1: \"a: b # c\"\nq2: 'it''s'\nq3: \"\"\n'k 1': 1\n\"k2\": [] # c\nk3: {}\n",
            "top:\n  nested:\n    deep: 1\n  list:\n  - a\n  - b: 1\n    c: 2\n  -\n  - - x\n    - y\n",
            "# comment\n\nlist:\n  - 1\n  # inside\n  - name: a\n    value: \"b\"\n  - \nafter: 2\n",
            "a:\n  - x\n  -\n    k: v\nb: [] \nc: -1\nd: -1.5\n",
            "m:\n  l:\n  - type: a\n    d: 1m\n  - type: b\n  after: false\nnext: 1\n",
            "images:\n  - name: a\n    repository: eu.gcr.io/x/y\n    tag: \"v1.0\"\n    labels:\n    - name: x\n",
        ];
        for text in documents {
            let fast = parse_map(text.as_bytes());
            assert!(fast.is_some(), "not accepted: {text:?}");
            assert_eq!(fast, full(text), "{text:?}");
        }
        // Lines YAML 1.1 reads otherwise, in their value or key (not their comment), leave the direct reading.
        for text in [
            "a: yes\n",
            "on: 1\n",
            "a: 1_000\n",
            "a: x # it's on\n",
            "l:\n- n\n",
        ] {
            assert_eq!(parse_yaml11_map(text), None, "{text:?}");
        }
        assert!(parse_yaml11_map("a: x # no\n").is_some());
    }

    #[test]
    fn plain_scalars_end_at_a_comment_and_refuse_mapping_indicators() {
        // The reading with substring searches that `plain` replaces.
        fn searched(rest: &str) -> Option<&str> {
            let end = rest.find(" #").unwrap_or(rest.len());
            let text = rest[..end].trim_end_matches(' ');
            (!(text.contains(": ") || text.ends_with(':'))).then_some(text)
        }
        for rest in [
            "x",
            "x # c",
            "x#y # c",
            "a: b",
            "a:b",
            "a:",
            "a: # c",
            "http://x:80/y",
            "# c",
            "x  #c #d",
            "a:b:",
            "x :",
            "#",
            "x #",
        ] {
            assert_eq!(plain(rest), searched(rest), "{rest:?}");
        }
    }

    #[test]
    fn plain_keys_are_those_resolved_as_their_own_text() {
        for key in [
            "a", "image", "_x", "e5", "E", "inf", "Inf", "infinity", "INFINITY", "nan", "NaN",
            "null", "Null", "NULL", "nULL", "true", "True", "TRUE", "tRUE", "false", "False",
            "FALSE", "yes", "on", "a.b/c-d", "x1_0",
        ] {
            let resolved = resolve_plain(key) == Some(Value::String(key.to_string()));
            assert_eq!(plain_key(key), resolved, "{key:?}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_full_parser() {
        for text in [
            "a: |\n  x\n",
            "a: >\n  x\n",
            "a: [1, 2]\n",
            "a: {b: 1}\n",
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: \"x\\ny\"\n",
            "a: \"x\n  y\"\n",
            "a: x\n  y\n",
            "a: 0x1F\n",
            "a: 017\n",
            "a: +1\n",
            "a: 12345678901234567890\n",
            "a: 1\na: 2\n",
            "a:\tb\n",
            "a: é\n",
            "---\na: 1\n",
            "- a\n",
            "x\n",
            "1: a\n",
            "true: a\n",
            "a: b: c\n",
            "a:b\n",
            "a: 1\n b: 2\n",
            "a: ?x\n",
            "a: \"x\" y\n",
            "a: {} x\n",
            "<<: {}\n",
            "a: -x\n",
            "a: {\n",
        ] {
            assert_eq!(parse_map(text.as_bytes()), None, "{text:?}");
        }
    }

    /// `(name, text)` of every `values*.yaml` and `Chart.yaml` in the benchmark archives and the fixture charts.
    fn corpus() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let wanted = |name: &str| {
            let base = name.rsplit('/').next().unwrap_or(name);
            base == "Chart.yaml" || (base.starts_with("values") && base.ends_with(".yaml"))
        };
        let mut out = Vec::new();
        for entry in std::fs::read_dir(root.join("benches/charts")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "tgz") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
            for entry in archive.entries().unwrap() {
                let mut entry = entry.unwrap();
                let name = entry.path().unwrap().to_string_lossy().into_owned();
                let mut text = String::new();
                if wanted(&name) && std::io::Read::read_to_string(&mut entry, &mut text).is_ok() {
                    out.push((name, text));
                }
            }
        }
        let mut dirs = vec![root.join("tests/fixtures"), root.join("benches/charts")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.to_string_lossy().into_owned();
                if path.is_dir() {
                    dirs.push(path);
                } else if wanted(&name)
                    && let Ok(text) = std::fs::read_to_string(&path)
                {
                    out.push((name, text));
                }
            }
        }
        out
    }

    #[test]
    fn the_charts_values_files_read_alike() {
        // Those accepted must read as with the full parser, and most must be accepted, or the fast path is of no
        // use.
        let files = corpus();
        let mut accepted = 0;
        for (name, original) in &files {
            let Ok(text) = crate::yaml11::as_yaml11(original) else {
                continue;
            };
            // Read without the rewrite only where the rewrite changes nothing.
            if let Some(direct) = parse_yaml11_map(original) {
                assert_eq!(Some(direct), parse_map(text.as_bytes()), "{name}");
            }
            if let Some(fast) = parse_map(text.as_bytes()) {
                accepted += 1;
                assert_eq!(Some(fast), full(&text), "{name}");
            }
        }
        assert!(files.len() >= 40, "{} files", files.len());
        assert!(
            accepted * 4 >= files.len() * 3,
            "{accepted} of {} accepted",
            files.len()
        );
    }
}
