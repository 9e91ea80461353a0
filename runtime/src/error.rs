//! Formatting an error with its sources for one log line or condition message.

/// Formats an error with its sources, `a: b: c`, leaving out a source whose text the message
/// before it already ends with (many wrappers repeat their cause, e.g. io errors).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.ends_with(&text) {
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
    fn error_chain_skips_a_source_the_message_already_ends_with() {
        assert_eq!(
            error_chain(&layers(&["reading a.yaml: not found", "not found"])),
            "reading a.yaml: not found"
        );
    }
}
