//! The resource types the server knows: built-in kinds and the ones custom resource definitions add.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

/// Verbs of an ordinary built-in resource, in the order kube-apiserver lists them in discovery.
const BUILTIN_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// Verbs of a custom resource, in the order the apiextensions server lists them.
const CUSTOM_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];
/// Verbs of a status-like subresource.
const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

/// How a resource behaves beyond plain storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// Stored and served as-is.
    Plain,
    /// Only `create` is served and the answer is computed (access reviews).
    Review,
}

/// The subresource a request addresses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Subresource {
    /// The object itself.
    #[default]
    None,
    /// `status`: only the status of the object is written.
    Status,
    /// `approval` of a CertificateSigningRequest: only its Approved/Denied conditions.
    Approval,
    /// `finalize` of a Namespace: only its `spec.finalizers`.
    Finalize,
    /// Any other name (served by no type, answered 404 after authorization).
    Other(String),
}

impl Subresource {
    /// The subresource named by a path segment (`""` for none).
    pub fn parse(name: &str) -> Self {
        match name {
            "" => Subresource::None,
            "status" => Subresource::Status,
            "approval" => Subresource::Approval,
            "finalize" => Subresource::Finalize,
            other => Subresource::Other(other.to_string()),
        }
    }

    /// The path segment (`""` for none).
    pub fn as_str(&self) -> &str {
        match self {
            Subresource::None => "",
            Subresource::Status => "status",
            Subresource::Approval => "approval",
            Subresource::Finalize => "finalize",
            Subresource::Other(name) => name,
        }
    }

    /// Whether the request addresses the object itself.
    pub fn is_none(&self) -> bool {
        *self == Subresource::None
    }
}

/// One servable resource (a kind in a group/version, with its plural name).
#[derive(Clone, Debug)]
pub struct ResourceType {
    /// API group, empty for the core group.
    pub group: String,
    /// Served version.
    pub version: String,
    /// Kind of the objects.
    pub kind: String,
    /// Kind of lists of the objects.
    pub list_kind: String,
    /// Plural (URL) name.
    pub plural: String,
    /// Singular name; empty for built-ins, as kube-apiserver v1.24 serves it.
    pub singular: String,
    /// Whether the objects live in namespaces.
    pub namespaced: bool,
    /// Short names for kubectl.
    pub short_names: Vec<String>,
    /// Categories such as `all`.
    pub categories: Vec<String>,
    /// Whether a `status` subresource splits status from the rest of the object.
    pub status_subresource: bool,
    /// Further subresources served with get/patch/update (e.g. `approval`).
    pub extra_subresources: Vec<String>,
    /// Whether `metadata.generation` is maintained.
    pub generation: bool,
    /// Whether this type comes from a CustomResourceDefinition.
    pub custom: bool,
    /// The structural schema of a custom resource (`openAPIV3Schema`), if any.
    pub schema: Option<Value>,
    /// What the server does with requests for this type.
    pub behaviour: Behaviour,
    /// A custom resource version's `additionalPrinterColumns` (empty for built-ins).
    pub printer_columns: Vec<Value>,
    /// A custom resource version's `selectableFields` as field-selector labels (`spec.seedName`).
    pub selectable_fields: Vec<String>,
}

impl ResourceType {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The key objects are stored under: `plural` or `plural.group`.
    pub fn storage_key(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `plural.group` as kube-apiserver names the resource in messages (`secrets`, `leases.coordination.k8s.io`).
    pub fn qualified_plural(&self) -> String {
        self.storage_key()
    }

    /// `Kind.group` as used in validation messages (`Secret`, `Widget.kc.example.com`).
    pub fn qualified_kind(&self, kind: &str) -> String {
        if self.group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{}", self.group)
        }
    }

    /// Whether the resource has the named subresource.
    pub fn has_subresource(&self, subresource: &Subresource) -> bool {
        match subresource {
            Subresource::None => true,
            Subresource::Status => self.status_subresource,
            // Namespaces are finalized through their own subresource.
            Subresource::Finalize => self.plural == "namespaces" && self.group.is_empty(),
            other => self.extra_subresources.iter().any(|s| s == other.as_str()),
        }
    }

    /// The discovery entries (resource and subresources) of this type.
    pub fn discovery_entries(&self) -> Vec<Value> {
        let verbs: &[&str] = match self.behaviour {
            Behaviour::Review => &["create"],
            Behaviour::Plain if self.custom => CUSTOM_VERBS,
            Behaviour::Plain if self.plural == "namespaces" => &[
                "create", "delete", "get", "list", "patch", "update", "watch",
            ],
            Behaviour::Plain => BUILTIN_VERBS,
        };
        let mut main = serde_json::Map::new();
        main.insert("name".into(), json!(self.plural));
        main.insert("singularName".into(), json!(self.singular));
        main.insert("namespaced".into(), json!(self.namespaced));
        main.insert("kind".into(), json!(self.kind));
        main.insert("verbs".into(), json!(verbs));
        if !self.short_names.is_empty() {
            main.insert("shortNames".into(), json!(self.short_names));
        }
        if !self.categories.is_empty() {
            main.insert("categories".into(), json!(self.categories));
        }
        let mut out = vec![Value::Object(main)];
        let mut subresources: Vec<&str> =
            self.extra_subresources.iter().map(String::as_str).collect();
        if self.status_subresource {
            subresources.push("status");
        }
        subresources.sort_unstable();
        for sub in subresources {
            out.push(json!({
                "name": format!("{}/{sub}", self.plural),
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": self.kind,
                "verbs": SUBRESOURCE_VERBS,
            }));
        }
        out
    }
}

/// Compact description of a built-in type, expanded by [`builtin_types`].
struct Builtin {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    status: bool,
    generation: bool,
    /// Discovery categories (`all` for `kubectl get all`, `api-extensions`).
    categories: &'static [&'static str],
}

const fn builtin(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
) -> Builtin {
    Builtin {
        group,
        version,
        kind,
        plural,
        namespaced: true,
        short_names: &[],
        status: false,
        generation: false,
        categories: &[],
    }
}

impl Builtin {
    const fn cluster(mut self) -> Self {
        self.namespaced = false;
        self
    }
    const fn short(mut self, names: &'static [&'static str]) -> Self {
        self.short_names = names;
        self
    }
    const fn status(mut self) -> Self {
        self.status = true;
        self
    }
    const fn generation(mut self) -> Self {
        self.generation = true;
        self
    }
    const fn all(mut self) -> Self {
        self.categories = &["all"];
        self
    }
    /// kube-apiserver's `api-extensions` category: the kinds that extend the API.
    const fn api_extension(mut self) -> Self {
        self.categories = &["api-extensions"];
        self
    }
}

const BUILTINS: &[Builtin] = &[
    builtin("", "v1", "Namespace", "namespaces")
        .cluster()
        .short(&["ns"])
        .status(),
    builtin("", "v1", "Secret", "secrets"),
    builtin("", "v1", "ConfigMap", "configmaps").short(&["cm"]),
    builtin("", "v1", "ServiceAccount", "serviceaccounts").short(&["sa"]),
    builtin("", "v1", "Event", "events").short(&["ev"]),
    builtin("", "v1", "Service", "services")
        .short(&["svc"])
        .status()
        .all(),
    builtin("", "v1", "Endpoints", "endpoints").short(&["ep"]),
    builtin("", "v1", "Pod", "pods")
        .short(&["po"])
        .status()
        .all(),
    builtin("", "v1", "Node", "nodes")
        .cluster()
        .short(&["no"])
        .status(),
    builtin("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims")
        .short(&["pvc"])
        .status(),
    builtin("", "v1", "PersistentVolume", "persistentvolumes")
        .cluster()
        .short(&["pv"])
        .status(),
    builtin("", "v1", "ResourceQuota", "resourcequotas")
        .short(&["quota"])
        .status(),
    builtin("", "v1", "LimitRange", "limitranges").short(&["limits"]),
    builtin("apps", "v1", "Deployment", "deployments")
        .short(&["deploy"])
        .status()
        .generation()
        .all(),
    builtin("apps", "v1", "StatefulSet", "statefulsets")
        .short(&["sts"])
        .status()
        .generation()
        .all(),
    builtin("apps", "v1", "DaemonSet", "daemonsets")
        .short(&["ds"])
        .status()
        .generation()
        .all(),
    builtin("apps", "v1", "ReplicaSet", "replicasets")
        .short(&["rs"])
        .status()
        .generation()
        .all(),
    builtin("apps", "v1", "ControllerRevision", "controllerrevisions"),
    builtin("batch", "v1", "Job", "jobs")
        .status()
        .generation()
        .all(),
    builtin("batch", "v1", "CronJob", "cronjobs")
        .short(&["cj"])
        .status()
        .generation()
        .all(),
    builtin(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
    )
    .short(&["hpa"])
    .status()
    .generation()
    .all(),
    builtin("coordination.k8s.io", "v1", "Lease", "leases"),
    builtin(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
    )
    .cluster()
    .short(&["csr"])
    .status(),
    builtin(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    )
    .cluster()
    .short(&["crd", "crds"])
    .status()
    .generation()
    .api_extension(),
    builtin("rbac.authorization.k8s.io", "v1", "Role", "roles"),
    builtin(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
    ),
    builtin(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
    )
    .cluster(),
    builtin(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
    )
    .cluster(),
    builtin(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
    )
    .cluster()
    .generation()
    .api_extension(),
    builtin(
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
    )
    .cluster()
    .generation()
    .api_extension(),
    builtin(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
    )
    .cluster()
    .short(&["pc"]),
    builtin(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
    )
    .short(&["pdb"])
    .status()
    .generation(),
    builtin(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
    )
    .short(&["netpol"])
    .generation(),
    builtin("networking.k8s.io", "v1", "Ingress", "ingresses")
        .short(&["ing"])
        .status()
        .generation(),
    builtin("networking.k8s.io", "v1", "IngressClass", "ingressclasses").cluster(),
    builtin("storage.k8s.io", "v1", "StorageClass", "storageclasses")
        .cluster()
        .short(&["sc"]),
    builtin("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices"),
];

/// The access- and rules-review kinds: served with `create` only and answered from RBAC.
const REVIEWS: &[(&str, &str, bool)] = &[
    ("SubjectAccessReview", "subjectaccessreviews", false),
    ("SelfSubjectAccessReview", "selfsubjectaccessreviews", false),
    ("SelfSubjectRulesReview", "selfsubjectrulesreviews", false),
    (
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        true,
    ),
];

/// All built-in resource types.
pub fn builtin_types() -> Vec<ResourceType> {
    let mut out: Vec<ResourceType> = BUILTINS
        .iter()
        .map(|b| ResourceType {
            group: b.group.to_string(),
            version: b.version.to_string(),
            kind: b.kind.to_string(),
            list_kind: format!("{}List", b.kind),
            plural: b.plural.to_string(),
            // kube-apiserver >= 1.27 names a built-in's singular form in discovery.
            singular: b.kind.to_lowercase(),
            namespaced: b.namespaced,
            short_names: b.short_names.iter().map(|s| s.to_string()).collect(),
            categories: b.categories.iter().map(|c| c.to_string()).collect(),
            status_subresource: b.status,
            extra_subresources: if b.plural == "certificatesigningrequests" {
                vec!["approval".to_string()]
            } else {
                Vec::new()
            },
            generation: b.generation,
            custom: false,
            schema: None,
            behaviour: Behaviour::Plain,
            printer_columns: Vec::new(),
            selectable_fields: Vec::new(),
        })
        .collect();
    for (kind, plural, namespaced) in REVIEWS {
        out.push(ResourceType {
            group: "authorization.k8s.io".into(),
            version: "v1".into(),
            kind: (*kind).into(),
            list_kind: format!("{kind}List"),
            plural: (*plural).into(),
            singular: kind.to_lowercase(),
            namespaced: *namespaced,
            short_names: Vec::new(),
            categories: Vec::new(),
            status_subresource: false,
            extra_subresources: Vec::new(),
            generation: false,
            custom: false,
            schema: None,
            behaviour: Behaviour::Review,
            printer_columns: Vec::new(),
            selectable_fields: Vec::new(),
        });
    }
    out
}

/// Index of servable types by group/version/plural, rebuilt when CRDs change.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    /// `(group, version, plural)` → type.
    by_path: BTreeMap<(String, String, String), Arc<ResourceType>>,
    /// Group order for discovery: built-in groups first in their fixed order, then custom groups.
    group_order: Vec<String>,
}

impl Registry {
    /// A registry of the built-in types plus `custom` ones.
    pub fn new(custom: Vec<ResourceType>) -> Self {
        let mut registry = Registry::default();
        for rt in builtin_types().into_iter().chain(custom) {
            if !registry.group_order.contains(&rt.group) {
                registry.group_order.push(rt.group.clone());
            }
            let key = (rt.group.clone(), rt.version.clone(), rt.plural.clone());
            registry.by_path.entry(key).or_insert_with(|| Arc::new(rt));
        }
        registry
    }

    /// The type served at `group/version/plural`.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.by_path
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// The type for `apiVersion` + `kind` (used for owner references).
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceType>> {
        let (group, version) = split_api_version(api_version);
        self.by_path
            .values()
            .find(|rt| rt.group == group && rt.version == version && rt.kind == kind)
            .cloned()
    }

    /// Every served type (one per group/version/plural).
    pub fn types(&self) -> impl Iterator<Item = &Arc<ResourceType>> {
        self.by_path.values()
    }

    /// The (first) type stored under a storage key.
    pub fn by_storage_key(&self, key: &str) -> Option<Arc<ResourceType>> {
        self.by_path
            .values()
            .find(|rt| rt.storage_key() == key)
            .cloned()
    }

    /// Whether a group/version is served at all.
    pub fn serves_group_version(&self, group: &str, version: &str) -> bool {
        self.by_path
            .keys()
            .any(|(g, v, _)| g == group && v == version)
    }

    /// Types of one group/version in discovery order.
    pub fn group_version_types(&self, group: &str, version: &str) -> Vec<Arc<ResourceType>> {
        let mut out: Vec<Arc<ResourceType>> = self
            .by_path
            .values()
            .filter(|rt| rt.group == group && rt.version == version)
            .cloned()
            .collect();
        out.sort_by(|a, b| a.plural.cmp(&b.plural));
        out
    }

    /// Non-core groups with their versions, in discovery order.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        self.group_order
            .iter()
            .filter(|g| !g.is_empty())
            .map(|g| {
                let mut versions: Vec<String> = self
                    .by_path
                    .keys()
                    .filter(|(kg, _, _)| kg == g)
                    .map(|(_, v, _)| v.clone())
                    .collect();
                versions.dedup();
                versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
                (g.clone(), versions)
            })
            .collect()
    }
}

/// Splits `group/version` (or `version` for core) into its parts.
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

/// Kubernetes version ordering: GA > beta > alpha, higher numbers first.
fn version_priority(version: &str) -> (u8, u32, u32) {
    let Some(rest) = version.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major: u32 = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        return (3, major, 0);
    }
    let (stage, number) = if let Some(n) = tail.strip_prefix("beta") {
        (2, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n)
    } else {
        (0, "0")
    };
    (stage, major, number.parse().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_finds_builtin_by_path_and_kind() {
        let registry = Registry::new(Vec::new());
        let leases = registry
            .lookup("coordination.k8s.io", "v1", "leases")
            .expect("leases are built in");
        assert_eq!(leases.kind, "Lease");
        assert_eq!(leases.storage_key(), "leases.coordination.k8s.io");
        assert!(registry.by_kind("v1", "ConfigMap").is_some());
    }

    #[test]
    fn csr_discovery_lists_approval_and_status_subresources() {
        let registry = Registry::new(Vec::new());
        let csr = registry
            .lookup("certificates.k8s.io", "v1", "certificatesigningrequests")
            .expect("csr built in");
        let names: Vec<String> = csr
            .discovery_entries()
            .iter()
            .map(|e| e["name"].as_str().unwrap_or_default().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "certificatesigningrequests",
                "certificatesigningrequests/approval",
                "certificatesigningrequests/status"
            ]
        );
    }

    #[test]
    fn versions_sort_ga_before_beta_before_alpha() {
        let mut versions = vec!["v1alpha1", "v1", "v2beta1", "v1beta2"];
        versions.sort_by_key(|v| std::cmp::Reverse(version_priority(v)));
        assert_eq!(versions, ["v1", "v2beta1", "v1beta2", "v1alpha1"]);
    }
}
