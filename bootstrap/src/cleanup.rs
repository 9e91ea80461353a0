//! Removing the bootstrap credential from the garden once the seed has its own certificate (spec §1.6).

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::DeleteParams;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use crate::error::is_not_found;
use crate::names::{
    BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_PREFIX, BOOTSTRAP_TOKEN_USER_PREFIX,
    SEED_BOOTSTRAPPER_CLUSTER_ROLE, SERVICE_ACCOUNT_USER_PREFIX,
};

/// A garden object that carried the bootstrap credential.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BootstrapCredential {
    /// Secret `kube-system/bootstrap-token-<id>`.
    TokenSecret {
        /// The token id.
        token_id: String,
    },
    /// ServiceAccount `<namespace>/<name>` and ClusterRoleBinding `gardener.cloud:system:seed-bootstrapper:<ns>:<name>`.
    ServiceAccount {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
}

/// Which bootstrap credential a CSR requester name points to, if any.
pub fn bootstrap_credential(username: &str) -> Option<BootstrapCredential> {
    if let Some(token_id) = username.strip_prefix(BOOTSTRAP_TOKEN_USER_PREFIX) {
        return (!token_id.is_empty()).then(|| BootstrapCredential::TokenSecret {
            token_id: token_id.to_owned(),
        });
    }
    let rest = username.strip_prefix(SERVICE_ACCOUNT_USER_PREFIX)?;
    let (namespace, name) = rest.split_once(':')?;
    (!namespace.is_empty() && !name.is_empty()).then(|| BootstrapCredential::ServiceAccount {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
    })
}

/// Deletes the bootstrap credential that created `csr`, using the seed's new garden client, in
/// the background until it is gone.
///
/// Upstream aborts startup when this fails; here startup continues (the seed already has a working
/// credential) and each deletion is retried with backoff (1 s doubling to 5 min) until it succeeds
/// or the object is gone, so a token the garden did not yet let the seed delete (RBAC, or the seed
/// authorizer, which allows only `bootstrap-token-<sha256("garden--<seed>")[:6]>`) does not stay
/// valid in the garden. The first refusal is a WARN; retries log at debug.
pub async fn delete_bootstrap_credentials(garden: &kube::Client, csr: &CertificateSigningRequest) {
    let Some(credential) = csr.spec.username.as_deref().and_then(bootstrap_credential) else {
        return;
    };
    match credential {
        BootstrapCredential::TokenSecret { token_id } => {
            let api: Api<Secret> = Api::namespaced(garden.clone(), BOOTSTRAP_TOKEN_NAMESPACE);
            let name = format!("{BOOTSTRAP_TOKEN_SECRET_PREFIX}{token_id}");
            tokio::spawn(delete_until_gone(api, "Secret", name));
        }
        BootstrapCredential::ServiceAccount { namespace, name } => {
            let accounts: Api<ServiceAccount> = Api::namespaced(garden.clone(), &namespace);
            let binding = format!("{SEED_BOOTSTRAPPER_CLUSTER_ROLE}:{namespace}:{name}");
            tokio::spawn(delete_until_gone(accounts, "ServiceAccount", name));
            let bindings: Api<ClusterRoleBinding> = Api::all(garden.clone());
            tokio::spawn(delete_until_gone(bindings, "ClusterRoleBinding", binding));
        }
    }
}

/// First and longest pause between deletion attempts.
const RETRY_FIRST: std::time::Duration = std::time::Duration::from_secs(1);
const RETRY_MAX: std::time::Duration = std::time::Duration::from_secs(300);

async fn delete_until_gone<K>(api: Api<K>, kind: &'static str, name: String)
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut delay = RETRY_FIRST;
    let mut warned = false;
    loop {
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {
                tracing::info!(kind, name = %name, "deleted bootstrap credential in garden");
                return;
            }
            Err(error) if is_not_found(&error) => return,
            Err(error) if !warned => {
                warned = true;
                tracing::warn!(
                    kind, name = %name, error = %seedlet_runtime::error_chain(&error),
                    "could not delete bootstrap credential in garden; retrying until it is gone"
                );
            }
            Err(error) => {
                tracing::debug!(kind, name = %name, error = %seedlet_runtime::error_chain(&error), "bootstrap credential still not deleted")
            }
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(RETRY_MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_token_user_points_to_token_secret() {
        assert_eq!(
            bootstrap_credential("system:bootstrap:abc123"),
            Some(BootstrapCredential::TokenSecret {
                token_id: "abc123".into()
            })
        );
    }

    #[test]
    fn service_account_user_points_to_account_and_binding() {
        assert_eq!(
            bootstrap_credential("system:serviceaccount:garden:gardenlet-bootstrap-s"),
            Some(BootstrapCredential::ServiceAccount {
                namespace: "garden".into(),
                name: "gardenlet-bootstrap-s".into()
            })
        );
    }

    #[test]
    fn other_users_point_to_nothing() {
        assert_eq!(bootstrap_credential("gardener.cloud:system:seed:s"), None);
        assert_eq!(bootstrap_credential("system:bootstrap:"), None);
        assert_eq!(bootstrap_credential("system:serviceaccount:garden"), None);
    }
}
