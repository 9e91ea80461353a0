//! Limits checked before a configuration reaches the YAML parser: its size, and the nesting of
//! flow collections the parser is slow on ([`seedlet_yamlguard`]). No configuration comes near
//! these limits.

/// Largest configuration file read (Gardener's full example is about 10 KiB).
pub const MAX_BYTES: usize = 1024 * 1024;

/// What limit `text` exceeds, if any.
pub fn too_complex(text: &str) -> Option<String> {
    if text.len() > MAX_BYTES {
        return Some(format!("{} bytes, more than {MAX_BYTES}", text.len()));
    }
    seedlet_yamlguard::check(text)
        .err()
        .map(|too_deep| too_deep.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_complex_refuses_deep_nesting_and_huge_files_only() {
        assert_eq!(too_complex("a: [[[1]]]\n"), None);
        let deep = format!("a: {}", "[".repeat(seedlet_yamlguard::MAX_FLOW_DEPTH + 1));
        assert!(too_complex(&deep).is_some_and(|p| p.contains("nested more than 64")));
        let huge = "a".repeat(MAX_BYTES + 1);
        assert!(too_complex(&huge).is_some_and(|p| p.contains("more than 1048576")));
    }
}
