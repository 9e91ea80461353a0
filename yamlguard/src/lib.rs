//! What YAML text from users, charts and templates must meet before it reaches the YAML parser.
//! The parser's time grows with the square of the unclosed flow collections (`[` and `{`):
//! 30 000 of them took 3 s, 100 000 took 38 s, so a values file, a configuration, a
//! `fromYaml` argument or a rendered manifest made of brackets would hold up a daemon for
//! minutes. Checking the nesting first is linear; no real document nests flow collections more
//! than a few levels.

/// Deepest nesting of flow collections (`[`, `{`) outside quoted strings and comments that
/// seedlet parses.
pub const MAX_FLOW_DEPTH: usize = 64;

/// The flow collections of a text nest deeper than [`MAX_FLOW_DEPTH`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowTooDeep;

impl std::fmt::Display for FlowTooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[ and {{ nested more than {MAX_FLOW_DEPTH} deep")
    }
}

impl std::error::Error for FlowTooDeep {}

/// Fails when `text`'s flow collections nest deeper than [`MAX_FLOW_DEPTH`].
///
/// # Errors
/// [`FlowTooDeep`].
pub fn check(text: impl AsRef<[u8]>) -> Result<(), FlowTooDeep> {
    if flow_depth(text) > MAX_FLOW_DEPTH {
        return Err(FlowTooDeep);
    }
    Ok(())
}

/// The deepest nesting of `[`/`{` in `text`, skipping quoted strings and comments (a
/// conservative lexer: brackets inside plain scalars count too, which only a text built to
/// reach the limit notices). Works on bytes: the characters it looks at are ASCII, and UTF-8
/// never uses ASCII bytes inside a multi-byte character.
pub fn flow_depth(text: impl AsRef<[u8]>) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut bytes = text.as_ref().iter().copied().peekable();
    let mut previous = b'\n';
    while let Some(c) = bytes.next() {
        match c {
            b'#' if previous.is_ascii_whitespace() => {
                for next in bytes.by_ref() {
                    if next == b'\n' {
                        break;
                    }
                }
                previous = b'\n';
                continue;
            }
            b'"' => {
                while let Some(next) = bytes.next() {
                    match next {
                        b'\\' => {
                            bytes.next();
                        }
                        b'"' => break,
                        _ => {}
                    }
                }
            }
            // A quote after a letter (`it's`) is part of a plain scalar, not a quoted string.
            b'\'' if previous.is_ascii() && !previous.is_ascii_alphanumeric() => {
                while let Some(next) = bytes.next() {
                    if next == b'\'' {
                        if bytes.peek() == Some(&b'\'') {
                            bytes.next();
                        } else {
                            break;
                        }
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
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
    fn check_refuses_only_what_nests_deeper_than_the_bound() {
        assert_eq!(check("a: [[[1]]]\n"), Ok(()));
        assert_eq!(check("[".repeat(MAX_FLOW_DEPTH)), Ok(()));
        assert_eq!(check("{a: ".repeat(MAX_FLOW_DEPTH + 1)), Err(FlowTooDeep));
        assert_eq!(FlowTooDeep.to_string(), "[ and { nested more than 64 deep");
    }
}
