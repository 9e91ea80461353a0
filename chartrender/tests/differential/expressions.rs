//! The typed expressions of the differential test's generator: for each Go type the Sprig and Helm functions
//! that produce it, with arguments drawn again by type.

use super::{Generator, KEYS, Kind, Scope, WORDS, go_quote};

impl Generator {
    pub(super) fn str_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        let s = self.arg(Kind::Str, scope, d);
        match self.below(52) {
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
            12 => format!("snakecase {s}"),
            13 => format!("kebabcase {s}"),
            14 => format!("camelcase {s}"),
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
                // A string, or an integer that is Go's int (literal, len) or int64 (add, int64): only int64 counts.
                let a = if self.chance(50) {
                    self.pick(&["\"90\"", "\"1h2m\"", "\"3600\""]).to_string()
                } else {
                    self.arg(Kind::Int, scope, d)
                };
                format!("{} {a}", self.pick(&["duration", "durationRound"]))
            }
            41 => format!("{s} | sha1sum | trunc 8"),
            42 => {
                let a = self.arg(Kind::Any, scope, d);
                format!("toPrettyJson {a}")
            }
            44 => format!(
                "{} {s}",
                self.pick(&[
                    "trimAll \"a\"",
                    "abbrevboth 2 6",
                    "wrapWith 4 \"|\"",
                    "nindent 1",
                    "osBase",
                    "osDir",
                    "osExt",
                    "osClean"
                ])
            ),
            45 => format!("regexReplaceAllLiteral \"[lo]+\" {s} \"${{1}}\""),
            46 => format!("b32dec (b32enc {s})"),
            47 => {
                let a = self.arg(Kind::Any, scope, d);
                format!(
                    "{} {a}",
                    self.pick(&["toRawJson", "mustToJson", "toString"])
                )
            }
            48 => {
                let layout = self.pick(&["2006-01-02", "Jan 2 15:04 MST", "15:04:05.000", "Mon"]);
                let day = self.pick(&["2024-05-06", "1999-12-31", "2024-02-29"]);
                match self.below(4) {
                    0 => format!("toDate \"2006-01-02\" \"{day}\" | date \"{layout}\""),
                    1 => format!(
                        "dateInZone \"{layout}\" (toDate \"2006-01-02\" \"{day}\") \"{}\"",
                        self.pick(&["UTC", "Europe/Berlin", "Asia/Tokyo"])
                    ),
                    2 => format!(
                        "toDate \"2006-01-02\" \"{day}\" | dateModify \"{}\" | htmlDate",
                        self.pick(&["-90m", "25h", "1h30m"])
                    ),
                    _ => format!("unixEpoch (toDate \"2006-01-02\" \"{day}\")"),
                }
            }
            49 => {
                let n = self.pick(&["2", "1", "0", "-1"]);
                format!("splitn \",\" {n} {s} | toJson")
            }
            50 => format!(
                "printf \"{}\" {s} {s}",
                self.pick(&["%-8s|%8s", "%.2s%5.1q", "%x %X", "%v %[1]q", "%08s %c"])
            ),
            _ => format!("{} {s}", self.pick(&["b32enc", "squote", "toString"])),
        }
    }

    pub(super) fn int_expr(&mut self, scope: &mut Scope, d: usize) -> String {
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

    pub(super) fn float_expr(&mut self, scope: &mut Scope, d: usize) -> String {
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

    pub(super) fn bool_expr(&mut self, scope: &mut Scope, d: usize) -> String {
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
                    "int64",
                    "uint64",
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

    pub(super) fn list_expr(&mut self, scope: &mut Scope, d: usize) -> String {
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

    pub(super) fn dict_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        let m = self.arg(Kind::Dict, scope, d);
        match self.below(17) {
            16 => match self.below(3) {
                0 => "lookup \"v1\" \"Secret\" \"ns\" \"name\"".to_string(),
                1 => format!(
                    "urlParse \"{}\"",
                    self.pick(&["https://u:p@h:8/p?q=1#f", "x", "/a/b?c", "mailto:a@b"])
                ),
                _ => {
                    let s = self.arg(Kind::Str, scope, d);
                    format!("split \"{}\" {s}", self.pick(&[",", "l", "."]))
                }
            },
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

    pub(super) fn any_expr(&mut self, scope: &mut Scope, d: usize) -> String {
        match self.below(19) {
            0 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("index {m} \"{}\"", self.pick(KEYS))
            }
            17 => {
                let m = self.arg(Kind::Dict, scope, d);
                format!("index {m} \"nested\" \"{}\"", self.pick(KEYS))
            }
            18 => {
                let a = self.arg(Kind::Int, scope, d);
                let b = self.arg(Kind::Int, scope, d);
                match self.below(3) {
                    0 => format!("biggest {a} {b}"),
                    1 => format!("tuple {a} {b}"),
                    _ => format!("toDecimal \"{}\"", self.pick(&["0777", "17", "x", "-010"])),
                }
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
            // A field of a value of any kind: Go fails on a string, number, list or nil. (Drawn less often: a
            // failing case costs the reference a run of its own.)
            12 if self.chance(40) => {
                let a = self.arg(Kind::Any, scope, d);
                format!("{a}.{}", self.pick(&["a", "name", "nested"]))
            }
            // The Go types of Helm's root objects (structs, pointers, named maps).
            13 => {
                let object = self.pick(&[
                    "$",
                    "$.Values",
                    "$.Chart",
                    "$.Capabilities",
                    "$.Capabilities.KubeVersion",
                    "$.Capabilities.APIVersions",
                    "$.Capabilities.HelmVersion",
                    "$.Files",
                    "$.Release",
                    "$.Template",
                    "$.Chart.Annotations",
                ]);
                // HelmVersion's fields are printed too: seedlet reports what the embedded engine reports.
                let function = if object == "$.Capabilities.HelmVersion" {
                    self.pick(&["typeOf", "kindOf", "toJson", "print"])
                } else {
                    self.pick(&["typeOf", "kindOf"])
                };
                format!("{function} {object}")
            }
            // Sprig's dig asserts a plain map: `.Values` is a `chartutil.Values`. (Never `.Values` as a whole for a
            // result: the reference renders the values of many cases in one chart.)
            14 if self.chance(40) => {
                let key = scope.key.clone();
                match self.below(4) {
                    0 => format!("dig \"{key}\" \"a\" \"d\" $.Values"),
                    1 => format!("dig \"v\" \"{key}\" \"d\" (dict \"v\" $.Values)"),
                    2 => format!("dig \"{}\" \"d\" $.Values.{key}", self.pick(KEYS)),
                    _ => "dig \"x\" \"d\" $.Files".to_string(),
                }
            }
            _ => {
                let k = self.any_kind();
                self.expr(k, scope, d)
            }
        }
    }
}
