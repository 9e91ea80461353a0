//! The RBAC objects of a project (spec §3.2): ClusterRoles and ClusterRoleBindings per project,
//! RoleBindings in its namespace to the well-known project ClusterRoles, and the aggregated
//! extension roles — computed from the Project alone.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{
    AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::ResourceExt;
use seedlet_api::core::{Project, ProjectSubject};

use super::namespace::{PROJECT_NAME_LABEL, ROLE_LABEL, owner_reference};

/// Prefix of a member role naming an extension role (`extension:<name>`).
pub const EXTENSION_ROLE_PREFIX: &str = "extension:";
/// `gardener.cloud/role` of extension role objects.
pub const EXTENSION_ROLE_VALUE: &str = "extension-project-role";
/// Label selecting the ClusterRoles aggregated into an extension role.
pub const AGGREGATE_LABEL: &str = "rbac.gardener.cloud/aggregate-to-extension-role";
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
const CORE_GROUP: &str = "core.gardener.cloud";

/// Every RBAC object a project should have.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Desired {
    /// ClusterRoles.
    pub cluster_roles: Vec<ClusterRole>,
    /// ClusterRoleBindings.
    pub cluster_role_bindings: Vec<ClusterRoleBinding>,
    /// RoleBindings in the project namespace.
    pub role_bindings: Vec<RoleBinding>,
}

/// Name prefix of the extension role objects of project `project`.
pub fn extension_prefix(project: &str) -> String {
    format!("gardener.cloud:extension:project:{project}:")
}

fn subject(s: &ProjectSubject) -> Subject {
    Subject {
        api_group: s.api_group.clone(),
        kind: s.kind.clone(),
        name: s.name.clone(),
        namespace: s.namespace.clone(),
    }
}

/// Subjects of the members having any of `roles` (plus `extra` first), de-duplicated by
/// (apiGroup, kind, namespace, name), first occurrence kept.
fn subjects(project: &Project, extra: Option<&ProjectSubject>, roles: &[&str]) -> Vec<Subject> {
    let mut out: Vec<Subject> = Vec::new();
    let members = project
        .spec
        .members
        .iter()
        .filter(|m| m.all_roles().iter().any(|r| roles.contains(r)))
        .map(|m| &m.subject);
    for candidate in extra.into_iter().chain(members).map(subject) {
        let duplicate = out.iter().any(|s| {
            (&s.api_group, &s.kind, &s.namespace, &s.name)
                == (
                    &candidate.api_group,
                    &candidate.kind,
                    &candidate.namespace,
                    &candidate.name,
                )
        });
        if !duplicate {
            out.push(candidate);
        }
    }
    out
}

/// The sorted, distinct extension role names of the members (`extension:<name>` → `<name>`).
pub fn extension_roles(project: &Project) -> Vec<String> {
    let mut roles: Vec<String> = project
        .spec
        .members
        .iter()
        .flat_map(|m| m.all_roles())
        .filter_map(|r| r.strip_prefix(EXTENSION_ROLE_PREFIX))
        .map(str::to_owned)
        .collect();
    roles.sort();
    roles.dedup();
    roles
}

fn meta(
    project: &Project,
    name: &str,
    namespace: Option<&str>,
    labels: Option<BTreeMap<String, String>>,
) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(str::to_owned),
        labels,
        owner_references: Some(vec![owner_reference(project, false)]),
        ..Default::default()
    }
}

fn rule(group: &str, resource: &str, name: &str, verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(vec![resource.to_owned()]),
        resource_names: Some(vec![name.to_owned()]),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..Default::default()
    }
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: RBAC_GROUP.to_owned(),
        kind: kind.to_owned(),
        name: name.to_owned(),
    }
}

/// The RBAC objects of `project` with namespace `namespace`.
pub fn desired(project: &Project, namespace: &str) -> Desired {
    let p = project.name_any();
    let namespace_get = rule("", "namespaces", namespace, &["get"]);
    let projects = |verbs: &[&str]| rule(CORE_GROUP, "projects", &p, verbs);
    let owner = project.spec.owner.as_ref();
    let per_project: [(String, Vec<PolicyRule>, Vec<Subject>); 4] = [
        (
            format!("gardener.cloud:system:project:{p}"),
            vec![
                namespace_get.clone(),
                projects(&["get", "patch", "manage-members", "update", "delete"]),
            ],
            subjects(project, owner, &[]),
        ),
        (
            format!("gardener.cloud:system:project-uam:{p}"),
            vec![projects(&["get", "manage-members", "patch", "update"])],
            subjects(project, None, &["uam"]),
        ),
        (
            format!("gardener.cloud:system:project-member:{p}"),
            vec![
                namespace_get.clone(),
                projects(&["get", "patch", "update", "delete"]),
            ],
            subjects(project, None, &["admin", "owner"]),
        ),
        (
            format!("gardener.cloud:system:project-viewer:{p}"),
            vec![namespace_get, projects(&["get"])],
            subjects(project, None, &["viewer"]),
        ),
    ];
    let mut out = Desired::default();
    for (name, rules, subjects) in per_project {
        out.cluster_roles.push(ClusterRole {
            metadata: meta(project, &name, None, None),
            rules: Some(rules),
            aggregation_rule: None,
        });
        out.cluster_role_bindings.push(ClusterRoleBinding {
            metadata: meta(project, &name, None, None),
            role_ref: role_ref("ClusterRole", &name),
            subjects: Some(subjects),
        });
    }
    let namespaced: [(&str, Vec<Subject>); 3] = [
        (
            "gardener.cloud:system:project-member",
            subjects(project, None, &["admin", "owner"]),
        ),
        (
            "gardener.cloud:system:project-viewer",
            subjects(project, None, &["viewer"]),
        ),
        (
            "gardener.cloud:system:project-serviceaccountmanager",
            subjects(project, owner, &["serviceaccountmanager", "owner"]),
        ),
    ];
    for (name, subjects) in namespaced {
        out.role_bindings.push(RoleBinding {
            metadata: meta(project, name, Some(namespace), None),
            role_ref: role_ref("ClusterRole", name),
            subjects: Some(subjects),
        });
    }
    for role in extension_roles(project) {
        let name = format!("{}{role}", extension_prefix(&p));
        let labels = BTreeMap::from([
            (ROLE_LABEL.to_owned(), EXTENSION_ROLE_VALUE.to_owned()),
            (PROJECT_NAME_LABEL.to_owned(), p.clone()),
        ]);
        out.cluster_roles.push(ClusterRole {
            metadata: meta(project, &name, None, Some(labels.clone())),
            rules: None,
            aggregation_rule: Some(AggregationRule {
                cluster_role_selectors: Some(vec![LabelSelector {
                    match_labels: Some(BTreeMap::from([(
                        AGGREGATE_LABEL.to_owned(),
                        role.clone(),
                    )])),
                    match_expressions: None,
                }]),
            }),
        });
        let member_role = format!("{EXTENSION_ROLE_PREFIX}{role}");
        out.role_bindings.push(RoleBinding {
            metadata: meta(project, &name, Some(namespace), Some(labels)),
            role_ref: role_ref("ClusterRole", &name),
            subjects: Some(subjects(project, None, &[member_role.as_str()])),
        });
    }
    out
}

/// Of `existing` extension role object names (labelled for this project), those whose role is no
/// longer wanted.
pub fn stale_extension_objects<'a>(project: &Project, existing: &'a [String]) -> Vec<&'a str> {
    let prefix = extension_prefix(&project.name_any());
    let wanted = extension_roles(project);
    existing
        .iter()
        .filter(|name| {
            name.strip_prefix(&prefix)
                .is_none_or(|role| !wanted.iter().any(|w| w == role))
        })
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project() -> Project {
        let mut project: Project = serde_json::from_value(json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
            "metadata": {"name": "dev", "uid": "u"},
            "spec": {
                "namespace": "garden-dev",
                "owner": {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"},
                "members": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice", "role": "owner", "roles": ["admin"]},
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob", "role": "admin", "roles": ["extension:foo", "uam"]},
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"},
                    {"kind": "ServiceAccount", "name": "robot", "namespace": "garden-dev", "role": "serviceaccountmanager"}
                ]
            }
        }))
        .expect("project");
        project.metadata.uid = Some("u".into());
        project
    }

    fn names(subjects: &Option<Vec<Subject>>) -> Vec<&str> {
        subjects.iter().flatten().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn bindings_get_the_members_of_their_roles() {
        let desired = desired(&project(), "garden-dev");
        let crb = |suffix: &str| {
            desired
                .cluster_role_bindings
                .iter()
                .find(|b| b.name_any() == format!("gardener.cloud:system:{suffix}:dev"))
                .expect("crb")
        };
        assert_eq!(names(&crb("project").subjects), ["alice"]);
        assert_eq!(names(&crb("project-uam").subjects), ["bob"]);
        // alice is both owner and admin: listed once.
        assert_eq!(names(&crb("project-member").subjects), ["alice", "bob"]);
        assert_eq!(names(&crb("project-viewer").subjects), ["carol"]);
        let rb = |name: &str| {
            desired
                .role_bindings
                .iter()
                .find(|b| b.name_any() == name)
                .expect("rb")
        };
        assert_eq!(
            names(&rb("gardener.cloud:system:project-serviceaccountmanager").subjects),
            ["alice", "robot"]
        );
        let extension = rb("gardener.cloud:extension:project:dev:foo");
        assert_eq!(names(&extension.subjects), ["bob"]);
        assert_eq!(
            extension.role_ref.name,
            "gardener.cloud:extension:project:dev:foo"
        );
        let role = desired
            .cluster_roles
            .iter()
            .find(|r| r.name_any() == "gardener.cloud:extension:project:dev:foo")
            .expect("extension role");
        assert!(role.rules.is_none());
        assert_eq!(
            serde_json::to_value(&role.aggregation_rule).expect("json"),
            json!({"clusterRoleSelectors": [{"matchLabels": {"rbac.gardener.cloud/aggregate-to-extension-role": "foo"}}]})
        );
        assert_eq!(
            role.labels()["gardener.cloud/role"],
            "extension-project-role"
        );
        let owner = &role.owner_references()[0];
        assert_eq!(
            (owner.controller, owner.block_owner_deletion),
            (Some(true), Some(false))
        );
        assert_eq!(desired.cluster_roles.len(), 5);
        assert_eq!(desired.role_bindings.len(), 4);
    }

    #[test]
    fn project_rules_name_the_namespace_and_project() {
        let desired = desired(&project(), "garden-dev");
        assert_eq!(
            serde_json::to_value(&desired.cluster_roles[0].rules).expect("json"),
            json!([
                {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": ["garden-dev"], "verbs": ["get"]},
                {"apiGroups": ["core.gardener.cloud"], "resources": ["projects"], "resourceNames": ["dev"],
                 "verbs": ["get", "patch", "manage-members", "update", "delete"]}
            ])
        );
    }

    #[test]
    fn dropped_extension_roles_are_stale() {
        let mut p = project();
        let existing = vec![
            "gardener.cloud:extension:project:dev:foo".to_owned(),
            "gardener.cloud:extension:project:dev:bar".to_owned(),
        ];
        assert_eq!(
            stale_extension_objects(&p, &existing),
            ["gardener.cloud:extension:project:dev:bar"]
        );
        p.spec.members[1].roles.clear();
        assert_eq!(stale_extension_objects(&p, &existing).len(), 2);
    }
}
