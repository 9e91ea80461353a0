//! YAML request bodies (`application/yaml`, `application/apply-patch+yaml`) decoded with a bound
//! on flow-collection nesting checked first: the YAML parser's time grows with the square of the
//! unclosed `[` and `{`, so a 3 MiB body of brackets held a server thread for minutes, where JSON's
//! decoder stops at 128 levels at once. The nesting is measured by `seedlet_yamlguard`; the
//! sandbox answers at kube-apiserver's depth (128) rather than seedlet's own bound (64).

use serde_json::Value;

/// Deepest nesting of `[` and `{` decoded, the JSON decoder's recursion limit.
pub const MAX_FLOW_DEPTH: usize = 128;

/// Decodes a YAML document into JSON; the error is the decoder's text.
pub fn from_slice(body: &[u8]) -> Result<Value, String> {
    if seedlet_yamlguard::flow_depth(body) > MAX_FLOW_DEPTH {
        return Err(format!("exceeded max depth of {MAX_FLOW_DEPTH}"));
    }
    serde_yaml::from_slice(body).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_depth_skips_strings_and_comments() {
        for (text, depth) in [
            ("a: 1", 0),
            ("a: [1, {b: [2]}]", 3),
            ("a: \"[[[[\"\nb: [1]", 1),
            ("a: '[[''[['\nb: {}", 1),
            ("a: \"\\\"[[\" # [[[\nb: [[]]", 2),
            ("don't: [x]", 1),
            ("{\"a\":{\"a\":{\"a\":1}}}", 3),
            ("]]]] [", 1),
        ] {
            assert_eq!(seedlet_yamlguard::flow_depth(text), depth, "{text}");
        }
    }

    #[test]
    fn deep_flow_nesting_is_refused_before_parsing() {
        let deep = format!("{}1{}", "[".repeat(200_000), "]".repeat(200_000));
        let started = std::time::Instant::now();
        assert_eq!(
            from_slice(deep.as_bytes()),
            Err("exceeded max depth of 128".to_owned())
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let fine = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        assert!(from_slice(fine.as_bytes()).is_ok());
        assert_eq!(
            from_slice(b"a: {b: [1, 2]}"),
            Ok(serde_json::json!({"a": {"b": [1, 2]}}))
        );
    }
}
