//! The rules a user holds in a namespace, as a SelfSubjectRulesReview reports them: kube-apiserver's
//! RBAC rule resolver (rules of every ClusterRoleBinding that applies, then of the RoleBindings in
//! the namespace), split into resource and non-resource rules.
//!
//! Like kube-apiserver, the `system:masters` group contributes no rules of its own (its authorizer
//! resolves no rules); superusers see `*` through the bootstrap `cluster-admin` ClusterRoleBinding.

use serde_json::{Map, Value, json};

use super::RbacSnapshot;
use super::rbac::{applying_subject, cluster_binding_rules, namespace, role_binding_rules};
use crate::auth::authn::UserInfo;
use crate::object::string_list;

/// What a user may do on resources (`verbs` on `resources` in `api_groups`, limited to
/// `resource_names` when any are given).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRule {
    /// Verbs, `*` for all.
    pub verbs: Vec<String>,
    /// API groups, `*` for all, "" for the core group.
    pub api_groups: Vec<String>,
    /// Resources, `*` for all, `resource/subresource` and `*/subresource` for subresources.
    pub resources: Vec<String>,
    /// Object names the rule is limited to; empty for all.
    pub resource_names: Vec<String>,
}

/// What a user may do on non-resource URLs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NonResourceRule {
    /// Verbs (lower-case HTTP methods), `*` for all.
    pub verbs: Vec<String>,
    /// URLs, exact or ending in `*` for a prefix.
    pub non_resource_urls: Vec<String>,
}

/// A user's rules in one namespace: the `status` of a SelfSubjectRulesReview.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubjectRules {
    /// Rules on resources, in evaluation order (duplicates kept, as kube-apiserver does).
    pub resource_rules: Vec<ResourceRule>,
    /// Rules on non-resource URLs, in evaluation order.
    pub non_resource_rules: Vec<NonResourceRule>,
    /// Bindings whose role could not be resolved (e.g. `clusterrole.rbac.authorization.k8s.io
    /// "x" not found`), joined like Go's aggregate errors; empty when every binding resolved.
    pub evaluation_error: String,
}

impl SubjectRules {
    /// The SelfSubjectRulesReview `status` (`incomplete` is always false: RBAC can list every rule).
    pub fn status(&self) -> Value {
        let resource_rules: Vec<Value> = self
            .resource_rules
            .iter()
            .map(|rule| {
                let mut out = Map::new();
                out.insert("verbs".into(), json!(rule.verbs));
                for (key, items) in [
                    ("apiGroups", &rule.api_groups),
                    ("resources", &rule.resources),
                    ("resourceNames", &rule.resource_names),
                ] {
                    if !items.is_empty() {
                        out.insert(key.into(), json!(items));
                    }
                }
                Value::Object(out)
            })
            .collect();
        let non_resource_rules: Vec<Value> = self
            .non_resource_rules
            .iter()
            .map(|rule| {
                let mut out = Map::new();
                out.insert("verbs".into(), json!(rule.verbs));
                if !rule.non_resource_urls.is_empty() {
                    out.insert("nonResourceURLs".into(), json!(rule.non_resource_urls));
                }
                Value::Object(out)
            })
            .collect();
        let mut status = json!({
            "resourceRules": resource_rules,
            "nonResourceRules": non_resource_rules,
            "incomplete": false,
        });
        if !self.evaluation_error.is_empty() {
            status["evaluationError"] = json!(self.evaluation_error);
        }
        status
    }
}

/// The rules `user` holds in `namespace` (kube-apiserver's `RulesFor`): every rule of the roles
/// bound to the user by ClusterRoleBindings, then by RoleBindings of `namespace`. A PolicyRule
/// with resources becomes a resource rule, one with non-resource URLs a non-resource rule.
pub fn rules_for(user: &UserInfo, namespace_name: &str, rbac: &RbacSnapshot) -> SubjectRules {
    let mut out = SubjectRules::default();
    let mut errors: Vec<String> = Vec::new();
    let mut collect = |rules: Result<&[Value], String>| match rules {
        Ok(rules) => {
            for rule in rules {
                add_policy_rule(&mut out, rule);
            }
        }
        Err(error) => {
            if !errors.contains(&error) {
                errors.push(error);
            }
        }
    };
    for binding in &rbac.cluster_role_bindings {
        if applying_subject(binding, user, "").is_some() {
            collect(cluster_binding_rules(binding, rbac));
        }
    }
    if !namespace_name.is_empty() {
        for binding in rbac
            .role_bindings
            .iter()
            .filter(|binding| namespace(binding) == namespace_name)
        {
            if applying_subject(binding, user, namespace_name).is_some() {
                collect(role_binding_rules(binding, rbac));
            }
        }
    }
    out.evaluation_error = match errors.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    out
}

/// Splits one stored PolicyRule into the resource and non-resource rules it grants.
fn add_policy_rule(out: &mut SubjectRules, rule: &Value) {
    let list = |key: &str| string_list(rule.get(key));
    let resources = list("resources");
    if !resources.is_empty() {
        out.resource_rules.push(ResourceRule {
            verbs: list("verbs"),
            api_groups: list("apiGroups"),
            resources,
            resource_names: list("resourceNames"),
        });
    }
    let non_resource_urls = list("nonResourceURLs");
    if !non_resource_urls.is_empty() {
        out.non_resource_rules.push(NonResourceRule {
            verbs: list("verbs"),
            non_resource_urls,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::auth::authn::SYSTEM_MASTERS;
    use crate::auth::authz::bootstrap_policy;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            username: name.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    /// The bootstrap policy plus a namespaced Role for group `viewers` in `team`, a ClusterRole
    /// bound to `viewers` in `team` only, and a RoleBinding in `other`.
    fn snapshot() -> RbacSnapshot {
        let mut rbac = bootstrap_policy();
        rbac.roles.push(json!({
            "metadata": {"name": "pod-reader", "namespace": "team"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]},
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["settings"]}
            ]
        }));
        rbac.cluster_roles.push(json!({
            "metadata": {"name": "lease-editor"},
            "rules": [
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]},
                {"apiGroups": ["apps"], "verbs": ["get"]}
            ]
        }));
        for (name, namespace, kind, role) in [
            ("viewers-read", "team", "Role", "pod-reader"),
            ("viewers-leases", "team", "ClusterRole", "lease-editor"),
            ("viewers-elsewhere", "other", "ClusterRole", "cluster-admin"),
        ] {
            rbac.role_bindings.push(json!({
                "metadata": {"name": name, "namespace": namespace},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "viewers"}]
            }));
        }
        rbac
    }

    fn resource_rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> ResourceRule {
        ResourceRule {
            verbs: strings(verbs),
            api_groups: strings(groups),
            resources: strings(resources),
            resource_names: Vec::new(),
        }
    }

    #[test]
    fn rules_are_cluster_wide_bindings_then_role_bindings_of_the_namespace() {
        let viewer = user("viewer", &["viewers", "system:authenticated"]);
        let rules = rules_for(&viewer, "team", &snapshot());
        let mut settings = resource_rule(&["get"], &[""], &["configmaps"]);
        settings.resource_names = strings(&["settings"]);
        assert_eq!(
            rules.resource_rules,
            vec![
                resource_rule(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"]
                ),
                resource_rule(&["get", "list"], &[""], &["pods", "pods/log"]),
                settings,
                resource_rule(&["*"], &["coordination.k8s.io"], &["leases"]),
            ]
        );
        let urls: Vec<&[String]> = rules
            .non_resource_rules
            .iter()
            .map(|rule| rule.non_resource_urls.as_slice())
            .collect();
        assert_eq!(
            urls.len(),
            2,
            "system:discovery and system:public-info-viewer"
        );
        assert!(urls[0].contains(&"/apis/*".to_owned()));
        assert_eq!(rules.evaluation_error, "");
    }

    #[test]
    fn role_bindings_of_other_namespaces_grant_nothing() {
        let viewer = user("viewer", &["viewers"]);
        let rules = rules_for(&viewer, "elsewhere", &snapshot());
        assert_eq!(rules, SubjectRules::default());
        let rules = rules_for(&viewer, "other", &snapshot());
        assert_eq!(
            rules.resource_rules,
            vec![resource_rule(&["*"], &["*"], &["*"])]
        );
    }

    #[test]
    fn superusers_get_the_star_rules_of_cluster_admin() {
        let admin = user("admin", &[SYSTEM_MASTERS, "system:authenticated"]);
        let rules = rules_for(&admin, "default", &snapshot());
        assert_eq!(
            rules.resource_rules[0],
            resource_rule(&["*"], &["*"], &["*"])
        );
        assert_eq!(
            rules.non_resource_rules[0],
            NonResourceRule {
                verbs: strings(&["*"]),
                non_resource_urls: strings(&["*"]),
            }
        );
    }

    #[test]
    fn rules_without_resources_or_urls_are_left_out() {
        let viewer = user("viewer", &["viewers"]);
        let rules = rules_for(&viewer, "team", &snapshot());
        assert!(
            !rules
                .resource_rules
                .iter()
                .any(|rule| rule.api_groups == ["apps"])
        );
    }

    #[test]
    fn unresolvable_roles_are_reported_once_each_in_the_evaluation_error() {
        let mut rbac = snapshot();
        for (name, role) in [("a", "missing"), ("b", "missing"), ("c", "gone")] {
            rbac.cluster_role_bindings.push(json!({
                "metadata": {"name": name},
                "roleRef": {"kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "User", "name": "carol"}]
            }));
        }
        let rules = rules_for(&user("carol", &[]), "team", &rbac);
        assert_eq!(
            rules.evaluation_error,
            r#"[clusterrole.rbac.authorization.k8s.io "missing" not found, clusterrole.rbac.authorization.k8s.io "gone" not found]"#
        );
        rbac.cluster_role_bindings
            .truncate(rbac.cluster_role_bindings.len() - 2);
        let rules = rules_for(&user("carol", &[]), "team", &rbac);
        assert_eq!(
            rules.evaluation_error,
            r#"clusterrole.rbac.authorization.k8s.io "missing" not found"#
        );
        assert_eq!(
            rules.status()["evaluationError"],
            json!(rules.evaluation_error)
        );
    }

    #[test]
    fn status_omits_empty_lists_inside_rules_but_keeps_verbs_and_incomplete() {
        let rules = SubjectRules {
            resource_rules: vec![resource_rule(&["get"], &[], &["pods"])],
            non_resource_rules: vec![NonResourceRule {
                verbs: strings(&["get"]),
                non_resource_urls: strings(&["/healthz"]),
            }],
            evaluation_error: String::new(),
        };
        assert_eq!(
            rules.status(),
            json!({
                "resourceRules": [{"verbs": ["get"], "resources": ["pods"]}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
                "incomplete": false,
            })
        );
        assert_eq!(
            SubjectRules::default().status(),
            json!({"resourceRules": [], "nonResourceRules": [], "incomplete": false})
        );
    }
}
