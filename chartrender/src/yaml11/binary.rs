//! `!!binary` scalars as go-yaml v2 reads them: the base64 text (Go's standard encoding; line breaks skipped, as
//! Go's decoder skips them) is decoded into the string's bytes, so `a: !!binary aGk=` is `a: "hi"`. Rewritten
//! before parsing, like the rest of [`super`]: a value on its key's or list item's line (plain or quoted), a
//! literal or folded block (`!!binary |`, `!!binary >`) and a value inside a flow collection (`[!!binary aGk=]`).
//! Text that is no valid base64 is go-yaml's error ([`InvalidBase64`]), which Helm reports for the whole document.

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

/// A line up to its `!!binary` tag and the blanks after it: indentation, list item dashes and a plain key (`head`).
const TAGGED: &str = r##"^(?P<head>[ \t]*(?:-[ \t]+)*(?:[^'"#:]+:[ \t]+)?)!!binary[ \t]+"##;

/// A value tagged `!!binary` filling the rest of its line: plain base64, or quoted without escapes.
static VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r##"{TAGGED}(?P<value>[A-Za-z0-9+/=]+|'[^']*'|"[^"\\]*")(?P<tail>[ \t]*(?:#.*)?)$"##
    ))
    .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// A block scalar tagged `!!binary`: `key: !!binary |` or `>` (chomping indicators allowed).
static BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r##"{TAGGED}(?P<style>[|>])[-+]?[ \t]*(?:#.*)?$"##))
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// go-yaml v2's refusal of a `!!binary` value that is no valid base64, in its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("yaml: !!binary value contains invalid base64 data")]
pub(crate) struct InvalidBase64;

/// What a line or flow text holding `!!binary` reads as: `None` when it holds no value this module rewrites, else
/// the text with the value decoded, or go-yaml's refusal.
pub(super) type Rewritten = Option<Result<String, InvalidBase64>>;

/// The double-quoted YAML spelling of the bytes `base64` decodes to.
///
/// Helm reads YAML through sigs.k8s.io/yaml, which turns go-yaml v2's result into JSON before decoding it, and
/// `encoding/json` writes every byte that is no UTF-8 as U+FFFD: `!!binary /w==` is the three bytes of U+FFFD in
/// Helm's values, not the byte 0xFF.
fn decoded(base64: &str) -> Result<String, InvalidBase64> {
    let compact: String = base64
        .chars()
        .filter(|c| !matches!(c, '\n' | '\r'))
        .collect();
    let bytes = GO_STD.decode(compact).map_err(|_| InvalidBase64)?;
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        text.extend(std::iter::repeat_n(
            char::REPLACEMENT_CHARACTER,
            chunk.invalid().len(),
        ));
    }
    serde_json::to_string(&text).map_err(|_| InvalidBase64)
}

/// `line` with its `!!binary` value decoded, if it holds one filling the rest of the line.
pub(super) fn value_line(line: &str) -> Rewritten {
    let parts = VALUE.captures(line)?;
    // A quoted value takes no escape (the pattern allows none): its text is what stands between the quotes.
    let value = &parts["value"];
    let text = if value.starts_with(['\'', '"']) {
        &value[1..value.len() - 1]
    } else {
        value
    };
    Some(decoded(text).map(|decoded| format!("{}{decoded}{}", &parts["head"], &parts["tail"])))
}

/// For a `line` that opens a `!!binary` block whose content is `content` (the lines indented deeper, blank ones
/// included): the line with the decoded string in its place.
pub(super) fn block_line(line: &str, content: &str) -> Rewritten {
    let parts = BLOCK.captures(line)?;
    // The indentation goes; anything else on a line (a space inside the text) makes it invalid, as in Go.
    let lines: Vec<&str> = content
        .lines()
        .map(|line| line.trim_start_matches(' '))
        .collect();
    let text = if &parts["style"] == ">" {
        folded(&lines)
    } else {
        lines.join("\n")
    };
    Some(decoded(&text).map(|decoded| format!("{}{decoded}", &parts["head"])))
}

/// The lines of a folded block as YAML folds them: a line break between two lines of text is a space, a blank line
/// a line break (so base64 over several lines is no base64 here, as in Go).
fn folded(lines: &[&str]) -> String {
    let mut text = String::new();
    let mut after_text = false;
    for line in lines {
        if line.trim().is_empty() {
            text.push('\n');
            after_text = false;
        } else {
            if after_text {
                text.push(' ');
            }
            text.push_str(line);
            after_text = true;
        }
    }
    text
}

/// `text` (a line, or a flow collection over several lines) with each `!!binary` value inside a flow collection
/// decoded: a tag outside quotes and comments (as [`super::FlowScan`] walks them), followed by blanks and a value
/// ([`flow_value`]).
pub(super) fn flow_values(text: &str) -> Rewritten {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut scan = super::FlowScan::default();
    let mut depth = 0;
    let mut i = 0;
    while i < bytes.len() {
        let mut next = i + 1;
        if scan.outside() && text[i..].starts_with(TAG) {
            let (value, taken) = flow_value(&text[i + TAG.len()..])?;
            out.push_str(&text[copied..i]);
            match decoded(value) {
                Ok(decoded) => out.push_str(&decoded),
                Err(e) => return Some(Err(e)),
            }
            next = i + TAG.len() + taken;
            copied = next;
        }
        // The walk steps over the tag and its value too, so quotes and comments after them are seen as they are.
        for at in i..next {
            scan.step(bytes, at, bytes[at], &mut depth)?;
        }
        i = next;
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        Ok(out)
    })
}

/// The value after a `!!binary` tag inside a flow collection (`after` starts right after the tag): a plain one up
/// to a blank, `,`, `]` or `}`, or a quoted one without escapes; and how many bytes the blanks before it and the
/// value take.
fn flow_value(after: &str) -> Option<(&str, usize)> {
    let value_start = after.len() - after.trim_start_matches([' ', '\t']).len();
    let value = &after[value_start..];
    let (inner, taken) = match value.strip_prefix(['\'', '"']) {
        Some(rest) => {
            let close = char::from(value.as_bytes()[0]);
            let end = rest
                .find(close)
                .filter(|&end| !rest[..end].contains('\\'))?;
            (&rest[..end], end + 2)
        }
        None => {
            let end = value
                .find([' ', '\t', '\n', '\r', ',', ']', '}'])
                .unwrap_or(value.len());
            (&value[..end], end)
        }
    };
    (value_start > 0 && taken > 0).then_some((inner, value_start + taken))
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
        let bad = Some(Err(InvalidBase64));
        for (line, expected) in [
            ("a: !!binary aGk=", Some(Ok("a: \"hi\""))),
            ("- !!binary aGk= # c", Some(Ok("- \"hi\" # c"))),
            ("a: !!binary 'aGk='", Some(Ok("a: \"hi\""))),
            ("a: !!binary \"aGk=\"", Some(Ok("a: \"hi\""))),
            // Bytes that are no UTF-8 become U+FFFD each, as sigs.k8s.io/yaml's JSON step writes them.
            ("a: !!binary /w==", Some(Ok("a: \"\u{fffd}\""))),
            ("a: !!binary 4oJh", Some(Ok("a: \"\u{fffd}\u{fffd}a\""))),
            ("a: !!binary w6k=", Some(Ok("a: \"\u{e9}\""))),
            // Go's decoder wants the padding.
            ("a: !!binary aGk", bad),
            ("a: !!binary '%%'", bad),
            // Quotes inside quotes are part of the text, which is then no base64.
            ("a: !!binary '\"aGk=\"'", bad),
            ("a: !!binary", None),
            ("a: \"x !!binary aGk=\"", None),
        ] {
            let got = value_line(line);
            assert_eq!(
                got.as_ref().map(|r| r.as_deref().map_err(|e| *e)),
                expected,
                "{line:?}"
            );
        }
    }

    #[test]
    fn literal_and_folded_blocks_are_decoded() {
        let bad = Some(Err(InvalidBase64));
        for (line, content, expected) in [
            (
                "a: !!binary |",
                "  aGVs\n  bG8=\n",
                Some(Ok("a: \"hello\"")),
            ),
            ("- !!binary |-", "  aGk=\n", Some(Ok("- \"hi\""))),
            ("a: !!binary |", "  aGVs\n  bG8\n", bad),
            ("a: !!binary >", "  aGk=\n", Some(Ok("a: \"hi\""))),
            // Folding joins the lines with a space, which is no base64; a blank line folds into a line break.
            ("a: !!binary >", "  aGVs\n  bG8=\n", bad),
            (
                "a: !!binary >",
                "  aGVs\n\n  bG8=\n",
                Some(Ok("a: \"hello\"")),
            ),
            ("a: !!binary", "  aGk=\n", None),
        ] {
            let got = block_line(line, content);
            assert_eq!(
                got.as_ref().map(|r| r.as_deref().map_err(|e| *e)),
                expected,
                "{line:?} {content:?}"
            );
        }
    }

    #[test]
    fn flow_values_are_decoded_outside_quotes_and_comments() {
        let bad = Some(Err(InvalidBase64));
        for (text, expected) in [
            ("[!!binary aGk=, 1]", Some(Ok("[\"hi\", 1]"))),
            ("{a: !!binary aGk=}", Some(Ok("{a: \"hi\"}"))),
            (
                "[!!binary 'aGk=',!!binary \"aGk=\"]",
                Some(Ok("[\"hi\",\"hi\"]")),
            ),
            ("['!!binary aGk=', \"x\\\" !!binary y\"]", None),
            ("[a, # !!binary x\n b]", None),
            ("[!!binary aGk]", bad),
            ("[!!binary]", None),
        ] {
            let got = flow_values(text);
            assert_eq!(
                got.as_ref().map(|r| r.as_deref().map_err(|e| *e)),
                expected,
                "{text:?}"
            );
        }
    }
}
