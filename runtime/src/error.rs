//! Formatting an error with its sources for one log line or condition message.
//!
//! kube's API errors print a Rust `Debug` dump of the server's `Status`; here they read as the
//! server wrote them (`secrets "x" not found (NotFound, 404)`), and a 404 that names no object —
//! the server does not serve the resource type at all — says what is probably missing.

use kube::core::Status;

/// What a 404 without an object name most likely means, appended to its message.
pub const MISSING_RESOURCE_TYPE_HINT: &str = "the server does not serve this resource type: \
     install the CRDs (`seedlet crds --garden` or `--seed`, then `kubectl apply -f -`) or, in a \
     garden, run gardener-apiserver";

/// Formats an error with its sources, `a: b: c`, leaving out a source whose text the message
/// before it already holds (many wrappers repeat their cause, e.g. io errors).
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = describe(error);
    let mut source = error.source();
    while let Some(cause) = source {
        let text = describe(cause);
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

/// One error's own text; API errors as the server's message, reason and code.
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let kube_error = error
        .downcast_ref::<kube::Error>()
        .or_else(|| error.downcast_ref::<Box<kube::Error>>().map(AsRef::as_ref));
    if let Some(watch_error) = error.downcast_ref::<kube::runtime::watcher::Error>() {
        return watch_error_text(watch_error);
    }
    match kube_error {
        Some(kube::Error::Api(status)) => api_status_text(status),
        // The source of an API error; the same text as its error's, so the chain skips it.
        _ => match error
            .downcast_ref::<Status>()
            .or_else(|| error.downcast_ref::<Box<Status>>().map(AsRef::as_ref))
        {
            Some(status) => api_status_text(status),
            None => error.to_string(),
        },
    }
}

/// A watch error without the `Debug` dump kube-runtime puts into its message; the chain adds
/// the API error's own text after it.
fn watch_error_text(error: &kube::runtime::watcher::Error) -> String {
    use kube::runtime::watcher::Error;
    match error {
        Error::InitialListFailed(_) => "listing failed".to_owned(),
        Error::WatchStartFailed(_) => "starting the watch failed".to_owned(),
        Error::WatchError(status) => format!("watch error: {}", api_status_text(status)),
        Error::WatchFailed(_) => "the watch stream failed".to_owned(),
        Error::NoResourceVersion => error.to_string(),
    }
}

/// `message (reason, code)` of a failed API request; a 404 that names no object gets
/// [`MISSING_RESOURCE_TYPE_HINT`].
pub fn api_status_text(status: &Status) -> String {
    let message = status.message.trim();
    // kube's reason for an answer that was not a Status (e.g. a plain `404 page not found`).
    let reason_known = !status.reason.is_empty() && status.reason != "Failed to parse error data";
    let mut text = match (message.is_empty(), !reason_known) {
        (true, true) => format!("HTTP {}", status.code),
        (true, false) => format!("{} ({})", status.reason, status.code),
        (false, true) => format!("{message} ({})", status.code),
        (false, false) => format!("{message} ({}, {})", status.reason, status.code),
    };
    let names_object = status
        .details
        .as_ref()
        .is_some_and(|details| !details.name.is_empty());
    if status.code == 404 && !names_object {
        text.push_str(": ");
        text.push_str(MISSING_RESOURCE_TYPE_HINT);
    }
    text
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

    #[derive(Debug, thiserror::Error)]
    #[error("reading Seed local")]
    struct Reading(#[source] kube::Error);

    fn status(code: u16, reason: &str, message: &str, name: Option<&str>) -> kube::Error {
        let mut status = Status::failure(message, reason).with_code(code);
        if let Some(name) = name {
            status = status.with_details(kube::core::response::StatusDetails {
                name: name.to_owned(),
                group: String::new(),
                kind: String::new(),
                uid: String::new(),
                causes: Vec::new(),
                retry_after_seconds: 0,
            });
        }
        kube::Error::Api(status.boxed())
    }

    #[test]
    fn api_errors_read_as_the_server_wrote_them_without_a_debug_dump() {
        let missing = status(
            404,
            "NotFound",
            "seeds.core.gardener.cloud \"local\" not found",
            Some("local"),
        );
        assert_eq!(
            error_chain(&Reading(missing)),
            "reading Seed local: seeds.core.gardener.cloud \"local\" not found (NotFound, 404)"
        );
        let conflict = status(409, "Conflict", "the object has been modified", None);
        let text = error_chain(&Reading(conflict));
        assert_eq!(
            text,
            "reading Seed local: the object has been modified (Conflict, 409)"
        );
        assert!(!text.contains("Status {"), "{text}");
    }

    #[test]
    fn a_404_naming_no_object_says_the_resource_type_is_not_served() {
        let unserved = status(
            404,
            "NotFound",
            "the server could not find the requested resource",
            None,
        );
        assert_eq!(
            error_chain(&Reading(unserved)),
            format!(
                "reading Seed local: the server could not find the requested resource (NotFound, 404): {MISSING_RESOURCE_TYPE_HINT}"
            )
        );
        let plain = status(
            404,
            "Failed to parse error data",
            "404 page not found\n",
            None,
        );
        assert!(
            error_chain(&plain).starts_with("404 page not found (404): the server does not serve")
        );
    }

    #[test]
    fn watch_errors_read_without_a_debug_dump() {
        let unserved = status(
            404,
            "Failed to parse error data",
            "404 page not found",
            None,
        );
        let error = kube::runtime::watcher::Error::InitialListFailed(unserved);
        assert_eq!(
            error_chain(&error),
            format!("listing failed: 404 page not found (404): {MISSING_RESOURCE_TYPE_HINT}")
        );
    }

    #[test]
    fn boxed_kube_errors_are_recognised_too() {
        #[derive(Debug, thiserror::Error)]
        #[error("registering")]
        struct Boxed(#[source] Box<kube::Error>);
        let conflict = status(409, "Conflict", "modified", None);
        assert_eq!(
            error_chain(&Boxed(Box::new(conflict))),
            "registering: modified (Conflict, 409)"
        );
    }
}
