//! Leases: `spec.acquireTime`/`renewTime` parsed and stored as `metav1.MicroTime` (microseconds,
//! UTC), with kube-apiserver's decode error for times that do not parse.

use serde_json::{Value, json};

use super::strategy::{Context, Strategy};
use crate::resources::{ResourceType, Subresource};
use crate::status::ApiError;

/// Lease rules.
pub struct Leases;

impl Strategy for Leases {
    fn prepare_create(&self, ctx: &Context<'_>, object: &mut Value) -> Result<(), ApiError> {
        normalize_lease(ctx.rt, object)
    }

    fn prepare_update(
        &self,
        ctx: &Context<'_>,
        _old: &Value,
        new: &mut Value,
        _subresource: &Subresource,
    ) -> Result<(), ApiError> {
        normalize_lease(ctx.rt, new)
    }
}

/// MicroTime fields of a Lease must parse; they are stored as kube serializes them (6 fraction digits, UTC).
fn normalize_lease(rt: &ResourceType, object: &mut Value) -> Result<(), ApiError> {
    for field in ["acquireTime", "renewTime"] {
        let Some(Value::String(text)) = object.pointer(&format!("/spec/{field}")).cloned() else {
            continue;
        };
        let normalized = normalize_micro_time(&text).ok_or_else(|| {
            ApiError::bad_request(format!(
                "{kind} in version \"{version}\" cannot be handled as a {kind}: parsing time \"{text}\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"{rest}\" as \"{element}\"",
                kind = rt.kind,
                version = rt.version,
                rest = text,
                element = failing_layout_element(&text),
            ))
        })?;
        object["spec"][field] = json!(normalized);
    }
    Ok(())
}

/// Parses an RFC 3339 time and renders it with microseconds in UTC, as `metav1.MicroTime` does.
pub fn normalize_micro_time(text: &str) -> Option<String> {
    let timestamp: jiff::Timestamp = text.parse().ok()?;
    Some(timestamp.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string())
}

/// The layout element Go's time.Parse reports as failing, approximated from the first bad position.
fn failing_layout_element(text: &str) -> &'static str {
    const ELEMENTS: [(usize, &str); 6] = [
        (4, "2006"),
        (7, "-01"),
        (10, "-02"),
        (13, "T15"),
        (16, ":04"),
        (19, ":05"),
    ];
    let bytes = text.as_bytes();
    let year_ok = bytes.len() >= 4 && bytes[..4].iter().all(u8::is_ascii_digit);
    if !year_ok {
        return "2006";
    }
    for (end, element) in ELEMENTS.iter().skip(1) {
        if bytes.len() < *end {
            return element;
        }
    }
    "Z07:00"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_time_keeps_microseconds_and_uses_utc() {
        assert_eq!(
            normalize_micro_time("2026-01-02T03:04:07.000001Z").as_deref(),
            Some("2026-01-02T03:04:07.000001Z")
        );
        assert_eq!(
            normalize_micro_time("2026-01-02T04:04:07+01:00").as_deref(),
            Some("2026-01-02T03:04:07.000000Z")
        );
        assert!(normalize_micro_time("yesterday").is_none());
    }

    #[test]
    fn unparsable_year_is_reported_against_the_year_element() {
        assert_eq!(failing_layout_element("yesterday"), "2006");
    }
}
