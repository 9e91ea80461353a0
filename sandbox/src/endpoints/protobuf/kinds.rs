//! Field numbers of the built-in kinds kubectl's imperative commands post as protobuf (`kubectl
//! create namespace|secret|configmap|serviceaccount|deployment|job|quota|role|clusterrole|
//! rolebinding|clusterrolebinding`), as in `generated.proto` of `k8s.io/api` (`core/v1`, `apps/v1`,
//! `batch/v1`, `rbac/v1`) and `k8s.io/apimachinery` (`meta/v1`, `resource`, `intstr`).
//!
//! Each message lists the fields those commands (and their flags) set, plus the neighbouring
//! scalar fields of the same message; a field missing here is skipped when read, so the object is
//! stored without it. Status messages are left out: a create ignores the status it is sent.

use super::schema::{FieldType as T, Message, OBJECT_META, many, one, pointer};

/// `meta.v1.LabelSelectorRequirement`.
static LABEL_SELECTOR_REQUIREMENT: Message = Message {
    name: "LabelSelectorRequirement",
    fields: &[
        one(1, "key", T::String),
        one(2, "operator", T::String),
        many(3, "values", T::String),
    ],
};

/// `meta.v1.LabelSelector`.
static LABEL_SELECTOR: Message = Message {
    name: "LabelSelector",
    fields: &[
        one(1, "matchLabels", T::StringMap),
        many(
            2,
            "matchExpressions",
            T::Message(&LABEL_SELECTOR_REQUIREMENT),
        ),
    ],
};

/// An empty message (a status the server replaces anyway).
static EMPTY: Message = Message {
    name: "Status",
    fields: &[],
};

/// `core.v1.Namespace`.
static NAMESPACE: Message = Message {
    name: "Namespace",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "spec", T::Message(&NAMESPACE_SPEC)),
        one(3, "status", T::Message(&EMPTY)),
    ],
};

/// `core.v1.NamespaceSpec`.
static NAMESPACE_SPEC: Message = Message {
    name: "NamespaceSpec",
    fields: &[many(1, "finalizers", T::String)],
};

/// `core.v1.Secret`.
static SECRET: Message = Message {
    name: "Secret",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "data", T::BytesMap),
        one(3, "type", T::String),
        one(4, "stringData", T::StringMap),
        pointer(5, "immutable", T::Bool),
    ],
};

/// `core.v1.ConfigMap`.
static CONFIG_MAP: Message = Message {
    name: "ConfigMap",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "data", T::StringMap),
        one(3, "binaryData", T::BytesMap),
        pointer(4, "immutable", T::Bool),
    ],
};

/// `core.v1.ObjectReference`.
static OBJECT_REFERENCE: Message = Message {
    name: "ObjectReference",
    fields: &[
        one(1, "kind", T::String),
        one(2, "namespace", T::String),
        one(3, "name", T::String),
        one(4, "uid", T::String),
        one(5, "apiVersion", T::String),
        one(6, "resourceVersion", T::String),
        one(7, "fieldPath", T::String),
    ],
};

/// `core.v1.LocalObjectReference`.
static LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "LocalObjectReference",
    fields: &[one(1, "name", T::String)],
};

/// `core.v1.ServiceAccount`.
static SERVICE_ACCOUNT: Message = Message {
    name: "ServiceAccount",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        many(2, "secrets", T::Message(&OBJECT_REFERENCE)),
        many(3, "imagePullSecrets", T::Message(&LOCAL_OBJECT_REFERENCE)),
        pointer(4, "automountServiceAccountToken", T::Bool),
    ],
};

/// `core.v1.ContainerPort`.
static CONTAINER_PORT: Message = Message {
    name: "ContainerPort",
    fields: &[
        one(1, "name", T::String),
        one(2, "hostPort", T::Int),
        one(3, "containerPort", T::Int),
        one(4, "protocol", T::String),
        one(5, "hostIP", T::String),
    ],
};

/// `core.v1.EnvVar` (without `valueFrom`, which no create command sets).
static ENV_VAR: Message = Message {
    name: "EnvVar",
    fields: &[one(1, "name", T::String), one(2, "value", T::String)],
};

/// `core.v1.ResourceRequirements` (without `claims`).
static RESOURCE_REQUIREMENTS: Message = Message {
    name: "ResourceRequirements",
    fields: &[
        one(1, "limits", T::QuantityMap),
        one(2, "requests", T::QuantityMap),
    ],
};

/// `core.v1.Container`: the fields `kubectl create deployment|job` set and the plain ones beside them.
static CONTAINER: Message = Message {
    name: "Container",
    fields: &[
        one(1, "name", T::String),
        one(2, "image", T::String),
        many(3, "command", T::String),
        many(4, "args", T::String),
        one(5, "workingDir", T::String),
        many(6, "ports", T::Message(&CONTAINER_PORT)),
        many(7, "env", T::Message(&ENV_VAR)),
        one(8, "resources", T::Message(&RESOURCE_REQUIREMENTS)),
        one(13, "terminationMessagePath", T::String),
        one(14, "imagePullPolicy", T::String),
        one(16, "stdin", T::Bool),
        one(17, "stdinOnce", T::Bool),
        one(18, "tty", T::Bool),
        one(20, "terminationMessagePolicy", T::String),
    ],
};

/// `core.v1.PodSpec`: containers and the plain fields.
static POD_SPEC: Message = Message {
    name: "PodSpec",
    fields: &[
        many(2, "containers", T::Message(&CONTAINER)),
        one(3, "restartPolicy", T::String),
        pointer(4, "terminationGracePeriodSeconds", T::Int),
        pointer(5, "activeDeadlineSeconds", T::Int),
        one(6, "dnsPolicy", T::String),
        one(7, "nodeSelector", T::StringMap),
        one(8, "serviceAccountName", T::String),
        one(9, "serviceAccount", T::String),
        one(10, "nodeName", T::String),
        one(11, "hostNetwork", T::Bool),
        one(12, "hostPID", T::Bool),
        one(13, "hostIPC", T::Bool),
        many(15, "imagePullSecrets", T::Message(&LOCAL_OBJECT_REFERENCE)),
        one(16, "hostname", T::String),
        one(17, "subdomain", T::String),
        one(19, "schedulerName", T::String),
        many(20, "initContainers", T::Message(&CONTAINER)),
        pointer(21, "automountServiceAccountToken", T::Bool),
        one(24, "priorityClassName", T::String),
    ],
};

/// `core.v1.PodTemplateSpec`.
static POD_TEMPLATE_SPEC: Message = Message {
    name: "PodTemplateSpec",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "spec", T::Message(&POD_SPEC)),
    ],
};

/// `core.v1.ScopedResourceSelectorRequirement`.
static SCOPED_RESOURCE_SELECTOR_REQUIREMENT: Message = Message {
    name: "ScopedResourceSelectorRequirement",
    fields: &[
        one(1, "scopeName", T::String),
        one(2, "operator", T::String),
        many(3, "values", T::String),
    ],
};

/// `core.v1.ScopeSelector`.
static SCOPE_SELECTOR: Message = Message {
    name: "ScopeSelector",
    fields: &[many(
        1,
        "matchExpressions",
        T::Message(&SCOPED_RESOURCE_SELECTOR_REQUIREMENT),
    )],
};

/// `core.v1.ResourceQuotaSpec`.
static RESOURCE_QUOTA_SPEC: Message = Message {
    name: "ResourceQuotaSpec",
    fields: &[
        one(1, "hard", T::QuantityMap),
        many(2, "scopes", T::String),
        one(3, "scopeSelector", T::Message(&SCOPE_SELECTOR)),
    ],
};

/// `core.v1.ResourceQuota`.
static RESOURCE_QUOTA: Message = Message {
    name: "ResourceQuota",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "spec", T::Message(&RESOURCE_QUOTA_SPEC)),
        one(3, "status", T::Message(&EMPTY)),
    ],
};

/// `apps.v1.RollingUpdateDeployment`.
static ROLLING_UPDATE_DEPLOYMENT: Message = Message {
    name: "RollingUpdateDeployment",
    fields: &[
        pointer(1, "maxUnavailable", T::IntOrString),
        pointer(2, "maxSurge", T::IntOrString),
    ],
};

/// `apps.v1.DeploymentStrategy`.
static DEPLOYMENT_STRATEGY: Message = Message {
    name: "DeploymentStrategy",
    fields: &[
        one(1, "type", T::String),
        one(2, "rollingUpdate", T::Message(&ROLLING_UPDATE_DEPLOYMENT)),
    ],
};

/// `apps.v1.DeploymentSpec`.
static DEPLOYMENT_SPEC: Message = Message {
    name: "DeploymentSpec",
    fields: &[
        pointer(1, "replicas", T::Int),
        one(2, "selector", T::Message(&LABEL_SELECTOR)),
        one(3, "template", T::Message(&POD_TEMPLATE_SPEC)),
        one(4, "strategy", T::Message(&DEPLOYMENT_STRATEGY)),
        one(5, "minReadySeconds", T::Int),
        pointer(6, "revisionHistoryLimit", T::Int),
        one(7, "paused", T::Bool),
        pointer(9, "progressDeadlineSeconds", T::Int),
    ],
};

/// `apps.v1.Deployment`.
static DEPLOYMENT: Message = Message {
    name: "Deployment",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "spec", T::Message(&DEPLOYMENT_SPEC)),
        one(3, "status", T::Message(&EMPTY)),
    ],
};

/// `batch.v1.JobSpec` (without the failure and success policies).
static JOB_SPEC: Message = Message {
    name: "JobSpec",
    fields: &[
        pointer(1, "parallelism", T::Int),
        pointer(2, "completions", T::Int),
        pointer(3, "activeDeadlineSeconds", T::Int),
        one(4, "selector", T::Message(&LABEL_SELECTOR)),
        pointer(5, "manualSelector", T::Bool),
        one(6, "template", T::Message(&POD_TEMPLATE_SPEC)),
        pointer(7, "backoffLimit", T::Int),
        pointer(8, "ttlSecondsAfterFinished", T::Int),
        pointer(9, "completionMode", T::String),
        pointer(10, "suspend", T::Bool),
        pointer(12, "backoffLimitPerIndex", T::Int),
        pointer(13, "maxFailedIndexes", T::Int),
        pointer(14, "podReplacementPolicy", T::String),
        pointer(15, "managedBy", T::String),
    ],
};

/// `batch.v1.Job`.
static JOB: Message = Message {
    name: "Job",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        one(2, "spec", T::Message(&JOB_SPEC)),
        one(3, "status", T::Message(&EMPTY)),
    ],
};

/// `rbac.v1.PolicyRule`.
static POLICY_RULE: Message = Message {
    name: "PolicyRule",
    fields: &[
        many(1, "verbs", T::String),
        many(2, "apiGroups", T::String),
        many(3, "resources", T::String),
        many(4, "resourceNames", T::String),
        many(5, "nonResourceURLs", T::String),
    ],
};

/// `rbac.v1.AggregationRule`.
static AGGREGATION_RULE: Message = Message {
    name: "AggregationRule",
    fields: &[many(1, "clusterRoleSelectors", T::Message(&LABEL_SELECTOR))],
};

/// `rbac.v1.Role`.
static ROLE: Message = Message {
    name: "Role",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        many(2, "rules", T::Message(&POLICY_RULE)),
    ],
};

/// `rbac.v1.ClusterRole`.
static CLUSTER_ROLE: Message = Message {
    name: "ClusterRole",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        many(2, "rules", T::Message(&POLICY_RULE)),
        one(3, "aggregationRule", T::Message(&AGGREGATION_RULE)),
    ],
};

/// `rbac.v1.Subject`.
static SUBJECT: Message = Message {
    name: "Subject",
    fields: &[
        one(1, "kind", T::String),
        one(2, "apiGroup", T::String),
        one(3, "name", T::String),
        one(4, "namespace", T::String),
    ],
};

/// `rbac.v1.RoleRef`.
static ROLE_REF: Message = Message {
    name: "RoleRef",
    fields: &[
        one(1, "apiGroup", T::String),
        one(2, "kind", T::String),
        one(3, "name", T::String),
    ],
};

/// `rbac.v1.RoleBinding` and `rbac.v1.ClusterRoleBinding` (the same fields).
static ROLE_BINDING: Message = Message {
    name: "RoleBinding",
    fields: &[
        one(1, "metadata", T::Message(&OBJECT_META)),
        many(2, "subjects", T::Message(&SUBJECT)),
        one(3, "roleRef", T::Message(&ROLE_REF)),
    ],
};

/// The message of a kind kubectl creates from protobuf, if listed here.
pub fn message_for(api_version: &str, kind: &str) -> Option<&'static Message> {
    let message = match (api_version, kind) {
        ("v1", "Namespace") => &NAMESPACE,
        ("v1", "Secret") => &SECRET,
        ("v1", "ConfigMap") => &CONFIG_MAP,
        ("v1", "ServiceAccount") => &SERVICE_ACCOUNT,
        ("v1", "ResourceQuota") => &RESOURCE_QUOTA,
        ("apps/v1", "Deployment") => &DEPLOYMENT,
        ("batch/v1", "Job") => &JOB,
        ("rbac.authorization.k8s.io/v1", "Role") => &ROLE,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => &CLUSTER_ROLE,
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => &ROLE_BINDING,
        _ => return None,
    };
    Some(message)
}

/// Every top-level message here (for the schema checks).
#[cfg(test)]
pub fn all() -> [&'static Message; 10] {
    [
        &NAMESPACE,
        &SECRET,
        &CONFIG_MAP,
        &SERVICE_ACCOUNT,
        &RESOURCE_QUOTA,
        &DEPLOYMENT,
        &JOB,
        &ROLE,
        &CLUSTER_ROLE,
        &ROLE_BINDING,
    ]
}
