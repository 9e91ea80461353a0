//! The demo's lines on stdout: best effort (a closed stdout never fails or panics the landscape)
//! and wrapped to the terminal width with a hanging indent, so that an 80-column terminal shows
//! every line whole.

use std::io::Write;

/// Terminal width assumed when `COLUMNS` is not set.
const DEFAULT_WIDTH: usize = 80;
/// Extra indent of a wrapped line's continuation.
const HANGING_INDENT: usize = 4;

/// The terminal width: `COLUMNS`, else 80.
pub(crate) fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|columns| columns.trim().parse::<usize>().ok())
        .filter(|&columns| columns > 0)
        .unwrap_or(DEFAULT_WIDTH)
}

/// Prints `text` wrapped to [`width`]; a failed write is ignored.
pub(crate) fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    for line in wrap(text, width()) {
        let _ = writeln!(stdout, "{line}");
    }
    let _ = stdout.flush();
}

/// `text` broken at spaces into lines of at most `width` characters; continuation lines get the
/// first line's indent plus four. Runs of spaces inside a line (column padding) are kept; a word
/// longer than a line (a path, a URL) stays whole.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let body = text.trim_start_matches(' ');
    let indent = text.len() - body.len();
    let mut lines = Vec::new();
    let mut current = " ".repeat(indent);
    let mut current_width = indent;
    let mut empty = true;
    let mut gap = 0;
    for word in body.split(' ') {
        if word.is_empty() {
            gap += 1;
            continue;
        }
        let word_width = word.chars().count();
        if !empty && current_width + gap + word_width > width {
            lines.push(std::mem::take(&mut current));
            let continuation = indent + HANGING_INDENT;
            current = " ".repeat(continuation);
            current_width = continuation;
            empty = true;
        }
        if !empty {
            current.push_str(&" ".repeat(gap));
            current_width += gap;
        }
        current.push_str(word);
        current_width += word_width;
        empty = false;
        gap = 1;
    }
    lines.push(current);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_with_a_hanging_indent() {
        let cases: [(&str, usize, &[&str]); 6] = [
            ("short line", 80, &["short line"]),
            ("", 80, &[""]),
            (
                "  one two three four",
                12,
                &["  one two", "      three", "      four"],
            ),
            (
                "a /very/long/path/that/does/not/fit b",
                10,
                &["a", "    /very/long/path/that/does/not/fit", "    b"],
            ),
            ("✓ [1] start über", 12, &["✓ [1] start", "    über"]),
            ("  a    b  c", 80, &["  a    b  c"]),
        ];
        for (text, width, expected) in cases {
            assert_eq!(wrap(text, width), expected, "{text:?} at {width}");
        }
    }
}
