//! How deeply template-built values may nest, and no cycles: the renderer's own code and the
//! template engine walk values recursively (printing, `toJson`, `toYaml`, `deepCopy`, comparing,
//! dropping), so a chart that nests a value 100 000 levels deep in a loop (`$d = dict "a" $d`)
//! or makes a map contain itself (`set $d "a" $d`) would overflow the stack and abort the whole
//! process — the agent, or `seedlet sandbox` with every controller in it. Go grows its stacks,
//! so Helm renders such a chart; here it fails like any over-limit chart instead.
//!
//! Every function that nests values is checked ([`measure_of`]): those that build a new
//! container from their arguments on their result; `append`/`prepend` on the value they add; and
//! those that insert into an existing map, before they mutate, on what they insert: that it
//! does not reach the map (so no cycle is ever made) and does not end deeper than the bound where
//! it lands. Measuring only what is new keeps a loop that grows a map with `set` or a list with
//! `append` from walking everything built so far on every step: walking the whole result made
//! 8 000 `set`s take 3.5 s instead of 0.03 s, and doubled the time of 8 000 `append`s. Values from values files,
//! `fromYaml`/`fromJson` and literals are bounded by their parsers already. A map changed with
//! `set` after it was nested in another value can make that other value deeper than the bound
//! without being looked at again; each such step adds at most [`MAX_VALUE_DEPTH`] levels.

use std::collections::HashMap;

use minijinja::Error;
use minijinja::value::Value;

use crate::funcs::fail;
use crate::funcs::value::GoMap;

/// Deepest nesting of lists and maps a template may build. Real charts stay below 20 levels;
/// 256 leaves room while every recursive walk of
/// such a value fits in a 2 MiB thread stack even in a debug build.
pub const MAX_VALUE_DEPTH: usize = 256;

/// What of a call is measured, by function ([`measure_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Measure {
    /// The result: a new container holding the arguments (or, for `chunk`, the list's items)
    /// one level deeper.
    Result,
    /// The arguments after the first, which land one level down in a copy of the list given
    /// first (`append`, `prepend`); that list's own items were measured when it was built.
    Added,
    /// The arguments after the first, inserted this many levels below the map given first,
    /// checked before the map changes: `set`'s value becomes an entry (1), a merge source's
    /// entries become the map's entries (0).
    Inserted(usize),
}

/// The functions that nest values, and what of their calls is measured.
const MEASURED: &[(&str, Measure)] = &[
    ("dict", Measure::Result),
    ("list", Measure::Result),
    ("tuple", Measure::Result),
    ("chunk", Measure::Result),
    ("mustChunk", Measure::Result),
    ("append", Measure::Added),
    ("push", Measure::Added),
    ("mustAppend", Measure::Added),
    ("mustPush", Measure::Added),
    ("prepend", Measure::Added),
    ("mustPrepend", Measure::Added),
    ("set", Measure::Inserted(1)),
    ("merge", Measure::Inserted(0)),
    ("mustMerge", Measure::Inserted(0)),
    ("mergeOverwrite", Measure::Inserted(0)),
    ("mustMergeOverwrite", Measure::Inserted(0)),
];

/// What of a call to the function `name` is measured; `None` for functions that nest nothing.
pub(crate) fn measure_of(name: &str) -> Option<Measure> {
    MEASURED
        .iter()
        .find(|(function, _)| *function == name)
        .map(|(_, measure)| *measure)
}

/// The checks before a call of `what` with `args` runs.
pub(crate) fn check_arguments(what: &str, measure: Measure, args: &[Value]) -> Result<(), Error> {
    let Some((first, rest)) = args.split_first() else {
        return Ok(());
    };
    for value in rest {
        match measure {
            Measure::Result => {}
            Measure::Added => Walk::new(None)
                .depth_at(value, 1)
                .map(|_| ())
                .map_err(|e| e.error(what))?,
            Measure::Inserted(level) => check_insert(what, first, value, level)?,
        }
    }
    Ok(())
}

/// The check of a call's result.
pub(crate) fn check_result(what: &str, measure: Measure, result: &Value) -> Result<(), Error> {
    match measure {
        Measure::Result => check_depth(what, result),
        Measure::Added | Measure::Inserted(_) => Ok(()),
    }
}

/// Fails when `value` nests deeper than [`MAX_VALUE_DEPTH`] or contains itself.
fn check_depth(what: &str, value: &Value) -> Result<(), Error> {
    Walk::new(None)
        .depth(value)
        .map(|_| ())
        .map_err(|e| e.error(what))
}

/// Fails when inserting `inserted` into the map `target`, `level` levels below it (see
/// [`Measure::Inserted`]), would make `target` contain itself or nest deeper than
/// [`MAX_VALUE_DEPTH`].
pub(crate) fn check_insert(
    what: &str,
    target: &Value,
    inserted: &Value,
    level: usize,
) -> Result<(), Error> {
    let Some(target) = GoMap::of(target) else {
        return Ok(());
    };
    Walk::new(Some(target.identity()))
        .depth_at(inserted, level)
        .map(|_| ())
        .map_err(|e| e.error(what))
}

/// Why a walk stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refused {
    TooDeep,
    Cycle,
}

impl Refused {
    fn error(self, what: &str) -> Error {
        match self {
            Refused::TooDeep => fail(format!(
                "{what}: a value nested more than {MAX_VALUE_DEPTH} levels deep"
            )),
            Refused::Cycle => fail(format!("{what}: a value that would contain itself")),
        }
    }
}

/// A depth-first walk computing the nesting depth of a value, each shared container once
/// (shared parts are common: `list $x $x` or a dict passed around), refusing cycles and depths
/// over the bound. Iterative, so the walk itself needs no stack.
struct Walk {
    /// Depth of containers already measured, by address (`None` while on the current path).
    seen: HashMap<usize, Option<usize>>,
    /// A map the walk must not reach (the target of an insertion).
    forbidden: Option<usize>,
}

/// One step of the walk.
enum Step {
    /// Measure this value, at this depth below the start.
    Enter(Value, usize),
    /// All children of the container at this address are measured.
    Leave(usize, usize),
}

impl Walk {
    fn new(forbidden: Option<usize>) -> Self {
        Self {
            seen: HashMap::new(),
            forbidden,
        }
    }

    /// The deepest nesting below `root` (0 for a scalar).
    fn depth(&mut self, root: &Value) -> Result<usize, Refused> {
        self.depth_at(root, 0)
    }

    /// The deepest nesting of `root` placed `level` levels below the start (`level` for a
    /// scalar).
    fn depth_at(&mut self, root: &Value, level: usize) -> Result<usize, Refused> {
        let mut deepest = level;
        // Depth reached below each open container, by address.
        let mut below: HashMap<usize, usize> = HashMap::new();
        let mut path: Vec<usize> = Vec::new();
        let mut steps = vec![Step::Enter(root.clone(), level)];
        while let Some(step) = steps.pop() {
            match step {
                Step::Enter(value, level) => {
                    let Some(children) = children(&value) else {
                        continue;
                    };
                    if level >= MAX_VALUE_DEPTH {
                        return Err(Refused::TooDeep);
                    }
                    let id = identity(&value);
                    if let Some(id) = id {
                        if Some(id) == self.forbidden {
                            return Err(Refused::Cycle);
                        }
                        match self.seen.get(&id) {
                            Some(None) => return Err(Refused::Cycle),
                            Some(Some(measured)) => {
                                let reached = level + measured;
                                if reached > MAX_VALUE_DEPTH {
                                    return Err(Refused::TooDeep);
                                }
                                note(&mut below, &path, reached, &mut deepest);
                                continue;
                            }
                            None => {
                                self.seen.insert(id, None);
                                below.insert(id, level + 1);
                                path.push(id);
                                steps.push(Step::Leave(id, level));
                            }
                        }
                    }
                    note(&mut below, &path, level + 1, &mut deepest);
                    steps.extend(
                        children
                            .into_iter()
                            .map(|child| Step::Enter(child, level + 1)),
                    );
                }
                Step::Leave(id, level) => {
                    path.pop();
                    let reached = below.remove(&id).unwrap_or(level + 1);
                    self.seen.insert(id, Some(reached - level));
                    note(&mut below, &path, reached, &mut deepest);
                }
            }
        }
        Ok(deepest)
    }
}

/// Records that a container at `reached` levels below the start exists under every open
/// container of `path`.
fn note(below: &mut HashMap<usize, usize>, path: &[usize], reached: usize, deepest: &mut usize) {
    *deepest = (*deepest).max(reached);
    if let Some(open) = path.last().and_then(|id| below.get_mut(id)) {
        *open = (*open).max(reached);
    }
}

/// The values of a map or the elements of a list, for the two container kinds templates build
/// (`dict` maps, which values files also become, and lists); `None` for anything else. The
/// renderer's own objects (the root context, `.Files`, `.Capabilities`, …) are leaves here:
/// templates cannot change them, and walking them on every `dict "root" $` would cost more than
/// the render.
fn children(value: &Value) -> Option<Vec<Value>> {
    if let Some(map) = GoMap::of(value) {
        return Some(map.values());
    }
    value.downcast_object_ref::<Vec<Value>>().cloned()
}

/// A stable identity of a shared container: the address of the object behind the value, for
/// the container kinds templates build and mutate (maps and lists).
fn identity(value: &Value) -> Option<usize> {
    if let Some(map) = GoMap::of(value) {
        return Some(map.identity());
    }
    value.downcast_object_ref::<Vec<Value>>().map(address)
}

fn address<T>(object: &T) -> usize {
    std::ptr::from_ref(object) as usize
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn map(entries: &[(&str, Value)]) -> Value {
        GoMap::value(
            entries
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
        )
    }

    fn nested(levels: usize) -> Value {
        let mut value = Value::from(1);
        for _ in 0..levels {
            value = map(&[("a", value)]);
        }
        value
    }

    #[test]
    fn depths_are_measured_across_lists_and_maps() {
        let cases = [
            (Value::from("x"), 0),
            (Value::from(vec![Value::from(1)]), 1),
            (map(&[("a", Value::from(vec![Value::from(1)]))]), 2),
            (nested(10), 10),
            (Value::from(vec![nested(3), Value::from(2), nested(7)]), 8),
        ];
        for (value, expected) in cases {
            assert_eq!(Walk::new(None).depth(&value), Ok(expected), "{value}");
        }
    }

    #[test]
    fn shared_parts_are_measured_once_and_still_count_their_depth() {
        // 64 levels, each a list holding the level below twice: 2^64 paths, 64 containers.
        let mut value = Value::from(1);
        for _ in 0..64 {
            value = Value::from(vec![value.clone(), value]);
        }
        assert_eq!(Walk::new(None).depth(&value), Ok(64));
        let deeper = Value::from(vec![nested(5), value.clone(), value]);
        assert_eq!(Walk::new(None).depth(&deeper), Ok(65));
    }

    #[test]
    fn values_deeper_than_the_bound_and_cycles_are_refused() {
        assert_eq!(
            Walk::new(None).depth(&nested(MAX_VALUE_DEPTH)),
            Ok(MAX_VALUE_DEPTH)
        );
        assert_eq!(
            Walk::new(None).depth(&nested(MAX_VALUE_DEPTH + 1)),
            Err(Refused::TooDeep)
        );
        let target = map(&[]);
        let holder = map(&[("inner", Value::from(vec![target.clone()]))]);
        assert!(
            check_insert("set", &target, &holder, 1).is_err(),
            "would contain itself"
        );
        assert!(check_insert("set", &target, &target, 1).is_err());
        assert!(check_insert("set", &holder, &target, 1).is_ok());
        let deepest_allowed = nested(MAX_VALUE_DEPTH - 1);
        assert!(check_insert("set", &target, &deepest_allowed, 1).is_ok());
        assert!(
            check_insert("set", &target, &nested(MAX_VALUE_DEPTH), 1).is_err(),
            "an entry one level below the map"
        );
        assert!(
            check_insert("merge", &target, &nested(MAX_VALUE_DEPTH), 0).is_ok(),
            "a merge source's entries land beside the map's own"
        );
    }
}
