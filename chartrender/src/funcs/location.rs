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
    let mut found = calls(action, line, column, function);
    (found.len() == 1).then(|| found.pop()).flatten()
}

/// Every call of `function` in `action` (Go source of one action, starting at `line`:`column`), in source order.
pub(crate) fn calls(
    action: &str,
    line: usize,
    column: usize,
    function: &str,
) -> Vec<CommandLocation> {
    command_starts(action)
        .into_iter()
        .filter(|&start| &action[start..start + word_len(&action[start..])] == function)
        .map(|start| {
            let before = &action[..start];
            let (line, column) = match before.rfind('\n') {
                Some(newline) => (line + before.matches('\n').count(), start - newline - 1),
                None => (line, column + start),
            };
            CommandLocation {
                line,
                column,
                command: command_text(&action[start..]),
            }
        })
        .collect()
}

/// Which call of `function` the failing one is among those on its line of the translated template `source`:
/// `(index, count)` of the `f_<function>(` calls on the line of `span` (before it, and in all).
pub(crate) fn translated_call(
    source: &str,
    span: std::ops::Range<usize>,
    function: &str,
) -> Option<(usize, usize)> {
    let start = span.start.min(source.len());
    let line_start = source[..start].rfind('\n').map_or(0, |n| n + 1);
    let line_end = source[start..]
        .find('\n')
        .map_or(source.len(), |n| start + n);
    let call = format!("f_{function}(");
    let line = &source[line_start..line_end];
    let positions: Vec<usize> = line
        .match_indices(&call)
        .map(|(i, _)| line_start + i)
        .filter(|&i| i == line_start || !source.as_bytes()[i - 1].is_ascii_alphanumeric())
        .collect();
    let index = positions.iter().filter(|&&i| i < start).count();
    // The span starts at the call itself or inside its arguments.
    let index = if positions.contains(&start) {
        index
    } else {
        index.checked_sub(1)?
    };
    Some((index, positions.len()))
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
                    starts.push(i);
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
fn skip_quoted(bytes: &[u8], start: usize) -> usize {
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

/// Length of the identifier-like word at the start of `text` (letters, digits, `_`, `.`, `$`).
fn word_len(text: &str) -> usize {
    text.bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$'))
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
pub(crate) fn action_columns(text: &str, actions: &[(usize, String)]) -> Vec<Option<usize>> {
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
            let at = from + text.get(from..)?.find(source.as_str())?;
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
    use super::*;

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
            let got = translated_call(source, start..start + 4, &function[2..]);
            assert_eq!(got, want, "{start}");
        }
    }

    #[test]
    fn action_columns_find_each_action_on_its_line() {
        let text = "a: {{ x }}\n{{ y }} b {{ y }}\n  {{\n z }}";
        let actions = [
            (1, "{{ x }}".to_string()),
            (2, "{{ y }}".to_string()),
            (2, "{{ y }}".to_string()),
            (3, "{{\n z }}".to_string()),
            (4, "{{ missing }}".to_string()),
        ];
        assert_eq!(
            action_columns(text, &actions),
            [Some(3), Some(0), Some(10), Some(2), None]
        );
    }
}
