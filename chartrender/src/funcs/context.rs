//! The context a chart template executes in: its dot, the nesting depth of `include`/`tpl` calls, the render's
//! include cache and `lookup` source, and the chart's tables, which also answer the names the translation reads
//! (`_p<n>` field paths, `_t<…>` long texts, `f_*` functions).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use minijinja::Error;
use minijinja::State;
use minijinja::value::{Value, ValueKind};

use super::fail;
use super::template::{ActionTable, AliasPaths};
use super::value::{MUTATIONS, is_nil};
use crate::gotmpl;

/// The name under which an execution context hands out itself.
pub(crate) const EXEC_CONTEXT: &str = "_exec";

/// The context of the template executing now (its depth, include cache, `lookup` source and the chart's action
/// table): one lookup for all of them.
pub(crate) fn exec_context(state: &State) -> Result<Arc<ExecContext>, Error> {
    state
        .lookup(EXEC_CONTEXT)
        .and_then(|context| context.downcast_object::<ExecContext>())
        .ok_or_else(|| fail("no chart template is being executed"))
}

/// The context of one template execution: dot (`_d0`), the nesting depth of `include`/`tpl` calls, the render's
/// include cache and the `lookup` source, and the chart's action table. A fixed set of fields, built for every file and every `include` more
/// cheaply than minijinja's `context!` map, which serializes each value.
#[derive(Debug)]
pub(crate) struct ExecContext {
    pub(crate) dot: Value,
    pub(crate) depth: i64,
    pub(crate) cache: Option<Value>,
    pub(crate) lookup: Option<Value>,
    /// The field paths the executed template reads through `_p<n>` names, resolved from `dot` when read.
    pub(crate) aliases: Option<AliasPaths>,
    /// What those paths gave from this `dot` while no map changed (a chart file's root data keeps it between the
    /// renders that reuse that data; `None` for `include` and `tpl`, whose dot is whatever was passed).
    pub(crate) resolved: Option<Arc<ResolvedPaths>>,
    /// The chart's action table (for `include`, `template` and `tpl`).
    pub(crate) actions: Arc<ActionTable>,
}

impl ExecContext {
    /// The context as a template value.
    pub(crate) fn value(self) -> Value {
        Value::from_object(self)
    }
}

impl minijinja::value::Object for ExecContext {
    fn repr(self: &Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.get_value_by_str(key.as_str()?)
    }

    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        match key {
            "_d0" => Some(self.dot.clone()),
            "_depth" => Some(Value::from(self.depth)),
            "_cache" => self.cache.clone(),
            "_lookup" => self.lookup.clone(),
            EXEC_CONTEXT => Some(Value::from_dyn_object(Arc::clone(self))),
            // Only functions have names that start with `f_` (variables live in `_v`, data in `_d<n>`).
            _ if key.starts_with("f_") => crate::render::function(key),
            _ if key.starts_with(gotmpl::TEXT_PREFIX) => self.actions.text(key),
            _ => {
                let number: usize = key.strip_prefix(gotmpl::ALIAS_PREFIX)?.parse().ok()?;
                let path = self.aliases.as_ref()?.get(number)?;
                Some(match &self.resolved {
                    Some(resolved) => {
                        resolved.get_or_resolve(number, || resolve_path(&self.dot, path))
                    }
                    None => resolve_path(&self.dot, path),
                })
            }
        }
    }

    fn enumerate(self: &Arc<Self>) -> minijinja::value::Enumerator {
        minijinja::value::Enumerator::Str(&["_d0", "_depth", "_cache", "_lookup", EXEC_CONTEXT])
    }
}

/// `dot.<path>` as minijinja's attribute lookups compute it with lenient undefined values (a missing field is
/// undefined, a field of an undefined value fails): the failure is carried as an invalid value, which fails the
/// name's lookup with the very error the lookups would have raised, on the same line. Nil data gives no value.
fn resolve_path(dot: &Value, path: &str) -> Value {
    // Go reads every field of nil template data (`include "d" .Values.missing`) as no value.
    if is_nil(dot) {
        return super::value::missing();
    }
    let mut value = dot.clone();
    // Names hold no `.` (see [`crate::gotmpl::Translated::aliases`]).
    for name in gotmpl::split_ascii(path, b'.') {
        value = match value.get_attr(name) {
            Ok(value) => value,
            Err(error) => return Value::from(error),
        };
        if value.kind() == minijinja::value::ValueKind::Invalid {
            break;
        }
    }
    value
}

/// The values of a template's `_p<n>` paths read from one root data, valid while no map anywhere has changed
/// since they were read ([`MUTATIONS`] unchanged): only maps change (`set`, `unset`, `merge`, …, each counted), so
/// a path from the same root through unchanged maps gives the very same value. Resolving a path was 18 % of a
/// cached ext-basic render (a read-locked map search per step); the root data of a chart file is kept between
/// renders that change no map, and with it what its paths gave.
#[derive(Debug, Default)]
pub(crate) struct ResolvedPaths {
    /// The mutation count the values belong to, and the value of each path number read so far.
    values: Mutex<(u64, Vec<Option<Value>>)>,
}

impl ResolvedPaths {
    /// The value of path `number`, from the kept values or from `resolve` (kept unless it failed or a map changed
    /// while it ran).
    fn get_or_resolve(&self, number: usize, resolve: impl FnOnce() -> Value) -> Value {
        let epoch = MUTATIONS.load(Ordering::Relaxed);
        {
            let mut values = self.values.lock().unwrap_or_else(|p| p.into_inner());
            if values.0 != epoch {
                values.1.clear();
                values.0 = epoch;
            }
            if let Some(Some(value)) = values.1.get(number) {
                return value.clone();
            }
        }
        let value = resolve();
        if value.kind() != ValueKind::Invalid && MUTATIONS.load(Ordering::Relaxed) == epoch {
            let mut values = self.values.lock().unwrap_or_else(|p| p.into_inner());
            if values.0 == epoch {
                if values.1.len() <= number {
                    values.1.resize(number + 1, None);
                }
                values.1[number] = Some(value.clone());
            }
        }
        value
    }
}

#[cfg(test)]
mod tests {

    use std::collections::BTreeMap;

    use super::*;
    use crate::funcs::value::GoMap;

    #[test]
    fn resolved_paths_are_read_again_once_a_map_changed() {
        let inner = GoMap::value(BTreeMap::from([("b".to_string(), Value::from(1))]));
        let root = GoMap::value(BTreeMap::from([("a".to_string(), inner.clone())]));
        let path = "a.b";
        let resolved = ResolvedPaths::default();
        let resolutions = std::cell::Cell::new(0);
        let read = || {
            resolved.get_or_resolve(0, || {
                resolutions.set(resolutions.get() + 1);
                resolve_path(&root, path)
            })
        };
        // Other tests change maps on other threads, which also (rightly) makes the values be read again: the
        // counts are checked only when no map changed meanwhile.
        let unchanged_since = |epoch: u64| MUTATIONS.load(Ordering::Relaxed) == epoch;
        let epoch = MUTATIONS.load(Ordering::Relaxed);
        assert_eq!(read(), Value::from(1));
        assert_eq!(read(), Value::from(1));
        if unchanged_since(epoch) {
            assert_eq!(resolutions.get(), 1, "an unchanged path is resolved once");
        }
        GoMap::of(&inner)
            .unwrap()
            .update(|entries| entries.insert("b".to_string(), Value::from(2)));
        let before = resolutions.get();
        let epoch = MUTATIONS.load(Ordering::Relaxed);
        assert_eq!(read(), Value::from(2), "a changed map is read again");
        assert_eq!(read(), Value::from(2));
        assert!(resolutions.get() > before);
        if unchanged_since(epoch) {
            assert_eq!(resolutions.get(), before + 1, "and kept again afterwards");
        }
    }
}
