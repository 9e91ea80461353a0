//! Go `text/template` support: lexer, parser and the translation into minijinja source.

mod lexer;
mod parser;
mod translate;

pub(crate) use translate::{ALIAS_PREFIX, TEXT_PREFIX, Translated};

/// How many `\n` bytes `text` holds: a plain byte count that the compiler turns into vector code, where
/// `matches('\n')` calls `memchr` once per line (a tenth of translating text-heavy templates).
pub(crate) fn count_newlines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

/// A template that Go's parser would reject, with the template name and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parse error at ({template}:{line}): {message}")]
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
    let body = translate::translate(name, &parsed.body, prefix(0).as_deref())?;
    let defines = parsed
        .defines
        .iter()
        .enumerate()
        .map(|(i, (define, nodes))| {
            let translated = translate::translate(name, nodes, prefix(i + 1).as_deref())?;
            Ok((define.to_string(), translated))
        })
        .collect::<Result<Vec<_>, ParseError>>()?;
    Ok(TranslatedFile { body, defines })
}

#[cfg(test)]
mod tests {
    #[test]
    fn count_newlines_counts_line_feeds_only() {
        for (text, want) in [("", 0), ("a", 0), ("\n", 1), ("a\r\nb\n\n", 3), ("é\nü", 1)] {
            assert_eq!(super::count_newlines(text), want, "{text:?}");
        }
        let long = "line\n".repeat(1000) + "tail";
        assert_eq!(super::count_newlines(&long), 1000);
    }
}
