//! Size limits of what a write may store, as etcd and kube-apiserver bound them: the stored
//! object (etcd's `--max-request-bytes`, 1.5 MiB by default), the operations of a JSON patch and
//! the bytes its `copy` operations may add (kube-apiserver's `JSONPatchMaxCopyBytes`), so a patch
//! that would grow without end is refused before it allocates.

use serde_json::Value;

use crate::status::ApiError;

/// etcd's default request limit; a larger object never reaches the store.
pub const MAX_OBJECT_BYTES: usize = 1024 * 1024 * 3 / 2;
/// Operations one JSON patch may contain (`maxJSONPatchOperations`).
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;
/// Bytes the `copy` operations of one JSON patch may copy in total (kube-apiserver sets
/// json-patch's `AccumulatedCopySizeLimit` to its request body limit, 3 MiB).
pub const MAX_JSON_PATCH_COPY_BYTES: usize = 3 * 1024 * 1024;

const TOO_LARGE: &str = "etcdserver: request is too large";

/// Refuses an object larger than etcd stores, with the answer kube-apiserver passes on from
/// etcd (500, no reason).
///
/// The size is that of the JSON the sandbox stores, less the base64 overhead of binary data
/// (Secret `data`, ConfigMap `binaryData`), which kube-apiserver stores as raw bytes.
///
/// # Errors
/// The Status for an object over [`MAX_OBJECT_BYTES`].
pub fn check_object_size(object: &Value) -> Result<(), ApiError> {
    let binary = ["data", "binaryData"]
        .iter()
        .filter(|key| **key == "binaryData" || object["kind"] == "Secret")
        .filter_map(|key| object.get(*key).and_then(Value::as_object))
        .flat_map(|map| map.values().filter_map(Value::as_str))
        .map(|text| text.len() / 4)
        .sum::<usize>();
    match json_len(object, MAX_OBJECT_BYTES + binary) {
        Some(_) => Ok(()),
        None => Err(too_large()),
    }
}

/// The error etcd's request limit produces.
pub fn too_large() -> ApiError {
    ApiError::status(500, "", TOO_LARGE, None)
}

/// Whether an error is [`too_large`] (a patch then retries without managedFields).
pub fn is_too_large(error: &ApiError) -> bool {
    error.code == 500 && error.body.get("message").and_then(Value::as_str) == Some(TOO_LARGE)
}

/// The 413 for a JSON patch with too many operations.
pub fn too_many_operations(count: usize) -> ApiError {
    ApiError::status(
        413,
        "RequestEntityTooLarge",
        format!(
            "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {count}"
        ),
        None,
    )
}

/// The length of `value` serialized as compact JSON, or `None` once it exceeds `limit`; stops
/// counting there, so it costs at most `limit` bytes of work and nothing is allocated.
pub fn json_len(value: &Value, limit: usize) -> Option<usize> {
    let mut counter = Counter { count: 0, limit };
    serde_json::to_writer(&mut counter, value).ok()?;
    Some(counter.count)
}

/// A writer that only counts, failing past its limit.
struct Counter {
    count: usize,
    limit: usize,
}

impl std::io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.count = self.count.saturating_add(bytes.len());
        if self.count > self.limit {
            return Err(std::io::Error::other("over the limit"));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_len_counts_compact_json_and_stops_at_the_limit() {
        let value = json!({"a": [1, "xy"]});
        assert_eq!(json_len(&value, 100), Some(r#"{"a":[1,"xy"]}"#.len()));
        assert_eq!(json_len(&value, 5), None);
    }

    #[test]
    fn objects_over_etcds_limit_are_refused_with_its_message() {
        let fits = json!({"data": {"a": "x".repeat(MAX_OBJECT_BYTES - 100)}});
        assert!(check_object_size(&fits).is_ok());
        let over = json!({"data": {"a": "x".repeat(MAX_OBJECT_BYTES)}});
        let error = check_object_size(&over).expect_err("too large");
        assert_eq!(error.code, 500);
        assert_eq!(error.body["message"], "etcdserver: request is too large");
        assert!(error.body.get("reason").is_none());
        assert!(is_too_large(&error));
    }

    #[test]
    fn binary_data_counts_with_its_decoded_size() {
        let encoded = "eHh4".repeat(MAX_OBJECT_BYTES / 4 + 1000);
        let secret = json!({"kind": "Secret", "data": {"a": encoded}});
        assert!(check_object_size(&secret).is_ok());
        let text = json!({"kind": "ConfigMap", "data": {"a": encoded}});
        assert!(check_object_size(&text).is_err());
    }
}
