//! Field validation of CertificateSigningRequests with kube-apiserver's exact messages, and the
//! 422 `Status` built from them.

use std::collections::BTreeSet;

use serde_json::{Value, json};

/// Every key usage kube-apiserver accepts, sorted like its error messages list them.
pub(super) const VALID_USAGES: [&str; 23] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

/// One field error, like `k8s.io/apimachinery/pkg/util/validation/field.Error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FieldError {
    /// Cause type, e.g. `FieldValueInvalid`.
    pub(super) cause: &'static str,
    /// Field path, e.g. `spec.expirationSeconds`.
    pub(super) field: String,
    /// Error body, e.g. `Invalid value: 300: may not specify ...`.
    pub(super) body: String,
}

impl FieldError {
    /// `Invalid value: <value>: <detail>`; `value` is already formatted like Go does.
    pub(super) fn invalid(field: impl Into<String>, value: &str, detail: &str) -> Self {
        Self {
            cause: "FieldValueInvalid",
            field: field.into(),
            body: format!("Invalid value: {value}: {detail}"),
        }
    }

    /// `Required value`.
    pub(super) fn required(field: impl Into<String>) -> Self {
        Self {
            cause: "FieldValueRequired",
            field: field.into(),
            body: "Required value".to_owned(),
        }
    }

    /// `Unsupported value: "x": supported values: "a", "b"`.
    pub(super) fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> Self {
        let supported: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        Self {
            cause: "FieldValueNotSupported",
            field: field.into(),
            body: format!(
                "Unsupported value: {value:?}: supported values: {}",
                supported.join(", ")
            ),
        }
    }

    /// `Duplicate value: "x"`.
    pub(super) fn duplicate(field: impl Into<String>, value: &str) -> Self {
        Self {
            cause: "FieldValueDuplicate",
            field: field.into(),
            body: format!("Duplicate value: {value:?}"),
        }
    }

    /// `Forbidden: <detail>`.
    pub(super) fn forbidden(field: impl Into<String>, detail: &str) -> Self {
        Self {
            cause: "FieldValueForbidden",
            field: field.into(),
            body: format!("Forbidden: {detail}"),
        }
    }

    fn message(&self) -> String {
        format!("{}: {}", self.field, self.body)
    }
}

/// The 422 `Status` kube-apiserver answers for a CertificateSigningRequest that fails validation.
pub(super) fn invalid_status(name: &str, errors: &[FieldError]) -> Value {
    let mut messages: Vec<String> = Vec::new();
    for error in errors {
        let message = error.message();
        if !messages.contains(&message) {
            messages.push(message);
        }
    }
    let aggregate = match messages.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let causes: Vec<Value> = errors
        .iter()
        .map(|e| json!({"reason": e.cause, "message": e.body, "field": e.field}))
        .collect();
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("CertificateSigningRequest.certificates.k8s.io {name:?} is invalid: {aggregate}"),
        "reason": "Invalid",
        "details": {
            "name": name,
            "group": "certificates.k8s.io",
            "kind": "CertificateSigningRequest",
            "causes": causes,
        },
        "code": 422,
    })
}

/// Errors of `spec.request` (already base64-decoded; `None` when absent).
pub(super) fn validate_request(request: Option<&[u8]>) -> Vec<FieldError> {
    match parse_request(request.unwrap_or_default()) {
        Ok(()) => Vec::new(),
        Err(detail) => vec![FieldError::invalid(
            "spec.request",
            &go_bytes(request),
            detail,
        )],
    }
}

/// Checks like Go's `certificates.ParseCSR` + `CheckSignature`: the first PEM block must be a
/// CERTIFICATE REQUEST with a valid self-signature.
fn parse_request(data: &[u8]) -> Result<(), &'static str> {
    use rustls::pki_types::CertificateSigningRequestDer;
    use rustls::pki_types::pem::PemObject;
    use x509_parser::prelude::{FromDer, X509CertificationRequest};

    const PEM_TYPE: &str = "PEM block type must be CERTIFICATE REQUEST";
    let text = String::from_utf8_lossy(data);
    let begin = text.find("-----BEGIN ").ok_or(PEM_TYPE)?;
    let label = &text[begin + "-----BEGIN ".len()..];
    let label = &label[..label.find("-----").ok_or(PEM_TYPE)?];
    if label != "CERTIFICATE REQUEST" {
        return Err(PEM_TYPE);
    }
    let der = CertificateSigningRequestDer::from_pem_slice(&data[begin..]).map_err(|_| PEM_TYPE)?;
    let (_, request) = X509CertificationRequest::from_der(der.as_ref())
        .map_err(|_| "x509: malformed certificate request")?;
    request
        .verify_signature()
        .map_err(|_| "x509: signature verification failure")
}

/// The organizations (O) of a PEM request's subject, the groups a client certificate signed from
/// it would carry; empty when the request does not parse.
pub(super) fn requested_organizations(data: &[u8]) -> Vec<String> {
    use rustls::pki_types::CertificateSigningRequestDer;
    use rustls::pki_types::pem::PemObject;
    use x509_parser::prelude::{FromDer, X509CertificationRequest};

    let Ok(der) = CertificateSigningRequestDer::from_pem_slice(data) else {
        return Vec::new();
    };
    let Ok((_, request)) = X509CertificationRequest::from_der(der.as_ref()) else {
        return Vec::new();
    };
    request
        .certification_request_info
        .subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_owned))
        .collect()
}

/// Go's `%#v` of a `[]byte`: `[]byte{0x6e, 0x6f}` or `[]byte(nil)`.
pub(super) fn go_bytes(bytes: Option<&[u8]>) -> String {
    match bytes {
        None => "[]byte(nil)".to_owned(),
        Some(bytes) => {
            let items: Vec<String> = bytes.iter().map(|b| format!("{b:#04x}")).collect();
            format!("[]byte{{{}}}", items.join(", "))
        }
    }
}

/// Errors of `spec.usages`: required, known values, no duplicates.
pub(super) fn validate_usages(usages: &[String]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if usages.is_empty() {
        errors.push(FieldError::required("spec.usages"));
    }
    for (i, usage) in usages.iter().enumerate() {
        if !VALID_USAGES.contains(&usage.as_str()) {
            errors.push(FieldError::not_supported(
                format!("spec.usages[{i}]"),
                usage,
                &VALID_USAGES,
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, usage) in usages.iter().enumerate() {
        if !seen.insert(usage.as_str()) {
            errors.push(FieldError::duplicate(format!("spec.usages[{i}]"), usage));
        }
    }
    errors
}

/// Errors of `spec.signerName`: `<domain with a dot>/<path>` and not the legacy signer.
pub(super) fn validate_signer_name(signer_name: &str) -> Vec<FieldError> {
    const FIELD: &str = "spec.signerName";
    if signer_name == "kubernetes.io/legacy-unknown" {
        return vec![FieldError::invalid(
            FIELD,
            &format!("{signer_name:?}"),
            "the legacy signerName is not allowed via this API version",
        )];
    }
    if signer_name.is_empty() {
        return vec![FieldError::required(FIELD)];
    }
    let Some((domain, path)) = signer_name
        .split_once('/')
        .filter(|(_, path)| !path.contains('/'))
    else {
        return vec![FieldError::invalid(
            FIELD,
            &format!("{signer_name:?}"),
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        )];
    };
    let mut errors = Vec::new();
    if let Some(label) = domain.split('.').find(|label| !dns_label(label)) {
        errors.push(FieldError::invalid(
            FIELD,
            &format!("{domain:?}"),
            &format!(
                "validating label {label:?}: a lowercase RFC 1123 label must consist of lower case alphanumeric \
                 characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or \
                 '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ),
        ));
    }
    if !domain.contains('.') {
        errors.push(FieldError::invalid(
            FIELD,
            &format!("{domain:?}"),
            "should be a domain with at least two segments separated by dots",
        ));
    }
    if path.is_empty() || !path.split('.').all(dns_label) {
        errors.push(FieldError::invalid(
            FIELD,
            &format!("{path:?}"),
            "validating path: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character",
        ));
    }
    errors
}

fn dns_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    let alphanumeric = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes.first().is_some_and(alphanumeric)
        && bytes.last().is_some_and(alphanumeric)
        && bytes.iter().all(|b| alphanumeric(b) || *b == b'-')
}

/// Errors of `spec.expirationSeconds` (at least ten minutes).
pub(super) fn validate_expiration(expiration_seconds: Option<i64>) -> Vec<FieldError> {
    match expiration_seconds {
        Some(seconds) if seconds < 600 => vec![FieldError::invalid(
            "spec.expirationSeconds",
            &seconds.to_string(),
            "may not specify a duration less than 600 seconds (10 minutes)",
        )],
        _ => Vec::new(),
    }
}

/// Errors of `status.conditions`: type and status set, no duplicate types, Approved/Denied/Failed
/// only True, Approved and Denied mutually exclusive.
pub(super) fn validate_conditions(conditions: &[Value]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen = BTreeSet::new();
    let (mut approved, mut denied) = (false, false);
    for (i, condition) in conditions.iter().enumerate() {
        let field = |key: &str| {
            condition
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let (kind, status) = (field("type"), field("status"));
        let path = format!("status.conditions[{i}]");
        if kind.is_empty() {
            errors.push(FieldError::required(format!("{path}.type")));
        }
        if status.is_empty() {
            errors.push(FieldError::required(format!("{path}.status")));
        } else if !["True", "False", "Unknown"].contains(&status) {
            errors.push(FieldError::not_supported(
                format!("{path}.status"),
                status,
                &["False", "True", "Unknown"],
            ));
        }
        if !seen.insert(kind.to_owned()) {
            errors.push(FieldError::duplicate(format!("{path}.type"), kind));
        }
        let exclusive = |errors: &mut Vec<FieldError>| {
            errors.push(FieldError::invalid(
                format!("{path}.type"),
                &format!("{kind:?}"),
                "Approved and Denied conditions are mutually exclusive",
            ));
        };
        let only_true = |errors: &mut Vec<FieldError>| {
            if status != "True" {
                errors.push(FieldError::invalid(
                    format!("{path}.status"),
                    &format!("{status:?}"),
                    &format!("{kind} condition may only be set to True"),
                ));
            }
        };
        match kind {
            "Approved" => {
                approved = true;
                if denied {
                    exclusive(&mut errors);
                }
                only_true(&mut errors);
            }
            "Denied" => {
                denied = true;
                if approved {
                    exclusive(&mut errors);
                }
                only_true(&mut errors);
            }
            "Failed" => only_true(&mut errors),
            _ => {}
        }
    }
    errors
}

/// Errors of an update that drops an Approved or Denied condition the stored object has.
pub(super) fn validate_conditions_kept(old: &[Value], new: &[Value]) -> Vec<FieldError> {
    let count = |conditions: &[Value], kind: &str| {
        conditions
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some(kind))
            .count()
    };
    ["Approved", "Denied"]
        .iter()
        .filter(|kind| count(new, kind) < count(old, kind))
        .map(|kind| {
            FieldError::forbidden(
                "status.conditions",
                &format!("updates may not remove a condition of type {kind:?}"),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_request_is_invalid_with_go_byte_literal() {
        let errors = validate_request(Some(b"not a csr"));
        assert_eq!(
            errors,
            vec![FieldError::invalid(
                "spec.request",
                "[]byte{0x6e, 0x6f, 0x74, 0x20, 0x61, 0x20, 0x63, 0x73, 0x72}",
                "PEM block type must be CERTIFICATE REQUEST"
            )]
        );
        assert_eq!(
            validate_request(None)[0].body,
            "Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST"
        );
    }

    #[test]
    fn certificate_pem_is_not_a_request() {
        let pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        assert_eq!(validate_request(Some(pem.as_bytes())).len(), 1);
    }

    #[test]
    fn usages_must_be_known_present_and_unique() {
        assert_eq!(
            validate_usages(&[]),
            vec![FieldError::required("spec.usages")]
        );
        let errors = validate_usages(&["client auth".into(), "bogus".into(), "client auth".into()]);
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].field, "spec.usages[1]");
        assert!(
            errors[0]
                .body
                .starts_with(r#"Unsupported value: "bogus": supported values: "any", "cert sign""#)
        );
        assert_eq!(
            errors[1],
            FieldError::duplicate("spec.usages[2]", "client auth")
        );
    }

    #[test]
    fn signer_names_need_domain_and_path() {
        assert!(validate_signer_name("kubernetes.io/kube-apiserver-client").is_empty());
        assert!(validate_signer_name("example.com/my-signer").is_empty());
        assert_eq!(
            validate_signer_name(""),
            vec![FieldError::required("spec.signerName")]
        );
        assert_eq!(validate_signer_name("nodomain").len(), 1);
        assert_eq!(
            validate_signer_name("local/x")[0].body,
            r#"Invalid value: "local": should be a domain with at least two segments separated by dots"#
        );
        assert_eq!(
            validate_signer_name("kubernetes.io/legacy-unknown").len(),
            1
        );
        assert_eq!(validate_signer_name("Example.com/x").len(), 1);
    }

    #[test]
    fn expiration_below_ten_minutes_is_invalid() {
        assert!(validate_expiration(None).is_empty());
        assert!(validate_expiration(Some(600)).is_empty());
        assert_eq!(
            validate_expiration(Some(300))[0].body,
            "Invalid value: 300: may not specify a duration less than 600 seconds (10 minutes)"
        );
    }

    #[test]
    fn approved_after_denied_is_invalid_at_its_index() {
        let conditions = vec![
            json!({"type": "Denied", "status": "True"}),
            json!({"type": "Approved", "status": "True"}),
        ];
        assert_eq!(
            validate_conditions(&conditions),
            vec![FieldError::invalid(
                "status.conditions[1].type",
                "\"Approved\"",
                "Approved and Denied conditions are mutually exclusive"
            )]
        );
    }

    #[test]
    fn conditions_need_valid_status_and_unique_types() {
        let conditions = vec![
            json!({"type": "Approved", "status": "False"}),
            json!({"type": "Custom", "status": "Maybe"}),
            json!({"type": "Custom", "status": "True"}),
            json!({"type": "", "status": ""}),
        ];
        let fields: Vec<_> = validate_conditions(&conditions)
            .into_iter()
            .map(|e| (e.field, e.cause))
            .collect();
        assert_eq!(
            fields,
            vec![
                (
                    "status.conditions[0].status".to_owned(),
                    "FieldValueInvalid"
                ),
                (
                    "status.conditions[1].status".to_owned(),
                    "FieldValueNotSupported"
                ),
                (
                    "status.conditions[2].type".to_owned(),
                    "FieldValueDuplicate"
                ),
                ("status.conditions[3].type".to_owned(), "FieldValueRequired"),
                (
                    "status.conditions[3].status".to_owned(),
                    "FieldValueRequired"
                ),
            ]
        );
    }

    #[test]
    fn removing_an_approval_is_forbidden() {
        let old = vec![json!({"type": "Approved", "status": "True"})];
        assert_eq!(validate_conditions_kept(&old, &[]).len(), 1);
        assert!(validate_conditions_kept(&old, &old).is_empty());
    }

    #[test]
    fn invalid_status_aggregates_several_errors() {
        let status = invalid_status(
            "c",
            &[
                FieldError::required("spec.usages"),
                validate_expiration(Some(1)).remove(0),
            ],
        );
        assert_eq!(
            status["message"],
            "CertificateSigningRequest.certificates.k8s.io \"c\" is invalid: [spec.usages: Required value, \
             spec.expirationSeconds: Invalid value: 1: may not specify a duration less than 600 seconds (10 minutes)]"
        );
        assert_eq!(
            status["details"]["causes"].as_array().map(Vec::len),
            Some(2)
        );
    }
}
