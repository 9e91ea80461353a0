//! Go's error locations for translated templates: the `line:column` and the command text Go's `text/template`
//! names when a function call fails (`template: t.yaml:1:3: executing "t.yaml" at <eq 1 1.0>: error calling eq: …`).
//!
//! minijinja reports only the line of a failure, so the failing command is found again in the Go source of the
//! action on that line by the function name the message carries (`error calling NAME:`, `wrong number of args for
//! NAME:`, or `required`/`fail`). Go's column is the byte offset of the command within its line, counted from 0.

/// Where Go reports a failing command: its line and column, and the command as Go prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandLocation {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) command: String,
    /// The Go source from the command's start to the end of its action.
    pub(crate) raw: String,
}

/// The function a Go error message is about (`error calling eq: …` → `eq`), if it names one.
pub(crate) fn failing_function(message: &str) -> Option<&str> {
    let rest = message
        .strip_prefix("error calling ")
        .or_else(|| message.strip_prefix("wrong number of args for "))?;
    let name = &rest[..rest.find(':')?];
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .then_some(name)
}

/// The single call of `function` in `action` (Go source of one action, starting at `line`:`column`), or `None`
/// when it is not called there exactly once.
#[cfg(test)]
pub(crate) fn locate_call(
    action: &str,
    line: usize,
    column: usize,
    function: &str,
) -> Option<CommandLocation> {
    match call_starts(action, function)[..] {
        [start] => Some(call_at(action, line, column, start)),
        _ => None,
    }
}

/// The byte offsets in `action` where `function` is named as a word outside literals, in source order: where Go
/// calls it as an argument (`print not`), when no command calls it.
pub(crate) fn word_starts(action: &str, function: &str) -> Vec<usize> {
    starts_outside_literals(action, |rest| {
        let len = word_len(rest);
        (len > 0 && &rest[..len] == function, len)
    })
}

/// The byte offsets in `action` of `method` (`.Name`) ending a field chain outside literals, in source order
/// (`$v.Compare`, `(semver "1").Compare`).
pub(crate) fn method_starts(action: &str, method: &str) -> Vec<usize> {
    starts_outside_literals(action, |rest| {
        let found = rest.starts_with(method) && word_len(&rest[method.len()..]) == 0;
        (found, if found { method.len() } else { 0 })
    })
}

/// The byte offsets in `action`, outside literals, where `look(rest)` finds what it looks for; it answers whether
/// `rest` starts with it and how many bytes to step over (at least one character).
fn starts_outside_literals(action: &str, look: impl Fn(&str) -> (bool, usize)) -> Vec<usize> {
    let bytes = action.as_bytes();
    let mut starts = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if matches!(bytes[i], b'"' | b'`' | b'\'') {
            i = skip_quoted(bytes, i);
            continue;
        }
        let rest = &action[i..];
        let (found, step) = look(rest);
        if found {
            starts.push(i);
        }
        let one = rest.chars().next().map_or(1, char::len_utf8);
        i += step.max(one);
    }
    starts
}

/// The byte offsets in `action` of the commands calling `function`, in source order.
pub(crate) fn call_starts(action: &str, function: &str) -> Vec<usize> {
    command_starts(action)
        .into_iter()
        .filter(|&start| &action[start..start + word_len(&action[start..])] == function)
        .collect()
}

/// The line and column (Go's: bytes from the line's start, counted from 0) of byte `at` of `text`, a piece of
/// template source that starts at `line`:`column`.
pub(super) fn position_in(text: &str, line: usize, column: usize, at: usize) -> (usize, usize) {
    let before = &text[..at];
    match before.rfind('\n') {
        Some(newline) => (line + before.matches('\n').count(), at - newline - 1),
        None => (line, column + at),
    }
}

/// The command starting at byte `start` of `action` (Go source of one action, starting at `line`:`column`).
pub(crate) fn call_at(action: &str, line: usize, column: usize, start: usize) -> CommandLocation {
    let (line, column) = position_in(action, line, column, start);
    CommandLocation {
        line,
        column,
        command: command_text(&action[start..]),
        raw: action[start..].to_string(),
    }
}

/// Which call of `functions` the failing one is among those on its line of the translated template `source`:
/// `(index, count)` of the `f_<function>(` calls on the line of `span` (before it, and in all).
pub(crate) fn translated_call(
    source: &str,
    span: std::ops::Range<usize>,
    functions: &[&str],
) -> Option<(usize, usize)> {
    let start = span.start.min(source.len());
    let line_start = source[..start].rfind('\n').map_or(0, |n| n + 1);
    let line_end = source[start..]
        .find('\n')
        .map_or(source.len(), |n| start + n);
    let line = &source[line_start..line_end];
    let mut positions: Vec<usize> = functions
        .iter()
        .flat_map(|function| {
            let call = format!("f_{function}(");
            line.match_indices(&call)
                .map(|(i, _)| line_start + i)
                .collect::<Vec<_>>()
        })
        .filter(|&i| i == line_start || !source.as_bytes()[i - 1].is_ascii_alphanumeric())
        .collect();
    positions.sort_unstable();
    let index = positions.iter().filter(|&&i| i < start).count();
    // The span starts at the call itself or inside its arguments.
    let index = if positions.contains(&start) {
        index
    } else {
        index.checked_sub(1)?
    };
    Some((index, positions.len()))
}

/// The node Go last evaluated in the pipeline of the `range` action `action` (Go source, starting at
/// `line`:`column`), which names a failed iteration (`range can't iterate over 3` is reported at the `3` of
/// `range seq 3`): the last argument of its last command, inside parentheses when that is a pipeline, or the
/// command's function when it has no argument. `None` when `action` is no `range`.
pub(crate) fn range_node(action: &str, line: usize, column: usize) -> Option<CommandLocation> {
    let mut at = action.find("{{")? + 2;
    at += usize::from(action[at..].starts_with('-'));
    at += action[at..].len() - action[at..].trim_start().len();
    if !action[at..].starts_with("range")
        || !action[at + 5..].starts_with(|c: char| c.is_ascii_whitespace())
    {
        return None;
    }
    at += 5;
    // Declarations: `$v :=`, `$k, $v :=`.
    let after = &action[at..];
    if let Some(assign) = after
        .find(":=")
        .filter(|&i| after[..i].trim_start().starts_with('$'))
    {
        at += assign + 2;
    }
    let close = action.rfind("}}")?;
    let mut end = action[..close].trim_end().len();
    if action[..end].ends_with('-')
        && action[..end - 1].ends_with(|c: char| c.is_ascii_whitespace())
    {
        end -= 1;
    }
    let (offset, text) = last_node(action, at, end)?;
    let (line, column) = position_in(action, line, column, offset);
    Some(CommandLocation {
        line,
        column,
        command: text,
        raw: String::new(),
    })
}

/// Where Go reports a refused argument of the call at `call`: argument `index` (0-based, after the function
/// name), or for the piped value the node Go evaluated last (in the last argument, or the function name). Its
/// line, column and text, and whether the node is the argument itself (not the last node of a parenthesized
/// pipeline).
pub(crate) fn argument_node(
    call: &CommandLocation,
    index: usize,
) -> Option<(usize, usize, String, bool)> {
    let raw = call.raw.as_str();
    let bytes = raw.as_bytes();
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b')' | b'|' => break,
            b'}' if bytes.get(i + 1) == Some(&b'}') => break,
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'(' => {
                let close = matching_paren(bytes, i, bytes.len())?;
                words.push((i, close + 1));
                i = close + 1;
            }
            b'"' | b'`' | b'\'' => {
                let close = skip_quoted(bytes, i);
                words.push((i, close));
                i = close;
            }
            _ => {
                let close = i + raw[i..]
                    .find([' ', '\t', '\n', '\r', '|', '(', ')', '}'])
                    .unwrap_or(raw.len() - i);
                words.push((i, close.max(i + 1)));
                i = close.max(i + 1);
            }
        }
    }
    // A refused piped value (no explicit argument at `index`) is reported at the node Go evaluated last: the
    // last explicit argument's (its last node when it is a parenthesized pipeline), or the function's name.
    let explicit = words.get(index + 1);
    let (start, end) = *explicit.or_else(|| words.last())?;
    let word = &raw[start..end];
    let direct = explicit.is_some() && !word.starts_with('(');
    let (position, text) = if word.starts_with('(') && word.ends_with(')') {
        last_node(raw, start + 1, end - 1)?
    } else if word.starts_with(['.', '$']) {
        (super::field_error::go_chain(raw, start).3, word.to_string())
    } else {
        (start, word.to_string())
    };
    let (line, column) = position_in(raw, call.line, call.column, position);
    Some((line, column, text, direct))
}

/// Where Go reports a broken chain on a parenthesized pipeline (`(get $m "k").a.b` in `action`, starting at
/// `line`:`column`): the last node it evaluated inside the parentheses; or on a function's result (`list.a`): the
/// function. The first such chain with `fields`.
pub(crate) fn pipeline_chain(
    action: &str,
    line: usize,
    column: usize,
    fields: &[String],
) -> Option<(usize, usize, String)> {
    let bytes = action.as_bytes();
    let suffix: String = fields.iter().map(|f| format!(".{f}")).collect();
    // Whether the chain `suffix` follows at `at`, and nothing of a longer chain after it.
    let chained_at = |at: usize| {
        let after = &action[at..];
        after.starts_with(&suffix)
            && after[suffix.len().min(after.len())..]
                .bytes()
                .next()
                .is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
    };
    let mut opens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'`' | b'\'' => {
                i = skip_quoted(bytes, i);
                continue;
            }
            b'(' => opens.push(i),
            // A function name (not a field, variable or keyword's continuation) with the chain right after it.
            b if (b.is_ascii_alphabetic() || b == b'_')
                && (i == 0
                    || !(bytes[i - 1].is_ascii_alphanumeric()
                        || matches!(bytes[i - 1], b'_' | b'.' | b'$'))) =>
            {
                let end = action[i..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(action.len(), |n| i + n);
                if chained_at(end) {
                    let (line, column) = position_in(action, line, column, i);
                    return Some((line, column, action[i..end].to_string()));
                }
                i = end;
                continue;
            }
            b')' => {
                let open = opens.pop()?;
                if chained_at(i + 1) {
                    let (offset, text) = last_node(action, open + 1, i)?;
                    let (line, column) = position_in(action, line, column, offset);
                    return Some((line, column, text));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The last node Go evaluates in the pipeline `text[start..end]`: its offset in `text` and its text.
fn last_node(text: &str, start: usize, end: usize) -> Option<(usize, String)> {
    let bytes = text.as_bytes();
    // The words of the last command at the top level: (start, end) of each, and for a chain on a parenthesized
    // pipeline (`(f x).a`) the index of its `)`: Go evaluates the fields without moving on to a new node.
    let mut words: Vec<(usize, usize, Option<usize>)> = Vec::new();
    let mut i = start;
    while i < end {
        match bytes[i] {
            b'|' => words.clear(),
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'(' => {
                let close = matching_paren(bytes, i, end)?;
                words.push((i, close + 1, None));
                i = close + 1;
                continue;
            }
            b'"' | b'`' | b'\'' => {
                let close = skip_quoted(bytes, i).min(end);
                words.push((i, close, None));
                i = close;
                continue;
            }
            _ => {
                let close = i + text[i..end]
                    .find([' ', '\t', '\n', '\r', '|', '('])
                    .unwrap_or(end - i);
                match words.last_mut() {
                    Some(last) if bytes[i] == b'.' && last.1 == i && bytes[last.0] == b'(' => {
                        last.2 = Some(i - 1);
                        last.1 = close;
                    }
                    _ => words.push((i, close, None)),
                }
                i = close;
                continue;
            }
        }
        i += 1;
    }
    let (word_start, word_end, chained) = *words.last()?;
    if let Some(close) = chained {
        return last_node(text, word_start + 1, close);
    }
    if bytes[word_start] == b'(' && text[word_end..].trim_start().starts_with(['|', '}', ')']) {
        return last_node(text, word_start + 1, word_end - 1);
    }
    let word = &text[word_start..word_end];
    if word.starts_with(['.', '$']) {
        let (_, _, _, position) = super::field_error::go_chain(text, word_start);
        return Some((position, word.to_string()));
    }
    Some((word_start, word.to_string()))
}

/// The index of the `)` closing the `(` at `open`, before `end`.
pub(super) fn matching_paren(bytes: &[u8], open: usize, end: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < end {
        match bytes[i] {
            b'"' | b'`' | b'\'' => {
                i = skip_quoted(bytes, i);
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Byte offsets in `action` where a command may start: after `{{`/`{{-`, `(`, `|`, `:=`/`=`, or a control
/// keyword, outside string literals.
fn command_starts(action: &str) -> Vec<usize> {
    let bytes = action.as_bytes();
    let mut starts = Vec::new();
    let mut i = 0;
    let mut expecting = false;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' | b'`' | b'\'' => {
                i = skip_quoted(bytes, i);
                expecting = false;
                continue;
            }
            b'{' if bytes.get(i + 1) == Some(&b'{') => {
                i += 2;
                if bytes.get(i) == Some(&b'-') {
                    i += 1;
                }
                expecting = true;
                continue;
            }
            b'(' | b'|' => expecting = true,
            b'=' => expecting = true,
            b' ' | b'\t' | b'\n' | b'\r' | b':' => {}
            _ => {
                let len = word_len(&action[i..]).max(1);
                let word = &action[i..i + len];
                if expecting {
                    if matches!(
                        word,
                        "if" | "with" | "range" | "else" | "template" | "block"
                    ) {
                        i += len;
                        continue;
                    }
                    // A variable being declared or assigned (`$x := 3`, `$i, $v := …`) starts no command.
                    let after = action[i + len..].trim_start_matches([' ', '\t']);
                    let declared = word.starts_with('$') && after.starts_with([':', '=', ',']);
                    if !declared {
                        starts.push(i);
                    }
                }
                expecting = false;
                i += len;
                continue;
            }
        }
        i += 1;
    }
    starts
}

/// The index after the literal starting at `start` (escapes honoured in `"` and `'` literals).
pub(super) fn skip_quoted(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == b'\\' && quote != b'`' {
            i += 2;
            continue;
        }
        if bytes[i] == quote {
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

/// Length of the identifier-like word at the start of `text` (letters, digits, `_`, `.`, `$`). Every byte of a
/// non-ASCII character counts, as in Go's identifiers (and the template lexer's): a word then always ends on a
/// character boundary, and a scan that steps over it never lands inside a character.
fn word_len(text: &str) -> usize {
    text.bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$') || b >= 0x80)
        .count()
}

/// The command starting at the beginning of `text`, up to the `)`, `|` or `}}` that ends it, with its words
/// separated by single spaces as Go prints a command node.
fn command_text(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut end = bytes.len();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'`' | b'\'' => {
                i = skip_quoted(bytes, i);
                continue;
            }
            b'(' => depth += 1,
            b')' if depth == 0 => {
                end = i;
                break;
            }
            b')' => depth -= 1,
            b'|' if depth == 0 => {
                end = i;
                break;
            }
            b'}' if depth == 0 && bytes.get(i + 1) == Some(&b'}') => {
                end = i;
                break;
            }
            _ => {}
        }
        i += 1;
    }
    let mut command = text[..end].trim_end().to_string();
    if command.ends_with(" -") {
        command.truncate(command.len() - 2);
    }
    collapse_spaces(command.trim_end())
}

/// Runs of blanks outside literals as one space.
fn collapse_spaces(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'`' | b'\'' => {
                let end = skip_quoted(bytes, i);
                out.push_str(&text[i..end]);
                i = end;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {
                while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r') {
                    i += 1;
                }
                out.push(' ');
            }
            _ => {
                let next = text[i..]
                    .find(['"', '`', '\'', ' ', '\t', '\n', '\r'])
                    .map_or(text.len(), |n| i + n);
                out.push_str(&text[i..next]);
                i = next;
            }
        }
    }
    out
}

/// The column of each action of `actions` (line, Go source) in `text`, searched from the start of its line (the
/// first occurrence not already taken by an earlier action on that line).
pub(crate) fn action_columns(text: &str, actions: &[(usize, &str)]) -> Vec<Option<usize>> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut taken: Vec<(usize, usize)> = Vec::new();
    actions
        .iter()
        .map(|(line, source)| {
            let start = *line_starts.get(line.checked_sub(1)?)?;
            let from = taken
                .iter()
                .filter(|(l, _)| l == line)
                .map(|(_, end)| *end)
                .max()
                .unwrap_or(start);
            let at = from + text.get(from..)?.find(source)?;
            if text[start..at].contains('\n') {
                return None;
            }
            taken.push((*line, at + source.len()));
            Some(at - start)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// Found by `tests/fuzz_bounds.rs` (`{{.\u{113c2}N}}` in a failing template): a word with a character outside
    /// ASCII made the scan slice inside the character and panic while it located the failing action.
    #[test]
    fn command_starts_step_over_characters_outside_ascii() {
        for (action, want) in [
            ("{{.\u{113c2}N}}", vec![2]),
            ("{{ include\u{e9} . }}", vec![3]),
            ("{{ f \"\u{e9}\" | g\u{113c2} }}", vec![3, 12]),
        ] {
            assert_eq!(super::command_starts(action), want, "{action}");
        }
    }

    use super::*;

    #[test]
    fn method_starts_find_a_method_ending_a_chain_outside_literals() {
        for (action, method, want) in [
            ("{{ $v.Compare \"x\" }}", ".Compare", vec![5]),
            ("{{ (semver \"1\").Compare .x }}", ".Compare", vec![15]),
            ("{{ $v.CompareX 1 }}", ".Compare", vec![]),
            ("{{ print \".Compare\" $v.Compare }}", ".Compare", vec![22]),
            ("{{ é.x $v.Compare }}", ".Compare", vec![10]),
        ] {
            assert_eq!(method_starts(action, method), want, "{action}");
        }
    }

    #[test]
    fn failing_function_reads_go_messages() {
        let cases = [
            (
                "error calling eq: incompatible types for comparison",
                Some("eq"),
            ),
            ("wrong number of args for ne: want 2 got 1", Some("ne")),
            ("error calling include: template: …", Some("include")),
            ("nil pointer evaluating a field of a missing value", None),
            ("wrong type for value; expected string; got int", None),
        ];
        for (message, want) in cases {
            assert_eq!(failing_function(message), want, "{message}");
        }
    }

    /// An action, its column, the function to find, and Go's line, column and command (or none).
    type LocateCase = (
        &'static str,
        usize,
        &'static str,
        Option<(usize, usize, &'static str)>,
    );

    /// Columns and command texts as Helm v3.11.3 reports them for the same templates.
    #[test]
    fn locate_call_finds_gos_column_and_command() {
        let cases: [LocateCase; 9] = [
            ("{{ eq 1 1.0 }}", 0, "eq", Some((1, 3, "eq 1 1.0"))),
            ("{{- if eq 1 1.0 }}", 0, "eq", Some((1, 7, "eq 1 1.0"))),
            (
                "{{ range $i, $e := eq 1 1.0 }}",
                0,
                "eq",
                Some((1, 19, "eq 1 1.0")),
            ),
            ("{{ $x := eq 1 1.0 }}", 0, "eq", Some((1, 9, "eq 1 1.0"))),
            ("{{\n  eq 1 1.0 }}", 0, "eq", Some((2, 2, "eq 1 1.0"))),
            ("{{ \"a\" | eq 1 }}", 0, "eq", Some((1, 9, "eq 1"))),
            ("{{ with (eq 1 1.0) }}", 0, "eq", Some((1, 9, "eq 1 1.0"))),
            (
                "{{ include \"x\" (list) }}",
                110,
                "include",
                Some((1, 113, "include \"x\" (list)")),
            ),
            // Called twice, or only inside a string: not located.
            ("{{ eq (eq 1 2) \"eq 3\" }}", 0, "eq", None),
        ];
        for (action, column, function, want) in cases {
            let got =
                locate_call(action, 1, column, function).map(|l| (l.line, l.column, l.command));
            let want = want.map(|(l, c, t)| (l, c, t.to_string()));
            assert_eq!(got, want, "{action}");
        }
        assert_eq!(
            locate_call("{{ print \"eq\" }}", 1, 0, "eq"),
            None,
            "a word inside a string is not a call"
        );
    }

    #[test]
    fn translated_call_counts_the_calls_on_the_failing_line() {
        let source = "{{ f_eq(1, 1) }}\n{{ f_eq(1, 1) }} {{ f_neq(1) }} {{ f_eq(f_eq(1, 1), f_eq(1, 1.0)) }}";
        let at = |needle: &str, nth: usize| source.match_indices(needle).nth(nth).unwrap().0;
        let cases = [
            // (span start, function, (index, count) on the line)
            (at("f_eq(1, 1) }} {{", 0), "f_eq", Some((0, 4))),
            (at("f_eq(1, 1.0)", 0), "f_eq", Some((3, 4))),
            (at("f_eq(f_eq", 0), "f_eq", Some((1, 4))),
            (at("f_eq(1, 1) }}", 0), "f_eq", Some((0, 1))),
            // A span inside the arguments belongs to the call it is in.
            (at("1.0)", 0), "f_eq", Some((3, 4))),
        ];
        for (start, function, want) in cases {
            let got = translated_call(source, start..start + 4, &[&function[2..]]);
            assert_eq!(got, want, "{start}");
        }
    }

    /// Nodes and columns as Helm v3.11.3 reports them for a `range` that cannot iterate.
    #[test]
    fn range_node_is_the_last_node_go_evaluated() {
        let cases = [
            ("{{ range seq 2 5 }}", 0, Some((1, 15, "5"))),
            ("{{ range $e0 := seq 0 -}}", 2, Some((1, 22, "0"))),
            (
                "{{ range $k, $v := .Values.a }}",
                0,
                Some((1, 26, ".Values.a")),
            ),
            ("{{ range (list 1 | first) }}", 0, Some((1, 19, "first"))),
            ("{{ range (seq 3) }}", 0, Some((1, 14, "3"))),
            ("{{- range\n  $.Values.a }}", 0, Some((2, 3, "$.Values.a"))),
            ("{{ ranger 3 }}", 0, None),
            ("{{ if 3 }}", 0, None),
        ];
        for (action, column, want) in cases {
            let got = range_node(action, 1, column).map(|l| (l.line, l.column, l.command));
            let want = want.map(|(l, c, t)| (l, c, t.to_string()));
            assert_eq!(got, want, "{action}");
        }
    }

    #[test]
    fn action_columns_find_each_action_on_its_line() {
        let text = "a: {{ x }}\n{{ y }} b {{ y }}\n  {{\n z }}";
        let actions = [
            (1, "{{ x }}"),
            (2, "{{ y }}"),
            (2, "{{ y }}"),
            (3, "{{\n z }}"),
            (4, "{{ missing }}"),
        ];
        assert_eq!(
            action_columns(text, &actions),
            [Some(3), Some(0), Some(10), Some(2), None]
        );
    }
}
