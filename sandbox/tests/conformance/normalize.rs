//! Normalization of recorded and replayed answers: values that legitimately differ between
//! servers (UIDs, generated names, times, certificates) become stable placeholders before the
//! comparison.

use super::*;

/// Replaces values that legitimately differ between servers by stable placeholders.
#[derive(Default)]
pub(super) struct Normalizer {
    pub(super) keep_times: bool,
    pub(super) uids: Vec<String>,
    pub(super) generated: Vec<(String, String)>,
}

impl Normalizer {
    pub(super) fn register_generated(&mut self, value: &Value) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(metadata)) = map.get("metadata")
                    && let Some(generate_name) = metadata
                        .get("generateName")
                        .and_then(Value::as_str)
                        .filter(|g| !g.is_empty())
                    && let Some(name) = metadata.get("name").and_then(Value::as_str)
                    && !self.generated.iter().any(|(real, _)| real == name)
                {
                    self.generated
                        .push((name.to_owned(), format!("{generate_name}<generated>")));
                }
                map.values().for_each(|v| self.register_generated(v));
            }
            Value::Array(items) => items.iter().for_each(|v| self.register_generated(v)),
            _ => {}
        }
    }

    /// A refused create with `generateName` names the generated object only in its Status.
    pub(super) fn register_refused_generated(&mut self, step: &Value, result: &Value) {
        if let Some(generate_name) = step
            .pointer("/request/body/metadata/generateName")
            .and_then(Value::as_str)
            .filter(|g| !g.is_empty())
            && let Some(name) = result.pointer("/body/details/name").and_then(Value::as_str)
            && !self.generated.iter().any(|(real, _)| real == name)
        {
            self.generated
                .push((name.to_owned(), format!("{generate_name}<generated>")));
        }
    }

    pub(super) fn norm(&mut self, value: &Value, key: Option<&str>) -> Value {
        static TIME: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
        static UUID: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
        let time_re = TIME.get_or_init(|| {
            Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
                .expect("valid regex")
        });
        static CREDENTIAL: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
        let credential_re = CREDENTIAL
            .get_or_init(|| Regex::new(r"(X509SHA256=)[0-9a-f]{64}").expect("valid regex"));
        let uuid_re = UUID.get_or_init(|| {
            Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
                .expect("valid regex")
        });
        match value {
            Value::Object(map) => {
                let mut out = Map::new();
                for (k, v) in map {
                    let text = v.as_str();
                    let normalized = match k.as_str() {
                        "managedFields" | "storageVersionHash" => continue,
                        "uid"
                            if text.is_some_and(|t| {
                                t.len() == 36
                                    && t.bytes().all(|b| {
                                        b.is_ascii_digit()
                                            || (b'a'..=b'f').contains(&b)
                                            || b == b'-'
                                    })
                            }) =>
                        {
                            let uid = text.unwrap_or_default().to_owned();
                            let index = match self.uids.iter().position(|u| *u == uid) {
                                Some(index) => index,
                                None => {
                                    self.uids.push(uid);
                                    self.uids.len() - 1
                                }
                            };
                            json!(format!("<uid-{}>", index + 1))
                        }
                        "resourceVersion" if !v.is_null() && text != Some("") => json!("<rv>"),
                        "continue" if truthy(v) => json!("<continue>"),
                        "remainingItemCount" => v.clone(),
                        "certificate" if text.is_some() && key == Some("status") => {
                            cert_summary(text.unwrap_or_default())
                        }
                        "request" if text.is_some() && map.contains_key("signerName") => {
                            csr_summary(text.unwrap_or_default())
                        }
                        k if TIME_KEYS.contains(&k)
                            && text.is_some_and(|t| time_re.is_match(t))
                            && !self.keep_times =>
                        {
                            json!("<time>")
                        }
                        _ => self.norm(v, Some(k)),
                    };
                    out.insert(k.clone(), normalized);
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(|i| self.norm(i, key)).collect()),
            Value::String(s) => {
                let mut text = s.clone();
                for (real, placeholder) in &self.generated {
                    if text.contains(real.as_str()) {
                        text = text.replace(real.as_str(), placeholder);
                    }
                }
                // kube-apiserver >= 1.32 names the client credential in a user's extra.
                let text = credential_re.replace_all(&text, "${1}<hash>");
                Value::String(uuid_re.replace_all(&text, "<uid>").into_owned())
            }
            other => other.clone(),
        }
    }
}

/// Subject, minimum validity and client-auth usage of a base64 PEM certificate.
pub(super) fn cert_summary(encoded: &str) -> Value {
    let summary = || -> Option<Value> {
        let pem = STANDARD.decode(encoded).ok()?;
        let der = CertificateDer::from_pem_slice(&pem).ok()?;
        let (_, cert) = X509Certificate::from_der(&der).ok()?;
        let seconds =
            cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp();
        let client_auth = cert
            .extended_key_usage()
            .ok()
            .flatten()
            .is_some_and(|eku| eku.value.client_auth);
        Some(json!({
            "subject": rfc4514(cert.subject()),
            "validitySecondsAtLeast": seconds >= 600,
            "clientAuth": client_auth,
        }))
    };
    summary().unwrap_or_else(|| json!("<unparseable certificate>"))
}

/// The subject of a base64 PEM certificate request.
pub(super) fn csr_summary(encoded: &str) -> Value {
    let summary = || -> Option<Value> {
        let pem = STANDARD.decode(encoded).ok()?;
        let der = rustls::pki_types::CertificateSigningRequestDer::from_pem_slice(&pem).ok()?;
        let (_, request) = X509CertificationRequest::from_der(der.as_ref()).ok()?;
        Some(json!({"csrSubject": rfc4514(&request.certification_request_info.subject)}))
    };
    summary().unwrap_or_else(|| json!("<unparseable request>"))
}

/// RFC 4514 string of a name, like Python cryptography's `Name.rfc4514_string()`.
pub(super) fn rfc4514(name: &X509Name<'_>) -> String {
    let mut rdns: Vec<String> = name
        .iter()
        .map(|rdn| {
            rdn.iter()
                .map(|attribute| {
                    let oid = attribute.attr_type().to_id_string();
                    let label = match oid.as_str() {
                        "2.5.4.3" => "CN".to_owned(),
                        "2.5.4.10" => "O".to_owned(),
                        "2.5.4.11" => "OU".to_owned(),
                        "2.5.4.6" => "C".to_owned(),
                        "2.5.4.8" => "ST".to_owned(),
                        "2.5.4.7" => "L".to_owned(),
                        "2.5.4.9" => "STREET".to_owned(),
                        "0.9.2342.19200300.100.1.25" => "DC".to_owned(),
                        "0.9.2342.19200300.100.1.1" => "UID".to_owned(),
                        other => other.to_owned(),
                    };
                    let value = attribute.as_str().unwrap_or_default();
                    format!("{label}={}", escape_rfc4514(value))
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    rdns.reverse();
    rdns.join(",")
}

pub(super) fn escape_rfc4514(value: &str) -> String {
    let mut out = String::new();
    for (i, c) in value.chars().enumerate() {
        let special = matches!(c, '\\' | '"' | '+' | ',' | ';' | '<' | '>')
            || (i == 0 && (c == '#' || c == ' '))
            || (i + 1 == value.chars().count() && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
