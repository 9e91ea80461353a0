//! The template set a `tpl` string renders in, as Helm v3.11.3 builds it: the string is parsed first, under the
//! name of its data's `.Template.Name`, and then every chart file whose name is not taken yet, in the chart's parse
//! order, each `define` replacing the one parsed before it unless its body is empty (Go's `associate`). So the file
//! of that name (the one calling `tpl`, usually) is left out: a name it defines is seen as the other files define it,
//! or not at all; and a name the string defines is the chart's where another file defines it too.
//!
//! The chart's environment holds the winners of the chart's own set; [`resolve`] names the few definitions a `tpl`
//! string's set holds instead, from the chart's [`Definitions`] (kept only for names defined more than once or
//! with an empty body). Such a definition is translated again from its file, as `tpl` strings are: the chart's
//! translation reads field paths through names the action table keeps for the winner only.

use std::cell::RefCell;
use std::sync::Arc;

use foldhash::HashMap;

use super::action_table::ActionTable;

/// What a `tpl` string's set needs to know beyond the winners in the chart's environment: every definition of a
/// name defined more than once, and the names whose one definition is empty.
#[derive(Debug, Default)]
pub(crate) struct Definitions {
    /// Every definition of a name defined more than once, in parse order (a file defines a name once).
    several: HashMap<String, Vec<Definition>>,
    /// Names defined once, with an empty body.
    empty: Vec<String>,
}

/// One `define` of a name: the file it is written in and whether its body is empty.
#[derive(Debug)]
struct Definition {
    file: String,
    empty: bool,
}

impl Definitions {
    /// Notes the first definition of `name`, if its body is empty.
    pub(crate) fn note_first(&mut self, name: &str, empty: bool) {
        if empty {
            self.empty.push(name.to_string());
        }
    }

    /// Notes a later definition of `name` in `file`; the one before it, in `before`, is noted with it when this
    /// is the second (it is the first then).
    pub(crate) fn note_again(&mut self, name: &str, before: &str, file: &str, empty: bool) {
        let definitions = self.several.entry(name.to_string()).or_insert_with(|| {
            vec![Definition {
                file: before.to_string(),
                empty: self.empty.iter().any(|e| e == name),
            }]
        });
        definitions.push(Definition {
            file: file.to_string(),
            empty,
        });
    }
}

/// How a `tpl` string's set differs from the chart's: definitions to render in place of the environment's, and
/// every name the string's set settles (the rest of the hidden file's names are missing from it).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct TplSet {
    pub(crate) replaced: Vec<(String, String)>,
    settled: Vec<String>,
}

/// The definitions of a `tpl` string's set that differ from the chart's (see the module docs): `hidden` is the
/// file the string takes the place of, `own` the string's `define`s and `own_empty` those of them with an empty body;
/// `translate(file, name)` gives the translation of the `define` of `name` in chart file `file`.
pub(crate) fn resolve(
    actions: &ActionTable,
    hidden: Option<&str>,
    own: &[(String, String)],
    own_empty: &[String],
    translate: impl Fn(&str, &str) -> Option<String>,
) -> TplSet {
    let definitions = actions.definitions();
    let redefined_in_hidden = definitions
        .several
        .iter()
        .filter(|(_, all)| all.iter().any(|d| Some(d.file.as_str()) == hidden))
        .map(|(name, _)| name.as_str());
    let names = own
        .iter()
        .map(|(name, _)| name.as_str())
        .chain(redefined_in_hidden);
    let mut set = TplSet::default();
    for name in names {
        if set.settled.iter().any(|settled| settled == name) {
            continue;
        }
        let own_source = own
            .iter()
            .find(|(own, _)| own == name)
            .map(|(_, source)| (source.as_str(), own_empty.iter().any(|e| e == name)));
        let chart_origin = actions.origin(name);
        let chart: Vec<(&str, bool)> = match definitions.several.get(name) {
            Some(all) => all.iter().map(|d| (d.file.as_str(), d.empty)).collect(),
            None if chart_origin != name => {
                vec![(chart_origin, definitions.empty.iter().any(|e| e == name))]
            }
            None => Vec::new(),
        };
        // Go's `associate`: a later definition replaces the one before unless its body is empty. `None` for the
        // string's own.
        let mut pick: Option<Option<&str>> = own_source.map(|_| None);
        for (file, empty) in chart {
            if Some(file) != hidden && (pick.is_none() || !empty) {
                pick = Some(Some(file));
            }
        }
        let source = match pick {
            None => continue,
            Some(None) => own_source.map(|(source, _)| source.to_string()),
            Some(Some(file)) if file == chart_origin => None,
            Some(Some(file)) => translate(file, name),
        };
        set.settled.push(name.to_string());
        if let Some(source) = source {
            set.replaced.push((name.to_string(), source));
        }
    }
    set
}

/// A `tpl` string rendering: the file its set leaves out (the string's name), the names the set settles, and the
/// string itself (for the failure path).
struct Scope {
    hidden: String,
    settled: Vec<String>,
    source: Arc<str>,
}

thread_local! {
    /// The `tpl` string rendering on this thread ([`TplScope`]).
    static TPL_SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// The `tpl` string rendering on this thread, until dropped (the previous one then comes back).
pub(crate) struct TplScope {
    previous: Option<Scope>,
}

impl TplScope {
    pub(crate) fn enter(hidden: Option<String>, set: TplSet, source: Arc<str>) -> Self {
        let scope = hidden.map(|hidden| Scope {
            hidden,
            settled: set.settled,
            source,
        });
        Self {
            previous: TPL_SCOPE
                .with(|current| std::mem::replace(&mut *current.borrow_mut(), scope)),
        }
    }

    /// Whether template `name` is missing from the current `tpl` string's set: a `define` of the left-out file that
    /// neither the string nor another file defines.
    pub(crate) fn hides(name: &str, actions: &ActionTable) -> bool {
        TPL_SCOPE.with(|current| {
            current.borrow().as_ref().is_some_and(|scope| {
                let origin = actions.origin(name);
                origin != name && origin == scope.hidden && !scope.settled.iter().any(|s| s == name)
            })
        })
    }

    /// The `tpl` string rendering on this thread and the name it is parsed under, if one is.
    pub(crate) fn current() -> Option<(Arc<str>, String)> {
        TPL_SCOPE.with(|current| {
            let current = current.borrow();
            let scope = current.as_ref()?;
            Some((Arc::clone(&scope.source), scope.hidden.clone()))
        })
    }
}

impl Drop for TplScope {
    fn drop(&mut self) {
        let previous = self.previous.take();
        TPL_SCOPE.with(|current| *current.borrow_mut() = previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chart's action table from `(name, file, source, empty)` definitions in parse order, as precompile notes them.
    fn table(defines: &[(&str, &str, &str, bool)]) -> ActionTable {
        let mut actions = ActionTable::default();
        for (name, file, _, empty) in defines {
            if actions.origin(name) == *name {
                actions.definitions_mut().note_first(name, *empty);
            } else {
                let before = actions.origin(name).to_string();
                actions
                    .definitions_mut()
                    .note_again(name, &before, file, *empty);
                if *empty {
                    continue;
                }
            }
            actions.set_origin(name, file);
        }
        actions
    }

    fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn the_string_set_follows_gos_parse_order_without_the_hidden_file() {
        type Case<'a> = (
            &'a str,
            &'a [(&'a str, &'a str, &'a str, bool)],
            &'a [(&'a str, &'a str)],
            &'a [&'a str],
            &'a [(&'a str, &'a str)],
            &'a [&'a str],
        );
        // (case, chart definitions, the string's own, its empty ones, replaced, names missing from the set)
        let cases: [Case<'_>; 8] = [
            (
                "nothing to do",
                &[("x", "_a", "a", false)],
                &[],
                &[],
                &[],
                &[],
            ),
            (
                "the hidden file's only define is missing",
                &[("x", "A", "A", false)],
                &[],
                &[],
                &[],
                &["x"],
            ),
            (
                "an earlier file's definition stands in for the hidden one's",
                &[("x", "_a", "a", false), ("x", "A", "A", false)],
                &[],
                &[],
                &[("x", "a")],
                &[],
            ),
            (
                "another file's definition wins over the string's",
                &[("y", "_a", "a", false)],
                &[("y", "own")],
                &[],
                &[],
                &[],
            ),
            (
                "the string's own stands where only the hidden file defines it",
                &[("y", "A", "A", false)],
                &[("y", "own")],
                &[],
                &[("y", "own")],
                &[],
            ),
            (
                "an empty chart body does not replace the string's",
                &[("y", "_a", "", true)],
                &[("y", "own")],
                &[],
                &[("y", "own")],
                &[],
            ),
            (
                "an empty string body gives way to the chart's",
                &[("y", "_a", "a", false)],
                &[("y", "")],
                &["y"],
                &[],
                &[],
            ),
            (
                "an empty later body keeps the earlier one, the hidden file's included",
                &[("x", "A", "A", false), ("x", "_b", "", true)],
                &[],
                &[],
                &[("x", "")],
                &[],
            ),
        ];
        for (case, defines, own, own_empty, replaced, missing) in cases {
            let actions = table(defines);
            let own_empty: Vec<String> = own_empty.iter().map(|s| s.to_string()).collect();
            let translate = |file: &str, name: &str| {
                defines
                    .iter()
                    .find(|(n, f, ..)| *n == name && *f == file)
                    .map(|(_, _, source, _)| source.to_string())
            };
            let set = resolve(&actions, Some("A"), &owned(own), &own_empty, translate);
            assert_eq!(set.replaced, owned(replaced), "{case}");
            let _scope = TplScope::enter(Some("A".into()), set, "".into());
            for (name, ..) in defines {
                assert_eq!(
                    TplScope::hides(name, &actions),
                    missing.contains(name),
                    "{case}: {name}"
                );
            }
        }
    }
}
