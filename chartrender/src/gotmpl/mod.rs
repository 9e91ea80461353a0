//! Go `text/template` support: lexer, parser and the translation into minijinja source.

mod hexfloat;
mod lexer;
mod parser;
mod translate;

pub(crate) use translate::{ALIAS_PREFIX, TEXT_PREFIX, Translated};

/// How many `\n` bytes `text` holds ([`count_byte`]).
pub(crate) fn count_newlines(text: &str) -> usize {
    count_byte(text.as_bytes(), b'\n')
}

/// How many times `byte` occurs in `haystack`. Counted per run of 255 bytes into a `u8`, which the compiler turns
/// into vector code taking 16 bytes a step; `filter(..).count()` adds into a `usize` and took 2 bytes a step (7 % of
/// a cold cert-service render, whose 44 KB CRD file is all text). `matches('\n')` calls `memchr` once per line.
pub(crate) fn count_byte(haystack: &[u8], byte: u8) -> usize {
    haystack
        .chunks(usize::from(u8::MAX))
        .map(|run| {
            let in_run = run
                .iter()
                .fold(0u8, |count, &b| count.wrapping_add(u8::from(b == byte)));
            usize::from(in_run)
        })
        .sum()
}

/// The parts of `text` between `separator` bytes, as `text.split(separator as char)` gives them. A byte search:
/// `str::split` with a `char` pattern steps through a searcher per match, which was a third of resolving a
/// `_p<n>` field path and a tenth of reading a values file line by line.
pub(crate) fn split_ascii(text: &str, separator: u8) -> impl Iterator<Item = &str> {
    // An ASCII byte never occurs inside a multi-byte character, so every cut is at a character boundary.
    assert!(
        separator.is_ascii(),
        "split_ascii splits at ASCII bytes only"
    );
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        match memchr::memchr(separator, current.as_bytes()) {
            Some(at) => {
                rest = Some(&current[at + 1..]);
                Some(&current[..at])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// What Helm keeps of a parse error's text: the part after its last `": "` (`bad number syntax: "1.n"` reads
/// `"1.n"`), as its engine cuts Go's `template: name:line: message` chain.
fn helm_message(message: &str) -> &str {
    message.rsplit(": ").next().unwrap_or(message)
}

/// A template that Go's parser would reject, with the template name and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parse error at ({template}:{line}): {}", helm_message(message))]
pub struct ParseError {
    /// The template (file path or `define` name) being parsed.
    pub template: String,
    /// 1-based line of the offending action.
    pub line: usize,
    /// What is wrong, in Go's words where possible.
    pub message: String,
}

/// A parsed and translated template file: its body and its `define`s, in source order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TranslatedFile {
    /// The file's own body.
    pub(crate) body: Translated,
    /// `(name, template)` for every `define`/`block`.
    pub(crate) defines: Vec<(String, Translated)>,
    /// The names among `defines` whose body is empty in Go's sense ([`parser::is_empty_tree`]): such a body does
    /// not replace a definition of the name parsed before it (usually none).
    pub(crate) empty_defines: Vec<String>,
}

impl TranslatedFile {
    /// Whether the file's body or any of its defines holds an action.
    pub(crate) fn has_actions(&self) -> bool {
        !self.body.actions.is_empty() || self.defines.iter().any(|(_, d)| !d.actions.is_empty())
    }
}

/// Parses Go template `source` and translates it and its defines into minijinja.
pub(crate) fn translate_file(
    name: &str,
    source: &str,
    is_function: &dyn Fn(&str) -> bool,
) -> Result<TranslatedFile, ParseError> {
    translate_file_with(name, source, is_function, None)
}

/// [`translate_file`] for a chart's template file number `file`: long literal texts are moved out of the source
/// under names `_t<file>_<part>_<n>` ([`Translated::texts`]), which the chart's execution context resolves.
pub(crate) fn translate_chart_file(
    name: &str,
    source: &str,
    is_function: &dyn Fn(&str) -> bool,
    file: usize,
) -> Result<TranslatedFile, ParseError> {
    translate_file_with(name, source, is_function, Some(file))
}

fn translate_file_with(
    name: &str,
    source: &str,
    is_function: &dyn Fn(&str) -> bool,
    file: Option<usize>,
) -> Result<TranslatedFile, ParseError> {
    let prefix = |part: usize| file.map(|file| format!("{TEXT_PREFIX}{file}_{part}"));
    let parsed = parser::parse(name, source, is_function)?;
    let body = translate::translate(name, source, &parsed.body, prefix(0).as_deref())?;
    let defines = parsed
        .defines
        .iter()
        .enumerate()
        .map(|(i, (define, nodes))| {
            let translated = translate::translate(name, source, nodes, prefix(i + 1).as_deref())?;
            Ok((define.to_string(), translated))
        })
        .collect::<Result<Vec<_>, ParseError>>()?;
    let empty_defines = parsed
        .defines
        .iter()
        .filter(|(_, nodes)| parser::is_empty_tree(nodes))
        .map(|(define, _)| define.to_string())
        .collect();
    Ok(TranslatedFile {
        body,
        defines,
        empty_defines,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn split_ascii_gives_what_str_split_gives() {
        for text in [
            "",
            ".",
            "a",
            "a.b.c",
            "a..b",
            ".a",
            "a.",
            "é.ü.",
            "Values.global.x",
        ] {
            let want: Vec<&str> = text.split('.').collect();
            assert_eq!(
                super::split_ascii(text, b'.').collect::<Vec<_>>(),
                want,
                "{text:?}"
            );
        }
        let lines = "key: 1\n  sub: é\n\n# c\n";
        assert_eq!(
            super::split_ascii(lines, b'\n').collect::<Vec<_>>(),
            lines.split('\n').collect::<Vec<_>>()
        );
    }

    #[test]
    fn count_newlines_counts_line_feeds_only() {
        for (text, want) in [("", 0), ("a", 0), ("\n", 1), ("a\r\nb\n\n", 3), ("é\nü", 1)] {
            assert_eq!(super::count_newlines(text), want, "{text:?}");
        }
        let long = "line\n".repeat(1000) + "tail";
        assert_eq!(super::count_newlines(&long), 1000);
        // Runs of 255 bytes that are all the byte counted, and runs cut in the middle.
        for len in [254, 255, 256, 510, 511, 1000] {
            assert_eq!(super::count_byte(&vec![b'{'; len], b'{'), len);
            assert_eq!(super::count_newlines(&"\n".repeat(len)), len);
        }
    }
}
