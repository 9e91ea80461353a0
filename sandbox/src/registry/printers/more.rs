//! Server-side printing of the service, RBAC-binding, admission, scheduling, network-policy,
//! ingress-class and disruption-budget kinds, with kube-apiserver v1.32's columns (checked against a real server by
//! `tests/real_cluster/discovery.rs`) and its cell formats (`<none>` for nothing, label selectors
//! as `key=value` and `key in (a,b)` sorted by key).

use k8s_openapi::api::core::v1::{ServiceAccount, ServiceSpec};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use serde_json::{Value, json};

use super::{Column, age_column, column, doc, or_none, text, wide};

const KINDS: &[(&str, &str)] = &[
    ("", "ServiceAccount"),
    ("", "Service"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("scheduling.k8s.io", "PriorityClass"),
    ("networking.k8s.io", "NetworkPolicy"),
    ("networking.k8s.io", "IngressClass"),
    ("policy", "PodDisruptionBudget"),
];

// Printer descriptions kube-apiserver v1.32 takes from the internal API's documentation, which
// differs from the v1 schema's.
const ROLE_BINDING_ROLE: &str = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";
const CLUSTER_ROLE_BINDING_ROLE: &str = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";
const POD_SELECTOR: &str = "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.";
const WEBHOOKS: &str = "Webhooks indicates the number of webhooks registered in this configuration";

/// Whether this module prints the kind.
pub(super) fn prints(group: &str, kind: &str) -> bool {
    KINDS.contains(&(group, kind))
}

/// The columns after Name.
pub(super) fn columns(group: &str, kind: &str) -> Vec<Column> {
    match kind {
        "ServiceAccount" => vec![
            column("Secrets", "string", doc::<ServiceAccount>("secrets")),
            age_column(),
        ],
        "Service" => vec![
            column("Type", "string", doc::<ServiceSpec>("type")),
            column("Cluster-IP", "string", doc::<ServiceSpec>("clusterIP")),
            column("External-IP", "string", doc::<ServiceSpec>("externalIPs")),
            column("Port(s)", "string", doc::<ServiceSpec>("ports")),
            age_column(),
            wide(column("Selector", "string", doc::<ServiceSpec>("selector"))),
        ],
        "RoleBinding" | "ClusterRoleBinding" => {
            let (role, subject) = if kind == "RoleBinding" {
                (ROLE_BINDING_ROLE, "roleBinding")
            } else {
                (CLUSTER_ROLE_BINDING_ROLE, "clusterRoleBinding")
            };
            vec![
                column("Role", "string", role.to_owned()),
                age_column(),
                wide(column("Users", "string", format!("Users in the {subject}"))),
                wide(column(
                    "Groups",
                    "string",
                    format!("Groups in the {subject}"),
                )),
                wide(column(
                    "ServiceAccounts",
                    "string",
                    format!("ServiceAccounts in the {subject}"),
                )),
            ]
        }
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => vec![
            column("Webhooks", "integer", WEBHOOKS.to_owned()),
            age_column(),
        ],
        "PriorityClass" => vec![
            column("Value", "integer", doc::<PriorityClass>("value")),
            column(
                "Global-Default",
                "boolean",
                doc::<PriorityClass>("globalDefault"),
            ),
            age_column(),
            column(
                "PreemptionPolicy",
                "string",
                doc::<PriorityClass>("preemptionPolicy"),
            ),
        ],
        "IngressClass" => vec![
            column(
                "Controller",
                "string",
                "Controller that is responsible for handling this class".to_owned(),
            ),
            column(
                "Parameters",
                "string",
                "A reference to a resource with additional parameters".to_owned(),
            ),
            age_column(),
        ],
        "PodDisruptionBudget" => vec![
            column(
                "Min Available",
                "string",
                "The minimum number of pods that must be available.".to_owned(),
            ),
            column(
                "Max Unavailable",
                "string",
                "The maximum number of pods that may be unavailable.".to_owned(),
            ),
            column(
                "Allowed Disruptions",
                "integer",
                "Calculated number of pods that may be disrupted at this time.".to_owned(),
            ),
            age_column(),
        ],
        _ => {
            debug_assert_eq!((group, kind), ("networking.k8s.io", "NetworkPolicy"));
            vec![
                column("Pod-Selector", "string", POD_SELECTOR.to_owned()),
                age_column(),
            ]
        }
    }
}

/// The cells of one object: `name`, the kind's cells, with `age` where its column is.
pub(super) fn cells(kind: &str, object: &Value, name: Value, age: Value) -> Vec<Value> {
    let list = |pointer: &str| object.pointer(pointer).and_then(Value::as_array);
    let len = |pointer: &str| list(pointer).map_or(0, Vec::len);
    match kind {
        "ServiceAccount" => vec![name, json!(len("/secrets")), age],
        "Service" => vec![
            name,
            json!(text(object, "/spec/type")),
            json!(or_none(text(object, "/spec/clusterIP"))),
            json!(external_ip(object)),
            json!(ports(object)),
            age,
            json!(labels(object.pointer("/spec/selector"))),
        ],
        "RoleBinding" | "ClusterRoleBinding" => {
            let role = format!(
                "{}/{}",
                text(object, "/roleRef/kind"),
                text(object, "/roleRef/name")
            );
            let subjects = |wanted: &str| {
                list("/subjects")
                    .into_iter()
                    .flatten()
                    .filter(|s| s["kind"] == wanted)
                    .map(|s| match (wanted, s["namespace"].as_str()) {
                        ("ServiceAccount", Some(ns)) => format!("{ns}/{}", text(s, "/name")),
                        _ => text(s, "/name").to_owned(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            vec![
                name,
                json!(role),
                age,
                json!(subjects("User")),
                json!(subjects("Group")),
                json!(subjects("ServiceAccount")),
            ]
        }
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            vec![name, json!(len("/webhooks")), age]
        }
        "PriorityClass" => {
            let policy = match text(object, "/preemptionPolicy") {
                "" => "<unset>",
                policy => policy,
            };
            vec![
                name,
                json!(
                    object
                        .pointer("/value")
                        .and_then(Value::as_i64)
                        .unwrap_or(0)
                ),
                json!(
                    object
                        .pointer("/globalDefault")
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                ),
                age,
                json!(policy),
            ]
        }
        "IngressClass" => {
            let parameters = match object.pointer("/spec/parameters") {
                Some(p) if p.is_object() => {
                    let kind = match p["apiGroup"].as_str() {
                        Some(group) => format!("{}.{group}", text(p, "/kind")),
                        None => text(p, "/kind").to_owned(),
                    };
                    format!("{kind}/{}", text(p, "/name"))
                }
                _ => "<none>".to_owned(),
            };
            vec![
                name,
                json!(text(object, "/spec/controller")),
                json!(parameters),
                age,
            ]
        }
        "PodDisruptionBudget" => {
            // An int-or-string: 1 or "50%"; N/A when unset.
            let bound = |pointer: &str| match object.pointer(pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => "N/A".to_owned(),
            };
            vec![
                name,
                json!(bound("/spec/minAvailable")),
                json!(bound("/spec/maxUnavailable")),
                json!(
                    object
                        .pointer("/status/disruptionsAllowed")
                        .and_then(Value::as_i64)
                        .unwrap_or(0)
                ),
                age,
            ]
        }
        _ => vec![
            name,
            json!(selector(object.pointer("/spec/podSelector"))),
            age,
        ],
    }
}

/// kubectl's External-IP: the external IPs, the load balancer's ingress for LoadBalancer, the
/// external name for ExternalName.
fn external_ip(object: &Value) -> String {
    let strings = |pointer: &str| -> Vec<String> {
        object
            .pointer(pointer)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let external = strings("/spec/externalIPs");
    match text(object, "/spec/type") {
        "LoadBalancer" => {
            let mut ips: Vec<String> = object
                .pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|i| {
                    i["ip"]
                        .as_str()
                        .or(i["hostname"].as_str())
                        .map(str::to_owned)
                })
                .collect();
            ips.extend(external);
            if ips.is_empty() {
                "<pending>".to_owned()
            } else {
                ips.join(",")
            }
        }
        "ExternalName" => text(object, "/spec/externalName").to_owned(),
        _ if external.is_empty() => "<none>".to_owned(),
        _ => external.join(","),
    }
}

/// `port/protocol` or `port:nodePort/protocol` per port, comma-separated.
fn ports(object: &Value) -> String {
    let ports: Vec<String> = object
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let protocol = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64() {
                Some(node) if node != 0 => format!("{}:{node}/{protocol}", p["port"]),
                _ => format!("{}/{protocol}", p["port"]),
            }
        })
        .collect();
    or_none(&ports.join(","))
}

/// A label map as `k=v,k2=v2` (sorted), `<none>` when empty.
fn labels(map: Option<&Value>) -> String {
    let mut pairs: Vec<String> = map
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    or_none(&pairs.join(","))
}

/// A label selector as kubectl prints it: requirements sorted by key, `<none>` when empty.
fn selector(selector: Option<&Value>) -> String {
    let Some(selector) = selector else {
        return "<none>".to_owned();
    };
    let mut requirements: Vec<(String, String)> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())))
        .collect();
    for expression in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = text(expression, "/key").to_owned();
        let mut values: Vec<&str> = expression["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let shown = match text(expression, "/operator") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other}"),
        };
        requirements.push((key, shown));
    }
    requirements.sort();
    or_none(
        &requirements
            .into_iter()
            .map(|(_, shown)| shown)
            .collect::<Vec<_>>()
            .join(","),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_and_label_maps_print_like_kubectl() {
        for (value, printed) in [
            (json!({}), "<none>"),
            (json!({"matchLabels": {"b": "2", "a": "1"}}), "a=1,b=2"),
            (
                json!({"matchLabels": {"z": "1"}, "matchExpressions": [
                    {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                    {"key": "x", "operator": "DoesNotExist"},
                    {"key": "a", "operator": "Exists"}]}),
                "a,env in (dev,prod),!x,z=1",
            ),
        ] {
            assert_eq!(selector(Some(&value)), printed, "{value}");
        }
        assert_eq!(selector(None), "<none>");
        assert_eq!(labels(Some(&json!({"b": "2", "a": "1"}))), "a=1,b=2");
        assert_eq!(labels(None), "<none>");
    }

    #[test]
    fn service_cells_follow_the_service_type() {
        let cells = |spec: Value, status: Value| {
            let object = json!({"spec": spec, "status": status});
            (external_ip(&object), ports(&object))
        };
        assert_eq!(
            cells(
                json!({"type": "ClusterIP", "ports": [{"port": 443, "protocol": "TCP"}]}),
                json!({})
            ),
            ("<none>".to_owned(), "443/TCP".to_owned())
        );
        assert_eq!(
            cells(
                json!({"type": "LoadBalancer", "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}),
                json!({})
            ),
            ("<pending>".to_owned(), "80:30080/TCP,53/UDP".to_owned())
        );
        assert_eq!(
            cells(
                json!({"type": "LoadBalancer"}),
                json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}})
            ),
            ("1.2.3.4".to_owned(), "<none>".to_owned())
        );
        assert_eq!(
            cells(
                json!({"type": "ExternalName", "externalName": "example.com"}),
                json!({})
            )
            .0,
            "example.com"
        );
    }

    #[test]
    fn budget_and_ingress_class_cells() {
        for (kind, object, printed) in [
            (
                "PodDisruptionBudget",
                json!({"spec": {"minAvailable": "50%"}}),
                json!(["50%", "N/A", 0]),
            ),
            (
                "PodDisruptionBudget",
                json!({"spec": {"maxUnavailable": 1}, "status": {"disruptionsAllowed": 2}}),
                json!(["N/A", "1", 2]),
            ),
            (
                "IngressClass",
                json!({"spec": {"controller": "c"}}),
                json!(["c", "<none>"]),
            ),
            (
                "IngressClass",
                json!({"spec": {"controller": "c", "parameters": {"kind": "P", "name": "p"}}}),
                json!(["c", "P/p"]),
            ),
            (
                "IngressClass",
                json!({"spec": {"controller": "c", "parameters": {"apiGroup": "g.io", "kind": "P", "name": "p"}}}),
                json!(["c", "P.g.io/p"]),
            ),
        ] {
            let mut row = cells(kind, &object, json!("n"), json!("1s"));
            row.retain(|cell| cell != "n" && cell != "1s");
            assert_eq!(Value::Array(row), printed, "{object}");
        }
    }

    #[test]
    fn binding_cells_name_the_role_and_the_subjects() {
        let binding = json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}, {"kind": "User", "name": "bob"}]});
        let cells = cells("RoleBinding", &binding, json!("b"), json!("1s"));
        assert_eq!(
            cells,
            vec![
                json!("b"),
                json!("ClusterRole/view"),
                json!("1s"),
                json!("alice, bob"),
                json!("devs"),
                json!("ns/sa")
            ]
        );
    }
}
