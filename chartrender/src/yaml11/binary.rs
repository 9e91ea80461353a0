//! `!!binary` scalars as go-yaml v2 reads them: the base64 text (Go's standard encoding; line breaks skipped, as
//! Go's decoder skips them) is decoded into the string's bytes, so `a: !!binary aGk=` is `a: "hi"`. Rewritten
//! before parsing, like the rest of [`super`]: a value on its key's or list item's line (plain or quoted) and a
//! literal block (`!!binary |`). Text that is no valid base64 is left for the parser, which keeps it as text.

use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
use regex::Regex;

/// The tag, found before anything is parsed.
pub(super) const TAG: &str = "!!binary";

/// Go's `base64.StdEncoding`: padding required, trailing bits not checked.
const GO_STD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

/// A value tagged `!!binary` filling the rest of its line: plain base64, or quoted without escapes.
static VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r##"^(?P<head>[ \t]*(?:-[ \t]+)*(?:[^'"#:]+:[ \t]+)?)!!binary[ \t]+(?P<value>[A-Za-z0-9+/=]+|'[^']*'|"[^"\\]*")(?P<tail>[ \t]*(?:#.*)?)$"##)
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// A literal block scalar tagged `!!binary`: `key: !!binary |` (chomping indicators allowed).
static BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r##"^(?P<head>[ \t]*(?:-[ \t]+)*(?:[^'"#:]+:[ \t]+)?)!!binary[ \t]+\|[-+]?[ \t]*(?:#.*)?$"##)
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// The double-quoted YAML spelling of the bytes `base64` decodes to, or `None` when it is no valid base64.
///
/// Helm reads YAML through sigs.k8s.io/yaml, which turns go-yaml v2's result into JSON before decoding it, and
/// `encoding/json` writes every byte that is no UTF-8 as U+FFFD: `!!binary /w==` is the three bytes of U+FFFD in
/// Helm's values, not the byte 0xFF.
fn decoded(base64: &str) -> Option<String> {
    let compact: String = base64
        .chars()
        .filter(|c| !matches!(c, '\n' | '\r'))
        .collect();
    let bytes = GO_STD.decode(compact).ok()?;
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        text.extend(std::iter::repeat_n(
            char::REPLACEMENT_CHARACTER,
            chunk.invalid().len(),
        ));
    }
    serde_json::to_string(&text).ok()
}

/// `line` with its `!!binary` value decoded, if it holds one that decodes.
pub(super) fn value_line(line: &str) -> Option<String> {
    let parts = VALUE.captures(line)?;
    // A quoted value takes no escape (the pattern allows none): its text is what stands between the quotes.
    let value = &parts["value"];
    let text = if value.starts_with(['\'', '"']) {
        &value[1..value.len() - 1]
    } else {
        value
    };
    Some(format!(
        "{}{}{}",
        &parts["head"],
        decoded(text)?,
        &parts["tail"]
    ))
}

/// For a `line` that opens a literal `!!binary` block whose content is `content` (the lines indented deeper, blank
/// ones included): the line with the decoded string in its place.
pub(super) fn block_line(line: &str, content: &str) -> Option<String> {
    let parts = BLOCK.captures(line)?;
    // The indentation goes; anything else on a line (a space inside the text) makes it invalid, as in Go.
    let text: String = content
        .lines()
        .map(|line| line.trim_start_matches(' '))
        .collect::<Vec<_>>()
        .join("\n");
    Some(format!("{}{}", &parts["head"], decoded(&text)?))
}

/// Where the content of a block scalar that starts at byte `from` of `text` ends: after the lines that are blank or
/// indented deeper than `indent`, the opening line's indentation.
pub(super) fn block_content_end(text: &str, from: usize, indent: usize) -> usize {
    let mut end = from;
    while end < text.len() {
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
        let body = text[end..line_end].trim_end_matches(['\n', '\r']);
        let deeper = body.len() - body.trim_start_matches([' ', '\t']).len() > indent;
        if !(body.trim().is_empty() || deeper) {
            break;
        }
        end = line_end;
    }
    end
}

/// Whether `line` opens a literal `!!binary` block.
pub(super) fn opens_block(line: &str) -> bool {
    BLOCK.is_match(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_values_are_decoded_like_go_yaml_v2() {
        for (line, expected) in [
            ("a: !!binary aGk=", Some("a: \"hi\"")),
            ("- !!binary aGk= # c", Some("- \"hi\" # c")),
            ("a: !!binary 'aGk='", Some("a: \"hi\"")),
            ("a: !!binary \"aGk=\"", Some("a: \"hi\"")),
            // Bytes that are no UTF-8 become U+FFFD each, as sigs.k8s.io/yaml's JSON step writes them.
            ("a: !!binary /w==", Some("a: \"\u{fffd}\"")),
            ("a: !!binary 4oJh", Some("a: \"\u{fffd}\u{fffd}a\"")),
            ("a: !!binary w6k=", Some("a: \"\u{e9}\"")),
            // Go's decoder wants the padding.
            ("a: !!binary aGk", None),
            ("a: !!binary '%%'", None),
            ("a: !!binary", None),
            ("a: \"x !!binary aGk=\"", None),
            // Quotes inside quotes are part of the text, which is then no base64.
            ("a: !!binary '\"aGk=\"'", None),
        ] {
            assert_eq!(value_line(line).as_deref(), expected, "{line:?}");
        }
    }

    #[test]
    fn literal_blocks_are_decoded_and_folded_ones_kept() {
        assert_eq!(
            block_line("a: !!binary |", "  aGVs\n  bG8=\n").as_deref(),
            Some("a: \"hello\"")
        );
        assert!(opens_block("- !!binary |-"));
        assert!(!opens_block("a: !!binary >"));
        assert_eq!(block_line("a: !!binary |", "  aGVs\n  bG8\n"), None);
    }
}
