//! The case generator of the differential test: random values (every YAML shape, YAML 1.1 scalars and keys) and
//! Go templates over them that use the Sprig/Helm function set and Go's template syntax.
//!
//! Generation is typed: every expression is built for a Go type (string, int, float, bool, list, dict or any),
//! and value paths are drawn from the case's own values by their kind, so most cases render and the ones that
//! fail do so for a reason both engines must agree on. Randomness comes from proptest's `TestRng` (seeded), so
//! a case is reproduced by its seed.

#[path = "expressions.rs"]
mod expressions;

use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// One generated case: the values (YAML text under the case's key) and the template file's text.
#[derive(Debug, Clone)]
pub struct Case {
    /// The key under `.Values` that holds this case's values (`c<index>`).
    pub key: String,
    /// YAML text of the values file fragment, `<key>:` and the case's values indented under it.
    pub values_yaml: String,
    /// The template text (defines included).
    pub template: String,
}

/// A value of the generated values tree.
#[derive(Debug, Clone)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A plain YAML scalar written as is (YAML 1.1 booleans, octal, hex, dates …): its kind is left open.
    Raw(&'static str),
    List(Vec<Node>),
    Map(Vec<(String, Node)>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Str,
    Int,
    Float,
    Bool,
    List,
    Dict,
    Any,
}

const KEYS: &[&str] = &[
    "a", "b", "c", "name", "items", "enabled", "port", "image", "x-y", "Key", "y", "n", "on",
    "off", "yes", "no", "1", "nested", "true",
];

const WORDS: &[&str] = &[
    "hello",
    "Hello World",
    "HTTPServer",
    "_complex__case_",
    "camelCaseString",
    "snake_case_word",
    "kebab-case-word",
    "a,b,c",
    "1.2.3",
    "v1.20.0",
    "",
    "  spaced  ",
    "ünïcödé",
    "x-y_z",
    "foo.bar/baz.txt",
    "line1\nline2",
    "42",
    "3.5",
    "true",
    "null",
    "{a: 1}",
    "[1, 2]",
    "quote\"d",
    "tab\tbed",
    "ab",
    "100",
    "1m30s",
    "<b>&'",
];

const RAW_SCALARS: &[&str] = &[
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "True",
    "FALSE",
    "~",
    "1e3",
    ".5",
    "+1",
    "2001-12-14",
    "-0",
    "1.0",
    "0.1",
    "-7",
    "9007199254740993",
    // YAML 1.1 numbers (go-yaml v2): underscores, leading-zero octal, base prefixes in either case.
    "0x1F",
    "0o17",
    "0X1F",
    "0B11",
    "1_000",
    "+12",
    "0b101",
    "017",
    "08",
    "1_0.5",
    // Sexagesimal is a string in Helm's parser too.
    "1:30",
    // YAML 1.1 scalars inside one-line flow collections.
    "[017, 1_000, y]",
    "{on: 0X1F, a: [no]}",
];

/// Generates cases from a seed.
pub struct Generator {
    rng: TestRng,
}

impl Generator {
    /// A generator whose cases are fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        Self {
            rng: TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
        }
    }

    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// The `index`-th case.
    pub fn case(&mut self, index: usize) -> Case {
        let key = format!("c{index}");
        let root = self.node_map(3);
        let mut values_yaml = format!("{key}:");
        emit_yaml(&root, 1, &mut values_yaml);
        values_yaml.push('\n');
        let mut paths = Vec::new();
        collect_paths(&root, &format!("$.Values.{key}"), &mut paths);
        let mut scope = Scope {
            key: key.clone(),
            paths,
            vars: Vec::new(),
            // The root object itself prints differently in Go (pointers, structs): `.` only inside with/range.
            dot: None,
            defines: Vec::new(),
            in_range: false,
            depth: 0,
        };
        let mut template = String::new();
        let defines = self.below(3);
        let mut define_texts = Vec::new();
        for d in 0..defines {
            let name = format!("{key}.d{d}");
            let mut inner = Scope {
                vars: Vec::new(),
                defines: scope.defines.clone(),
                in_range: false,
                depth: 1,
                ..scope.clone()
            };
            let body = self.body(&mut inner, 3);
            define_texts.push(format!(
                "{{{{- define \"{name}\" }}}}{body}{{{{- end }}}}\n"
            ));
            scope.defines.push(name);
        }
        let body = self.body(&mut scope, 6);
        template.push_str(&body);
        for text in define_texts {
            template.push_str(&text);
        }
        Case {
            key,
            values_yaml,
            template,
        }
    }

    fn node(&mut self, depth: usize) -> Node {
        let choice = if depth == 0 {
            self.below(7)
        } else {
            self.below(10)
        };
        match choice {
            0 => Node::Null,
            1 => Node::Bool(self.chance(50)),
            2 => Node::Int(self.pick_int()),
            3 => Node::Float(
                *[0.5, 1.25, -3.75, 123.233, 1e21, 2.0, 0.1, 1e-7]
                    .get(self.below(8))
                    .unwrap_or(&0.5),
            ),
            4 | 5 => Node::Str(self.pick(WORDS).to_string()),
            6 => Node::Raw(self.pick(RAW_SCALARS)),
            7 | 8 => self.node_map(depth - 1),
            _ => {
                let n = self.below(4);
                Node::List((0..n).map(|_| self.node(depth - 1)).collect())
            }
        }
    }

    fn pick_int(&mut self) -> i64 {
        *[0i64, 1, 2, 3, -5, 42, 100, 65536, 9_007_199_254_740_993, -1]
            .get(self.below(10))
            .unwrap_or(&1)
    }

    fn node_map(&mut self, depth: usize) -> Node {
        let n = self.below(5);
        let mut entries: Vec<(String, Node)> = Vec::new();
        for _ in 0..n {
            let key = self.pick(KEYS).to_string();
            if entries.iter().any(|(k, _)| *k == key) {
                continue;
            }
            let value = self.node(depth);
            entries.push((key, value));
        }
        Node::Map(entries)
    }

    /// A sequence of template pieces.
    fn body(&mut self, scope: &mut Scope, budget: usize) -> String {
        let n = 1 + self.below(budget.max(1));
        let mut out = String::new();
        let saved = scope.vars.len();
        for _ in 0..n {
            let piece = self.piece(scope);
            out.push_str(&piece);
        }
        scope.vars.truncate(saved);
        out
    }

    fn open(&mut self) -> &'static str {
        if self.chance(25) { "{{- " } else { "{{ " }
    }

    fn close(&mut self) -> &'static str {
        if self.chance(25) { " -}}" } else { " }}" }
    }

    fn piece(&mut self, scope: &mut Scope) -> String {
        let nested = scope.depth < 3;
        let choice = self.below(if nested { 16 } else { 9 });
        match choice {
            0 => self
                .pick(&["\n", "a: ", "  ", "- x\n", "# note\n", "k: v\n", " "])
                .to_string(),
            1..=4 => {
                let (o, c) = (self.open(), self.close());
                let e = self.output(scope);
                format!("{o}{e}{c}\n")
            }
            5 => {
                let kind = self.any_kind();
                let e = self.expr(kind, scope, 2);
                let name = format!("$v{}", scope.vars.len());
                scope.vars.push((name.clone(), kind));
                let (o, c) = (self.open(), self.close());
                format!("{o}{name} := {e}{c}")
            }
            6 => {
                // Only `$v…` variables: assigning to a range variable is compared elsewhere (it must not move `.`).
                if let Some((name, kind)) = scope
                    .vars
                    .iter()
                    .rev()
                    .find(|(n, _)| n.starts_with("$v"))
                    .cloned()
                {
                    let e = self.expr(kind, scope, 2);
                    format!("{{{{ {name} = {e} }}}}")
                } else {
                    "{{/* nothing to assign */}}".to_string()
                }
            }
            7 => {
                if let Some(name) = scope.defines.last().cloned() {
                    if self.chance(50) {
                        format!("{{{{ include \"{name}\" $ | nindent {} }}}}", self.below(4))
                    } else {
                        format!("{{{{ template \"{name}\" $ }}}}")
                    }
                } else if scope.in_range && self.chance(50) {
                    let cond = self.expr(Kind::Bool, scope, 1);
                    let word = self.pick(&["continue", "break"]);
                    format!("{{{{ if {cond} }}}}{{{{ {word} }}}}{{{{ end }}}}")
                } else {
                    // Comments, with the trim markers Gardener's charts put around them.
                    self.pick(&[
                        "{{/* a comment */}}",
                        "{{- /* trims before */}}",
                        "{{/* trims after */ -}}",
                        "{{- /* trims\nboth */ -}}",
                    ])
                    .to_string()
                }
            }
            8 => {
                let inner = self.tpl_text(scope);
                format!("{{{{ tpl {} $ }}}}", go_quote(&inner))
            }
            9 | 10 => self.if_block(scope),
            11 => self.with_block(scope),
            12 => self.construct(scope),
            _ => self.range_block(scope),
        }
    }

    /// Helm-specific actions Gardener's charts use: `include` into pipelines, `tpl` of an `include`, `block`,
    /// `required`, `lookup` (empty offline), the root objects' methods.
    fn construct(&mut self, scope: &mut Scope) -> String {
        let (o, c) = (self.open(), self.close());
        match self.below(6) {
            0 => match scope.defines.first().cloned() {
                Some(name) => {
                    let tail = self.pick(&[
                        "| indent 2 | trim",
                        "| quote",
                        "| trimSuffix \"\\n\" | upper",
                        "| sha256sum | trunc 8",
                        "| fromYaml | toJson",
                    ]);
                    format!("{o}include \"{name}\" $ {tail}{c}\n")
                }
                None => format!("{o}\"no define\" | quote{c}"),
            },
            // Helm leaves the calling file's defines out of a tpl string's templates, unless the data names
            // another file: mostly that, so most of these cases render.
            1 => match scope.defines.last().cloned() {
                Some(name) => {
                    let data = if self.chance(75) {
                        "(merge (dict \"Template\" (dict \"Name\" \"other.yaml\" \"BasePath\" \"t\")) $)"
                    } else {
                        "$"
                    };
                    format!(
                        "{o}tpl {} {data} | nindent 2{c}",
                        go_quote(&format!("{{{{ include \"{name}\" . }}}}"))
                    )
                }
                None => format!("{o}tpl \"{{{{ .Release.Name }}}}\" ${c}"),
            },
            2 => {
                // A block defines its template for the whole chart: a name of this case's own.
                // Its body is a template of its own: no outer variables, and `.` is the root.
                let name = format!("{}.block{}", scope.key, self.below(1000));
                let mut inner = Scope {
                    vars: Vec::new(),
                    dot: None,
                    in_range: false,
                    depth: 3,
                    ..scope.clone()
                };
                let e = self.output(&mut inner);
                format!("{{{{ block \"{name}\" $ }}}}[{{{{ {e} }}}}]{{{{ end }}}}")
            }
            3 => {
                let e = self.expr(Kind::Any, scope, 2);
                format!(
                    "{o}required \"a value is needed\" {} | toJson{c}",
                    paren(&e)
                )
            }
            4 => {
                let (api, kind, ns, name) = match self.below(3) {
                    0 => ("v1", "Secret", "ns", "s"),
                    1 => ("apps/v1", "Deployment", "", ""),
                    _ => ("v1", "ConfigMap", "ns", ""),
                };
                let tail = self.pick(&["| toJson", "| len", ".data | toJson", "| kindOf"]);
                if let Some(field) = tail.strip_prefix('.') {
                    format!("{o}(lookup \"{api}\" \"{kind}\" \"{ns}\" \"{name}\").{field}{c}")
                } else {
                    format!("{o}lookup \"{api}\" \"{kind}\" \"{ns}\" \"{name}\" {tail}{c}")
                }
            }
            _ => {
                let call = self.pick(&[
                    "$.Capabilities.APIVersions.Has \"apps/v1\"",
                    "$.Capabilities.APIVersions.Has \"policy/v1beta1/PodDisruptionBudget\"",
                    "$.Capabilities.KubeVersion.Version",
                    "$.Files.Get \"missing.txt\" | quote",
                    "$.Files.Glob \"*.json\" | len",
                    "($.Files.Glob \"files/*\").AsConfig",
                    "$.Files.Lines \"x\" | len",
                    "$.Template.BasePath",
                    "semverCompare \">=1.20-0\" $.Capabilities.KubeVersion.GitVersion",
                ]);
                format!("{o}{call}{c}")
            }
        }
    }

    fn if_block(&mut self, scope: &mut Scope) -> String {
        let cond = if self.chance(50) {
            self.expr(Kind::Bool, scope, 2)
        } else {
            self.expr(Kind::Any, scope, 2)
        };
        scope.depth += 1;
        let then = self.body(scope, 3);
        let mut out = format!("{}if {cond}{}{then}", self.open(), self.close());
        if self.chance(30) {
            let cond2 = self.expr(Kind::Bool, scope, 1);
            let b = self.body(scope, 2);
            out.push_str(&format!("{{{{ else if {cond2} }}}}{b}"));
        }
        if self.chance(50) {
            let b = self.body(scope, 2);
            out.push_str(&format!("{{{{- else }}}}{b}"));
        }
        scope.depth -= 1;
        out.push_str(&format!("{}end{}", self.open(), self.close()));
        out
    }

    fn with_block(&mut self, scope: &mut Scope) -> String {
        let kind = self.any_kind();
        let value = self.expr(kind, scope, 2);
        let saved = scope.dot;
        scope.dot = Some(kind);
        scope.depth += 1;
        let body = self.body(scope, 3);
        scope.dot = saved;
        let mut out = format!("{{{{ with {value} }}}}{body}");
        if self.chance(40) {
            let b = self.body(scope, 2);
            out.push_str(&format!("{{{{ else }}}}{b}"));
        }
        scope.depth -= 1;
        out.push_str("{{ end }}");
        out
    }

    fn range_block(&mut self, scope: &mut Scope) -> String {
        let over_dict = self.chance(40);
        let value = self.expr(if over_dict { Kind::Dict } else { Kind::List }, scope, 2);
        let saved_dot = scope.dot;
        let saved_range = scope.in_range;
        let saved_vars = scope.vars.len();
        let n = scope.vars.len();
        let (k, v) = (format!("$k{n}"), format!("$e{n}"));
        let head = match self.below(3) {
            0 => format!("range {value}"),
            1 => {
                scope.vars.push((v.clone(), Kind::Any));
                format!("range {v} := {value}")
            }
            _ => {
                scope
                    .vars
                    .push((k.clone(), if over_dict { Kind::Str } else { Kind::Int }));
                scope.vars.push((v.clone(), Kind::Any));
                format!("range {k}, {v} := {value}")
            }
        };
        scope.dot = Some(Kind::Any);
        scope.in_range = true;
        scope.depth += 1;
        let body = self.body(scope, 3);
        scope.dot = saved_dot;
        scope.in_range = saved_range;
        scope.vars.truncate(saved_vars);
        let mut out = format!("{}{head}{}{body}", self.open(), self.close());
        if self.chance(30) {
            let b = self.body(scope, 2);
            out.push_str(&format!("{{{{ else }}}}{b}"));
        }
        scope.depth -= 1;
        out.push_str(&format!("{}end{}", self.open(), self.close()));
        out
    }

    /// A template text for `tpl`: text around a few output actions over the root.
    fn tpl_text(&mut self, scope: &mut Scope) -> String {
        let mut inner_scope = Scope {
            vars: Vec::new(),
            dot: None,
            defines: Vec::new(),
            in_range: false,
            depth: 3,
            ..scope.clone()
        };
        let e = self.output(&mut inner_scope);
        format!("x-{{{{ {e} }}}}-y")
    }

    /// A kind whose Go type is the same whatever expression produced it (no []string/[]int lists).
    fn reported_kind(&mut self) -> Kind {
        [Kind::Str, Kind::Int, Kind::Float, Kind::Bool, Kind::Dict][self.below(5)]
    }

    fn any_kind(&mut self) -> Kind {
        [
            Kind::Str,
            Kind::Int,
            Kind::Float,
            Kind::Bool,
            Kind::List,
            Kind::Dict,
            Kind::Any,
        ][self.below(7)]
    }

    /// What an output action prints: any expression, often through an encoder or formatter.
    fn output(&mut self, scope: &mut Scope) -> String {
        let kind = self.any_kind();
        let e = self.expr(kind, scope, 3);
        let reported = self.reported_kind();
        let r = self.expr(reported, scope, 3);
        match self.below(12) {
            0 => format!("{e} | toYaml"),
            1 => format!("toJson {}", paren(&e)),
            2 => format!("{e} | toPrettyJson"),
            3 => format!(
                "printf \"%v|%d|%s|%q|%T\" {p} {p} {p} {p} {p}",
                p = paren(&r)
            ),
            4 => format!("{e} | quote"),
            5 => format!("kindOf {}", paren(&r)),
            6 => format!("typeOf {}", paren(&r)),
            7 => format!("toYaml {} | nindent 2", paren(&e)),
            8 => format!("{e} | toString | b64enc"),
            _ => e,
        }
    }

    /// An expression of Go type `kind`, nested at most `depth` calls deep.
    fn expr(&mut self, kind: Kind, scope: &mut Scope, depth: usize) -> String {
        if depth == 0 || self.chance(30) {
            return self.leaf(kind, scope);
        }
        let d = depth - 1;
        match kind {
            Kind::Str => self.str_expr(scope, d),
            Kind::Int => self.int_expr(scope, d),
            Kind::Float => self.float_expr(scope, d),
            Kind::Bool => self.bool_expr(scope, d),
            Kind::List => self.list_expr(scope, d),
            Kind::Dict => self.dict_expr(scope, d),
            Kind::Any => self.any_expr(scope, d),
        }
    }

    fn arg(&mut self, kind: Kind, scope: &mut Scope, depth: usize) -> String {
        let e = self.expr(kind, scope, depth);
        paren(&e)
    }

    fn leaf(&mut self, kind: Kind, scope: &mut Scope) -> String {
        // A variable or a value path of that kind, else a literal.
        if self.chance(35) {
            let vars: Vec<String> = scope
                .vars
                .iter()
                .filter(|(_, k)| *k == kind || kind == Kind::Any)
                .map(|(n, _)| n.clone())
                .collect();
            if !vars.is_empty() {
                return vars[self.below(vars.len())].clone();
            }
        }
        if self.chance(50) {
            let paths: Vec<String> = scope
                .paths
                .iter()
                .filter(|(_, k)| *k == kind || kind == Kind::Any)
                .map(|(p, _)| p.clone())
                .collect();
            if !paths.is_empty() {
                return paths[self.below(paths.len())].clone();
            }
        }
        if kind == Kind::Any && scope.dot.is_some() && self.chance(20) {
            return ".".to_string();
        }
        match kind {
            Kind::Str => match self.below(8) {
                0 => "$.Release.Name".to_string(),
                1 => "$.Chart.Name".to_string(),
                2 => "`raw\\n`".to_string(),
                _ => go_quote(self.pick(WORDS)),
            },
            Kind::Int => self.pick_int().to_string(),
            Kind::Float => self
                .pick(&["1.5", "123.233", "-0.5", "3.0", "0.1", "2.5", "1e3"])
                .to_string(),
            Kind::Bool => self.pick(&["true", "false"]).to_string(),
            Kind::List => {
                let n = self.below(4);
                let items: Vec<String> = (0..n)
                    .map(|_| {
                        let k = self.any_kind();
                        self.leaf(if k == Kind::Any { Kind::Str } else { k }, scope)
                    })
                    .collect();
                paren(format!("list {}", items.join(" ")).trim_end())
            }
            Kind::Dict => {
                if self.chance(40) {
                    format!("$.Values.{}", scope.key)
                } else if self.chance(10) {
                    // A nil map: Go refuses it from a field for a map parameter and takes it from a pipeline.
                    let missing = format!("$.Values.{}.missing", scope.key);
                    if self.chance(50) {
                        missing
                    } else {
                        paren(&missing)
                    }
                } else {
                    "(dict \"a\" 1 \"b\" \"two\")".to_string()
                }
            }
            Kind::Any => {
                let k = self.any_kind();
                if k == Kind::Any {
                    match self.below(3) {
                        0 => "nil".to_string(),
                        1 => format!("$.Values.{}.missing", scope.key),
                        _ => format!("$.Values.{}.nested", scope.key),
                    }
                } else {
                    self.leaf(k, scope)
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Scope {
    key: String,
    paths: Vec<(String, Kind)>,
    vars: Vec<(String, Kind)>,
    dot: Option<Kind>,
    defines: Vec<String>,
    in_range: bool,
    depth: usize,
}

fn paren(expr: &str) -> String {
    let simple =
        !expr.contains(' ') || expr.starts_with('(') && expr.ends_with(')') && balanced(expr);
    if simple || expr.starts_with('"') && !expr[1..expr.len() - 1].contains('"') {
        expr.to_string()
    } else {
        format!("({expr})")
    }
}

/// Whether the parenthesis opening `expr` closes at its end.
fn balanced(expr: &str) -> bool {
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    for (i, ch) in expr.char_indices() {
        if in_string {
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_string = true,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i + 1 != expr.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// A Go interpreted string literal.
pub fn go_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The key Helm's YAML 1.1 parser makes of a plain boolean key (`y:` is `"true"`).
fn helm_bool_key(key: &str) -> Option<&'static str> {
    match key {
        "y" | "yes" | "on" | "true" => Some("true"),
        "n" | "no" | "off" | "false" => Some("false"),
        _ => None,
    }
}

fn key_path(base: &str, key: &str) -> String {
    let plain = key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && key.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if plain && !["true", "false", "nil"].contains(&key) {
        format!("{base}.{key}")
    } else {
        format!("(index {base} \"{key}\")")
    }
}

fn collect_paths(node: &Node, path: &str, out: &mut Vec<(String, Kind)>) {
    let kind = match node {
        Node::Null | Node::Raw(_) => Kind::Any,
        Node::Bool(_) => Kind::Bool,
        Node::Int(_) => Kind::Any, // values ints are float64 in Helm
        Node::Float(_) => Kind::Float,
        Node::Str(_) => Kind::Str,
        Node::List(_) => Kind::List,
        Node::Map(_) => Kind::Dict,
    };
    out.push((path.to_string(), kind));
    if let Node::Map(entries) = node {
        for (key, value) in entries {
            match helm_bool_key(key) {
                // Several keys may become the same one: its value is whichever came last.
                Some(name) => out.push((key_path(path, name), Kind::Any)),
                None => collect_paths(value, &key_path(path, key), out),
            }
        }
    }
}

/// Writes `node` as block YAML at `indent` levels (two spaces each), after a key that ends the current line.
fn emit_yaml(node: &Node, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    match node {
        Node::Map(entries) if !entries.is_empty() => {
            for (key, value) in entries {
                let key_text = if key == "x-y" || key.chars().all(|c| c.is_ascii_alphanumeric()) {
                    key.clone()
                } else {
                    serde_json::to_string(key).unwrap_or_default()
                };
                out.push_str(&format!("\n{pad}{key_text}:"));
                emit_yaml(value, indent + 1, out);
            }
        }
        Node::List(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&format!("\n{pad}-"));
                emit_yaml(item, indent + 1, out);
            }
        }
        Node::Map(_) => out.push_str(" {}"),
        Node::List(_) => out.push_str(" []"),
        Node::Null => out.push_str(" null"),
        Node::Bool(b) => out.push_str(&format!(" {b}")),
        Node::Int(i) => out.push_str(&format!(" {i}")),
        Node::Float(f) => out.push_str(&format!(" {f:?}")),
        Node::Raw(raw) => out.push_str(&format!(" {raw}")),
        Node::Str(s) => out.push_str(&format!(
            " {}",
            serde_json::to_string(s).unwrap_or_default()
        )),
    }
}
