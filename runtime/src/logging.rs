//! Process logging in Gardener's shape: one line per event with `level`, `ts`, `logger` and `msg`
//! followed by the fields of the event's spans and of the event itself, as flat JSON (the keys
//! gardenlet's zap logger writes) or as text for a terminal.
//!
//! The `logger` starts with the component that logged: the one set for the thread
//! ([`set_thread_component`], called from a tokio runtime's `on_thread_start` where components share
//! a process), else the seedlet crate of the event's target (`seedlet_sandbox::…` → `sandbox`).
//! A component's events can be sent to a file of their own ([`route_component_to_file`]).
//!
//! A failed write (closed pipe, full disk) drops the line: logging never panics and never blocks
//! a shutdown.

use std::cell::Cell;
use std::fs::File;
use std::io::Write as _;
use std::path::Path;
use std::sync::{Mutex, PoisonError, RwLock};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;

use seedlet_config::{LogFormat, LogLevel};

thread_local! {
    /// The component the current thread works for, when set.
    static THREAD_COMPONENT: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Component files by component name; read on every event, written when a route changes.
static ROUTES: RwLock<Vec<Route>> = RwLock::new(Vec::new());

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoggingError {
    /// `RUST_LOG` is not a list of `target=level` directives.
    #[error("RUST_LOG {directives:?} is not a list of level or target=level directives")]
    Filter {
        /// The value of `RUST_LOG`.
        directives: String,
        /// The parser's complaint.
        #[source]
        source: tracing_subscriber::filter::ParseError,
    },
    /// A global subscriber was installed before.
    #[error("a logger is already installed")]
    AlreadyInstalled(#[source] tracing_subscriber::util::TryInitError),
}

/// Installs the process logger on stderr: events at `level` and above (or as the `target=level`
/// directives of a non-empty `rust_log` say), in `format`.
///
/// # Errors
/// [`LoggingError::Filter`] for bad `rust_log` directives, [`LoggingError::AlreadyInstalled`]
/// when called twice.
pub fn init(
    level: LogLevel,
    format: LogFormat,
    rust_log: Option<&str>,
) -> Result<(), LoggingError> {
    let terminal = match rust_log.filter(|directives| !directives.trim().is_empty()) {
        Some(directives) => {
            directives
                .parse::<Targets>()
                .map_err(|source| LoggingError::Filter {
                    directives: directives.to_owned(),
                    source,
                })?
        }
        None => default_targets(level),
    };
    let terminal_max = terminal
        .iter()
        .map(|(_, level)| level)
        .chain(terminal.default_level())
        .max()
        .unwrap_or(LevelFilter::OFF);
    tracing_subscriber::registry()
        .with(GardenerLayer {
            format,
            terminal,
            terminal_max,
        })
        .try_init()
        .map_err(LoggingError::AlreadyInstalled)
}

/// The filter without `RUST_LOG`: `level` for everything except kube's HTTP client, which logs an
/// ERROR line for every failed request (about 180 in a 22 s garden outage) although the
/// controller that sent it reports the failure once, with context, through its error policy, and
/// kube-runtime's watcher, which logs a WARN for every re-list a 403 fails (every few seconds,
/// for as long as it lasts) although `crate::watch` reports each watch's failure once. Their
/// lines are kept at `debug`.
fn default_targets(level: LogLevel) -> Targets {
    let once_reported_elsewhere = match level {
        LogLevel::Debug => LevelFilter::DEBUG,
        LogLevel::Info | LogLevel::Error => LevelFilter::OFF,
    };
    Targets::new()
        .with_default(level_filter(level))
        .with_target("kube_client", once_reported_elsewhere)
        .with_target("kube_runtime::watcher", once_reported_elsewhere)
}

/// Marks the current thread as working for `component` (`agent`, `garden`, `sandbox`): its events
/// carry that `logger` and follow the component's file route. Call it from a tokio runtime's
/// `on_thread_start`, so that tasks spawned by the component are covered too.
pub fn set_thread_component(component: &'static str) {
    THREAD_COMPONENT.with(|current| current.set(Some(component)));
}

/// While the returned guard lives, events of `component` at `level` and above are appended to
/// `path` (in the process's format) instead of going to stderr.
///
/// # Errors
/// The file cannot be opened for appending.
pub fn route_component_to_file(
    component: &'static str,
    path: &Path,
    level: LogLevel,
) -> std::io::Result<ComponentFile> {
    let file = File::options().create(true).append(true).open(path)?;
    let mut routes = ROUTES.write().unwrap_or_else(PoisonError::into_inner);
    routes.retain(|route| route.component != component);
    routes.push(Route {
        component,
        level: level_filter(level),
        file: Mutex::new(file),
    });
    drop(routes);
    tracing::callsite::rebuild_interest_cache();
    Ok(ComponentFile { component })
}

/// Ends a component's file route when dropped; its events go to stderr again.
#[derive(Debug)]
#[must_use = "the route ends when the guard is dropped"]
pub struct ComponentFile {
    component: &'static str,
}

impl Drop for ComponentFile {
    fn drop(&mut self) {
        ROUTES
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|route| route.component != self.component);
        tracing::callsite::rebuild_interest_cache();
    }
}

/// One component's file.
#[derive(Debug)]
struct Route {
    component: &'static str,
    level: LevelFilter,
    file: Mutex<File>,
}

fn level_filter(level: LogLevel) -> LevelFilter {
    match level {
        LogLevel::Debug => LevelFilter::DEBUG,
        LogLevel::Info => LevelFilter::INFO,
        LogLevel::Error => LevelFilter::ERROR,
    }
}

/// The component of an event on this thread with this target.
fn component_of(target: &str) -> Option<&'static str> {
    THREAD_COMPONENT
        .with(Cell::get)
        .or_else(|| crate_component(target))
}

/// `agent` for `seedlet_agent::…`, and so on for the crates that are components of their own.
fn crate_component(target: &str) -> Option<&'static str> {
    let crate_name = target.split("::").next().unwrap_or_default();
    ["agent", "garden", "sandbox", "landscape", "scale"]
        .into_iter()
        .find(|component| crate_name.strip_prefix("seedlet_") == Some(component))
}

/// The `logger` name: the component, then the module path of the target without a `seedlet_`
/// prefix and without repeating the component (`agent` + `seedlet_agent::lease` → `agent.lease`,
/// `agent` + `kube_runtime::controller` → `agent.kube_runtime.controller`).
fn logger_name(component: Option<&str>, target: &str) -> String {
    let mut segments: Vec<&str> = target.split("::").filter(|s| !s.is_empty()).collect();
    if let Some(first) = segments.first_mut() {
        *first = first.strip_prefix("seedlet_").unwrap_or(first);
    }
    match component {
        Some(component) => {
            if segments.first() == Some(&component) {
                segments.remove(0);
            }
            std::iter::once(component)
                .chain(segments)
                .collect::<Vec<_>>()
                .join(".")
        }
        None => segments.join("."),
    }
}

/// Formats events and sends each to its component's file or to stderr.
struct GardenerLayer {
    format: LogFormat,
    /// What goes to stderr.
    terminal: Targets,
    /// The most verbose level `terminal` lets through.
    terminal_max: LevelFilter,
}

/// Fields recorded on a span, kept in its extensions.
struct SpanFields(Map<String, Value>);

impl<S> Layer<S> for GardenerLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, _metadata: &'static Metadata<'static>) -> Interest {
        // Whether an event is wanted depends on the thread's component, known only when it fires.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        let routes = ROUTES.read().unwrap_or_else(PoisonError::into_inner);
        let component = component_of(metadata.target());
        match routes
            .iter()
            .find(|route| Some(route.component) == component)
        {
            Some(route) => metadata.level() <= &route.level,
            None => self
                .terminal
                .would_enable(metadata.target(), metadata.level()),
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        let routes = ROUTES.read().unwrap_or_else(PoisonError::into_inner);
        let files = routes.iter().map(|route| route.level);
        files.chain([self.terminal_max]).max()
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Map::new();
        attrs.record(&mut Fields(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanFields(fields));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let mut extensions = span.extensions_mut();
            if let Some(SpanFields(fields)) = extensions.get_mut::<SpanFields>() {
                values.record(&mut Fields(fields));
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let metadata = event.metadata();
        let component = component_of(metadata.target());
        let mut fields = Map::new();
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope.from_root() {
                if let Some(SpanFields(span_fields)) = span.extensions().get::<SpanFields>() {
                    fields.extend(span_fields.clone());
                }
            }
        }
        event.record(&mut Fields(&mut fields));
        let message = match fields.remove("message") {
            Some(Value::String(message)) => message,
            Some(other) => other.to_string(),
            None => String::new(),
        };
        let line = Line {
            level: *metadata.level(),
            timestamp: jiff::Timestamp::now(),
            logger: logger_name(component, metadata.target()),
            message,
            fields,
        };
        let text = match self.format {
            LogFormat::Json => line.json(),
            LogFormat::Text => line.text(),
        };
        let routes = ROUTES.read().unwrap_or_else(PoisonError::into_inner);
        match routes
            .iter()
            .find(|route| Some(route.component) == component)
        {
            Some(route) => {
                let mut file = route.file.lock().unwrap_or_else(PoisonError::into_inner);
                // Best effort, like stderr below.
                let _ = file.write_all(text.as_bytes());
            }
            None => {
                // A closed or full stderr drops the line; it must never panic the process.
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
            }
        }
    }
}

/// One formatted event.
struct Line {
    level: Level,
    timestamp: jiff::Timestamp,
    logger: String,
    message: String,
    fields: Map<String, Value>,
}

impl Line {
    /// zap's level names.
    fn level_name(&self) -> &'static str {
        match self.level {
            Level::ERROR => "error",
            Level::WARN => "warn",
            Level::INFO => "info",
            Level::DEBUG => "debug",
            Level::TRACE => "trace",
        }
    }

    /// `{"level":…,"ts":…,"logger":…,"msg":…,<fields>}` and a newline.
    fn json(&self) -> String {
        let mut object = Map::new();
        object.insert("level".into(), self.level_name().into());
        object.insert("ts".into(), format!("{:.3}", self.timestamp).into());
        object.insert("logger".into(), self.logger.clone().into());
        object.insert("msg".into(), self.message.clone().into());
        for (key, value) in &self.fields {
            if !object.contains_key(key) {
                object.insert(key.clone(), value.clone());
            }
        }
        let mut text = Value::Object(object).to_string();
        text.push('\n');
        text
    }

    /// `<ts> <LEVEL> <logger> <msg> key=value …` and a newline; values with spaces are quoted.
    fn text(&self) -> String {
        let mut text = format!(
            "{:.3} {:<5} {} {}",
            self.timestamp,
            self.level_name().to_uppercase(),
            self.logger,
            self.message
        );
        for (key, value) in &self.fields {
            let value = match value {
                Value::String(plain)
                    if !plain.is_empty()
                        && !plain.contains(|c: char| c.is_whitespace() || c == '"' || c == '=') =>
                {
                    plain.clone()
                }
                other => other.to_string(),
            };
            text.push(' ');
            text.push_str(key);
            text.push('=');
            text.push_str(&value);
        }
        text.push('\n');
        text
    }
}

/// Records tracing fields as JSON values.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0
            .insert(field.name().into(), crate::error_chain(value).into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(fields: Map<String, Value>) -> Line {
        Line {
            level: Level::INFO,
            timestamp: "2026-11-25T14:46:21.123456Z".parse().unwrap(),
            logger: "agent.lease".into(),
            message: "lease renewed".into(),
            fields,
        }
    }

    #[test]
    fn logger_name_starts_with_the_component_and_drops_the_seedlet_prefix() {
        let cases = [
            (Some("agent"), "seedlet_agent::lease", "agent.lease"),
            (Some("agent"), "seedlet_agent", "agent"),
            (
                Some("agent"),
                "seedlet_bootstrap::renew",
                "agent.bootstrap.renew",
            ),
            (
                Some("garden"),
                "kube_runtime::controller",
                "garden.kube_runtime.controller",
            ),
            (None, "seedlet_sandbox::endpoints", "sandbox.endpoints"),
            (None, "hyper::proto", "hyper.proto"),
        ];
        for (component, target, expected) in cases {
            assert_eq!(
                logger_name(component, target),
                expected,
                "{component:?} {target}"
            );
        }
    }

    #[test]
    fn crate_component_knows_only_seedlet_components() {
        assert_eq!(crate_component("seedlet_garden::csr"), Some("garden"));
        assert_eq!(crate_component("seedlet_sandbox"), Some("sandbox"));
        assert_eq!(crate_component("seedlet_runtime::logging"), None);
        assert_eq!(crate_component("seedlet_agents::x"), None);
        assert_eq!(crate_component("kube_runtime"), None);
    }

    #[test]
    fn json_line_has_gardener_keys_first_then_flat_fields() {
        let mut fields = Map::new();
        fields.insert("seed".into(), "local".into());
        fields.insert("attempt".into(), 3.into());
        fields.insert("msg".into(), "shadowed".into());
        assert_eq!(
            line(fields).json(),
            "{\"level\":\"info\",\"ts\":\"2026-11-25T14:46:21.123Z\",\"logger\":\"agent.lease\",\
             \"msg\":\"lease renewed\",\"seed\":\"local\",\"attempt\":3}\n"
        );
    }

    #[test]
    fn text_line_quotes_only_values_that_need_it() {
        let mut fields = Map::new();
        fields.insert("seed".into(), "local".into());
        fields.insert("error".into(), "connection refused".into());
        fields.insert("empty".into(), "".into());
        fields.insert("ready".into(), true.into());
        assert_eq!(
            line(fields).text(),
            "2026-11-25T14:46:21.123Z INFO  agent.lease lease renewed seed=local \
             error=\"connection refused\" empty=\"\" ready=true\n"
        );
    }

    #[test]
    fn kube_client_request_errors_are_debug_lines_by_default() {
        use tracing::Level;
        let info = default_targets(LogLevel::Info);
        assert!(!info.would_enable("kube_client::client::builder", &Level::ERROR));
        assert!(!info.would_enable("kube_runtime::watcher", &Level::WARN));
        assert!(info.would_enable("seedlet_agent::daemon", &Level::INFO));
        assert!(info.would_enable("kube_runtime::controller", &Level::WARN));
        let debug = default_targets(LogLevel::Debug);
        assert!(debug.would_enable("kube_client::client::builder", &Level::ERROR));
        assert!(debug.would_enable("kube_runtime::watcher", &Level::WARN));
    }
}
