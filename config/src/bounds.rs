//! Limits checked before a configuration reaches the YAML parser. The parser's time grows with
//! the square of the unclosed flow collections (`[` and `{`): 30 000 of them took 3 s, 100 000
//! more than 15 s, so a file of brackets could hold up `check-config` or a daemon's start for
//! minutes. No configuration comes near these limits.

/// Largest configuration file read (Gardener's full example is about 10 KiB).
pub const MAX_BYTES: usize = 1024 * 1024;

/// Deepest nesting of flow collections (`[`, `{`) outside quoted strings and comments.
pub const MAX_FLOW_DEPTH: usize = 64;

/// What limit `text` exceeds, if any.
pub fn too_complex(text: &str) -> Option<String> {
    if text.len() > MAX_BYTES {
        return Some(format!("{} bytes, more than {MAX_BYTES}", text.len()));
    }
    let depth = flow_depth(text);
    (depth > MAX_FLOW_DEPTH).then(|| format!("[ and {{ nested more than {MAX_FLOW_DEPTH} deep"))
}

/// The deepest nesting of `[`/`{` in `text`, skipping quoted strings and comments (a
/// conservative lexer: brackets inside plain scalars count too, which only a file built to
/// reach the limit notices).
fn flow_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    let mut previous = '\n';
    while let Some(c) = chars.next() {
        match c {
            '#' if previous.is_whitespace() => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        break;
                    }
                }
                previous = '\n';
                continue;
            }
            '"' => {
                while let Some(next) = chars.next() {
                    match next {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' if !previous.is_alphanumeric() => {
                while let Some(next) = chars.next() {
                    if next == '\'' {
                        if chars.peek() == Some(&'\'') {
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
            }
            '[' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        previous = c;
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_depth_counts_brackets_outside_strings_and_comments() {
        let table = [
            ("a: 1\n", 0),
            ("a: [1, {b: [2]}]\n", 3),
            ("a: \"[[[[\"\n", 0),
            ("a: '[[{{'\n", 0),
            ("a: 'it''s [['\n", 0),
            ("a: 1 # [[[[\n", 0),
            ("a: \"\\\"[\"\n", 0),
            ("a: [[[", 3),
            ("a: ]]][", 1),
        ];
        for (text, expected) in table {
            assert_eq!(flow_depth(text), expected, "{text:?}");
        }
    }

    #[test]
    fn too_complex_refuses_deep_nesting_and_huge_files_only() {
        assert_eq!(too_complex("a: [[[1]]]\n"), None);
        let deep = format!("a: {}", "[".repeat(MAX_FLOW_DEPTH + 1));
        assert!(too_complex(&deep).is_some_and(|p| p.contains("nested more than 64")));
        let huge = "a".repeat(MAX_BYTES + 1);
        assert!(too_complex(&huge).is_some_and(|p| p.contains("more than 1048576")));
    }
}
