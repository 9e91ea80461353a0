//! Small helpers on JSON objects every layer shares: metadata access, finalizers, string lists,
//! timestamps, UIDs and generated name suffixes.

use serde_json::{Map, Value, json};

/// Now as kube-apiserver writes `metav1.Time`: RFC 3339 in seconds.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `metadata.finalizers` as strings.
pub fn finalizers(object: &Value) -> Vec<String> {
    string_list(object.pointer("/metadata/finalizers"))
}

/// The strings of a JSON array (other items skipped); empty when `value` is missing or not an
/// array.
pub fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Mutable metadata map (created when missing).
pub fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if object.get("metadata").is_none_or(|m| !m.is_object()) {
        object["metadata"] = json!({});
    }
    object
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .expect("metadata was made an object just above")
}

/// Five characters from kube's name-generation alphabet.
pub fn random_suffix() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// A random RFC 4122 version-4 UUID.
pub fn new_uid() -> String {
    let bytes: [u8; 16] = rand::random();
    let hex: String = bytes
        .iter()
        .enumerate()
        .map(|(i, b)| match i {
            6 => format!("{:02x}", (b & 0x0f) | 0x40),
            8 => format!("{:02x}", (b & 0x3f) | 0x80),
            _ => format!("{b:02x}"),
        })
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_look_like_version_4_uuids() {
        let uid = new_uid();
        assert_eq!(uid.len(), 36);
        assert_eq!(&uid[14..15], "4");
    }

    #[test]
    fn generated_suffixes_use_kube_alphabet() {
        let suffix = random_suffix();
        assert_eq!(suffix.len(), 5);
        assert!(
            suffix
                .chars()
                .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c))
        );
    }
}
