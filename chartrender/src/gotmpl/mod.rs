//! Go `text/template` support: lexer, parser and the translation into minijinja source.

mod lexer;
mod parser;
mod translate;

pub(crate) use translate::Translated;

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
    let parsed = parser::parse(name, source, is_function)?;
    let body = translate::translate(name, &parsed.body)?;
    let defines = parsed
        .defines
        .iter()
        .map(|(define, nodes)| Ok((define.to_string(), translate::translate(name, nodes)?)))
        .collect::<Result<Vec<_>, ParseError>>()?;
    Ok(TranslatedFile { body, defines })
}
