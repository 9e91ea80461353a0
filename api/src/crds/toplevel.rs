//! CRDs for Gardener kinds whose fields sit at the top level (no `spec`) and that have no CRD of
//! their own: ExposureClass. kube's derive needs a `spec`, so these are written here:
//! one version, a schema that keeps every field (`x-kubernetes-preserve-unknown-fields`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;

/// The CRD of top-level kind `K` (`namespaced` or cluster-scoped) with `short` names.
pub(crate) fn crd<K: Resource<DynamicType = ()>>(
    namespaced: bool,
    short: &[&str],
) -> CustomResourceDefinition {
    let (group, version, kind, plural) =
        (K::group(&()), K::version(&()), K::kind(&()), K::plural(&()));
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {
                "kind": kind,
                "listKind": format!("{kind}List"),
                "plural": plural,
                "singular": kind.to_lowercase(),
                "shortNames": short,
            },
            "scope": if namespaced { "Namespaced" } else { "Cluster" },
            "versions": [{
                "name": version,
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                }},
            }],
        },
    }))
    .expect("a well-formed CRD")
}
