//! Flow collections (`[…]`, `{…}`) in the YAML 1.1 rewrite ([`super`]): where one that opens on a line closes, and
//! the plain scalars of one that closes on its line read as go-yaml v2 reads them.

use super::*;

/// When the value on `body` is a flow collection that stays open past the line, the length of `following` (the
/// text after the line) up to the end of the line that closes it; `None` when it closes on its own line, never
/// closes, or nests deeper than yamlguard allows.
pub(super) fn open_flow_end(body: &str, following: &str) -> Option<usize> {
    let rest = LINE.captures(body)?.name("rest")?.as_str();
    if !rest.starts_with(['[', '{']) {
        return None;
    }
    let mut depth = 0usize;
    let mut scan = FlowScan::default();
    // The opening line first: it must leave the collection open.
    for (i, &b) in rest.as_bytes().iter().enumerate() {
        if scan.step(rest.as_bytes(), i, b, &mut depth)? {
            return None;
        }
    }
    let bytes = following.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if scan.step(bytes, i, bytes[i], &mut depth)? {
            return Some(
                following[i..]
                    .find('\n')
                    .map_or(following.len(), |n| i + n + 1),
            );
        }
        i += 1;
    }
    None
}

/// A flow collection that opens and closes on this line (`[017, y]`, `{on: 1_000}`) with its plain scalars read
/// as go-yaml v2 reads them (boolean keys quoted, numbers in their YAML 1.2 spelling), if any changed.
pub(super) fn rewrite_flow(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if !matches!(bytes.first(), Some(b'[' | b'{')) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    // Whether each open collection is a mapping.
    let mut open: Vec<bool> = Vec::new();
    let mut expecting = false;
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'[' | b'{' => {
                open.push(c == b'{');
                if open.len() > seedlet_yamlguard::MAX_FLOW_DEPTH {
                    return None;
                }
                expecting = true;
            }
            b']' | b'}' => {
                open.pop()?;
                expecting = false;
                if open.is_empty() {
                    out.push(char::from(c));
                    out.push_str(&text[i + 1..]);
                    return changed.then_some(out);
                }
            }
            b',' => expecting = true,
            b':' => expecting = true,
            b'"' | b'\'' => {
                let end = quoted_end(bytes, i)?;
                out.push_str(&text[i..end]);
                i = end;
                expecting = false;
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            // A comment inside a collection spread over lines runs to the end of its line.
            b'#' if i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'\n') => {
                let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
                out.push_str(&text[i..end]);
                i = end;
                continue;
            }
            _ if expecting => {
                let len = text[i..]
                    .find([',', ']', '}', ':', ' ', '\t', '\n', '\r'])
                    .unwrap_or(text.len() - i);
                let word = &text[i..i + len];
                let after = text[i + len..].trim_start_matches([' ', '\t']);
                let is_key = open.last() == Some(&true) && after.starts_with(':');
                let replacement = match (yaml11_bool(word), is_key) {
                    (_, true) => written_key(word),
                    (Some(b), false) => Some(b.to_string()),
                    (None, false) => yaml12_spelling(word),
                };
                changed |= replacement.is_some();
                out.push_str(replacement.as_deref().unwrap_or(word));
                i += len.max(1);
                expecting = false;
                continue;
            }
            _ => {}
        }
        out.push(char::from(c));
        i += 1;
    }
    // Not closed on this line: left to the YAML 1.2 reading.
    None
}

/// The index after the quoted scalar starting at `start` (`\` escapes in double quotes, `''` in single ones).
fn quoted_end(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}
