//! go-yaml v2's texts for the YAML failures of `fromYaml` and `fromYamlArray` (Helm v3.11.3 reads both with
//! sigs.k8s.io/yaml over go-yaml v2), made from serde_yaml's text of the same failure: syntax errors, an alias of
//! an anchor the document never defines, and a scalar whose explicit core tag (`!!int`, `!!float`, `!!bool`,
//! `!!null`) does not fit its text.

/// go-yaml v2's text for the failure serde_yaml describes with `message` while reading `text` (the string given to
/// `fromYaml`, before the YAML 1.1 rewrite), without sigs.k8s.io/yaml's `error converting YAML to JSON: `.
pub(super) fn go_yaml_text(message: &str, text: &str) -> String {
    if let Some(go) = unknown_anchor(message, text) {
        return go;
    }
    if let Some(go) = tag_mismatch(message) {
        return go;
    }
    syntax_error(message)
}

/// `yaml: unknown anchor 'NAME' referenced` (no line: go-yaml v2's decoder, not its parser, finds it) for
/// serde_yaml's `unknown anchor at line L column C`, where the alias `*NAME` starts in the text serde_yaml read
/// (`text` after the YAML 1.1 rewrite). The name is read as libyaml scans anchors: ASCII letters, digits, `_` and
/// `-`.
fn unknown_anchor(message: &str, text: &str) -> Option<String> {
    let position = message.strip_prefix("unknown anchor at line ")?;
    let (line, column) = position.split_once(" column ")?;
    let (line, column) = (line.parse::<usize>().ok()?, column.parse::<usize>().ok()?);
    let alias = crate::yaml11::as_yaml11(text)
        .ok()?
        .split('\n')
        .nth(line.checked_sub(1)?)?
        .chars()
        .skip(column.checked_sub(1)?)
        .collect::<String>();
    let name: String = alias
        .strip_prefix('*')?
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    Some(format!("yaml: unknown anchor '{name}' referenced"))
}

/// `yaml: cannot decode !!FOUND `TEXT` as a !!TAG` for serde_yaml's `[PATH: ]invalid value: string "TEXT",
/// expected WHAT at …`, where WHAT names the explicit tag and FOUND is the tag go-yaml v2 resolves the plain
/// scalar TEXT to.
fn tag_mismatch(message: &str) -> Option<String> {
    let (_, refused) = message.split_once("invalid value: string ")?;
    let (quoted, expected) = refused.rsplit_once(", expected ")?;
    let tag = match expected.split(" at line ").next()? {
        "an integer" | "i64" | "u64" => "!!int",
        "a float" | "f64" => "!!float",
        "a boolean" => "!!bool",
        "null" => "!!null",
        _ => return None,
    };
    // Rust's debug quoting, which reads as JSON for the texts a YAML scalar holds on one line.
    let text: String = serde_json::from_str(quoted).ok()?;
    let found = crate::yaml11::go_yaml_plain_tag(&text);
    Some(format!("yaml: cannot decode {found} `{text}` as a {tag}"))
}

/// go-yaml v2's text for a syntax error that `message` (serde_yaml's text of the same libyaml error) describes:
/// `yaml: line N: PROBLEM`, where N is the problem's 0-based line, plus one for a scanner error, and the line is
/// left out when it is 0. serde_yaml writes `PROBLEM at line L column C, while CONTEXT at …` with 1-based
/// positions. A scanner error is one whose context is `while scanning …`, or a `… not allowed in this context`
/// without a context. Texts that are no libyaml problem are kept.
fn syntax_error(message: &str) -> String {
    let (head, context) = match message.split_once(", while ") {
        Some((head, context)) => (head, Some(context)),
        None => (message, None),
    };
    let (problem, line) = match head.rsplit_once(" at line ") {
        Some((problem, position)) => {
            let line = position
                .split_once(" column ")
                .and_then(|(line, _)| line.parse::<usize>().ok());
            match line {
                Some(line) => (problem, line.saturating_sub(1)),
                None => return message.to_string(),
            }
        }
        None => (head.split(" at position ").next().unwrap_or(head), 0),
    };
    let libyaml = context.is_some()
        || problem.starts_with("did not find expected")
        || problem.starts_with("found ")
        || problem.ends_with("not allowed in this context");
    if !libyaml {
        return message.to_string();
    }
    let scanner = context.map_or(problem.ends_with("in this context"), |c| {
        c.starts_with("scanning")
    });
    match line + usize::from(scanner && line != 0) {
        0 => format!("yaml: {problem}"),
        line => format!("yaml: line {line}: {problem}"),
    }
}

#[cfg(test)]
mod tests {
    use super::go_yaml_text;

    #[test]
    fn yaml_errors_read_like_go_yaml_v2() {
        // serde_yaml's texts of the documents in the comments, and go-yaml v2's (Helm v3.11.3's fromYaml).
        for (serde, go) in [
            // `a: [1, 2`: a parser error on the 0-based line 1.
            (
                "did not find expected ',' or ']' at line 2 column 1, while parsing a flow sequence at line 1 column 4",
                "yaml: line 1: did not find expected ',' or ']'",
            ),
            // `a: b: c`: a scanner error on line 0.
            (
                "mapping values are not allowed in this context at line 1 column 5",
                "yaml: mapping values are not allowed in this context",
            ),
            // `a: 1\n b: 2`: a scanner error on the 0-based line 1 is reported on line 2.
            (
                "mapping values are not allowed in this context at line 2 column 3",
                "yaml: line 2: mapping values are not allowed in this context",
            ),
            (
                "found a tab character that violates indentation at line 2 column 1, while scanning a plain scalar at line 1 column 4",
                "yaml: line 2: found a tab character that violates indentation",
            ),
            (
                "found unexpected end of stream at line 1 column 6, while scanning a quoted scalar at line 1 column 4",
                "yaml: found unexpected end of stream",
            ),
            (
                "found character that cannot start any token, while scanning for the next token",
                "yaml: found character that cannot start any token",
            ),
            (
                "did not find expected '-' indicator at line 2 column 1, while parsing a block collection",
                "yaml: line 1: did not find expected '-' indicator",
            ),
            // Not libyaml's: kept.
            (
                "unknown anchor at line 1 column 4",
                "unknown anchor at line 1 column 4",
            ),
        ] {
            assert_eq!(super::syntax_error(serde), go, "{serde}");
        }
    }

    #[test]
    fn anchors_and_tags_read_like_go_yaml_v2() {
        // serde_yaml's text of each document, and Helm v3.11.3's fromYaml text (without its
        // `error converting YAML to JSON: `).
        for (document, serde, go) in [
            (
                "a: *x",
                "unknown anchor at line 1 column 4",
                "yaml: unknown anchor 'x' referenced",
            ),
            (
                "a: &x 1\nb: *y",
                "unknown anchor at line 2 column 4",
                "yaml: unknown anchor 'y' referenced",
            ),
            (
                "- *x",
                "unknown anchor at line 1 column 3",
                "yaml: unknown anchor 'x' referenced",
            ),
            (
                "a: !!int x",
                "a: invalid value: string \"x\", expected an integer at line 1 column 4",
                "yaml: cannot decode !!str `x` as a !!int",
            ),
            (
                "a: !!float x",
                "a: invalid value: string \"x\", expected a float at line 1 column 4",
                "yaml: cannot decode !!str `x` as a !!float",
            ),
            (
                "a: !!bool x",
                "a: invalid value: string \"x\", expected a boolean at line 1 column 4",
                "yaml: cannot decode !!str `x` as a !!bool",
            ),
            (
                "a: !!int 1.5",
                "a: invalid value: string \"1.5\", expected an integer at line 1 column 4",
                "yaml: cannot decode !!float `1.5` as a !!int",
            ),
            (
                "a: !!null x",
                "a: invalid value: string \"x\", expected null at line 1 column 4",
                "yaml: cannot decode !!str `x` as a !!null",
            ),
        ] {
            assert_eq!(go_yaml_text(serde, document), go, "{document}");
        }
    }
}
