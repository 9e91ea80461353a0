//! The default RBAC objects kube-apiserver creates at startup (the subset clients rely on:
//! cluster-admin, discovery, basic-user, public-info-viewer), to be stored by the server.

use serde_json::{Value, json};

use super::RbacSnapshot;

/// Default ClusterRoles and ClusterRoleBindings, as kube-apiserver's bootstrap policy defines them.
pub fn bootstrap_policy() -> RbacSnapshot {
    let discovery_urls = [
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
        "/healthz",
        "/livez",
        "/openapi",
        "/openapi/*",
        "/readyz",
        "/version",
        "/version/",
    ];
    let public_urls = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    RbacSnapshot {
        roles: Vec::new(),
        role_bindings: Vec::new(),
        cluster_roles: vec![
            cluster_role(
                "cluster-admin",
                json!([
                    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                    {"nonResourceURLs": ["*"], "verbs": ["*"]}
                ]),
            ),
            cluster_role(
                "system:discovery",
                json!([{"nonResourceURLs": discovery_urls, "verbs": ["get"]}]),
            ),
            cluster_role(
                "system:basic-user",
                json!([{
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"]
                }]),
            ),
            cluster_role(
                "system:public-info-viewer",
                json!([{"nonResourceURLs": public_urls, "verbs": ["get"]}]),
            ),
        ],
        cluster_role_bindings: vec![
            cluster_role_binding("cluster-admin", "cluster-admin", &["system:masters"]),
            cluster_role_binding(
                "system:discovery",
                "system:discovery",
                &["system:authenticated"],
            ),
            cluster_role_binding(
                "system:basic-user",
                "system:basic-user",
                &["system:authenticated"],
            ),
            cluster_role_binding(
                "system:public-info-viewer",
                "system:public-info-viewer",
                &["system:authenticated", "system:unauthenticated"],
            ),
        ],
    }
}

fn bootstrap_metadata(name: &str) -> Value {
    json!({
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": bootstrap_metadata(name),
        "rules": rules,
    })
}

fn cluster_role_binding(name: &str, role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|group| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}))
        .collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": bootstrap_metadata(name),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::auth::authn::UserInfo;
    use crate::auth::authz::{Attributes, authorize};

    fn user(groups: &[&str]) -> UserInfo {
        UserInfo {
            username: "someone".into(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        }
    }

    #[test]
    fn authenticated_users_may_review_themselves_and_discover() {
        let policy = bootstrap_policy();
        let review = Attributes {
            user: user(&["system:authenticated"]),
            verb: "create".into(),
            api_group: "authorization.k8s.io".into(),
            resource: "selfsubjectaccessreviews".into(),
            resource_request: true,
            ..Attributes::default()
        };
        let decision = authorize(&review, &policy);
        assert_eq!(
            decision.reason,
            r#"RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated""#
        );
        let apis = Attributes {
            user: user(&["system:authenticated"]),
            verb: "get".into(),
            path: "/apis/certificates.k8s.io/v1".into(),
            ..Attributes::default()
        };
        assert!(authorize(&apis, &policy).allowed);
    }

    #[test]
    fn anonymous_users_may_only_read_public_info() {
        let policy = bootstrap_policy();
        let get = |path: &str| Attributes {
            user: UserInfo::anonymous(),
            verb: "get".into(),
            path: path.into(),
            ..Attributes::default()
        };
        assert!(authorize(&get("/healthz"), &policy).allowed);
        assert!(authorize(&get("/version"), &policy).allowed);
        assert!(!authorize(&get("/apis"), &policy).allowed);
    }
}
