//! Go's wording of a failed execution: `template: file:line:column: executing "name" at <node>: message`, with
//! the node Go names for each kind of failure (a call, a broken field chain, a refused argument, a `range` that
//! cannot iterate, a `nil` command) and `required`/`fail`'s `execution error at (…)`. Used on the failure path only.

use minijinja::value::Value;
use minijinja::{Error, ErrorKind};

use super::action_table::ActionTable;
use super::template::{TPL_PREFIX, USER_ERROR_PREFIX};
use super::{field_error, location, signature};

/// Marks an error already described in Go's words (a failure inside a `template` action), which the enclosing
/// levels pass on unchanged.
#[derive(Debug)]
pub(crate) struct Described;

impl std::fmt::Display for Described {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("described in Go's words")
    }
}

impl std::error::Error for Described {}

/// Describes a minijinja error like Go's `template: name:line: executing "name" at <action>: message`; `data` is
/// what the failed execution had for `.` at its start (a broken field chain is traced from it).
pub(crate) fn describe(error: &Error, actions: &ActionTable, data: &Value) -> String {
    if std::error::Error::source(error).is_some_and(|source| source.is::<Described>()) {
        return error.detail().unwrap_or_default().to_string();
    }
    if let Some(described) = describe_broken_chain(error, actions, data) {
        return described;
    }
    let message = message(error);
    if let Some(user) = message.strip_prefix(USER_ERROR_PREFIX) {
        let location = user_location(error, actions, &["required", "fail"]);
        return format!("{USER_ERROR_PREFIX}execution error at ({location}): {user}");
    }
    if let Some(at) = message.find(USER_ERROR_PREFIX) {
        // A nested include already described a `required`/`fail` failure: Helm names the outermost location,
        // the call that led there, so each enclosing level puts its own in.
        let inner = &message[at + USER_ERROR_PREFIX.len()..];
        let user = inner
            .strip_prefix("execution error at (")
            .and_then(|rest| rest.split_once("): "))
            .map_or(inner, |(_, user)| user);
        let location = user_location(error, actions, &["include", "tpl"]);
        return format!("{USER_ERROR_PREFIX}execution error at ({location}): {user}");
    }
    let Some(name) = error.name() else {
        return message.to_string();
    };
    let name = if name.starts_with(TPL_PREFIX) && !actions.knows(name) {
        "tpl"
    } else {
        name
    };
    let shown = actions.shown(name);
    let line = error.line().unwrap_or(0);
    if let Some(described) = describe_refused_argument(error, actions, name, line, &message) {
        return described;
    }
    if message.starts_with("range can't iterate over ")
        && let Some(at) = actions.locate_range(
            name,
            line,
            translated_call(error, &["range_values", "range_pairs"]),
        )
    {
        return format!(
            "template: {}:{}:{}: executing {shown:?} at <{}>: {message}",
            actions.origin(name),
            at.line,
            at.column,
            at.command
        );
    }
    // A `nil` command is found like a call of a function named `nil`, an operand given arguments like a call of it.
    let not_a_function = message.strip_prefix("can't give argument to non-function ");
    let failing = location::failing_function(&message)
        .or_else(|| (message == "nil is not a command").then_some("nil"))
        .or(not_a_function);
    if let Some((function, at)) = failing.and_then(|function| {
        let translated = translated_call(error, &[function]);
        Some((function, actions.locate(name, line, function, translated)?))
    }) {
        // An argument count error is Go's about the function's name alone.
        let node = if message.starts_with("wrong number of args") || not_a_function.is_some() {
            function
        } else {
            at.command.as_str()
        };
        // Go names the file a `define` was parsed from in the location, the define in `executing`.
        return format!(
            "template: {}:{}:{}: executing {shown:?} at <{node}>: {message}",
            actions.origin(name),
            at.line,
            at.column
        );
    }
    let file = actions.origin(name);
    match action_at(actions, name, line) {
        Some(action) => {
            format!("template: {file}:{line}: executing {shown:?} at <{action}>: {message}")
        }
        None => format!("template: {file}:{line}: {message}"),
    }
}

/// Go's text for an undefined value that a broken field chain gave ([`field_error`]) or for a nil map argument
/// taken from a field, when the chain can be traced and found in the Go source (the translated text and the span come with the error: the environment runs in
/// minijinja's debug mode, which costs nothing until an error).
fn describe_broken_chain(error: &Error, actions: &ActionTable, data: &Value) -> Option<String> {
    let name = error.name()?;
    if name.starts_with(TPL_PREFIX) && !actions.knows(name) {
        return None;
    }
    let aliases = actions.aliases(name);
    let source = error.template_source()?;
    let broken = if field_error::is_undefined_failure(error) {
        field_error::broken_chain(source, error.range()?, data, aliases.as_deref())?
    } else {
        let message = error.detail()?;
        field_error::refused_map_argument(source, error.range()?, aliases.as_deref(), message)
            .or_else(|| field_error::field_call(source, error.range()?, message))?
    };
    let line = error.line()?;
    let (line, column, chain) = actions.locate_chain(name, line, &broken)?;
    Some(format!(
        "template: {}:{line}:{column}: executing {:?} at <{chain}>: {}",
        actions.origin(name),
        actions.shown(name),
        broken.message
    ))
}

/// Go's text for an argument the type check refused ([`signature::RefusedArgument`]): Go names the argument
/// (`at <.Values.k>`), or for a piped value the node it evaluated last ([`location::argument_node`]).
fn describe_refused_argument(
    error: &Error,
    actions: &ActionTable,
    name: &str,
    line: usize,
    message: &str,
) -> Option<String> {
    let refused = std::error::Error::source(error)?.downcast_ref::<signature::RefusedArgument>()?;
    let call = error.template_source()?.get(error.range()?)?;
    let at = match call.strip_prefix("f_") {
        Some(call) => {
            let function = call.split('(').next()?;
            actions.locate(name, line, function, translated_call(error, &[function]))?
        }
        // A method call (`(semver "1.2.3").Compare "x"`): Go names its argument after the method's name.
        None => {
            let method = format!(".{}", method_called(call)?);
            actions.locate_method(name, line, &method)?
        }
    };
    let (line, column, node, direct) = location::argument_node(&at, refused.0)?;
    let message = direct
        .then(|| literal_refused(&node, message))
        .flatten()
        .unwrap_or_else(|| message.to_string());
    Some(format!(
        "template: {}:{line}:{column}: executing {:?} at <{node}>: {message}",
        actions.origin(name),
        actions.shown(name)
    ))
}

/// The method a translated call `….Name(…)` calls: the last `.Name` before the call's own parenthesis.
fn method_called(call: &str) -> Option<&str> {
    let open = call.rfind('(')?;
    let before = &call[..open];
    let dot = before.rfind('.')?;
    let name = &before[dot + 1..];
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .then_some(name)
}

/// Go's own text when the refused argument is a constant written in the template (`"now"`, `1`, `true`): its
/// engine converts constants by the parameter's kind, so it words the refusal otherwise.
fn literal_refused(node: &str, message: &str) -> Option<String> {
    let first = node.chars().next()?;
    let second = node.chars().nth(1);
    let literal = matches!(first, '"' | '`' | '\'' | '0'..='9')
        || (matches!(first, '-' | '+' | '.')
            && second.is_some_and(|c| c.is_ascii_digit() || c == '.'))
        || node == "true"
        || node == "false";
    if !literal {
        return None;
    }
    let wanted = message
        .strip_prefix("wrong type for value; expected ")?
        .split("; got ")
        .next()?;
    Some(match wanted {
        "bool" => format!("expected bool; found {node}"),
        "int" => format!("expected integer; found {node}"),
        "string" => format!("expected string; found {node}"),
        "float64" => format!("expected float; found {node}"),
        other => format!("can't handle {node} for arg of type {other}"),
    })
}

/// Which call of `function` on its line of the translated template failed (see [`ActionTable::locate`]).
fn translated_call(error: &Error, functions: &[&str]) -> Option<(usize, usize)> {
    location::translated_call(error.template_source()?, error.range()?, functions)
}

/// `file:line:column` of the failing call of one of `functions` in Helm's `execution error at (…)`, or
/// `file:line` when the call cannot be told on that line.
fn user_location(error: &Error, actions: &ActionTable, functions: &[&str]) -> String {
    match (error.name(), error.line()) {
        (Some(name), Some(line)) => match functions.iter().find_map(|function| {
            actions.locate(name, line, function, translated_call(error, &[function]))
        }) {
            Some(at) => format!("{}:{}:{}", actions.origin(name), at.line, at.column),
            None => format!("{}:{line}", actions.origin(name)),
        },
        (Some(name), None) => actions.origin(name).to_string(),
        _ => "template".to_string(),
    }
}

/// The error text without minijinja's location suffix.
pub(crate) fn message(error: &Error) -> String {
    match (error.kind(), error.detail()) {
        (ErrorKind::UndefinedError, _) => {
            "nil pointer evaluating a field of a missing value".to_string()
        }
        (_, Some(detail)) => detail.to_string(),
        (kind, None) => kind.to_string(),
    }
}

/// The Go source of the action(s) on `line` of template `name`.
pub(crate) fn action_at(actions: &ActionTable, name: &str, line: usize) -> Option<String> {
    actions.on_line(name, line)
}
