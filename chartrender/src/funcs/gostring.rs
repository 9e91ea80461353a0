//! Go strings are byte sequences; these are Rust strings. A byte that is not part of valid UTF-8 (what `substr`
//! or `trunc` leave of a cut character, a `"\xc3"` literal, `b64dec` of arbitrary bytes) is kept as one "stray"
//! character from the top of the last private use plane (U+10FF80 + byte − 0x80), so every later step can still
//! see the byte: `len` counts it as one, `b64enc`/`sha256sum`/`printf "%x"` take the byte itself, `toJson` writes
//! `\ufffd` as `encoding/json` does, `quote` writes `\xc3`, `upper`/`lower`/`toYaml` turn it into U+FFFD as Go's
//! `strings.Map` and sigs.k8s.io/yaml do, and a rendered file prints U+FFFD for it. Real U+10FF80…U+10FFFF
//! characters are taken for bytes in a render that has stray characters (they are private use, unassigned).
//!
//! Whether a render has any is tracked per render ([`crate::meter::note_strays`]): a stray made while it runs, or
//! one its chart's translated templates hold (a `"\xc3"` literal, see `Compiled::new`). A render without any
//! skips the scans of outputs and arguments, which would cost it a pass over its text, and passes real
//! U+10FF80… characters of its values through as what they are, whatever other renders of the process made.

use std::borrow::Cow;

use crate::meter;

/// The first stray character, standing for byte 0x80.
const STRAY_FIRST: u32 = 0x10_FF80;

/// The stray character for `byte` (0x80 or above).
fn stray(byte: u8) -> char {
    char::from_u32(STRAY_FIRST + u32::from(byte) - 0x80).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The byte a stray character stands for.
pub(crate) fn stray_byte(c: char) -> Option<u8> {
    let code = c as u32;
    (STRAY_FIRST..=0x10_FFFF)
        .contains(&code)
        .then(|| (code - STRAY_FIRST + 0x80) as u8)
}

/// Whether `text` holds a stray character: none in a render that made none and whose chart holds none; otherwise
/// a byte search for 0xF4, which only text of the last planes has, before the character scan.
pub(crate) fn has_stray(text: &str) -> bool {
    meter::strays_possible() && holds_stray_range(text)
}

/// Whether `text` holds a character of the stray range, made here or written as such.
pub(crate) fn holds_stray_range(text: &str) -> bool {
    memchr::memchr(0xF4, text.as_bytes()).is_some() && text.chars().any(|c| stray_byte(c).is_some())
}

/// The Go string of `bytes`: valid UTF-8 as it is, every other byte as its stray character.
pub(crate) fn from_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            meter::note_strays();
            out.extend(chunk.invalid().iter().map(|&b| stray(b)));
        }
    }
    out
}

/// The bytes of the Go string `text`.
pub(crate) fn to_bytes(text: &str) -> Cow<'_, [u8]> {
    if !has_stray(text) {
        return Cow::Borrowed(text.as_bytes());
    }
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match stray_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    Cow::Owned(out)
}

/// Go's `len` of the string.
pub(crate) fn byte_len(text: &str) -> usize {
    to_bytes(text).len()
}

/// `text` with each stray byte as U+FFFD: what a rendered file shows, and what Go's rune-wise functions make of it.
pub(crate) fn printable(text: &str) -> Cow<'_, str> {
    replace_strays(text, "\u{FFFD}")
}

/// JSON text from serde_json with each stray byte as `\ufffd`, as `encoding/json` writes an invalid byte.
pub(crate) fn json(text: String) -> String {
    match replace_strays(&text, "\\ufffd") {
        Cow::Borrowed(_) => text,
        Cow::Owned(replaced) => replaced,
    }
}

fn replace_strays<'a>(text: &'a str, with: &str) -> Cow<'a, str> {
    if !has_stray(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if stray_byte(c).is_some() {
            out.push_str(with);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stray_bytes_survive_a_round_trip() {
        let cases: [&[u8]; 5] = [
            b"plain",
            "ünïcödé".as_bytes(),
            b"n\xc3",
            b"\xff\xfe\x80",
            b"\xc3\xbc\xc3",
        ];
        for bytes in cases {
            let text = from_bytes(bytes);
            assert_eq!(&*to_bytes(&text), bytes, "{bytes:?}");
            assert_eq!(byte_len(&text), bytes.len(), "{bytes:?}");
            assert_eq!(
                has_stray(&text),
                std::str::from_utf8(bytes).is_err(),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn stray_bytes_print_and_encode_like_go() {
        let text = from_bytes(b"n\xc3");
        assert_eq!(printable(&text), "n\u{FFFD}");
        assert_eq!(json(serde_json::to_string(&text).unwrap()), r#""n\ufffd""#);
        assert!(matches!(printable("ü"), Cow::Borrowed(_)));
        // A real U+FFFD is not a stray byte.
        assert_eq!(json("\"\u{FFFD}\"".to_string()), "\"\u{FFFD}\"");
    }
}
