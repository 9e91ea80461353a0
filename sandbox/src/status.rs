//! API errors as kube-apiserver `Status` objects (code, reason, message, details).

use serde_json::{Map, Value, json};

use crate::resources::ResourceType;

/// One `details.causes` entry of a Status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// Field path, e.g. `metadata.name`.
    pub field: String,
    /// Human message, e.g. `Invalid value: "x": ...`.
    pub message: String,
    /// Machine reason, e.g. `FieldValueInvalid`.
    pub reason: String,
}

impl Cause {
    /// A cause from its three parts.
    pub fn new(
        field: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Cause {
            field: field.into(),
            message: message.into(),
            reason: reason.into(),
        }
    }
}

/// An error answered to the client as a `Status` object, or as plain text for unknown paths.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// The full Status body.
    pub body: Value,
    /// Plain-text body instead of a Status (kube-apiserver's `404 page not found`).
    pub plain: Option<String>,
    /// `Retry-After` seconds for 429 answers.
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// A Status with the given code, reason and message and optional details.
    pub fn status(
        code: u16,
        reason: &str,
        message: impl Into<String>,
        details: Option<Value>,
    ) -> Self {
        let mut body = Map::new();
        body.insert("kind".into(), json!("Status"));
        body.insert("apiVersion".into(), json!("v1"));
        body.insert("metadata".into(), json!({}));
        body.insert("status".into(), json!("Failure"));
        body.insert("message".into(), json!(message.into()));
        if !reason.is_empty() {
            body.insert("reason".into(), json!(reason));
        }
        if let Some(details) = details {
            body.insert("details".into(), details);
        }
        body.insert("code".into(), json!(code));
        ApiError {
            code,
            body: Value::Object(body),
            plain: None,
            retry_after: None,
        }
    }

    /// `404 page not found` as plain text, for paths no API serves.
    pub fn page_not_found() -> Self {
        ApiError {
            code: 404,
            body: Value::Null,
            plain: Some("404 page not found".into()),
            retry_after: None,
        }
    }

    /// 400 BadRequest with a message and no details.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::status(400, "BadRequest", message, None)
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> Self {
        Self::status(401, "Unauthorized", "Unauthorized", None)
    }

    /// 404 NotFound for a named object of a resource type.
    pub fn not_found(rt: &ResourceType, name: &str) -> Self {
        Self::not_found_in(&rt.group, &rt.plural, name)
    }

    /// 404 NotFound for `plural.group "name"`.
    pub fn not_found_in(group: &str, plural: &str, name: &str) -> Self {
        let qualified = qualified(group, plural);
        Self::status(
            404,
            "NotFound",
            format!("{qualified} \"{name}\" not found"),
            Some(details(group, plural, name)),
        )
    }

    /// 409 AlreadyExists.
    pub fn already_exists(rt: &ResourceType, name: &str) -> Self {
        Self::status(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", rt.qualified_plural()),
            Some(details(&rt.group, &rt.plural, name)),
        )
    }

    /// 409 Conflict for a stale resourceVersion.
    pub fn stale(rt: &ResourceType, name: &str) -> Self {
        Self::status(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                rt.qualified_plural()
            ),
            Some(details(&rt.group, &rt.plural, name)),
        )
    }

    /// 422 Invalid with causes, named after the object's kind.
    pub fn invalid(rt: &ResourceType, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        let summary = summarize_causes(&causes);
        let message = format!(
            "{} \"{name}\" is invalid: {summary}",
            rt.qualified_kind(kind)
        );
        let mut d = Map::new();
        d.insert("name".into(), json!(name));
        if !rt.group.is_empty() {
            d.insert("group".into(), json!(rt.group));
        }
        d.insert("kind".into(), json!(kind));
        d.insert("causes".into(), causes_json(&causes));
        Self::status(422, "Invalid", message, Some(Value::Object(d)))
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::status(405, "MethodNotAllowed", message, None)
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Self {
        let message = message.into();
        Self::status(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
            Some(json!({"causes": [{"message": message}]})),
        )
    }

    /// 410 Gone for a watch or list from a compacted resourceVersion.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::status(410, "Expired", message, None)
    }
}

/// `details` with name, group (when not core) and kind (the plural, as kube-apiserver puts it).
pub fn details(group: &str, plural: &str, name: &str) -> Value {
    let mut d = Map::new();
    if !name.is_empty() {
        d.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        d.insert("group".into(), json!(group));
    }
    d.insert("kind".into(), json!(plural));
    Value::Object(d)
}

/// `plural` or `plural.group`.
pub fn qualified(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

fn causes_json(causes: &[Cause]) -> Value {
    Value::Array(
        causes
            .iter()
            .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
            .collect(),
    )
}

/// The field-error list rendered as in `ErrorList.ToAggregate()`: one error plain, several as `[a, b]`,
/// duplicates collapsed.
fn summarize_causes(causes: &[Cause]) -> String {
    let mut rendered: Vec<String> = Vec::new();
    for cause in causes {
        let text = if cause.field.is_empty() {
            cause.message.clone()
        } else {
            format!("{}: {}", cause.field, cause.message)
        };
        if !rendered.contains(&text) {
            rendered.push(text);
        }
    }
    if rendered.len() == 1 {
        rendered.remove(0)
    } else {
        format!("[{}]", rendered.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_causes_render_once_in_the_message() {
        let cause = Cause::new("metadata.finalizers", "FieldValueForbidden", "Forbidden: x");
        assert_eq!(
            summarize_causes(&[cause.clone(), cause]),
            "metadata.finalizers: Forbidden: x"
        );
    }

    #[test]
    fn not_found_names_group_qualified_resource() {
        let err =
            ApiError::not_found_in("apiextensions.k8s.io", "customresourcedefinitions", "a.b");
        assert_eq!(
            err.body["message"],
            "customresourcedefinitions.apiextensions.k8s.io \"a.b\" not found"
        );
        assert_eq!(err.body["details"]["group"], "apiextensions.k8s.io");
    }
}
