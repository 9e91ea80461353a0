//! RBAC evaluation over stored Roles, ClusterRoles and their bindings, following kube-apiserver's
//! `RBACAuthorizer`: ClusterRoleBindings first, then RoleBindings of the request's namespace; the
//! first rule that allows wins and names its binding in the reason.

use serde_json::Value;

use super::{Attributes, Decision, RbacSnapshot};
use crate::auth::authn::UserInfo;

const RBAC_API_GROUP: &str = "rbac.authorization.k8s.io";

/// Evaluates RBAC for `attributes` (the superuser group is handled by the caller).
pub(super) fn authorize(attributes: &Attributes, rbac: &RbacSnapshot) -> Decision {
    let mut errors = Vec::new();
    for binding in &rbac.cluster_role_bindings {
        let Some(subject) = applying_subject(binding, &attributes.user, "") else {
            continue;
        };
        match cluster_binding_rules(binding, rbac) {
            Ok(rules) => {
                if rules.iter().any(|rule| rule_allows(attributes, rule)) {
                    return allowed(format!(
                        "ClusterRoleBinding {:?} of {} {:?} to {}",
                        name(binding),
                        role_ref(binding, "kind"),
                        role_ref(binding, "name"),
                        describe_subject(subject, "")
                    ));
                }
            }
            Err(error) => errors.push(error),
        }
    }
    if !attributes.namespace.is_empty() {
        for binding in rbac
            .role_bindings
            .iter()
            .filter(|b| namespace(b) == attributes.namespace)
        {
            let Some(subject) = applying_subject(binding, &attributes.user, &attributes.namespace)
            else {
                continue;
            };
            match role_binding_rules(binding, rbac) {
                Ok(rules) => {
                    if rules.iter().any(|rule| rule_allows(attributes, rule)) {
                        return allowed(format!(
                            "RoleBinding \"{}/{}\" of {} {:?} to {}",
                            name(binding),
                            namespace(binding),
                            role_ref(binding, "kind"),
                            role_ref(binding, "name"),
                            describe_subject(subject, namespace(binding))
                        ));
                    }
                }
                Err(error) => errors.push(error),
            }
        }
    }
    let reason = match errors.as_slice() {
        [] => String::new(),
        [one] => format!("RBAC: {one}"),
        many => format!("RBAC: [{}]", many.join(", ")),
    };
    Decision {
        allowed: false,
        reason,
    }
}

fn allowed(source: String) -> Decision {
    Decision {
        allowed: true,
        reason: format!("RBAC: allowed by {source}"),
    }
}

/// Rules of the ClusterRole a ClusterRoleBinding refers to, or the NotFound message.
pub(super) fn cluster_binding_rules<'a>(
    binding: &Value,
    rbac: &'a RbacSnapshot,
) -> Result<&'a [Value], String> {
    let role_name = role_ref(binding, "name");
    if role_ref(binding, "kind") != "ClusterRole" {
        return Err(format!(
            "invalid ClusterRoleBinding roleRef kind {:?}, expected ClusterRole",
            role_ref(binding, "kind")
        ));
    }
    find_rules(&rbac.cluster_roles, role_name, None)
        .ok_or_else(|| format!("clusterrole.rbac.authorization.k8s.io {role_name:?} not found"))
}

/// Rules of the Role (same namespace) or ClusterRole a RoleBinding refers to, or the NotFound message.
pub(super) fn role_binding_rules<'a>(
    binding: &Value,
    rbac: &'a RbacSnapshot,
) -> Result<&'a [Value], String> {
    let role_name = role_ref(binding, "name");
    match role_ref(binding, "kind") {
        "Role" => find_rules(&rbac.roles, role_name, Some(namespace(binding)))
            .ok_or_else(|| format!("role.rbac.authorization.k8s.io {role_name:?} not found")),
        "ClusterRole" => find_rules(&rbac.cluster_roles, role_name, None).ok_or_else(|| {
            format!("clusterrole.rbac.authorization.k8s.io {role_name:?} not found")
        }),
        other => Err(format!("unsupported role reference kind: {other:?}")),
    }
}

fn find_rules<'a>(
    roles: &'a [Value],
    role_name: &str,
    in_namespace: Option<&str>,
) -> Option<&'a [Value]> {
    roles
        .iter()
        .find(|role| name(role) == role_name && in_namespace.is_none_or(|ns| namespace(role) == ns))
        .map(|role| {
            role.get("rules")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice)
        })
}

/// The first subject of `binding` that applies to `user` (`namespace` defaults service account subjects).
pub(super) fn applying_subject<'a>(
    binding: &'a Value,
    user: &UserInfo,
    namespace: &str,
) -> Option<&'a Value> {
    binding
        .get("subjects")
        .and_then(Value::as_array)?
        .iter()
        .find(|subject| applies_to(subject, user, namespace))
}

fn applies_to(subject: &Value, user: &UserInfo, binding_namespace: &str) -> bool {
    let field = |key: &str| subject.get(key).and_then(Value::as_str).unwrap_or_default();
    match field("kind") {
        "User" => user.username == field("name"),
        "Group" => user.in_group(field("name")),
        "ServiceAccount" => {
            let namespace = match field("namespace") {
                "" => binding_namespace,
                namespace => namespace,
            };
            !namespace.is_empty()
                && user.username == format!("system:serviceaccount:{namespace}:{}", field("name"))
        }
        _ => false,
    }
}

/// `User "x"`, `Group "x"`, or `ServiceAccount "name/namespace"`.
fn describe_subject(subject: &Value, binding_namespace: &str) -> String {
    let field = |key: &str| subject.get(key).and_then(Value::as_str).unwrap_or_default();
    match field("kind") {
        "ServiceAccount" => {
            let namespace = match field("namespace") {
                "" => binding_namespace,
                namespace => namespace,
            };
            format!("ServiceAccount \"{}/{namespace}\"", field("name"))
        }
        kind => format!("{kind} {:?}", field("name")),
    }
}

/// Whether one PolicyRule allows the request (kube-apiserver's `RuleAllows`).
pub fn rule_allows(attributes: &Attributes, rule: &Value) -> bool {
    let list = |key: &str| -> Vec<&str> {
        rule.get(key)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let matches =
        |key: &str, wanted: &str| list(key).iter().any(|item| *item == "*" || *item == wanted);
    if !matches("verbs", &attributes.verb) {
        return false;
    }
    if !attributes.resource_request {
        return list("nonResourceURLs")
            .iter()
            .any(|url| non_resource_url_matches(url, &attributes.path));
    }
    let combined = if attributes.subresource.is_empty() {
        attributes.resource.clone()
    } else {
        format!("{}/{}", attributes.resource, attributes.subresource)
    };
    let resource_matches = list("resources").iter().any(|resource| {
        *resource == "*"
            || *resource == combined
            || (!attributes.subresource.is_empty()
                && resource.strip_prefix("*/") == Some(attributes.subresource.as_str()))
    });
    let names = list("resourceNames");
    matches("apiGroups", &attributes.api_group)
        && resource_matches
        && (names.is_empty() || names.contains(&attributes.name.as_str()))
}

fn non_resource_url_matches(rule_url: &str, path: &str) -> bool {
    rule_url == "*"
        || rule_url == path
        || rule_url
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

fn name(object: &Value) -> &str {
    object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub(super) fn namespace(object: &Value) -> &str {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn role_ref<'a>(binding: &'a Value, key: &str) -> &'a str {
    let value = binding
        .get("roleRef")
        .and_then(|r| r.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if key == "apiGroup" && value.is_empty() {
        return RBAC_API_GROUP;
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            username: name.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        }
    }

    fn request(
        user: UserInfo,
        verb: &str,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Attributes {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        Attributes {
            user,
            verb: verb.into(),
            api_group: group.into(),
            api_version: String::new(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            path: String::new(),
            resource_request: true,
            ..Attributes::default()
        }
    }

    fn snapshot() -> RbacSnapshot {
        RbacSnapshot {
            roles: vec![json!({
                "metadata": {"name": "cm-reader", "namespace": "kc-authz"},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"], "resourceNames": ["allowed"]}]
            })],
            role_bindings: vec![
                json!({
                    "metadata": {"name": "alice-reads", "namespace": "kc-authz"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]
                }),
                json!({
                    "metadata": {"name": "sa-edits", "namespace": "kc-authz"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "editor"},
                    "subjects": [{"kind": "ServiceAccount", "name": "robot"}]
                }),
            ],
            cluster_roles: vec![
                json!({
                    "metadata": {"name": "kc-seed-bootstrapper"},
                    "rules": [
                        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["create", "get", "list", "watch"]},
                        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/seedclient"], "verbs": ["create"]}
                    ]
                }),
                json!({
                    "metadata": {"name": "editor"},
                    "rules": [
                        {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["update"]},
                        {"apiGroups": ["", "apps"], "resources": ["*"], "verbs": ["*"]},
                        {"nonResourceURLs": ["/healthz", "/debug/*"], "verbs": ["get"]}
                    ]
                }),
            ],
            cluster_role_bindings: vec![
                json!({
                    "metadata": {"name": "kc-seed-bootstrapper"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kc-seed-bootstrapper"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:bootstrappers"}]
                }),
                json!({
                    "metadata": {"name": "dangling"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "missing"},
                    "subjects": [{"kind": "User", "name": "carol"}]
                }),
            ],
        }
    }

    #[test]
    fn rbac_decisions_follow_rules_and_bindings() {
        let bootstrapper = user(
            "system:bootstrap:kc0001",
            &["system:bootstrappers", "system:authenticated"],
        );
        let alice = user("alice", &["system:authenticated"]);
        let robot = user(
            "system:serviceaccount:kc-authz:robot",
            &["system:serviceaccounts"],
        );
        let csr = "certificatesigningrequests";
        let table = [
            (
                request(
                    bootstrapper.clone(),
                    "create",
                    "certificates.k8s.io",
                    csr,
                    "",
                    "",
                ),
                true,
            ),
            (
                request(
                    bootstrapper.clone(),
                    "create",
                    "certificates.k8s.io",
                    "certificatesigningrequests/seedclient",
                    "",
                    "",
                ),
                true,
            ),
            (
                request(
                    bootstrapper.clone(),
                    "update",
                    "certificates.k8s.io",
                    "certificatesigningrequests/approval",
                    "",
                    "x",
                ),
                false,
            ),
            (
                request(
                    bootstrapper.clone(),
                    "delete",
                    "certificates.k8s.io",
                    csr,
                    "",
                    "x",
                ),
                false,
            ),
            (
                request(
                    bootstrapper.clone(),
                    "list",
                    "",
                    "secrets",
                    "kube-system",
                    "",
                ),
                false,
            ),
            (request(bootstrapper, "create", "", csr, "", ""), false),
            (
                request(
                    alice.clone(),
                    "get",
                    "",
                    "configmaps",
                    "kc-authz",
                    "allowed",
                ),
                true,
            ),
            (
                request(alice.clone(), "get", "", "configmaps", "kc-authz", "hidden"),
                false,
            ),
            (
                request(alice.clone(), "list", "", "configmaps", "kc-authz", ""),
                false,
            ),
            (
                request(alice.clone(), "get", "", "configmaps", "other", "allowed"),
                false,
            ),
            (
                request(alice, "list", "coordination.k8s.io", "leases", "", ""),
                false,
            ),
            (
                request(
                    robot.clone(),
                    "delete",
                    "apps",
                    "deployments",
                    "kc-authz",
                    "d",
                ),
                true,
            ),
            (
                request(
                    robot.clone(),
                    "update",
                    "batch",
                    "jobs/status",
                    "kc-authz",
                    "j",
                ),
                true,
            ),
            (
                request(robot.clone(), "update", "batch", "jobs", "kc-authz", "j"),
                false,
            ),
            (request(robot, "get", "", "pods", "elsewhere", "p"), false),
        ];
        let rbac = snapshot();
        for (attributes, want) in table {
            assert_eq!(
                authorize(&attributes, &rbac).allowed,
                want,
                "{attributes:?}"
            );
        }
    }

    #[test]
    fn allow_reason_names_cluster_role_binding_and_group() {
        let bootstrapper = user("system:bootstrap:kc0001", &["system:bootstrappers"]);
        let decision = authorize(
            &request(
                bootstrapper,
                "create",
                "certificates.k8s.io",
                "certificatesigningrequests/seedclient",
                "",
                "",
            ),
            &snapshot(),
        );
        assert_eq!(
            decision.reason,
            r#"RBAC: allowed by ClusterRoleBinding "kc-seed-bootstrapper" of ClusterRole "kc-seed-bootstrapper" to Group "system:bootstrappers""#
        );
    }

    #[test]
    fn allow_reason_names_role_binding_with_namespace() {
        let alice = user("alice", &[]);
        let decision = authorize(
            &request(alice, "get", "", "configmaps", "kc-authz", "allowed"),
            &snapshot(),
        );
        assert_eq!(
            decision.reason,
            r#"RBAC: allowed by RoleBinding "alice-reads/kc-authz" of Role "cm-reader" to User "alice""#
        );
        let robot = user("system:serviceaccount:kc-authz:robot", &[]);
        let decision = authorize(
            &request(robot, "get", "", "pods", "kc-authz", "p"),
            &snapshot(),
        );
        assert_eq!(
            decision.reason,
            r#"RBAC: allowed by RoleBinding "sa-edits/kc-authz" of ClusterRole "editor" to ServiceAccount "robot/kc-authz""#
        );
    }

    #[test]
    fn denial_reason_is_empty_unless_a_role_is_missing() {
        let decision = authorize(
            &request(user("bob", &[]), "get", "", "pods", "x", "p"),
            &snapshot(),
        );
        assert_eq!(
            decision,
            Decision {
                allowed: false,
                reason: String::new()
            }
        );
        let decision = authorize(
            &request(user("carol", &[]), "get", "", "pods", "x", "p"),
            &snapshot(),
        );
        assert_eq!(
            decision.reason,
            r#"RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found"#
        );
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_trailing_star() {
        let robot = user("system:serviceaccount:kc-authz:robot", &[]);
        let rbac = RbacSnapshot {
            cluster_role_bindings: vec![json!({
                "metadata": {"name": "b"},
                "roleRef": {"kind": "ClusterRole", "name": "editor"},
                "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "kc-authz"}]
            })],
            ..snapshot()
        };
        let path = |p: &str, verb: &str| Attributes {
            user: robot.clone(),
            verb: verb.into(),
            path: p.into(),
            ..Attributes::default()
        };
        assert!(authorize(&path("/healthz", "get"), &rbac).allowed);
        assert!(authorize(&path("/debug/pprof/heap", "get"), &rbac).allowed);
        assert!(!authorize(&path("/healthz/etcd", "get"), &rbac).allowed);
        assert!(!authorize(&path("/healthz", "post"), &rbac).allowed);
    }

    #[test]
    fn service_account_subject_without_namespace_does_not_match_cluster_binding() {
        let subject = json!({"kind": "ServiceAccount", "name": "robot"});
        assert!(!applies_to(
            &subject,
            &user("system:serviceaccount:x:robot", &[]),
            ""
        ));
        assert!(applies_to(
            &subject,
            &user("system:serviceaccount:x:robot", &[]),
            "x"
        ));
    }
}
