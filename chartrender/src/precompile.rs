//! A chart's translated template sources as its environment's loader reads them, and compiling early on the
//! translation helper: the templates the helper translated are compiled there while the calling thread still
//! translates its own files, so the caller compiles only its own when a render first reaches them.

use std::collections::hash_map::Entry;

use foldhash::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use minijinja::Environment;

use crate::funcs::gostring;
use crate::funcs::template::{self, ActionTable};
use crate::gotmpl::{ParseError, Translated};
use crate::translation::{TemplateFile, translate_all};

/// A chart's templates translated into one environment, with their action table.
pub(crate) struct ChartTranslation {
    pub(crate) env: Arc<Environment<'static>>,
    pub(crate) actions: ActionTable,
    /// Whether the translated templates hold stray byte characters (`"\xc3"`-like literals).
    pub(crate) strays: bool,
    /// Whether the translation helper took part.
    pub(crate) helped: bool,
}

/// Translates `templates` (in parse order) into an environment made from `base`: the source table its loader reads,
/// the action table and whether any template holds stray bytes. Later definitions of a name win, as in Helm.
pub(crate) fn translate_chart(
    templates: &[TemplateFile<'_>],
    base: &Environment<'static>,
) -> Result<ChartTranslation, ParseError> {
    let table = Arc::new(Sources::default());
    let mut env = base.clone();
    template::register(&mut env, Arc::clone(&table));
    let early = Arc::new(EarlyCompiler::new(env, Arc::clone(&table)));
    // Hashed with foldhash and sized for the files (defines come on top): a template name is no attacker's key
    // to a chart that runs its own templates anyway, and SipHash and regrowing were most of this table's cost.
    let mut sources: HashMap<String, String> =
        HashMap::with_capacity_and_hasher(2 * templates.len(), Default::default());
    // Names defined more than once (the body of a file counts as a definition of its path).
    let mut overridden = Vec::new();
    let mut actions = ActionTable::default();
    let mut strays = false;
    let (translations, helped) = translate_all(templates, Some(Arc::clone(&early)));
    for (file, translated) in templates.iter().zip(translations) {
        let (text, mut translated) = translated?;
        strays |= holds_strays(&translated.body);
        actions.add_located_actions(&file.path, translated.body.actions, &text);
        actions.set_aliases(&file.path, translated.body.aliases);
        match sources.entry(file.path.clone()) {
            Entry::Occupied(mut entry) => {
                overridden.push(entry.key().clone());
                entry.insert(translated.body.source);
            }
            Entry::Vacant(entry) => {
                entry.insert(translated.body.source);
            }
        }
        actions.add_texts(translated.body.texts);
        let empty_defines = std::mem::take(&mut translated.empty_defines);
        for (name, body) in translated.defines {
            strays |= holds_strays(&body);
            actions.add_texts(body.texts);
            let empty = empty_defines.contains(&name);
            if sources.contains_key(&name) {
                let before = actions.origin(&name).to_string();
                actions
                    .definitions_mut()
                    .note_again(&name, &before, &file.path, empty);
                overridden.push(name.clone());
                // Go's `associate`: an empty body does not replace a definition parsed before it.
                if empty {
                    continue;
                }
            } else {
                actions.definitions_mut().note_first(&name, empty);
            }
            actions.add_located_actions(&name, body.actions, &text);
            actions.set_origin(&name, &file.path);
            actions.set_aliases(&name, body.aliases);
            sources.insert(name, body.source);
        }
    }
    // The helper's environment is kept when it is out of it and compiled no name from a definition that may not
    // be the last one; otherwise the renders compile every template in a fresh one.
    let helper_env = early.stop();
    let mixed = table.seal(sources, &overridden);
    let env = match helper_env.filter(|_| !mixed) {
        Some(env) => env,
        None => {
            let mut env = base.clone();
            template::register(&mut env, Arc::new(Sources::sealed(table.take())));
            Arc::new(env)
        }
    };
    Ok(ChartTranslation {
        env,
        actions,
        strays,
        helped,
    })
}

/// Whether a translated template holds stray byte characters, in its source or its long texts.
fn holds_strays(translated: &Translated) -> bool {
    gostring::holds_stray_range(&translated.source)
        || translated
            .texts
            .iter()
            .any(|(_, text)| gostring::holds_stray_range(text))
}

/// The translated sources of one chart by template name (file path or `define` name).
///
/// Until it is sealed with the final table, the helper adds each source it is about to compile, and the names it
/// compiles that way are noted: later files may still define the same name (the last definition in parse order
/// wins), and only the sealing thread knows the winner. After sealing, the loader reads only the final table.
#[derive(Debug, Default)]
pub(crate) struct Sources {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    sealed: bool,
    by_name: HashMap<String, String>,
    /// Names compiled from a source added before sealing.
    early: Vec<String>,
}

impl Sources {
    /// A table that is final from the start.
    pub(crate) fn sealed(by_name: HashMap<String, String>) -> Self {
        Self {
            state: Mutex::new(State {
                sealed: true,
                by_name,
                early: Vec::new(),
            }),
        }
    }

    /// The source of template `name`, if the chart has one.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.lock().by_name.get(name).cloned()
    }

    /// Adds `source` for `name` ahead of the final table, unless the table is sealed (its source then stands).
    fn offer(&self, name: &str, source: &str) {
        let mut state = self.lock();
        if !state.sealed {
            state.by_name.insert(name.to_string(), source.to_string());
            state.early.push(name.to_string());
        }
    }

    /// Replaces the sources with the final table and answers whether a template compiled from an early source
    /// may differ from it: one of the `overridden` names (defined more than once) was compiled early.
    pub(crate) fn seal(&self, by_name: HashMap<String, String>, overridden: &[String]) -> bool {
        let mut state = self.lock();
        state.sealed = true;
        state.by_name = by_name;
        let early = std::mem::take(&mut state.early);
        overridden.iter().any(|name| early.contains(name))
    }

    /// Takes the final table out (for a fresh environment when early compiles cannot be kept).
    pub(crate) fn take(&self) -> HashMap<String, String> {
        std::mem::take(&mut self.lock().by_name)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// [`EarlyCompiler`] phases.
const NOT_STARTED: u8 = 0;
const COMPILING: u8 = 1;
const OUT: u8 = 2;

/// Compiles templates into a chart's environment ahead of its first render, until told to stop.
pub(crate) struct EarlyCompiler {
    env: Arc<Environment<'static>>,
    sources: Arc<Sources>,
    stop: AtomicBool,
    phase: AtomicU8,
}

impl EarlyCompiler {
    pub(crate) fn new(env: Environment<'static>, sources: Arc<Sources>) -> Self {
        Self {
            env: Arc::new(env),
            sources,
            stop: AtomicBool::new(false),
            phase: AtomicU8::new(NOT_STARTED),
        }
    }

    /// Compiles each `(name, source)` in the environment unless it is compiled already, until [`Self::stop`]
    /// is called. A template that does not compile is left out: the render that reaches it compiles it again
    /// and reports the error there.
    pub(crate) fn compile_all<'a>(&self, templates: impl Iterator<Item = &'a (String, String)>) {
        if self
            .phase
            .compare_exchange(NOT_STARTED, COMPILING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        for (name, source) in templates {
            if self.stop.load(Ordering::Acquire) {
                break;
            }
            self.sources.offer(name, source);
            let _ = self.env.get_template(name);
        }
        self.phase.store(OUT, Ordering::Release);
    }

    /// Stops compiling early and answers the environment when no compile is under way in it: a helper taken off
    /// the CPU in the middle of a compile holds the environment's template lock, and every render of the chart
    /// would wait for it, so the caller then compiles everything in a fresh environment (`None`).
    fn stop(&self) -> Option<Arc<Environment<'static>>> {
        self.stop.store(true, Ordering::Release);
        let out =
            match self
                .phase
                .compare_exchange(NOT_STARTED, OUT, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => true,
                Err(phase) => phase == OUT,
            };
        out.then(|| Arc::clone(&self.env))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealing_reports_only_overridden_names_compiled_early() {
        let cases: [(&[&str], &[&str], bool); 4] = [
            (&[], &[], false),
            (&["a"], &[], false),
            (&["a"], &["b"], false),
            (&["a", "b"], &["b"], true),
        ];
        for (i, (early, overridden, want)) in cases.into_iter().enumerate() {
            let sources = Sources::default();
            for name in early {
                sources.offer(name, "early");
            }
            let overridden: Vec<String> = overridden.iter().map(|s| s.to_string()).collect();
            let final_table = HashMap::from_iter([("a".to_string(), "final".to_string())]);
            assert_eq!(sources.seal(final_table, &overridden), want, "case {i}");
            assert_eq!(sources.get("a").as_deref(), Some("final"), "case {i}");
            assert_eq!(sources.get("b"), None, "case {i}");
        }
    }

    #[test]
    fn a_sealed_table_ignores_late_offers() {
        let sources = Sources::default();
        sources.seal(HashMap::from_iter([("a".into(), "final".into())]), &[]);
        sources.offer("a", "late");
        sources.offer("b", "late");
        assert_eq!(sources.get("a").as_deref(), Some("final"));
        assert_eq!(sources.get("b"), None);
        assert!(!sources.seal(HashMap::default(), &["a".to_string()]));
    }
}
