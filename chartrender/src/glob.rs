//! Path glob matching with `/` as separator (`*`, `?`, `**`, `[...]`, `{a,b}`), as `.Files.Glob` uses it.

/// Whether `name` matches `pattern`; `*` and `?` never cross `/`, `**` does.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Alternatives are expanded first; patterns in charts are short, so the expansion stays small.
    expand_braces(&pattern)
        .iter()
        .any(|p| match_from(p, &name, 0))
}

fn expand_braces(pattern: &[char]) -> Vec<Vec<char>> {
    let Some(open) = pattern.iter().position(|c| *c == '{') else {
        return vec![pattern.to_vec()];
    };
    let mut depth = 0;
    let mut close = None;
    for (i, c) in pattern.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(close) = close else {
        return vec![pattern.to_vec()];
    };
    let mut alternatives = Vec::new();
    let mut current = Vec::new();
    let mut depth = 0;
    for c in &pattern[open + 1..close] {
        match c {
            ',' if depth == 0 => alternatives.push(std::mem::take(&mut current)),
            '{' => {
                depth += 1;
                current.push(*c);
            }
            '}' => {
                depth -= 1;
                current.push(*c);
            }
            _ => current.push(*c),
        }
    }
    alternatives.push(current);
    let mut out = Vec::new();
    for alternative in alternatives {
        let mut combined = pattern[..open].to_vec();
        combined.extend(alternative);
        combined.extend_from_slice(&pattern[close + 1..]);
        out.extend(expand_braces(&combined));
        if out.len() > 256 {
            break;
        }
    }
    out
}

fn match_from(pattern: &[char], name: &[char], depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    let (mut p, mut n) = (0, 0);
    while p < pattern.len() {
        match pattern[p] {
            '*' => {
                let double = pattern.get(p + 1) == Some(&'*');
                let rest = &pattern[p + if double { 2 } else { 1 }..];
                for end in n..=name.len() {
                    if !double && name[n..end].contains(&'/') {
                        break;
                    }
                    if match_from(rest, &name[end..], depth + 1) {
                        return true;
                    }
                }
                return false;
            }
            '?' => {
                if n >= name.len() || name[n] == '/' {
                    return false;
                }
            }
            '[' => {
                let Some((matched, width)) =
                    name.get(n).and_then(|c| match_class(&pattern[p..], *c))
                else {
                    return false;
                };
                if !matched {
                    return false;
                }
                p += width;
                n += 1;
                continue;
            }
            '\\' if p + 1 < pattern.len() => {
                p += 1;
                if name.get(n) != Some(&pattern[p]) {
                    return false;
                }
            }
            c => {
                if name.get(n) != Some(&c) {
                    return false;
                }
            }
        }
        p += 1;
        n += 1;
    }
    n == name.len()
}

/// Matches a `[...]` class at the start of `pattern`; returns (matched, pattern width) or `None` if unterminated.
fn match_class(pattern: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(pattern.get(1), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < pattern.len() {
        if pattern[i] == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if pattern.get(i + 1) == Some(&'-') && pattern.get(i + 2).is_some_and(|e| *e != ']') {
            if pattern[i] <= c && c <= pattern[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if pattern[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_star_stays_within_one_path_component() {
        assert!(glob_match("files/*.json", "files/policy.json"));
        assert!(!glob_match("files/*.json", "files/sub/policy.json"));
        assert!(glob_match("files/**.json", "files/sub/policy.json"));
        assert!(glob_match("files/**/*.json", "files/sub/policy.json"));
    }

    #[test]
    fn glob_supports_classes_alternatives_and_question_marks() {
        assert!(glob_match("conf/[a-c]?.{yaml,yml}", "conf/b1.yml"));
        assert!(!glob_match("conf/[!a-c]?.yaml", "conf/b1.yaml"));
        assert!(!glob_match("conf/[a-c", "conf/a"));
    }
}
