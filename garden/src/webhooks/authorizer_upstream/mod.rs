//! Gardener's own SeedAuthorizer cases (`auth/seed/authorizer_test.go` at `b312835d17`) as
//! tables, one per resource: the same request, the same answer of the graph and the same
//! decision and reason. Upstream mocks the graph; here each case builds the smallest graph that
//! answers the same — the requested object with an edge to `Seed:seed` ("path"), the object
//! alone ("no path", the default: it exists for the delete rule and reaches nothing, so a case
//! upstream decides without asking its mock fails here if the graph is consulted), or nothing
//! ("absent", for the delete of an unknown object). Upstream checks with selector authorization
//! possible, and so do these.
//!
//! Upstream runs its common resource tables once for a gardenlet and once for an extension
//! client; so do these ([`CLIENTS`]).

use super::{Selectors, decide};
use crate::webhooks::graph::{Graph, Kind, Vertex};
use crate::webhooks::review::{ResourceAttributes, Review, Verdict, parse_raw};

mod clients;
mod common;

/// The requesting seed in every case.
const SEED: &str = "seed";
const CORE: &str = "core.gardener.cloud";

const NO_RELATIONSHIP: &str = "no relationship found";
const NO_NAME: &str = "No Object name found";
const NO_SELECTOR: &str = "must specify field or label selector for name seed";

/// Who asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    /// `gardener.cloud:system:seed:seed` in `gardener.cloud:system:seeds`.
    Gardenlet,
    /// ServiceAccount `extension-provider-local` in `seed-seed`.
    Extension,
}

const CLIENTS: [Client; 2] = [Client::Gardenlet, Client::Extension];

/// What the graph says about the requested object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Related {
    /// It reaches `Seed:seed`.
    Path,
    /// It exists but does not reach `Seed:seed`.
    NoPath,
    /// It is not in the graph.
    Absent,
}

/// One request: a resource table's defaults, changed per case.
#[derive(Debug, Clone)]
struct Ask {
    kind: Kind,
    group: &'static str,
    resource: &'static str,
    verb: String,
    namespace: String,
    name: String,
    subresource: String,
    fields: String,
    labels: String,
    related: Related,
}

impl Ask {
    fn sub(mut self, subresource: &str) -> Self {
        self.subresource = subresource.into();
        self
    }
    fn named(mut self, name: &str) -> Self {
        self.name = name.into();
        self
    }
    fn within(mut self, namespace: &str) -> Self {
        self.namespace = namespace.into();
        self
    }
    /// A list/watch of the whole collection with the raw field selector `fields`.
    fn fields(mut self, fields: &str) -> Self {
        self.name = String::new();
        self.fields = fields.into();
        self
    }
    /// A list/watch of the whole collection with the raw label selector `labels`.
    fn labels(mut self, labels: &str) -> Self {
        self.name = String::new();
        self.labels = labels.into();
        self
    }
    fn related(mut self, related: Related) -> Self {
        self.related = related;
        self
    }

    fn review(&self, client: Client) -> Review {
        let (user, groups) = match client {
            Client::Gardenlet => (
                format!("gardener.cloud:system:seed:{SEED}"),
                vec!["gardener.cloud:system:seeds".to_owned()],
            ),
            Client::Extension => (
                format!("system:serviceaccount:seed-{SEED}:extension-provider-local"),
                vec![
                    "system:serviceaccounts".to_owned(),
                    format!("system:serviceaccounts:seed-{SEED}"),
                ],
            ),
        };
        let selector = |raw: &str| parse_raw(raw).expect("a valid selector");
        Review {
            api_version: "authorization.k8s.io/v1".into(),
            kind: "SubjectAccessReview".into(),
            user,
            groups,
            resource: Some(ResourceAttributes {
                namespace: self.namespace.clone(),
                verb: self.verb.clone(),
                group: self.group.into(),
                version: "v1".into(),
                resource: self.resource.into(),
                subresource: self.subresource.clone(),
                name: self.name.clone(),
                fields: selector(&self.fields),
                labels: selector(&self.labels),
            }),
        }
    }

    fn graph(&self) -> Graph {
        let mut graph = Graph::default();
        let object = Vertex::new(self.kind, &self.namespace, &self.name);
        match self.related {
            Related::Path => graph.add_edge(object, Vertex::cluster(Kind::Seed, SEED)),
            Related::NoPath => graph.add_vertex(object),
            Related::Absent => {}
        }
        graph
    }
}

/// A resource table's default request.
#[derive(Debug, Clone, Copy)]
struct Resource {
    kind: Kind,
    group: &'static str,
    resource: &'static str,
    namespace: &'static str,
    name: &'static str,
}

impl Resource {
    const fn new(
        kind: Kind,
        (group, resource): (&'static str, &'static str),
        namespace: &'static str,
        name: &'static str,
    ) -> Self {
        Self {
            kind,
            group,
            resource,
            namespace,
            name,
        }
    }

    /// The default request with `verb`. The graph knows the object but finds no path to the
    /// seed, so a case upstream decides without the graph fails here if the graph is asked.
    fn ask(self, verb: &str) -> Ask {
        Ask {
            kind: self.kind,
            group: self.group,
            resource: self.resource,
            verb: verb.into(),
            namespace: self.namespace.into(),
            name: self.name.into(),
            subresource: String::new(),
            fields: String::new(),
            labels: String::new(),
            related: Related::NoPath,
        }
    }

    /// [`Self::ask`] for each of `verbs`.
    fn each(self, verbs: &[&str]) -> Vec<Ask> {
        verbs.iter().map(|verb| self.ask(verb)).collect()
    }
}

/// Cases and their expected verdicts.
#[derive(Debug, Default)]
struct Table(Vec<(Ask, Verdict)>);

impl Table {
    fn allow(mut self, asks: impl IntoIterator<Item = Ask>) -> Self {
        self.0
            .extend(asks.into_iter().map(|ask| (ask, Verdict::Allow)));
        self
    }
    /// Allowed because the graph has a path.
    fn allow_path(self, asks: impl IntoIterator<Item = Ask>) -> Self {
        self.allow(asks.into_iter().map(|ask| ask.related(Related::Path)))
    }
    fn refuse(mut self, reason: &str, asks: impl IntoIterator<Item = Ask>) -> Self {
        self.0.extend(
            asks.into_iter()
                .map(|ask| (ask, Verdict::NoOpinion(reason.to_owned()))),
        );
        self
    }
    /// Upstream's "path exists" entries: allowed with a path, `no relationship found` without.
    fn by_graph(self, asks: impl IntoIterator<Item = Ask> + Clone) -> Self {
        let without: Vec<Ask> = asks
            .clone()
            .into_iter()
            .map(|ask| ask.related(Related::NoPath))
            .collect();
        self.allow_path(asks).refuse(NO_RELATIONSHIP, without)
    }
    /// Upstream's selector entries for list and watch: allowed with `selector` (a field selector
    /// when `field`, else a label selector), refused without.
    fn selected(self, resource: Resource, field: bool, selector: &str) -> Self {
        let with = |ask: Ask| {
            if field {
                ask.fields(selector)
            } else {
                ask.labels(selector)
            }
        };
        self.allow(resource.each(&["list", "watch"]).into_iter().map(with))
            .refuse(
                NO_SELECTOR,
                resource
                    .each(&["list", "watch"])
                    .into_iter()
                    .map(|ask| ask.named("")),
            )
    }

    /// Decides every case for `client`; fails listing those that differ from upstream.
    fn check(self, client: Client) {
        let disagreements: Vec<String> = self
            .0
            .into_iter()
            .filter_map(|(ask, expected)| {
                let got = decide(&ask.review(client), &ask.graph(), Selectors::Possible);
                (got != expected)
                    .then(|| format!("{client:?} {ask:?}: got {got:?}, upstream {expected:?}"))
            })
            .collect();
        assert!(
            disagreements.is_empty(),
            "{} disagreement(s) with upstream:\n{}",
            disagreements.len(),
            disagreements.join("\n")
        );
    }
}

/// `only the following verbs are allowed for this resource type: <list>`.
fn verbs(list: &str) -> String {
    format!("only the following verbs are allowed for this resource type: {list}")
}

/// `only the following subresources are allowed for this resource type: <list>`.
fn subresources(list: &str) -> String {
    format!("only the following subresources are allowed for this resource type: {list}")
}

#[test]
fn requests_the_authorizer_does_not_judge() {
    let unhandled = Resource::new(Kind::Secret, ("", ""), "", "");
    let mut stranger = unhandled.ask("get").review(Client::Gardenlet);
    stranger.user = "foo".into();
    stranger.groups = Vec::new();
    stranger.resource = None;
    let mut non_resource = unhandled.ask("").review(Client::Gardenlet);
    non_resource.resource = None;
    let no_opinion = Verdict::NoOpinion(String::new());
    let graph = Graph::default();
    assert_eq!(
        decide(&stranger, &graph, Selectors::Possible),
        no_opinion,
        "no seed"
    );
    assert_eq!(
        decide(&non_resource, &graph, Selectors::Possible),
        no_opinion,
        "no resource request"
    );
    let irrelevant = unhandled.ask("").review(Client::Gardenlet);
    assert_eq!(
        decide(&irrelevant, &graph, Selectors::Possible),
        no_opinion,
        "irrelevant resource"
    );
}
