//! Label selectors (the full kube grammar) and field selectors, with kube-apiserver's parse errors.

use std::collections::BTreeSet;

use serde_json::Value;

/// A parsed label selector: all requirements must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
    Exists(String),
    DoesNotExist(String),
    GreaterThan(String, i64),
    LessThan(String, i64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Identifier(String),
    Not,
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    Open,
    Close,
    Comma,
    Greater,
    Less,
}

impl Token {
    fn literal(&self) -> String {
        match self {
            Token::Identifier(s) => s.clone(),
            Token::Not => "!".into(),
            Token::Equals => "=".into(),
            Token::DoubleEquals => "==".into(),
            Token::NotEquals => "!=".into(),
            Token::In => "in".into(),
            Token::NotIn => "notin".into(),
            Token::Open => "(".into(),
            Token::Close => ")".into(),
            Token::Comma => ",".into(),
            Token::Greater => ">".into(),
            Token::Less => "<".into(),
        }
    }
}

fn is_special(c: char) -> bool {
    matches!(c, '!' | '=' | '(' | ')' | ',' | '>' | '<')
}

fn lex(input: &str) -> Vec<Token> {
    let chars: Vec<char> = input.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if is_special(c) {
            let next = chars.get(i + 1).copied();
            let (token, width) = match (c, next) {
                ('!', Some('=')) => (Token::NotEquals, 2),
                ('=', Some('=')) => (Token::DoubleEquals, 2),
                ('!', _) => (Token::Not, 1),
                ('=', _) => (Token::Equals, 1),
                ('(', _) => (Token::Open, 1),
                (')', _) => (Token::Close, 1),
                (',', _) => (Token::Comma, 1),
                ('>', _) => (Token::Greater, 1),
                _ => (Token::Less, 1),
            };
            out.push(token);
            i += width;
            continue;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() && !is_special(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        out.push(match word.as_str() {
            "in" => Token::In,
            "notin" => Token::NotIn,
            _ => Token::Identifier(word),
        });
    }
    out
}

struct Parser {
    tokens: Vec<Token>,
    position: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.position)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.position).cloned();
        self.position += 1;
        token
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let negated = if self.peek() == Some(&Token::Not) {
            self.next();
            true
        } else {
            false
        };
        let key = match self.next() {
            Some(Token::Identifier(key)) => key,
            Some(other) => {
                return Err(format!("found '{}', expected: identifier", other.literal()));
            }
            None => return Err("found '', expected: identifier".into()),
        };
        validate_label_key(&key)?;
        if negated {
            return Ok(Requirement::DoesNotExist(key));
        }
        let op = match self.peek() {
            None | Some(Token::Comma) => return Ok(Requirement::Exists(key)),
            Some(_) => self.next().unwrap_or(Token::Comma),
        };
        match op {
            Token::Equals | Token::DoubleEquals | Token::NotEquals => {
                let value = self.single_value()?;
                Ok(if op == Token::NotEquals {
                    Requirement::NotEquals(key, value)
                } else {
                    Requirement::Equals(key, value)
                })
            }
            Token::In | Token::NotIn => {
                let values = self.value_set()?;
                Ok(if op == Token::In {
                    Requirement::In(key, values)
                } else {
                    Requirement::NotIn(key, values)
                })
            }
            Token::Greater | Token::Less => {
                let value = self.single_value()?;
                let number: i64 = value.parse().map_err(|_| {
                    "for 'Gt', 'Lt' operators, the value must be an integer".to_string()
                })?;
                Ok(if op == Token::Greater {
                    Requirement::GreaterThan(key, number)
                } else {
                    Requirement::LessThan(key, number)
                })
            }
            other => Err(format!(
                "found '{}', expected: '=', '!=', '==', 'in', notin'",
                other.literal()
            )),
        }
    }

    fn single_value(&mut self) -> Result<String, String> {
        match self.peek() {
            Some(Token::Identifier(_)) => match self.next() {
                Some(Token::Identifier(value)) => {
                    validate_label_value(&value)?;
                    Ok(value)
                }
                _ => Ok(String::new()),
            },
            None | Some(Token::Comma) => Ok(String::new()),
            Some(other) => Err(format!("found '{}', expected: identifier", other.literal())),
        }
    }

    fn value_set(&mut self) -> Result<BTreeSet<String>, String> {
        match self.next() {
            Some(Token::Open) => {}
            Some(other) => return Err(format!("found '{}' expected: '('", other.literal())),
            None => return Err("found '' expected: '('".into()),
        }
        let mut values = BTreeSet::new();
        loop {
            match self.next() {
                Some(Token::Identifier(value)) => {
                    validate_label_value(&value)?;
                    values.insert(value);
                    match self.next() {
                        Some(Token::Comma) => continue,
                        Some(Token::Close) => return Ok(values),
                        Some(other) => {
                            return Err(format!(
                                "found '{}', expected: ',' or ')'",
                                other.literal()
                            ));
                        }
                        None => return Err("found '', expected: ',' or ')'".into()),
                    }
                }
                Some(Token::Close) => return Ok(values),
                Some(Token::Comma) => {
                    values.insert(String::new());
                }
                Some(other) => {
                    return Err(format!(
                        "found '{}', expected: ',', ')' or identifier",
                        other.literal()
                    ));
                }
                None => return Err("found '', expected: ',', ')' or identifier".into()),
            }
        }
    }
}

fn validate_label_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let prefix_ok = prefix.is_none_or(crate::registry::validation::is_dns1123_subdomain);
    if name_ok && prefix_ok {
        Ok(())
    } else {
        Err(format!(
            "invalid label key \"{key}\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ))
    }
}

fn validate_label_value(value: &str) -> Result<(), String> {
    let ok = value.is_empty()
        || (value.len() <= 63
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && value.starts_with(|c: char| c.is_ascii_alphanumeric())
            && value.ends_with(|c: char| c.is_ascii_alphanumeric()));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid label value: \"{value}\": at key: : a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ))
    }
}

impl LabelSelector {
    /// Parses `env=prod,tier in (web),!legacy`; the error is kube-apiserver's 400 message.
    pub fn parse(input: &str) -> Result<Self, String> {
        let mut parser = Parser {
            tokens: lex(input),
            position: 0,
        };
        let mut requirements = Vec::new();
        if parser.tokens.is_empty() {
            return Ok(LabelSelector::default());
        }
        loop {
            let requirement = parser
                .requirement()
                .map_err(|e| format!("unable to parse requirement: {e}"))?;
            requirements.push(requirement);
            match parser.next() {
                None => break,
                Some(Token::Comma) => continue,
                Some(other) => {
                    return Err(format!(
                        "found '{}', expected: ',' or 'end of string'",
                        other.literal()
                    ));
                }
            }
        }
        Ok(LabelSelector { requirements })
    }

    /// Whether the selector selects nothing-in-particular (matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The `key=value` (and `key==value`) requirements: every matching object carries these labels,
    /// so a label index can narrow a list to them.
    pub fn equalities(&self) -> impl Iterator<Item = (&str, &str)> {
        self.requirements.iter().filter_map(|r| match r {
            Requirement::Equals(k, v) => Some((k.as_str(), v.as_str())),
            _ => None,
        })
    }

    /// Whether an object's labels satisfy every requirement.
    pub fn matches(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Requirement::In(k, vs) => label(k).is_some_and(|l| vs.contains(l)),
            Requirement::NotIn(k, vs) => label(k).is_none_or(|l| !vs.contains(l)),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::DoesNotExist(k) => label(k).is_none(),
            Requirement::GreaterThan(k, n) => label(k)
                .and_then(|l| l.parse::<i64>().ok())
                .is_some_and(|l| l > *n),
            Requirement::LessThan(k, n) => label(k)
                .and_then(|l| l.parse::<i64>().ok())
                .is_some_and(|l| l < *n),
        })
    }
}

/// A parsed field selector: `field=value` / `field!=value` terms, all of which must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<(String, bool, String)>,
}

/// Fields every kind can be selected by.
const COMMON_FIELDS: &[&str] = &["metadata.name", "metadata.namespace"];

impl FieldSelector {
    /// Parses a field selector for objects that can be selected by `metadata.name`,
    /// `metadata.namespace` and the kind's `selectable` fields; the error is kube-apiserver's 400
    /// message.
    pub fn parse(input: &str, selectable: &[&str]) -> Result<Self, String> {
        let mut terms = Vec::new();
        for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                ));
            };
            let field = field.trim();
            if !COMMON_FIELDS.contains(&field) && !selectable.contains(&field) {
                return Err(format!(
                    "\"{field}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                ));
            }
            terms.push((field.to_string(), equal, value.trim().to_string()));
        }
        Ok(FieldSelector { terms })
    }

    /// Whether the selector is empty.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The `field=value` terms (an index can answer these).
    pub fn equalities(&self) -> impl Iterator<Item = (&str, &str)> {
        self.terms
            .iter()
            .filter(|(_, equal, _)| *equal)
            .map(|(field, _, value)| (field.as_str(), value.as_str()))
    }

    /// Whether an object satisfies every term.
    pub fn matches(&self, object: &Value) -> bool {
        self.terms.iter().all(|(field, equal, value)| {
            let actual = field_value(object, field);
            (actual == *value) == *equal
        })
    }
}

fn field_value(object: &Value, field: &str) -> String {
    if field == "source" {
        return object
            .pointer("/source/component")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
    }
    crate::storage::fields::field_value(object, field)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn label_selector_supports_the_full_grammar() {
        let prod_web = labels(json!({"env": "prod", "tier": "web"}));
        let dev = labels(json!({"env": "dev"}));
        let cases = [
            ("env=prod", true, false),
            ("env==dev", false, true),
            ("env!=prod", false, true),
            ("env in (prod, dev)", true, true),
            ("env notin (prod)", false, true),
            ("tier,env=prod", true, false),
            ("!tier", false, true),
            ("", true, true),
        ];
        for (selector, want_prod_web, want_dev) in cases {
            let parsed = LabelSelector::parse(selector).expect("valid selector");
            assert_eq!(
                parsed.matches(Some(&prod_web)),
                want_prod_web,
                "{selector} on prod_web"
            );
            assert_eq!(parsed.matches(Some(&dev)), want_dev, "{selector} on dev");
        }
    }

    #[test]
    fn label_selector_reports_missing_parenthesis_like_kube() {
        let err = LabelSelector::parse("env in prod").expect_err("in needs a set");
        assert_eq!(
            err,
            "unable to parse requirement: found 'prod' expected: '('"
        );
    }

    #[test]
    fn gt_and_lt_compare_integers() {
        let selector = LabelSelector::parse("n>3,m<2").expect("valid");
        assert!(selector.matches(Some(&labels(json!({"n": "4", "m": "1"})))));
        assert!(!selector.matches(Some(&labels(json!({"n": "3", "m": "1"})))));
    }

    #[test]
    fn field_selector_rejects_unknown_fields_with_kube_message() {
        let err = FieldSelector::parse("data.k=1", &[]).expect_err("unknown field");
        assert_eq!(
            err,
            "\"data.k\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
    }

    #[test]
    fn field_selector_matches_name_and_negation() {
        let object = json!({"metadata": {"name": "b", "namespace": "x"}});
        assert!(
            FieldSelector::parse("metadata.name=b", &[])
                .expect("valid")
                .matches(&object)
        );
        assert!(
            !FieldSelector::parse("metadata.name!=b", &[])
                .expect("valid")
                .matches(&object)
        );
        assert!(
            FieldSelector::parse("metadata.namespace==x", &[])
                .expect("valid")
                .matches(&object)
        );
    }
}
