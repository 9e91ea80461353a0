//! The SeedAuthorizer's decision (spec §2): who asks ([`identity`](super::identity)), which rule
//! the (group, resource) has, the special cases, then the generic check in its exact order —
//! namespaces, subresources, always-allowed verbs, verbs, selectors for list/watch, the graph.
//! Every negative outcome is "no opinion" with the spec's reason; the authorizer never denies.

use super::graph::edges::bootstrap_token_secret;
use super::graph::{Graph, Kind, Vertex};
use super::identity::{ClientKind, SeedIdentity, seed_identity};
use super::review::{Operator, Requirement, ResourceAttributes, Review, Verdict};

/// Whether kube-apiserver sends list/watch selectors to authorizers (`AuthorizeWithSelectors`,
/// spec §2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selectors {
    /// Selectors arrive: unfiltered lists of seed-scoped kinds are refused.
    Possible,
    /// An older API server: lists of kinds that have selectors configured are allowed [QUIRK,
    /// upstream's; the graph cannot judge a list].
    NotPossible,
}

/// The label every seed-scoped object of seed `<seed>` carries.
pub fn seed_label(seed: &str) -> String {
    seedlet_api::names::labels::seed_name(seed)
}

/// How one (group, resource) is checked.
#[derive(Debug, Clone, Copy)]
struct Rule {
    kind: Kind,
    verbs: &'static [&'static str],
    always: &'static [&'static str],
    subresources: &'static [&'static str],
    namespaces: Option<&'static [&'static str]>,
    field: Option<&'static str>,
    label: bool,
}

const READ: &[&str] = &["get", "list", "watch"];

impl Rule {
    const fn new(kind: Kind, verbs: &'static [&'static str]) -> Self {
        Self {
            kind,
            verbs,
            always: &[],
            subresources: &[],
            namespaces: None,
            field: None,
            label: false,
        }
    }
    const fn always(mut self, always: &'static [&'static str]) -> Self {
        self.always = always;
        self
    }
    const fn subresources(mut self, subresources: &'static [&'static str]) -> Self {
        self.subresources = subresources;
        self
    }
    const fn field(mut self, field: &'static str) -> Self {
        self.field = Some(field);
        self
    }
    const fn label(mut self) -> Self {
        self.label = true;
        self
    }
    const fn namespaces(mut self, namespaces: &'static [&'static str]) -> Self {
        self.namespaces = Some(namespaces);
        self
    }
}

/// The rule of (group, resource) for `client`, `None` for resources the authorizer does not handle.
fn rule(group: &str, resource: &str, client: ClientKind) -> Option<Rule> {
    use Kind as K;
    let extension = client == ClientKind::Extension;
    let rule = match (group, resource) {
        ("core.gardener.cloud", "backupbuckets") => {
            Rule::new(K::BackupBucket, &["update", "patch", "delete"])
                .always(&["create", "get", "list", "watch"])
                .subresources(&["status", "finalizers"])
        }
        ("core.gardener.cloud", "backupentries") => {
            Rule::new(K::BackupEntry, &["update", "patch", "delete"])
                .always(&["create", "get", "list", "watch"])
                .subresources(&["status"])
        }
        ("operations.gardener.cloud", "bastions") => {
            Rule::new(K::Bastion, &["get", "list", "watch", "update", "patch"])
                .always(&["create"])
                .subresources(&["status"])
                .field("spec.seedName")
        }
        ("certificates.k8s.io", "certificatesigningrequests") if extension => {
            Rule::new(K::CertificateSigningRequest, READ)
        }
        ("certificates.k8s.io", "certificatesigningrequests") => {
            Rule::new(K::CertificateSigningRequest, READ)
                .always(&["create"])
                .subresources(&["seedclient"])
        }
        ("core.gardener.cloud", "cloudprofiles") => Rule::new(K::CloudProfile, READ),
        ("core.gardener.cloud", "namespacedcloudprofiles") => {
            Rule::new(K::NamespacedCloudProfile, READ)
        }
        ("core.gardener.cloud", "controllerdeployments") => {
            Rule::new(K::ControllerDeployment, READ)
        }
        ("security.gardener.cloud", "credentialsbindings") => {
            Rule::new(K::CredentialsBinding, READ)
        }
        ("core.gardener.cloud", "exposureclasses") => Rule::new(K::ExposureClass, READ),
        ("", "namespaces") => Rule::new(K::Namespace, READ),
        ("core.gardener.cloud", "projects") => Rule::new(K::Project, READ),
        ("core.gardener.cloud", "secretbindings") => Rule::new(K::SecretBinding, READ),
        ("rbac.authorization.k8s.io", "clusterrolebindings") if extension => {
            Rule::new(K::ClusterRoleBinding, &["get"])
        }
        ("rbac.authorization.k8s.io", "clusterrolebindings") => {
            Rule::new(K::ClusterRoleBinding, &["get", "patch", "update"]).always(&["create"])
        }
        ("", "configmaps") => Rule::new(
            K::ConfigMap,
            &["get", "patch", "update", "delete", "list", "watch"],
        )
        .always(&["create"]),
        ("core.gardener.cloud", "controllerinstallations") => Rule::new(
            K::ControllerInstallation,
            &["get", "list", "watch", "update", "patch"],
        )
        .subresources(&["status"])
        .field("spec.seedRef.name"),
        ("core.gardener.cloud", "controllerregistrations") => {
            Rule::new(K::ControllerRegistration, &[]).always(READ)
        }
        ("seedmanagement.gardener.cloud", "gardenlets") => {
            Rule::new(K::Gardenlet, &["get", "list", "watch", "update", "patch"])
                .always(&["create"])
                .subresources(&["status"])
                .field("metadata.name")
                .namespaces(&["garden"])
        }
        ("core.gardener.cloud", "internalsecrets") => Rule::new(
            K::InternalSecret,
            &["get", "update", "patch", "delete", "list", "watch"],
        )
        .always(&["create"]),
        ("coordination.k8s.io", "leases") => {
            Rule::new(K::Lease, &["get", "update", "patch", "list", "watch"]).always(&["create"])
        }
        ("seedmanagement.gardener.cloud", "managedseeds") => {
            Rule::new(K::ManagedSeed, &["get", "list", "watch", "update", "patch"])
                .subresources(&["status"])
                .label()
        }
        ("", "secrets") => {
            Rule::new(K::Secret, &["get", "patch", "update", "delete"]).always(&["create"])
        }
        ("core.gardener.cloud", "seeds") => Rule::new(
            K::Seed,
            &["get", "list", "watch", "update", "patch", "delete"],
        )
        .always(&["create"])
        .subresources(&["status"])
        .label(),
        ("", "serviceaccounts") if extension => Rule::new(K::ServiceAccount, &["get"]),
        ("", "serviceaccounts") => {
            Rule::new(K::ServiceAccount, &["get", "patch", "update"]).always(&["create"])
        }
        ("core.gardener.cloud", "shoots") => {
            Rule::new(K::Shoot, &["get", "list", "watch", "update", "patch"])
                .subresources(&["status", "finalizers"])
                .label()
        }
        ("core.gardener.cloud", "shootstates") => Rule::new(
            K::ShootState,
            &["get", "update", "patch", "delete", "list", "watch"],
        )
        .always(&["create"]),
        ("security.gardener.cloud", "workloadidentities") => Rule::new(
            K::WorkloadIdentity,
            &["get", "list", "watch", "create", "patch"],
        )
        .subresources(&["token"]),
        _ => return None,
    };
    Some(rule)
}

/// The verdict on a review that concerns no seed's objects: the requester is not a seed, or the
/// request is not for a resource. Both are "no opinion" with an empty reason, decided from the
/// review alone — kube-apiserver asks the webhook about every request RBAC leaves open (legacy
/// `--authorization-mode=RBAC,Webhook`), including what the webhook itself asks the garden, so
/// these answers must not wait for the graph or the selector probe.
pub fn decide_unrelated(review: &Review) -> Option<Verdict> {
    let unrelated =
        review.resource.is_none() || seed_identity(&review.user, &review.groups).is_none();
    unrelated.then(|| no_opinion(""))
}

/// The verdict on `review`.
/// [`decide_unrelated`]'s cases get the same answer here.
pub fn decide(review: &Review, graph: &Graph, selectors: Selectors) -> Verdict {
    let Some(identity) = seed_identity(&review.user, &review.groups) else {
        return no_opinion("");
    };
    let Some(attributes) = &review.resource else {
        return no_opinion("");
    };
    if attributes.resource == "events" && matches!(attributes.group.as_str(), "" | "events.k8s.io")
    {
        return events(attributes);
    }
    if let Some(verdict) = special(&identity, attributes) {
        return verdict;
    }
    let Some(rule) = rule(&attributes.group, &attributes.resource, identity.kind) else {
        tracing::debug!(
            group = %attributes.group, resource = %attributes.resource, seed = %identity.seed,
            "Unhandled resource request"
        );
        return no_opinion("");
    };
    check(&rule, &identity.seed, attributes, graph, selectors)
}

fn no_opinion(reason: &str) -> Verdict {
    Verdict::NoOpinion(reason.to_owned())
}

fn listed(items: &[&str], sort: bool) -> String {
    let mut items: Vec<&str> = items.to_vec();
    if sort {
        items.sort_unstable();
        items.dedup();
    }
    format!("[{}]", items.join(" "))
}

fn verbs_reason(verbs: &[&str], sort: bool) -> Verdict {
    no_opinion(&format!(
        "only the following verbs are allowed for this resource type: {}",
        listed(verbs, sort)
    ))
}

fn events(attributes: &ResourceAttributes) -> Verdict {
    if !matches!(attributes.verb.as_str(), "create" | "patch") {
        return verbs_reason(&["create", "patch"], true);
    }
    if !attributes.subresource.is_empty() {
        return no_opinion(
            "only the following subresources are allowed for this resource type: []",
        );
    }
    Verdict::Allow
}

/// Special cases decided before the generic check (spec §2.3, §2.4).
fn special(identity: &SeedIdentity, attributes: &ResourceAttributes) -> Option<Verdict> {
    let seed = identity.seed.as_str();
    let seed_namespace = format!("seed-{seed}");
    let extension = identity.kind == ClientKind::Extension;
    let a = attributes;
    match (a.group.as_str(), a.resource.as_str()) {
        ("coordination.k8s.io", "leases") if extension => {
            if a.namespace != seed_namespace {
                return Some(no_opinion("lease object is not in seed namespace"));
            }
            const LEASE_VERBS: &[&str] = &[
                "create",
                "get",
                "list",
                "watch",
                "update",
                "patch",
                "delete",
                "deletecollection",
            ];
            Some(if LEASE_VERBS.contains(&a.verb.as_str()) {
                Verdict::Allow
            } else {
                verbs_reason(LEASE_VERBS, false)
            })
        }
        ("", "configmaps")
            if a.verb == "get"
                && a.namespace == "gardener-system-public"
                && a.name == "gardener-info" =>
        {
            Some(Verdict::Allow)
        }
        // Every seed client, extensions included, may read its own namespace's Secrets and
        // delete its own bootstrap token.
        ("", "secrets") => {
            let reads = matches!(a.verb.as_str(), "get" | "list" | "watch");
            let own_token = a.verb == "delete"
                && a.namespace == "kube-system"
                && a.name == bootstrap_token_secret("garden", seed);
            ((reads && a.namespace == seed_namespace) || own_token).then_some(Verdict::Allow)
        }
        ("", "serviceaccounts") if !extension => {
            let own_bootstrap = a.verb == "delete"
                && a.namespace == "garden"
                && a.name == format!("gardenlet-bootstrap-{seed}");
            (own_bootstrap || a.namespace == seed_namespace).then_some(Verdict::Allow)
        }
        ("rbac.authorization.k8s.io", "clusterrolebindings")
            if !extension && a.verb == "delete" =>
        {
            bootstrapper_binding_of(&a.name).and_then(|(namespace, name)| {
                (namespace == "garden" && name == seed).then_some(Verdict::Allow)
            })
        }
        ("core.gardener.cloud", "shoots")
            if a.verb == "get" && a.namespace == "garden" && a.name == seed =>
        {
            Some(Verdict::Allow)
        }
        _ => None,
    }
}

/// `gardener.cloud:system:seed-bootstrapper:[<namespace>:]<name>` with `gardenlet-bootstrap-`
/// stripped from the name (SeedRestriction parses bootstrapper bindings the same way).
pub(super) fn bootstrapper_binding_of(binding: &str) -> Option<(&str, &str)> {
    let rest = binding.strip_prefix("gardener.cloud:system:seed-bootstrapper:")?;
    let parts: Vec<&str> = rest.split(':').collect();
    let (namespace, name) = match parts.as_slice() {
        [name] => ("", *name),
        [namespace, name, ..] => (*namespace, *name),
        [] => return None,
    };
    Some((
        namespace,
        name.strip_prefix("gardenlet-bootstrap-").unwrap_or(name),
    ))
}

/// The generic check of spec §2.2, in its order.
fn check(
    rule: &Rule,
    seed: &str,
    a: &ResourceAttributes,
    graph: &Graph,
    selectors: Selectors,
) -> Verdict {
    if let Some(namespaces) = rule.namespaces
        && !namespaces.contains(&a.namespace.as_str())
    {
        return no_opinion(&format!(
            "only the following namespaces are allowed for this resource type: {}",
            listed(namespaces, true)
        ));
    }
    if !a.subresource.is_empty() && !rule.subresources.contains(&a.subresource.as_str()) {
        return no_opinion(&format!(
            "only the following subresources are allowed for this resource type: {}",
            listed(rule.subresources, true)
        ));
    }
    if rule.always.contains(&a.verb.as_str()) {
        return Verdict::Allow;
    }
    if !rule.verbs.contains(&a.verb.as_str()) {
        let union: Vec<&str> = rule.verbs.iter().chain(rule.always).copied().collect();
        return verbs_reason(&union, true);
    }
    let collection = matches!(a.verb.as_str(), "list" | "watch");
    if collection && (a.name.is_empty() || rule.field == Some("metadata.name")) {
        let configured = rule.field.is_some() || rule.label;
        match selectors {
            Selectors::Possible => {
                return if selects_seed(rule, seed, a) {
                    Verdict::Allow
                } else {
                    no_opinion(&format!(
                        "must specify field or label selector for name {seed}"
                    ))
                };
            }
            Selectors::NotPossible if configured => return Verdict::Allow,
            Selectors::NotPossible => {}
        }
    }
    if a.name.is_empty() {
        return no_opinion("No Object name found");
    }
    let namespace = if a.resource == "namespaces" {
        ""
    } else {
        a.namespace.as_str()
    };
    let vertex = Vertex::new(rule.kind, namespace, &a.name);
    if a.verb == "delete" && !graph.contains(&vertex) {
        // [QUIRK] upstream's: nothing refers to the object, so nothing stops its deletion.
        return Verdict::Allow;
    }
    if graph.has_path(&vertex, &Vertex::cluster(Kind::Seed, seed)) {
        Verdict::Allow
    } else {
        no_opinion("no relationship found")
    }
}

/// Whether the request's selectors narrow it to `seed`. Tighter than upstream, deliberately:
/// only `=`, `==` or `in` with exactly the configured value count (upstream also lets `!=`,
/// `notin` and `!key` label requirements through, which select other seeds' objects).
fn selects_seed(rule: &Rule, seed: &str, a: &ResourceAttributes) -> bool {
    let pins = |requirement: &Requirement, key: &str, value: &str| {
        requirement.key == key
            && matches!(requirement.operator, Operator::Equals | Operator::In)
            && requirement.values == [value]
    };
    let by_field = rule
        .field
        .is_some_and(|field| a.fields.iter().any(|r| pins(r, field, seed)));
    let by_label = rule.label && a.labels.iter().any(|r| pins(r, &seed_label(seed), "true"));
    by_field || by_label
}

#[cfg(test)]
#[path = "authorizer_tests.rs"]
mod tests;
#[cfg(test)]
#[path = "authorizer_upstream/mod.rs"]
mod upstream;
