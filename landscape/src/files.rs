//! The landscape's state directory and the files it writes there: kubeconfigs (mode 0600) and the
//! component configurations the agent and garden controller are started from.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kube::config::Kubeconfig;

use crate::Error;

/// Name of the seed Secret holding the bootstrap kubeconfig.
pub const BOOTSTRAP_SECRET: &str = "gardenlet-kubeconfig-bootstrap";
/// Name of the seed Secret the agent stores its certificate kubeconfig in.
pub const KUBECONFIG_SECRET: &str = "gardenlet-kubeconfig";
/// Name of the backup credentials Secret in the garden's `garden` namespace (the demo Seed's
/// `spec.backup.credentialsRef`).
pub const BACKUP_CREDENTIALS_SECRET: &str = "backup-local";

/// Name of the lock file that keeps a second landscape out of a state directory.
pub const LOCK_FILE: &str = "seedlet.lock";

/// The directory holding sandbox state, kubeconfigs and configs; locked against a second
/// landscape while it lives, and removed on drop when it was a temporary one.
#[derive(Debug)]
pub struct StateDir {
    root: PathBuf,
    temporary: bool,
    /// Holds an exclusive lock on [`LOCK_FILE`] (released by the OS when the process ends).
    _lock: std::fs::File,
}

impl StateDir {
    /// Uses `dir`, or a new directory under the system temp dir that is removed again when the
    /// `StateDir` is dropped; creates it and takes its lock, writing our process id into it.
    ///
    /// # Errors
    /// [`Error::StateDir`] when it cannot be created or locked, [`Error::StateDirInUse`] when
    /// another process holds the lock.
    pub fn prepare(dir: Option<PathBuf>) -> Result<Self, Error> {
        let temporary = dir.is_none();
        let root = dir.unwrap_or_else(|| {
            std::env::temp_dir().join(format!("seedlet-sandbox-{}", std::process::id()))
        });
        std::fs::create_dir_all(&root).map_err(|source| Error::StateDir {
            path: root.clone(),
            source,
        })?;
        let lock = lock(&root)?;
        Ok(Self {
            root,
            temporary,
            _lock: lock,
        })
    }

    /// Whether the directory is removed when the landscape ends.
    pub fn is_temporary(&self) -> bool {
        self.temporary
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `name` inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Writes the demo control-plane chart into directory `name` (replacing what is there) and
    /// returns its path, for the agent's `controllers.shoot.controlPlaneChart.path`.
    ///
    /// # Errors
    /// [`Error::StateDir`].
    pub fn write_control_plane_chart(&self, name: &str) -> Result<PathBuf, Error> {
        let dir = self.path(name);
        for (file, text) in CONTROL_PLANE_CHART {
            let path = dir.join(file);
            let failed = |source| Error::StateDir {
                path: path.clone(),
                source,
            };
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(failed)?;
            }
            std::fs::write(&path, text).map_err(failed)?;
        }
        Ok(dir)
    }

    /// Writes a kubeconfig (it holds a private key) with mode 0600.
    ///
    /// # Errors
    /// [`Error::StateDir`] when writing fails.
    pub fn write_kubeconfig(&self, name: &str, text: &str) -> Result<PathBuf, Error> {
        self.write(name, text, 0o600)
    }

    /// Writes a component configuration.
    ///
    /// # Errors
    /// [`Error::StateDir`] when writing fails.
    pub fn write_config(&self, name: &str, text: &str) -> Result<PathBuf, Error> {
        self.write(name, text, 0o644)
    }

    fn write(&self, name: &str, text: &str, mode: u32) -> Result<PathBuf, Error> {
        let path = self.path(name);
        let failed = |source| Error::StateDir {
            path: path.clone(),
            source,
        };
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(mode);
        }
        let mut file = options.open(&path).map_err(failed)?;
        #[cfg(unix)]
        {
            // `mode` only applies to new files; tighten an existing one too.
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(failed)?;
        }
        #[cfg(not(unix))]
        let _ = mode;
        file.write_all(text.as_bytes()).map_err(failed)?;
        Ok(path)
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        if self.temporary {
            // Best effort: what cannot be removed stays in the temp dir.
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// Takes the exclusive lock on `root`/[`LOCK_FILE`] and writes our process id into it.
fn lock(root: &Path) -> Result<std::fs::File, Error> {
    let path = root.join(LOCK_FILE);
    let failed = |source| Error::StateDir {
        path: path.clone(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(failed)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            return Err(Error::StateDirInUse {
                path: root.to_owned(),
                pid: holder.trim().to_owned(),
            });
        }
        Err(std::fs::TryLockError::Error(source)) => return Err(failed(source)),
    }
    file.set_len(0).map_err(failed)?;
    writeln!(file, "{}", std::process::id()).map_err(failed)?;
    Ok(file)
}

/// Name of the kubeconfig with both clusters (contexts `garden` and `seed`).
pub const KUBECONFIG: &str = "kubeconfig";

/// `kubeconfig` (a sandbox's admin kubeconfig) with its cluster and context named `name` and its
/// user `<name>-admin`, so that the garden's and the seed's can be merged (by kubectl's
/// `KUBECONFIG=a:b` or [`both_clusters`]) without one user's credentials shadowing the other's.
pub fn named_kubeconfig(mut kubeconfig: Kubeconfig, name: &str) -> Kubeconfig {
    let user = format!("{name}-admin");
    for cluster in &mut kubeconfig.clusters {
        cluster.name = name.to_owned();
    }
    for auth in &mut kubeconfig.auth_infos {
        auth.name.clone_from(&user);
    }
    for named in &mut kubeconfig.contexts {
        named.name = name.to_owned();
        if let Some(context) = &mut named.context {
            context.cluster = name.to_owned();
            context.user = Some(user.clone());
        }
    }
    kubeconfig.current_context = Some(name.to_owned());
    kubeconfig
}

/// One kubeconfig holding both named kubeconfigs; the first one's context is current.
pub fn both_clusters(first: &Kubeconfig, second: &Kubeconfig) -> Kubeconfig {
    let mut both = first.clone();
    both.clusters.extend(second.clusters.iter().cloned());
    both.auth_infos.extend(second.auth_infos.iter().cloned());
    both.contexts.extend(second.contexts.iter().cloned());
    both
}

/// A kubeconfig as YAML; empty when it cannot be encoded (it always can: plain strings and lists).
pub fn kubeconfig_yaml(kubeconfig: &Kubeconfig) -> String {
    serde_yaml::to_string(kubeconfig).unwrap_or_default()
}

/// `127.0.0.1:0`: the landscape's probe and metrics servers take any free port.
pub fn ephemeral_address() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

/// A bootstrap-token kubeconfig for the garden, as an operator hands it to a new seed.
pub fn bootstrap_kubeconfig(server: &str, ca_pem: &str, token: &str) -> String {
    let ca = STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1
kind: Config
current-context: gardenlet-bootstrap
clusters:
- name: default-cluster
  cluster:
    server: {server}
    certificate-authority-data: {ca}
contexts:
- name: gardenlet-bootstrap
  context:
    cluster: default-cluster
    user: gardenlet-bootstrap
users:
- name: gardenlet-bootstrap
  user:
    token: {token}
"
    )
}

/// The demo control-plane chart (`charts/control-plane-demo`): a kube-apiserver Deployment per
/// Shoot with the Shoot's replicas (0 while hibernated).
pub const CONTROL_PLANE_CHART: &[(&str, &str)] = &[
    (
        "Chart.yaml",
        include_str!("../../charts/control-plane-demo/Chart.yaml"),
    ),
    (
        "values.yaml",
        include_str!("../../charts/control-plane-demo/values.yaml"),
    ),
    (
        "templates/kube-apiserver.yaml",
        include_str!("../../charts/control-plane-demo/templates/kube-apiserver.yaml"),
    ),
];

/// The agent's `GardenletConfiguration`: bootstrap from the seed Secret, short validity so that
/// rotation is visible in a demo, the demo Seed (with `spec.backup` on the credentials Secret
/// the landscape stores in the garden) and the demo control-plane chart at `chart`.
pub fn agent_config(seed_name: &str, chart: &Path) -> String {
    let backup_secret = BACKUP_CREDENTIALS_SECRET;
    let chart = chart.display();
    format!(
        "# Written by `seedlet sandbox`: the agent of the demo seed.
apiVersion: gardenlet.config.gardener.cloud/v1alpha1
kind: GardenletConfiguration
gardenClientConnection:
  bootstrapKubeconfig:
    name: {BOOTSTRAP_SECRET}
    namespace: garden
  kubeconfigSecret:
    name: {KUBECONFIG_SECRET}
    namespace: garden
  kubeconfigValidity:
    validity: 24h
controllers:
  controllerInstallationCare:
    syncPeriod: 5s
  seed:
    leaseResyncSeconds: 1
  shoot:
    controlPlaneChart:
      path: {chart}
leaderElection:
  leaderElect: true
  resourceNamespace: garden
logLevel: info
logFormat: text
seedConfig:
  metadata:
    name: {seed_name}
    labels:
      environment: sandbox
  spec:
    provider:
      type: local
      region: local
      zones:
      - \"0\"
    dns:
      provider:
        type: local
    ingress:
      domain: ingress.{seed_name}.seed.example.com
      controller:
        kind: nginx
    backup:
      provider: local
      credentialsRef:
        apiVersion: v1
        kind: Secret
        name: {backup_secret}
        namespace: garden
    networks:
      nodes: 172.18.0.0/16
      pods: 10.1.0.0/16
      services: 10.2.0.0/16
    settings:
      scheduling:
        visible: true
"
    )
}

/// The garden controller's configuration with shortened monitor periods, so that a stopped agent
/// shows up quickly in the demo.
pub fn garden_controller_config(webhook_tls: &Path) -> String {
    format!(
        "# Written by `seedlet sandbox`: the garden-side controller.
apiVersion: seedlet.gardener.cloud/v1alpha1
kind: GardenControllerConfiguration
controllers:
  seedLifecycle:
    syncPeriod: 5s
    monitorPeriod: 20s
    shootMonitorPeriod: 1m
logLevel: info
logFormat: text
# The seed authorizer and SeedRestriction, which the garden sandbox calls.
webhooks:
  server:
    bindAddress: 127.0.0.1
    freePort: true
  tls:
    serverCertDir: {}
",
        webhook_tls.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_configs_are_valid_for_their_components() {
        for (name, text) in [
            (
                "agent.yaml",
                agent_config(
                    "local",
                    Path::new(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/../charts/control-plane-demo"
                    )),
                ),
            ),
            (
                "garden.yaml",
                garden_controller_config(Path::new("/tmp/tls")),
            ),
        ] {
            if let Err(error) = seedlet_config::parse(&text, name) {
                panic!("{name} is invalid: {error}");
            }
        }
    }

    #[test]
    fn bootstrap_kubeconfig_carries_server_token_and_ca() {
        let text = bootstrap_kubeconfig("https://127.0.0.1:1", "PEM", "abcdef.0123456789abcdef");
        let parsed: serde_yaml::Value = serde_yaml::from_str(&text).expect("kubeconfig is YAML");
        assert_eq!(
            parsed["clusters"][0]["cluster"]["server"],
            "https://127.0.0.1:1"
        );
        assert_eq!(
            parsed["users"][0]["user"]["token"],
            "abcdef.0123456789abcdef"
        );
        assert_eq!(
            parsed["clusters"][0]["cluster"]["certificate-authority-data"],
            STANDARD.encode("PEM")
        );
    }

    #[cfg(unix)]
    #[test]
    fn kubeconfigs_are_written_with_mode_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir =
            std::env::temp_dir().join(format!("seedlet-landscape-test-{}", std::process::id()));
        let state = StateDir::prepare(Some(dir.clone())).expect("state dir");
        let path = state
            .write_kubeconfig("x.kubeconfig", "secret")
            .expect("written");
        let mode = std::fs::metadata(&path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::remove_dir_all(dir).expect("cleanup");
    }

    fn admin(cluster: &str) -> Kubeconfig {
        serde_yaml::from_str(&format!(
            "apiVersion: v1
kind: Config
current-context: admin@{cluster}
clusters:
- name: {cluster}
  cluster: {{server: https://127.0.0.1:1}}
users:
- name: admin
  user: {{token: t}}
contexts:
- name: admin@{cluster}
  context: {{cluster: {cluster}, user: admin, namespace: default}}
"
        ))
        .expect("kubeconfig")
    }

    #[test]
    fn both_clusters_has_a_context_and_a_distinct_user_per_cluster() {
        let garden = named_kubeconfig(admin("garden"), "garden");
        let seed = named_kubeconfig(admin("seed"), "seed");
        let both = both_clusters(&garden, &seed);
        let names = |items: Vec<&String>| items.into_iter().cloned().collect::<Vec<_>>();
        assert_eq!(
            names(both.clusters.iter().map(|c| &c.name).collect()),
            ["garden", "seed"]
        );
        assert_eq!(
            names(both.auth_infos.iter().map(|u| &u.name).collect()),
            ["garden-admin", "seed-admin"]
        );
        let contexts: Vec<_> = both
            .contexts
            .iter()
            .map(|named| {
                let context = named.context.as_ref().expect("context");
                (
                    named.name.clone(),
                    context.cluster.clone(),
                    context.user.clone(),
                )
            })
            .collect();
        assert_eq!(
            contexts,
            [
                (
                    "garden".into(),
                    "garden".into(),
                    Some("garden-admin".into())
                ),
                ("seed".into(), "seed".into(), Some("seed-admin".into())),
            ]
        );
        assert_eq!(both.current_context.as_deref(), Some("garden"));
    }

    #[test]
    fn a_second_state_dir_on_the_same_directory_names_the_holding_process() {
        let dir = tempfile_dir("lock");
        let first = StateDir::prepare(Some(dir.clone())).expect("first");
        let second = StateDir::prepare(Some(dir.clone())).expect_err("locked");
        assert_eq!(
            second.to_string(),
            format!(
                "state directory {} is in use by process {}",
                dir.display(),
                std::process::id()
            )
        );
        drop(first);
        let third = StateDir::prepare(Some(dir.clone())).expect("free again");
        assert!(!third.is_temporary());
        drop(third);
        assert!(dir.exists(), "a given directory is kept");
        std::fs::remove_dir_all(dir).expect("cleanup");
    }

    #[test]
    fn a_temporary_state_dir_is_removed_when_dropped() {
        let state = StateDir::prepare(None).expect("temporary");
        assert!(state.is_temporary());
        let root = state.root().to_owned();
        state.write_config("x.yaml", "x: 1").expect("written");
        drop(state);
        assert!(!root.exists(), "{} removed", root.display());
    }

    fn tempfile_dir(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("seedlet-landscape-{name}-{}", std::process::id()))
    }
}
