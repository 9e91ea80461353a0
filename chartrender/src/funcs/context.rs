//! The context a chart template executes in: its dot, the nesting depth of `include`/`tpl` calls, the render's
//! include cache and `lookup` source, and the chart's tables, which also answer the names the translation reads
//! (`_p<n>` field paths, `_t<…>` long texts, `f_*` functions).

use std::sync::Arc;

use minijinja::Error;
use minijinja::State;
use minijinja::value::Value;

use super::fail;
use super::template::{ActionTable, AliasPaths};
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
                Some(resolve_path(&self.dot, path))
            }
        }
    }

    fn enumerate(self: &Arc<Self>) -> minijinja::value::Enumerator {
        minijinja::value::Enumerator::Str(&["_d0", "_depth", "_cache", "_lookup", EXEC_CONTEXT])
    }
}

/// `dot.<path>` as minijinja's attribute lookups compute it with lenient undefined values (a missing field is
/// undefined, a field of an undefined value fails): the failure is carried as an invalid value, which fails the
/// name's lookup with the very error the lookups would have raised, on the same line.
fn resolve_path(dot: &Value, path: &[String]) -> Value {
    let mut value = dot.clone();
    for name in path {
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
