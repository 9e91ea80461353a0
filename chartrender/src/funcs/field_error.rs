//! Go's text for a failed field chain on `.`, `$` or a range variable (`.Values.port.x` with a number at `port`,
//! `$v.a.b` below a missing key): `template: t.yaml:1:10: executing "t.yaml" at <.Values.port.x>: can't evaluate
//! field x in type interface {}` or `… nil pointer evaluating interface {}.b`.
//!
//! Such chains are plain minijinja attribute lookups, which give an undefined value that fails only where it is
//! used, without saying where the chain broke. So the work is done here, on the failure path alone: the failing
//! expression of the translated template (the error's span) is searched for its chains (`_d0.a.b`, `_p3`, `_d1.x`),
//! each chain is walked again from the data of the execution (`_d0`) and from what each `with` or `range` bound
//! (`_d1` …, found before the span in the translated text; every element of a ranged list in turn), and the first
//! walk that breaks names the field, the receiver's type and the chain, which is then found in the Go source of the
//! action for Go's line and column.

use minijinja::Error;
use minijinja::value::{Value, ValueKind};

use super::collections::range_values;
use super::gotype::type_of;
use super::value::{MapType, is_nil, map_type};

/// How many receivers (one per combination of `range` elements) one failure is traced through at most.
const MAX_CANDIDATES: usize = 10_000;

/// A chain of the failed expression that breaks: Go's message and the chain's fields (without its base).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BrokenChain {
    /// `_d<n>` of the base (`_p<n>` names are read as `_d0` and their path), or [`DECLARED`] or [`PIPELINE`].
    pub(crate) dot: usize,
    pub(crate) fields: Vec<String>,
    pub(crate) message: String,
}

/// [`BrokenChain::dot`] of a chain on a declared variable (`$x.a`).
pub(crate) const DECLARED: usize = usize::MAX;
/// [`BrokenChain::dot`] of a chain on the key variable `_k<n>` of a `range`: `KEY + n`.
pub(crate) const KEY: usize = 1 << 32;
/// [`BrokenChain::dot`] of a chain on a parenthesized pipeline (`(list 1).a`).
pub(crate) const PIPELINE: usize = usize::MAX - 1;

/// The chain of the failed `f__field(base, "a", "b")` call at `span` (a chain on a declared variable or a pipeline,
/// which fails with Go's text itself), to be reported with `message`.
pub(crate) fn field_call(
    source: &str,
    span: std::ops::Range<usize>,
    message: &str,
) -> Option<BrokenChain> {
    let call = source.get(span)?.strip_prefix("f__field(")?;
    let dot = if call.starts_with("_v.") {
        DECLARED
    } else if call.starts_with('(') {
        PIPELINE
    } else {
        return None;
    };
    // The field names are the string literals after the base, up to the call's end.
    let bytes = call.as_bytes();
    let mut depth = 0usize;
    let mut fields = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = skip_string(bytes, i);
                if depth == 0 {
                    fields.push(call.get(i + 1..end - 1)?.to_string());
                }
                i = end;
                continue;
            }
            b'(' => depth += 1,
            b')' if depth == 0 => break,
            b')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    (!fields.is_empty()).then(|| BrokenChain {
        dot,
        fields,
        message: message.to_string(),
    })
}

/// The broken chain behind an undefined-value error in the translated `source` at `span`, with `data` as `_d0` and
/// `aliases` the paths of the template's `_p<n>` names; `None` when no chain of the span can be traced.
pub(crate) fn broken_chain(
    source: &str,
    span: std::ops::Range<usize>,
    data: &Value,
    aliases: Option<&[String]>,
) -> Option<BrokenChain> {
    // The span may cover only the last lookups of a chain (`.z.w` of `_d1.x.z.w`): it is widened to whole chains.
    let bytes = source.as_bytes();
    let mut start = span.start.min(bytes.len());
    while start > 0 && (is_word(bytes[start - 1]) || bytes[start - 1] == b'.') {
        start -= 1;
    }
    let mut end = span.end.min(bytes.len()).max(start);
    while end < bytes.len() && (is_word(bytes[end]) || bytes[end] == b'.') {
        end += 1;
    }
    let expression = source.get(start..end)?;
    let chains = chains_in(expression, aliases);
    if chains.is_empty() {
        return None;
    }
    // Each chain's base receivers, traced in the order Go would meet them.
    for (dot, fields) in &chains {
        let receivers = receivers_of(*dot, &source[..start], data, aliases, 0)?;
        for receiver in receivers {
            match walk(&receiver, fields) {
                Ok(_) => {}
                Err(Some(message)) => {
                    return Some(BrokenChain {
                        dot: *dot,
                        fields: fields.clone(),
                        message,
                    });
                }
                Err(None) => return None,
            }
        }
    }
    None
}

/// The field chain given to `f__map_arg` in the failed call at `span` (a nil map argument taken from a field), to
/// be reported with `message`.
pub(crate) fn refused_map_argument(
    source: &str,
    span: std::ops::Range<usize>,
    aliases: Option<&[String]>,
    message: &str,
) -> Option<BrokenChain> {
    let call = source.get(span)?;
    let inner = call.strip_prefix("f__map_arg(")?;
    let (dot, fields) = chains_in(inner, aliases).into_iter().next()?;
    Some(BrokenChain {
        dot,
        fields,
        message: message.to_string(),
    })
}

/// A value a chain starts from, and whether Go holds it as an `interface {}` (a map entry or a list element: its
/// type reads `interface {}` in messages) or as itself (the data passed to a template).
#[derive(Debug, Clone)]
struct Receiver {
    value: Value,
    boxed: bool,
}

/// The chains (`_d<n>` base, fields) of a translated expression, in text order; `_p<n>` names are `_d0` with
/// their recorded path. Method calls (`_d0.Files.Get(…)`) and text inside string literals are left out.
fn chains_in(expression: &str, aliases: Option<&[String]>) -> Vec<(usize, Vec<String>)> {
    let bytes = expression.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' || b == b'\'' {
            i = skip_string(bytes, i);
            continue;
        }
        let starts_word = i == 0 || !is_word(bytes[i - 1]) && bytes[i - 1] != b'.';
        if b == b'_' && starts_word {
            let end = i + bytes[i..].iter().take_while(|c| is_word(**c)).count();
            let name = &expression[i + 1..end];
            let mut fields = Vec::new();
            let mut at = end;
            while bytes.get(at) == Some(&b'.') {
                let field_end =
                    at + 1 + bytes[at + 1..].iter().take_while(|c| is_word(**c)).count();
                fields.push(expression[at + 1..field_end].to_string());
                at = field_end;
            }
            let is_call = bytes.get(at) == Some(&b'(');
            if is_call {
                fields.pop();
            }
            let base = if let Some(n) = name.strip_prefix('d').and_then(|n| n.parse().ok()) {
                Some((n, fields))
            } else if let Some(n) = name.strip_prefix('k').and_then(|n| n.parse::<usize>().ok()) {
                Some((KEY + n, fields))
            } else if let Some(n) = name.strip_prefix('p').and_then(|n| n.parse::<usize>().ok()) {
                aliases.and_then(|paths| paths.get(n)).map(|path| {
                    let mut all = path_fields(path);
                    all.extend(fields);
                    (0, all)
                })
            } else {
                None
            };
            if let Some((dot, fields)) = base.filter(|(_, fields)| !fields.is_empty()) {
                out.push((dot, fields));
            }
            i = at.max(i + 1);
            continue;
        }
        i += 1;
    }
    out
}

/// The field names of an alias path (names joined by `.`).
fn path_fields(path: &str) -> Vec<String> {
    path.split('.').map(str::to_string).collect()
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The index after the string literal starting at `start`.
fn skip_string(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// What `_d<dot>` holds where `before` (the translated text up to the failure) ends: the data for `_d0`, the value
/// of the nearest `{% set _d<dot> = … %}` (a `with`), or each element of the nearest
/// `{% for … _d<dot> in f_range_…(…) %}` (a `range`), when what they bind is itself a traceable chain.
fn receivers_of(
    dot: usize,
    before: &str,
    data: &Value,
    aliases: Option<&[String]>,
    depth: usize,
) -> Option<Vec<Receiver>> {
    if dot == 0 {
        return Some(vec![Receiver {
            value: data.clone(),
            boxed: false,
        }]);
    }
    if depth > 64 {
        return None;
    }
    if let Some(n) = dot.checked_sub(KEY).filter(|_| dot < PIPELINE) {
        return keys_of(n, before, data, aliases, depth);
    }
    let name = format!("_d{dot}");
    let with = before.rfind(&format!("{{% set {name} = "));
    let range = before.rfind(&format!(" {name} in f_range_"));
    let (at, is_range) = match (with, range) {
        (Some(w), Some(r)) if r > w => (r, true),
        (Some(w), _) => (w, false),
        (None, Some(r)) => (r, true),
        (None, None) => return None,
    };
    let text = &before[at..];
    let expression = if is_range {
        let open = text.find('(')?;
        let close = text.find(") %}")?;
        text.get(open + 1..close)?
    } else {
        let start = text.find(" = ")? + 3;
        let end = text.find(" %}")?;
        text.get(start..end)?
    };
    let (base, fields) = whole_chain(expression, aliases)?;
    let mut out = Vec::new();
    for receiver in receivers_of(base, &before[..at], data, aliases, depth + 1)? {
        // A receiver whose own chain breaks failed before this one could run.
        let Ok(value) = walk(&receiver, &fields) else {
            continue;
        };
        if !is_range {
            // Go unwraps a pipeline's `interface {}` result, so a `with` value has its own type.
            out.push(Receiver {
                value: value.value,
                boxed: false,
            });
        } else if !is_nil(&value.value) {
            let boxed = type_of(&value.value) == "[]interface {}"
                || map_type(&value.value).is_some_and(|t| t != MapType::Strings);
            let items = range_values(std::slice::from_ref(&value.value)).ok()?;
            for item in items.try_iter().ok()? {
                out.push(Receiver { value: item, boxed });
            }
        }
        if out.len() > MAX_CANDIDATES {
            return None;
        }
    }
    Some(out)
}

/// The keys `_k<n>` takes in the nearest `{% for _k<n>, _d<n> in f_range_pairs(…) %}` before `before` ends, when
/// what it ranges over is a traceable chain: a list's indexes (Go's `int`) or a map's keys in order (`string`).
fn keys_of(
    n: usize,
    before: &str,
    data: &Value,
    aliases: Option<&[String]>,
    depth: usize,
) -> Option<Vec<Receiver>> {
    let at = before.rfind(&format!(" _k{n}, _d{n} in f_range_pairs("))?;
    let text = &before[at..];
    let expression = text.get(text.find('(')? + 1..text.find(") %}")?)?;
    let (base, fields) = whole_chain(expression, aliases)?;
    let mut out = Vec::new();
    for receiver in receivers_of(base, &before[..at], data, aliases, depth + 1)? {
        let Ok(ranged) = walk(&receiver, &fields) else {
            continue;
        };
        if is_nil(&ranged.value) {
            continue;
        }
        let pairs = super::collections::range_pairs(std::slice::from_ref(&ranged.value)).ok()?;
        for pair in pairs.try_iter().ok()? {
            out.push(Receiver {
                value: pair.get_item(&Value::from(0)).ok()?,
                boxed: false,
            });
        }
        if out.len() > MAX_CANDIDATES {
            return None;
        }
    }
    Some(out)
}

/// `_d<n>.a.b` or `_p<n>.a.b` as a whole (the bound expression of a `with` or `range`).
fn whole_chain(expression: &str, aliases: Option<&[String]>) -> Option<(usize, Vec<String>)> {
    let expression = expression.trim();
    let chains = chains_in(expression, aliases);
    let whole = expression.starts_with('_')
        && expression.bytes().all(|b| is_word(b) || b == b'.')
        && chains.len() == 1;
    if whole {
        return chains.into_iter().next();
    }
    // A base alone (`_d0`, `_p2`) has no fields, so `chains_in` leaves it out.
    let rest = expression.strip_prefix('_')?;
    let (kind, digits) = rest.split_at(1);
    let n: usize = digits.parse().ok()?;
    match kind {
        "d" => Some((n, Vec::new())),
        "p" => Some((0, path_fields(aliases?.get(n)?))),
        _ => None,
    }
}

/// Follows `fields` from `receiver` as Go does: a map gives its entry (nil when missing), anything else fails with
/// Go's text (`Err(Some(_))`); `Err(None)` when the chain leaves what can be traced here (a field an object lacks).
fn walk(receiver: &Receiver, fields: &[String]) -> Result<Receiver, Option<String>> {
    let mut current = receiver.clone();
    for field in fields {
        let value = &current.value;
        if is_nil(value) {
            return Err(Some(format!(
                "nil pointer evaluating interface {{}}.{field}"
            )));
        }
        if value.kind() != ValueKind::Map {
            // A Go struct (`.Chart`, `.Capabilities`) answers its own fields, each of its own type.
            if value.as_object().is_some()
                && let Ok(next) = value.get_attr(field)
                && !next.is_undefined()
            {
                current = Receiver {
                    value: next,
                    boxed: false,
                };
                continue;
            }
            let type_name = if current.boxed {
                "interface {}"
            } else {
                type_of(value)
            };
            return Err(Some(format!(
                "can't evaluate field {field} in type {type_name}"
            )));
        }
        let go_type = map_type(value);
        let next = value.get_attr(field).map_err(|_| None)?;
        if next.is_undefined() && go_type.is_none() {
            return Err(None);
        }
        current = Receiver {
            value: next,
            // The entries of Go's `map[string]interface {}` (and `chartutil.Values`) are interfaces; a
            // `map[string]string` or a struct field has its own type.
            boxed: matches!(go_type, Some(MapType::Plain | MapType::Values)),
        };
    }
    Ok(current)
}

/// Where Go reports a broken chain: the chain as written in `action` (Go source of one action, starting at
/// `line`:`column`) and its position, the chain's second field (its first after a variable, or its only one).
pub(crate) fn locate_chain(
    action: &str,
    line: usize,
    column: usize,
    broken: &BrokenChain,
) -> Option<(usize, usize, String)> {
    if broken.dot == PIPELINE {
        return super::location::pipeline_chain(action, line, column, &broken.fields);
    }
    let bytes = action.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if matches!(b, b'"' | b'`' | b'\'') {
            i = if b == b'`' {
                action[i + 1..].find('`').map_or(bytes.len(), |n| i + n + 2)
            } else {
                skip_string(bytes, i)
            };
            continue;
        }
        let free = i == 0 || !(is_word(bytes[i - 1]) || matches!(bytes[i - 1], b'.' | b'$' | b')'));
        if free && matches!(b, b'$' | b'.') {
            let (end, variable, fields, position) = go_chain(action, i);
            let fits = fields == broken.fields
                && match broken.dot {
                    0 => variable.is_none_or(str::is_empty),
                    DECLARED => variable.is_some_and(|name| !name.is_empty()),
                    key if key >= KEY => variable.is_some_and(|name| !name.is_empty()),
                    _ => true,
                };
            if fits {
                let (line, column) = super::location::position_in(action, line, column, position);
                return Some((line, column, action[i..end].to_string()));
            }
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
    None
}

/// The Go chain starting at `start` of `text`: its end, its variable name (`Some("")` for `$`), its fields and the
/// offset Go reports for it.
pub(crate) fn go_chain(text: &str, start: usize) -> (usize, Option<&str>, Vec<String>, usize) {
    let bytes = text.as_bytes();
    let mut i = start;
    let mut variable = None;
    if bytes[i] == b'$' {
        let end = i + 1 + bytes[i + 1..].iter().take_while(|c| is_word(**c)).count();
        variable = Some(&text[i + 1..end]);
        i = end;
    }
    let mut fields = Vec::new();
    let mut starts = Vec::new();
    while bytes.get(i) == Some(&b'.') {
        let end = i + 1 + bytes[i + 1..].iter().take_while(|c| is_word(**c)).count();
        if end == i + 1 {
            break;
        }
        starts.push(i);
        fields.push(text[i + 1..end].to_string());
        i = end;
    }
    let position = match (variable, starts.as_slice()) {
        (Some(_), [first, ..]) => *first,
        (None, [_, second, ..]) => *second,
        (None, [first]) => *first,
        _ => start,
    };
    (i, variable, fields, position)
}

/// The error message of a broken chain is Go's only when its kind is an undefined value.
pub(crate) fn is_undefined_failure(error: &Error) -> bool {
    error.kind() == minijinja::ErrorKind::UndefinedError
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::funcs::value::from_json;

    fn values() -> Value {
        from_json(&serde_json::json!({
            "Values": {"a": 3, "s": "text", "l": [{"x": 1}, 2], "m": {"x": {"y": 1}}, "n": null},
        }))
    }

    /// A translated template, its failing expression, and the broken chain (`_d<n>`, fields, message) or none.
    type ChainCase = (
        &'static str,
        &'static str,
        Option<(usize, &'static [&'static str], &'static str)>,
    );

    /// Each message as Helm v3.11.3 gives it for the Go template the translated text stands for.
    #[test]
    fn broken_chains_carry_gos_text() {
        let cases: [ChainCase; 8] = [
            (
                "{{ _d0.Values.a.b }}",
                "_d0.Values.a.b",
                Some((
                    0,
                    &["Values", "a", "b"],
                    "can't evaluate field b in type interface {}",
                )),
            ),
            (
                "{{ f_quote(_d0.Values.m.z.y) }}",
                "f_quote(_d0.Values.m.z.y)",
                Some((
                    0,
                    &["Values", "m", "z", "y"],
                    "nil pointer evaluating interface {}.y",
                )),
            ),
            (
                "{{ _d0.Values.n.x }}",
                "_d0.Values.n.x",
                Some((
                    0,
                    &["Values", "n", "x"],
                    "nil pointer evaluating interface {}.x",
                )),
            ),
            (
                "{% for _d1 in f_range_values(_d0.Values.l) %}{{ _d1.x }}{% endfor %}",
                "_d1.x",
                Some((1, &["x"], "can't evaluate field x in type interface {}")),
            ),
            (
                "{% set _d1 = _d0.Values.m %}{% if _d1 %}{{ _d1.x.y.z }}{% endif %}",
                "_d1.x.y.z",
                Some((
                    1,
                    &["x", "y", "z"],
                    "can't evaluate field z in type interface {}",
                )),
            ),
            (
                "{% set _d1 = _d0.Values.a %}{% if _d1 %}{{ _d1.b }}{% endif %}",
                "_d1.b",
                Some((1, &["b"], "can't evaluate field b in type float64")),
            ),
            // A chain that does not break, a string literal and a method call are no answer.
            ("{{ _d0.Values.m.x }}", "_d0.Values.m.x", None),
            (
                "{{ f_print(\"_d0.Values.a.b\", _d0.Files.Get(\"x\")) }}",
                "f_print(\"_d0.Values.a.b\", _d0.Files.Get(\"x\"))",
                None,
            ),
        ];
        for (source, expression, want) in cases {
            let start = source.find(expression).unwrap();
            let got = broken_chain(source, start..start + expression.len(), &values(), None);
            let want = want.map(|(dot, fields, message)| BrokenChain {
                dot,
                fields: fields.iter().map(|f| (*f).to_string()).collect(),
                message: message.to_string(),
            });
            assert_eq!(got, want, "{source}");
        }
    }

    #[test]
    fn range_keys_are_indexes_or_map_keys() {
        let source = "{% for _k1, _d1 in f_range_pairs(_d0.Values.l) %}{{ _k1.x }}{% endfor %}";
        let start = source.find("_k1.x").unwrap();
        let got = broken_chain(source, start..start + 5, &values(), None).unwrap();
        assert_eq!(got.dot, KEY + 1);
        assert_eq!(got.message, "can't evaluate field x in type int");
    }

    #[test]
    fn aliases_stand_for_their_paths_from_the_data() {
        let paths = vec!["Values.s".to_string()];
        let got = broken_chain("{{ _p0.x }}", 3..8, &values(), Some(&paths)).unwrap();
        assert_eq!(got.fields, ["Values", "s", "x"]);
        assert_eq!(got.message, "can't evaluate field x in type interface {}");
    }

    #[test]
    fn the_data_of_an_include_keeps_its_own_type() {
        let got = broken_chain("{{ _d0.a }}", 3..8, &Value::from(3), None).unwrap();
        assert_eq!(got.message, "can't evaluate field a in type int");
    }

    /// Columns as Helm v3.11.3 reports them.
    #[test]
    fn chains_are_located_like_go() {
        let chain = |dot: usize, fields: &[&str]| BrokenChain {
            dot,
            fields: fields.iter().map(|f| (*f).to_string()).collect(),
            message: String::new(),
        };
        let cases = [
            (
                "{{ .Values.a.b }}",
                0,
                chain(0, &["Values", "a", "b"]),
                Some((1, 10, ".Values.a.b")),
            ),
            (
                "{{ $.Values.s.x }}",
                0,
                chain(0, &["Values", "s", "x"]),
                Some((1, 4, "$.Values.s.x")),
            ),
            ("{{ $v.x }}", 27, chain(1, &["x"]), Some((1, 32, "$v.x"))),
            ("{{ .x }}", 21, chain(1, &["x"]), Some((1, 24, ".x"))),
            (
                "{{ quote\n  .a.b }}",
                0,
                chain(0, &["a", "b"]),
                Some((2, 4, ".a.b")),
            ),
            ("{{ print \".a.b\" .a.c }}", 0, chain(0, &["a", "b"]), None),
            ("{{ $x.a.b }}", 0, chain(0, &["a", "b"]), None),
        ];
        for (action, column, broken, want) in cases {
            let want = want.map(|(l, c, t)| (l, c, t.to_string()));
            assert_eq!(locate_chain(action, 1, column, &broken), want, "{action}");
        }
    }
}
