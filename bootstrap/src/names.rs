//! Well-known names of the TLS bootstrap protocol (spec §0), taken from `seedlet_api::names` under the names
//! this crate uses.

use seedlet_api::names::{annotations, csr, namespaces, objects};

/// Common-name prefix of a seed's garden client certificate; the seed name follows.
pub const SEED_COMMON_NAME_PREFIX: &str = csr::SEED_CN_PREFIX;
/// The one organization a seed's garden client certificate carries.
pub const SEED_ORGANIZATION: &str = csr::SEED_ORGANIZATION;
/// Name prefix of the CertificateSigningRequests a seed creates.
pub const SEED_CSR_NAME_PREFIX: &str = csr::SEED_NAME_PREFIX;
/// The signer that issues garden client certificates.
pub const KUBE_APISERVER_CLIENT_SIGNER: &str = csr::SIGNER;
/// Key usages of a garden client certificate, in the order they are requested.
pub const CLIENT_USAGES: [&str; 3] = csr::USAGES;
/// Annotation key for one-shot operations.
pub const OPERATION_ANNOTATION: &str = annotations::OPERATION;
/// Value of [`OPERATION_ANNOTATION`] on the kubeconfig Secret that requests a new certificate.
pub const OPERATION_RENEW: &str = annotations::OPERATION_RENEW;
/// Data key of the kubeconfig in the kubeconfig and bootstrap Secrets.
pub const KUBECONFIG_DATA_KEY: &str = objects::KUBECONFIG_KEY;
/// Name of the cluster, user and context in a kubeconfig written by the bootstrap.
pub const KUBECONFIG_ENTRY_NAME: &str = objects::KUBECONFIG_CONTEXT;
/// Username prefix of bootstrap-token users.
pub const BOOTSTRAP_TOKEN_USER_PREFIX: &str = csr::BOOTSTRAP_USER_PREFIX;
/// Username prefix of service-account users.
pub const SERVICE_ACCOUNT_USER_PREFIX: &str = csr::SERVICE_ACCOUNT_USER_PREFIX;
/// Namespace of bootstrap-token Secrets.
pub const BOOTSTRAP_TOKEN_NAMESPACE: &str = namespaces::KUBE_SYSTEM;
/// Name prefix of bootstrap-token Secrets; the token id follows.
pub const BOOTSTRAP_TOKEN_SECRET_PREFIX: &str = objects::BOOTSTRAP_TOKEN_SECRET_PREFIX;
/// Name prefix of the ClusterRoleBinding of a bootstrap service account (`<prefix>:<ns>:<name>`).
pub const SEED_BOOTSTRAPPER_CLUSTER_ROLE: &str = csr::SEED_BOOTSTRAPPER_CLUSTER_ROLE;
