//! The Go source of every action of a chart's templates, by template and line, with the file each `define` is
//! written in and the field paths each template reads through `_p<n>` names: what error messages need to name a
//! failing action, its line and column (looked up only when an error happens); also the long literal texts the
//! chart's translated templates print by name.

use std::ops::Range;
use std::sync::Arc;

use foldhash::HashMap;
use minijinja::value::Value;

use super::location::{self, CommandLocation};
use super::tpl_set::Definitions;
use super::{call_order, field_error};

/// The Go action source per template and line, and the file each `define` lives in, for error messages; the
/// field paths and long literal texts the chart's translated templates read by name.
#[derive(Debug, Default)]
pub(crate) struct ActionTable {
    /// The actions of each template, in runs of the Go source they were found in. An action is kept as its line
    /// and its place in that source, which only an error reads: copying every action's text out was a string
    /// allocated and freed per action of every cold render.
    runs: HashMap<String, Vec<SourceRun>>,
    origins: HashMap<String, String>,
    /// The name Go gives a template where it differs from the one it runs under here (a `tpl` string runs under
    /// an internal name and is named after the calling template's `.Template.Name`).
    shown: HashMap<String, String>,
    /// The field paths each template reads through `_p<n>` names ([`crate::gotmpl::Translated::aliases`]).
    aliases: HashMap<String, AliasPaths>,
    /// Long literal texts of the chart's templates by the name their translations print them under
    /// ([`crate::gotmpl::Translated::texts`]). Kept here rather than as environment globals: adding a global
    /// copied the shared function table (about 230 entries) for every chart, and freed it again with the chart.
    texts: HashMap<String, Value>,
    /// Definitions beyond the winners, for the template sets of `tpl` strings.
    definitions: Definitions,
}

/// The field paths of one template's `_p<n>` names, by `n`.
/// A path is its field names joined by `.` ([`crate::gotmpl::Translated::aliases`]).
pub(crate) type AliasPaths = Arc<[String]>;

/// Consecutive actions of one template and the Go source text they were parsed from: each action's line and byte
/// range in `text`. Columns are searched in that text only when an error needs one (`located`; otherwise they are
/// unknown), so a render that succeeds never pays for them.
#[derive(Debug)]
struct SourceRun {
    text: Arc<str>,
    located: bool,
    actions: Vec<(usize, Range<usize>)>,
}

impl SourceRun {
    fn sources(&self) -> impl Iterator<Item = (usize, &str)> {
        self.actions
            .iter()
            .map(|(line, range)| (*line, self.text.get(range.clone()).unwrap_or_default()))
    }
}

impl ActionTable {
    /// Records the actions `(line, Go source)` of template `name` (a file path or a define name), columns unknown.
    #[cfg(test)]
    pub(crate) fn add_actions(&mut self, name: &str, actions: Vec<(usize, String)>) {
        let mut text = String::new();
        let mut spans = Vec::new();
        for (line, source) in actions {
            spans.push((line, text.len()..text.len() + source.len()));
            text.push_str(&source);
        }
        self.add_run(name, text.into(), false, spans);
    }

    /// Records the actions of template `name`, found in `text`, the Go source they come from, as their lines and
    /// byte ranges in it (their columns are looked up there when an error needs them).
    pub(crate) fn add_located_actions(
        &mut self,
        name: &str,
        actions: Vec<(usize, Range<usize>)>,
        text: &Arc<str>,
    ) {
        self.add_run(name, Arc::clone(text), true, actions);
    }

    fn add_run(
        &mut self,
        name: &str,
        text: Arc<str>,
        located: bool,
        actions: Vec<(usize, Range<usize>)>,
    ) {
        let run = SourceRun {
            text,
            located,
            actions,
        };
        match self.runs.get_mut(name) {
            Some(runs) => runs.push(run),
            None => {
                self.runs.insert(name.to_string(), vec![run]);
            }
        }
    }

    /// The actions `(line, Go source)` of template `name` in order (read on the failure path only).
    fn actions(&self, name: &str) -> Option<Vec<(usize, &str)>> {
        Some(
            self.runs
                .get(name)?
                .iter()
                .flat_map(|run| run.sources())
                .collect(),
        )
    }

    /// Where Go reports a failing call of `function` on `line` of template `name`: the one call of `function` in
    /// the line's actions, or with several the one `translated` points at (its index among the calls on the line of
    /// the translated text, and their count), when the counts agree and no pipe reorders the calls of an action.
    pub(crate) fn locate(
        &self,
        name: &str,
        line: usize,
        function: &str,
        translated: Option<(usize, usize)>,
    ) -> Option<CommandLocation> {
        let actions = self.actions(name)?;
        let mut sites = Vec::new();
        let mut piped = false;
        for (index, (_, source)) in actions.iter().enumerate().filter(|(_, (l, _))| *l == line) {
            let column = self.column(name, index)?;
            let mut starts = location::call_starts(source, function);
            // A pipe puts the calls of one action in another order in the translation (`f x | f` is `f(f(x))`):
            // they are matched in that order, or not at all when it cannot be told.
            if starts.len() > 1 && source.contains('|') {
                match call_order::in_translated_order(source, &starts) {
                    Some(ordered) => starts = ordered,
                    None => piped = true,
                }
            }
            sites.extend(
                starts
                    .into_iter()
                    .map(|start| location::call_at(source, line, column, start)),
            );
        }
        if sites.is_empty() {
            // Named as an argument (`print not`): Go calls it there, and names it.
            return self.only_site(name, line, |source| location::word_starts(source, function));
        }
        match (sites.len(), translated) {
            (1, _) => sites.pop(),
            (count, Some((index, total))) if count == total && !piped && index < count => {
                Some(sites.swap_remove(index))
            }
            _ => None,
        }
    }

    /// Where `method` (`.Name`) is called on `line` of template `name`, when it is called there once.
    pub(crate) fn locate_method(
        &self,
        name: &str,
        line: usize,
        method: &str,
    ) -> Option<CommandLocation> {
        self.only_site(name, line, |source| location::method_starts(source, method))
    }

    /// The one place on `line` of template `name` that `starts` finds in the actions there, if there is one.
    fn only_site(
        &self,
        name: &str,
        line: usize,
        starts: impl Fn(&str) -> Vec<usize>,
    ) -> Option<CommandLocation> {
        let actions = self.actions(name)?;
        let mut sites = Vec::new();
        for (index, (_, source)) in actions.iter().enumerate().filter(|(_, (l, _))| *l == line) {
            let column = self.column(name, index)?;
            sites.extend(
                starts(source)
                    .into_iter()
                    .map(|start| location::call_at(source, line, column, start)),
            );
        }
        (sites.len() == 1).then(|| sites.pop()).flatten()
    }

    /// Where Go reports a failed `range` on `line` of template `name` (see [`location::range_node`]): the one
    /// `range` of the line, or the one `translated` points at among several.
    pub(crate) fn locate_range(
        &self,
        name: &str,
        line: usize,
        translated: Option<(usize, usize)>,
    ) -> Option<CommandLocation> {
        let actions = self.actions(name)?;
        let mut sites = Vec::new();
        for (index, (_, source)) in actions.iter().enumerate().filter(|(_, (l, _))| *l == line) {
            if let Some(site) = location::range_node(source, line, self.column(name, index)?) {
                sites.push(site);
            }
        }
        match (sites.len(), translated) {
            (1, _) => sites.pop(),
            (count, Some((index, total))) if count == total && index < count => {
                Some(sites.swap_remove(index))
            }
            _ => None,
        }
    }

    /// Where Go reports the broken chain `broken` on `line` of template `name`: the line, column and text of the
    /// first chain with its fields in an action that covers that line and whose column is known.
    pub(crate) fn locate_chain(
        &self,
        name: &str,
        line: usize,
        broken: &field_error::BrokenChain,
    ) -> Option<(usize, usize, String)> {
        let actions = self.actions(name)?;
        actions
            .iter()
            .enumerate()
            .filter(|(_, (start, source))| {
                (*start..=*start + source.matches('\n').count()).contains(&line)
            })
            .find_map(|(index, (start, source))| {
                let column = self.column(name, index)?;
                field_error::locate_chain(source, *start, column, broken)
                    .filter(|(found, _, _)| *found == line)
            })
    }

    /// The column of action `index` of template `name` in its Go source, searched like the parser met them:
    /// every earlier action of the same run takes its place first.
    pub(crate) fn column(&self, name: &str, index: usize) -> Option<usize> {
        let mut start = 0;
        for run in self.runs.get(name)? {
            if index < start + run.actions.len() {
                if !run.located {
                    return None;
                }
                let actions: Vec<(usize, &str)> = run.sources().collect();
                let columns = location::action_columns(&run.text, &actions);
                return columns.get(index - start).copied().flatten();
            }
            start += run.actions.len();
        }
        None
    }

    /// Records the field paths template `name` reads through `_p<n>` names (none: nothing is recorded).
    pub(crate) fn set_aliases(&mut self, name: &str, paths: Vec<String>) {
        if paths.is_empty() {
            self.aliases.remove(name);
        } else {
            self.aliases.insert(name.to_string(), paths.into());
        }
    }

    /// The field paths template `name` reads through `_p<n>` names.
    pub(crate) fn aliases(&self, name: &str) -> Option<AliasPaths> {
        self.aliases.get(name).cloned()
    }

    /// Records the long literal texts `(name, text)` of a template.
    pub(crate) fn add_texts(&mut self, texts: Vec<(String, Arc<str>)>) {
        self.texts.extend(
            texts
                .into_iter()
                .map(|(name, text)| (name, Value::from(text))),
        );
    }

    /// The long literal text printed under `name`.
    pub(crate) fn text(&self, name: &str) -> Option<Value> {
        self.texts.get(name).cloned()
    }

    /// Records that `define` is written in `file`.
    pub(crate) fn set_origin(&mut self, define: &str, file: &str) {
        self.origins.insert(define.to_string(), file.to_string());
    }

    /// The Go source of chart file `file`, as its actions were found in.
    pub(crate) fn file_text(&self, file: &str) -> Option<&str> {
        self.runs.get(file)?.first().map(|run| &*run.text)
    }

    /// The chart's definitions beyond the winners ([`Definitions`]).
    pub(crate) fn definitions(&self) -> &Definitions {
        &self.definitions
    }

    /// [`Self::definitions`], to note them while the chart is translated.
    pub(crate) fn definitions_mut(&mut self) -> &mut Definitions {
        &mut self.definitions
    }

    /// Records that Go names template `name` `shown` in its messages.
    pub(crate) fn set_shown(&mut self, name: &str, shown: &str) {
        self.shown.insert(name.to_string(), shown.to_string());
    }

    /// The name Go gives template `name` in its messages.
    pub(crate) fn shown<'a>(&'a self, name: &'a str) -> &'a str {
        self.shown.get(name).map_or(name, String::as_str)
    }

    /// Whether actions of template `name` are recorded.
    pub(crate) fn knows(&self, name: &str) -> bool {
        self.runs.contains_key(name)
    }

    /// The file template `name` is written in (itself for file templates).
    pub(crate) fn origin<'a>(&'a self, name: &'a str) -> &'a str {
        self.origins.get(name).map_or(name, String::as_str)
    }

    /// The Go source of the action(s) on `line` of template `name`, joined by spaces.
    pub(crate) fn on_line(&self, name: &str, line: usize) -> Option<String> {
        let on_line: Vec<&str> = self
            .actions(name)?
            .into_iter()
            .filter(|(l, _)| *l == line)
            .map(|(_, a)| a)
            .collect();
        (!on_line.is_empty()).then(|| on_line.join(" "))
    }
}
