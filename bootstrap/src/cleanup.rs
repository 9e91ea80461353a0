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

/// Deletes the bootstrap credential that created `csr`, using the seed's new garden client.
///
/// Upstream aborts startup when this fails; here a failure (typically Forbidden, when the garden's authorizer
/// does not grant seeds this deletion) is logged and startup continues, since the seed already has a working
/// credential and the leftover token expires on its own.
pub async fn delete_bootstrap_credentials(garden: &kube::Client, csr: &CertificateSigningRequest) {
    let Some(credential) = csr.spec.username.as_deref().and_then(bootstrap_credential) else {
        return;
    };
    match credential {
        BootstrapCredential::TokenSecret { token_id } => {
            let api: Api<Secret> = Api::namespaced(garden.clone(), BOOTSTRAP_TOKEN_NAMESPACE);
            delete_logged(
                &api,
                "Secret",
                &format!("{BOOTSTRAP_TOKEN_SECRET_PREFIX}{token_id}"),
            )
            .await;
        }
        BootstrapCredential::ServiceAccount { namespace, name } => {
            let accounts: Api<ServiceAccount> = Api::namespaced(garden.clone(), &namespace);
            delete_logged(&accounts, "ServiceAccount", &name).await;
            let bindings: Api<ClusterRoleBinding> = Api::all(garden.clone());
            delete_logged(
                &bindings,
                "ClusterRoleBinding",
                &format!("{SEED_BOOTSTRAPPER_CLUSTER_ROLE}:{namespace}:{name}"),
            )
            .await;
        }
    }
}

async fn delete_logged<K>(api: &Api<K>, kind: &str, name: &str)
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => tracing::info!(kind, name, "deleted bootstrap credential in garden"),
        Err(error) if is_not_found(&error) => {}
        Err(error) => {
            tracing::warn!(kind, name, error = %error, "could not delete bootstrap credential in garden");
        }
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
