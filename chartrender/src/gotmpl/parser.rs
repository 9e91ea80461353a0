//! Go `text/template` parser: pieces from the lexer into a tree of nodes plus named `define`s.

use std::borrow::Cow;
use std::hash::BuildHasher;

use super::ParseError;
use super::lexer::{Piece, Tok};

/// A node of a parsed template body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node<'s> {
    /// Literal text.
    Text { text: &'s str, line: usize },
    /// `{{ pipeline }}`: prints the value unless the pipeline declares or assigns variables.
    Action {
        pipe: Pipe<'s>,
        line: usize,
        source: &'s str,
    },
    /// `if`/`with` (`rebind` = with): condition, body, optional else body.
    Branch {
        rebind: bool,
        pipe: Pipe<'s>,
        body: Vec<Node<'s>>,
        otherwise: Option<Vec<Node<'s>>>,
        line: usize,
        source: &'s str,
    },
    /// `range`: pipeline, body, optional else body.
    Range {
        pipe: Pipe<'s>,
        body: Vec<Node<'s>>,
        otherwise: Option<Vec<Node<'s>>>,
        line: usize,
        source: &'s str,
    },
    /// `template "name" pipeline` (also the call half of `block`).
    Template {
        name: Cow<'s, str>,
        pipe: Option<Pipe<'s>>,
        line: usize,
        source: &'s str,
    },
    /// `break` inside a range.
    Break { line: usize },
    /// `continue` inside a range.
    Continue { line: usize },
}

/// A pipeline: optional variable declaration/assignment and `|`-separated commands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pipe<'s> {
    /// Declared or assigned variable names (without `$`).
    pub(crate) vars: Vec<&'s str>,
    /// `=` rather than `:=`.
    pub(crate) assign: bool,
    /// The commands, in order; each later command receives the previous result as last argument.
    pub(crate) commands: Vec<Command<'s>>,
}

/// One command: a function call, or a single operand (possibly a method call with arguments).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Command<'s> {
    /// First element is the function or operand, the rest are arguments.
    pub(crate) args: Vec<Operand<'s>>,
}

/// An argument or term.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Operand<'s> {
    /// `.a.b` (empty path = `.`).
    Field(Vec<&'s str>),
    /// `$x.a.b` (`$` alone has an empty name).
    Variable(&'s str, Vec<&'s str>),
    /// `(pipeline).a.b`.
    Chain(Box<Pipe<'s>>, Vec<&'s str>),
    /// A function name.
    Function(&'s str),
    /// A string literal.
    Str(Cow<'s, str>),
    /// An integer literal.
    Int(i64),
    /// A floating point literal.
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
    /// `nil`.
    Nil,
}

impl Operand<'_> {
    /// Whether this is a field chain (`.a`, `$.a`, `$x.a`), whose value Go passes on as the `interface {}` it finds.
    pub(crate) fn is_field_chain(&self) -> bool {
        matches!(self, Operand::Field(path) | Operand::Variable(_, path) if !path.is_empty())
    }
}

/// A parsed template file: its body and the templates it defines.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parsed<'s> {
    /// Top-level body.
    pub(crate) body: Vec<Node<'s>>,
    /// `define`/`block` templates in source order.
    pub(crate) defines: Vec<(Cow<'s, str>, Vec<Node<'s>>)>,
}

/// Parses a template; `is_function` says which identifiers are known functions.
pub(crate) fn parse<'s>(
    name: &str,
    source: &'s str,
    is_function: &dyn Fn(&str) -> bool,
) -> Result<Parsed<'s>, ParseError> {
    let (pieces, lex_error) = super::lexer::lex_until_error(name, source);
    let end_line = 1 + super::count_newlines(source);
    let mut parser = Parser {
        name,
        source,
        pieces,
        lex_error,
        pos: 0,
        defines: Vec::new(),
        define_hashes: foldhash::HashSet::default(),
        is_function,
        end_line,
        range_depth: 0,
    };
    let (body, end) = parser.list(0)?;
    match end {
        End::Eof => Ok(Parsed {
            body,
            defines: parser.defines,
        }),
        End::Closed(line) => Err(parser.error(line, "unexpected {{end}}")),
        End::Else(line, ..) => Err(parser.error(line, "unexpected {{else}}")),
    }
}

/// Go's `parse.IsEmptyTree` (Go 1.19): a template body that holds only blank text and comments, which a later
/// definition of the same name replaces and which does not replace an earlier one.
pub(crate) fn is_empty_tree(nodes: &[Node<'_>]) -> bool {
    nodes
        .iter()
        .all(|node| matches!(node, Node::Text { text, .. } if text.trim().is_empty()))
}

/// How a node list ended.
enum End<'s> {
    Eof,
    Closed(usize),
    /// `{{else}}`: its line, the tokens after `else` (e.g. `if x`) and its source (a nested `{{else if}}` branch
    /// is recorded under its own action, where a failure in its pipeline is located).
    Else(usize, Vec<(Tok<'s>, usize)>, &'s str),
}

struct Parser<'a, 's> {
    name: &'a str,
    /// The whole template text, which the tokens borrow from (error texts quote literals as written).
    source: &'s str,
    pieces: Vec<Piece<'s>>,
    /// The lexical error after the last piece, reported when the parser reaches it.
    lex_error: Option<ParseError>,
    pos: usize,
    defines: Vec<(Cow<'s, str>, Vec<Node<'s>>)>,
    /// Hashes of the names in `defines`.
    define_hashes: foldhash::HashSet<u64>,
    is_function: &'a dyn Fn(&str) -> bool,
    end_line: usize,
    range_depth: usize,
}

const MAX_NESTING: usize = 200;

impl<'s> Parser<'_, 's> {
    fn error(&self, line: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            template: self.name.to_string(),
            line,
            message: message.into(),
        }
    }

    /// Parses nodes until `{{end}}`, `{{else}}` or end of input.
    fn list(&mut self, depth: usize) -> Result<(Vec<Node<'s>>, End<'s>), ParseError> {
        if depth > MAX_NESTING {
            return Err(self.error(self.end_line, "control structures nested too deeply"));
        }
        let mut nodes = Vec::new();
        while self.pos < self.pieces.len() {
            // Each piece is visited once: take it instead of cloning its tokens.
            let piece = std::mem::replace(
                &mut self.pieces[self.pos],
                Piece::Comment {
                    line: 0,
                    newlines: 0,
                },
            );
            self.pos += 1;
            match piece {
                Piece::Text { text, line } => nodes.push(Node::Text { text, line }),
                Piece::Comment { .. } => {}
                Piece::Action {
                    tokens,
                    line,
                    source,
                    ..
                } => {
                    if let Some(end) = self.action(tokens, line, source, depth, &mut nodes)? {
                        return Ok((nodes, end));
                    }
                }
            }
        }
        if let Some(error) = self.lex_error.take() {
            return Err(error);
        }
        Ok((nodes, End::Eof))
    }

    /// Handles one action; returns `Some` when it ends the current list.
    fn action(
        &mut self,
        tokens: Vec<(Tok<'s>, usize)>,
        line: usize,
        source: &'s str,
        depth: usize,
        nodes: &mut Vec<Node<'s>>,
    ) -> Result<Option<End<'s>>, ParseError> {
        let keyword = match tokens.first() {
            Some((Tok::Ident(word), _)) => *word,
            None => return Err(self.error(line, "missing value for command")),
            _ => "",
        };
        let is_keyword = matches!(
            keyword,
            "end"
                | "else"
                | "if"
                | "with"
                | "range"
                | "define"
                | "block"
                | "template"
                | "break"
                | "continue"
        );
        let rest = if is_keyword {
            tokens.get(1..).unwrap_or_default()
        } else {
            &[]
        };
        match keyword {
            "end" => {
                self.expect_empty(rest, line, "end")?;
                Ok(Some(End::Closed(line)))
            }
            "else" => Ok(Some(End::Else(line, rest.to_vec(), source))),
            "if" | "with" => {
                let node = self.branch(keyword == "with", rest, line, source, depth)?;
                nodes.push(node);
                Ok(None)
            }
            "range" => {
                let pipe = self.pipeline(rest, line, true)?;
                self.range_depth += 1;
                let (body, end) = self.list(depth + 1)?;
                // Go leaves the range before its `else` list: `{{break}}` there belongs to an enclosing range.
                self.range_depth -= 1;
                let otherwise = match end {
                    End::Closed(_) => None,
                    End::Else(else_line, tokens, _) => {
                        self.expect_empty(&tokens, else_line, "else")?;
                        Some(self.expect_end(depth)?)
                    }
                    End::Eof => return Err(self.error(self.end_line, "unexpected EOF")),
                };
                nodes.push(Node::Range {
                    pipe,
                    body,
                    otherwise,
                    line,
                    source,
                });
                Ok(None)
            }
            "define" => {
                let name = self.template_name(rest, line, "define")?;
                if rest.len() != 1 {
                    return Err(self.error(line, "unexpected arguments in define clause"));
                }
                if depth > 0 {
                    return Err(self.error(line, "unexpected define inside a control structure"));
                }
                let (body, end_line) = self.expect_end_at(depth)?;
                self.add_define(name, body, end_line)?;
                Ok(None)
            }
            "block" => {
                let name = self.template_name(rest, line, "block")?;
                let pipe = if rest.len() > 1 {
                    Some(self.pipeline(&rest[1..], line, false)?)
                } else {
                    None
                };
                let (body, end_line) = self.expect_end_at(depth)?;
                self.add_define(name.clone(), body, end_line)?;
                nodes.push(Node::Template {
                    name,
                    pipe,
                    line,
                    source,
                });
                Ok(None)
            }
            "template" => {
                let name = self.template_name(rest, line, "template")?;
                let pipe = if rest.len() > 1 {
                    Some(self.pipeline(&rest[1..], line, false)?)
                } else {
                    None
                };
                nodes.push(Node::Template {
                    name,
                    pipe,
                    line,
                    source,
                });
                Ok(None)
            }
            "break" | "continue" => {
                self.expect_empty(rest, line, keyword)?;
                if self.range_depth == 0 {
                    return Err(
                        self.error(line, format!("{{{{{keyword}}}}} outside {{{{range}}}}"))
                    );
                }
                nodes.push(if keyword == "break" {
                    Node::Break { line }
                } else {
                    Node::Continue { line }
                });
                Ok(None)
            }
            _ => {
                let pipe = self.pipeline(&tokens, line, false)?;
                nodes.push(Node::Action { pipe, line, source });
                Ok(None)
            }
        }
    }

    fn branch(
        &mut self,
        rebind: bool,
        tokens: &[(Tok<'s>, usize)],
        line: usize,
        source: &'s str,
        depth: usize,
    ) -> Result<Node<'s>, ParseError> {
        let pipe = self.pipeline(tokens, line, false)?;
        let (body, end) = self.list(depth + 1)?;
        let otherwise = match end {
            End::Closed(_) => None,
            End::Eof => return Err(self.error(self.end_line, "unexpected EOF")),
            End::Else(else_line, tokens, else_source) => match tokens.first() {
                None => Some(self.expect_end(depth)?),
                // `{{else if …}}`: a nested branch sharing our `{{end}}`. Go 1.19's parser, which Helm v3.11.3 is
                // built with, knows no `{{else with …}}` (Go 1.23 added it).
                Some((Tok::Ident("if"), _)) => {
                    let nested = self.branch(false, &tokens[1..], else_line, else_source, depth)?;
                    Some(vec![nested])
                }
                Some((token, _)) => {
                    return Err(
                        self.error(else_line, format!("unexpected {} in else", go_item(token)))
                    );
                }
            },
        };
        Ok(Node::Branch {
            rebind,
            pipe,
            body,
            otherwise,
            line,
            source,
        })
    }

    fn expect_end(&mut self, depth: usize) -> Result<Vec<Node<'s>>, ParseError> {
        self.expect_end_at(depth).map(|(body, _)| body)
    }

    /// [`Self::expect_end`] with the line of the closing `{{end}}`.
    fn expect_end_at(&mut self, depth: usize) -> Result<(Vec<Node<'s>>, usize), ParseError> {
        let (body, end) = self.list(depth + 1)?;
        match end {
            End::Closed(line) => Ok((body, line)),
            End::Else(line, ..) => Err(self.error(line, "unexpected {{else}}")),
            End::Eof => Err(self.error(self.end_line, "unexpected EOF")),
        }
    }

    /// Adds a `define`/`block` body as Go's parser does within one file: a name defined before by an empty body
    /// ([`is_empty_tree`]) takes the new one, an empty body leaves an earlier one in place, and a second body that
    /// is not empty is an error at the line of its `{{end}}`.
    fn add_define(
        &mut self,
        name: Cow<'s, str>,
        body: Vec<Node<'s>>,
        end_line: usize,
    ) -> Result<(), ParseError> {
        // A set of the names' hashes spares the search for a name not seen before (almost every one).
        let hash = foldhash::fast::FixedState::default().hash_one(name.as_ref());
        let index = if self.define_hashes.insert(hash) {
            None
        } else {
            self.defines.iter().position(|(known, _)| *known == name)
        };
        let Some(index) = index else {
            self.defines.push((name, body));
            return Ok(());
        };
        if is_empty_tree(&self.defines[index].1) {
            self.defines[index].1 = body;
        } else if !is_empty_tree(&body) {
            return Err(self.error(
                end_line,
                format!("template: multiple definition of template {name:?}"),
            ));
        }
        Ok(())
    }

    fn expect_empty(
        &self,
        tokens: &[(Tok<'s>, usize)],
        line: usize,
        keyword: &str,
    ) -> Result<(), ParseError> {
        if tokens.is_empty() {
            Ok(())
        } else {
            Err(self.error(line, format!("unexpected tokens in {{{{{keyword}}}}}")))
        }
    }

    fn template_name(
        &self,
        tokens: &[(Tok<'s>, usize)],
        line: usize,
        keyword: &str,
    ) -> Result<Cow<'s, str>, ParseError> {
        match tokens.first() {
            Some((Tok::Str(name), _)) => Ok(name.clone()),
            _ => Err(self.error(
                line,
                format!("unexpected token in {keyword} clause, expected a quoted name"),
            )),
        }
    }

    /// Parses a pipeline, with an optional `$x :=`, `$x =` or (in range) `$k, $v :=` prefix.
    fn pipeline(
        &self,
        tokens: &[(Tok<'s>, usize)],
        line: usize,
        in_range: bool,
    ) -> Result<Pipe<'s>, ParseError> {
        let mut vars = Vec::new();
        let mut assign = false;
        let mut rest = tokens;
        if let Some((Tok::Variable(first), _)) = tokens.first() {
            match tokens.get(1).map(|t| &t.0) {
                Some(Tok::Declare) | Some(Tok::Assign) => {
                    assign = tokens[1].0 == Tok::Assign;
                    vars.push(*first);
                    rest = &tokens[2..];
                }
                Some(Tok::Comma) if in_range => match (tokens.get(2), tokens.get(3)) {
                    (Some((Tok::Variable(second), _)), Some((Tok::Declare | Tok::Assign, _))) => {
                        assign = tokens[3].0 == Tok::Assign;
                        vars.push(*first);
                        vars.push(*second);
                        rest = &tokens[4..];
                    }
                    _ => return Err(self.error(line, "too many declarations in command")),
                },
                _ => {}
            }
        }
        if vars.iter().any(|v| v.is_empty()) {
            return Err(self.error(line, "cannot assign to $"));
        }
        let mut position = 0;
        let commands = self.commands(rest, &mut position, line, 0)?;
        if position < rest.len() {
            return Err(self.error(
                line,
                format!("unexpected {} in operand", describe(&rest[position].0)),
            ));
        }
        if commands.is_empty() {
            return Err(self.error(line, "missing value for command"));
        }
        Ok(Pipe {
            vars,
            assign,
            commands,
        })
    }

    /// Parses `|`-separated commands until `)` or the end of the tokens.
    fn commands(
        &self,
        tokens: &[(Tok<'s>, usize)],
        pos: &mut usize,
        line: usize,
        depth: usize,
    ) -> Result<Vec<Command<'s>>, ParseError> {
        if depth > MAX_NESTING {
            return Err(self.error(line, "parenthesised expressions nested too deeply"));
        }
        let mut commands = Vec::new();
        loop {
            let mut args = Vec::new();
            while let Some((tok, tok_line)) = tokens.get(*pos) {
                if matches!(tok, Tok::Pipe | Tok::RightParen) {
                    break;
                }
                args.push(self.operand(tokens, pos, *tok_line, depth)?);
            }
            if args.is_empty() {
                return Err(self.error(line, "missing value for command"));
            }
            // Go's `checkPipeline`: only the first command may start with a constant or `.`. (A constant given
            // arguments in the first is Go's error when it runs: the translation fails there.)
            let constant_or_dot = match &args[0] {
                Operand::Bool(_)
                | Operand::Nil
                | Operand::Int(_)
                | Operand::Float(_)
                | Operand::Str(_) => true,
                Operand::Field(path) => path.is_empty(),
                _ => false,
            };
            if !commands.is_empty() && constant_or_dot {
                return Err(self.error(
                    line,
                    format!(
                        "non executable command in pipeline stage {}",
                        commands.len() + 1
                    ),
                ));
            }
            commands.push(Command { args });
            match tokens.get(*pos) {
                Some((Tok::Pipe, _)) => *pos += 1,
                _ => return Ok(commands),
            }
        }
    }

    fn operand(
        &self,
        tokens: &[(Tok<'s>, usize)],
        pos: &mut usize,
        line: usize,
        depth: usize,
    ) -> Result<Operand<'s>, ParseError> {
        let (tok, _) = &tokens[*pos];
        *pos += 1;
        let term = match tok {
            Tok::Dot => Operand::Field(Vec::new()),
            Tok::Field(name, _) => {
                return Ok(Operand::Field(fields_after(Some(*name), tokens, pos)));
            }
            Tok::Variable(name) => {
                let path = fields_after(None, tokens, pos);
                return Ok(Operand::Variable(name, path));
            }
            Tok::LeftParen => {
                let commands = self.commands(tokens, pos, line, depth + 1)?;
                match tokens.get(*pos) {
                    Some((Tok::RightParen, _)) => *pos += 1,
                    _ => return Err(self.error(line, "unclosed left paren")),
                }
                let path = fields_after(None, tokens, pos);
                return Ok(Operand::Chain(
                    Box::new(Pipe {
                        vars: Vec::new(),
                        assign: false,
                        commands,
                    }),
                    path,
                ));
            }
            Tok::Ident(word) => match *word {
                "true" => Operand::Bool(true),
                "false" => Operand::Bool(false),
                "nil" => Operand::Nil,
                // A function followed by fields (`list.a`) is a chain on its result, as Go parses it.
                name if (self.is_function)(name) => {
                    let path = fields_after(None, tokens, pos);
                    if path.is_empty() {
                        Operand::Function(name)
                    } else {
                        let call = Command {
                            args: vec![Operand::Function(name)],
                        };
                        return Ok(Operand::Chain(
                            Box::new(Pipe {
                                vars: Vec::new(),
                                assign: false,
                                commands: vec![call],
                            }),
                            path,
                        ));
                    }
                }
                name => return Err(self.error(line, format!("function {name:?} not defined"))),
            },
            Tok::Str(value) => Operand::Str(value.clone()),
            Tok::Char(code) => Operand::Int(i64::from(*code)),
            Tok::Number(text) => parse_number(text)
                .ok_or_else(|| self.error(line, format!("bad number syntax: {text:?}")))?,
            other => {
                return Err(self.error(line, format!("unexpected {} in operand", describe(other))));
            }
        };
        if let Some((Tok::Field(field, true), _)) = tokens.get(*pos) {
            // Go quotes the term as written: a string or character literal with its own quotes and escapes.
            let text = match tok {
                Tok::Ident(word) | Tok::Number(word) => (*word).to_string(),
                Tok::Str(value) => literal_before(self.source, field)
                    .map_or_else(|| crate::funcs::printf::quote_go(value), str::to_string),
                Tok::Char(_) => literal_before(self.source, field)
                    .unwrap_or_default()
                    .to_string(),
                Tok::Dot => ".".to_string(),
                _ => String::new(),
            };
            let text = crate::funcs::printf::quote_go(&text);
            return Err(self.error(line, format!("unexpected . after term {text}")));
        }
        Ok(term)
    }
}

/// `first` (if any) and the names of the fields attached at `pos` (`.a.b` after a term), which are consumed;
/// counted first, so the path is allocated once at its size (growing it was a tenth of parsing a chart).
fn fields_after<'s>(
    first: Option<&'s str>,
    tokens: &[(Tok<'s>, usize)],
    pos: &mut usize,
) -> Vec<&'s str> {
    let attached = tokens[*pos..]
        .iter()
        .take_while(|(tok, _)| matches!(tok, Tok::Field(_, true)));
    let mut path = Vec::with_capacity(attached.clone().count() + usize::from(first.is_some()));
    path.extend(first);
    path.extend(attached.filter_map(|(tok, _)| match tok {
        Tok::Field(name, _) => Some(*name),
        _ => None,
    }));
    *pos += path.len() - usize::from(first.is_some());
    path
}

/// The string or character literal of `source` that ends right before the `.` of the field name `field` (a
/// slice of `source`), as written: `"a\"b"`, `` `raw` ``, `'c'`. A quote inside a `"` or `'` literal is always
/// escaped, so the opening one is the first quote before the end that follows an even run of backslashes.
fn literal_before<'s>(source: &'s str, field: &str) -> Option<&'s str> {
    let offset = (field.as_ptr() as usize).checked_sub(source.as_ptr() as usize)?;
    let end = offset
        .checked_sub(1)
        .filter(|&dot| source.as_bytes().get(dot) == Some(&b'.'))?;
    let bytes = source.as_bytes();
    let quote = *bytes.get(end.checked_sub(1)?)?;
    if !matches!(quote, b'"' | b'`' | b'\'') {
        return None;
    }
    let mut at = end - 1;
    loop {
        at = at.checked_sub(1)?;
        if bytes[at] != quote {
            continue;
        }
        let backslashes = bytes[..at]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if quote == b'`' || backslashes % 2 == 0 {
            return source.get(at..end);
        }
    }
}

fn describe(tok: &Tok<'_>) -> String {
    match tok {
        Tok::Declare => "\":=\"".into(),
        Tok::Assign => "\"=\"".into(),
        Tok::Comma => "\",\"".into(),
        Tok::Pipe => "\"|\"".into(),
        Tok::LeftParen => "\"(\"".into(),
        Tok::RightParen => "\")\"".into(),
        Tok::Dot => "\".\"".into(),
        Tok::Field(name, _) => format!("field .{name}"),
        Tok::Variable(name) => format!("variable ${name}"),
        Tok::Ident(name) => format!("identifier {name:?}"),
        Tok::Str(value) => format!("string {value:?}"),
        Tok::Number(text) => format!("number {text}"),
        Tok::Char(_) => "character constant".into(),
    }
}

/// A token as Go's parser prints an unexpected item: a keyword in angle brackets (`<with>`), anything else as its
/// source text quoted, cut after 10 characters (`"abcdefghij"...`).
fn go_item(tok: &Tok<'_>) -> String {
    const KEYWORDS: &[&str] = &[
        "block", "break", "continue", "define", "else", "end", "if", "nil", "range", "template",
        "with",
    ];
    let text = match tok {
        Tok::Ident(word) if KEYWORDS.contains(word) => return format!("<{word}>"),
        Tok::Dot => return "<.>".into(),
        Tok::Ident(text) | Tok::Number(text) => (*text).to_string(),
        Tok::Field(name, _) => format!(".{name}"),
        Tok::Variable(name) => format!("${name}"),
        Tok::Str(value) => format!("{value:?}"),
        Tok::Char(code) => char::from_u32(*code).map_or_else(String::new, |c| format!("{c:?}")),
        Tok::Declare => ":=".into(),
        Tok::Assign => "=".into(),
        Tok::Comma => ",".into(),
        Tok::Pipe => "|".into(),
        Tok::LeftParen => "(".into(),
        Tok::RightParen => ")".into(),
    };
    if text.chars().count() > 10 {
        let cut: String = text.chars().take(10).collect();
        format!("{cut:?}...")
    } else {
        format!("{text:?}")
    }
}

/// Parses a Go number literal: decimal/hex/octal/binary integers with `_`, or a float.
pub(crate) fn parse_number<'s>(text: &str) -> Option<Operand<'s>> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let clean = digits.replace('_', "");
    let lower = clean.to_ascii_lowercase();
    let integer = if let Some(hex) = lower.strip_prefix("0x") {
        if hex.contains('p') || hex.contains('.') {
            None
        } else {
            i64::from_str_radix(hex, 16).ok()
        }
    } else if let Some(bin) = lower.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok()
    } else if let Some(oct) = lower.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()
    } else if lower.len() > 1 && lower.starts_with('0') && lower.bytes().all(|b| b.is_ascii_digit())
    {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else if lower.bytes().all(|b| b.is_ascii_digit()) {
        lower.parse::<i64>().ok()
    } else {
        None
    };
    if let Some(value) = integer {
        return Some(Operand::Int(if negative { -value } else { value }));
    }
    if let Some(hex) = lower.strip_prefix("0x") {
        // A hex literal that is no integer is a float only with a binary exponent (`0x1.8p1`).
        let value = super::hexfloat::parse(hex)?;
        return Some(Operand::Float(if negative { -value } else { value }));
    }
    if lower
        .bytes()
        .any(|b| !(b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'+' || b == b'-'))
    {
        return None;
    }
    // Like Go's `idealConstant`: a literal written with `.` or an exponent is a float (`1e3` is 1000.0).
    let value: f64 = lower.parse().ok()?;
    Some(Operand::Float(if negative { -value } else { value }))
}

#[cfg(test)]
mod tests;
