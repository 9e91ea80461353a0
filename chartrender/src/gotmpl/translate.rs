//! Go template tree → minijinja source, keeping Go line numbers so minijinja errors point at the Go source.
//!
//! Conventions of the generated source (the runtime in `crate::funcs` relies on them):
//! - the template's data (Go's `$`) is the context variable `_d0`; `with`/`range` bind fresh `_dN` names for dot;
//! - `$x := …` declarations live in a per-execution `namespace()` named `_v` (slot `vN` per declaration, so Go's
//!   lexical scoping and assignments from inside `range` both work); two-variable `range` keys are `_kN` loop variables;
//! - every Go function `f` is the global `f_f`, pipelines pass the piped value as the last argument;
//!   `and`/`or`/`not` become minijinja's operators, which already return operands and short-circuit like Go.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;

use super::ParseError;
use super::parser::{Command, Node, Operand, Pipe};
use emit::{
    builtin_arity_error, is_plain_name, needs_escape, non_function_text, push_decimal,
    push_exec_error, push_field_chain, push_path, push_string_literal, space_before_sign, span_in,
    string_literal,
};

/// A translated template: minijinja source plus the Go action source for each line (for error messages).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Translated {
    /// minijinja template source.
    pub(crate) source: String,
    /// `(line, byte range)` of every action in the template text it was translated from, in source order.
    pub(crate) actions: Vec<(usize, Range<usize>)>,
    /// Long literal texts moved out of `source` (when asked for): `(name, text)`; the source prints the
    /// name instead, so minijinja's lexer, which walks template text character by character, never sees them.
    pub(crate) texts: Vec<(String, Arc<str>)>,
    /// Field paths from the template's data (`_d0`) that the source names `_p<n>` (when asked for, see
    /// [`translate`]): entry `n` is the path of `_p<n>`, which the execution context resolves from its `_d0` when
    /// the name is looked up. A path is its field names joined by `.` (plain names, which hold no `.`): one string
    /// a path, where a list of names was an allocation per name, made and freed on every cold render.
    pub(crate) aliases: Vec<String>,
}

/// Prefix of the names under which a translated chart template reads a field path from its data.
pub(crate) const ALIAS_PREFIX: &str = "_p";

/// Prefix of the names under which a translated chart template prints its long literal texts.
pub(crate) const TEXT_PREFIX: &str = "_t";

/// Literal text of at least this many bytes is moved out of the minijinja source when the caller asks for it.
pub(crate) const EXTRACT_TEXT_BYTES: usize = 256;

/// Translates one template body (a file or a `define`).
///
/// With `texts` (a prefix for names), literal texts of [`EXTRACT_TEXT_BYTES`] or more become
/// `{{ <prefix>_<n> }}` and are returned in [`Translated::texts`]; the caller's context resolves those names. Field paths
/// from the data (`.Values.a.b`, `$.Release.Name`) then become one name each, `_p<n>`
/// ([`Translated::aliases`]): minijinja compiles a name several times faster than a chain of attribute lookups
/// (more than half of compiling a values-heavy template), and the caller's context resolves it with the same
/// lookups when it is read.
pub(crate) fn translate(
    name: &str,
    text: &str,
    nodes: &[Node],
    texts: Option<&str>,
) -> Result<Translated, ParseError> {
    let mut translator = Translator {
        text,
        texts_prefix: texts,
        texts: Vec::new(),
        name,
        out: String::with_capacity(estimated_len(nodes, texts.is_some()).min(MAX_PRESIZED_SOURCE)),
        line: 1,
        scopes: vec![vec![(String::new(), "_d0".to_string())]],
        dot: "_d0".to_string(),
        counter: 0,
        uses_namespace: false,
        break_flags: Vec::new(),
        actions: Vec::new(),
        aliases: texts.map(|_| RefCell::new(Aliases::default())),
    };
    translator.nodes(nodes)?;
    let mut source = translator.out;
    if translator.uses_namespace {
        source.insert_str(0, "{% set _v = namespace() %}");
    }
    Ok(Translated {
        source,
        actions: translator.actions,
        texts: translator.texts,
        aliases: translator
            .aliases
            .map(|aliases| aliases.into_inner().into_paths())
            .unwrap_or_default(),
    })
}

/// At most this many bytes are reserved up front for a translation.
const MAX_PRESIZED_SOURCE: usize = 64 * 1024;

/// About how long the translation of `nodes` gets (a little more, rather than less): texts as they are (or a
/// name when moved out), actions about twice their Go source. Reserved once, the output grew a few times per
/// template before.
fn estimated_len(nodes: &[Node], moves_texts: bool) -> usize {
    nodes
        .iter()
        .map(|node| match node {
            Node::Text { text, .. } if moves_texts && text.len() >= EXTRACT_TEXT_BYTES => 24,
            Node::Text { text, .. } => text.len() + 8,
            Node::Action { source, .. } | Node::Template { source, .. } => 2 * source.len() + 8,
            Node::Branch {
                source,
                body,
                otherwise,
                ..
            }
            | Node::Range {
                source,
                body,
                otherwise,
                ..
            } => {
                2 * source.len()
                    + 48
                    + estimated_len(body, moves_texts)
                    + otherwise
                        .as_deref()
                        .map_or(0, |nodes| estimated_len(nodes, moves_texts))
            }
            Node::Break { .. } | Node::Continue { .. } => 48,
        })
        .sum()
}

/// The field paths a template reads through `_p<n>` names, and the number of each.
#[derive(Default)]
struct Aliases {
    /// Each path read so far and its number (the paths are listed in number order only at the end, so a new path
    /// is copied once, into this map).
    numbers: foldhash::HashMap<String, usize>,
    /// Scratch space for the key of a path in `numbers`.
    key: String,
}

impl Aliases {
    /// The paths by number: entry `n` is the path of `_p<n>`.
    fn into_paths(self) -> Vec<String> {
        let mut paths = Vec::with_capacity(self.numbers.len());
        paths.resize_with(self.numbers.len(), String::new);
        for (path, number) in self.numbers {
            paths[number] = path;
        }
        paths
    }
}

struct Translator<'a> {
    /// The template text `nodes` were parsed from (their sources are slices of it).
    text: &'a str,
    texts_prefix: Option<&'a str>,
    texts: Vec<(String, Arc<str>)>,
    name: &'a str,
    out: String,
    line: usize,
    /// Go variable name → minijinja expression, innermost scope last.
    scopes: Vec<Vec<(String, String)>>,
    dot: String,
    counter: usize,
    uses_namespace: bool,
    actions: Vec<(usize, Range<usize>)>,
    /// Field paths from `_d0` named `_p<n>` (`None`: paths are written out).
    aliases: Option<RefCell<Aliases>>,
    /// The enclosing `range` bodies and `else` lists, innermost last ([`LoopFrame`]).
    break_flags: Vec<LoopFrame>,
}

/// Where a `break` or `continue` is translated ([`breaks_here`]).
#[derive(Clone)]
enum LoopFrame {
    /// A `range` body; the `_v` slot a `break` sets when the `range` has an `else` and the body breaks.
    Body(Option<String>),
    /// A `range`'s `else` list: run in a loop of one when it breaks, where a `continue` sets the `_v` slot (when
    /// given) and leaves that loop, to continue the enclosing loop after it.
    Else(Option<String>),
}

/// Whether `nodes` (a `range` body or `else` list) hold a `break` of their own: not one inside a nested `range`,
/// which Go's nested range stops at (a `break` in a range's `else` list ends that range statement, the list's
/// rest skipped, and the enclosing loop goes on).
///
/// minijinja runs a `for` loop's `else` after a `break` in the first iteration too (it counts the iterations
/// started), where Go runs it only for an empty range, so such a loop records its breaks in a `_v` slot; and a
/// `break` in minijinja's `else` leaves the enclosing loop, so an `else` list that breaks runs in a loop of one
/// (whose `continue`s leave it through a `_v` slot and continue the enclosing loop after it, as Go's do).
fn breaks_here(nodes: &[Node<'_>]) -> bool {
    jumps_here(nodes, &|node| matches!(node, Node::Break { .. }))
}

/// Whether `nodes` hold a `continue` of their own (see [`breaks_here`]).
fn continues_here(nodes: &[Node<'_>]) -> bool {
    jumps_here(nodes, &|node| matches!(node, Node::Continue { .. }))
}

fn jumps_here(nodes: &[Node<'_>], is_jump: &dyn Fn(&Node<'_>) -> bool) -> bool {
    nodes.iter().any(|node| match node {
        Node::Branch {
            body, otherwise, ..
        } => {
            jumps_here(body, is_jump)
                || otherwise
                    .as_deref()
                    .is_some_and(|nodes| jumps_here(nodes, is_jump))
        }
        node => is_jump(node),
    })
}

impl Translator<'_> {
    fn error(&self, line: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            template: self.name.to_string(),
            line,
            message: message.into(),
        }
    }

    fn emit(&mut self, text: &str) {
        self.line += super::count_newlines(text);
        self.out.push_str(text);
    }

    /// Appends generated source that holds no newline (expressions and tags; string literals escape theirs).
    fn push_all(&mut self, parts: &[&str]) {
        for part in parts {
            self.out.push_str(part);
        }
    }

    /// Appends an output tag printing `expr`, without the spaces minijinja's lexer would step over one by one.
    fn push_output(&mut self, expr: &str) {
        let start = self.out.len() + 2;
        self.push_all(&["{{", expr, "}}"]);
        space_before_sign(&mut self.out, start);
    }

    /// Pads with a newline-only comment so the next output starts on Go line `line`.
    fn pad_to(&mut self, line: usize) {
        if line > self.line {
            self.out.push_str("{#");
            for _ in self.line..line {
                self.out.push('\n');
            }
            self.out.push_str("#}");
            self.line = line;
        }
    }

    /// Records the action with Go source `source` on `line`, by its place in the template text.
    fn action(&mut self, line: usize, source: &str) {
        self.actions.push((line, span_in(self.text, source)));
    }

    fn fresh(&mut self) -> usize {
        self.counter += 1;
        self.counter
    }

    fn nodes(&mut self, nodes: &[Node]) -> Result<(), ParseError> {
        for node in nodes {
            self.node(node)?;
        }
        Ok(())
    }

    fn node(&mut self, node: &Node) -> Result<(), ParseError> {
        match node {
            Node::Text { text, line } => {
                self.pad_to(*line);
                self.text(text);
            }
            Node::Action { pipe, line, source } => {
                self.pad_to(*line);
                self.action(*line, source);
                if let ([], [command]) = (pipe.vars.as_slice(), pipe.commands.as_slice()) {
                    // The common single command is written in place rather than built apart and copied.
                    let mut out = std::mem::take(&mut self.out);
                    out.push_str("{{");
                    let start = out.len();
                    let written = self.command_into(&mut out, command, None, *line);
                    space_before_sign(&mut out, start);
                    out.push_str("}}");
                    self.out = out;
                    written?;
                } else if pipe.vars.is_empty() {
                    let expr = self.pipe(pipe, *line)?;
                    self.push_output(&expr);
                } else {
                    self.declaration(pipe, *line)?;
                }
            }
            Node::Branch {
                rebind,
                pipe,
                body,
                otherwise,
                line,
                source,
            } => {
                self.pad_to(*line);
                self.action(*line, source);
                self.scopes.push(Vec::new());
                let condition = if pipe.vars.is_empty() {
                    self.pipe(pipe, *line)?
                } else {
                    self.declaration(pipe, *line)?
                };
                let outer_dot = self.dot.clone();
                if *rebind {
                    let name = format!("_d{}", self.fresh());
                    self.push_all(&["{% set ", &name, " = ", &condition, " %}{%if ", &name, "%}"]);
                    self.dot = name;
                } else {
                    self.push_all(&["{%if ", &condition, "%}"]);
                }
                self.block(body)?;
                self.dot = outer_dot;
                if let Some(otherwise) = otherwise {
                    self.emit("{%else%}");
                    self.block(otherwise)?;
                }
                self.emit("{%endif%}");
                self.scopes.pop();
            }
            Node::Range {
                pipe,
                body,
                otherwise,
                line,
                source,
            } => self.range(pipe, body, otherwise.as_deref(), *line, source)?,
            Node::Template {
                name,
                pipe,
                line,
                source,
            } => {
                self.pad_to(*line);
                self.action(*line, source);
                let argument = match pipe {
                    Some(pipe) => self.pipe(pipe, *line)?,
                    None => "none".to_string(),
                };
                self.push_all(&[
                    "{{f_template(",
                    &string_literal(name),
                    ",",
                    &argument,
                    ")}}",
                ]);
            }
            Node::Break { line } => {
                self.pad_to(*line);
                if let Some(LoopFrame::Body(Some(flag))) = self.break_flags.last().cloned() {
                    self.push_all(&["{% set ", &flag, " = true %}"]);
                }
                self.emit("{%break%}");
            }
            Node::Continue { line } => {
                self.pad_to(*line);
                match self.break_flags.last().cloned() {
                    Some(LoopFrame::Else(Some(flag))) => {
                        self.push_all(&["{% set ", &flag, " = true %}{%break%}"]);
                    }
                    _ => self.emit("{%continue%}"),
                }
            }
        }
        Ok(())
    }

    /// A `range`: a minijinja `for` over `f_range_values`/`f_range_pairs`, with the `else` list and the `break`
    /// bookkeeping of [`breaks_here`].
    fn range(
        &mut self,
        pipe: &Pipe,
        body: &[Node],
        otherwise: Option<&[Node]>,
        line: usize,
        source: &str,
    ) -> Result<(), ParseError> {
        self.pad_to(line);
        self.action(line, source);
        let expr = self.pipe(pipe, line)?;
        let n = self.fresh();
        let (key, element) = (format!("_k{n}"), format!("_d{n}"));
        let break_flag = (otherwise.is_some() && breaks_here(body)).then(|| format!("_v.b{n}"));
        if let Some(flag) = &break_flag {
            self.uses_namespace = true;
            self.push_all(&["{% set ", flag, " = false %}"]);
        }
        self.scopes.push(Vec::new());
        match pipe.vars.as_slice() {
            [] => {
                self.push_all(&["{% for ", &element, " in f_range_values(", &expr, ") %}"]);
            }
            [value] => {
                self.bind(value, &element);
                self.push_all(&["{% for ", &element, " in f_range_values(", &expr, ") %}"]);
            }
            [index, value] => {
                self.bind(index, &key);
                self.bind(value, &element);
                self.push_all(&[
                    "{% for ",
                    &key,
                    ", ",
                    &element,
                    " in f_range_pairs(",
                    &expr,
                    ") %}",
                ]);
            }
            _ => return Err(self.error(line, "too many declarations in range")),
        }
        // Checks the render's deadline on every iteration, on the line of the `range`.
        self.emit(TICK);
        let outer_dot = std::mem::replace(&mut self.dot, element);
        self.break_flags.push(LoopFrame::Body(break_flag.clone()));
        self.block(body)?;
        self.break_flags.pop();
        self.dot = outer_dot;
        self.scopes.pop();
        if let Some(otherwise) = otherwise {
            self.emit("{%else%}");
            if let Some(flag) = &break_flag {
                self.push_all(&["{%if not ", flag, "%}"]);
            }
            let breaks = breaks_here(otherwise);
            let continue_flag = (breaks && continues_here(otherwise)).then(|| format!("_v.c{n}"));
            if let Some(flag) = &continue_flag {
                self.uses_namespace = true;
                self.push_all(&["{% set ", flag, " = false %}"]);
            }
            if breaks {
                self.emit("{% for _once in [0] %}");
            }
            self.break_flags
                .push(LoopFrame::Else(continue_flag.clone()));
            self.block(otherwise)?;
            self.break_flags.pop();
            if breaks {
                self.emit("{%endfor%}");
            }
            if let Some(flag) = &continue_flag {
                self.push_all(&["{%if ", flag, "%}{%continue%}{%endif%}"]);
            }
            if break_flag.is_some() {
                self.emit("{%endif%}");
            }
        }
        self.emit("{%endfor%}");
        Ok(())
    }

    fn block(&mut self, nodes: &[Node]) -> Result<(), ParseError> {
        self.scopes.push(Vec::new());
        let result = self.nodes(nodes);
        self.scopes.pop();
        result
    }

    fn bind(&mut self, go_name: &str, expr: &str) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((go_name.to_string(), expr.to_string()));
        }
    }

    fn resolve(&self, go_name: &str, line: usize) -> Result<&str, ParseError> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
            .find(|(name, _)| name == go_name)
            .map(|(_, expr)| expr.as_str())
            .ok_or_else(|| self.error(line, format!("undefined variable \"${go_name}\"")))
    }

    /// Emits `$x := …` / `$x = …` and returns the expression now naming the value.
    fn declaration(&mut self, pipe: &Pipe, line: usize) -> Result<String, ParseError> {
        let expr = self.pipe(pipe, line)?;
        let [var] = pipe.vars.as_slice() else {
            return Err(self.error(line, "too many declarations in command"));
        };
        let target = if pipe.assign {
            self.resolve(var, line)?.to_string()
        } else {
            self.uses_namespace = true;
            format!("_v.v{}", self.fresh())
        };
        self.push_all(&["{% set ", &target, " = ", &expr, " %}"]);
        if ends_in_attribute_lookup(pipe) {
            // Go evaluates the field chain here: testing the value is minijinja's cheapest use of it, and fails
            // (strict undefined) for a field of a non-map even when the variable is never read. The chain itself is
            // tested (a field chain reads and changes nothing), so a failure points at it and is told in Go's words.
            self.push_all(&["{%if ", &expr, "%}{%endif%}"]);
        }
        if !pipe.assign {
            self.bind(var, &target);
        }
        Ok(target)
    }

    fn text(&mut self, text: &str) {
        if let Some(prefix) = self.texts_prefix
            && text.len() >= EXTRACT_TEXT_BYTES
        {
            // The Go lines of the text are not emitted: the next node pads to its own line.
            let global = format!("{prefix}_{}", self.texts.len());
            self.push_all(&["{{", &global, "}}"]);
            // Copied once, into the shared form the execution context prints (often most of a CRD file).
            self.texts.push((global, Arc::from(text)));
            return;
        }
        let needs_escape = needs_escape(text);
        if needs_escape {
            let literal = text.replace('\\', "\\\\").replace('"', "\\\"");
            self.emit(&format!("{{{{\"{literal}\"}}}}"));
        } else {
            self.emit(text);
        }
    }

    /// The expression for `pipe`'s commands (declared variables are handled by the caller).
    fn pipe(&self, pipe: &Pipe, line: usize) -> Result<String, ParseError> {
        let mut acc: Option<String> = None;
        for command in &pipe.commands {
            acc = Some(self.command(command, acc, line)?);
        }
        acc.ok_or_else(|| self.error(line, "missing value for command"))
    }

    fn command(
        &self,
        command: &Command,
        piped: Option<String>,
        line: usize,
    ) -> Result<String, ParseError> {
        let mut out = String::with_capacity(64 + piped.as_ref().map_or(0, String::len));
        self.command_into(&mut out, command, piped, line)?;
        Ok(out)
    }

    /// Appends the expression for one command (with the value piped into it) to `out`.
    fn command_into(
        &self,
        out: &mut String,
        command: &Command,
        piped: Option<String>,
        line: usize,
    ) -> Result<(), ParseError> {
        let (head, rest) = command
            .args
            .split_first()
            .ok_or_else(|| self.error(line, "empty command"))?;
        let count = rest.len() + usize::from(piped.is_some());
        if let Operand::Function(name) = head {
            if let Some(message) = builtin_arity_error(name, count) {
                push_exec_error(out, &message);
                return Ok(());
            }
            match *name {
                "and" | "or" => {
                    out.push('(');
                    self.arguments(out, rest, piped, &format!(" {name} "), line, None)?;
                    out.push(')');
                }
                "not" => {
                    out.push_str("(not ");
                    self.arguments(out, rest, piped, "", line, None)?;
                    out.push(')');
                }
                _ => {
                    out.push_str("f_");
                    out.push_str(name);
                    out.push('(');
                    let maps = crate::funcs::has_map_param(name).then_some(*name);
                    match int_constants(name, rest) {
                        Some(converted) => {
                            self.arguments(out, &converted, piped, ",", line, maps)?;
                        }
                        None => self.arguments(out, rest, piped, ",", line, maps)?,
                    }
                    out.push(')');
                }
            }
            return Ok(());
        }
        if count > 0
            && let Some(text) = non_function_text(head)
        {
            // Go fails when it executes such a command (not when parsing it), naming the operand.
            push_exec_error(out, &format!("can't give argument to non-function {text}"));
            return Ok(());
        }
        if matches!(head, Operand::Nil) {
            // Go fails when it executes such a command (not when parsing it).
            out.push_str("f_nil()");
            return Ok(());
        }
        if count == 0 {
            self.operand(out, head, line)?;
            return Ok(());
        }
        // A field with arguments is a method call on its parent (`.Files.Get "x"`, `$caps.APIVersions.Has "v"`).
        let (base, path) = match head {
            Operand::Field(path) => (Some(self.dot.as_str()), path),
            Operand::Variable(name, path) => (Some(self.resolve(name, line)?), path),
            Operand::Chain(pipe, path) => {
                out.push('(');
                out.push_str(&self.pipe(pipe, line)?);
                out.push(')');
                (None, path)
            }
            _ => return Err(self.error(line, "can't give argument to non-function")),
        };
        let Some((method, parents)) = path.split_last() else {
            return Err(self.error(line, "can't give argument to non-function"));
        };
        match base {
            Some(base) => self.push_chain(out, base, parents),
            None => push_path(out, parents),
        }
        out.push('.');
        out.push_str(method);
        out.push('(');
        self.arguments(out, rest, piped, ",", line, None)?;
        out.push(')');
        Ok(())
    }

    /// Writes `args` and then the piped value, separated by `separator`. `maps` names the called function when it
    /// has a map parameter: Go refuses a nil taken from a field (`hasKey .Values.missing "x"`) there, where it takes
    /// one from a variable, a parenthesized pipeline or a pipe (which unwrap it), so such a field goes through
    /// `f__map_arg`, which fails on nil.
    fn arguments(
        &self,
        out: &mut String,
        args: &[Operand],
        piped: Option<String>,
        separator: &str,
        line: usize,
        maps: Option<&str>,
    ) -> Result<(), ParseError> {
        for (i, arg) in args.iter().enumerate() {
            if i > 0 {
                out.push_str(separator);
            }
            let checked =
                maps.is_some_and(|f| arg.is_field_chain() && crate::funcs::takes_map(f, i));
            out.push_str(if checked { "f__map_arg(" } else { "" });
            self.operand(out, arg, line)?;
            out.push_str(if checked { ")" } else { "" });
        }
        if let Some(piped) = piped {
            if !args.is_empty() {
                out.push_str(separator);
            }
            out.push_str(&piped);
        }
        Ok(())
    }

    /// Appends `base` followed by the fields of `path`: one `_p<n>` name for a path from the template's data when
    /// aliases are on and every field is a plain name.
    fn push_chain(&self, out: &mut String, base: &str, path: &[&str]) {
        if let Some(aliases) = &self.aliases
            && base == "_d0"
            && !path.is_empty()
            && path.iter().all(|name| is_plain_name(name))
        {
            let mut aliases = aliases.borrow_mut();
            let Aliases { numbers, key } = &mut *aliases;
            // The key is built in a reused buffer and copied only for a new path: most reads repeat a path.
            key.clear();
            for (i, name) in path.iter().enumerate() {
                if i > 0 {
                    key.push('.');
                }
                key.push_str(name);
            }
            let number = match numbers.get(key.as_str()) {
                Some(&number) => number,
                None => {
                    let number = numbers.len();
                    numbers.insert(key.clone(), number);
                    number
                }
            };
            out.push_str(ALIAS_PREFIX);
            push_decimal(out, number);
            return;
        }
        out.push_str(base);
        push_path(out, path);
    }

    fn operand(&self, out: &mut String, operand: &Operand, line: usize) -> Result<(), ParseError> {
        match operand {
            Operand::Field(path) => self.push_chain(out, &self.dot, path),
            Operand::Variable(name, path) => {
                let base = self.resolve(name, line)?;
                // A declared variable holds an unwrapped value (nil gives no value for the whole chain).
                if base.starts_with("_v.") && !path.is_empty() {
                    push_field_chain(out, base, path);
                } else {
                    self.push_chain(out, base, path);
                }
            }
            Operand::Chain(pipe, path) => {
                let base = format!("({})", self.pipe(pipe, line)?);
                if path.is_empty() {
                    out.push_str(&base);
                } else {
                    push_field_chain(out, &base, path);
                }
            }
            Operand::Function(name) => match builtin_arity_error(name, 0) {
                Some(message) => push_exec_error(out, &message),
                None => {
                    out.push_str("f_");
                    out.push_str(name);
                    out.push_str("()");
                }
            },
            Operand::Str(value) => push_string_literal(out, value),
            Operand::Int(value) => {
                if *value < 0 {
                    let _ = write!(out, "({value})");
                } else {
                    let _ = write!(out, "{value}");
                }
            }
            Operand::Float(value) => {
                if !value.is_finite() {
                    return Err(self.error(line, "number out of range"));
                }
                if *value < 0.0 {
                    let _ = write!(out, "({value:?})");
                } else {
                    let _ = write!(out, "{value:?}");
                }
            }
            Operand::Bool(value) => out.push_str(if *value { "true" } else { "false" }),
            Operand::Nil => out.push_str("none"),
        }
        Ok(())
    }
}

/// Whether the value of `pipe` comes straight from a minijinja attribute lookup (`.a.b`, `$.a`, a range variable's
/// field), the one place a field of a non-map leaves minijinja's plain undefined.
fn ends_in_attribute_lookup(pipe: &Pipe) -> bool {
    match pipe.commands.last().map(|command| command.args.as_slice()) {
        Some([Operand::Field(path)]) => !path.is_empty(),
        Some([Operand::Variable(_, path)]) => !path.is_empty(),
        _ => false,
    }
}

/// `args` of a call of `name` with each whole-number float literal in an `int` parameter written as an integer, as
/// Go converts the constant (`trunc 3.0 s`); `None` when there is none (the common case, no copy).
fn int_constants<'s>(name: &str, args: &[Operand<'s>]) -> Option<Vec<Operand<'s>>> {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    let converts = |i: usize, f: f64| {
        f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f) && crate::funcs::takes_int(name, i)
    };
    args.iter()
        .enumerate()
        .any(|(i, arg)| matches!(arg, Operand::Float(f) if converts(i, *f)))
        .then(|| {
            args.iter()
                .enumerate()
                .map(|(i, arg)| match arg {
                    Operand::Float(f) if converts(i, *f) => Operand::Int(*f as i64),
                    other => other.clone(),
                })
                .collect()
        })
}

/// Emitted at the start of each loop body: a call that fails once the render's time is up (it
/// prints nothing), so loops that call no other function still stop.
const TICK: &str = "{{f_tick()}}";

mod emit;

#[cfg(test)]
mod tests;
