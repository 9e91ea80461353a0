//! Well-known names of the TLS bootstrap protocol (spec §0), kept here until `seedlet_api::names` has them.

/// Common-name prefix of a seed's garden client certificate; the seed name follows.
pub const SEED_COMMON_NAME_PREFIX: &str = "gardener.cloud:system:seed:";
/// The one organization a seed's garden client certificate carries.
pub const SEED_ORGANIZATION: &str = "gardener.cloud:system:seeds";
/// Name prefix of the CertificateSigningRequests a seed creates.
pub const SEED_CSR_NAME_PREFIX: &str = "seed-csr-";
/// The signer that issues garden client certificates.
pub const KUBE_APISERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";
/// Key usages of a garden client certificate, in the order they are requested.
pub const CLIENT_USAGES: [&str; 3] = ["digital signature", "key encipherment", "client auth"];
/// Annotation key for one-shot operations.
pub const OPERATION_ANNOTATION: &str = "gardener.cloud/operation";
/// Value of [`OPERATION_ANNOTATION`] on the kubeconfig Secret that requests a new certificate.
pub const OPERATION_RENEW: &str = "renew";
/// Data key of the kubeconfig in the kubeconfig and bootstrap Secrets.
pub const KUBECONFIG_DATA_KEY: &str = "kubeconfig";
/// Name of the cluster, user and context in a kubeconfig written by the bootstrap.
pub const KUBECONFIG_ENTRY_NAME: &str = "gardenlet";
/// Username prefix of bootstrap-token users.
pub const BOOTSTRAP_TOKEN_USER_PREFIX: &str = "system:bootstrap:";
/// Namespace of bootstrap-token Secrets.
pub const BOOTSTRAP_TOKEN_NAMESPACE: &str = "kube-system";
/// Name prefix of bootstrap-token Secrets; the token id follows.
pub const BOOTSTRAP_TOKEN_SECRET_PREFIX: &str = "bootstrap-token-";
