//! A real OCI distribution registry for tests: Debian's `docker-registry` on 127.0.0.1 (a free port), with
//! optional htpasswd basic auth, and a push of a packaged chart through the distribution API.
//!
//! `.ci/run` installs the binary; [`binary`] is `None` without it, and callers then skip loudly.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::Digest as _;

/// Media type of a Helm chart layer.
pub const HELM_CHART_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
const HELM_CONFIG: &str = "application/vnd.cncf.helm.config.v1+json";

/// The registry binary, if installed.
pub fn binary() -> Option<PathBuf> {
    ["/usr/bin/docker-registry", "/usr/local/bin/docker-registry"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Prints the loud skip notice.
pub fn skip_notice() {
    eprintln!(
        "\n!!!!!!!! SKIPPED: docker-registry is not installed (apt-get install docker-registry; .ci/run does it) !!!!!!!!\n"
    );
}

/// A running registry, killed on drop.
pub struct Registry {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub host: String,
    _dir: tempfile::TempDir,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client for the test's own requests.
pub fn http() -> reqwest::Client {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .expect("client")
}

impl Registry {
    /// Starts the registry; `htpasswd` (a `user:bcrypt` line) turns on basic auth.
    ///
    /// The free port is picked before the registry binds it, so a registry of a concurrent test
    /// may take it first and answer in its place: ours then exits, and it is started again on
    /// another port.
    pub async fn start(binary: &std::path::Path, htpasswd: Option<&str>) -> Registry {
        for _ in 0..5 {
            let mut registry = Self::start_once(binary, htpasswd).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            if matches!(registry.child.try_wait(), Ok(None)) {
                return registry;
            }
        }
        panic!("registry kept losing its port to another process");
    }

    async fn start_once(binary: &std::path::Path, htpasswd: Option<&str>) -> Registry {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let auth = match htpasswd {
            Some(line) => {
                let path = dir.path().join("htpasswd");
                std::fs::write(&path, format!("{line}\n")).expect("htpasswd");
                format!(
                    "auth:\n  htpasswd:\n    realm: seedlet-test\n    path: {}\n",
                    path.display()
                )
            }
            None => String::new(),
        };
        let config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  maintenance:\n    uploadpurging:\n      enabled: false\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: seedlet-test\n{auth}",
            dir.path().join("data").display()
        );
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).expect("config");
        let child = Command::new(binary)
            .arg("serve")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("registry starts");
        let registry = Registry {
            child,
            host: format!("127.0.0.1:{port}"),
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        let client = http();
        while client
            .get(format!("http://{}/v2/", registry.host))
            .send()
            .await
            .is_err()
        {
            assert!(Instant::now() < deadline, "registry did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        registry
    }

    /// Pushes `chart` (a `.tgz`) as `repository:tag` with an optional `Authorization` header.
    pub async fn push_chart(
        &self,
        repository: &str,
        tag: &str,
        chart: &[u8],
        authorization: Option<&str>,
    ) {
        let client = http();
        let digest = |data: &[u8]| format!("sha256:{}", hex::encode(sha2::Sha256::digest(data)));
        let with_auth = |request: reqwest::RequestBuilder| match authorization {
            Some(value) => request.header("Authorization", value),
            None => request,
        };
        let config = br#"{"name":"chart","version":"1.0.0","apiVersion":"v2"}"#.to_vec();
        let mut descriptors = Vec::new();
        for (media_type, data) in [(HELM_CONFIG, config.as_slice()), (HELM_CHART_LAYER, chart)] {
            let start = with_auth(client.post(format!(
                "http://{}/v2/{repository}/blobs/uploads/",
                self.host
            )))
            .send()
            .await
            .expect("upload starts");
            assert_eq!(start.status().as_u16(), 202, "starting an upload");
            let location = start.headers()["location"]
                .to_str()
                .expect("location")
                .to_string();
            let location = if location.starts_with("http") {
                location
            } else {
                format!("http://{}{location}", self.host)
            };
            let separator = if location.contains('?') { '&' } else { '?' };
            let put =
                with_auth(client.put(format!("{location}{separator}digest={}", digest(data))))
                    .body(data.to_vec())
                    .send()
                    .await
                    .expect("upload");
            assert_eq!(put.status().as_u16(), 201, "finishing an upload");
            descriptors.push(serde_json::json!({"mediaType": media_type, "digest": digest(data), "size": data.len()}));
        }
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": descriptors[0],
            "layers": [descriptors[1]],
        });
        let put = with_auth(client.put(format!(
            "http://{}/v2/{repository}/manifests/{tag}",
            self.host
        )))
        .header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
        .body(serde_json::to_vec(&manifest).expect("manifest"))
        .send()
        .await
        .expect("manifest push");
        assert_eq!(put.status().as_u16(), 201, "pushing the manifest");
    }
}

/// The `htpasswd` line for `user:password` (the registry's basic auth), made by the renderer's
/// own Sprig `htpasswd`.
pub fn htpasswd_line(user: &str, password: &str) -> String {
    let chart = seedlet_chartrender::Chart::from_archive(
        &chart_archive(&[(
            "templates/h.yaml",
            &format!("{{{{ htpasswd {user:?} {password:?} }}}}"),
        )]),
        &seedlet_chartrender::Limits::default(),
    )
    .expect("chart");
    let rendered = seedlet_chartrender::Renderer::new()
        .render(&chart, &seedlet_chartrender::RenderOptions::default())
        .expect("renders");
    rendered.templates["h/templates/h.yaml"].clone()
}

/// A `.tgz` chart named `h` with the given files besides its Chart.yaml.
fn chart_archive(files: &[(&str, &str)]) -> Vec<u8> {
    let mut archive = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let chart_yaml = "apiVersion: v2\nname: h\nversion: 1.0.0\n";
    for (path, text) in std::iter::once(("Chart.yaml", chart_yaml)).chain(files.iter().copied()) {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        archive
            .append_data(&mut header, format!("h/{path}"), text.as_bytes())
            .expect("entry");
    }
    archive
        .into_inner()
        .and_then(|gz| gz.finish())
        .expect("archive")
}
