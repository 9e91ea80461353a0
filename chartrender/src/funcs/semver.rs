//! Masterminds semver v3 as Sprig's `semver`/`semverCompare` use it: lenient versions and constraint ranges.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use minijinja::value::{Object, ObjectRepr, Value};
use minijinja::{Error, ErrorKind, State};

/// A parsed (coerced) semantic version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    pub(crate) major: u64,
    pub(crate) minor: u64,
    pub(crate) patch: u64,
    pub(crate) pre: String,
    pub(crate) metadata: String,
}

/// Parses `v1.2.3-pre+meta`, also `1`, `1.2` (missing parts are 0), like `semver.NewVersion`.
pub(crate) fn parse_version(text: &str) -> Result<Version, String> {
    let invalid = || format!("Invalid Semantic Version: {text:?}");
    let trimmed = text.trim();
    let body = trimmed.strip_prefix('v').unwrap_or(trimmed);
    let (body, metadata) = body.split_once('+').unwrap_or((body, ""));
    let (core, pre) = match body.find('-') {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(invalid());
    }
    let number = |i: usize| {
        parts
            .get(i)
            .map_or(Ok(0), |p| p.parse::<u64>().map_err(|_| invalid()))
    };
    let valid_ids = |s: &str| s.is_empty() || valid_identifiers(s);
    if !valid_ids(pre) || !valid_ids(metadata) {
        return Err(invalid());
    }
    Ok(Version {
        major: number(0)?,
        minor: number(1)?,
        patch: number(2)?,
        pre: pre.to_string(),
        metadata: metadata.to_string(),
    })
}

impl Version {
    fn triple(&self) -> (u64, u64, u64) {
        (self.major, self.minor, self.patch)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.triple()
            .cmp(&other.triple())
            .then_with(|| compare_pre(&self.pre, &other.pre))
    }
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// The `*semver.Version` that `semver` returns: it prints (and encodes to JSON) as its canonical text, and has the
/// Masterminds v3 methods a template can call (`.Major`, `.Compare`, `.IncPatch`, `.SetPrerelease` …).
#[derive(Debug, Clone)]
pub(crate) struct GoSemver {
    pub(crate) version: Version,
    /// The text it was parsed from (`.Original`); derived versions keep a leading `v` of their source.
    pub(crate) original: String,
}

impl GoSemver {
    /// A version object for `text` (`semver.NewVersion`).
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        Ok(Self {
            version: parse_version(text)?,
            original: text.to_string(),
        })
    }

    /// `Version.String()`: `major.minor.patch[-pre][+metadata]`.
    pub(crate) fn canonical(&self) -> String {
        let v = &self.version;
        let mut out = format!("{}.{}.{}", v.major, v.minor, v.patch);
        if !v.pre.is_empty() {
            out.push('-');
            out.push_str(&v.pre);
        }
        if !v.metadata.is_empty() {
            out.push('+');
            out.push_str(&v.metadata);
        }
        out
    }

    /// A derived version: `change` applied, `original` rebuilt from the canonical text with the `v` kept.
    fn derive(&self, change: impl FnOnce(&mut Version)) -> Value {
        let mut version = self.version.clone();
        change(&mut version);
        let mut next = Self {
            version,
            original: String::new(),
        };
        let prefix = if self.original.starts_with('v') {
            "v"
        } else {
            ""
        };
        next.original = format!("{prefix}{}", next.canonical());
        Value::from_object(next)
    }

    /// Go's `Compare`: -1, 0 or 1; build metadata does not count.
    fn compare(&self, other: &Self) -> i64 {
        match self.version.cmp(&other.version) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }
    }
}

impl Object for GoSemver {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    /// The methods without arguments, which Go templates call by naming them like fields.
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let v = &self.version;
        Some(match key.as_str()? {
            "Major" => super::number::uint64(v.major),
            "Minor" => super::number::uint64(v.minor),
            "Patch" => super::number::uint64(v.patch),
            "Prerelease" => Value::from(v.pre.as_str()),
            "Metadata" => Value::from(v.metadata.as_str()),
            "Original" => Value::from(self.original.as_str()),
            "String" => Value::from(self.canonical()),
            "IncPatch" => self.derive(|next| {
                if next.pre.is_empty() {
                    next.patch += 1;
                }
                next.pre.clear();
                next.metadata.clear();
            }),
            "IncMinor" => self.derive(|next| {
                next.minor += 1;
                next.patch = 0;
                next.pre.clear();
                next.metadata.clear();
            }),
            "IncMajor" => self.derive(|next| {
                next.major += 1;
                next.minor = 0;
                next.patch = 0;
                next.pre.clear();
                next.metadata.clear();
            }),
            _ => return None,
        })
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        let wrong_args = |want: usize| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "wrong number of args for {method}: want {want} got {}",
                    args.len()
                ),
            )
        };
        let other = || -> Result<Arc<Self>, Error> {
            let [arg] = args else {
                return Err(wrong_args(1));
            };
            arg.downcast_object::<Self>().ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "wrong type for value; expected *semver.Version; got {}",
                        super::value::type_of(arg)
                    ),
                )
                .with_source(super::signature::RefusedArgument(0))
            })
        };
        let text = || -> Result<String, Error> {
            let [arg] = args else {
                return Err(wrong_args(1));
            };
            arg.as_str().map(str::to_string).ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "wrong type for value; expected string; got {}",
                        super::value::type_of(arg)
                    ),
                )
                .with_source(super::signature::RefusedArgument(0))
            })
        };
        match method {
            "Compare" => Ok(Value::from(self.compare(&*other()?))),
            "LessThan" => Ok(Value::from(self.compare(&*other()?) < 0)),
            "GreaterThan" => Ok(Value::from(self.compare(&*other()?) > 0)),
            "Equal" => Ok(Value::from(self.compare(&*other()?) == 0)),
            "SetPrerelease" | "SetMetadata" => {
                let part = text()?;
                if !part.is_empty() && !valid_identifiers(&part) {
                    let what = if method == "SetPrerelease" {
                        "Prerelease"
                    } else {
                        "Metadata"
                    };
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        format!("error calling {method}: Invalid {what} string"),
                    ));
                }
                Ok(self.derive(|next| {
                    if method == "SetPrerelease" {
                        next.pre = part;
                    } else {
                        next.metadata = part;
                    }
                }))
            }
            _ if self.get_value(&Value::from(method)).is_some() => Err(wrong_args(0)),
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

/// Dot-separated non-empty identifiers of ASCII letters, digits and hyphens.
fn valid_identifiers(text: &str) -> bool {
    text.split('.')
        .all(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
}

/// One comparison: operator and bound, with how many version parts were given (wildcards count as missing).
#[derive(Debug, Clone)]
struct Comparison {
    op: String,
    bound: Version,
    parts: usize,
}

/// Whether `version` satisfies the Masterminds constraint string (`>= 1.9-0`, `~1.2`, `^1 || 2.x`, `1.2 - 1.4`).
pub(crate) fn satisfies(constraint: &str, version: &str) -> Result<bool, String> {
    let version = parse_version(version)?;
    let mut any = false;
    for alternative in constraint.split("||") {
        let comparisons = parse_group(alternative.trim())
            .map_err(|e| format!("improper constraint: {constraint}: {e}"))?;
        if comparisons.iter().all(|c| c.matches(&version)) {
            any = true;
        }
    }
    Ok(any)
}

fn parse_group(group: &str) -> Result<Vec<Comparison>, String> {
    // Hyphen ranges: "1.2 - 1.4.5" means >= 1.2 and <= 1.4.5.
    let tokens: Vec<&str> = group.split([' ', ',']).filter(|t| !t.is_empty()).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens.get(i + 1) == Some(&"-") && i + 2 < tokens.len() {
            out.push(parse_comparison(&format!(">={}", tokens[i]))?);
            out.push(parse_comparison(&format!("<={}", tokens[i + 2]))?);
            i += 3;
            continue;
        }
        let mut token = tokens[i].to_string();
        // An operator separated from its version by a space ("> = 1" is not valid, "> 1" is).
        if token.chars().all(|c| "<>=!~^".contains(c)) && i + 1 < tokens.len() {
            token.push_str(tokens[i + 1]);
            i += 1;
        }
        out.push(parse_comparison(&token)?);
        i += 1;
    }
    if out.is_empty() {
        return Err("empty constraint".into());
    }
    Ok(out)
}

fn parse_comparison(token: &str) -> Result<Comparison, String> {
    let split = token
        .find(|c: char| !"<>=!~^".contains(c))
        .unwrap_or(token.len());
    let (op, rest) = token.split_at(split);
    let rest = rest.trim_start_matches('v');
    if !matches!(
        op,
        "" | "=" | "==" | "!=" | ">" | "<" | ">=" | "=>" | "<=" | "=<" | "~" | "~>" | "^"
    ) {
        return Err(format!("unknown operator {op:?}"));
    }
    let (core, suffix) = match rest.find(['-', '+']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let raw_parts: Vec<&str> = core.split('.').collect();
    let parts = raw_parts
        .iter()
        .take_while(|p| !matches!(**p, "x" | "X" | "*" | ""))
        .count();
    if raw_parts.len() > 3 || (parts == 0 && !matches!(raw_parts.first(), Some(&("x" | "X" | "*"))))
    {
        return Err(format!("invalid version {rest:?}"));
    }
    let concrete: Vec<&str> = raw_parts.iter().take(parts).copied().collect();
    let text = if concrete.is_empty() {
        "0".to_string()
    } else {
        concrete.join(".")
    };
    let bound = parse_version(&format!("{text}{suffix}"))?;
    Ok(Comparison {
        op: op.to_string(),
        bound,
        parts,
    })
}

impl Comparison {
    fn matches(&self, v: &Version) -> bool {
        // Prerelease versions only match comparisons that carry a prerelease themselves.
        if !v.pre.is_empty() && self.bound.pre.is_empty() {
            return false;
        }
        let b = &self.bound;
        let wildcard = self.parts < 3;
        let upper_of_wildcard = || match self.parts {
            0 => None,
            1 => Some(Version {
                major: b.major + 1,
                minor: 0,
                patch: 0,
                pre: String::new(),
                metadata: String::new(),
            }),
            _ => Some(Version {
                major: b.major,
                minor: b.minor + 1,
                patch: 0,
                pre: String::new(),
                metadata: String::new(),
            }),
        };
        let below = |upper: Option<Version>| upper.is_none_or(|u| v.triple() < u.triple());
        match self.op.as_str() {
            "" | "=" | "==" => {
                if wildcard {
                    v >= b && below(upper_of_wildcard())
                } else {
                    v == b
                        || (v.triple() == b.triple()
                            && compare_pre(&v.pre, &b.pre) == Ordering::Equal)
                }
            }
            "!=" => {
                if wildcard {
                    !(v >= b && below(upper_of_wildcard()))
                } else {
                    v.cmp(b) != Ordering::Equal
                }
            }
            ">" => {
                if wildcard {
                    upper_of_wildcard().is_some_and(|u| v.triple() >= u.triple())
                } else {
                    v > b
                }
            }
            ">=" | "=>" => v >= b,
            "<" => v < b,
            "<=" | "=<" => {
                if wildcard {
                    below(upper_of_wildcard())
                } else {
                    v <= b
                }
            }
            "~" | "~>" => {
                let upper = if self.parts <= 1 {
                    Version {
                        major: b.major + 1,
                        minor: 0,
                        patch: 0,
                        pre: String::new(),
                        metadata: String::new(),
                    }
                } else {
                    Version {
                        major: b.major,
                        minor: b.minor + 1,
                        patch: 0,
                        pre: String::new(),
                        metadata: String::new(),
                    }
                };
                v >= b && v.triple() < upper.triple()
            }
            "^" => {
                let upper = if b.major > 0 || self.parts <= 1 {
                    Version {
                        major: b.major + 1,
                        minor: 0,
                        patch: 0,
                        pre: String::new(),
                        metadata: String::new(),
                    }
                } else if b.minor > 0 || self.parts == 2 {
                    Version {
                        major: 0,
                        minor: b.minor + 1,
                        patch: 0,
                        pre: String::new(),
                        metadata: String::new(),
                    }
                } else {
                    Version {
                        major: 0,
                        minor: 0,
                        patch: b.patch + 1,
                        pre: String::new(),
                        metadata: String::new(),
                    }
                };
                v >= b && v.triple() < upper.triple()
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn satisfies_handles_common_helm_constraints() {
        assert!(satisfies(">= 1.9-0", "v1.20.0").unwrap());
        assert!(satisfies("~1.2.0", "1.2.7").unwrap());
        assert!(!satisfies("~1.2.0", "1.3.0").unwrap());
        assert!(satisfies("^1.2", "1.9.0").unwrap());
        assert!(!satisfies("^0.2.3", "0.3.0").unwrap());
        assert!(satisfies("1.2.x", "1.2.9").unwrap());
        assert!(satisfies("<1.19 || >=1.20", "1.20.1").unwrap());
        assert!(satisfies(">=1.2, <1.4", "1.3.0").unwrap());
        assert!(satisfies("1.2 - 1.4", "1.4.0").unwrap());
        assert!(!satisfies(">=1.20", "1.21.0-rc.1").unwrap());
        assert!(satisfies(">=1.20-0", "1.21.0-rc.1").unwrap());
    }

    #[test]
    fn parse_version_coerces_and_rejects() {
        assert_eq!(parse_version("v1.20").unwrap().triple(), (1, 20, 0));
        assert!(parse_version("1.2.3.4").is_err());
        assert!(parse_version("abc").is_err());
        assert!(satisfies("!!1", "1.0.0").is_err());
    }

    #[test]
    fn prereleases_order_below_releases() {
        assert!(parse_version("1.0.0-alpha").unwrap() < parse_version("1.0.0").unwrap());
        assert!(parse_version("1.0.0-alpha.2").unwrap() < parse_version("1.0.0-alpha.10").unwrap());
    }
}
