//! `.helmignore` rules (a gitignore subset, as Helm's `ignore` package implements it).

use crate::glob::glob_match;

/// A parsed `.helmignore` file.
#[derive(Debug, Default, Clone)]
pub(crate) struct HelmIgnore {
    rules: Vec<Rule>,
}

#[derive(Debug, Clone)]
struct Rule {
    pattern: String,
    negate: bool,
    dir_only: bool,
    /// Patterns without `/` match the base name of any path component.
    base_name: bool,
}

impl HelmIgnore {
    /// Parses the file's lines; blank lines and `#` comments are skipped.
    pub(crate) fn parse(text: &str) -> Self {
        let rules = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| {
                let (negate, line) = match line.strip_prefix('!') {
                    Some(rest) => (true, rest),
                    None => (false, line),
                };
                let (dir_only, line) = match line.strip_suffix('/') {
                    Some(rest) => (true, rest),
                    None => (false, line),
                };
                let pattern = line.trim_start_matches('/').to_string();
                Rule {
                    base_name: !line.contains('/'),
                    pattern,
                    negate,
                    dir_only,
                }
            })
            .collect();
        Self { rules }
    }

    /// Whether the file at `path` (relative, `/`-separated) is ignored; `.helmignore` itself never is.
    pub(crate) fn ignores(&self, path: &str) -> bool {
        if path == ".helmignore" {
            return false;
        }
        let mut ignored = false;
        for rule in &self.rules {
            if rule.matches(path) {
                ignored = !rule.negate;
            }
        }
        ignored
    }
}

impl Rule {
    fn matches(&self, path: &str) -> bool {
        let components: Vec<&str> = path.split('/').collect();
        // Any directory prefix of the path, or the file itself (unless the rule is for directories only).
        let last = components.len();
        (1..=last).any(|n| {
            let is_file = n == last;
            if is_file && self.dir_only {
                return false;
            }
            if self.base_name {
                glob_match(&self.pattern, components[n - 1])
            } else {
                glob_match(&self.pattern, &components[..n].join("/"))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helmignore_ignores_base_names_directories_and_honours_negation() {
        let ignore = HelmIgnore::parse("# comment\n*.bak\nsecret/\n!keep.bak\n/docs/*.md\n");
        assert!(ignore.ignores("templates/x.bak"));
        assert!(!ignore.ignores("templates/keep.bak"));
        assert!(ignore.ignores("secret/a.yaml"));
        assert!(ignore.ignores("docs/readme.md"));
        assert!(!ignore.ignores("templates/readme.md"));
        assert!(!ignore.ignores(".helmignore"));
    }
}
