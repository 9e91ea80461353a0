//! Whether anything in a project namespace is in use (spec §3.4 step 4), from listed objects:
//! Shoots or BackupEntries in it, credentials in it that a binding used by a Shoot refers to,
//! Quotas in it that such a binding lists.

use kube::ResourceExt;
use seedlet_api::core::{CredentialsBinding, QuotaReference, SecretBinding, Shoot};
use seedlet_api::security::CredentialsReference;

/// Secret roles that never count as credentials.
const IGNORED_ROLES: [&str; 3] = ["kubeconfig", "ssh-keypair", "monitoring"];

/// A labelled credential in the project namespace: `(apiVersion, kind, name, labels)`.
#[derive(Debug, Clone)]
pub struct Credential {
    /// `v1`, `security.gardener.cloud/v1alpha1`, ...
    pub api_version: String,
    /// `Secret`, `WorkloadIdentity`, ...
    pub kind: String,
    /// Name.
    pub name: String,
    /// Labels.
    pub labels: std::collections::BTreeMap<String, String>,
}

/// Everything the decision reads.
#[derive(Debug, Default)]
pub struct Inputs<'a> {
    /// The project namespace.
    pub namespace: &'a str,
    /// Whether it holds Shoots or BackupEntries.
    pub has_shoots_or_backup_entries: bool,
    /// Shoots of all namespaces.
    pub shoots: &'a [Shoot],
    /// SecretBindings of all namespaces.
    pub secret_bindings: &'a [SecretBinding],
    /// CredentialsBindings of all namespaces.
    pub credentials_bindings: &'a [CredentialsBinding],
    /// Credentials in the project namespace.
    pub credentials: &'a [Credential],
    /// Names of the Quotas in the project namespace.
    pub quotas: &'a [String],
}

fn used_by_shoot(namespace: &str, name: &str, shoots: &[Shoot], secret: bool) -> bool {
    shoots.iter().any(|shoot| {
        let field = if secret {
            &shoot.spec.secret_binding_name
        } else {
            &shoot.spec.credentials_binding_name
        };
        shoot.namespace().as_deref() == Some(namespace) && field.as_deref() == Some(name)
    })
}

fn labelled(credential: &Credential, label: &str) -> bool {
    credential.labels.get(label).map(String::as_str) == Some("true")
        && !credential
            .labels
            .get("gardener.cloud/role")
            .is_some_and(|role| IGNORED_ROLES.contains(&role.as_str()))
}

fn lists(quotas: &[QuotaReference], binding_namespace: &str, namespace: &str, name: &str) -> bool {
    quotas
        .iter()
        .any(|q| q.name == name && q.namespace.as_deref().unwrap_or(binding_namespace) == namespace)
}

/// The decision of step 4.
pub fn in_use(inputs: &Inputs<'_>) -> bool {
    if inputs.has_shoots_or_backup_entries {
        return true;
    }
    let ns = inputs.namespace;
    let used_secret_bindings: Vec<&SecretBinding> = inputs
        .secret_bindings
        .iter()
        .filter(|b| {
            used_by_shoot(
                &b.namespace().unwrap_or_default(),
                &b.name_any(),
                inputs.shoots,
                true,
            )
        })
        .collect();
    let used_credentials_bindings: Vec<&CredentialsBinding> = inputs
        .credentials_bindings
        .iter()
        .filter(|b| {
            used_by_shoot(
                &b.namespace().unwrap_or_default(),
                &b.name_any(),
                inputs.shoots,
                false,
            )
        })
        .collect();
    let secret_used = inputs.credentials.iter().any(|c| {
        c.api_version == "v1"
            && c.kind == "Secret"
            && labelled(c, "reference.gardener.cloud/secretbinding")
            && used_secret_bindings.iter().any(|b| {
                let binding_ns = b.namespace().unwrap_or_default();
                let secret = b.secret_ref();
                secret.name == c.name && secret.namespace.as_deref().unwrap_or(&binding_ns) == ns
            })
    });
    let credential_used = inputs.credentials.iter().any(|c| {
        labelled(c, "reference.gardener.cloud/credentialsbinding")
            && used_credentials_bindings.iter().any(|b| {
                b.credentials_ref()
                    == CredentialsReference {
                        api_version: c.api_version.clone(),
                        kind: c.kind.clone(),
                        namespace: ns.to_owned(),
                        name: c.name.clone(),
                    }
            })
    });
    let quota_used = inputs.quotas.iter().any(|quota| {
        used_secret_bindings
            .iter()
            .any(|b| lists(&b.quotas, &b.namespace().unwrap_or_default(), ns, quota))
            || used_credentials_bindings
                .iter()
                .any(|b| lists(&b.quotas, &b.namespace().unwrap_or_default(), ns, quota))
    });
    secret_used || credential_used || quota_used
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shoot(namespace: &str, binding: &str) -> Shoot {
        serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": "s", "namespace": namespace},
            "spec": {"provider": {"type": "local"}, "region": "r", "secretBindingName": binding}
        }))
        .expect("shoot")
    }

    fn binding(namespace: &str, secret_namespace: &str) -> SecretBinding {
        serde_json::from_value(json!({
            "metadata": {"name": "b", "namespace": namespace},
            "secretRef": {"name": "creds", "namespace": secret_namespace},
            "quotas": [{"name": "q", "namespace": "garden-p"}]
        }))
        .expect("binding")
    }

    fn secret(role: Option<&str>) -> Credential {
        let mut labels = std::collections::BTreeMap::from([(
            "reference.gardener.cloud/secretbinding".to_owned(),
            "true".to_owned(),
        )]);
        if let Some(role) = role {
            labels.insert("gardener.cloud/role".into(), role.into());
        }
        Credential {
            api_version: "v1".into(),
            kind: "Secret".into(),
            name: "creds".into(),
            labels,
        }
    }

    #[test]
    fn a_secret_used_through_a_binding_in_another_project_counts() {
        let shoots = [shoot("garden-other", "b")];
        let bindings = [binding("garden-other", "garden-p")];
        let credentials = [secret(None)];
        let inputs = Inputs {
            namespace: "garden-p",
            shoots: &shoots,
            secret_bindings: &bindings,
            credentials: &credentials,
            ..Default::default()
        };
        assert!(in_use(&inputs));
        let ignored = [secret(Some("kubeconfig"))];
        assert!(!in_use(&Inputs {
            credentials: &ignored,
            ..inputs
        }));
        let unused_shoots = [shoot("garden-other", "x")];
        assert!(!in_use(&Inputs {
            shoots: &unused_shoots,
            credentials: &credentials,
            ..inputs
        }));
        let quotas = ["q".to_owned()];
        assert!(in_use(&Inputs {
            credentials: &[],
            quotas: &quotas,
            ..inputs
        }));
        assert!(in_use(&Inputs {
            has_shoots_or_backup_entries: true,
            shoots: &[],
            ..inputs
        }));
    }
}
