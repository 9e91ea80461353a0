//! The compact [`Graph`] against a model: the plain representation the graph had before its
//! vertices were interned (hash maps of whole vertices to neighbour sets), driven through the same
//! long pseudo-random sequence of updates, edge additions and deletions. After every step both
//! must hold the same vertices and edges and answer `has_path` alike.

use std::collections::{BTreeMap, BTreeSet};

use super::{Graph, Kind, Update, Vertex};

/// The reference: every vertex with its outgoing and incoming neighbours.
#[derive(Default)]
struct Model {
    out: BTreeMap<Vertex, BTreeSet<Vertex>>,
    inc: BTreeMap<Vertex, BTreeSet<Vertex>>,
}

impl Model {
    fn add_edge(&mut self, from: Vertex, to: Vertex) {
        if from == to {
            return;
        }
        self.add_vertex(from.clone());
        self.add_vertex(to.clone());
        self.inc.entry(to.clone()).or_default().insert(from.clone());
        self.out.entry(from).or_default().insert(to);
    }

    fn add_vertex(&mut self, vertex: Vertex) {
        self.inc.entry(vertex.clone()).or_default();
        self.out.entry(vertex).or_default();
    }

    fn replace(&mut self, update: Update) {
        let Some(vertex) = update.vertex else { return };
        let incoming: Vec<Vertex> = self
            .inc
            .get(&vertex)
            .into_iter()
            .flatten()
            .filter(|v| update.incoming.contains(&v.kind))
            .cloned()
            .collect();
        for from in incoming {
            self.remove_edge_pruning(&from, &vertex, &from);
        }
        let outgoing: Vec<Vertex> = self
            .out
            .get(&vertex)
            .into_iter()
            .flatten()
            .filter(|v| update.outgoing.contains(&v.kind))
            .cloned()
            .collect();
        for to in outgoing {
            self.remove_edge_pruning(&vertex, &to, &to);
        }
        for (from, to) in update.edges {
            self.add_edge(from, to);
        }
        self.add_vertex(vertex);
    }

    fn delete_vertex(&mut self, vertex: &Vertex) {
        let Some(outgoing) = self.out.remove(vertex) else {
            return;
        };
        let incoming = self.inc.remove(vertex).unwrap_or_default();
        for to in outgoing {
            if let Some(set) = self.inc.get_mut(&to) {
                set.remove(vertex);
            }
            self.remove_if_edgeless(&to);
        }
        for from in incoming {
            if let Some(set) = self.out.get_mut(&from) {
                set.remove(vertex);
            }
            self.remove_if_edgeless(&from);
        }
    }

    fn remove_edge_pruning(&mut self, from: &Vertex, to: &Vertex, far: &Vertex) {
        if let Some(set) = self.out.get_mut(from) {
            set.remove(to);
        }
        if let Some(set) = self.inc.get_mut(to) {
            set.remove(from);
        }
        self.remove_if_edgeless(far);
    }

    fn remove_if_edgeless(&mut self, vertex: &Vertex) {
        if self.out.get(vertex).is_some_and(BTreeSet::is_empty)
            && self.inc.get(vertex).is_some_and(BTreeSet::is_empty)
        {
            self.out.remove(vertex);
            self.inc.remove(vertex);
        }
    }

    fn has_path(&self, from: &Vertex, to: &Vertex) -> bool {
        if !self.out.contains_key(from) || !self.out.contains_key(to) {
            return false;
        }
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(vertex) = stack.pop() {
            if vertex == to {
                return true;
            }
            if seen.insert(vertex) {
                stack.extend(self.out.get(vertex).into_iter().flatten());
            }
        }
        false
    }
}

/// A small deterministic generator (64-bit LCG), so a failure replays exactly.
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

const KINDS: [Kind; 5] = [
    Kind::Seed,
    Kind::Shoot,
    Kind::Secret,
    Kind::ControllerInstallation,
    Kind::ControllerRegistration,
];

/// One of a small pool of vertices, so that updates keep hitting the same ones.
fn vertex(random: &mut Random) -> Vertex {
    let kind = KINDS[random.below(KINDS.len())];
    let namespace = ["", "garden-dev"][random.below(2)];
    Vertex::new(kind, namespace, &format!("v{}", random.below(6)))
}

fn update(random: &mut Random) -> Update {
    let vertex = vertex(random);
    let edges = (0..random.below(4))
        .map(|_| {
            let other = self::vertex(random);
            if random.below(2) == 0 {
                (vertex.clone(), other)
            } else {
                (other, vertex.clone())
            }
        })
        .collect();
    Update {
        vertex: Some(vertex),
        incoming: &[Kind::Secret, Kind::ControllerRegistration, Kind::Shoot],
        outgoing: &[Kind::Seed, Kind::Shoot],
        edges,
    }
}

fn edges_of(model: &Model) -> Vec<(Vertex, Vertex)> {
    model
        .out
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |to| (from.clone(), to.clone())))
        .collect()
}

#[test]
fn the_compact_graph_behaves_like_the_plain_model() {
    let mut random = Random(32);
    let mut graph = Graph::default();
    let mut model = Model::default();
    let (mut most_edges, mut deletions) = (0, 0);
    for step in 0..4000 {
        match random.below(10) {
            0..=5 => {
                let update = update(&mut random);
                graph.replace(update.clone());
                model.replace(update);
            }
            6 | 7 => {
                let (from, to) = (vertex(&mut random), vertex(&mut random));
                graph.add_edge(from.clone(), to.clone());
                model.add_edge(from, to);
            }
            _ => {
                let gone = vertex(&mut random);
                deletions += usize::from(model.out.contains_key(&gone));
                graph.delete_vertex(&gone);
                model.delete_vertex(&gone);
            }
        }
        let edges: Vec<(Vertex, Vertex)> = graph
            .edges()
            .into_iter()
            .map(|(from, to)| (from.clone(), to.clone()))
            .collect();
        assert_eq!(edges, edges_of(&model), "edges after step {step}");
        most_edges = most_edges.max(edges.len());
        assert_eq!(graph.len(), model.out.len(), "vertices after step {step}");
        for vertex in model.out.keys() {
            assert!(graph.contains(vertex), "{vertex} after step {step}");
        }
        let (from, to) = (self::vertex(&mut random), self::vertex(&mut random));
        assert_eq!(
            graph.has_path(&from, &to),
            model.has_path(&from, &to),
            "{from} → {to} after step {step}"
        );
    }
    // The sequence really exercised the graph: it grew, and existing vertices were deleted.
    assert!(most_edges >= 20, "at most {most_edges} edges");
    assert!(deletions >= 100, "{deletions} deletions");
    assert!(
        graph.free.len() < graph.nodes.len(),
        "removed slots are reused"
    );
}
