//! Name, qualified-name, label and config-key rules of k8s.io/apimachinery's
//! `util/validation` with kube-apiserver's exact messages.

use crate::status::Cause;

/// Longest RFC 1123 subdomain (and config key).
pub const SUBDOMAIN_MAX_LENGTH: usize = 253;
/// Longest RFC 1123 / RFC 1035 label, label value and qualified-name name part.
pub const LABEL_MAX_LENGTH: usize = 63;

const SUBDOMAIN_ERROR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const SUBDOMAIN_FORMAT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const LABEL_ERROR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const LABEL_FORMAT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1035_ERROR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const DNS1035_FORMAT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME_ERROR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FORMAT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_ERROR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FORMAT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const CONFIG_KEY_ERROR: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const CONFIG_KEY_FORMAT: &str = "[-._a-zA-Z0-9]+";

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

impl NameRule {
    /// The messages for `name` (empty when valid); `prefix` for a generateName, whose trailing
    /// dash is masked as kube-apiserver's `maskTrailingDash` does.
    pub fn messages(self, name: &str, prefix: bool) -> Vec<String> {
        let masked;
        let name = if prefix && self != NameRule::PathSegment {
            masked = mask_trailing_dash(name);
            masked.as_str()
        } else {
            name
        };
        match self {
            NameRule::Subdomain => subdomain_messages(name),
            NameRule::Label => label_messages(
                name,
                is_dns1123_label_shape,
                LABEL_ERROR,
                LABEL_FORMAT,
                &["my-name", "123-abc"],
            ),
            NameRule::Dns1035 => label_messages(
                name,
                is_dns1035_label_shape,
                DNS1035_ERROR,
                DNS1035_FORMAT,
                &["my-name", "abc-123"],
            ),
            NameRule::PathSegment => path_segment_messages(name, prefix),
        }
    }
}

/// Whether `s` is a lowercase RFC 1123 subdomain.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    subdomain_messages(s).is_empty()
}

/// `IsDNS1123Subdomain`: length, then shape (both may be reported).
pub fn subdomain_messages(value: &str) -> Vec<String> {
    let mut messages = Vec::new();
    if value.len() > SUBDOMAIN_MAX_LENGTH {
        messages.push(max_length(SUBDOMAIN_MAX_LENGTH));
    }
    if value.is_empty() || !value.split('.').all(is_dns1123_label_shape) {
        messages.push(regex_error(
            SUBDOMAIN_ERROR,
            SUBDOMAIN_FORMAT,
            &["example.com"],
        ));
    }
    messages
}

/// `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name part.
pub fn qualified_name_messages(value: &str) -> Vec<String> {
    let mut messages = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                messages.push("prefix part must be non-empty".to_owned());
            } else {
                messages.extend(
                    subdomain_messages(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            messages.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERROR, QUALIFIED_NAME_FORMAT, &["MyName", "my.name", "123-abc"])
            ));
            return messages;
        }
    };
    if name.is_empty() {
        messages.push("name part must be non-empty".to_owned());
    } else if name.len() > LABEL_MAX_LENGTH {
        messages.push(format!("name part {}", max_length(LABEL_MAX_LENGTH)));
    }
    if !is_qualified_name_part(name) {
        messages.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERROR,
                QUALIFIED_NAME_FORMAT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    messages
}

/// `IsValidLabelValue`: at most 63 characters, empty or a qualified-name part.
pub fn label_value_messages(value: &str) -> Vec<String> {
    let mut messages = Vec::new();
    if value.len() > LABEL_MAX_LENGTH {
        messages.push(max_length(LABEL_MAX_LENGTH));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        messages.push(regex_error(
            LABEL_VALUE_ERROR,
            LABEL_VALUE_FORMAT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    messages
}

/// `IsConfigMapKey` (ConfigMap and Secret data keys).
pub fn config_key_messages(value: &str) -> Vec<String> {
    let mut messages = Vec::new();
    if value.len() > SUBDOMAIN_MAX_LENGTH {
        messages.push(max_length(SUBDOMAIN_MAX_LENGTH));
    }
    let shape = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !shape {
        messages.push(regex_error(
            CONFIG_KEY_ERROR,
            CONFIG_KEY_FORMAT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    match value {
        "." => messages.push("must not be '.'".to_owned()),
        ".." => messages.push("must not be '..'".to_owned()),
        v if v.starts_with("..") => messages.push("must not start with '..'".to_owned()),
        _ => {}
    }
    messages
}

/// Validates `metadata.name` under a rule; returns the causes (empty when valid).
pub fn validate_name(name: &str, rule: NameRule) -> Vec<Cause> {
    rule.messages(name, false)
        .into_iter()
        .map(|message| invalid("metadata.name", name, &message))
        .collect()
}

/// The cause for an object with neither name nor generateName.
pub fn name_required() -> Cause {
    Cause::new(
        "metadata.name",
        "FieldValueRequired",
        "Required value: name or generateName is required",
    )
}

/// A `FieldValueInvalid` cause: `Invalid value: "<value>": <message>`.
pub fn invalid(field: &str, value: &str, message: &str) -> Cause {
    Cause::new(
        field,
        "FieldValueInvalid",
        format!("Invalid value: {}: {message}", go_quote(value)),
    )
}

/// A `FieldValueTooLong` cause for a byte limit.
pub fn too_long(field: &str, limit: usize) -> Cause {
    Cause::new(
        field,
        "FieldValueTooLong",
        format!("Too long: may not be more than {limit} bytes"),
    )
}

/// A string quoted like Go's `%q` (printable ASCII and Unicode kept, quotes and controls escaped).
pub fn go_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn max_length(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// Go's `RegexError`: the message, examples and the regular expression.
fn regex_error(message: &str, format: &str, examples: &[&str]) -> String {
    let mut text = format!("{message} (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            text.push_str(" or ");
        }
        text.push_str(&format!("'{example}', "));
    }
    text.push_str(&format!("regex used for validation is '{format}')"));
    text
}

fn label_messages(
    name: &str,
    shape: fn(&str) -> bool,
    error: &str,
    format: &str,
    examples: &[&str],
) -> Vec<String> {
    let mut messages = Vec::new();
    if name.len() > LABEL_MAX_LENGTH {
        messages.push(max_length(LABEL_MAX_LENGTH));
    }
    if !shape(name) {
        messages.push(regex_error(error, format, examples));
    }
    messages
}

fn path_segment_messages(name: &str, prefix: bool) -> Vec<String> {
    if !prefix && let Some(bad) = [".", ".."].into_iter().find(|bad| name == *bad) {
        return vec![format!("may not be '{bad}'")];
    }
    ["/", "%"]
        .into_iter()
        .filter(|bad| name.contains(bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// kube-apiserver's `maskTrailingDash`: a generateName may end in '-'.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let mut cut = name.len() - 2;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}a", &name[..cut])
    } else {
        name.to_owned()
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` without a length limit.
fn is_dns1123_label_shape(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_dns1035_label_shape(s: &str) -> bool {
    is_dns1123_label_shape(s) && s.starts_with(|c: char| c.is_ascii_lowercase())
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_qualified_name_part(s: &str) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
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
    fn subdomain_reports_length_and_shape_together() {
        let long = "n".repeat(254);
        assert_eq!(
            NameRule::Subdomain.messages(&long, false),
            vec!["must be no more than 253 characters"]
        );
        assert_eq!(
            NameRule::Subdomain
                .messages(&format!("{long}_"), false)
                .len(),
            2
        );
        // Labels of a subdomain have no length limit of their own.
        assert!(is_dns1123_subdomain(&"a".repeat(100)));
    }

    #[test]
    fn generate_name_prefixes_may_end_in_a_dash() {
        assert!(NameRule::Subdomain.messages("kc-csr-", true).is_empty());
        assert!(!NameRule::Subdomain.messages("kc-csr-", false).is_empty());
        assert_eq!(NameRule::Subdomain.messages("Bad_", true).len(), 1);
    }

    #[test]
    fn path_segment_names_allow_colons() {
        assert!(validate_name("system:node-proxier", NameRule::PathSegment).is_empty());
        assert!(!validate_name("a/b", NameRule::PathSegment).is_empty());
        assert_eq!(validate_name("a/%b", NameRule::PathSegment).len(), 2);
    }

    #[test]
    fn namespace_names_must_be_labels() {
        assert!(validate_name("kc-lists", NameRule::Label).is_empty());
        assert!(!validate_name("a.b", NameRule::Label).is_empty());
    }

    #[test]
    fn qualified_names_check_prefix_and_name_parts() {
        assert!(qualified_name_messages("example.com/My_Name-1").is_empty());
        let messages = qualified_name_messages("Not A Valid/Key!");
        assert_eq!(messages.len(), 2);
        assert!(messages[0].starts_with("prefix part a lowercase RFC 1123 subdomain"));
        assert!(messages[1].starts_with("name part must consist of alphanumeric characters"));
        assert_eq!(qualified_name_messages("a/b/c").len(), 1);
        assert_eq!(
            qualified_name_messages("/x"),
            vec!["prefix part must be non-empty"]
        );
        assert_eq!(
            qualified_name_messages(&"k".repeat(64)),
            vec!["name part must be no more than 63 characters"]
        );
    }

    #[test]
    fn label_values_may_be_empty_but_not_long_or_odd() {
        assert!(label_value_messages("").is_empty());
        assert_eq!(
            label_value_messages(&"x".repeat(64)),
            vec!["must be no more than 63 characters"]
        );
        assert_eq!(
            label_value_messages("v@l ue"),
            vec![
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ]
        );
    }

    #[test]
    fn config_keys_refuse_slashes_and_dot_prefixes() {
        assert!(config_key_messages("key.name").is_empty());
        assert_eq!(config_key_messages("no/slash").len(), 1);
        assert_eq!(config_key_messages(".."), vec!["must not be '..'"]);
        assert_eq!(config_key_messages("..x"), vec!["must not start with '..'"]);
    }

    #[test]
    fn values_are_quoted_like_go() {
        assert_eq!(go_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }
}
