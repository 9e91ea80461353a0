//! The case generator of the differential test: random values (every YAML shape, YAML 1.1 scalars and keys) and
//! Go templates over them that use the Sprig/Helm function set and Go's template syntax.
//!
//! Generation is typed: every expression is built for a Go type (string, int, float, bool, list, dict or any),
//! and value paths are drawn from the case's own values by their kind, so most cases render and the ones that
//! fail do so for a reason both engines must agree on. Randomness comes from proptest's `TestRng` (seeded), so
//! a case is reproduced by its seed.

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
        let choice = self.below(if nested { 15 } else { 9 });
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
                    // Not `break`: a `range … else` after a loop left by `break` is a known difference.
                    let word = "continue";
                    format!("{{{{ if {cond} }}}}{{{{ {word} }}}}{{{{ end }}}}")
                } else {
                    "{{/* a comment */}}".to_string()
                }
            }
            8 => {
                let inner = self.tpl_text(scope);
                format!("{{{{ tpl {} $ }}}}", go_quote(&inner))
            }
            9 | 10 => self.if_block(scope),
            11 => self.with_block(scope),
            _ => self.range_block(scope),
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

    /// A kind whose Go type is the same whatever expression produced it (no int/int64, no []string).
    fn reported_kind(&mut self) -> Kind {
        [Kind::Str, Kind::Float, Kind::Bool, Kind::Dict][self.below(4)]
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

    fn str_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        let s = self.arg(Kind::Str, scope, d);
        match self.below(44) {
            0 => format!("upper {s}"),
            1 => format!("lower {s}"),
            2 => format!("title {s}"),
            3 => format!("untitle {s}"),
            4 => format!("trim {s}"),
            5 => format!("trimPrefix \"a\" {s}"),
            6 => format!("trimSuffix \"d\" {s}"),
            7 => format!("replace \"l\" \"L\" {s}"),
            8 => format!("repeat 2 {s}"),
            9 => format!("substr {} {} {s}", self.below(3), self.below(6)),
            10 => format!("trunc {} {s}", self.pick(&["3", "-3", "0", "20"])),
            11 => format!(
                "abbrev {} \"{}\"",
                self.pick(&["4", "5", "10"]),
                self.pick(&["Hello World", "ab", "camelCaseString"])
            ),
            12 => format!("{s} | lower | upper"),
            13 => format!("{s} | trimAll \"l\""),
            14 => format!("{s} | title | untitle"),
            15 => format!("swapcase {s}"),
            16 => format!("initials {s}"),
            17 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("quote {a} {s}")
            }
            18 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("cat {a} {s}")
            }
            19 => format!("{s} | indent {}", self.below(4)),
            20 => {
                let l = self.arg(Kind::List, scope, d);
                format!("join \"{}\" {l}", self.pick(&[",", "", " - "]))
            }
            21 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("toString {a}")
            }
            22 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("toJson {a}")
            }
            23 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("toYaml {a}")
            }
            24 => {
                let a = self.arg(Kind::Any, scope, d);
                let b = self.arg(Kind::Any, scope, d);
                let f = self.pick(&["%v-%v", "%s:%d", "%q %x", "%v|%v", "%t %v"]);
                format!("printf \"{f}\" {a} {b}")
            }
            25 => {
                let a = self.arg(Kind::Any, scope, d);
                let b = self.arg(Kind::Any, scope, d);
                format!("print {a} {b}")
            }
            26 => format!("b64enc {s}"),
            27 => format!("b64dec (b64enc {s})"),
            28 => format!("sha256sum {s}"),
            29 => format!("adler32sum {s}"),
            30 => format!("{} {s}", self.pick(&["base", "dir", "ext", "clean"])),
            31 => format!("regexReplaceAll \"[a-c]+\" {s} \"<$0>\""),
            32 => format!("regexFind \"[0-9.]+\" {s}"),
            33 => {
                let k = self.reported_kind();
                let a = self.arg(k, scope, d);
                format!("kindOf {a}")
            }
            34 => {
                let b = self.arg(Kind::Bool, scope, d);
                format!("ternary {s} \"no\" {b}")
            }
            35 => format!("wrap 5 {s}"),
            36 => format!("plural \"one\" \"many\" {}", self.below(3)),
            37 => format!("{} {s}", self.pick(&["urlquery", "html", "js", "nospace"])),
            38 => {
                if let Some(name) = scope.defines.first().cloned() {
                    format!("include \"{name}\" $")
                } else {
                    format!("default \"dflt\" {s}")
                }
            }
            39 => {
                let v = self.pick(&["1.2.3", "v2.0.0-rc.1+build", "1.3", "0.0.1-alpha"]);
                let m = self.pick(&["Original", "Prerelease", "Metadata", "String"]);
                format!("(semver \"{v}\").{m}")
            }
            40 => {
                let a = self.pick(&["\"90\"", "\"1h2m\"", "\"3600\""]);
                format!("duration {a}")
            }
            41 => format!("{s} | sha1sum | trunc 8"),
            42 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("toPrettyJson {a}")
            }
            _ => format!("{} {s}", self.pick(&["b32enc", "squote", "toString"])),
        }
    }

    fn int_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        let a = self.arg(Kind::Int, scope, d);
        let b = self.arg(Kind::Int, scope, d);
        match self.below(16) {
            0 => {
                let k = [Kind::Str, Kind::List, Kind::Dict][self.below(3)];
                let x = self.arg(k, scope, d);
                format!("len {x}")
            }
            1 => format!("add {a} {b}"),
            2 => format!("sub {a} {b}"),
            3 => format!("mul {a} {b}"),
            4 => format!("div {a} {}", self.pick(&["3", "-2", "7"])),
            5 => format!("mod {a} {}", self.pick(&["3", "-2", "7"])),
            6 => format!("max {a} {b} 5"),
            7 => format!("min {a} {b}"),
            8 => format!("add1 {a}"),
            9 => {
                let x = self.arg(Kind::Any, scope, d);
                format!("int {x}")
            }
            10 => format!("atoi \"{}\"", self.pick(&["42", "x", "-3", " 5"])),
            11 => {
                let x = self.arg(Kind::Any, scope, d);
                format!("int64 {x}")
            }
            12 => {
                let v = self.pick(&["1.2.3", "v2.0.0-rc.1", "10.20.30"]);
                let m = self.pick(&["Major", "Minor", "Patch"]);
                format!("(semver \"{v}\").{m}")
            }
            13 => {
                let v = self.pick(&["1.2.3", "1.3.0", "1.2.3-beta"]);
                format!("(semver \"1.2.3\").Compare (semver \"{v}\")")
            }
            14 => {
                let l = self.arg(Kind::List, scope, d);
                format!("len (uniq {l})")
            }
            _ => format!("{a} | add 1 | mul 2"),
        }
    }

    fn float_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        let a = self.arg(Kind::Float, scope, d);
        let b = self.arg(Kind::Float, scope, d);
        match self.below(11) {
            0 => format!("addf {a} {b}"),
            1 => format!("subf {a} {b}"),
            2 => format!("mulf {a} {b}"),
            3 => format!("divf {a} {}", self.pick(&["3", "0.5", "7.25"])),
            4 => format!("round {a} {}", self.below(3)),
            5 => format!("round {a} 2 0.3"),
            6 => format!("floor {a}"),
            7 => format!("ceil {a}"),
            8 => {
                let x = self.arg(Kind::Any, scope, d);
                format!("float64 {x}")
            }
            9 => format!("maxf {a} {b}"),
            _ => format!("minf {a} {b} 0.25"),
        }
    }

    fn bool_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        match self.below(18) {
            0 | 1 => {
                let k = [Kind::Str, Kind::Int, Kind::Bool][self.below(3)];
                let a = self.arg(k, scope, d);
                let b = self.arg(k, scope, d);
                format!("{} {a} {b}", self.pick(&["eq", "ne"]))
            }
            2 => {
                let k = [Kind::Str, Kind::Int, Kind::Float][self.below(3)];
                let a = self.arg(k, scope, d);
                let b = self.arg(k, scope, d);
                format!("{} {a} {b}", self.pick(&["lt", "le", "gt", "ge"]))
            }
            3 => {
                let a = self.arg(Kind::Bool, scope, d);
                let b = self.arg(Kind::Bool, scope, d);
                format!("{} {a} {b}", self.pick(&["and", "or"]))
            }
            4 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("not {a}")
            }
            5 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("empty {a}")
            }
            6 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("hasKey {m} \"{}\"", self.pick(KEYS))
            }
            7 => {
                let a = self.arg(Kind::Any, scope, d);
                let l = self.arg(Kind::List, scope, d);
                format!("has {a} {l}")
            }
            8 => {
                let s = self.arg(Kind::Str, scope, d);
                let t = self.arg(Kind::Str, scope, d);
                format!(
                    "{} {s} {t}",
                    self.pick(&["contains", "hasPrefix", "hasSuffix"])
                )
            }
            9 => {
                let c = self.pick(&[">= 1.2", "^1.2.0", "~1.2", "< 2.0.0-0", ">=1.20.0-0", "1.x"]);
                let v = self.pick(&["1.2.3", "1.3.0", "2.0.0-rc.1", "v1.20.0"]);
                format!("semverCompare \"{c}\" \"{v}\"")
            }
            10 => {
                let s = self.arg(Kind::Str, scope, d);
                format!(
                    "regexMatch \"{}\" {s}",
                    self.pick(&["^[a-z]+$", "\\\\d", "^$", "l+"])
                )
            }
            11 => {
                let reported = self.reported_kind();
                let a = self.arg(reported, scope, d);
                let k = self.pick(&[
                    "map", "string", "int", "float64", "slice", "bool", "invalid", "int64",
                ]);
                format!("kindIs \"{k}\" {a}")
            }
            12 => {
                let reported = self.reported_kind();
                let a = self.arg(reported, scope, d);
                let b = self.arg(reported, scope, d);
                format!("deepEqual {a} {b}")
            }
            13 => {
                let reported = self.reported_kind();
                let a = self.arg(reported, scope, d);
                let t = self.pick(&[
                    "string",
                    "int",
                    "float64",
                    "bool",
                    "map[string]interface {}",
                    "[]interface {}",
                ]);
                format!("typeIs \"{t}\" {a}")
            }
            _ => {
                let a = self.arg(Kind::Bool, scope, d);
                let b = self.arg(Kind::Bool, scope, d);
                format!("{} {a} {b}", self.pick(&["and", "or", "eq"]))
            }
        }
    }

    fn list_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        let l = self.arg(Kind::List, scope, d);
        match self.below(22) {
            0 => {
                let a = self.arg(Kind::Any, scope, d);
                let b = self.arg(Kind::Any, scope, d);
                format!("list {a} {b}")
            }
            1 => {
                let s = self.arg(Kind::Str, scope, d);
                format!("splitList \"{}\" {s}", self.pick(&[",", "l", ""]))
            }
            2 => format!("until {}", self.below(5)),
            3 => format!("untilStep {} 10 {}", self.below(3), 1 + self.below(4)),
            4 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("{} {l} {a}", self.pick(&["append", "prepend"]))
            }
            5 => {
                let m = self.arg(Kind::List, scope, d);
                format!("concat {l} {m}")
            }
            6 => format!(
                "{} {l}",
                self.pick(&["rest", "initial", "reverse", "uniq", "compact"])
            ),
            7 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("without {l} {a}")
            }
            8 => format!("sortAlpha {l}"),
            9 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("keys {m} | sortAlpha")
            }
            10 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("pluck \"a\" {m} (dict \"a\" 2)")
            }
            11 => format!("chunk 2 {l}"),
            12 => format!("slice {l} {}", self.pick(&["0", "1", "0 1", "1 1"])),
            13 => {
                let s = self.arg(Kind::Str, scope, d);
                format!(
                    "regexFindAll \"[a-z]+\" {s} {}",
                    self.pick(&["-1", "1", "0"])
                )
            }
            14 => {
                let s = self.arg(Kind::Str, scope, d);
                format!("regexSplit \"[,.]\" {s} -1")
            }
            15 => format!(
                "fromYamlArray \"{}\"",
                self.pick(&["[1, a, true]", "- x\\n- {z: 1}", "a: b", "- yes\\n- off"])
            ),
            16 => format!(
                "fromJsonArray \"{}\"",
                self.pick(&["[1, \\\"a\\\", 2.5]", "[]", "{}", "[1,"])
            ),
            17 => format!("toStrings {l}"),
            18 => format!("seq {}", self.pick(&["3", "2 5", "5 -2 1", "0"])),
            19 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("values {m} | sortAlpha")
            }
            _ => format!("mustAppend {l} 1"),
        }
    }

    fn dict_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        let m = self.arg(Kind::Dict, scope, d);
        match self.below(16) {
            0 | 1 => {
                let a = self.arg(Kind::Any, scope, d);
                let b = self.arg(Kind::Any, scope, d);
                format!(
                    "dict \"{}\" {a} \"{}\" {b}",
                    self.pick(KEYS),
                    self.pick(KEYS)
                )
            }
            2 => {
                let n = self.arg(Kind::Dict, scope, d);
                // A fresh destination: a source holding the destination would make a cycle, which Go never prints.
                format!("merge (deepCopy {m}) {n}")
            }
            3 => {
                let n = self.arg(Kind::Dict, scope, d);
                // A fresh destination: a source holding the destination would make a cycle, which Go never prints.
                format!("mergeOverwrite (deepCopy {m}) {n}")
            }
            4 => format!("pick {m} \"a\" \"{}\"", self.pick(KEYS)),
            5 => format!("omit {m} \"a\" \"{}\"", self.pick(KEYS)),
            6 => format!("deepCopy {m}"),
            7 => {
                let s = self.arg(Kind::Any, scope, d);
                format!("fromYaml (toYaml {s})")
            }
            8 => format!(
                "fromYaml \"{}\"",
                self.pick(&[
                    "a: 1\\nb: [x, z]",
                    "y: yes\\non: 1",
                    "- 1",
                    "x: 1.0\\nz: 0x10"
                ])
            ),
            9 => format!(
                "fromJson \"{}\"",
                self.pick(&["{\\\"a\\\": 1}", "[1]", "{", "{\\\"n\\\": 1.0}"])
            ),
            10 => {
                // A scalar only: a map set into itself is a cycle, which Helm's deepCopy/toYaml never return from.
                let a = go_quote(self.pick(WORDS));
                format!("set {m} \"{}\" {a}", self.pick(KEYS))
            }
            // On a copy: unsetting a key of values that an enclosing `range` walks is not compared.
            11 => format!("unset (deepCopy {m}) \"{}\"", self.pick(KEYS)),
            12 => format!("dict \"{}\" (list 1 2)", self.pick(KEYS)),
            13 => {
                format!("mergeOverwrite (dict \"a\" true \"b\" 1) (dict \"a\" false \"b\" 0) {m}")
            }
            14 => format!("$.Values.{}", scope.key),
            _ => format!("{m} | deepCopy | merge (dict \"z\" 1)"),
        }
    }

    fn any_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        match self.below(14) {
            0 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("index {m} \"{}\"", self.pick(KEYS))
            }
            1 => {
                let l = self.arg(Kind::List, scope, d);
                format!("index {l} 0")
            }
            2 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("get {m} \"{}\"", self.pick(KEYS))
            }
            3 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("dig \"{}\" \"fallback\" {m}", self.pick(KEYS))
            }
            4 => {
                let a = self.arg(Kind::Any, scope, d);
                let b = self.arg(Kind::Any, scope, d);
                format!("default {a} {b}")
            }
            5 => {
                let a = self.arg(Kind::Any, scope, d);
                let b = self.arg(Kind::Any, scope, d);
                format!("coalesce {a} {b}")
            }
            6 => {
                let l = self.arg(Kind::List, scope, d);
                format!("{} {l}", self.pick(&["first", "last"]))
            }
            7 => {
                let a = self.arg(Kind::Any, scope, d);
                let b = self.arg(Kind::Any, scope, d);
                let c = self.arg(Kind::Bool, scope, d);
                format!("ternary {a} {b} {c}")
            }
            8 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("required \"need a value\" {a}")
            }
            9 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("{a} | default \"d\"")
            }
            10 => format!("$.Values.{}.nested", scope.key),
            11 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("{m}.{}", self.pick(&["a", "b", "name", "nested"]))
            }
            _ => {
                let k = self.any_kind();
                self.expr(k, scope, d)
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
