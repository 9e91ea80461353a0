//! The order in which the minijinja translation of one Go action calls its commands, so that a failing call
//! found by its place among the translated calls of a line can be matched to its command in the Go source.
//!
//! Go evaluates a pipeline left to right and passes each command's result on as the next command's last
//! argument; the translation nests instead (`a | f x | g` becomes `g(f(x, a))`). The calls of a piped action
//! therefore come in another order in the translation than in the source: the last command first, then its
//! arguments, then the command before it, and so on, each parenthesised argument the same way inside.

use super::location::{matching_paren, skip_quoted};

/// The byte offsets in `action` (Go source of one action, `{{ … }}`) of the first word of each of its commands,
/// in the order the translation emits them (see the module docs). `None` when the action's pipeline cannot be
/// told apart (an unbalanced parenthesis or a missing `}}`).
pub(crate) fn translated_command_order(action: &str) -> Option<Vec<usize>> {
    let (start, end) = pipeline_bounds(action)?;
    let mut order = Vec::new();
    emit_pipeline(action.as_bytes(), start, end, &mut order)?;
    Some(order)
}

/// `starts` (command offsets in `action`, in source order) in the order the translation emits them; `None` when
/// one of them is not a command the translation order knows.
pub(crate) fn in_translated_order(action: &str, starts: &[usize]) -> Option<Vec<usize>> {
    let order = translated_command_order(action)?;
    let mut ranked: Vec<(usize, usize)> = starts
        .iter()
        .map(|&start| Some((order.iter().position(|&o| o == start)?, start)))
        .collect::<Option<_>>()?;
    ranked.sort_unstable();
    Some(ranked.into_iter().map(|(_, start)| start).collect())
}

/// Where the pipeline of `action` starts and ends: after `{{`, its trim marker, a control keyword (`if`, `with`,
/// `range`, `else`, `else if`, `template "name"` …) and variable declarations (`$v :=`, `$k, $v :=`, `$v =`), and
/// before the closing ` -}}` or `}}`.
fn pipeline_bounds(action: &str) -> Option<(usize, usize)> {
    let bytes = action.as_bytes();
    let mut at = action.find("{{")? + 2;
    if bytes.get(at) == Some(&b'-') && bytes.get(at + 1).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at = skip_blanks(bytes, at);
    loop {
        let word = word_at(action, at);
        match word {
            "if" | "with" | "range" | "else" => at = skip_blanks(bytes, at + word.len()),
            "template" | "block" => {
                at = skip_blanks(bytes, at + word.len());
                if matches!(bytes.get(at), Some(b'"' | b'`')) {
                    at = skip_blanks(bytes, skip_quoted(bytes, at));
                }
            }
            _ => break,
        }
    }
    if let Some(after) = declaration_end(action, at) {
        at = skip_blanks(bytes, after);
    }
    let close = action.rfind("}}")?;
    let mut end = action[..close].trim_end().len();
    if action[..end].ends_with('-')
        && action[..end - 1].ends_with(|c: char| c.is_ascii_whitespace())
    {
        end -= 1;
    }
    (at <= end).then_some((at, end))
}

/// The offset after the `:=` or `=` of a declaration or assignment (`$v :=`, `$k, $v :=`) starting at `at`.
fn declaration_end(action: &str, mut at: usize) -> Option<usize> {
    let bytes = action.as_bytes();
    loop {
        if bytes.get(at) != Some(&b'$') {
            return None;
        }
        at = skip_blanks(bytes, at + word_at(action, at).len().max(1));
        match bytes.get(at) {
            Some(b',') => at = skip_blanks(bytes, at + 1),
            Some(b':') if bytes.get(at + 1) == Some(&b'=') => return Some(at + 2),
            Some(b'=') if bytes.get(at + 1) != Some(&b'=') => return Some(at + 1),
            _ => return None,
        }
    }
}

/// Appends the command starts of the pipeline `bytes[start..end]` in translation order.
fn emit_pipeline(bytes: &[u8], start: usize, end: usize, order: &mut Vec<usize>) -> Option<()> {
    let mut commands = Vec::new();
    let mut command_start = start;
    let mut i = start;
    while i < end {
        match bytes[i] {
            b'"' | b'`' | b'\'' => {
                i = skip_quoted(bytes, i).min(end);
                continue;
            }
            b'(' => i = matching_paren(bytes, i, end)?,
            b'|' => {
                commands.push((command_start, i));
                command_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    commands.push((command_start, end));
    for &(start, end) in commands.iter().rev() {
        emit_command(bytes, start, end, order)?;
    }
    Some(())
}

/// Appends the start of the command `bytes[start..end]` (unless it is a parenthesised pipeline, whose own
/// commands come instead), then the commands inside its parenthesised arguments, left to right.
fn emit_command(bytes: &[u8], start: usize, end: usize, order: &mut Vec<usize>) -> Option<()> {
    let mut i = skip_blanks(bytes, start);
    if i < end && bytes[i] != b'(' {
        order.push(i);
    }
    while i < end {
        match bytes[i] {
            b'"' | b'`' | b'\'' => {
                i = skip_quoted(bytes, i).min(end);
                continue;
            }
            b'(' => {
                let close = matching_paren(bytes, i, end)?;
                emit_pipeline(bytes, i + 1, close, order)?;
                i = close;
            }
            _ => {}
        }
        i += 1;
    }
    Some(())
}

fn skip_blanks(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The identifier-like word at `at` (letters, digits, `_`, `$`; every byte of a non-ASCII character), or "".
fn word_at(text: &str, at: usize) -> &str {
    let rest = text.get(at..).unwrap_or_default();
    let len = rest
        .bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$') || b >= 0x80)
        .count();
    &rest[..len]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words at the offsets, to read the order.
    fn order(action: &str) -> Vec<&str> {
        translated_command_order(action)
            .expect("order")
            .into_iter()
            .map(|at| {
                let rest = &action[at..];
                &rest[..rest.find([' ', ')', '}']).unwrap_or(rest.len())]
            })
            .collect()
    }

    #[test]
    fn piped_commands_come_last_first_and_arguments_after_their_command() {
        for (action, want) in [
            ("{{ f 1 }}", vec!["f"]),
            ("{{ .a | f | g 2 }}", vec!["g", "f", ".a"]),
            ("{{ f (g 1) (h 2) }}", vec!["f", "g", "h"]),
            ("{{ f (g 1 | h) | k }}", vec!["k", "f", "h", "g"]),
            (
                r#"{{ dict "n" (dig "a" (dict "x" 1)) "b" (dig "v" (dict "v" $.Values)) | toYaml }}"#,
                vec!["toYaml", "dict", "dig", "dict", "dig", "dict"],
            ),
            ("{{- if f (g 1) | h -}}", vec!["h", "f", "g"]),
            ("{{ else if f | g }}", vec!["g", "f"]),
            ("{{ range $k, $v := f | g }}", vec!["g", "f"]),
            ("{{ $x = f \"|)\" | g }}", vec!["g", "f"]),
            (r#"{{ template "t" f | g }}"#, vec!["g", "f"]),
            ("{{ ((f 1) | g).a }}", vec!["g", "f"]),
        ] {
            assert_eq!(order(action), want, "{action}");
        }
    }

    #[test]
    fn calls_are_put_in_translated_order_and_unknown_starts_refused() {
        let action = r#"{{ dict "n" (dig "a" $) "b" (dig "v" $) | toYaml }}"#;
        let digs: Vec<usize> = action.match_indices("dig").map(|(i, _)| i).collect();
        assert_eq!(in_translated_order(action, &digs), Some(digs.clone()));
        let piped = "{{ f 1 | f 2 }}";
        assert_eq!(in_translated_order(piped, &[3, 9]), Some(vec![9, 3]));
        assert_eq!(in_translated_order(piped, &[4]), None);
        assert_eq!(translated_command_order("{{ f (g 1 }}"), None);
    }
}
