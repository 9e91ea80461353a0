//! Template-aware functions (`include`, `tpl`, `required`, `fail`, `lookup`) and Go-style error descriptions.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock, Mutex};

use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind, State};

pub(crate) use super::action_table::{ActionTable, AliasPaths};
pub(crate) use super::context::ExecContext;
use super::context::exec_context;
use super::describe::Described;
pub(crate) use super::describe::{action_at, describe};
use super::gostring;
use super::tpl_set::{self, TplScope};
use super::value::{GoMap, MUTATIONS, MapType, is_nil, to_go_string};
use super::{arg_str, check_arguments, check_defined, fail, signature, want};
use crate::gotmpl;
use crate::meter::{self, Sink};

/// How many calls of one template name `include` may have open at once: Helm counts open calls per name and
/// refuses the call that finds more than 1000 open ([`IncludeGuard`]).
pub(crate) const MAX_INCLUDES_PER_NAME: usize = 1000;

/// How deep `include`/`template`/`tpl` calls may nest in all, whatever their names: a bound of this renderer (Go's
/// own limit for `template` is 100 000 levels on a growable stack). Every level is a nested minijinja render whose
/// stack [`nested`] grows on the heap, so the depth is bounded by this number and not by the thread's stack.
pub(crate) const MAX_INCLUDE_DEPTH: i64 = 4000;

/// Stack left before a nested render moves to a new segment, and the size of each new segment.
const STACK_RED_ZONE: usize = 256 * 1024;
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

/// Runs one nested render level on a fresh stack segment when the current one runs low.
fn nested<R>(render: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, render)
}

thread_local! {
    /// Open `include` calls per template name on this thread (a render and its nested includes run on one thread).
    static OPEN_INCLUDES: std::cell::RefCell<HashMap<String, usize>> = std::cell::RefCell::new(HashMap::new());
}

/// One open `include` call of a name, counted in [`OPEN_INCLUDES`] until dropped.
struct IncludeGuard {
    name: String,
}

impl IncludeGuard {
    /// Opens a call of `name`, or fails like Helm when more than [`MAX_INCLUDES_PER_NAME`] are open already.
    fn open(name: &str) -> Result<Self, Error> {
        OPEN_INCLUDES.with(|open| {
            let mut open = open.borrow_mut();
            let count = open.entry(name.to_string()).or_insert(0);
            if *count > MAX_INCLUDES_PER_NAME {
                return Err(fail(format!(
                    "error calling include: rendering template has a nested reference name: {name}: unable to execute template"
                )));
            }
            *count += 1;
            Ok(Self {
                name: name.to_string(),
            })
        })
    }
}

impl Drop for IncludeGuard {
    fn drop(&mut self) {
        OPEN_INCLUDES.with(|open| {
            let mut open = open.borrow_mut();
            if let Some(count) = open.get_mut(&self.name) {
                *count -= 1;
                if *count == 0 {
                    open.remove(&self.name);
                }
            }
        });
    }
}

/// Name prefix under which a `tpl` string (the Go source follows) is compiled once and kept in a chart's
/// environment through its loader.
pub(crate) const TPL_PREFIX: &str = "\u{1}tpl:";

/// How many distinct `tpl` strings one chart's environment keeps compiled; beyond that they are compiled per call.
const TPL_TEMPLATES_PER_CHART: usize = 4096;

/// Sets the loader that compiles the chart's translated templates (`sources`, by template name) when a render first
/// asks for them and `tpl` strings once per chart. Compiling on first use skips the `define`s no rendered template
/// reaches.
pub(crate) fn register(env: &mut Environment<'static>, sources: Arc<crate::precompile::Sources>) {
    let loaded = std::sync::atomic::AtomicUsize::new(0);
    env.set_loader(move |name| {
        let Some(source) = name.strip_prefix(TPL_PREFIX) else {
            return Ok(sources.get(name));
        };
        if loaded.fetch_add(1, Ordering::Relaxed) >= TPL_TEMPLATES_PER_CHART {
            return Ok(None);
        }
        let file = gotmpl::translate_file("tpl", source, &super::is_function)
            .map_err(|e| fail(format!("error calling tpl: {e}")))?;
        Ok(file.defines.is_empty().then_some(file.body.source))
    });
}

/// Registers `include`, `template` and `tpl` (which find the chart's action table in the execution context),
/// `required`, `fail`, `lookup` and `getHostByName`: the same functions for every chart, so every chart's
/// environment shares one function table.
pub(crate) fn register_plain(env: &mut Environment<'static>) {
    let include_signature = signature::of("include");
    env.add_function("f_include", move |state: &State, args: &[Value]| {
        check_arguments(state, args, include_signature.as_ref())?;
        include(state, args, &*exec_context(state)?, Call::Include)
    });
    env.add_function("f_template", |state: &State, args: &[Value]| {
        check_defined(state, args)?;
        include(state, args, &*exec_context(state)?, Call::Template)
    });
    let tpl_signature = signature::of("tpl");
    env.add_function("f_tpl", move |state: &State, args: &[Value]| {
        check_arguments(state, args, tpl_signature.as_ref())?;
        tpl(state, args, &*exec_context(state)?)
    });
    let required_signature = signature::of("required");
    env.add_function("f_required", move |state: &State, args: &[Value]| {
        check_arguments(state, args, required_signature.as_ref())?;
        required(args)
    });
    let fail_signature = signature::of("fail");
    env.add_function("f_fail", move |state: &State, args: &[Value]| {
        check_arguments(state, args, fail_signature.as_ref())?;
        Err::<Value, _>(user_error(&arg_str(args, 0)))
    });
    let lookup_signature = signature::of("lookup");
    env.add_function("f_lookup", move |state: &State, args: &[Value]| {
        check_arguments(state, args, lookup_signature.as_ref())?;
        lookup(state, args)
    });
    let gethostbyname_signature = signature::of("getHostByName");
    env.add_function("f_getHostByName", move |state: &State, args: &[Value]| {
        check_arguments(state, args, gethostbyname_signature.as_ref())?;
        want("getHostByName", args, 1)?;
        Ok::<_, Error>(Value::from(""))
    });
}

/// Marker prefix for `required`/`fail` messages so the outermost error can report them like Helm.
pub(crate) const USER_ERROR_PREFIX: &str = "\u{1}user:";

fn user_error(message: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("{USER_ERROR_PREFIX}{message}"),
    )
}

fn required(args: &[Value]) -> Result<Value, Error> {
    want("required", args, 2)?;
    let value = &args[1];
    if is_nil(value) || value.as_str() == Some("") {
        return Err(user_error(&to_go_string(&args[0])));
    }
    Ok(value.clone())
}

/// Reads objects for `lookup` when rendering against a cluster (gardenlet passes the seed); offline, `lookup`
/// returns an empty map as `helm template` does.
pub trait Lookup: Send + Sync + std::fmt::Debug {
    /// The object (`name` set) or list (`name` empty, `{"items": [...]}`) as JSON; `Ok(None)` when not found.
    ///
    /// # Errors
    /// A message that fails the template (`error calling lookup: <message>`).
    fn lookup(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<serde_json::Value>, String>;
}

/// A [`Lookup`] carried through the render context.
#[derive(Debug)]
pub(crate) struct LookupObject(pub(crate) Arc<dyn Lookup>);

impl minijinja::value::Object for LookupObject {}

fn lookup(state: &State, args: &[Value]) -> Result<Value, Error> {
    want("lookup", args, 4)?;
    let source = state.lookup("_lookup");
    let Some(source) = source
        .as_ref()
        .and_then(|v| v.downcast_object_ref::<LookupObject>())
    else {
        return Ok(GoMap::value(Default::default()));
    };
    let text = |i: usize| arg_str(args, i);
    match source.0.lookup(&text(0), &text(1), &text(2), &text(3)) {
        Ok(Some(object)) => Ok(super::value::from_json(&object)),
        Ok(None) => Ok(GoMap::value(Default::default())),
        Err(message) => Err(fail(format!("error calling lookup: {message}"))),
    }
}

/// Results of `include` calls within one render, keyed by template name and the identity of the map passed as
/// dot. An entry is used only while no map anywhere was mutated since it was stored, and calls that mutate maps
/// themselves are never stored, so reuse cannot change the output.
#[derive(Debug, Default)]
pub(crate) struct IncludeCache {
    entries: Mutex<HashMap<(String, usize), CachedInclude>>,
}

#[derive(Debug)]
struct CachedInclude {
    epoch: u64,
    /// Keeps the dot map alive so its address cannot be reused by another map during the render.
    _dot: Value,
    output: Value,
}

impl minijinja::value::Object for IncludeCache {}

fn cache_key(name: &str, dot: &Value) -> Option<(String, usize)> {
    let map = GoMap::of(dot)?;
    let go_type = super::value::map_type(dot)?;
    // The views of one map differ in type only (`typeOf .`); the low bits of the map's address are free.
    Some((name.to_string(), map.identity() | go_type as usize))
}

/// How a named template is rendered: the `include` function, or Go's `template` action (which Helm does not
/// count per name; only the renderer's overall depth bound applies to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Include,
    Template,
}

fn include(
    state: &State,
    args: &[Value],
    context: &ExecContext,
    call: Call,
) -> Result<Value, Error> {
    want("include", args, 2)?;
    meter::check_deadline()?;
    let cache = context.cache.as_ref();
    let key = cache_key(args[0].as_str().unwrap_or_default(), &args[1]);
    let cached = cache.and_then(|c| c.downcast_object_ref::<IncludeCache>());
    if let (Some(cache), Some(key)) = (cached, &key) {
        let entries = cache.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = entries.get(key)
            && hit.epoch == MUTATIONS.load(Ordering::Relaxed)
        {
            return Ok(hit.output.clone());
        }
    }
    let epoch = MUTATIONS.load(Ordering::Relaxed);
    let output = render_include(state, args, context, call)?;
    if let (Some(cache), Some(key)) = (cached, key)
        && epoch == MUTATIONS.load(Ordering::Relaxed)
    {
        let entry = CachedInclude {
            epoch,
            _dot: args[1].clone(),
            output: output.clone(),
        };
        cache
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, entry);
    }
    Ok(output)
}

fn render_include(
    state: &State,
    args: &[Value],
    context: &ExecContext,
    call: Call,
) -> Result<Value, Error> {
    let name = args[0]
        .as_str()
        .map_or_else(|| arg_str(args, 0).into(), std::borrow::Cow::Borrowed);
    let depth = context.depth;
    let actions = &context.actions;
    let _open = match call {
        Call::Include => Some(IncludeGuard::open(&name)?),
        Call::Template => None,
    };
    if depth >= MAX_INCLUDE_DEPTH {
        return Err(fail(format!(
            "rendering template has a nested reference name: {name}: nesting deeper than {MAX_INCLUDE_DEPTH}"
        )));
    }
    let template = state.env().get_template(&name).and_then(|template| {
        if TplScope::hides(&name, actions) {
            Err(Error::new(
                ErrorKind::TemplateNotFound,
                "left out of the tpl string's set",
            ))
        } else {
            Ok(template)
        }
    });
    let template = template.map_err(|e| {
        if e.kind() == ErrorKind::TemplateNotFound {
            fail(format!("error calling include: template: no template {name:?} associated with template \"gotpl\""))
        } else {
            // The translation of a template that exists was rejected when first compiled (a translator bug).
            fail(format!("error calling include: compiling translated template {name}: {e}"))
        }
    })?;
    let mut sink = Sink::value("include", Some(&name));
    nested(|| {
        template.render_captured_to(
            ExecContext {
                dot: args[1].clone(),
                depth: depth + 1,
                cache: context.cache.clone(),
                lookup: context.lookup.clone(),
                aliases: actions.aliases(&name),
                resolved: None,
                actions: Arc::clone(actions),
            }
            .value(),
            &mut sink,
        )
    })
    .map_err(|e| {
        let described = describe_in_tpl_scope(&e, actions, &args[1]);
        match call {
            Call::Include => fail(format!("error calling include: {described}")),
            // Go runs a `template` action in place: its error is the inner one, as it is.
            Call::Template => fail(described).with_source(Described),
        }
    })?;
    meter::check_exceeded()?;
    Ok(Value::from(sink.into_string()))
}

/// [`describe`] of a failure in an included template, which may be one the `tpl` string rendering `define`s: the
/// chart's table does not know those, the string's own does ([`tpl_table`]; built on the failure path only).
fn describe_in_tpl_scope(error: &Error, actions: &ActionTable, data: &Value) -> String {
    if let Some(name) = error.name()
        && !actions.knows(name)
        && let Some((source, shown)) = TplScope::current()
    {
        let table = tpl_table(&source, &shown, None);
        if table.knows(name) {
            return describe(error, &table, data);
        }
    }
    describe(error, actions, data)
}

/// The actions of a `tpl` string parsed under the name `shown`: its `define`s, and its body under `body_name` (the
/// name it ran under) unless a define has that name.
fn tpl_table(source: &str, shown: &str, body_name: Option<&str>) -> ActionTable {
    let mut table = ActionTable::default();
    let text: Arc<str> = source.into();
    if let Ok(file) = gotmpl::translate_file(shown, source, &super::is_function) {
        for (define, translated) in file.defines {
            table.set_origin(&define, shown);
            table.add_located_actions(&define, translated.actions, &text);
        }
        if let Some(name) = body_name
            && !table.knows(name)
        {
            table.set_origin(name, shown);
            table.set_shown(name, shown);
            table.add_located_actions(name, file.body.actions, &text);
        }
    }
    table
}

/// A translated `tpl` source: its body and the templates it `define`s.
#[derive(Debug)]
struct TplSource {
    /// The Go source, shared with the string's scope while it renders.
    source: Arc<str>,
    body: String,
    defines: Vec<(String, String)>,
    /// The names among `defines` whose body is empty in Go's sense.
    empty_defines: Vec<String>,
    /// Whether the translation holds stray byte characters (from `"\xc3"`-like literals): a render that uses it
    /// has them, even when the translation came from the cache and no literal was unquoted in this render.
    strays: bool,
}

static TPL_CACHE: LazyLock<Mutex<HashMap<String, Arc<TplSource>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
const TPL_CACHE_ENTRIES: usize = 1024;

fn tpl(state: &State, args: &[Value], exec: &ExecContext) -> Result<Value, Error> {
    want("tpl", args, 2)?;
    meter::check_deadline()?;
    let source = arg_str(args, 0);
    check_template_paths(&args[1], &source)?;
    if !source.contains("{{") {
        return Ok(Value::from(source));
    }
    let depth = exec.depth;
    let actions = &exec.actions;
    if depth >= MAX_INCLUDE_DEPTH {
        return Err(fail(format!(
            "error calling tpl: nesting deeper than {MAX_INCLUDE_DEPTH}"
        )));
    }
    let cached = TPL_CACHE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&source)
        .cloned();
    let translated = match cached {
        Some(translated) => translated,
        None => {
            let file = gotmpl::translate_file(state.name(), &source, &super::is_function).map_err(
                |e| {
                    fail(format!(
                        "error calling tpl: error during tpl function execution for {}: {e}",
                        super::printf::quote_go(&source)
                    ))
                },
            )?;
            let empty_defines = file.empty_defines;
            let defines: Vec<(String, String)> = file
                .defines
                .into_iter()
                .map(|(name, define)| (name, define.source))
                .collect();
            let strays = gostring::holds_stray_range(&file.body.source)
                || defines
                    .iter()
                    .any(|(_, define)| gostring::holds_stray_range(define));
            let translated = Arc::new(TplSource {
                source: source.as_str().into(),
                body: file.body.source,
                defines,
                empty_defines,
                strays,
            });
            let mut cache = TPL_CACHE.lock().unwrap_or_else(|p| p.into_inner());
            if cache.len() >= TPL_CACHE_ENTRIES {
                cache.clear();
            }
            cache.insert(source.clone(), Arc::clone(&translated));
            translated
        }
    };
    if translated.strays {
        meter::note_strays();
    }
    // Helm's tpl takes its data as a `chartutil.Values`, so a plain map passed in is seen as one inside, and it
    // sets the data's `Template` to a new `chartutil.Values` of the same name and base path (a change the caller
    // sees too). The root's `Template` is one already.
    let dot = match GoMap::of(&args[1]) {
        Some(map) => {
            if let Some(template) = map.get("Template")
                && GoMap::of(&template).is_some_and(|t| t.go_type() != MapType::Values)
            {
                let entries = ["Name", "BasePath"]
                    .into_iter()
                    .filter_map(|key| Some((key.to_string(), template.get_attr(key).ok()?)))
                    .collect();
                map.update(|data| {
                    data.insert(
                        "Template".to_string(),
                        GoMap::typed(entries, MapType::Values),
                    )
                });
            }
            if super::value::map_type(&args[1]) == Some(MapType::Plain) {
                super::value::retyped(&args[1], MapType::Values)
            } else {
                args[1].clone()
            }
        }
        None => args[1].clone(),
    };
    let context = ExecContext {
        dot,
        depth: depth + 1,
        cache: None,
        lookup: exec.lookup.clone(),
        aliases: None,
        resolved: None,
        actions: Arc::clone(actions),
    }
    .value();
    let hidden = args[1]
        .get_attr("Template")
        .and_then(|template| template.get_attr("Name"))
        .ok()
        .and_then(|name| name.as_str().map(str::to_string));
    let mut set = tpl_set::resolve(
        actions,
        hidden.as_deref(),
        &translated.defines,
        &translated.empty_defines,
        |file, name| {
            let text = actions.file_text(file)?;
            let file = gotmpl::translate_file(file, text, &super::is_function).ok()?;
            let mut defines = file.defines.into_iter();
            defines
                .find(|(define, _)| define == name)
                .map(|(_, d)| d.source)
        },
    );
    let replaced = std::mem::take(&mut set.replaced);
    let _scope = TplScope::enter(hidden, set, Arc::clone(&translated.source));
    let mut sink = Sink::value("tpl", None);
    let rendered = nested(|| {
        if replaced.is_empty() {
            match state.env().get_template(&format!("{TPL_PREFIX}{source}")) {
                Ok(template) => template.render_captured_to(context, &mut sink).map(drop),
                Err(_) => render_source(state.env(), &translated.body, context, &mut sink),
            }
        } else {
            // Helm parses the string and then the chart's files into one set ([`tpl_set`]): the definitions that
            // set holds in place of the chart's are added to a copy of the chart's environment.
            let mut env = state.env().clone();
            for (name, define) in &replaced {
                env.add_template_owned(name.clone(), define.clone())
                    .map_err(|e| fail(format!("error calling tpl: {e}")))?;
            }
            render_source(&env, &translated.body, context, &mut sink)
        }
    });
    // Helm renders `tpl` like a template file, so `<no value>` is removed from its result too.
    rendered.map_err(|e| tpl_error(&e, &source, &args[1], actions))?;
    meter::check_exceeded()?;
    Ok(Value::from(strip_no_value(sink.into_string())))
}

/// Helm's tpl reads `Template.BasePath` and `Template.Name` of its data with `chartutil.Values.PathValue` before it
/// parses the string: `Template` must be a map and each key present and no map itself, or the call fails with
/// `"BasePath" is not a value`.
fn check_template_paths(data: &Value, source: &str) -> Result<(), Error> {
    let template = data
        .get_attr("Template")
        .ok()
        .filter(|t| super::value::map_type(t).is_some_and(|go_type| go_type != MapType::Strings));
    for (key, shown) in [("BasePath", "Basepath"), ("Name", "Name")] {
        let present = template.as_ref().and_then(|t| {
            GoMap::of(t)
                .and_then(|map| map.get(key))
                .filter(|v| super::value::map_type(v) != Some(MapType::Plain))
        });
        if present.is_none() {
            return Err(fail(format!(
                "error calling tpl: cannot retrieve Template.{shown} from values inside tpl function: {source}: {key:?} is not a value"
            )));
        }
    }
    Ok(())
}

/// Helm's error for a failed `tpl` string: `error during tpl function execution for "…"` around Go's text of the
/// failure inside it, where the string is a template named after the data's `.Template.Name` (its actions are
/// found again by translating the string once more: this runs only on the failure path).
fn tpl_error(error: &Error, source: &str, data: &Value, actions: &ActionTable) -> Error {
    let shown = data
        .get_attr("Template")
        .and_then(|template| template.get_attr("Name"))
        .ok()
        .and_then(|name| name.as_str().map(str::to_string))
        .unwrap_or_else(|| "tpl".to_string());
    let table = match error.name() {
        Some(name) => tpl_table(source, &shown, Some(name)),
        None => ActionTable::default(),
    };
    // An `include` inside the string was described against the chart's table already.
    let inner = if error.name().is_some_and(|name| table.knows(name)) {
        describe(error, &table, data)
    } else {
        describe(error, actions, data)
    };
    // Helm keeps the whole chain of a `required` or `fail` inside `tpl`.
    let inner = inner.strip_prefix(USER_ERROR_PREFIX).unwrap_or(&inner);
    fail(format!(
        "error calling tpl: error during tpl function execution for {}: {inner}",
        super::printf::quote_go(source)
    ))
}

/// Renders template source (a `tpl` string) into `sink`.
fn render_source(
    env: &Environment<'_>,
    source: &str,
    context: Value,
    sink: &mut Sink<'_>,
) -> Result<(), Error> {
    env.template_from_str(source)?
        .render_captured_to(context, sink)
        .map(drop)
}

/// What Go prints for a missing value; Helm removes it from every rendered file (not from `include` results).
pub(crate) const NO_VALUE: &str = "<no value>";

/// Removes [`NO_VALUE`] as Helm does after rendering a file.
pub(crate) fn strip_no_value(text: String) -> String {
    // `<` is rare in rendered manifests: finding it (memchr) is cheaper than a substring search, for the check and
    // for the removal (`str::replace` searched the whole file again with a general substring searcher). The
    // marker starts with its only `<`, so its occurrences never overlap and are those `str::replace` removes.
    let bytes = text.as_bytes();
    let is_marker = |at: usize| bytes[at..].starts_with(NO_VALUE.as_bytes());
    let Some(first) = memchr::memchr_iter(b'<', bytes).find(|&at| is_marker(at)) else {
        return text;
    };
    let mut out = String::with_capacity(text.len() - NO_VALUE.len());
    out.push_str(&text[..first]);
    let after_first = first + NO_VALUE.len();
    let mut kept_from = after_first;
    for at in memchr::memchr_iter(b'<', &bytes[after_first..]).map(|at| at + after_first) {
        if is_marker(at) {
            out.push_str(&text[kept_from..at]);
            kept_from = at + NO_VALUE.len();
        }
    }
    out.push_str(&text[kept_from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::super::describe::message;
    use super::*;

    #[test]
    fn strip_no_value_removes_every_marker_as_replace_does() {
        for text in [
            "",
            "plain",
            "<no value>",
            "a: <no value>\nb: <<no value>>\nc: <no valu\n",
            "<no value><no value>x<no value",
            "é <no value> ü <",
        ] {
            assert_eq!(
                strip_no_value(text.to_string()),
                text.replace(NO_VALUE, ""),
                "{text:?}"
            );
        }
    }

    #[test]
    fn required_fails_on_nil_and_empty_strings_only() {
        assert!(required(&[Value::from("msg"), Value::UNDEFINED]).is_err());
        assert!(required(&[Value::from("msg"), Value::from("")]).is_err());
        assert_eq!(
            required(&[Value::from("msg"), Value::from(0)])
                .unwrap()
                .as_i64(),
            Some(0)
        );
        let err = required(&[Value::from("a token must be set"), Value::from(())]).unwrap_err();
        assert!(message(&err).ends_with("a token must be set"));
    }

    #[test]
    fn action_at_joins_actions_on_the_same_line() {
        let mut table = ActionTable::default();
        table.add_actions(
            "t",
            vec![
                (3, "{{ a }}".into()),
                (3, "{{ b }}".into()),
                (4, "{{ c }}".into()),
            ],
        );
        table.set_origin("d", "c/templates/_h.tpl");
        assert_eq!(table.origin("d"), "c/templates/_h.tpl");
        assert_eq!(table.origin("t"), "t");
        assert_eq!(
            action_at(&table, "t", 3).as_deref(),
            Some("{{ a }} {{ b }}")
        );
        assert_eq!(action_at(&table, "t", 9), None);
    }

    #[test]
    fn columns_are_found_in_the_source_of_each_run() {
        let first: Arc<str> = "a\n  {{ x }}\n".into();
        let second: Arc<str> = "{{ y }} {{ z }}\n{{ y }}\n".into();
        let mut table = ActionTable::default();
        table.add_located_actions("t", vec![(2, 4..11)], &first);
        table.add_actions("t", vec![(7, "{{ w }}".into())]);
        table.add_located_actions("t", vec![(1, 0..7), (1, 8..15), (2, 16..23)], &second);
        // (action index, column): the run's own source, unknown for a run without one, and a repeated
        // action found after its earlier occurrence.
        let cases = [
            (0, Some(2)),
            (1, None),
            (2, Some(0)),
            (3, Some(8)),
            (4, Some(0)),
            (5, None),
        ];
        for (index, want) in cases {
            assert_eq!(table.column("t", index), want, "action {index}");
        }
        assert_eq!(table.column("missing", 0), None);
    }
}
