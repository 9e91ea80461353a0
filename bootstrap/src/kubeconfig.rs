//! Kubeconfig reading and writing: where a garden is (server, CA) and the `gardenlet` kubeconfig with inline
//! client certificate and key (spec §1.5).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Map, Value, json};

use crate::certificate::CertificateInfo;
use crate::csr::PrivateKeyPem;
use crate::error::Error;
use crate::names::KUBECONFIG_ENTRY_NAME;

/// How a kubeconfig tells the client to trust the garden's serving certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CertificateAuthority {
    /// `certificate-authority`: a file path, kept as a path.
    File(String),
    /// `certificate-authority-data`: base64 of the PEM bundle, kept verbatim.
    Data(String),
    /// Neither: the system roots (or `insecure-skip-tls-verify`).
    None,
}

/// The garden endpoint of a kubeconfig's current context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GardenCluster {
    /// API server URL.
    pub server: String,
    /// `insecure-skip-tls-verify`.
    pub insecure_skip_tls_verify: bool,
    /// Trust anchor.
    pub certificate_authority: CertificateAuthority,
}

/// A parsed kubeconfig text together with the garden endpoint of its current context.
#[derive(Clone, Debug)]
pub struct ParsedKubeconfig {
    /// The parsed document.
    pub kubeconfig: Kubeconfig,
    /// The cluster of the current context.
    pub cluster: GardenCluster,
}

impl ParsedKubeconfig {
    /// Parses kubeconfig YAML and resolves its current context's cluster.
    ///
    /// # Errors
    /// [`Error::ParseKubeconfig`] on invalid YAML or when the current context, its cluster or server is missing.
    pub fn parse(text: &str, origin: &str) -> Result<Self, Error> {
        let invalid = |reason: String| Error::ParseKubeconfig {
            origin: origin.to_owned(),
            reason,
        };
        let kubeconfig = Kubeconfig::from_yaml(text).map_err(|e| invalid(e.to_string()))?;
        let context_name = kubeconfig
            .current_context
            .clone()
            .ok_or_else(|| invalid("no current-context".into()))?;
        let context = kubeconfig
            .contexts
            .iter()
            .find(|c| c.name == context_name)
            .and_then(|c| c.context.as_ref())
            .ok_or_else(|| invalid(format!("context {context_name:?} not found")))?;
        let cluster = kubeconfig
            .clusters
            .iter()
            .find(|c| c.name == context.cluster)
            .and_then(|c| c.cluster.as_ref())
            .ok_or_else(|| invalid(format!("cluster {:?} not found", context.cluster)))?;
        let server = cluster
            .server
            .clone()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid("no server".into()))?;
        let certificate_authority = match (
            &cluster.certificate_authority,
            &cluster.certificate_authority_data,
        ) {
            (Some(path), _) if !path.is_empty() => CertificateAuthority::File(path.clone()),
            (_, Some(data)) if !data.is_empty() => CertificateAuthority::Data(data.clone()),
            _ => CertificateAuthority::None,
        };
        let cluster = GardenCluster {
            server,
            insecure_skip_tls_verify: cluster.insecure_skip_tls_verify.unwrap_or(false),
            certificate_authority,
        };
        Ok(Self {
            kubeconfig,
            cluster,
        })
    }

    /// The leaf of the current user's inline `client-certificate-data`, if there is one.
    ///
    /// # Errors
    /// [`Error::ParseKubeconfig`] when the data is not base64, [`Error::ParseCertificate`] when it is no certificate.
    pub fn client_certificate(&self, origin: &str) -> Result<Option<CertificateInfo>, Error> {
        let Some(user) = self.current_user() else {
            return Ok(None);
        };
        let Some(data) = user
            .client_certificate_data
            .as_deref()
            .filter(|d| !d.is_empty())
        else {
            return Ok(None);
        };
        let pem = STANDARD
            .decode(data.trim())
            .map_err(|e| Error::ParseKubeconfig {
                origin: origin.to_owned(),
                reason: format!("client-certificate-data: {e}"),
            })?;
        CertificateInfo::from_pem(&pem).map(Some)
    }

    /// A kube client for this kubeconfig (the CA file, if any, is read now).
    ///
    /// # Errors
    /// [`Error::LoadKubeconfig`] / [`Error::BuildClient`] when kube rejects it (e.g. unreadable CA file, bad key).
    pub async fn client(&self, origin: &str) -> Result<kube::Client, Error> {
        let config = kube::Config::from_custom_kubeconfig(
            self.kubeconfig.clone(),
            &KubeConfigOptions::default(),
        )
        .await
        .map_err(|source| Error::LoadKubeconfig {
            origin: origin.to_owned(),
            source,
        })?;
        seedlet_runtime::client::build(config).map_err(|source| Error::BuildClient {
            origin: origin.to_owned(),
            source: Box::new(source),
        })
    }

    fn current_user(&self) -> Option<&kube::config::AuthInfo> {
        let context_name = self.kubeconfig.current_context.as_deref()?;
        let context = self
            .kubeconfig
            .contexts
            .iter()
            .find(|c| c.name == context_name)?
            .context
            .as_ref()?;
        let user = context.user.as_deref()?;
        self.kubeconfig
            .auth_infos
            .iter()
            .find(|a| a.name == user)?
            .auth_info
            .as_ref()
    }
}

/// The kubeconfig stored for the seed: one cluster, user and context, all named `gardenlet`, pointing at
/// `cluster` with the client certificate and key inline.
pub fn build(cluster: &GardenCluster, certificate_pem: &[u8], key: &PrivateKeyPem) -> String {
    let mut cluster_entry = Map::new();
    match &cluster.certificate_authority {
        CertificateAuthority::File(path) => {
            cluster_entry.insert("certificate-authority".into(), Value::String(path.clone()));
        }
        CertificateAuthority::Data(data) => {
            cluster_entry.insert(
                "certificate-authority-data".into(),
                Value::String(data.clone()),
            );
        }
        CertificateAuthority::None => {}
    }
    if cluster.insecure_skip_tls_verify {
        cluster_entry.insert("insecure-skip-tls-verify".into(), Value::Bool(true));
    }
    cluster_entry.insert("server".into(), Value::String(cluster.server.clone()));
    let document = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"cluster": cluster_entry, "name": KUBECONFIG_ENTRY_NAME}],
        "contexts": [{
            "context": {"cluster": KUBECONFIG_ENTRY_NAME, "user": KUBECONFIG_ENTRY_NAME},
            "name": KUBECONFIG_ENTRY_NAME,
        }],
        "current-context": KUBECONFIG_ENTRY_NAME,
        "preferences": {},
        "users": [{
            "name": KUBECONFIG_ENTRY_NAME,
            "user": {
                "client-certificate-data": STANDARD.encode(certificate_pem),
                "client-key-data": STANDARD.encode(key.expose()),
            },
        }],
    });
    // Serialising a `serde_json::Value` of strings, bools, maps and lists to YAML cannot fail.
    serde_yaml::to_string(&document).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr::{PreparedRequest, Subject};

    const BOOTSTRAP: &str = r"
apiVersion: v1
kind: Config
current-context: bootstrap
clusters:
- name: garden
  cluster:
    server: https://garden.example:6443
    certificate-authority-data: Q0E=
contexts:
- name: bootstrap
  context: {cluster: garden, user: token}
users:
- name: token
  user: {token: abcdef.0123456789abcdef}
";

    #[test]
    fn parse_resolves_current_context_cluster() {
        let parsed = ParsedKubeconfig::parse(BOOTSTRAP, "test").unwrap();
        assert_eq!(
            parsed.cluster,
            GardenCluster {
                server: "https://garden.example:6443".into(),
                insecure_skip_tls_verify: false,
                certificate_authority: CertificateAuthority::Data("Q0E=".into()),
            }
        );
        assert!(parsed.client_certificate("test").unwrap().is_none());
    }

    #[test]
    fn parse_fails_when_current_context_is_missing() {
        let text = BOOTSTRAP.replace("current-context: bootstrap", "current-context: other");
        let error = ParsedKubeconfig::parse(&text, "secret garden/boot").unwrap_err();
        assert!(error.to_string().contains("secret garden/boot"), "{error}");
        assert!(error.to_string().contains("\"other\""), "{error}");
    }

    #[test]
    fn parse_keeps_ca_file_path_and_insecure_flag() {
        let text = BOOTSTRAP.replace(
            "certificate-authority-data: Q0E=",
            "certificate-authority: /etc/ca.crt\n    insecure-skip-tls-verify: true",
        );
        let parsed = ParsedKubeconfig::parse(&text, "test").unwrap();
        assert_eq!(
            parsed.cluster.certificate_authority,
            CertificateAuthority::File("/etc/ca.crt".into())
        );
        assert!(parsed.cluster.insecure_skip_tls_verify);
    }

    #[test]
    fn build_names_everything_gardenlet_and_inlines_certificate_and_key() {
        let cluster = ParsedKubeconfig::parse(BOOTSTRAP, "test").unwrap().cluster;
        let prepared = PreparedRequest::generate(&Subject::seed("s").unwrap()).unwrap();
        let text = build(&cluster, b"CERT", &prepared.key_pem);
        let value: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(value["current-context"], "gardenlet");
        assert_eq!(value["clusters"][0]["name"], "gardenlet");
        assert_eq!(
            value["clusters"][0]["cluster"]["server"],
            "https://garden.example:6443"
        );
        assert_eq!(
            value["clusters"][0]["cluster"]["certificate-authority-data"],
            "Q0E="
        );
        assert!(
            value["clusters"][0]["cluster"]
                .get("insecure-skip-tls-verify")
                .is_none()
        );
        assert_eq!(value["contexts"][0]["name"], "gardenlet");
        assert_eq!(value["contexts"][0]["context"]["cluster"], "gardenlet");
        assert_eq!(value["contexts"][0]["context"]["user"], "gardenlet");
        assert_eq!(value["users"][0]["name"], "gardenlet");
        assert_eq!(
            value["users"][0]["user"]["client-certificate-data"],
            "Q0VSVA=="
        );
        let key = STANDARD
            .decode(
                value["users"][0]["user"]["client-key-data"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
        assert_eq!(key, prepared.key_pem.expose().as_bytes());
        assert_eq!(value["users"].as_sequence().unwrap().len(), 1);
    }

    #[test]
    fn build_writes_ca_path_when_source_referenced_a_file() {
        let cluster = GardenCluster {
            server: "https://g".into(),
            insecure_skip_tls_verify: true,
            certificate_authority: CertificateAuthority::File("/etc/ca.crt".into()),
        };
        let prepared = PreparedRequest::generate(&Subject::seed("s").unwrap()).unwrap();
        let reparsed =
            ParsedKubeconfig::parse(&build(&cluster, b"CERT", &prepared.key_pem), "test").unwrap();
        assert_eq!(reparsed.cluster, cluster);
    }
}
