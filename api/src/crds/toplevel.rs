//! CRDs for Gardener kinds whose fields sit at the top level beside `metadata` (no `spec`):
//! ExposureClass, SecretBinding and CredentialsBinding. kube's derive needs a `spec`, so these
//! are assembled here from a typed schema of the top-level fields (one version).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition,
};
use kube::Resource;
use schemars::JsonSchema;
use serde_json::json;

/// Description of `apiVersion` (kube-apiserver's wording is not reused; the meaning is the same).
const API_VERSION_DOC: &str = "Versioned schema of this object's representation (group/version).";
/// Description of `kind`.
const KIND_DOC: &str = "Kind of this object (the REST resource it belongs to), in CamelCase.";

/// How a top-level kind is served: scope, short names and printer columns.
pub(crate) struct TopLevel<'a> {
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Short names for kubectl.
    pub short: &'a [&'a str],
    /// Printer columns as `(name, type, jsonPath)`.
    pub columns: &'a [(&'a str, &'a str, &'a str)],
}

/// The CRD of top-level kind `K` whose fields (besides `apiVersion`, `kind` and `metadata`) are
/// described by `S`.
pub(crate) fn crd<K: Resource<DynamicType = ()>, S: JsonSchema>(
    served: &TopLevel<'_>,
) -> CustomResourceDefinition {
    let (group, version, kind, plural) =
        (K::group(&()), K::version(&()), K::kind(&()), K::plural(&()));
    let mut schema = super::schema_of::<S>();
    if let Some(properties) = schema
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    {
        properties.insert(
            "apiVersion".into(),
            json!({"type": "string", "description": API_VERSION_DOC}),
        );
        properties.insert(
            "kind".into(),
            json!({"type": "string", "description": KIND_DOC}),
        );
        properties.insert("metadata".into(), json!({"type": "object"}));
    }
    let columns: Vec<CustomResourceColumnDefinition> = served
        .columns
        .iter()
        .map(|(name, type_, json_path)| CustomResourceColumnDefinition {
            name: (*name).to_owned(),
            type_: (*type_).to_owned(),
            json_path: (*json_path).to_owned(),
            ..CustomResourceColumnDefinition::default()
        })
        .collect();
    let value = json!({
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
                "shortNames": served.short,
            },
            "scope": if served.namespaced { "Namespaced" } else { "Cluster" },
            "versions": [{
                "name": version,
                "served": true,
                "storage": true,
                "additionalPrinterColumns": columns,
                "schema": {"openAPIV3Schema": schema},
            }],
        },
    });
    // Built from a generated schema and fixed fields: a well-formed CRD document.
    serde_json::from_value(value).expect("a well-formed CRD")
}
