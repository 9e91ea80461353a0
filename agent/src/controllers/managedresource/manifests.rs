//! Manifest Secrets → objects (spec §5.2): every key of every referenced Secret, Secrets in
//! `secretRefs` order and keys sorted, parsed as a YAML/JSON multi-document stream; empty and null
//! documents skipped; a document that does not decode is recorded and processing continues.

use std::collections::BTreeMap;

use serde::Deserialize as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

use seedlet_api::names::managed_resources;

/// One referenced Secret's data, in `secretRefs` order.
#[derive(Debug, Clone, PartialEq)]
pub struct SecretData {
    /// Secret name.
    pub name: String,
    /// Data by key.
    pub data: BTreeMap<String, Vec<u8>>,
}

/// Decoded objects plus the documents that could not be decoded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decoded {
    /// Objects in processing order.
    pub objects: Vec<Value>,
    /// One message per undecodable document or key (`<secret>/<key>: <why>`).
    pub errors: Vec<String>,
}

/// Decodes all manifests of `secrets`.
///
/// Keys ending in `.br` (Brotli, written by gardenlet's own MR helper) are reported as decode
/// errors: seedlet writes uncompressed data and carries no Brotli decoder.
pub fn decode(secrets: &[SecretData]) -> Decoded {
    let mut out = Decoded::default();
    for secret in secrets {
        for (key, bytes) in &secret.data {
            if key.ends_with(".br") {
                out.errors.push(format!(
                    "{}/{key}: brotli-compressed manifests are not supported",
                    secret.name
                ));
                continue;
            }
            let Ok(text) = std::str::from_utf8(bytes) else {
                out.errors
                    .push(format!("{}/{key}: data is not valid UTF-8", secret.name));
                continue;
            };
            decode_stream(text, &format!("{}/{key}", secret.name), &mut out);
        }
    }
    out
}

fn decode_stream(text: &str, origin: &str, out: &mut Decoded) {
    // Any extension may write these Secrets; brackets nested 100 000 deep would hold the
    // parser for most of a minute.
    if let Err(too_deep) = seedlet_yamlguard::check(text) {
        out.errors.push(format!("{origin}: {too_deep}"));
        return;
    }
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        match Value::deserialize(document) {
            Ok(Value::Null) => {}
            Ok(Value::Object(map)) if map.is_empty() => {}
            Ok(object @ Value::Object(_)) => {
                if object
                    .get("kind")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                    || object
                        .get("apiVersion")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                {
                    out.errors.push(format!(
                        "{origin}: document {index} has no apiVersion or kind"
                    ));
                } else {
                    out.objects.push(object);
                }
            }
            Ok(_) => out
                .errors
                .push(format!("{origin}: document {index} is not an object")),
            Err(error) => {
                out.errors
                    .push(format!("{origin}: document {index}: {error}"));
                // The YAML stream cannot be resynchronised after a syntax error.
                break;
            }
        }
    }
}

/// Hex SHA-256 over all manifest data (secret names, keys and values in processing order), the
/// MR's `status.secretsDataChecksum`.
pub fn checksum(secrets: &[SecretData]) -> String {
    let mut hasher = Sha256::new();
    for secret in secrets {
        hasher.update(secret.name.as_bytes());
        hasher.update([0]);
        for (key, value) in &secret.data {
            hasher.update(key.as_bytes());
            hasher.update([0]);
            hasher.update(value);
            hasher.update([0]);
        }
    }
    hex::encode(hasher.finalize())
}

/// Whether the desired object is released from the MR (`resources.gardener.cloud/mode=Ignore`, exact).
pub fn is_mode_ignore(object: &Value) -> bool {
    annotation(object, managed_resources::MODE) == Some(managed_resources::MODE_IGNORE)
}

/// An annotation of a JSON object.
pub fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(key))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str, entries: &[(&str, &str)]) -> SecretData {
        SecretData {
            name: name.into(),
            data: entries
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
                .collect(),
        }
    }

    #[test]
    fn decode_skips_empty_documents_and_records_malformed_ones() {
        let stream = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\nnull\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n";
        let decoded = decode(&[
            secret("s1", &[("a.yaml", stream)]),
            secret("s2", &[("bad.yaml", "kind: [unclosed\n")]),
        ]);
        let names: Vec<_> = decoded
            .objects
            .iter()
            .map(|o| o["metadata"]["name"].clone())
            .collect();
        assert_eq!(names, vec![Value::from("a"), Value::from("b")]);
        assert_eq!(decoded.errors.len(), 1);
        assert!(
            decoded.errors[0].starts_with("s2/bad.yaml"),
            "{:?}",
            decoded.errors
        );
    }

    #[test]
    fn decode_processes_secrets_in_order_and_keys_sorted() {
        let doc = |n: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}}}\n");
        let decoded = decode(&[
            secret("s2", &[("z", &doc("z")), ("a", &doc("a"))]),
            secret("s1", &[("m", &doc("m"))]),
        ]);
        let names: Vec<_> = decoded
            .objects
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["a", "z", "m"]);
    }

    #[test]
    fn decode_reports_brotli_keys_and_objects_without_kind() {
        let decoded = decode(&[secret(
            "s",
            &[
                ("data.yaml.br", "xx"),
                ("x.yaml", "apiVersion: v1\nmetadata: {}\n"),
            ],
        )]);
        assert!(decoded.objects.is_empty());
        assert_eq!(decoded.errors.len(), 2);
    }

    #[test]
    fn checksum_changes_with_any_value() {
        let a = checksum(&[secret("s", &[("k", "v")])]);
        let b = checksum(&[secret("s", &[("k", "w")])]);
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
    }
}
