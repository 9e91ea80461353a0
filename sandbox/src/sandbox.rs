//! The public handle: building, starting and stopping a sandbox, and kubeconfigs/clients for it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

use crate::auth::authn::UserInfo;
use crate::auth::authz;
use crate::auth::authz::webhook::{WebhookAuthorizer, WebhookConfig, WebhookError};
use crate::auth::pki::{CertificateAuthority, PkiError};
use crate::endpoints::Api;
use crate::endpoints::discovery::VersionInfo;
use crate::faults::{Faults, Startup};
use crate::registry::crd;
use crate::registry::generic::{self, Writer};
use crate::storage::{PersistError, Store};
use crate::{controllers, kubernetes_service, server};

/// How long issued client certificates (admin and [`Sandbox::kubeconfig_for`]) are valid.
const CLIENT_CERTIFICATE_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);
/// How often a persistent sandbox writes changed state to disk.
const FLUSH_INTERVAL: Duration = Duration::from_secs(1);
/// Namespaces every cluster starts with.
const INITIAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Errors starting or using a sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The CA could not be created or loaded.
    #[error("prepare certificate authority")]
    CertificateAuthority(#[source] PkiError),
    /// A client certificate could not be issued.
    #[error("issue client certificate for {user}")]
    ClientCertificate {
        /// The user.
        user: String,
        /// Cause.
        #[source]
        source: PkiError,
    },
    /// Persisted state could not be loaded or saved.
    #[error("persist sandbox state")]
    Persist(#[source] PersistError),
    /// The state directory could not be created.
    #[error("create state directory {path}")]
    StateDirectory {
        /// The directory.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// Binding the listener failed.
    #[error("bind 127.0.0.1:{port}")]
    Bind {
        /// Requested port.
        port: u16,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// Building the kube client failed.
    #[error("build kube client")]
    Client(#[source] kube::Error),
    /// Loading the generated kubeconfig into kube failed.
    #[error("load generated kubeconfig")]
    Kubeconfig(#[source] kube::config::KubeconfigError),
    /// Writing a file of `serve` failed.
    #[error("write {path}")]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The authorization webhook configuration cannot be used.
    #[error("configure authorization webhook")]
    AuthorizationWebhook(#[source] WebhookError),
    /// Waiting for a shutdown signal failed.
    #[error("wait for shutdown signal")]
    Signal(#[source] std::io::Error),
}

/// Configures a sandbox before starting it.
#[derive(Clone, Debug)]
pub struct SandboxBuilder {
    name: String,
    dir: Option<PathBuf>,
    port: u16,
    workload_simulation: bool,
    publish_root_ca: bool,
    startup: Option<Startup>,
    authorization_webhook: Option<WebhookConfig>,
    version: VersionInfo,
    kubernetes_service_interval: Duration,
}

impl Default for SandboxBuilder {
    fn default() -> Self {
        SandboxBuilder {
            name: "sandbox".into(),
            dir: None,
            port: 0,
            workload_simulation: true,
            publish_root_ca: false,
            startup: None,
            authorization_webhook: None,
            version: VersionInfo::default(),
            kubernetes_service_interval: kubernetes_service::INTERVAL,
        }
    }
}

impl SandboxBuilder {
    /// Cluster name (kubeconfig cluster/context names, CA common name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Directory keeping CA and objects across restarts (memory only when unset).
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Port on 127.0.0.1 (0, the default, picks a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Whether workloads get a simulated ready status (default on).
    pub fn workload_simulation(mut self, enabled: bool) -> Self {
        self.workload_simulation = enabled;
        self
    }

    /// Whether every namespace gets a `kube-root-ca.crt` ConfigMap with the cluster CA, as
    /// kube-controller-manager's root-ca-cert-publisher does (default off: the conformance
    /// transcripts come from a cluster without it).
    pub fn publish_root_ca(mut self, enabled: bool) -> Self {
        self.publish_root_ca = enabled;
        self
    }

    /// Behave like a control plane that is just starting (see [`Startup`]): health checks fail
    /// and RBAC is not loaded for a while after start. Default off.
    pub fn startup(mut self, startup: Startup) -> Self {
        self.startup = Some(startup);
        self
    }

    /// Asks an authorization webhook after RBAC, like kube-apiserver's
    /// `--authorization-mode=RBAC,Webhook` with `--authorization-webhook-config-file` (see
    /// [`WebhookConfig`]). Default off.
    pub fn authorization_webhook(mut self, config: WebhookConfig) -> Self {
        self.authorization_webhook = Some(config);
        self
    }

    /// Reports `git_version` (such as `v1.31.4`) in `/version` instead of
    /// [`GIT_VERSION`](crate::endpoints::discovery::GIT_VERSION), for testing clients' version
    /// checks; everything else still behaves as v1.32.
    pub fn reported_version(mut self, git_version: &str) -> Self {
        self.version = VersionInfo::new(git_version);
        self
    }

    /// How often `default/kubernetes` (Service, Endpoints, EndpointSlice) is checked and repaired
    /// (default 10 s, kube-apiserver's interval; tests use less).
    pub fn kubernetes_service_interval(mut self, interval: Duration) -> Self {
        self.kubernetes_service_interval = interval;
        self
    }

    /// Starts serving.
    ///
    /// # Errors
    /// When the CA, persisted state, listener or admin client cannot be set up.
    pub async fn start(self) -> Result<Sandbox, SandboxError> {
        let ca = match &self.dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| SandboxError::StateDirectory {
                    path: dir.clone(),
                    source,
                })?;
                CertificateAuthority::load_or_generate(dir)
            }
            None => CertificateAuthority::generate(&format!("{}-ca", self.name)),
        }
        .map_err(SandboxError::CertificateAuthority)?;
        let ca = Arc::new(ca);
        let tls = ca
            .server_config()
            .map_err(SandboxError::CertificateAuthority)?;
        let store =
            Store::open(self.dir.clone(), crd::registry_for).map_err(SandboxError::Persist)?;
        bootstrap(&store);
        let faults = Arc::new(Faults::default());
        if let Some(startup) = self.startup {
            faults.start_up(startup);
        }
        let mut api = Api::new(store, ca.clone(), faults.clone());
        api.version = self.version.clone();
        if let Some(config) = &self.authorization_webhook {
            api.authorization_webhook = std::sync::RwLock::new(Some(Arc::new(
                WebhookAuthorizer::load(config).map_err(SandboxError::AuthorizationWebhook)?,
            )));
        }
        let api = Arc::new(api);
        let listener = TcpListener::bind(("127.0.0.1", self.port))
            .await
            .map_err(|source| SandboxError::Bind {
                port: self.port,
                source,
            })?;
        let port = listener
            .local_addr()
            .map_err(|source| SandboxError::Bind {
                port: self.port,
                source,
            })?
            .port();
        // Written before the first request is served, as kube-apiserver's bootstrap controller
        // does before it reports ready; a store the sandbox wrote itself never refuses them.
        if let Err(error) = kubernetes_service::reconcile(&mut api.store.lock(), port) {
            tracing::warn!(
                code = error.code,
                message = %error.body["message"],
                "writing default/kubernetes failed"
            );
        }
        let tasks = TaskTracker::new();
        let interval = self.kubernetes_service_interval;
        tasks.spawn(kubernetes_service::keep(api.clone(), port, interval));
        tasks.spawn(server::run(
            listener,
            tls,
            api.clone(),
            api.shutdown.clone(),
            tasks.clone(),
        ));
        tasks.spawn(controllers::run(
            api.clone(),
            controllers::Options {
                simulate_workloads: self.workload_simulation,
                publish_root_ca: self.publish_root_ca,
            },
        ));
        if self.dir.is_some() {
            let api = api.clone();
            tasks.spawn(async move {
                loop {
                    tokio::select! {
                        _ = tokio::time::sleep(FLUSH_INTERVAL) => {}
                        _ = api.shutdown.cancelled() => return,
                    }
                    if let Err(error) = api.store.flush() {
                        tracing::warn!(error = %error, "persisting sandbox state failed");
                    }
                }
            });
        }
        let endpoint = format!("https://127.0.0.1:{port}");
        let admin = issue(&ca, "admin", &["system:masters"])?;
        let admin_kubeconfig = kubeconfig(
            &self.name,
            &endpoint,
            ca.ca_pem(),
            "admin",
            &admin.0,
            &admin.1,
        );
        let config = kube::Config::from_custom_kubeconfig(admin_kubeconfig, &Default::default())
            .await
            .map_err(SandboxError::Kubeconfig)?;
        let client = kube::Client::try_from(config).map_err(SandboxError::Client)?;
        Ok(Sandbox {
            name: self.name,
            endpoint,
            api,
            tasks,
            faults,
            admin,
            client,
        })
    }
}

/// A running sandbox API server.
pub struct Sandbox {
    name: String,
    endpoint: String,
    api: Arc<Api>,
    tasks: TaskTracker,
    faults: Arc<Faults>,
    admin: (String, String),
    client: kube::Client,
}

impl Sandbox {
    /// Starts configuring a sandbox.
    pub fn builder() -> SandboxBuilder {
        SandboxBuilder::default()
    }

    /// `https://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    /// The cluster CA certificate (PEM).
    pub fn ca_cert_pem(&self) -> String {
        self.api.ca.ca_pem().to_string()
    }

    /// A kubeconfig for user `admin` in group `system:masters`.
    pub fn admin_kubeconfig(&self) -> kube::config::Kubeconfig {
        kubeconfig(
            &self.name,
            &self.endpoint,
            self.api.ca.ca_pem(),
            "admin",
            &self.admin.0,
            &self.admin.1,
        )
    }

    /// The admin kubeconfig as YAML (for files and kubectl).
    pub fn admin_kubeconfig_yaml(&self) -> String {
        serde_yaml::to_string(&self.admin_kubeconfig()).unwrap_or_default()
    }

    /// Configures (or, with `None`, removes) the authorization webhook of a running server, as
    /// restarting kube-apiserver with other `--authorization-*` flags would: tests start the
    /// webhook's server after the API server it needs.
    ///
    /// # Errors
    /// As at start: an unreadable or incomplete kubeconfig file; the old setting then stays.
    pub fn set_authorization_webhook(
        &self,
        config: Option<&WebhookConfig>,
    ) -> Result<(), SandboxError> {
        let webhook = match config {
            Some(config) => Some(Arc::new(
                WebhookAuthorizer::load(config).map_err(SandboxError::AuthorizationWebhook)?,
            )),
            None => None,
        };
        *self
            .api
            .authorization_webhook
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = webhook;
        Ok(())
    }

    /// A serving certificate signed by this cluster's CA (the garden CA that webhook servers
    /// present to kube-apiserver): PEM chain and key.
    ///
    /// # Errors
    /// When a name is invalid or signing fails.
    pub fn issue_serving_certificate(
        &self,
        common_name: &str,
        names: &[&str],
    ) -> Result<(String, String), SandboxError> {
        self.api
            .ca
            .issue_serving_certificate(common_name, names)
            .map_err(SandboxError::CertificateAuthority)
    }

    /// An admin kube-rs client.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A kubeconfig with a fresh client certificate (CN `user`, O `groups`) issued by the CA.
    ///
    /// # Errors
    /// When the certificate cannot be issued.
    pub fn kubeconfig_for(
        &self,
        user: &str,
        groups: &[&str],
    ) -> Result<kube::config::Kubeconfig, SandboxError> {
        let (cert, key) = issue(&self.api.ca, user, groups)?;
        Ok(kubeconfig(
            &self.name,
            &self.endpoint,
            self.api.ca.ca_pem(),
            user,
            &cert,
            &key,
        ))
    }

    /// Fault injection for this sandbox.
    pub fn faults(&self) -> Arc<Faults> {
        self.faults.clone()
    }

    /// Behaves, from now on, like a control plane that just restarted: open watches end, watches
    /// from a resourceVersion before now get 410 Gone (the watch history is gone), and the
    /// [`Startup`] windows begin (failing health checks, RBAC not yet loaded).
    pub fn simulate_restart(&self, startup: Startup) {
        self.api.store.lock().forget_history();
        self.faults.start_up(startup);
        self.faults.drop_watches();
    }

    /// Requests served so far per authenticated user (see [`crate::RequestCounts`]); requests
    /// failed by fault injection are counted in [`Sandbox::injected_failures`] instead.
    pub fn request_counts(&self) -> std::collections::BTreeMap<String, u64> {
        self.api.requests.snapshot()
    }

    /// TLS connections accepted so far by protocol, and how many are open now.
    pub fn connections(&self) -> crate::Connections {
        self.api.connections.snapshot()
    }

    /// Requests failed by fault injection so far per authenticated user (see [`Faults`]). The
    /// requests a user sent are these plus its [`Sandbox::request_counts`]. Like the served
    /// counts, they start from zero when the sandbox (re)starts.
    pub fn injected_failures(&self) -> std::collections::BTreeMap<String, u64> {
        self.api.requests.injected_snapshot()
    }

    /// Stops serving (open watches end), stops the controllers and persists state if a directory is set.
    pub async fn shutdown(self) {
        self.api.shutdown.cancel();
        self.tasks.close();
        self.tasks.wait().await;
        if let Err(error) = self.api.store.flush() {
            tracing::warn!(error = %error, "persisting sandbox state failed");
        }
    }
}

/// Issues a client certificate from the CA.
fn issue(
    ca: &CertificateAuthority,
    user: &str,
    groups: &[&str],
) -> Result<(String, String), SandboxError> {
    let groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
    ca.issue_client_certificate(user, &groups, CLIENT_CERTIFICATE_VALIDITY)
        .map_err(|source| SandboxError::ClientCertificate {
            user: user.to_string(),
            source,
        })
}

/// A kubeconfig for one user with embedded certificate data.
fn kubeconfig(
    cluster: &str,
    endpoint: &str,
    ca_pem: &str,
    user: &str,
    cert_pem: &str,
    key_pem: &str,
) -> kube::config::Kubeconfig {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let context = format!("{user}@{cluster}");
    let document = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": {"server": endpoint, "certificate-authority-data": b64(ca_pem)}}],
        "users": [{"name": user, "user": {"client-certificate-data": b64(cert_pem), "client-key-data": b64(key_pem)}}],
        "contexts": [{"name": context, "context": {"cluster": cluster, "user": user, "namespace": "default"}}],
        "current-context": context,
    });
    // The document has exactly the Kubeconfig shape; a mismatch would be a programming error caught by tests.
    serde_json::from_value(document).unwrap_or_default()
}

/// Creates the initial namespaces and the default RBAC policy in a fresh store.
fn bootstrap(store: &Store) {
    let system = UserInfo {
        username: "system:apiserver".into(),
        groups: vec!["system:masters".into()],
        ..UserInfo::default()
    };
    let writer = Writer {
        manager: "kube-apiserver",
        user: &system,
        dry_run: false,
    };
    let mut state = store.lock();
    let registry = state.registry();
    let create = |state: &mut crate::storage::State, group: &str, plural: &str, object: Value| {
        if let Some(rt) = registry.lookup(group, "v1", plural) {
            let name = object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if state.get(&rt, "", name).is_none() {
                // Creating a well-formed bootstrap object cannot fail on a store without it.
                let _ = generic::create(state, &rt, "", object, &writer);
            }
        }
    };
    for namespace in INITIAL_NAMESPACES {
        create(
            &mut state,
            "",
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        );
    }
    let policy = authz::bootstrap_policy();
    for role in policy.cluster_roles {
        create(
            &mut state,
            "rbac.authorization.k8s.io",
            "clusterroles",
            role,
        );
    }
    for binding in policy.cluster_role_bindings {
        create(
            &mut state,
            "rbac.authorization.k8s.io",
            "clusterrolebindings",
            binding,
        );
    }
}

/// Options of [`serve`].
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// State directory; also receives `admin.kubeconfig` and `ca.crt`.
    pub dir: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one).
    pub port: u16,
    /// Cluster name.
    pub name: String,
}

/// Runs one sandbox until SIGTERM or ctrl-c, writing `DIR/admin.kubeconfig` and `DIR/ca.crt` once ready.
///
/// # Errors
/// When the sandbox cannot start or the files cannot be written.
pub async fn serve(options: ServeOptions) -> Result<(), SandboxError> {
    let sandbox = Sandbox::builder()
        .name(options.name)
        .dir(&options.dir)
        .port(options.port)
        .start()
        .await?;
    let write = |name: &str, text: &str| {
        let path = options.dir.join(name);
        crate::storage::write_private(&path, text.as_bytes())
            .map_err(|source| SandboxError::WriteFile { path, source })
    };
    write("ca.crt", &sandbox.ca_cert_pem())?;
    write("admin.kubeconfig", &sandbox.admin_kubeconfig_yaml())?;
    tracing::info!(endpoint = %sandbox.endpoint(), "sandbox serving");
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(SandboxError::Signal)?;
    tokio::select! {
        _ = terminate.recv() => {}
        result = tokio::signal::ctrl_c() => result.map_err(SandboxError::Signal)?,
    }
    sandbox.shutdown().await;
    Ok(())
}
