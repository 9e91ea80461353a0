//! Formatting an error with its sources for one log line or condition message.

/// Formats an error with its sources, `a: b: c`, leaving out a source whose text the message
/// before it already holds (many wrappers repeat their cause, e.g. io errors).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{message}")]
    struct Layer {
        message: &'static str,
        #[source]
        source: Option<Box<Layer>>,
    }

    fn layers(messages: &[&'static str]) -> Layer {
        let mut error: Option<Layer> = None;
        for message in messages.iter().rev() {
            error = Some(Layer {
                message,
                source: error.map(Box::new),
            });
        }
        error.expect("at least one layer")
    }

    #[test]
    fn error_chain_joins_every_source_with_colons() {
        assert_eq!(
            error_chain(&layers(&["reading config", "open a.yaml", "denied"])),
            "reading config: open a.yaml: denied"
        );
    }

    #[test]
    fn error_chain_skips_a_source_the_message_already_holds() {
        assert_eq!(
            error_chain(&layers(&["reading a.yaml: not found", "not found"])),
            "reading a.yaml: not found"
        );
    }

    #[test]
    fn error_chain_appends_sources_not_already_in_the_message() {
        #[derive(Debug, thiserror::Error)]
        #[error("reading /x")]
        struct Outer(#[source] std::io::Error);
        #[derive(Debug, thiserror::Error)]
        #[error("reading /x: {0}")]
        struct Doubled(#[source] std::io::Error);
        let missing = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        assert_eq!(error_chain(&Outer(missing())), "reading /x: no such file");
        assert_eq!(error_chain(&Doubled(missing())), "reading /x: no such file");
    }
}
