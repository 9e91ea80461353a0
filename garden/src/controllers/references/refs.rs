//! Which Secrets, ConfigMaps and WorkloadIdentities a Shoot, Seed or ControllerDeployment
//! references (spec §2.8 table), read from the object's JSON, and which protected objects are
//! no longer referenced by anyone.

use std::collections::BTreeSet;

use serde_json::Value;

/// The referrer kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Shoot (references in its own namespace).
    Shoot,
    /// A Seed (references in `garden`).
    Seed,
    /// A ControllerDeployment (references in `garden`).
    ControllerDeployment,
}

/// Names referenced in one namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Refs {
    /// Secret names.
    pub secrets: BTreeSet<String>,
    /// ConfigMap names.
    pub config_maps: BTreeSet<String>,
    /// WorkloadIdentity names.
    pub workload_identities: BTreeSet<String>,
}

impl Refs {
    /// Whether nothing is referenced.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
            && self.config_maps.is_empty()
            && self.workload_identities.is_empty()
    }

    /// Adds everything `other` references.
    pub fn extend(&mut self, other: &Refs) {
        self.secrets.extend(other.secrets.iter().cloned());
        self.config_maps.extend(other.config_maps.iter().cloned());
        self.workload_identities
            .extend(other.workload_identities.iter().cloned());
    }
}

const WORKLOAD_IDENTITY_API: &str = "security.gardener.cloud/v1alpha1";

fn items<'a>(value: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn string(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Adds a typed reference (`{apiVersion, kind, name}`) to the matching set.
fn add_typed(refs: &mut Refs, reference: &Value, workload_identities: bool) {
    let (Some(api_version), Some(kind), Some(name)) = (
        string(reference, "/apiVersion"),
        string(reference, "/kind"),
        string(reference, "/name"),
    ) else {
        return;
    };
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "Secret") => {
            refs.secrets.insert(name);
        }
        ("v1", "ConfigMap") => {
            refs.config_maps.insert(name);
        }
        (WORKLOAD_IDENTITY_API, "WorkloadIdentity") if workload_identities => {
            refs.workload_identities.insert(name);
        }
        _ => {}
    }
}

/// The references of an object of `kind` (its JSON).
pub fn refs_of(kind: Kind, object: &Value) -> Refs {
    let mut refs = Refs::default();
    match kind {
        Kind::Shoot => {
            for provider in items(object, "/spec/dns/providers") {
                if let Some(reference) = provider.get("credentialsRef") {
                    add_typed(&mut refs, reference, true);
                }
            }
            let api_server = "/spec/kubernetes/kubeAPIServer";
            for plugin in items(object, &format!("{api_server}/admissionPlugins")) {
                refs.secrets.extend(string(plugin, "/kubeconfigSecretName"));
            }
            let authorization = format!("{api_server}/structuredAuthorization");
            for kubeconfig in items(object, &format!("{authorization}/kubeconfigs")) {
                refs.secrets.extend(string(kubeconfig, "/secretName"));
            }
            refs.config_maps.extend(string(
                object,
                &format!("{api_server}/auditConfig/auditPolicy/configMapRef/name"),
            ));
            refs.config_maps.extend(string(
                object,
                &format!("{api_server}/structuredAuthentication/configMapName"),
            ));
            refs.config_maps
                .extend(string(object, &format!("{authorization}/configMapName")));
            for resource in items(object, "/spec/resources") {
                if let Some(reference) = resource.get("resourceRef") {
                    add_typed(&mut refs, reference, true);
                }
            }
        }
        Kind::Seed => {
            for resource in items(object, "/spec/resources") {
                if let Some(reference) = resource.get("resourceRef") {
                    add_typed(&mut refs, reference, true);
                }
            }
        }
        Kind::ControllerDeployment => {
            for resource in items(object, "/resources") {
                if let Some(reference) = resource.get("resourceRef") {
                    add_typed(&mut refs, reference, false);
                }
            }
            for field in ["pullSecretRef", "caBundleSecretRef"] {
                refs.secrets
                    .extend(string(object, &format!("/helm/ociRepository/{field}/name")));
            }
        }
    }
    refs
}

/// The `spec.resources` / DNS / API server fields whose change triggers a reconcile (the inputs
/// of [`refs_of`]), as a change key.
pub fn trigger_key(kind: Kind, object: &Value) -> String {
    let pointers: &[&str] = match kind {
        Kind::Shoot => &[
            "/spec/dns",
            "/spec/kubernetes/kubeAPIServer/admissionPlugins",
            "/spec/kubernetes/kubeAPIServer/auditConfig",
            "/spec/kubernetes/kubeAPIServer/structuredAuthentication",
            "/spec/kubernetes/kubeAPIServer/structuredAuthorization",
            "/spec/resources",
        ],
        Kind::Seed => &["/spec/resources"],
        Kind::ControllerDeployment => &["/resources"],
    };
    let parts: Vec<Option<&Value>> = pointers.iter().map(|p| object.pointer(p)).collect();
    seedlet_runtime::triggers::key_of(&parts)
}

/// The protected names (carrying the finalizer) of one kind that no referrer needs any more.
pub fn unreferenced<'a>(protected: &'a [String], referenced: &BTreeSet<String>) -> Vec<&'a str> {
    protected
        .iter()
        .filter(|name| !referenced.contains(*name))
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn shoot_references_come_from_every_field_of_the_table() {
        let shoot = json!({"spec": {
            "dns": {"providers": [
                {"credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "dns"}},
                {"credentialsRef": {"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity", "name": "wi"}},
                {"secretName": "not-read"}
            ]},
            "kubernetes": {"kubeAPIServer": {
                "admissionPlugins": [{"name": "a", "kubeconfigSecretName": "plugin"}, {"name": "b"}],
                "structuredAuthorization": {"configMapName": "authz", "kubeconfigs": [{"authorizerName": "x", "secretName": "authz-kc"}]},
                "structuredAuthentication": {"configMapName": "authn"},
                "auditConfig": {"auditPolicy": {"configMapRef": {"name": "audit"}}}
            }},
            "resources": [
                {"name": "r1", "resourceRef": {"apiVersion": "v1", "kind": "Secret", "name": "res-secret"}},
                {"name": "r2", "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "res-cm"}},
                {"name": "r3", "resourceRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ignored"}}
            ]
        }});
        let refs = refs_of(Kind::Shoot, &shoot);
        assert_eq!(
            refs.secrets,
            set(&["authz-kc", "dns", "plugin", "res-secret"])
        );
        assert_eq!(
            refs.config_maps,
            set(&["audit", "authn", "authz", "res-cm"])
        );
        assert_eq!(refs.workload_identities, set(&["wi"]));
        assert!(refs_of(Kind::Shoot, &json!({"spec": {}})).is_empty());
    }

    #[test]
    fn seed_and_controller_deployment_references() {
        let seed = json!({"spec": {"resources": [
            {"name": "a", "resourceRef": {"apiVersion": "v1", "kind": "Secret", "name": "s"}},
            {"name": "b", "resourceRef": {"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity", "name": "w"}}
        ]}});
        let refs = refs_of(Kind::Seed, &seed);
        assert_eq!(
            (refs.secrets, refs.workload_identities),
            (set(&["s"]), set(&["w"]))
        );
        let deployment = json!({
            "helm": {"ociRepository": {"ref": "x", "pullSecretRef": {"name": "pull"}, "caBundleSecretRef": {"name": "ca"}}},
            "resources": [
                {"name": "c", "resourceRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm"}},
                {"name": "w", "resourceRef": {"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "WorkloadIdentity", "name": "no"}}
            ]
        });
        let refs = refs_of(Kind::ControllerDeployment, &deployment);
        assert_eq!(refs.secrets, set(&["ca", "pull"]));
        assert_eq!(refs.config_maps, set(&["cm"]));
        assert!(refs.workload_identities.is_empty());
    }

    #[test]
    fn trigger_key_ignores_unrelated_fields() {
        let a = json!({"spec": {"resources": [], "region": "a"}});
        let b = json!({"spec": {"resources": [], "region": "b"}});
        let c = json!({"spec": {"resources": [{"name": "x"}]}});
        assert_eq!(trigger_key(Kind::Shoot, &a), trigger_key(Kind::Shoot, &b));
        assert_ne!(trigger_key(Kind::Shoot, &a), trigger_key(Kind::Shoot, &c));
        // The OCI secret refs do not trigger ([QUIRK] kept: they rarely change).
        let d1 = json!({"helm": {"ociRepository": {"pullSecretRef": {"name": "a"}}}});
        let d2 = json!({"helm": {"ociRepository": {"pullSecretRef": {"name": "b"}}}});
        assert_eq!(
            trigger_key(Kind::ControllerDeployment, &d1),
            trigger_key(Kind::ControllerDeployment, &d2)
        );
    }

    #[test]
    fn unreferenced_keeps_order_and_drops_referenced_names() {
        let protected = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        assert_eq!(unreferenced(&protected, &set(&["b"])), ["a", "c"]);
    }
}
