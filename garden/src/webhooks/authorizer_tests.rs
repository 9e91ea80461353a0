//! The spec's edge cases (§6) as table tests of [`decide`].

use serde_json::json;

use super::*;
use crate::webhooks::graph::edges;
use crate::webhooks::review::parse_raw;

const GARDENLET_GROUPS: &[&str] = &["gardener.cloud:system:seeds", "system:authenticated"];

fn request(
    seed: &str,
    verb: &str,
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Review {
    Review {
        api_version: "authorization.k8s.io/v1".into(),
        kind: "SubjectAccessReview".into(),
        user: format!("gardener.cloud:system:seed:{seed}"),
        groups: GARDENLET_GROUPS.iter().map(|g| (*g).to_owned()).collect(),
        resource: Some(ResourceAttributes {
            namespace: namespace.into(),
            verb: verb.into(),
            group: group.into(),
            version: "v1".into(),
            resource: resource.into(),
            name: name.into(),
            ..ResourceAttributes::default()
        }),
    }
}

fn with_subresource(mut review: Review, subresource: &str) -> Review {
    review.resource.as_mut().unwrap().subresource = subresource.into();
    review
}

fn with_selectors(mut review: Review, fields: &str, labels: &str) -> Review {
    let resource = review.resource.as_mut().unwrap();
    resource.fields = parse_raw(fields).unwrap();
    resource.labels = parse_raw(labels).unwrap();
    review
}

fn extension(seed: &str, review: Review) -> Review {
    Review {
        user: format!("system:serviceaccount:seed-{seed}:extension-x"),
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:seed-{seed}"),
        ],
        ..review
    }
}

/// Two seeds `a` and `b`, a shoot on each, their installations, leases and a shared backup secret.
fn landscape() -> Graph {
    let mut graph = Graph::default();
    for seed in ["a", "b"] {
        graph.replace(edges::seed(&json!({"metadata": {"name": seed},
            "spec": {"backup": {"credentialsRef": {"apiVersion": "v1", "kind": "Secret", "namespace": "garden", "name": format!("backup-{seed}")}},
                     "dns": {"provider": {"credentialsRef": {"apiVersion": "v1", "kind": "Secret", "namespace": "garden", "name": "backup-shared"}}}}})));
        graph.replace(edges::shoot(
            &json!({"metadata": {"name": format!("shoot-{seed}"), "namespace": "garden-dev"},
            "spec": {"seedName": seed, "secretBindingName": format!("sb-{seed}")}}),
            Some("dev"),
        ));
        graph.replace(edges::controller_installation(&json!({"metadata": {"name": format!("ci-{seed}")},
            "spec": {"registrationRef": {"name": "r"}, "deploymentRef": {"name": "d"}, "seedRef": {"name": seed}}})));
    }
    graph
}

fn allowed() -> Verdict {
    Verdict::Allow
}

fn reason(text: &str) -> Verdict {
    Verdict::NoOpinion(text.into())
}

#[test]
fn seeds_reach_their_own_objects_and_not_each_other_s() {
    let graph = landscape();
    let core = "core.gardener.cloud";
    let cases = [
        (
            request("a", "get", core, "controllerinstallations", "", "ci-a"),
            allowed(),
        ),
        (
            request("a", "patch", core, "controllerinstallations", "", "ci-b"),
            reason("no relationship found"),
        ),
        (
            request("a", "create", core, "controllerinstallations", "", ""),
            reason(
                "only the following verbs are allowed for this resource type: [get list patch update watch]",
            ),
        ),
        (request("a", "get", core, "seeds", "", "a"), allowed()),
        (
            request("a", "patch", core, "seeds", "", "b"),
            reason("no relationship found"),
        ),
        (
            request(
                "a",
                "update",
                "coordination.k8s.io",
                "leases",
                "gardener-system-seed-lease",
                "a",
            ),
            allowed(),
        ),
        (
            request(
                "a",
                "update",
                "coordination.k8s.io",
                "leases",
                "gardener-system-seed-lease",
                "b",
            ),
            reason("no relationship found"),
        ),
        (
            request(
                "a",
                "create",
                "coordination.k8s.io",
                "leases",
                "gardener-system-seed-lease",
                "b",
            ),
            allowed(),
        ),
        (
            request("a", "get", core, "shootstates", "garden-dev", "shoot-a"),
            allowed(),
        ),
        (
            request("a", "get", core, "shootstates", "garden-dev", "shoot-b"),
            reason("no relationship found"),
        ),
        // gardenlet's shoot delete flow: the ShootState goes, then the shoot's finalizer.
        (
            request("a", "delete", core, "shootstates", "garden-dev", "shoot-a"),
            allowed(),
        ),
        (
            request("a", "patch", core, "shoots", "garden-dev", "shoot-a"),
            allowed(),
        ),
        (
            request("a", "patch", core, "shoots", "garden-dev", "shoot-b"),
            reason("no relationship found"),
        ),
        (
            request("a", "get", "", "secrets", "garden", "backup-a"),
            allowed(),
        ),
        (
            request("a", "get", "", "secrets", "garden", "backup-b"),
            reason("no relationship found"),
        ),
        (
            request("b", "get", "", "secrets", "garden", "backup-shared"),
            allowed(),
        ),
        (
            request("a", "get", "", "secrets", "garden", "backup-shared"),
            allowed(),
        ),
        (
            request("a", "list", "", "secrets", "seed-b", ""),
            reason(
                "only the following verbs are allowed for this resource type: [create delete get patch update]",
            ),
        ),
        (
            request("a", "get", "", "secrets", "seed-a", "anything"),
            allowed(),
        ),
        (
            request("a", "delete", "", "secrets", "garden", "unreferenced"),
            allowed(),
        ),
        (
            request("a", "get", "", "namespaces", "", "seed-a"),
            allowed(),
        ),
        (
            request("a", "get", "", "namespaces", "", "garden-dev"),
            allowed(),
        ),
        (
            request("a", "get", core, "shoots", "garden", "a"),
            allowed(),
        ),
        (
            request("a", "get", core, "shoots", "garden-dev", "shoot-b"),
            reason("no relationship found"),
        ),
        (
            request("a", "get", core, "cloudprofiles", "", "unused"),
            reason("no relationship found"),
        ),
        (
            request("a", "list", core, "controllerregistrations", "", ""),
            allowed(),
        ),
        (
            request("a", "list", core, "backupbuckets", "", ""),
            allowed(),
        ),
        (
            request("a", "impersonate", "", "users", "", "admin"),
            reason(""),
        ),
        (
            request("a", "get", "core.gardener.cloud", "gardens", "", "x"),
            reason(""),
        ),
    ];
    for (review, expected) in cases {
        let attributes = review.resource.clone().unwrap();
        assert_eq!(
            decide(&review, &graph, Selectors::Possible),
            expected,
            "{} {} {}/{}",
            attributes.verb,
            attributes.resource,
            attributes.namespace,
            attributes.name
        );
    }
}

#[test]
fn lists_need_selectors_when_the_api_server_sends_them() {
    let graph = landscape();
    let core = "core.gardener.cloud";
    let ci_list = request("a", "list", core, "controllerinstallations", "", "");
    let must = reason("must specify field or label selector for name a");
    let shoots = request("a", "watch", core, "shoots", "", "");
    let label = "name.seed.gardener.cloud/a=true";
    let gardenlets = request(
        "a",
        "list",
        "seedmanagement.gardener.cloud",
        "gardenlets",
        "garden",
        "a",
    );
    let cases = [
        (ci_list.clone(), Selectors::Possible, must.clone()),
        (ci_list.clone(), Selectors::NotPossible, allowed()),
        (
            with_selectors(ci_list.clone(), "spec.seedRef.name=b", ""),
            Selectors::Possible,
            must.clone(),
        ),
        (
            with_selectors(ci_list, "spec.seedRef.name=a", ""),
            Selectors::Possible,
            allowed(),
        ),
        (
            with_selectors(shoots.clone(), "", label),
            Selectors::Possible,
            allowed(),
        ),
        (
            with_selectors(shoots.clone(), "", "name.seed.gardener.cloud/b=true"),
            Selectors::Possible,
            must.clone(),
        ),
        // Tighter than upstream (pinned): a negative requirement does not narrow the list to `a`.
        (
            with_selectors(shoots.clone(), "", "foo!=bar"),
            Selectors::Possible,
            must.clone(),
        ),
        (
            with_selectors(gardenlets.clone(), "metadata.name=a", ""),
            Selectors::Possible,
            allowed(),
        ),
        (
            with_selectors(gardenlets.clone(), "metadata.name=b", ""),
            Selectors::Possible,
            must.clone(),
        ),
        (
            with_selectors(gardenlets, "metadata.name=b", ""),
            Selectors::NotPossible,
            allowed(),
        ),
        (
            request(
                "a",
                "list",
                "seedmanagement.gardener.cloud",
                "gardenlets",
                "",
                "",
            ),
            Selectors::Possible,
            reason("only the following namespaces are allowed for this resource type: [garden]"),
        ),
        (
            request(
                "a",
                "list",
                "coordination.k8s.io",
                "leases",
                "gardener-system-seed-lease",
                "",
            ),
            Selectors::Possible,
            must,
        ),
        (
            request(
                "a",
                "list",
                "coordination.k8s.io",
                "leases",
                "gardener-system-seed-lease",
                "",
            ),
            Selectors::NotPossible,
            reason("No Object name found"),
        ),
        // A single-object watch (name set) of a label-scoped kind goes to the graph.
        (
            request("a", "watch", core, "shoots", "garden-dev", "shoot-a"),
            Selectors::Possible,
            allowed(),
        ),
        (
            request("a", "watch", core, "shoots", "garden-dev", "shoot-b"),
            Selectors::Possible,
            reason("no relationship found"),
        ),
    ];
    for (review, selectors, expected) in cases {
        let attributes = review.resource.clone().unwrap();
        assert_eq!(
            decide(&review, &graph, selectors),
            expected,
            "{} {} {:?} {:?} {selectors:?}",
            attributes.verb,
            attributes.resource,
            attributes.fields,
            attributes.labels
        );
    }
}

#[test]
fn always_allowed_paths_and_special_cases() {
    let graph = landscape();
    let cases = [
        (
            request("a", "create", "", "events", "anywhere", ""),
            allowed(),
        ),
        (
            request("a", "patch", "events.k8s.io", "events", "anywhere", "e"),
            allowed(),
        ),
        (
            request("a", "get", "", "events", "anywhere", "e"),
            reason("only the following verbs are allowed for this resource type: [create patch]"),
        ),
        (
            with_subresource(request("a", "create", "", "events", "x", "e"), "status"),
            reason("only the following subresources are allowed for this resource type: []"),
        ),
        (
            request(
                "a",
                "get",
                "",
                "configmaps",
                "gardener-system-public",
                "gardener-info",
            ),
            allowed(),
        ),
        (
            request(
                "a",
                "create",
                "certificates.k8s.io",
                "certificatesigningrequests",
                "",
                "",
            ),
            allowed(),
        ),
        (
            with_subresource(
                request(
                    "a",
                    "create",
                    "certificates.k8s.io",
                    "certificatesigningrequests",
                    "",
                    "x",
                ),
                "seedclient",
            ),
            allowed(),
        ),
        (
            with_subresource(
                request("a", "create", "", "serviceaccounts", "seed-a", "x"),
                "token",
            ),
            allowed(),
        ),
        (
            with_subresource(
                request("a", "create", "", "serviceaccounts", "garden", "x"),
                "token",
            ),
            reason("only the following subresources are allowed for this resource type: []"),
        ),
        (
            request(
                "a",
                "delete",
                "",
                "secrets",
                "kube-system",
                &edges::bootstrap_token_secret("garden", "a"),
            ),
            allowed(),
        ),
        (
            request(
                "a",
                "delete",
                "",
                "serviceaccounts",
                "garden",
                "gardenlet-bootstrap-a",
            ),
            allowed(),
        ),
        (
            request(
                "a",
                "delete",
                "rbac.authorization.k8s.io",
                "clusterrolebindings",
                "",
                "gardener.cloud:system:seed-bootstrapper:garden:gardenlet-bootstrap-a",
            ),
            allowed(),
        ),
        (
            request(
                "a",
                "delete",
                "rbac.authorization.k8s.io",
                "clusterrolebindings",
                "",
                "gardener.cloud:system:seed-bootstrapper:garden:gardenlet-bootstrap-b",
            ),
            reason(
                "only the following verbs are allowed for this resource type: [create get patch update]",
            ),
        ),
    ];
    for (review, expected) in cases {
        let attributes = review.resource.clone().unwrap();
        assert_eq!(
            decide(&review, &graph, Selectors::Possible),
            expected,
            "{} {}/{} {}/{}",
            attributes.verb,
            attributes.resource,
            attributes.subresource,
            attributes.namespace,
            attributes.name
        );
    }
}

#[test]
fn extensions_and_non_seeds() {
    let graph = landscape();
    let leases = |namespace: &str, verb: &str| {
        extension(
            "a",
            request("a", verb, "coordination.k8s.io", "leases", namespace, ""),
        )
    };
    let cases = [
        (leases("seed-a", "list"), allowed()),
        (leases("seed-a", "deletecollection"), allowed()),
        (
            leases("garden", "list"),
            reason("lease object is not in seed namespace"),
        ),
        (
            leases("seed-a", "escalate"),
            reason(
                "only the following verbs are allowed for this resource type: [create get list watch update patch delete deletecollection]",
            ),
        ),
        (
            extension(
                "a",
                request(
                    "a",
                    "create",
                    "certificates.k8s.io",
                    "certificatesigningrequests",
                    "",
                    "",
                ),
            ),
            reason("only the following verbs are allowed for this resource type: [get list watch]"),
        ),
        (
            extension(
                "a",
                request("a", "get", "", "serviceaccounts", "seed-a", "x"),
            ),
            reason("no relationship found"),
        ),
    ];
    for (review, expected) in cases {
        assert_eq!(
            decide(&review, &graph, Selectors::Possible),
            expected,
            "{review:?}"
        );
    }
    let mut stranger = request("a", "get", "", "secrets", "garden", "backup-a");
    stranger.groups = vec!["system:authenticated".into()];
    assert_eq!(decide(&stranger, &graph, Selectors::Possible), reason(""));
    let mut non_resource = request("a", "get", "", "", "", "");
    non_resource.resource = None;
    assert_eq!(
        decide(&non_resource, &graph, Selectors::Possible),
        reason("")
    );
}
