//! OCI chart pulls against a real distribution registry (Debian's `docker-registry`, started here on 127.0.0.1:
//! anonymous, htpasswd basic auth, and token auth with a bearer-token server of this test), plus a fake registry
//! for what a real one never serves (a layer that does not match its digest).
//!
//! The registry binary is installed by `.ci/run`; without it these tests say so loudly and pass.

// Test helpers: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use seedlet_chartrender::oci::{
    Credentials, HELM_CHART_LAYER, HELM_CONFIG, OciError, OciPuller, PullOptions, Reference,
};
use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer};
use sha2::Digest as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

fn registry_binary() -> Option<PathBuf> {
    ["/usr/bin/docker-registry", "/usr/local/bin/docker-registry"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

macro_rules! require_registry {
    () => {
        match registry_binary() {
            Some(binary) => binary,
            None => {
                eprintln!(
                    "\n!!!!!!!! SKIPPED: docker-registry is not installed (apt-get install docker-registry; .ci/run does it) !!!!!!!!\n"
                );
                return;
            }
        }
    };
}

/// A plain HTTP client for the test's own requests (reqwest is built without a default crypto provider).
fn http() -> reqwest::Client {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .unwrap()
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A registry process, killed on drop.
struct Registry {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Registry {
    /// Starts the registry with `auth` (a YAML `auth:` section, or "") and waits until it answers.
    ///
    /// The free port is picked before the registry binds it, so a registry of a concurrent test
    /// may take it first and answer in its place: ours then exits, and it is started again on
    /// another port.
    async fn start(binary: &Path, auth: impl Fn(&Path) -> String) -> Registry {
        for _ in 0..5 {
            let mut registry = Self::start_once(binary, &auth).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            if matches!(registry.child.try_wait(), Ok(None)) {
                return registry;
            }
        }
        panic!("registry kept losing its port to another process");
    }

    async fn start_once(binary: &Path, auth: &impl Fn(&Path) -> String) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let auth = auth(dir.path());
        let config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  maintenance:\n    uploadpurging:\n      enabled: false\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: seedlet-test\n{auth}",
            dir.path().join("data").display()
        );
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).unwrap();
        let child = Command::new(binary)
            .arg("serve")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let registry = Registry {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        let client = http();
        loop {
            let answer = client
                .get(format!("http://127.0.0.1:{port}/v2/"))
                .send()
                .await;
            if answer.is_ok() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "registry on port {port} did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        registry
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// A packaged chart (`<name>/Chart.yaml`, …) as `helm package` writes it.
fn package(name: &str, version: &str) -> Vec<u8> {
    let mut archive = tar::Builder::new(Vec::new());
    let files = [
        (
            "Chart.yaml",
            format!("apiVersion: v2\nname: {name}\nversion: {version}\n"),
        ),
        ("values.yaml", "replicas: 2\nimage: registry.example.com/demo:1.0\n".to_string()),
        (
            "templates/deployment.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  namespace: {{ .Release.Namespace }}\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n      - name: demo\n        image: {{ .Values.image | quote }}\n".to_string(),
        ),
    ];
    for (path, text) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        archive
            .append_data(&mut header, format!("{name}/{path}"), text.as_bytes())
            .unwrap();
    }
    let tar = archive.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

fn digest(data: &[u8]) -> String {
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(data)))
}

/// Pushes blobs and a manifest through the distribution API; returns the manifest digest.
async fn push(
    host: &str,
    repository: &str,
    tag: &str,
    layers: &[(&str, &[u8])],
    authorization: Option<&str>,
) -> String {
    let client = http();
    let with_auth = |request: reqwest::RequestBuilder| match authorization {
        Some(value) => request.header("Authorization", value),
        None => request,
    };
    let config = br#"{"name":"demo","version":"1.0.0","apiVersion":"v2"}"#.to_vec();
    let mut descriptors = Vec::new();
    for (media_type, data) in
        std::iter::once((HELM_CONFIG, config.as_slice())).chain(layers.iter().copied())
    {
        let start = with_auth(client.post(format!("http://{host}/v2/{repository}/blobs/uploads/")))
            .send()
            .await
            .unwrap();
        assert_eq!(start.status().as_u16(), 202, "starting an upload");
        let location = start.headers()["location"].to_str().unwrap().to_string();
        let location = if location.starts_with("http") {
            location
        } else {
            format!("http://{host}{location}")
        };
        let separator = if location.contains('?') { '&' } else { '?' };
        let put = with_auth(client.put(format!("{location}{separator}digest={}", digest(data))))
            .header("Content-Type", "application/octet-stream")
            .body(data.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(put.status().as_u16(), 201, "finishing an upload");
        descriptors.push(serde_json::json!({"mediaType": media_type, "digest": digest(data), "size": data.len()}));
    }
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": descriptors[0],
        "layers": descriptors[1..],
    });
    let body = serde_json::to_vec(&manifest).unwrap();
    let put = with_auth(client.put(format!("http://{host}/v2/{repository}/manifests/{tag}")))
        .header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(
        put.status().as_u16(),
        201,
        "pushing the manifest: {:?}",
        put.text().await
    );
    digest(&body)
}

fn render(archive: &[u8]) -> String {
    let chart = Chart::from_archive(archive, &Limits::default()).unwrap();
    let options = RenderOptions {
        release_name: "demo".into(),
        namespace: "extension-demo".into(),
        ..RenderOptions::default()
    };
    let rendered = Renderer::new().render(&chart, &options).unwrap();
    rendered.templates.values().cloned().collect()
}

#[tokio::test]
async fn anonymous_registry_serves_charts_by_tag_and_digest_and_refuses_bad_references() {
    let binary = require_registry!();
    let registry = Registry::start(&binary, |_| String::new()).await;
    let host = registry.host();
    let archive = package("demo", "1.0.0");
    let manifest_digest = push(
        &host,
        "charts/demo",
        "1.0.0",
        &[(HELM_CHART_LAYER, &archive)],
        None,
    )
    .await;
    let puller = OciPuller::new(PullOptions::default()).unwrap();

    let by_tag = Reference::parse(&format!("oci://{host}/charts/demo:1.0.0")).unwrap();
    let pulled = puller.pull(&by_tag, None).await.unwrap();
    assert_eq!(&*pulled.archive, archive.as_slice());
    assert_eq!(pulled.manifest_digest, manifest_digest);
    assert_eq!(pulled.chart_digest, digest(&archive));
    assert!(!pulled.from_cache);
    let text = render(&pulled.archive);
    assert!(
        text.contains("replicas: 2") && text.contains("namespace: extension-demo"),
        "{text}"
    );
    assert!(
        puller.pull(&by_tag, None).await.unwrap().from_cache,
        "second pull uses the cache"
    );

    let by_digest = Reference::parse(&format!("{host}/charts/demo@{manifest_digest}")).unwrap();
    assert_eq!(
        &*puller.pull(&by_digest, None).await.unwrap().archive,
        archive.as_slice()
    );

    // A tag that was never pushed.
    let missing = Reference::parse(&format!("{host}/charts/demo:9.9.9")).unwrap();
    let err = puller.pull(&missing, None).await.unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, OciError::Status { status: 404, .. }),
        "{message}"
    );
    assert!(
        message.contains(&host) && message.contains("charts/demo:9.9.9") && message.contains("404"),
        "{message}"
    );

    // A digest no manifest has.
    let unknown = format!("sha256:{}", "0".repeat(64));
    let err = puller
        .pull(
            &Reference::parse(&format!("{host}/charts/demo@{unknown}")).unwrap(),
            None,
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("HTTP 404"), "{err}");

    // An image that is not a Helm chart.
    push(
        &host,
        "images/app",
        "1",
        &[("application/vnd.oci.image.layer.v1.tar", b"not a chart")],
        None,
    )
    .await;
    let err = puller
        .pull(
            &Reference::parse(&format!("{host}/images/app:1")).unwrap(),
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, OciError::Manifest { .. }), "{err}");
    assert!(
        err.to_string().contains("no helm layer found in artifact"),
        "{err}"
    );

    // A chart layer over the limit is refused before it is downloaded.
    let small = OciPuller::new(PullOptions {
        max_chart_bytes: 64,
        ..PullOptions::default()
    })
    .unwrap();
    let err = small.pull(&by_tag, None).await.unwrap_err();
    assert!(matches!(err, OciError::TooLarge { limit: 64, .. }), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("{host}: {host}/charts/demo:1.0.0")),
        "{err}"
    );

    for bad in [
        "charts/demo",
        "oci://host/Demo:1",
        "host/demo",
        "host/demo@sha256:12",
    ] {
        let err = Reference::parse(bad).unwrap_err();
        assert!(
            matches!(err, OciError::Reference { .. }) && err.to_string().contains(bad),
            "{err}"
        );
    }

    // `seedlet render --oci` renders the same chart (the CLI runs its own runtime, so off this one).
    let args = seedlet_chartrender::cli::RenderArgs {
        name_and_chart: Vec::new(),
        chart: None,
        deployment: None,
        oci: Some(format!("oci://{host}/charts/demo:1.0.0")),
        oci_username: None,
        oci_password: None,
        ca_bundle: None,
        values: Vec::new(),
        set: Vec::new(),
        set_string: Vec::new(),
        set_json: Vec::new(),
        seed: None,
        release: "demo".into(),
        namespace: "garden".into(),
        kube_version: "v1.20.0".into(),
        api_versions: Vec::new(),
        output: seedlet_chartrender::cli::OutputFormat::Yaml,
        max_value_bytes: None,
        max_value_items: None,
        max_output_bytes: None,
        max_render_time: None,
    };
    let out = tokio::task::spawn_blocking(move || seedlet_chartrender::cli::run(&args))
        .await
        .unwrap()
        .unwrap();
    assert!(
        out.contains("# Source: demo/templates/deployment.yaml")
            && out.contains("namespace: garden"),
        "{out}"
    );
}

#[tokio::test]
async fn basic_auth_registry_needs_the_right_credentials() {
    let binary = require_registry!();
    let registry = Registry::start(&binary, |dir| {
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        let path = dir.join("htpasswd");
        std::fs::write(&path, format!("puller:{hash}\n")).unwrap();
        format!(
            "auth:\n  htpasswd:\n    realm: seedlet-test\n    path: {}\n",
            path.display()
        )
    })
    .await;
    let host = registry.host();
    let archive = package("demo", "2.0.0");
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("puller:s3cret")
    );
    push(
        &host,
        "charts/demo",
        "2.0.0",
        &[(HELM_CHART_LAYER, &archive)],
        Some(&basic),
    )
    .await;
    let puller = OciPuller::new(PullOptions::default()).unwrap();
    let reference = Reference::parse(&format!("{host}/charts/demo:2.0.0")).unwrap();
    let good = Credentials {
        username: "puller".into(),
        password: "s3cret".into(),
    };
    assert_eq!(
        &*puller.pull(&reference, Some(&good)).await.unwrap().archive,
        archive.as_slice()
    );

    let wrong = Credentials {
        username: "puller".into(),
        password: "wrong".into(),
    };
    let err = puller.pull(&reference, Some(&wrong)).await.unwrap_err();
    assert!(matches!(err, OciError::Auth { status: 401, .. }), "{err}");
    assert!(
        !err.to_string().contains("wrong"),
        "the password is never printed: {err}"
    );
    let err = puller.pull(&reference, None).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("asks for credentials and none were given"),
        "{err}"
    );
    assert!(format!("{good:?}").contains("<redacted>"));
}

/// A bearer-token server for the registry's token auth: signs ES256 JWTs with a key whose self-signed
/// certificate is the registry's `rootcertbundle`, for the one user it knows.
struct TokenServer {
    port: u16,
    certificate_pem: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TokenServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

const SERVICE: &str = "seedlet-registry";
const ISSUER: &str = "seedlet-token-issuer";

async fn token_server() -> TokenServer {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let params = rcgen::CertificateParams::new(vec!["token-issuer".to_string()]).unwrap();
    let certificate = params.self_signed(&key).unwrap();
    let certificate_der = certificate.der().to_vec();
    let signer = Arc::new(
        ring::signature::EcdsaKeyPair::from_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &key.serialize_der(),
            &ring::rand::SystemRandom::new(),
        )
        .unwrap(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let signer = Arc::clone(&signer);
            let certificate_der = certificate_der.clone();
            tokio::spawn(async move {
                let request = read_request(&mut stream).await;
                let expected = format!(
                    "authorization: basic {}",
                    base64::engine::general_purpose::STANDARD.encode("puller:t0ken")
                );
                if !request
                    .to_ascii_lowercase()
                    .contains(&expected.to_ascii_lowercase())
                {
                    respond(&mut stream, 401, "{\"details\":\"bad credentials\"}").await;
                    return;
                }
                let scope = request
                    .split_whitespace()
                    .nth(1)
                    .and_then(|target| target.split('?').nth(1))
                    .and_then(|query| query.split('&').find_map(|p| p.strip_prefix("scope=")))
                    .map(|s| {
                        s.replace("%3A", ":")
                            .replace("%2F", "/")
                            .replace("%2C", ",")
                    })
                    .unwrap_or_default();
                let token = jwt(&signer, &certificate_der, &scope);
                respond(&mut stream, 200, &format!("{{\"token\":\"{token}\"}}")).await;
            });
        }
    });
    TokenServer {
        port,
        certificate_pem: certificate.pem(),
        task,
    }
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let Ok(n) = stream.read(&mut chunk).await else {
            break;
        };
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

async fn respond(stream: &mut tokio::net::TcpStream, status: u16, body: &str) {
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
}

fn jwt(signer: &ring::signature::EcdsaKeyPair, certificate_der: &[u8], scope: &str) -> String {
    let b64 = |data: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(data);
    let header = serde_json::json!({
        "typ": "JWT",
        "alg": "ES256",
        "x5c": [base64::engine::general_purpose::STANDARD.encode(certificate_der)],
    });
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // scope: repository:<name>:<actions>
    let mut parts = scope.splitn(3, ':');
    let (kind, name, actions) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    let claims = serde_json::json!({
        "iss": ISSUER,
        "sub": "puller",
        "aud": SERVICE,
        "exp": now + 300,
        "nbf": now - 10,
        "iat": now,
        "jti": format!("{now}-{name}"),
        "access": [{"type": kind, "name": name, "actions": actions.split(',').collect::<Vec<_>>()}],
    });
    let signing_input = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let signature = signer
        .sign(&ring::rand::SystemRandom::new(), signing_input.as_bytes())
        .unwrap();
    format!("{signing_input}.{}", b64(signature.as_ref()))
}

#[tokio::test]
async fn token_auth_registry_is_pulled_with_a_bearer_token() {
    let binary = require_registry!();
    let tokens = token_server().await;
    let token_port = tokens.port;
    let certificate_pem = tokens.certificate_pem.clone();
    let registry = Registry::start(&binary, |dir| {
        let bundle = dir.join("token.crt");
        std::fs::write(&bundle, &certificate_pem).unwrap();
        format!(
            "auth:\n  token:\n    realm: http://127.0.0.1:{token_port}/token\n    service: {SERVICE}\n    issuer: {ISSUER}\n    rootcertbundle: {}\n",
            bundle.display()
        )
    })
    .await;
    let host = registry.host();
    let archive = package("demo", "3.0.0");
    let push_token = http()
        .get(format!(
            "http://127.0.0.1:{token_port}/token?service={SERVICE}&scope=repository:charts/demo:pull,push"
        ))
        .basic_auth("puller", Some("t0ken"))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    push(
        &host,
        "charts/demo",
        "3.0.0",
        &[(HELM_CHART_LAYER, &archive)],
        Some(&format!("Bearer {push_token}")),
    )
    .await;

    let puller = OciPuller::new(PullOptions::default()).unwrap();
    let reference = Reference::parse(&format!("{host}/charts/demo:3.0.0")).unwrap();
    let good = Credentials {
        username: "puller".into(),
        password: "t0ken".into(),
    };
    assert_eq!(
        &*puller.pull(&reference, Some(&good)).await.unwrap().archive,
        archive.as_slice()
    );
    let bad = Credentials {
        username: "puller".into(),
        password: "nope".into(),
    };
    let err = puller.pull(&reference, Some(&bad)).await.unwrap_err();
    assert!(
        matches!(
            err,
            OciError::Auth {
                status: 401,
                what: "token",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains(&host), "{err}");
}

#[tokio::test]
async fn a_layer_that_does_not_match_its_digest_is_refused() {
    // A real registry verifies digests on upload, so a lying one is faked: its manifest names the digest of one
    // archive and its blob endpoint serves another.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let announced = package("demo", "1.0.0");
    let served = package("evil", "1.0.0");
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": HELM_CONFIG, "digest": digest(b"{}"), "size": 2},
        "layers": [{"mediaType": HELM_CHART_LAYER, "digest": digest(&announced), "size": served.len()}],
    })
    .to_string();
    let served_digest = digest(&served);
    let server = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let request = read_request(&mut stream).await;
            if request.contains("/manifests/") {
                respond(&mut stream, 200, &manifest).await;
            } else {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    served.len()
                );
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(&served).await;
            }
        }
    });
    let puller = OciPuller::new(PullOptions::default()).unwrap();
    let reference = Reference::parse(&format!("127.0.0.1:{port}/charts/demo:1.0.0")).unwrap();
    let err = puller.pull(&reference, None).await.unwrap_err();
    server.abort();
    assert!(
        matches!(
            err,
            OciError::Digest {
                what: "chart layer",
                ..
            }
        ),
        "{err}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&digest(&announced)) && message.contains(&served_digest),
        "{message}"
    );
}

#[tokio::test]
async fn https_registry_is_trusted_through_the_ca_bundle() {
    let binary = require_registry!();
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "seedlet test registry CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::from_params(&ca_params, &ca_key);
    let server_key = rcgen::KeyPair::generate().unwrap();
    let mut server_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    server_params.subject_alt_names = vec![rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap())];
    let server = server_params.signed_by(&server_key, &issuer).unwrap();
    let (server_pem, server_key_pem) = (server.pem(), server_key.serialize_pem());
    let registry = Registry::start(&binary, |dir| {
        let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
        std::fs::write(&cert, &server_pem).unwrap();
        std::fs::write(&key, &server_key_pem).unwrap();
        format!(
            "  tls:\n    certificate: {}\n    key: {}\n",
            cert.display(),
            key.display()
        )
    })
    .await;
    let host = registry.host();
    let reference = Reference::parse(&format!("{host}/charts/demo:4.0.0")).unwrap();

    let trusted = OciPuller::new(PullOptions {
        ca_bundle: Some(ca.pem().into_bytes()),
        plain_http_on_loopback: false,
        ..PullOptions::default()
    })
    .unwrap();
    // Nothing pushed yet: the TLS handshake succeeds and the registry answers 404.
    let err = trusted.pull(&reference, None).await.unwrap_err();
    assert!(matches!(err, OciError::Status { status: 404, .. }), "{err}");

    let untrusted = OciPuller::new(PullOptions {
        plain_http_on_loopback: false,
        ..PullOptions::default()
    })
    .unwrap();
    let err = untrusted.pull(&reference, None).await.unwrap_err();
    assert!(matches!(err, OciError::Transport { .. }), "{err}");
    assert!(err.to_string().contains(&host), "{err}");

    let err = OciPuller::new(PullOptions {
        ca_bundle: Some(b"not a certificate".to_vec()),
        ..PullOptions::default()
    })
    .unwrap_err();
    assert!(matches!(err, OciError::Setup(_)), "{err}");
}
