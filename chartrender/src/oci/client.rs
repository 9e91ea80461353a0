//! The pull itself: distribution API requests (`/v2/<repo>/manifests/<ref>`, `/v2/<repo>/blobs/<digest>`), the
//! `WWW-Authenticate` challenge (Basic, or Bearer with a token from the realm), limits and digest checks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

use super::cache::BlobCache;
use super::{
    Credentials, HELM_CHART_LAYER, OciError, PullOptions, PulledChart, Reference, sha256_digest,
};

/// Manifest types asked for: OCI first, Docker v2 as registries may label Helm's manifests so.
const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json;q=0.9";

/// Pulls Helm charts from OCI registries; holds the HTTP client and the archive cache. Share one.
#[derive(Debug)]
pub struct OciPuller {
    http: reqwest::Client,
    options: PullOptions,
    cache: Mutex<BlobCache>,
    /// Manifest digest → chart layer digest, for references pinned by digest (content-addressed, never stale).
    pinned: Mutex<HashMap<String, String>>,
}

impl OciPuller {
    /// A puller trusting the system roots plus `options.ca_bundle`.
    ///
    /// # Errors
    /// A CA bundle with no usable certificate, or a TLS setup failure.
    pub fn new(options: PullOptions) -> Result<Self, OciError> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            // Unusable system certificates are skipped, as every TLS client does.
            let _ = roots.add(cert);
        }
        if let Some(bundle) = &options.ca_bundle {
            let certs = CertificateDer::pem_slice_iter(bundle)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| OciError::Setup(format!("reading the CA bundle: {e}")))?;
            if certs.is_empty() {
                return Err(OciError::Setup(
                    "the CA bundle holds no PEM certificate".into(),
                ));
            }
            for cert in certs {
                roots
                    .add(cert)
                    .map_err(|e| OciError::Setup(format!("adding a CA bundle certificate: {e}")))?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| OciError::Setup(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(options.timeout)
            .user_agent(concat!("seedlet/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| OciError::Setup(e.to_string()))?;
        Ok(Self {
            http,
            options,
            cache: Mutex::new(BlobCache::default()),
            pinned: Mutex::new(HashMap::new()),
        })
    }

    /// Pulls the chart archive `reference` names, verifying manifest (when pinned) and layer digests.
    ///
    /// # Errors
    /// Unreachable registry, refused credentials, missing manifest, no Helm chart layer, digest mismatch or
    /// content over the limits; each names registry, reference and HTTP status where there is one.
    pub async fn pull(
        &self,
        reference: &Reference,
        credentials: Option<&Credentials>,
    ) -> Result<PulledChart, OciError> {
        if let Some(manifest_digest) = &reference.digest {
            let layer = self
                .pinned
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(manifest_digest)
                .cloned();
            if let Some(layer) = layer
                && let Some(archive) = self.cached(&layer)
            {
                return Ok(PulledChart {
                    manifest_digest: manifest_digest.clone(),
                    chart_digest: layer,
                    archive,
                    from_cache: true,
                });
            }
        }
        let mut session = Session {
            puller: self,
            reference,
            name: reference.to_string(),
            credentials,
            authorization: None,
        };
        let base = format!(
            "{}/v2/{}",
            reference.base_url(self.options.plain_http_on_loopback),
            reference.repository
        );
        let manifest = session
            .fetch(
                "manifest",
                &format!("{base}/manifests/{}", reference.manifest_reference()),
                MANIFEST_ACCEPT,
                self.options.max_manifest_bytes,
            )
            .await?;
        let manifest_digest = sha256_digest(&manifest);
        if let Some(expected) = &reference.digest
            && *expected != manifest_digest
        {
            return Err(session.digest_error("manifest", expected, &manifest_digest));
        }
        let (layer, size) = session.chart_layer(&manifest)?;
        if size > self.options.max_chart_bytes {
            return Err(session.too_large("chart layer", size, self.options.max_chart_bytes));
        }
        let (archive, from_cache) = match self.cached(&layer) {
            Some(archive) => (archive, true),
            None => {
                let data = session
                    .fetch(
                        "chart layer",
                        &format!("{base}/blobs/{layer}"),
                        "*/*",
                        self.options.max_chart_bytes,
                    )
                    .await?;
                let actual = sha256_digest(&data);
                if actual != layer {
                    return Err(session.digest_error("chart layer", &layer, &actual));
                }
                let archive: Arc<[u8]> = Arc::from(data);
                self.cache.lock().unwrap_or_else(|p| p.into_inner()).insert(
                    &layer,
                    Arc::clone(&archive),
                    self.options.cache_bytes,
                );
                (archive, false)
            }
        };
        if reference.digest.is_some() {
            self.pinned
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(manifest_digest.clone(), layer.clone());
        }
        Ok(PulledChart {
            manifest_digest,
            chart_digest: layer,
            archive,
            from_cache,
        })
    }

    fn cached(&self, digest: &str) -> Option<Arc<[u8]>> {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(digest)
    }
}

/// One pull: the reference, the credentials and the authorization earned from a challenge.
struct Session<'a> {
    puller: &'a OciPuller,
    reference: &'a Reference,
    name: String,
    credentials: Option<&'a Credentials>,
    authorization: Option<String>,
}

impl Session<'_> {
    fn registry(&self) -> String {
        self.reference.registry.clone()
    }

    fn transport(&self, what: &'static str, source: reqwest::Error) -> OciError {
        OciError::Transport {
            registry: self.registry(),
            reference: self.name.clone(),
            what,
            source,
        }
    }

    fn auth_error(&self, what: &'static str, status: u16, detail: &str) -> OciError {
        OciError::Auth {
            registry: self.registry(),
            reference: self.name.clone(),
            what,
            status,
            detail: detail.to_string(),
        }
    }

    fn too_large(&self, what: &'static str, size: u64, limit: u64) -> OciError {
        OciError::TooLarge {
            registry: self.registry(),
            reference: self.name.clone(),
            what,
            size,
            limit,
        }
    }

    fn digest_error(&self, what: &'static str, expected: &str, actual: &str) -> OciError {
        OciError::Digest {
            registry: self.registry(),
            reference: self.name.clone(),
            what,
            expected: expected.to_string(),
            actual: actual.to_string(),
        }
    }

    fn manifest_error(&self, reason: String) -> OciError {
        OciError::Manifest {
            registry: self.registry(),
            reference: self.name.clone(),
            reason,
        }
    }

    async fn send(
        &self,
        what: &'static str,
        url: &str,
        accept: &str,
    ) -> Result<reqwest::Response, OciError> {
        let mut request = self
            .puller
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, accept);
        if let Some(authorization) = &self.authorization {
            request = request.header(reqwest::header::AUTHORIZATION, authorization);
        }
        request.send().await.map_err(|e| self.transport(what, e))
    }

    /// GETs `url`, answering one authentication challenge, and reads at most `limit` bytes.
    async fn fetch(
        &mut self,
        what: &'static str,
        url: &str,
        accept: &str,
        limit: u64,
    ) -> Result<Vec<u8>, OciError> {
        let mut response = self.send(what, url, accept).await?;
        if response.status() == reqwest::StatusCode::UNAUTHORIZED {
            let challenge = response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            self.authenticate(what, &challenge).await?;
            response = self.send(what, url, accept).await?;
        }
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            let detail = registry_message(response).await;
            return Err(self.auth_error(what, status.as_u16(), &detail));
        }
        if !status.is_success() {
            let detail = registry_message(response).await;
            return Err(OciError::Status {
                registry: self.registry(),
                reference: self.name.clone(),
                what,
                status: status.as_u16(),
                detail,
            });
        }
        if let Some(length) = response.content_length()
            && length > limit
        {
            return Err(self.too_large(what, length, limit));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport(what, e))?
        {
            body.extend_from_slice(&chunk);
            if body.len() as u64 > limit {
                return Err(self.too_large(what, body.len() as u64, limit));
            }
        }
        Ok(body)
    }

    /// Earns an `Authorization` header from a `WWW-Authenticate` challenge.
    async fn authenticate(&mut self, what: &'static str, challenge: &str) -> Result<(), OciError> {
        let (scheme, params) = parse_challenge(challenge);
        match scheme.to_ascii_lowercase().as_str() {
            "basic" => {
                let credentials = self.credentials.ok_or_else(|| {
                    self.auth_error(
                        what,
                        401,
                        ": the registry asks for credentials and none were given",
                    )
                })?;
                let pair = format!("{}:{}", credentials.username, credentials.password);
                self.authorization = Some(format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                ));
                Ok(())
            }
            "bearer" => {
                let realm = params.get("realm").ok_or_else(|| {
                    self.auth_error(what, 401, ": bearer challenge without realm")
                })?;
                let scope = params
                    .get("scope")
                    .cloned()
                    .unwrap_or_else(|| format!("repository:{}:pull", self.reference.repository));
                let mut query = vec![("scope", scope)];
                if let Some(service) = params.get("service") {
                    query.push(("service", service.clone()));
                }
                let separator = if realm.contains('?') { '&' } else { '?' };
                let url = format!("{realm}{separator}{}", encode_query(&query));
                let mut request = self.puller.http.get(&url);
                if let Some(credentials) = self.credentials {
                    request =
                        request.basic_auth(&credentials.username, Some(&credentials.password));
                }
                let response = request
                    .send()
                    .await
                    .map_err(|e| self.transport("token", e))?;
                let status = response.status();
                if !status.is_success() {
                    let detail = registry_message(response).await;
                    return Err(self.auth_error("token", status.as_u16(), &detail));
                }
                let body: serde_json::Value = response
                    .json()
                    .await
                    .map_err(|e| self.transport("token", e))?;
                let token = body
                    .get("token")
                    .or_else(|| body.get("access_token"))
                    .and_then(serde_json::Value::as_str)
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| {
                        self.auth_error("token", status.as_u16(), ": no token in the response")
                    })?;
                self.authorization = Some(format!("Bearer {token}"));
                Ok(())
            }
            _ => Err(self.auth_error(
                what,
                401,
                &format!(": unsupported authentication challenge {challenge:?}"),
            )),
        }
    }

    /// The Helm chart layer's digest and size from an image manifest.
    fn chart_layer(&self, manifest: &[u8]) -> Result<(String, u64), OciError> {
        let parsed: serde_json::Value = serde_json::from_slice(manifest)
            .map_err(|e| self.manifest_error(format!("not JSON: {e}")))?;
        if parsed.get("manifests").is_some() {
            return Err(self.manifest_error("an image index, not a Helm chart manifest".into()));
        }
        let layers = parsed
            .get("layers")
            .and_then(serde_json::Value::as_array)
            .ok_or_else(|| self.manifest_error("no layers".into()))?;
        let layer = layers
            .iter()
            .find(|l| {
                l.get("mediaType").and_then(serde_json::Value::as_str) == Some(HELM_CHART_LAYER)
            })
            .ok_or_else(|| {
                let types: Vec<&str> = layers
                    .iter()
                    .filter_map(|l| l.get("mediaType").and_then(serde_json::Value::as_str))
                    .collect();
                self.manifest_error(format!(
                    "no helm layer found in artifact (want {HELM_CHART_LAYER}, layers are {types:?})"
                ))
            })?;
        let digest = layer
            .get("digest")
            .and_then(serde_json::Value::as_str)
            .filter(|d| {
                d.strip_prefix("sha256:")
                    .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            })
            .ok_or_else(|| {
                self.manifest_error("chart layer digest is not sha256:<64 hex>".into())
            })?;
        let size = layer
            .get("size")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| self.manifest_error("chart layer without size".into()))?;
        Ok((digest.to_string(), size))
    }
}

/// `Bearer realm="…",service="…"` → ("Bearer", {realm, service}).
fn parse_challenge(header: &str) -> (String, HashMap<String, String>) {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    let mut params = HashMap::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            break;
        };
        let key = key
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, remaining) = if let Some(quoted) = after.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            (&quoted[..end], quoted.get(end + 1..).unwrap_or(""))
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        params.insert(key, value.to_string());
        rest = remaining.trim_start().trim_start_matches(',').trim_start();
    }
    (scheme.to_string(), params)
}

fn encode_query(pairs: &[(&str, String)]) -> String {
    let encode = |text: &str| {
        let mut out = String::new();
        for b in text.bytes() {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The registry's error text (`{"errors":[{"code":…,"message":…}]}`) as `: CODE message`, if any.
async fn registry_message(response: reqwest::Response) -> String {
    let reason = response
        .status()
        .canonical_reason()
        .map(|r| format!(" {r}"))
        .unwrap_or_default();
    let Ok(body) = response.bytes().await else {
        return reason;
    };
    let parsed: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
    let first = parsed
        .as_ref()
        .and_then(|v| v.get("errors"))
        .and_then(serde_json::Value::as_array)
        .and_then(|errors| errors.first());
    match first {
        Some(error) => {
            let code = error
                .get("code")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            let message = error
                .get("message")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            format!("{reason}: {code} {message}").trim_end().to_string()
        }
        None => reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_parse_with_quoted_and_bare_values() {
        let (scheme, params) = parse_challenge(
            r#"Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull""#,
        );
        assert_eq!(scheme, "Bearer");
        assert_eq!(params["realm"], "https://auth.example.com/token");
        assert_eq!(params["service"], "registry.example.com");
        assert_eq!(params["scope"], "repository:a/b:pull");
        let (scheme, params) = parse_challenge("Basic realm=basic-realm");
        assert_eq!(
            (scheme.as_str(), params["realm"].as_str()),
            ("Basic", "basic-realm")
        );
        assert_eq!(
            encode_query(&[("scope", "repository:a/b:pull".into())]),
            "scope=repository%3Aa%2Fb%3Apull"
        );
    }
}
