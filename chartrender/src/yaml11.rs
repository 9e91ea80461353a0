//! YAML 1.1 booleans as Helm reads values: its parser (sigs.k8s.io/yaml over go-yaml v2) takes the plain scalars
//! `y`, `yes`, `on` (and `n`, `no`, `off`, in any of their three spellings) for booleans, where the YAML 1.2 parser
//! used here sees strings. A key `y:` therefore becomes the key `"true"`, and `a: off` the value `false`.
//!
//! The rewrite works on block-style lines before parsing: a plain key or a plain value that is the whole rest of
//! its line (a mapping value or a list item, comments allowed) is replaced; text inside block scalars (`|`, `>`)
//! and quoted scalars is left alone. Flow collections (`{y: 1}`) and multi-line plain scalars keep YAML 1.2's reading.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// The go-yaml v2 boolean spelled `word`, if it is one that YAML 1.2 reads as a string.
fn yaml11_bool(word: &str) -> Option<bool> {
    match word {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// Whether `line` holds a word go-yaml v2 reads as a boolean: a line without one is never rewritten, since a
/// rewritten key or value is such a word standing alone between non-letters.
fn has_candidate(line: &str) -> bool {
    line.split(|c: char| !c.is_ascii_alphabetic())
        .any(|word| yaml11_bool(word).is_some())
}

/// A block line: indentation and list dashes, an optional plain key, and the rest.
static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<lead>[ \t]*(?:-[ \t]+)*)(?:(?P<key>[A-Za-z0-9_][A-Za-z0-9_./-]*)(?P<colon>[ \t]*:)(?P<gap>[ \t]+|$))?(?P<rest>.*)$")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// A plain scalar filling the rest of a line, before an optional comment.
static REST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<word>[A-Za-z]+)(?P<tail>[ \t]*(?:#.*)?)$")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// A line that opens a block scalar (`key: |`, `- >-`, `|2` …).
static BLOCK_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[ \t:-])[|>][-+0-9]*[ \t]*(?:#.*)?$")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// `text` with YAML 1.1 boolean keys written as `"true"`/`"false"` and boolean values as `true`/`false`.
pub(crate) fn booleans_as_yaml11(text: &str) -> Cow<'_, str> {
    if !text.lines().any(has_candidate) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    // Indentation of the line that opened a block scalar: deeper (or blank) lines are its content.
    let mut block: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let indent = body.len() - body.trim_start_matches([' ', '\t']).len();
        if let Some(open) = block {
            if body.trim().is_empty() || indent > open {
                out.push_str(line);
                continue;
            }
            block = None;
        }
        // The regexes run only where they can match: a block scalar opens with `|` or `>`, and a line is
        // rewritten only when it holds a boolean word (values files are long, their candidate lines few).
        if body.contains(['|', '>'])
            && BLOCK_START.is_match(body)
            && !body.trim_start().starts_with('#')
        {
            block = Some(indent);
        }
        if has_candidate(body) {
            out.push_str(&rewrite_line(body));
        } else {
            out.push_str(body);
        }
        out.push_str(ending);
    }
    Cow::Owned(out)
}

fn rewrite_line(body: &str) -> Cow<'_, str> {
    let Some(parts) = LINE.captures(body) else {
        return Cow::Borrowed(body);
    };
    let lead = parts.name("lead").map_or("", |m| m.as_str());
    let rest = parts.name("rest").map_or("", |m| m.as_str());
    let mut changed = false;
    let mut out = String::from(lead);
    if let Some(key) = parts.name("key") {
        match yaml11_bool(key.as_str()) {
            Some(b) => {
                out.push_str(if b { "\"true\"" } else { "\"false\"" });
                changed = true;
            }
            None => out.push_str(key.as_str()),
        }
        out.push_str(parts.name("colon").map_or("", |m| m.as_str()));
        out.push_str(parts.name("gap").map_or("", |m| m.as_str()));
    }
    // A value: after a key, or a list item's whole content.
    let is_value = parts.name("key").is_some() || lead.trim_end().ends_with('-');
    match REST.captures(rest).filter(|_| is_value) {
        Some(value) if yaml11_bool(&value["word"]).is_some() => {
            let b = yaml11_bool(&value["word"]).unwrap_or(false);
            out.push_str(if b { "true" } else { "false" });
            out.push_str(&value["tail"]);
            changed = true;
        }
        _ => out.push_str(rest),
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_are_read_like_go_yaml_v2() {
        let cases = [
            ("y: 1\n", "\"true\": 1\n"),
            (
                "n: 1\nyes: 2\nOFF: 3\n",
                "\"false\": 1\n\"true\": 2\n\"false\": 3\n",
            ),
            ("a: yes\nb: Off # c\n", "a: true\nb: false # c\n"),
            (
                "l:\n  - on\n  - no\n  - y: n\n",
                "l:\n  - true\n  - false\n  - \"true\": false\n",
            ),
            // Not plain booleans: quoted, other words, inside text.
            (
                "a: \"yes\"\nb: 'on'\nc: yesterday\nd: yes please\n",
                "a: \"yes\"\nb: 'on'\nc: yesterday\nd: yes please\n",
            ),
            // Block scalars keep their text; the next key is read again.
            (
                "s: |\n  y: 1\n  on\nn: x\n",
                "s: |\n  y: 1\n  on\n\"false\": x\n",
            ),
            (
                "s: >-\n  off\n\n  yes\nt: on\n",
                "s: >-\n  off\n\n  yes\nt: true\n",
            ),
            // Comments stay as written.
            ("# y: 1\na: 1\n", "# y: 1\na: 1\n"),
            ("x-y: on\nport.name: N\n", "x-y: true\nport.name: false\n"),
            // Lines without a candidate between rewritten ones are copied as they are.
            (
                "a: 1\nb: on\nc: 2 # x|\nd: n\n",
                "a: 1\nb: true\nc: 2 # x|\nd: false\n",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(booleans_as_yaml11(input), want, "{input:?}");
        }
    }

    #[test]
    fn text_without_candidates_is_borrowed() {
        assert!(matches!(
            booleans_as_yaml11("a: 1\nb: [x]\n"),
            Cow::Borrowed(_)
        ));
    }
}
