//! Where the agent's two clients come from. gardenlet lets `KUBECONFIG` replace
//! `seedClientConnection.kubeconfig` and `GARDEN_KUBECONFIG` replace
//! `gardenClientConnection.kubeconfig`; seedlet keeps that precedence for compatibility, but a
//! leaked environment variable must not silently point the agent at the wrong cluster. So the
//! agent says once, at start-up, which source each client came from and which server it talks to,
//! and warns when seed and garden are the same cluster (legitimate for a garden that is its own
//! seed, a surprise otherwise).

use std::fmt;
use std::path::{Path, PathBuf};

use kube::config::Kubeconfig;

/// Where a client's configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// An environment variable naming a kubeconfig file (it overrides the configuration).
    Environment {
        /// The variable, `KUBECONFIG` or `GARDEN_KUBECONFIG`.
        variable: &'static str,
        /// The file it names.
        path: PathBuf,
    },
    /// A kubeconfig file from the configuration.
    Configuration {
        /// The field, e.g. `seedClientConnection.kubeconfig`.
        field: &'static str,
        /// The file it names.
        path: PathBuf,
    },
    /// No file: the in-cluster service account (or kube's defaults).
    InCluster,
    /// The garden credential is obtained through TLS bootstrap or a stored kubeconfig Secret.
    Bootstrap,
}

impl Origin {
    /// The origin of a kubeconfig path that `variable` may override and `field` configures.
    pub fn of(
        variable: &'static str,
        from_environment: Option<PathBuf>,
        field: &'static str,
        from_configuration: Option<&Path>,
    ) -> Option<Self> {
        match (from_environment, from_configuration) {
            (Some(path), _) => Some(Self::Environment { variable, path }),
            (None, Some(path)) => Some(Self::Configuration {
                field,
                path: path.to_owned(),
            }),
            (None, None) => None,
        }
    }

    /// The kubeconfig file, if the origin names one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::Environment { path, .. } | Self::Configuration { path, .. } => Some(path),
            Self::InCluster | Self::Bootstrap => None,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Environment { variable, path } => {
                write!(
                    f,
                    "${variable} ({}, overrides the configuration)",
                    path.display()
                )
            }
            Self::Configuration { field, path } => write!(f, "{field} ({})", path.display()),
            Self::InCluster => f.write_str("in-cluster configuration"),
            Self::Bootstrap => f.write_str("TLS bootstrap or the stored kubeconfig Secret"),
        }
    }
}

/// One client's source and, when known, its server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSource {
    /// Where the configuration came from.
    pub origin: Origin,
    /// The API server URL, when it could be read.
    pub server: Option<String>,
}

/// The start-up lines about both clients: `(is_warning, text)`.
pub fn describe(seed: &ClientSource, garden: &ClientSource) -> Vec<(bool, String)> {
    let line = |name: &str, source: &ClientSource| {
        let server = source.server.as_deref().unwrap_or("server not known yet");
        (
            false,
            format!("{name} client from {} -> {server}", source.origin),
        )
    };
    let mut lines = vec![line("seed", seed), line("garden", garden)];
    if let (Some(seed_server), Some(garden_server)) = (&seed.server, &garden.server)
        && same_server(seed_server, garden_server)
    {
        lines.push((
            true,
            format!(
                "seed and garden are the same cluster ({seed_server}): expected only for a garden \
                 that is also its own seed; check KUBECONFIG and GARDEN_KUBECONFIG otherwise"
            ),
        ));
    }
    lines
}

/// Whether two server URLs name the same API server (a trailing slash aside).
fn same_server(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// The server of the current context's cluster in the kubeconfig at `path` (the first cluster
/// without a current context); `None` when the file cannot be read.
pub fn kubeconfig_server(path: &Path) -> Option<String> {
    let kubeconfig = Kubeconfig::read_from(path).ok()?;
    let cluster_name = kubeconfig
        .current_context
        .as_deref()
        .and_then(|current| kubeconfig.contexts.iter().find(|c| c.name == current))
        .and_then(|context| context.context.as_ref())
        .map(|context| context.cluster.clone());
    let cluster = match cluster_name {
        Some(name) => kubeconfig.clusters.iter().find(|c| c.name == name)?,
        None => kubeconfig.clusters.first()?,
    };
    cluster.cluster.as_ref()?.server.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(origin: Origin, server: Option<&str>) -> ClientSource {
        ClientSource {
            origin,
            server: server.map(str::to_owned),
        }
    }

    #[test]
    fn the_environment_overrides_the_configuration_and_says_so() {
        let origin = Origin::of(
            "KUBECONFIG",
            Some(PathBuf::from("/tmp/leaked")),
            "seedClientConnection.kubeconfig",
            Some(Path::new("/etc/seedlet/seed.kubeconfig")),
        )
        .unwrap();
        assert_eq!(
            origin.to_string(),
            "$KUBECONFIG (/tmp/leaked, overrides the configuration)"
        );
        let configured = Origin::of(
            "KUBECONFIG",
            None,
            "seedClientConnection.kubeconfig",
            Some(Path::new("/etc/seedlet/seed.kubeconfig")),
        )
        .unwrap();
        assert_eq!(
            configured.to_string(),
            "seedClientConnection.kubeconfig (/etc/seedlet/seed.kubeconfig)"
        );
        assert_eq!(Origin::of("KUBECONFIG", None, "f", None), None);
    }

    #[test]
    fn describe_warns_only_when_seed_and_garden_share_a_server() {
        let seed = source(Origin::InCluster, Some("https://10.0.0.1:443"));
        let other_garden = source(Origin::Bootstrap, Some("https://garden.example:443"));
        let lines = describe(&seed, &other_garden);
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|(warning, _)| !warning));
        assert_eq!(
            lines[0].1,
            "seed client from in-cluster configuration -> https://10.0.0.1:443"
        );

        let same_garden = source(
            Origin::Environment {
                variable: "GARDEN_KUBECONFIG",
                path: PathBuf::from("/k"),
            },
            Some("https://10.0.0.1:443/"),
        );
        let lines = describe(&seed, &same_garden);
        assert_eq!(lines.len(), 3);
        assert!(lines[2].0);
        assert!(
            lines[2]
                .1
                .starts_with("seed and garden are the same cluster")
        );

        let unknown = source(Origin::Bootstrap, None);
        let lines = describe(&seed, &unknown);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].1.ends_with("server not known yet"));
    }

    #[test]
    fn kubeconfig_server_reads_the_current_contexts_cluster() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\ncurrent-context: b\n\
             clusters:\n- name: a\n  cluster: {server: 'https://a:6443'}\n\
             - name: b\n  cluster: {server: 'https://b:6443'}\n\
             contexts:\n- name: a\n  context: {cluster: a, user: u}\n\
             - name: b\n  context: {cluster: b, user: u}\n\
             users:\n- name: u\n  user: {}\n",
        )
        .unwrap();
        assert_eq!(kubeconfig_server(&path).as_deref(), Some("https://b:6443"));
        assert_eq!(kubeconfig_server(&dir.path().join("missing")), None);
    }
}
