//! Object name validation with kube-apiserver's exact messages.

use crate::status::Cause;

const SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MESSAGE: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// Which naming rule a kind follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// RFC 1123 subdomain (most kinds).
    Subdomain,
    /// RFC 1123 label (namespaces).
    Label,
    /// RFC 1035 label (services).
    Dns1035,
    /// Any path segment (RBAC kinds, CSRs).
    PathSegment,
}

/// Whether `s` is a lowercase RFC 1123 subdomain.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// Whether `s` is a lowercase RFC 1123 label.
pub fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
}

/// Validates `metadata.name` under a rule; returns the causes (empty when valid).
pub fn validate_name(name: &str, rule: NameRule) -> Vec<Cause> {
    let invalid = |message: &str| {
        vec![Cause::new(
            "metadata.name",
            "FieldValueInvalid",
            format!("Invalid value: \"{name}\": {message}"),
        )]
    };
    match rule {
        NameRule::Subdomain if !is_dns1123_subdomain(name) => {
            if name.len() > 253 {
                invalid("must be no more than 253 characters")
            } else {
                invalid(SUBDOMAIN_MESSAGE)
            }
        }
        NameRule::Label if !is_dns1123_label(name) => invalid(LABEL_MESSAGE),
        NameRule::Dns1035 if !is_dns1035_label(name) => invalid(DNS1035_MESSAGE),
        NameRule::PathSegment => {
            if name == "." || name == ".." {
                invalid(&format!("may not be '{name}'"))
            } else if let Some(bad) = ["/", "%"].iter().find(|bad| name.contains(**bad)) {
                invalid(&format!("may not contain '{bad}'"))
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    }
}

/// The cause for an object with neither name nor generateName.
pub fn name_required() -> Cause {
    Cause::new(
        "metadata.name",
        "FieldValueRequired",
        "Required value: name or generateName is required",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomain_rejects_uppercase_and_underscore_with_kube_message() {
        let causes = validate_name("Bad_Name", NameRule::Subdomain);
        assert_eq!(causes.len(), 1);
        assert!(
            causes[0]
                .message
                .starts_with("Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain")
        );
    }

    #[test]
    fn path_segment_names_allow_colons() {
        assert!(validate_name("system:node-proxier", NameRule::PathSegment).is_empty());
        assert!(!validate_name("a/b", NameRule::PathSegment).is_empty());
    }

    #[test]
    fn namespace_names_must_be_labels() {
        assert!(validate_name("kc-lists", NameRule::Label).is_empty());
        assert!(!validate_name("a.b", NameRule::Label).is_empty());
    }
}
