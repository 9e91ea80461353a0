//! Small writers of minijinja source text for the translator: names, field paths, string literals, numbers, tag
//! spacing, calls that fail when they run, and where an action sits in its template text.

use std::fmt::Write as _;
use std::ops::Range;

use super::{Operand, Pipe};

/// Appends `n` in decimal, without the formatting machinery (an alias name is written for every field read).
pub(super) fn push_decimal(out: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &digit in &digits[start..] {
        out.push(char::from(digit));
    }
}

/// Appends Go's field chain `path` on the unwrapped value `base` (a declared variable or a parenthesized
/// pipeline): `f__field(base,"a","b")`.
pub(super) fn push_field_chain(out: &mut String, base: &str, path: &[&str]) {
    out.push_str("f__field(");
    out.push_str(base);
    for name in path {
        out.push(',');
        push_string_literal(out, name);
    }
    out.push(')');
}

/// Appends `.a.b` for `path`, using subscripts for names that are not plain ASCII identifiers.
pub(super) fn push_path(out: &mut String, path: &[&str]) {
    for name in path {
        if is_plain_name(name) {
            out.push('.');
            out.push_str(name);
        } else {
            out.push('[');
            push_string_literal(out, name);
            out.push(']');
        }
    }
}

/// Whether `name` can follow a `.` in minijinja source (an ASCII identifier).
pub(super) fn is_plain_name(name: &str) -> bool {
    name.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric())
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// A minijinja string literal for `value` (no raw newlines, so tags stay on one line).
pub(super) fn string_literal(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    push_string_literal(&mut out, value);
    out
}

/// Appends the minijinja string literal for `value` to `out`.
pub(super) fn push_string_literal(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The byte range of `part` in `text`, of which it is a slice (the parser's nodes borrow their sources from the
/// template text); an empty range for anything else.
pub(super) fn span_in(text: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr().addr().wrapping_sub(text.as_ptr().addr());
    match start.checked_add(part.len()) {
        Some(end) if end <= text.len() => start..end,
        _ => 0..0,
    }
}

/// Puts a space before the expression starting at `start` in `out` when it starts with a sign: tags are written
/// without the spaces minijinja's lexer steps over one token at a time, and `{{-` or `{{+` would be whitespace
/// control (numbers are written in parentheses, so this is for what may come to start with a sign).
pub(super) fn space_before_sign(out: &mut String, start: usize) {
    if out
        .as_bytes()
        .get(start)
        .is_some_and(|b| matches!(b, b'-' | b'+'))
    {
        out.insert(start, ' ');
    }
}

/// Whether Go template text would read as minijinja syntax (`{{`, `{%`, `{#`, or a `{` that the next output
/// completes), in one pass over the `{` bytes.
pub(super) fn needs_escape(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(i) = bytes.get(at..).and_then(|rest| memchr::memchr(b'{', rest)) {
        let brace = at + i;
        match bytes.get(brace + 1) {
            None | Some(b'{' | b'%' | b'#') => return true,
            Some(_) => at = brace + 1,
        }
    }
    false
}

/// Appends a call that fails with `message` when it runs: a command Go's parser accepts and its executor refuses
/// (`{{ 3 4 }}`, `{{ and }}`), which fails only if it is reached, as in Go.
pub(super) fn push_exec_error(out: &mut String, message: &str) {
    out.push_str("f_exec_error(");
    push_string_literal(out, message);
    out.push(')');
}

/// Go's refusal of a call of the builtin `and`, `or` or `not` with `count` arguments, if it refuses one.
pub(super) fn builtin_arity_error(name: &str, count: usize) -> Option<String> {
    match name {
        "and" | "or" if count == 0 => Some(format!(
            "wrong number of args for {name}: want at least 1 got 0"
        )),
        "not" if count != 1 => Some(format!("wrong number of args for not: want 1 got {count}")),
        _ => None,
    }
}

/// Go's text for an operand that takes no arguments and no piped value, as its `can't give argument to
/// non-function` error names it: a constant, `.`, a variable alone or a parenthesized pipeline (a number as Go formats its value, where Go
/// keeps the literal's spelling).
pub(super) fn non_function_text(head: &Operand<'_>) -> Option<String> {
    Some(match head {
        Operand::Int(value) => value.to_string(),
        Operand::Float(value) => value.to_string(),
        Operand::Str(value) => format!("{value:?}"),
        Operand::Bool(value) => value.to_string(),
        Operand::Nil => "nil".to_string(),
        Operand::Field(path) if path.is_empty() => ".".to_string(),
        Operand::Variable(name, path) if path.is_empty() => format!("${name}"),
        Operand::Chain(pipe, path) if path.is_empty() => go_pipe_text(pipe),
        _ => return None,
    })
}

/// Go's text of a pipeline as its errors print it: the declared variables, then the commands joined by ` | `, the
/// operands of each by a space (constants as [`non_function_text`] writes them).
fn go_pipe_text(pipe: &Pipe<'_>) -> String {
    let mut text = String::new();
    if !pipe.vars.is_empty() {
        let vars: Vec<String> = pipe.vars.iter().map(|var| format!("${var}")).collect();
        text.push_str(&vars.join(", "));
        text.push_str(if pipe.assign { " = " } else { " := " });
    }
    let commands: Vec<String> = pipe
        .commands
        .iter()
        .map(|command| {
            let operands: Vec<String> = command.args.iter().map(go_operand_text).collect();
            operands.join(" ")
        })
        .collect();
    text.push_str(&commands.join(" | "));
    text
}

fn go_operand_text(operand: &Operand<'_>) -> String {
    let fields = |path: &[&str]| {
        path.iter()
            .map(|field| format!(".{field}"))
            .collect::<String>()
    };
    match operand {
        Operand::Field(path) if path.is_empty() => ".".to_string(),
        Operand::Field(path) => fields(path),
        Operand::Variable(name, path) => format!("${name}{}", fields(path)),
        Operand::Chain(pipe, path) => format!("({}){}", go_pipe_text(pipe), fields(path)),
        Operand::Function(name) => (*name).to_string(),
        constant => non_function_text(constant).unwrap_or_default(),
    }
}
