//! The landscape's state directory and the files it writes there: kubeconfigs (mode 0600) and the
//! component configurations the agent and garden controller are started from.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::Error;

/// Name of the seed Secret holding the bootstrap kubeconfig.
pub const BOOTSTRAP_SECRET: &str = "gardenlet-kubeconfig-bootstrap";
/// Name of the seed Secret the agent stores its certificate kubeconfig in.
pub const KUBECONFIG_SECRET: &str = "gardenlet-kubeconfig";

/// The directory holding sandbox state, kubeconfigs and configs.
#[derive(Debug)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// Uses `dir`, or a new directory under the system temp dir, creating it.
    ///
    /// # Errors
    /// [`Error::StateDir`] when it cannot be created.
    pub fn prepare(dir: Option<PathBuf>) -> Result<Self, Error> {
        let root = dir.unwrap_or_else(|| {
            std::env::temp_dir().join(format!("seedlet-sandbox-{}", std::process::id()))
        });
        std::fs::create_dir_all(&root).map_err(|source| Error::StateDir {
            path: root.clone(),
            source,
        })?;
        Ok(Self { root })
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `name` inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
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

/// The agent's `GardenletConfiguration`: bootstrap from the seed Secret, short validity so that
/// rotation is visible in a demo, and the demo Seed.
pub fn agent_config(seed_name: &str) -> String {
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
pub fn garden_controller_config() -> String {
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
"
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_configs_are_valid_for_their_components() {
        for (name, text) in [
            ("agent.yaml", agent_config("local")),
            ("garden.yaml", garden_controller_config()),
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
}
