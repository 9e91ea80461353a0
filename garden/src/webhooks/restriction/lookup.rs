//! [`KubeLookup`]: the live reads SeedRestriction decides from, through the garden controller's
//! client.

use serde_json::Value;

use super::Lookup;

/// Reads objects from the garden (the kinds the rules look at; anything else counts as absent).
pub struct KubeLookup {
    /// Garden client.
    pub client: kube::Client,
}

impl std::fmt::Debug for KubeLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeLookup").finish_non_exhaustive()
    }
}

/// `(version, kind, namespaced)` of the (group, resource) pairs the webhook reads.
fn served(group: &str, resource: &str) -> Option<(&'static str, &'static str, bool)> {
    Some(match (group, resource) {
        ("core.gardener.cloud", "seeds") => ("v1beta1", "Seed", false),
        ("core.gardener.cloud", "shoots") => ("v1beta1", "Shoot", true),
        ("core.gardener.cloud", "backupbuckets") => ("v1beta1", "BackupBucket", false),
        ("core.gardener.cloud", "backupentries") => ("v1beta1", "BackupEntry", true),
        ("core.gardener.cloud", "shootstates") => ("v1beta1", "ShootState", true),
        ("core.gardener.cloud", "internalsecrets") => ("v1beta1", "InternalSecret", true),
        ("seedmanagement.gardener.cloud", "managedseeds") => ("v1alpha1", "ManagedSeed", true),
        ("seedmanagement.gardener.cloud", "gardenlets") => ("v1alpha1", "Gardenlet", true),
        ("operations.gardener.cloud", "bastions") => ("v1alpha1", "Bastion", true),
        ("", "configmaps") => ("v1", "ConfigMap", true),
        ("", "secrets") => ("v1", "Secret", true),
        ("", "serviceaccounts") => ("v1", "ServiceAccount", true),
        ("coordination.k8s.io", "leases") => ("v1", "Lease", true),
        ("rbac.authorization.k8s.io", "clusterrolebindings") => ("v1", "ClusterRoleBinding", false),
        ("certificates.k8s.io", "certificatesigningrequests") => {
            ("v1", "CertificateSigningRequest", false)
        }
        _ => return None,
    })
}

/// The dynamic API resource of a (group, resource) the rules read, and whether it is namespaced.
fn api_resource(group: &str, resource: &str) -> Option<(kube::api::ApiResource, bool)> {
    let (version, kind, namespaced) = served(group, resource)?;
    let gvk = kube::api::GroupVersionKind::gvk(group, version, kind);
    Some((
        kube::api::ApiResource::from_gvk_with_plural(&gvk, resource),
        namespaced,
    ))
}

impl Lookup for KubeLookup {
    async fn get(
        &self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, String> {
        let Some((api_resource, namespaced)) = api_resource(group, resource) else {
            return Ok(None);
        };
        if name.is_empty() {
            return Ok(None);
        }
        let api: kube::Api<kube::api::DynamicObject> = if namespaced {
            kube::Api::namespaced_with(self.client.clone(), namespace, &api_resource)
        } else {
            kube::Api::all_with(self.client.clone(), &api_resource)
        };
        match api.get_opt(name).await {
            Ok(found) => Ok(found.and_then(|object| serde_json::to_value(object).ok())),
            // A kind the garden does not serve has no objects.
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(error) => Err(error.to_string()),
        }
    }

    async fn list(&self, group: &str, resource: &str) -> Result<Vec<Value>, String> {
        let Some((api_resource, _)) = api_resource(group, resource) else {
            return Ok(Vec::new());
        };
        let api: kube::Api<kube::api::DynamicObject> =
            kube::Api::all_with(self.client.clone(), &api_resource);
        match api.list(&kube::api::ListParams::default()).await {
            Ok(list) => Ok(list
                .items
                .into_iter()
                .filter_map(|object| serde_json::to_value(object).ok())
                .collect()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(Vec::new()),
            Err(error) => Err(error.to_string()),
        }
    }
}
