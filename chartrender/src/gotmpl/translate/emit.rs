//! Small writers of minijinja source text for the translator: names, field paths, string literals, numbers.

use std::fmt::Write as _;

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
