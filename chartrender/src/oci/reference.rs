//! OCI chart references: `[oci://]registry[:port]/repository[:tag][@sha256:digest]`.

use std::fmt;
use std::net::IpAddr;

use super::OciError;

/// A parsed chart reference. Helm charts always name their registry, so the first component is the registry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// `host` or `host:port`.
    pub registry: String,
    /// Repository path inside the registry (`charts/provider-local`).
    pub repository: String,
    /// Tag (Helm's `+` in versions written as `_`, as Helm pushes them).
    pub tag: Option<String>,
    /// Manifest digest `sha256:<64 hex>`; when present it pins the manifest.
    pub digest: Option<String>,
}

impl Reference {
    /// Parses `reference`, with or without the `oci://` scheme.
    ///
    /// # Errors
    /// A missing registry, repository, or tag/digest, or characters the distribution spec does not allow.
    pub fn parse(reference: &str) -> Result<Self, OciError> {
        let invalid = |reason: &str| OciError::Reference {
            reference: reference.to_string(),
            reason: reason.to_string(),
        };
        let text = reference.strip_prefix("oci://").unwrap_or(reference);
        let (text, digest) = match text.split_once('@') {
            Some((name, digest)) => (name, Some(digest.to_string())),
            None => (text, None),
        };
        if let Some(digest) = &digest {
            let hex = digest
                .strip_prefix("sha256:")
                .ok_or_else(|| invalid("digest must be sha256:<64 hex digits>"))?;
            if hex.len() != 64
                || !hex
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            {
                return Err(invalid("digest must be sha256:<64 hex digits>"));
            }
        }
        let (registry, path) = text
            .split_once('/')
            .ok_or_else(|| invalid("expected registry/repository"))?;
        if registry.is_empty()
            || !registry
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        {
            return Err(invalid("invalid registry host"));
        }
        // A tag follows the last colon that comes after the last slash.
        let last_slash = path.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match path[last_slash..].rfind(':') {
            Some(colon) => {
                let at = last_slash + colon;
                (&path[..at], Some(path[at + 1..].replace('+', "_")))
            }
            None => (path, None),
        };
        if repository.is_empty() || !repository.split('/').all(valid_component) {
            return Err(invalid(
                "repository components must be lower-case letters, digits and separators",
            ));
        }
        if let Some(tag) = &tag {
            let valid = !tag.is_empty()
                && tag.len() <= 128
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
                && !tag.starts_with(['.', '-']);
            if !valid {
                return Err(invalid("invalid tag"));
            }
        }
        if tag.is_none() && digest.is_none() {
            return Err(invalid("a tag or digest is required"));
        }
        Ok(Self {
            registry: registry.to_string(),
            repository: repository.to_string(),
            tag,
            digest,
        })
    }

    /// The manifest to ask for: the digest when pinned, else the tag.
    pub(crate) fn manifest_reference(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// Whether the registry is on a loopback address, which is spoken to over plain HTTP (Helm's `--plain-http`).
    pub fn is_loopback(&self) -> bool {
        let host = match self.registry.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or_default(),
            None => self.registry.split(':').next().unwrap_or_default(),
        };
        host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// `http://` for loopback registries (when `plain_http_on_loopback`), `https://` otherwise, plus the registry.
    pub(crate) fn base_url(&self, plain_http_on_loopback: bool) -> String {
        let scheme = if plain_http_on_loopback && self.is_loopback() {
            "http"
        } else {
            "https"
        };
        format!("{scheme}://{}", self.registry)
    }
}

fn valid_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    !bytes.is_empty()
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(b))
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_like_helm() {
        let digest = format!("sha256:{}", "a".repeat(64));
        /// (registry, repository, tag, pinned by digest)
        type Parsed<'a> = Option<(&'a str, &'a str, Option<&'a str>, bool)>;
        let cases: Vec<(String, Parsed)> = vec![
            (
                "oci://127.0.0.1:5000/charts/demo:1.0.0".into(),
                Some(("127.0.0.1:5000", "charts/demo", Some("1.0.0"), false)),
            ),
            (
                "registry.example.com/a/b/c:1.2.3+build.1".into(),
                Some((
                    "registry.example.com",
                    "a/b/c",
                    Some("1.2.3_build.1"),
                    false,
                )),
            ),
            (
                format!("localhost:5000/demo@{digest}"),
                Some(("localhost:5000", "demo", None, true)),
            ),
            (
                format!("r.io/demo:1@{digest}"),
                Some(("r.io", "demo", Some("1"), true)),
            ),
            ("r.io/demo".into(), None),
            ("demo:1.0".into(), None),
            ("r.io/Demo:1".into(), None),
            ("r.io/demo:1@sha256:abc".into(), None),
            ("r.io/demo:-x".into(), None),
            ("r.io//demo:1".into(), None),
        ];
        for (text, expected) in cases {
            let parsed = Reference::parse(&text);
            match expected {
                Some((registry, repository, tag, pinned)) => {
                    let r = parsed.unwrap_or_else(|e| panic!("{text}: {e}"));
                    assert_eq!(
                        (
                            r.registry.as_str(),
                            r.repository.as_str(),
                            r.tag.as_deref(),
                            r.digest.is_some()
                        ),
                        (registry, repository, tag, pinned),
                        "{text}"
                    );
                }
                None => assert!(parsed.is_err(), "{text} is rejected"),
            }
        }
    }

    #[test]
    fn loopback_registries_use_plain_http() {
        for (registry, loopback) in [
            ("127.0.0.1:5000", true),
            ("localhost", true),
            ("[::1]:80", true),
            ("10.0.0.1:5000", false),
            ("ghcr.io", false),
        ] {
            let r = Reference::parse(&format!("{registry}/x:1")).unwrap();
            assert_eq!(r.is_loopback(), loopback, "{registry}");
            assert_eq!(r.base_url(true).starts_with("http://"), loopback);
            assert!(r.base_url(false).starts_with("https://"));
        }
    }
}
