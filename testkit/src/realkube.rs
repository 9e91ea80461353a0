//! Real Kubernetes control planes for the real-cluster suite, the envtest way: etcd (Debian's
//! `etcd-server`, from `PATH` or `$ETCD`), `kube-apiserver` and `kube-controller-manager` from the
//! directory named by [`ASSETS_ENV`], each on loopback with its own CA (also the CSR signing CA),
//! bootstrap-token authentication, the real CSR signer and the namespace, garbage-collector and
//! service-account controllers. Everything lives in a temporary directory and every process is
//! killed when the [`ControlPlane`] is dropped.
//!
//! kube-apiserver, etcd and kube-controller-manager cannot be told to bind port 0 and report the
//! port they got, so a port is picked by binding `127.0.0.1:0` and releasing it; a start that loses
//! that race ("address already in use") is retried with other ports, as envtest does.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use base64::Engine as _;
use kube::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};
use seedlet_sandbox::pki::CertificateAuthority;
use serde_json::json;
use tokio::process::{Child, Command};

/// The environment variable naming the directory with `kube-apiserver` and
/// `kube-controller-manager` (`.ci/run` sets it to what `../shared/kube/assets v1.32` prints).
pub const ASSETS_ENV: &str = "SEEDLET_KUBE_ASSETS";

/// Controllers kube-controller-manager runs: what a garden or seed needs of it here (the
/// deployment and replicaset controllers give extension charts' Deployments their status; with
/// no nodes, only zero replicas become available).
pub const CONTROLLERS: &str = "csrsigning,csrcleaner,tokencleaner,bootstrapsigner,namespace,\
garbagecollector,serviceaccount-token,serviceaccount,root-ca-cert-publisher,clusterrole-aggregation,\
deployment,replicaset";

/// The service network; its first address is the `kubernetes` Service.
const SERVICE_CIDR: &str = "10.0.0.0/24";
/// A documentation address (TEST-NET-1): it only lands in the `default/kubernetes` Endpoints.
const ADVERTISE_ADDRESS: &str = "192.0.2.1";
/// How long a component may take to come up.
const START_TIMEOUT: Duration = Duration::from_secs(90);
/// How often a start is retried after losing a port race.
const PORT_ATTEMPTS: usize = 4;

/// Where the binaries are.
#[derive(Debug, Clone)]
pub struct KubeAssets {
    /// Directory with `kube-apiserver` and `kube-controller-manager`.
    pub dir: PathBuf,
    /// The etcd binary.
    pub etcd: PathBuf,
}

impl KubeAssets {
    /// The assets named by [`ASSETS_ENV`]; `None` when it is unset (the suite is then skipped).
    ///
    /// # Panics
    /// When the variable is set but a binary is missing: a misconfigured CI must fail, not skip.
    pub fn from_env() -> Option<KubeAssets> {
        let dir = PathBuf::from(std::env::var_os(ASSETS_ENV)?);
        for binary in ["kube-apiserver", "kube-controller-manager"] {
            assert!(
                dir.join(binary).is_file(),
                "{ASSETS_ENV}={} has no {binary}",
                dir.display()
            );
        }
        let etcd = std::env::var_os("ETCD")
            .map(PathBuf::from)
            .or_else(|| find_on_path("etcd"))
            .unwrap_or_else(|| {
                panic!("etcd not found on PATH (Debian: apt-get install etcd-server) nor in $ETCD")
            });
        Some(KubeAssets { dir, etcd })
    }

    /// [`from_env`](Self::from_env), printing why the calling test is skipped when unset.
    pub fn or_skip(test: &str) -> Option<KubeAssets> {
        let assets = Self::from_env();
        if assets.is_none() {
            println!(
                "{test}: skipped: {ASSETS_ENV} is not set (a directory with kube-apiserver and \
                 kube-controller-manager v1.32; .ci/run sets it from ../shared/kube/assets)"
            );
        }
        assets
    }
}

fn find_on_path(binary: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join(binary))
        .find(|path| path.is_file())
}

/// How kube-apiserver authorizes.
#[derive(Debug, Clone)]
pub enum Authorization {
    /// `--authorization-mode=RBAC`.
    Rbac,
    /// The legacy flags: `--authorization-mode=RBAC,Webhook` with this webhook kubeconfig file,
    /// `v1` reviews and both cache TTLs 0.
    LegacyWebhook(PathBuf),
    /// `--authorization-config` with this `AuthorizationConfiguration` file.
    Structured(PathBuf),
}

/// What to start.
#[derive(Debug, Clone)]
pub struct ControlPlaneOptions {
    /// A DNS label: the cluster name, the CA's common name, log file prefixes.
    pub name: String,
    /// `--enable-bootstrap-token-auth`.
    pub bootstrap_tokens: bool,
    /// How requests are authorized.
    pub authorization: Authorization,
    /// Directory of the cluster CA (`ca.crt`, `ca.key`; generated there when absent), for callers
    /// that must name the CA in files before the control plane starts; default: its own directory.
    pub ca_dir: Option<PathBuf>,
}

impl ControlPlaneOptions {
    /// An RBAC-only control plane with bootstrap tokens enabled.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            bootstrap_tokens: true,
            authorization: Authorization::Rbac,
            ca_dir: None,
        }
    }
}

/// A running etcd + kube-apiserver + kube-controller-manager.
pub struct ControlPlane {
    options: ControlPlaneOptions,
    assets: KubeAssets,
    dir: tempfile::TempDir,
    ca: CertificateAuthority,
    apiserver_port: u16,
    etcd_port: u16,
    /// Held so that etcd lives (and is killed) with the control plane.
    _etcd: Child,
    apiserver: Child,
    /// `None` only while [`ControlPlane::start`] waits for the API server.
    controller_manager: Option<Child>,
    /// How long `/readyz` took to answer ok after kube-apiserver started, on the first start.
    pub apiserver_ready_after: Duration,
}

impl std::fmt::Debug for ControlPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlPlane")
            .field("name", &self.options.name)
            .field("endpoint", &self.endpoint())
            .finish_non_exhaustive()
    }
}

impl ControlPlane {
    /// Starts the three processes and returns once `/readyz` answers ok and kube-controller-manager
    /// has created the `default` ServiceAccount (its controllers run).
    ///
    /// # Panics
    /// When a component does not come up; the message carries the end of its log.
    pub async fn start(assets: &KubeAssets, options: ControlPlaneOptions) -> ControlPlane {
        let dir = tempfile::Builder::new()
            .prefix(&format!("seedlet-real-{}-", options.name))
            .tempdir()
            .expect("control plane directory");
        std::fs::create_dir_all(dir.path().join("logs")).expect("logs directory");
        let ca_dir = options
            .ca_dir
            .clone()
            .unwrap_or_else(|| dir.path().to_owned());
        let ca = CertificateAuthority::load_or_generate(&ca_dir).expect("cluster CA");
        write_pki(dir.path(), &ca_dir, &ca);
        let (etcd, etcd_port) = start_with_free_port("etcd", dir.path(), |port| {
            etcd_command(&assets.etcd, dir.path(), &options.name, port)
        })
        .await;
        let started = Instant::now();
        let (apiserver, apiserver_port) =
            start_with_free_port("kube-apiserver", dir.path(), |port| {
                apiserver_command(assets, dir.path(), &options, etcd_port, port)
            })
            .await;
        let mut plane = ControlPlane {
            controller_manager: None,
            options,
            assets: assets.clone(),
            ca,
            apiserver_port,
            etcd_port,
            _etcd: etcd,
            apiserver,
            dir,
            apiserver_ready_after: Duration::ZERO,
        };
        plane.wait_ready().await;
        plane.apiserver_ready_after = started.elapsed();
        plane.controller_manager = Some(plane.start_controller_manager().await);
        plane.wait_controllers().await;
        plane
    }

    /// `https://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("https://127.0.0.1:{}", self.apiserver_port)
    }

    /// The cluster name.
    pub fn name(&self) -> &str {
        &self.options.name
    }

    /// The cluster CA (PEM); it also signs CSRs.
    pub fn ca_pem(&self) -> &str {
        self.ca.ca_pem()
    }

    /// The directory with `pki/` and `logs/`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A serving certificate chain and key for `names`, signed by the cluster CA (for webhook
    /// servers the API server calls with this CA).
    pub fn issue_serving_certificate(&self, common_name: &str, names: &[&str]) -> (String, String) {
        self.ca
            .issue_serving_certificate(common_name, names)
            .expect("serving certificate")
    }

    /// A kubeconfig for a client certificate of `user` in `group` (at most one).
    pub fn certificate_kubeconfig(&self, user: &str, group: Option<&str>) -> Kubeconfig {
        let groups: Vec<String> = group.into_iter().map(str::to_owned).collect();
        let (cert, key) = self
            .ca
            .issue_client_certificate(user, &groups, Duration::from_secs(24 * 3600))
            .expect("client certificate");
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        self.kubeconfig(
            user,
            json!({"client-certificate-data": b64(&cert), "client-key-data": b64(&key)}),
        )
    }

    /// A kubeconfig for this control plane whose client certificate (CN `user`) a CA the
    /// API server does not trust signed.
    pub fn foreign_certificate_kubeconfig(&self, user: &str) -> Kubeconfig {
        let foreign = CertificateAuthority::generate("foreign-ca").expect("foreign CA");
        let (cert, key) = foreign
            .issue_client_certificate(
                user,
                &["system:masters".to_owned()],
                Duration::from_secs(3600),
            )
            .expect("client certificate");
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        self.kubeconfig(
            user,
            json!({"client-certificate-data": b64(&cert), "client-key-data": b64(&key)}),
        )
    }

    /// A kubeconfig whose user presents `token` (a bootstrap or ServiceAccount token).
    pub fn token_kubeconfig(&self, user: &str, token: &str) -> Kubeconfig {
        self.kubeconfig(user, json!({"token": token}))
    }

    fn kubeconfig(&self, user: &str, credentials: serde_json::Value) -> Kubeconfig {
        let name = &self.options.name;
        let ca = base64::engine::general_purpose::STANDARD.encode(self.ca.ca_pem());
        serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": self.endpoint(), "certificate-authority-data": ca}}],
            "users": [{"name": user, "user": credentials}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": user}}],
            "current-context": name,
        }))
        .expect("a kubeconfig document has the Kubeconfig shape")
    }

    /// The admin (`system:masters`) kubeconfig.
    pub fn admin_kubeconfig(&self) -> Kubeconfig {
        self.certificate_kubeconfig(
            &format!("{}-admin", self.options.name),
            Some("system:masters"),
        )
    }

    /// A client for the admin.
    pub async fn admin_client(&self) -> kube::Client {
        client_from(self.admin_kubeconfig()).await
    }

    /// A token for ServiceAccount `namespace/name` from the TokenRequest API (one hour).
    pub async fn service_account_token(&self, namespace: &str, name: &str) -> String {
        let request = json!({
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        });
        let client = self.admin_client().await;
        let http = http::Request::post(format!(
            "/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"
        ))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&request).expect("json"))
        .expect("request");
        let answer: serde_json::Value = client
            .request(http)
            .await
            .unwrap_or_else(|error| panic!("token for ServiceAccount {namespace}/{name}: {error}"));
        answer["status"]["token"]
            .as_str()
            .expect("TokenRequest answers a token")
            .to_owned()
    }

    /// A kubeconfig for ServiceAccount `namespace/name` (a TokenRequest token).
    pub async fn service_account_kubeconfig(&self, namespace: &str, name: &str) -> Kubeconfig {
        let token = self.service_account_token(namespace, name).await;
        self.token_kubeconfig(&format!("system:serviceaccount:{namespace}:{name}"), &token)
    }

    /// Stops kube-apiserver (SIGKILL), waits `down`, and starts it again on the same port;
    /// returns once `/readyz` answers ok.
    pub async fn restart_apiserver(&mut self, down: Duration) {
        let _ = self.apiserver.kill().await;
        tokio::time::sleep(down).await;
        let log = log_file(self.dir.path(), "kube-apiserver");
        let mut command = apiserver_command(
            &self.assets,
            self.dir.path(),
            &self.options,
            self.etcd_port,
            self.apiserver_port,
        );
        self.apiserver = spawn(&mut command, &log);
        self.wait_ready().await;
    }

    /// The last `lines` lines of a component's log (`etcd`, `kube-apiserver`,
    /// `kube-controller-manager`).
    pub fn log_tail(&self, component: &str, lines: usize) -> String {
        tail(&log_file(self.dir.path(), component), lines)
    }

    async fn wait_ready(&mut self) {
        let client = self.admin_client().await;
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let request = http::Request::get("/readyz")
                .body(Vec::new())
                .expect("request");
            if client
                .request_text(request)
                .await
                .is_ok_and(|text| text.trim() == "ok")
            {
                return;
            }
            if let Ok(Some(status)) = self.apiserver.try_wait() {
                panic!(
                    "kube-apiserver {} exited ({status}):\n{}",
                    self.options.name,
                    self.log_tail("kube-apiserver", 30)
                );
            }
            assert!(
                Instant::now() < deadline,
                "kube-apiserver {} not ready after {START_TIMEOUT:?}:\n{}",
                self.options.name,
                self.log_tail("kube-apiserver", 30)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn start_controller_manager(&self) -> Child {
        let dir = self.dir.path();
        let kubeconfig = dir.join("pki/kube-controller-manager.kubeconfig");
        let document = self.certificate_kubeconfig("system:kube-controller-manager", None);
        std::fs::write(
            &kubeconfig,
            serde_yaml::to_string(&document).expect("kubeconfig yaml"),
        )
        .expect("controller manager kubeconfig");
        let (child, _) = start_with_free_port("kube-controller-manager", dir, |port| {
            let mut command = Command::new(self.assets.dir.join("kube-controller-manager"));
            command
                .arg(format!("--kubeconfig={}", kubeconfig.display()))
                .arg(format!(
                    "--authentication-kubeconfig={}",
                    kubeconfig.display()
                ))
                .arg(format!(
                    "--authorization-kubeconfig={}",
                    kubeconfig.display()
                ))
                .arg("--bind-address=127.0.0.1")
                .arg(format!("--secure-port={port}"))
                .arg("--leader-elect=false")
                .arg(format!("--controllers={CONTROLLERS}"))
                .arg(format!("--cluster-name={}", self.options.name))
                .arg(format!(
                    "--cluster-signing-cert-file={}",
                    dir.join("ca.crt").display()
                ))
                .arg(format!(
                    "--cluster-signing-key-file={}",
                    dir.join("ca.key").display()
                ))
                .arg(format!(
                    "--service-account-private-key-file={}",
                    dir.join("pki/sa.key").display()
                ))
                .arg(format!("--root-ca-file={}", dir.join("ca.crt").display()))
                .arg("--use-service-account-credentials=true")
                .arg("--profiling=false");
            command
        })
        .await;
        child
    }

    /// Waits until kube-controller-manager's serviceaccount controller created `default/default`.
    async fn wait_controllers(&mut self) {
        let client = self.admin_client().await;
        let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> =
            Api::namespaced(client, "default");
        let deadline = Instant::now() + START_TIMEOUT;
        while accounts.get_opt("default").await.ok().flatten().is_none() {
            if let Some(Ok(Some(status))) = self.controller_manager.as_mut().map(Child::try_wait) {
                panic!(
                    "kube-controller-manager {} exited ({status}):\n{}",
                    self.options.name,
                    self.log_tail("kube-controller-manager", 30)
                );
            }
            assert!(
                Instant::now() < deadline,
                "kube-controller-manager {} runs no controllers after {START_TIMEOUT:?}:\n{}",
                self.options.name,
                self.log_tail("kube-controller-manager", 30)
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// A kube client for `kubeconfig`.
pub async fn client_from(kubeconfig: Kubeconfig) -> kube::Client {
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("client configuration");
    kube::Client::try_from(config).expect("client")
}

/// Writes the apiserver's serving certificate and the service-account key pair under `dir/pki`,
/// and links the CA's files into `dir` (the flags name `dir/ca.crt` and `dir/ca.key`).
fn write_pki(dir: &Path, ca_dir: &Path, ca: &CertificateAuthority) {
    let pki = dir.join("pki");
    std::fs::create_dir_all(&pki).expect("pki directory");
    if ca_dir != dir {
        for file in ["ca.crt", "ca.key"] {
            std::os::unix::fs::symlink(ca_dir.join(file), dir.join(file)).expect("CA file linked");
        }
    }
    let (chain, key) = ca
        .issue_serving_certificate(
            "kube-apiserver",
            &[
                "127.0.0.1",
                "localhost",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
                "10.0.0.1",
            ],
        )
        .expect("apiserver serving certificate");
    write_private(&pki.join("apiserver.crt"), &chain);
    write_private(&pki.join("apiserver.key"), &key);
    // ECDSA P-256 service-account signing key (ES256); the public half as a PUBLIC KEY block,
    // which is what --service-account-key-file parses for EC keys.
    let signing = rcgen::KeyPair::generate().expect("service-account key");
    write_private(&pki.join("sa.key"), &signing.serialize_pem());
    write_private(&pki.join("sa.pub"), &signing.public_key_pem());
}

/// Writes `text` to `path` readable by its owner only (0600): keys, kubeconfigs, tokens.
pub fn write_private(path: &Path, text: &str) {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .unwrap_or_else(|error| panic!("write {}: {error}", path.display()));
}

fn etcd_command(etcd: &Path, dir: &Path, name: &str, port: u16) -> Command {
    // The peer port is picked here too; a collision on it fails the start like one on `port`.
    let peer = free_port();
    let mut command = Command::new(etcd);
    command
        .arg(format!("--name={name}"))
        .arg(format!("--data-dir={}", dir.join("etcd").display()))
        .arg(format!("--listen-client-urls=http://127.0.0.1:{port}"))
        .arg(format!("--advertise-client-urls=http://127.0.0.1:{port}"))
        .arg(format!("--listen-peer-urls=http://127.0.0.1:{peer}"))
        .arg(format!(
            "--initial-advertise-peer-urls=http://127.0.0.1:{peer}"
        ))
        .arg(format!("--initial-cluster={name}=http://127.0.0.1:{peer}"))
        .arg("--initial-cluster-state=new")
        .arg("--quota-backend-bytes=2147483648");
    command
}

fn apiserver_command(
    assets: &KubeAssets,
    dir: &Path,
    options: &ControlPlaneOptions,
    etcd_port: u16,
    port: u16,
) -> Command {
    let path = |relative: &str| dir.join(relative).display().to_string();
    let mut command = Command::new(assets.dir.join("kube-apiserver"));
    command
        .arg(format!("--etcd-servers=http://127.0.0.1:{etcd_port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--secure-port={port}"))
        .arg(format!("--advertise-address={ADVERTISE_ADDRESS}"))
        .arg(format!("--tls-cert-file={}", path("pki/apiserver.crt")))
        .arg(format!(
            "--tls-private-key-file={}",
            path("pki/apiserver.key")
        ))
        .arg(format!("--client-ca-file={}", path("ca.crt")))
        .arg(format!("--service-account-key-file={}", path("pki/sa.pub")))
        .arg(format!(
            "--service-account-signing-key-file={}",
            path("pki/sa.key")
        ))
        .arg("--service-account-issuer=https://kubernetes.default.svc")
        .arg("--api-audiences=https://kubernetes.default.svc")
        .arg(format!("--service-cluster-ip-range={SERVICE_CIDR}"))
        .arg("--allow-privileged=true")
        .arg("--profiling=false")
        .arg(format!("--cert-dir={}", path("pki/generated")));
    match &options.authorization {
        Authorization::Rbac => {
            command.arg("--authorization-mode=RBAC");
        }
        Authorization::LegacyWebhook(kubeconfig) => {
            command
                .arg("--authorization-mode=RBAC,Webhook")
                .arg(format!(
                    "--authorization-webhook-config-file={}",
                    kubeconfig.display()
                ))
                .arg("--authorization-webhook-version=v1")
                .arg("--authorization-webhook-cache-authorized-ttl=0")
                .arg("--authorization-webhook-cache-unauthorized-ttl=0");
        }
        Authorization::Structured(config) => {
            command.arg(format!("--authorization-config={}", config.display()));
        }
    }
    if options.bootstrap_tokens {
        command.arg("--enable-bootstrap-token-auth=true");
    }
    command
}

/// A port nothing listens on now (bound on `127.0.0.1:0` and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free loopback port")
}

/// Starts `command(port)` on a free port until the process listens there; retries with another
/// port when it lost the race for one.
async fn start_with_free_port(
    component: &str,
    dir: &Path,
    mut command: impl FnMut(u16) -> Command,
) -> (Child, u16) {
    let log = log_file(dir, component);
    for attempt in 1..=PORT_ATTEMPTS {
        let port = free_port();
        let mut child = spawn(&mut command(port), &log);
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return (child, port);
            }
            if let Ok(Some(status)) = child.try_wait() {
                let text = tail(&log, 30);
                if attempt < PORT_ATTEMPTS && text.contains("address already in use") {
                    break;
                }
                panic!("{component} exited ({status}):\n{text}");
            }
            assert!(
                Instant::now() < deadline,
                "{component} does not listen on {port} after {START_TIMEOUT:?}:\n{}",
                tail(&log, 30)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    unreachable!("the last attempt panics instead of retrying")
}

fn log_file(dir: &Path, component: &str) -> PathBuf {
    dir.join("logs").join(format!("{component}.log"))
}

fn spawn(command: &mut Command, log: &Path) -> Child {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file");
    command
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("log handle"))
        .stderr(file)
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("start {:?}: {error}", command.as_std().get_program()))
}

/// The last `lines` lines of a text file ("" when unreadable).
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

impl Drop for ControlPlane {
    /// A failing test gets the end of the API server's log, and all logs are copied to
    /// `$TMPDIR/seedlet-real-logs/<name>-<pid>/` (the plane's directory goes with it).
    fn drop(&mut self) {
        if std::thread::panicking() {
            let keep = std::env::temp_dir().join("seedlet-real-logs").join(format!(
                "{}-{}",
                self.options.name,
                std::process::id()
            ));
            let copied = std::fs::create_dir_all(&keep).is_ok()
                && ["etcd", "kube-apiserver", "kube-controller-manager"]
                    .iter()
                    .all(|component| {
                        std::fs::copy(
                            log_file(self.dir.path(), component),
                            keep.join(format!("{component}.log")),
                        )
                        .is_ok()
                    });
            eprintln!(
                "--- {} kube-apiserver log (all logs {}) ---\n{}",
                self.options.name,
                if copied {
                    keep.display().to_string()
                } else {
                    "not kept".to_owned()
                },
                self.log_tail("kube-apiserver", 40)
            );
        }
    }
}

/// Waits with `kubectl wait --for=condition=Established` (at most 60 s) until the CRDs `targets`
/// (e.g. `["crd", "--all"]` or `["crd/shoots.core.gardener.cloud"]`) are established. kubectl
/// v1.32 fails at once, instead of waiting, while a new CRD has no `status.conditions` yet
/// (".status.conditions accessor error"); that answer is retried.
///
/// # Panics
/// When kubectl fails otherwise or the CRDs are not established within 60 s.
pub fn wait_crds_established(kubeconfig: &Path, targets: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let output = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["wait", "--for=condition=Established", "--timeout=60s"])
            .args(targets)
            .output()
            .expect("kubectl runs");
        if output.status.success() {
            return;
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("accessor error") && Instant::now() < deadline,
            "kubectl wait {targets:?}: {stderr}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
