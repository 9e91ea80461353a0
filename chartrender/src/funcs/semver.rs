//! Masterminds semver v3 as Sprig's `semver`/`semverCompare` use it: lenient versions and constraint ranges.

use std::cmp::Ordering;

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
    let valid_ids = |s: &str| {
        s.is_empty()
            || s.split('.').all(|id| {
                !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
    };
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
