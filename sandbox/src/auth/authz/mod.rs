//! Request authorization like kube-apiserver's: the `system:masters` superuser group, RBAC
//! evaluation, Forbidden statuses, (Self)SubjectAccessReview helpers and the rules a
//! SelfSubjectRulesReview lists.

mod policy;
mod rbac;
mod rules;
pub mod webhook;

use serde_json::{Value, json};

use crate::auth::authn::{ImpersonationRequest, SYSTEM_MASTERS, UserInfo, service_account_name};
use crate::object::string_list;

pub use policy::bootstrap_policy;
pub use rbac::rule_allows;
pub use rules::{NonResourceRule, ResourceRule, SubjectRules, rules_for};

/// What a request wants to do, as the authorizer sees it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Attributes {
    /// The (possibly impersonated) user.
    pub user: UserInfo,
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection,
    /// impersonate, approve...; for non-resource requests the lower-case HTTP method verb.
    pub verb: String,
    /// API group ("" for the core group).
    pub api_group: String,
    /// API version of the request ("" when unknown, e.g. for access reviews).
    pub api_version: String,
    /// Resource (plural), e.g. `certificatesigningrequests`.
    pub resource: String,
    /// Subresource, e.g. `approval`, or "".
    pub subresource: String,
    /// Namespace, "" for cluster-scoped requests.
    pub namespace: String,
    /// Object name, "" for collections.
    pub name: String,
    /// Request path (used for non-resource requests).
    pub path: String,
    /// Whether this is a resource request (as opposed to e.g. `/healthz`).
    pub resource_request: bool,
    /// The field selector of a list or watch ("" otherwise).
    pub field_selector: String,
    /// The label selector of a list or watch ("" otherwise).
    pub label_selector: String,
}

/// Stored RBAC objects, as JSON.
#[derive(Clone, Debug, Default)]
pub struct RbacSnapshot {
    /// Roles of all namespaces.
    pub roles: Vec<Value>,
    /// RoleBindings of all namespaces.
    pub role_bindings: Vec<Value>,
    /// ClusterRoles.
    pub cluster_roles: Vec<Value>,
    /// ClusterRoleBindings.
    pub cluster_role_bindings: Vec<Value>,
}

/// The authorizer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is allowed.
    pub allowed: bool,
    /// Why (e.g. `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`);
    /// empty for the superuser group and for plain denials, like kube-apiserver.
    pub reason: String,
}

/// Decides `attributes` like kube-apiserver's authorizer chain (privileged group, then RBAC).
pub fn authorize(attributes: &Attributes, rbac: &RbacSnapshot) -> Decision {
    if attributes.user.in_group(SYSTEM_MASTERS) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    rbac::authorize(attributes, rbac)
}

/// The exact kube-apiserver Forbidden message for these attributes (as in the transcripts):
/// the whole `Status.message`, e.g. `secrets is forbidden: User "u" cannot list resource "secrets"
/// in API group "" in the namespace "ns"`, with `: <reason>` appended when `reason` is not empty.
pub fn forbidden_message(attributes: &Attributes, reason: &str) -> String {
    let mut detail = forbidden_detail(attributes);
    if !reason.is_empty() {
        detail.push_str(": ");
        detail.push_str(reason);
    }
    let qualified = qualified_resource(&attributes.api_group, &attributes.resource);
    if !attributes.resource_request || qualified.is_empty() {
        format!("forbidden: {detail}")
    } else if attributes.name.is_empty() {
        format!("{qualified} is forbidden: {detail}")
    } else {
        format!("{qualified} {:?} is forbidden: {detail}", attributes.name)
    }
}

/// The complete 403 `Status` object kube-apiserver answers for a denied request.
pub fn forbidden_status(attributes: &Attributes, reason: &str) -> Value {
    let mut details = serde_json::Map::new();
    if attributes.resource_request {
        if !attributes.name.is_empty() {
            details.insert("name".into(), json!(attributes.name));
        }
        if !attributes.api_group.is_empty() {
            details.insert("group".into(), json!(attributes.api_group));
        }
        if !attributes.resource.is_empty() {
            details.insert("kind".into(), json!(attributes.resource));
        }
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": forbidden_message(attributes, reason),
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    })
}

/// `User "u" cannot <verb> resource "<resource>[/<sub>]" in API group "<g>" in the namespace "<ns>"`
/// (or `at the cluster scope`, or `cannot <verb> path "<path>"`).
fn forbidden_detail(attributes: &Attributes) -> String {
    let user = &attributes.user.username;
    if !attributes.resource_request {
        return format!(
            "User {user:?} cannot {} path {:?}",
            attributes.verb, attributes.path
        );
    }
    let mut resource = attributes.resource.clone();
    if !attributes.subresource.is_empty() {
        resource.push('/');
        resource.push_str(&attributes.subresource);
    }
    let scope = if attributes.namespace.is_empty() {
        "at the cluster scope".to_owned()
    } else {
        format!("in the namespace {:?}", attributes.namespace)
    };
    format!(
        "User {user:?} cannot {} resource {resource:?} in API group {:?} {scope}",
        attributes.verb, attributes.api_group
    )
}

/// `resource.group`, or `resource` for the core group.
fn qualified_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    }
}

/// The attributes a (Self)SubjectAccessReview `spec` asks about, for `user`
/// (from `spec.user`/`groups`/`uid`/`extra` for a SubjectAccessReview, the requester for a
/// SelfSubjectAccessReview). `None` unless exactly one of `resourceAttributes` and
/// `nonResourceAttributes` is given.
pub fn review_attributes(spec: &Value, user: UserInfo) -> Option<Attributes> {
    let text = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match (
        spec.get("resourceAttributes"),
        spec.get("nonResourceAttributes"),
    ) {
        (Some(resource), None) => Some(Attributes {
            user,
            verb: text(resource, "verb"),
            api_group: text(resource, "group"),
            api_version: text(resource, "version"),
            resource: text(resource, "resource"),
            subresource: text(resource, "subresource"),
            namespace: text(resource, "namespace"),
            name: text(resource, "name"),
            path: String::new(),
            resource_request: true,
            ..Attributes::default()
        }),
        (None, Some(non_resource)) => Some(Attributes {
            user,
            verb: text(non_resource, "verb"),
            path: text(non_resource, "path"),
            resource_request: false,
            ..Attributes::default()
        }),
        _ => None,
    }
}

/// The user a SubjectAccessReview `spec` asks about (no groups are added, like kube-apiserver).
pub fn review_user(spec: &Value) -> UserInfo {
    let extra = spec
        .get("extra")
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .map(|(k, v)| (k.clone(), string_list(Some(v))))
                .collect()
        })
        .unwrap_or_default();
    UserInfo {
        username: spec
            .get("user")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        uid: spec
            .get("uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        groups: string_list(spec.get("groups")),
        extra,
    }
}

/// The `status` of a (Self)SubjectAccessReview for a decision (`reason` omitted when empty).
pub fn review_status(decision: &Decision) -> Value {
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    status
}

/// The `impersonate` checks kube-apiserver makes before `requester` may act as `request`,
/// in order; the first denied one is answered with [`forbidden_status`].
pub fn impersonation_attributes(
    requester: &UserInfo,
    request: &ImpersonationRequest,
) -> Vec<Attributes> {
    let check =
        |api_group: &str, resource: &str, subresource: &str, namespace: &str, name: &str| {
            Attributes {
                user: requester.clone(),
                verb: "impersonate".to_owned(),
                api_group: api_group.to_owned(),
                api_version: String::new(),
                resource: resource.to_owned(),
                subresource: subresource.to_owned(),
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                path: String::new(),
                resource_request: true,
                ..Attributes::default()
            }
        };
    let mut checks = Vec::new();
    match service_account_name(&request.user) {
        Some((namespace, name)) => checks.push(check("", "serviceaccounts", "", namespace, name)),
        None => checks.push(check("", "users", "", "", &request.user)),
    }
    for group in &request.groups {
        checks.push(check("", "groups", "", "", group));
    }
    for (key, values) in &request.extra {
        for value in values {
            checks.push(check("authentication.k8s.io", "userextras", key, "", value));
        }
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attributes(
        user: &str,
        verb: &str,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Attributes {
        Attributes {
            user: UserInfo {
                username: user.to_owned(),
                ..UserInfo::default()
            },
            verb: verb.to_owned(),
            api_group: group.to_owned(),
            resource: resource.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            resource_request: true,
            ..Attributes::default()
        }
    }

    #[test]
    fn forbidden_messages_match_kube_apiserver() {
        let table = [
            (
                attributes("system:anonymous", "list", "", "configmaps", "kc-authz", ""),
                r#"configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "kc-authz""#,
            ),
            (
                attributes("alice", "get", "", "configmaps", "kc-authz", "hidden"),
                r#"configmaps "hidden" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "kc-authz""#,
            ),
            (
                attributes("alice", "list", "coordination.k8s.io", "leases", "", ""),
                r#"leases.coordination.k8s.io is forbidden: User "alice" cannot list resource "leases" in API group "coordination.k8s.io" at the cluster scope"#,
            ),
        ];
        for (attrs, want) in table {
            assert_eq!(forbidden_message(&attrs, ""), want);
        }
    }

    #[test]
    fn forbidden_message_names_subresource_and_reason() {
        let mut attrs = attributes(
            "u",
            "update",
            "certificates.k8s.io",
            "certificatesigningrequests",
            "",
            "c",
        );
        attrs.subresource = "approval".into();
        assert_eq!(
            forbidden_message(&attrs, "RBAC: x"),
            r#"certificatesigningrequests.certificates.k8s.io "c" is forbidden: User "u" cannot update resource "certificatesigningrequests/approval" in API group "certificates.k8s.io" at the cluster scope: RBAC: x"#
        );
    }

    #[test]
    fn forbidden_status_for_non_resource_path_has_no_kind() {
        let attrs = Attributes {
            user: UserInfo::anonymous(),
            verb: "get".into(),
            path: "/metrics".into(),
            ..Attributes::default()
        };
        let status = forbidden_status(&attrs, "");
        assert_eq!(
            status["message"],
            r#"forbidden: User "system:anonymous" cannot get path "/metrics""#
        );
        assert_eq!(status["details"], json!({}));
        assert_eq!(status["code"], 403);
    }

    #[test]
    fn forbidden_status_details_carry_group_kind_and_name() {
        let status = forbidden_status(
            &attributes("a", "list", "coordination.k8s.io", "leases", "", ""),
            "",
        );
        assert_eq!(
            status["details"],
            json!({"group": "coordination.k8s.io", "kind": "leases"})
        );
        let status = forbidden_status(&attributes("a", "get", "", "configmaps", "n", "hidden"), "");
        assert_eq!(
            status["details"],
            json!({"kind": "configmaps", "name": "hidden"})
        );
    }

    #[test]
    fn system_masters_is_allowed_everything_without_reason() {
        let mut attrs = attributes("admin", "delete", "", "namespaces", "", "x");
        attrs.user.groups = vec![SYSTEM_MASTERS.into()];
        assert_eq!(
            authorize(&attrs, &RbacSnapshot::default()),
            Decision {
                allowed: true,
                reason: String::new()
            }
        );
    }

    #[test]
    fn review_attributes_need_exactly_one_kind() {
        let user = UserInfo::default();
        let spec = json!({"resourceAttributes": {"group": "certificates.k8s.io", "resource": "certificatesigningrequests", "subresource": "seedclient", "verb": "create"}});
        let attrs = review_attributes(&spec, user.clone()).unwrap();
        assert_eq!(attrs.subresource, "seedclient");
        assert!(attrs.resource_request);
        let spec = json!({"nonResourceAttributes": {"path": "/healthz", "verb": "get"}});
        assert!(
            !review_attributes(&spec, user.clone())
                .unwrap()
                .resource_request
        );
        assert!(review_attributes(&json!({}), user).is_none());
    }

    #[test]
    fn review_status_omits_empty_reason() {
        assert_eq!(
            review_status(&Decision {
                allowed: false,
                reason: String::new()
            }),
            json!({"allowed": false})
        );
    }

    #[test]
    fn impersonation_checks_users_groups_and_extras() {
        let request = ImpersonationRequest {
            user: "system:serviceaccount:ns:sa".into(),
            groups: vec!["g".into()],
            extra: [("scopes".to_owned(), vec!["a".to_owned()])].into(),
        };
        let checks = impersonation_attributes(&UserInfo::default(), &request);
        let summary: Vec<_> = checks
            .iter()
            .map(|c| {
                (
                    c.resource.as_str(),
                    c.subresource.as_str(),
                    c.namespace.as_str(),
                    c.name.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("serviceaccounts", "", "ns", "sa"),
                ("groups", "", "", "g"),
                ("userextras", "scopes", "", "a")
            ]
        );
        assert!(checks.iter().all(|c| c.verb == "impersonate"));
    }
}
