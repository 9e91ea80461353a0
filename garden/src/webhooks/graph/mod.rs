//! The resource-dependency graph of the seed authorizer (spec §3): vertices are objects (kind,
//! namespace, name), an edge A → B says "whoever may reach B may reach A". A seed may act on an
//! object when a path leads from it to `Seed:<seed>`.
//!
//! Kept literally as upstream keeps it, because the authorizer's delete rule depends on which
//! vertices exist: vertices appear with the edges that name them; an informer's handler
//! replaces the edges it owns ([`Graph::replace`]), and removing an edge also removes the far
//! vertex when that edge was its only connection; deleting an object removes its vertex and the
//! neighbours that only it kept alive.

pub mod edges;
mod ids;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ids::{Id, Ids};

/// The kinds of vertices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    BackupBucket,
    BackupEntry,
    Bastion,
    CertificateSigningRequest,
    CloudProfile,
    ClusterRoleBinding,
    ConfigMap,
    ControllerDeployment,
    ControllerInstallation,
    ControllerRegistration,
    CredentialsBinding,
    ExposureClass,
    Gardenlet,
    InternalSecret,
    Lease,
    ManagedSeed,
    Namespace,
    NamespacedCloudProfile,
    Project,
    Secret,
    SecretBinding,
    Seed,
    ServiceAccount,
    Shoot,
    ShootState,
    WorkloadIdentity,
}

/// One vertex: kind, namespace (`""` when cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Vertex {
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
}

impl Vertex {
    /// A vertex of `kind`.
    pub fn new(kind: Kind, namespace: &str, name: &str) -> Self {
        Self {
            kind,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// A cluster-scoped vertex.
    pub fn cluster(kind: Kind, name: &str) -> Self {
        Self::new(kind, "", name)
    }
}

impl std::fmt::Display for Vertex {
    /// `Kind namespace/name`, or `Kind name` when cluster-scoped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{:?} {}", self.kind, self.name)
        } else {
            write!(f, "{:?} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// What one handler run owns and adds: the edges from `incoming` kinds into `vertex` and from
/// `vertex` to `outgoing` kinds are replaced by `edges`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Update {
    /// The object's own vertex.
    pub vertex: Option<Vertex>,
    /// Kinds whose edges into `vertex` this handler owns.
    pub incoming: &'static [Kind],
    /// Kinds whose edges out of `vertex` this handler owns.
    pub outgoing: &'static [Kind],
    /// The edges to add, `(from, to)`.
    pub edges: Vec<(Vertex, Vertex)>,
}

/// The directed graph. Each vertex is stored once (shared by the index and its node) and known by
/// a `u32` id; adjacency is kept as sorted id sets in both directions. At 500 seeds the graph
/// holds one vertex per ControllerInstallation (tens of thousands): with vertices as hash-map
/// keys and neighbour sets of whole vertices, each installation's name was copied five times.
#[derive(Debug, Default)]
pub struct Graph {
    index: HashMap<Arc<Vertex>, Id>,
    nodes: Vec<Option<Node>>,
    /// Slots of removed vertices, reused by the next new ones.
    free: Vec<Id>,
}

/// A vertex and its edges.
#[derive(Debug)]
struct Node {
    vertex: Arc<Vertex>,
    out: Ids,
    inc: Ids,
}

impl Graph {
    /// Whether `vertex` exists.
    pub fn contains(&self, vertex: &Vertex) -> bool {
        self.index.contains_key(vertex)
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the graph is empty.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether a path leads from `from` to `to` along the edges; both must exist, and a vertex
    /// reaches itself.
    pub fn has_path(&self, from: &Vertex, to: &Vertex) -> bool {
        let (Some(from), Some(to)) = (self.id(from), self.id(to)) else {
            return false;
        };
        let mut seen = HashSet::new();
        let mut stack = vec![from];
        while let Some(id) = stack.pop() {
            if id == to {
                return true;
            }
            if !seen.insert(id) {
                continue;
            }
            if let Some(node) = self.node(id) {
                stack.extend(node.out.iter());
            }
        }
        false
    }

    /// Every vertex from which a path leads to `to` (`to` included), sorted; empty when `to`
    /// does not exist. For a Seed vertex: everything that seed may reach through the graph.
    pub fn reaching(&self, to: &Vertex) -> Vec<&Vertex> {
        let Some(to) = self.id(to) else {
            return Vec::new();
        };
        let mut seen: HashSet<Id> = HashSet::from([to]);
        let mut stack = vec![to];
        while let Some(id) = stack.pop() {
            for from in self.node(id).into_iter().flat_map(|node| node.inc.iter()) {
                if seen.insert(from) {
                    stack.push(from);
                }
            }
        }
        let mut reaching: Vec<&Vertex> =
            seen.into_iter().filter_map(|id| self.vertex(id)).collect();
        reaching.sort();
        reaching
    }

    /// Every edge `(from, to)`, sorted.
    pub fn edges(&self) -> Vec<(&Vertex, &Vertex)> {
        let mut edges: Vec<(&Vertex, &Vertex)> = self
            .nodes
            .iter()
            .flatten()
            .flat_map(|node| {
                node.out
                    .iter()
                    .filter_map(|to| self.vertex(to))
                    .map(|to| (&*node.vertex, to))
            })
            .collect();
        edges.sort();
        edges
    }

    /// Adds `from → to`, creating the vertices on demand.
    pub fn add_edge(&mut self, from: Vertex, to: Vertex) {
        if from == to {
            return;
        }
        let from = self.intern(from);
        let to = self.intern(to);
        if let Some(node) = self.node_mut(from) {
            node.out.insert(to);
        }
        if let Some(node) = self.node_mut(to) {
            node.inc.insert(from);
        }
    }

    /// Ensures `vertex` exists without edges (an object that refers to nothing yet).
    pub fn add_vertex(&mut self, vertex: Vertex) {
        self.intern(vertex);
    }

    /// Applies one handler run: removes the edges it owns (pruning), then adds its edges.
    pub fn replace(&mut self, update: Update) {
        let Some(vertex) = update.vertex else {
            return;
        };
        if let Some(id) = self.id(&vertex) {
            let owned = |ids: &Ids, kinds: &[Kind]| -> Vec<Id> {
                ids.iter()
                    .filter(|&other| self.vertex(other).is_some_and(|v| kinds.contains(&v.kind)))
                    .collect()
            };
            let (incoming, outgoing) = match self.node(id) {
                Some(node) => (
                    owned(&node.inc, update.incoming),
                    owned(&node.out, update.outgoing),
                ),
                None => (Vec::new(), Vec::new()),
            };
            for from in incoming {
                self.remove_edge_pruning(from, id, from);
            }
            for to in outgoing {
                self.remove_edge_pruning(id, to, to);
            }
        }
        for (from, to) in update.edges {
            self.add_edge(from, to);
        }
        // An object the informers know always has its vertex, edges or not (a Bastion without
        // `spec.seedName`): the delete rule of the authorizer asks for existence.
        self.add_vertex(vertex);
    }

    /// Removes `vertex` and every neighbour whose only connection it was.
    pub fn delete_vertex(&mut self, vertex: &Vertex) {
        let Some(id) = self.id(vertex) else {
            return;
        };
        let Some(node) = self.remove(id) else {
            return;
        };
        for to in node.out.iter() {
            if let Some(neighbour) = self.node_mut(to) {
                neighbour.inc.remove(id);
            }
            self.remove_if_edgeless(to);
        }
        for from in node.inc.iter() {
            if let Some(neighbour) = self.node_mut(from) {
                neighbour.out.remove(id);
            }
            self.remove_if_edgeless(from);
        }
    }

    fn id(&self, vertex: &Vertex) -> Option<Id> {
        self.index.get(vertex).copied()
    }

    fn node(&self, id: Id) -> Option<&Node> {
        self.nodes.get(id as usize).and_then(Option::as_ref)
    }

    fn node_mut(&mut self, id: Id) -> Option<&mut Node> {
        self.nodes.get_mut(id as usize).and_then(Option::as_mut)
    }

    fn vertex(&self, id: Id) -> Option<&Vertex> {
        self.node(id).map(|node| &*node.vertex)
    }

    /// The id of `vertex`, added without edges when new.
    fn intern(&mut self, vertex: Vertex) -> Id {
        if let Some(id) = self.id(&vertex) {
            return id;
        }
        let vertex = Arc::new(vertex);
        let node = Node {
            vertex: vertex.clone(),
            out: Ids::default(),
            inc: Ids::default(),
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.nodes[id as usize] = Some(node);
                id
            }
            None => {
                // More than u32::MAX vertices would not fit in memory long before.
                let id = Id::try_from(self.nodes.len()).unwrap_or(Id::MAX);
                self.nodes.push(Some(node));
                id
            }
        };
        self.index.insert(vertex, id);
        id
    }

    /// Takes `id`'s node out of the graph (its neighbours still list it).
    fn remove(&mut self, id: Id) -> Option<Node> {
        let node = self.nodes.get_mut(id as usize)?.take()?;
        self.index.remove(&*node.vertex);
        self.free.push(id);
        Some(node)
    }

    /// Removes `from → to`; `far` (one of the two) goes too when that edge was its only one.
    fn remove_edge_pruning(&mut self, from: Id, to: Id, far: Id) {
        if let Some(node) = self.node_mut(from) {
            node.out.remove(to);
        }
        if let Some(node) = self.node_mut(to) {
            node.inc.remove(from);
        }
        self.remove_if_edgeless(far);
    }

    fn remove_if_edgeless(&mut self, id: Id) {
        if self
            .node(id)
            .is_some_and(|node| node.out.is_empty() && node.inc.is_empty())
        {
            self.remove(id);
        }
    }
}

#[cfg(test)]
mod model_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn v(kind: Kind, name: &str) -> Vertex {
        Vertex::new(kind, "garden-dev", name)
    }

    fn seed(name: &str) -> Vertex {
        Vertex::cluster(Kind::Seed, name)
    }

    fn shoot_update(shoot: &str, seed_name: &str, binding: &str) -> Update {
        Update {
            vertex: Some(v(Kind::Shoot, shoot)),
            incoming: &[Kind::SecretBinding, Kind::Namespace],
            outgoing: &[Kind::Seed],
            edges: vec![
                (v(Kind::Shoot, shoot), seed(seed_name)),
                (v(Kind::SecretBinding, binding), v(Kind::Shoot, shoot)),
            ],
        }
    }

    #[test]
    fn reaching_lists_what_a_seed_may_reach_and_edges_print_sorted() {
        let mut graph = Graph::default();
        graph.replace(shoot_update("s", "a", "b"));
        graph.add_edge(v(Kind::Secret, "creds"), v(Kind::SecretBinding, "b"));
        graph.add_edge(v(Kind::Secret, "other"), seed("b"));
        let reaching: Vec<String> = graph
            .reaching(&seed("a"))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            reaching,
            [
                "Secret garden-dev/creds",
                "SecretBinding garden-dev/b",
                "Seed a",
                "Shoot garden-dev/s",
            ]
        );
        assert!(graph.reaching(&seed("missing")).is_empty());
        assert_eq!(graph.edges().len(), 4);
        assert_eq!(graph.edges()[0].0.to_string(), "Secret garden-dev/creds");
    }

    #[test]
    fn paths_follow_edge_direction_and_a_vertex_reaches_itself() {
        let mut graph = Graph::default();
        graph.replace(shoot_update("s", "a", "b"));
        graph.add_edge(v(Kind::Secret, "creds"), v(Kind::SecretBinding, "b"));
        assert!(graph.has_path(&v(Kind::Secret, "creds"), &seed("a")));
        assert!(!graph.has_path(&seed("a"), &v(Kind::Secret, "creds")));
        assert!(graph.has_path(&seed("a"), &seed("a")));
        assert!(
            !graph.has_path(&v(Kind::Secret, "creds"), &seed("b")),
            "b does not exist"
        );
    }

    #[test]
    fn replacing_owned_edges_moves_access_and_prunes_lonely_neighbours() {
        let mut graph = Graph::default();
        graph.replace(shoot_update("s", "a", "b"));
        assert!(graph.contains(&seed("a")));
        // The shoot moves to seed c and another binding.
        graph.replace(shoot_update("s", "c", "b2"));
        assert!(
            !graph.contains(&seed("a")),
            "a was kept only by the shoot's edge"
        );
        assert!(!graph.contains(&v(Kind::SecretBinding, "b")));
        assert!(graph.has_path(&v(Kind::SecretBinding, "b2"), &seed("c")));
    }

    #[test]
    fn edges_owned_by_other_handlers_survive_a_replace() {
        let mut graph = Graph::default();
        graph.replace(shoot_update("s", "a", "b"));
        // A BackupEntry handler's edge into the shoot is not the shoot handler's to remove.
        graph.add_edge(v(Kind::BackupEntry, "e"), v(Kind::Shoot, "s"));
        graph.replace(shoot_update("s", "a", "b"));
        assert!(graph.has_path(&v(Kind::BackupEntry, "e"), &seed("a")));
    }

    #[test]
    fn deleting_a_vertex_removes_neighbours_only_it_kept() {
        let mut graph = Graph::default();
        graph.replace(shoot_update("s", "a", "b"));
        graph.add_edge(v(Kind::Shoot, "other"), seed("a"));
        graph.delete_vertex(&v(Kind::Shoot, "s"));
        assert!(!graph.contains(&v(Kind::Shoot, "s")));
        assert!(!graph.contains(&v(Kind::SecretBinding, "b")));
        assert!(graph.contains(&seed("a")), "still kept by the other shoot");
        assert_eq!(graph.len(), 2);
    }
}
