//! Sprig string and regex functions (Go argument order: piped value last).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use minijinja::Error;
use minijinja::value::Value;
use regex::Regex;

use super::gostruct::GoSlice;
use super::value::{GoMap, MapType, go_string, is_nil, list_items, to_go_string, to_i64};
use super::{arg, arg_str, fail, gostring, printf, want};
use crate::meter;

/// `trim s`
pub(crate) fn trim(args: &[Value]) -> Result<Value, Error> {
    want("trim", args, 1)?;
    Ok(Value::from(arg_str(args, 0).trim_matches(is_unicode_space)))
}

fn is_unicode_space(c: char) -> bool {
    c.is_whitespace()
}

/// `trimAll cutset s`
pub(crate) fn trim_all(args: &[Value]) -> Result<Value, Error> {
    want("trimAll", args, 2)?;
    let cutset: Vec<char> = arg_str(args, 0).chars().collect();
    Ok(Value::from(
        arg_str(args, 1).trim_matches(|c| cutset.contains(&c)),
    ))
}

/// `trimPrefix prefix s`
pub(crate) fn trim_prefix(args: &[Value]) -> Result<Value, Error> {
    want("trimPrefix", args, 2)?;
    let (prefix, s) = (arg_str(args, 0), arg_str(args, 1));
    Ok(Value::from(s.strip_prefix(prefix.as_str()).unwrap_or(&s)))
}

/// `trimSuffix suffix s`
pub(crate) fn trim_suffix(args: &[Value]) -> Result<Value, Error> {
    want("trimSuffix", args, 2)?;
    let (suffix, s) = (arg_str(args, 0), arg_str(args, 1));
    Ok(Value::from(s.strip_suffix(suffix.as_str()).unwrap_or(&s)))
}

/// `upper s`
pub(crate) fn upper(args: &[Value]) -> Result<Value, Error> {
    want("upper", args, 1)?;
    // Go's rune-wise mapping turns a stray byte into U+FFFD.
    Ok(Value::from(
        gostring::printable(&arg_str(args, 0)).to_uppercase(),
    ))
}

/// `lower s`
pub(crate) fn lower(args: &[Value]) -> Result<Value, Error> {
    want("lower", args, 1)?;
    Ok(Value::from(
        gostring::printable(&arg_str(args, 0)).to_lowercase(),
    ))
}

/// `title s`: upper-cases the first letter of every word (Go's deprecated `strings.Title`).
pub(crate) fn title(args: &[Value]) -> Result<Value, Error> {
    want("title", args, 1)?;
    // Go's rune-wise functions see a stray byte as U+FFFD.
    Ok(Value::from(go_title(&gostring::printable(&arg_str(
        args, 0,
    )))))
}

/// Go's `strings.Title`: a character after a separator is upper-cased (by a one-character mapping only, so `ß`
/// stays). Separators are ASCII characters other than letters, digits and `_` (so `'` and `-` start words), and
/// non-ASCII spaces.
fn go_title(text: &str) -> String {
    let is_separator = |c: char| {
        if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else {
            !c.is_alphanumeric() && c.is_whitespace()
        }
    };
    let mut out = String::with_capacity(text.len());
    let mut previous = ' ';
    for c in text.chars() {
        if is_separator(previous) {
            let mut upper = c.to_uppercase();
            match (upper.next(), upper.next()) {
                (Some(single), None) => out.push(single),
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
        previous = c;
    }
    out
}

/// `untitle s`: lower-cases the first letter of every word.
pub(crate) fn untitle(args: &[Value]) -> Result<Value, Error> {
    want("untitle", args, 1)?;
    let mut out = String::new();
    let mut previous_space = true;
    for c in gostring::printable(&arg_str(args, 0)).chars() {
        if previous_space && !c.is_whitespace() {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
        previous_space = c.is_whitespace();
    }
    Ok(Value::from(out))
}

/// `repeat n s`
pub(crate) fn repeat(args: &[Value]) -> Result<Value, Error> {
    want("repeat", args, 2)?;
    let count = usize::try_from(to_i64(&args[0])).unwrap_or(0);
    let s = arg_str(args, 1);
    meter::check_bytes("repeat", s.len().saturating_mul(count))?;
    Ok(Value::from(s.repeat(count)))
}

/// `substr start end s` (byte offsets like Go; a negative start is 0, end < 0 or past the end means the end).
pub(crate) fn substr(args: &[Value]) -> Result<Value, Error> {
    want("substr", args, 3)?;
    let text = arg_str(args, 2);
    let s = gostring::to_bytes(&text);
    let len = s.len() as i64;
    let mut start = to_i64(&args[0]);
    let mut end = to_i64(&args[1]);
    if start < 0 {
        start = 0;
    }
    if end < 0 || end > len {
        end = len;
    }
    if start > end {
        // Sprig slices the string unchecked; Go panics and Helm reports it.
        return Err(fail(format!(
            "error calling substr: runtime error: slice bounds out of range [{start}:{end}]"
        )));
    }
    Ok(Value::from(gostring::from_bytes(
        &s[start as usize..end as usize],
    )))
}

/// `nospace s`
pub(crate) fn nospace(args: &[Value]) -> Result<Value, Error> {
    want("nospace", args, 1)?;
    Ok(Value::from(
        arg_str(args, 0)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>(),
    ))
}

/// `trunc n s`: first n bytes, or the last |n| for negative n.
pub(crate) fn trunc(args: &[Value]) -> Result<Value, Error> {
    want("trunc", args, 2)?;
    let n = to_i64(&args[0]);
    let text = arg_str(args, 1);
    let bytes = gostring::to_bytes(&text);
    let len = bytes.len() as i64;
    let out = if n < 0 && len + n > 0 {
        &bytes[(len + n) as usize..]
    } else if n >= 0 && len > n {
        &bytes[..n as usize]
    } else {
        &bytes[..]
    };
    Ok(Value::from(gostring::from_bytes(out)))
}

/// `abbrev width s`
pub(crate) fn abbrev(args: &[Value]) -> Result<Value, Error> {
    want("abbrev", args, 2)?;
    let width = to_i64(&args[0]);
    let s = arg_str(args, 1);
    if width < 4 {
        return Ok(Value::from(s));
    }
    // goutils' `Abbreviate`, which counts bytes.
    Ok(Value::from(super::text::abbreviate_full(&s, 0, width)))
}

/// `initials s`
pub(crate) fn initials(args: &[Value]) -> Result<Value, Error> {
    want("initials", args, 1)?;
    Ok(Value::from(byte_initials(&arg_str(args, 0))))
}

/// goutils' `Initials`, which walks bytes: the first byte of each word becomes the character of that number
/// (`ü`, bytes C3 BC, gives `Ã`), and a byte that is a Latin-1 space (`\u{85}`, `\u{a0}`) separates words.
fn byte_initials(text: &str) -> String {
    let mut out = String::new();
    let mut after_gap = true;
    for &byte in gostring::to_bytes(text).iter() {
        let ch = char::from(byte);
        if ch.is_whitespace() {
            after_gap = true;
        } else if after_gap {
            out.push(ch);
            after_gap = false;
        }
    }
    out
}

/// `contains substr s`
pub(crate) fn contains(args: &[Value]) -> Result<Value, Error> {
    want("contains", args, 2)?;
    Ok(Value::from(
        arg_str(args, 1).contains(arg_str(args, 0).as_str()),
    ))
}

/// `hasPrefix prefix s`
pub(crate) fn has_prefix(args: &[Value]) -> Result<Value, Error> {
    want("hasPrefix", args, 2)?;
    Ok(Value::from(
        arg_str(args, 1).starts_with(arg_str(args, 0).as_str()),
    ))
}

/// `hasSuffix suffix s`
pub(crate) fn has_suffix(args: &[Value]) -> Result<Value, Error> {
    want("hasSuffix", args, 2)?;
    Ok(Value::from(
        arg_str(args, 1).ends_with(arg_str(args, 0).as_str()),
    ))
}

/// `quote a b …`: each non-nil argument Go-quoted, joined by spaces.
pub(crate) fn quote(args: &[Value]) -> Result<Value, Error> {
    meter::check_printed("quote", args)?;
    let parts: Vec<String> = args
        .iter()
        .filter(|a| !is_nil(a))
        .map(|a| printf::quote_go(&to_go_string(a)))
        .collect();
    Ok(Value::from(parts.join(" ")))
}

/// `squote a b …`: each non-nil argument in single quotes, joined by spaces.
pub(crate) fn squote(args: &[Value]) -> Result<Value, Error> {
    meter::check_printed("squote", args)?;
    let parts: Vec<String> = args
        .iter()
        .filter(|a| !is_nil(a))
        // Sprig's squote prints with `%v` (bytes as numbers), where quote converts to a string.
        .map(|a| format!("'{}'", go_string(a)))
        .collect();
    Ok(Value::from(parts.join(" ")))
}

/// `cat a b …`: non-nil arguments printed and joined by spaces.
pub(crate) fn cat(args: &[Value]) -> Result<Value, Error> {
    meter::check_printed("cat", args)?;
    let parts: Vec<String> = args.iter().filter(|a| !is_nil(a)).map(go_string).collect();
    Ok(Value::from(parts.join(" ")))
}

/// `indent n s`: pads the first line and every line after a newline.
pub(crate) fn indent(args: &[Value]) -> Result<Value, Error> {
    want("indent", args, 2)?;
    Ok(Value::from(indented("indent", args, false)?))
}

fn indented(name: &str, args: &[Value], leading_newline: bool) -> Result<String, Error> {
    let width = usize::try_from(to_i64(&args[0])).unwrap_or(0).min(4096);
    let text = args[1]
        .as_str()
        .map_or_else(|| arg_str(args, 1).into(), std::borrow::Cow::Borrowed);
    let lines = crate::gotmpl::count_newlines(&text) + 1;
    meter::check_bytes(
        name,
        text.len().saturating_add(lines.saturating_mul(width)) + 1,
    )?;
    let mut out = String::with_capacity(text.len() + lines * width + 1);
    if leading_newline {
        out.push('\n');
    }
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.extend(std::iter::repeat_n(' ', width));
        out.push_str(line);
    }
    Ok(out)
}

/// `nindent n s`: a newline, then `indent n s`.
pub(crate) fn nindent(args: &[Value]) -> Result<Value, Error> {
    want("nindent", args, 2)?;
    Ok(Value::from(indented("nindent", args, true)?))
}

/// `replace old new s`: replaces all occurrences.
pub(crate) fn replace(args: &[Value]) -> Result<Value, Error> {
    want("replace", args, 3)?;
    let (old, new, s) = (arg_str(args, 0), arg_str(args, 1), arg_str(args, 2));
    let places = if old.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(old.as_str()).count()
    };
    let grown = places.saturating_mul(new.len().saturating_sub(old.len()));
    meter::check_bytes("replace", s.len().saturating_add(grown))?;
    if old.is_empty() {
        // Go inserts `new` around every rune when `old` is empty.
        let mut out = new.clone();
        for c in s.chars() {
            out.push(c);
            out.push_str(&new);
        }
        return Ok(Value::from(out));
    }
    Ok(Value::from(s.replace(old.as_str(), &new)))
}

/// `plural one many n`
pub(crate) fn plural(args: &[Value]) -> Result<Value, Error> {
    want("plural", args, 3)?;
    Ok(args[if to_i64(&args[2]) == 1 { 0 } else { 1 }].clone())
}

/// `snakecase s`
pub(crate) fn snakecase(args: &[Value]) -> Result<Value, Error> {
    want("snakecase", args, 1)?;
    Ok(Value::from(super::wordcase::lower_words(
        &arg_str(args, 0),
        '_',
    )))
}

/// `kebabcase s`
pub(crate) fn kebabcase(args: &[Value]) -> Result<Value, Error> {
    want("kebabcase", args, 1)?;
    Ok(Value::from(super::wordcase::lower_words(
        &arg_str(args, 0),
        '-',
    )))
}

/// `camelcase s`: `foo_bar` → `FooBar`.
pub(crate) fn camelcase(args: &[Value]) -> Result<Value, Error> {
    want("camelcase", args, 1)?;
    Ok(Value::from(super::wordcase::camel(&arg_str(args, 0))))
}

/// `split sep s`: a map `_0`, `_1`, … of the parts.
pub(crate) fn split(args: &[Value]) -> Result<Value, Error> {
    want("split", args, 2)?;
    let (sep, s) = (arg_str(args, 0), arg_str(args, 1));
    let parts = go_split("split", &s, &sep, None)?;
    Ok(GoMap::typed(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| (format!("_{i}"), Value::from(p)))
            .collect(),
        MapType::Strings,
    ))
}

/// `splitn sep n s`: like `split` with at most n parts.
pub(crate) fn splitn(args: &[Value]) -> Result<Value, Error> {
    want("splitn", args, 3)?;
    let (sep, n, s) = (arg_str(args, 0), to_i64(&args[1]), arg_str(args, 2));
    let parts = go_split("splitn", &s, &sep, usize::try_from(n).ok())?;
    Ok(GoMap::typed(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| (format!("_{i}"), Value::from(p)))
            .collect(),
        MapType::Strings,
    ))
}

/// `splitList sep s`
pub(crate) fn split_list(args: &[Value]) -> Result<Value, Error> {
    want("splitList", args, 2)?;
    let parts = go_split("splitList", &arg_str(args, 1), &arg_str(args, 0), None)?;
    Ok(GoSlice::value(
        "[]string",
        parts.into_iter().map(Value::from).collect(),
    ))
}

/// Go's `strings.Split`/`SplitN`: an empty separator splits into runes.
fn go_split(name: &str, s: &str, sep: &str, limit: Option<usize>) -> Result<Vec<String>, Error> {
    if limit == Some(0) {
        return Ok(Vec::new());
    }
    let parts = if sep.is_empty() {
        s.chars().count()
    } else {
        s.matches(sep).count() + 1
    };
    meter::check_items(name, limit.map_or(parts, |n| parts.min(n)))?;
    if sep.is_empty() {
        return Ok(s.chars().map(String::from).collect());
    }
    Ok(match limit {
        Some(n) => s.splitn(n, sep).map(String::from).collect(),
        None => s.split(sep).map(String::from).collect(),
    })
}

/// `join sep list`: elements printed with `%v` and joined.
pub(crate) fn join(args: &[Value]) -> Result<Value, Error> {
    want("join", args, 2)?;
    let sep = arg_str(args, 0);
    meter::check_printed("join", &args[1..])?;
    let count = list_items(&args[1]).map_or(1, |items| items.len());
    meter::check_bytes("join", sep.len().saturating_mul(count))?;
    let items = match list_items(&args[1]) {
        Some(items) => items
            .iter()
            .filter(|v| !is_nil(v))
            .map(to_go_string)
            .collect::<Vec<_>>(),
        None if is_nil(&args[1]) => Vec::new(),
        None => vec![to_go_string(&args[1])],
    };
    Ok(Value::from(items.join(&sep)))
}

static REGEX_CACHE: LazyLock<Mutex<HashMap<String, Regex>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn regex(pattern: &str) -> Result<Regex, Error> {
    let mut cache = REGEX_CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(found) = cache.get(pattern) {
        return Ok(found.clone());
    }
    let compiled = regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| fail(format!("error parsing regexp: {e}")))?;
    if cache.len() > 256 {
        cache.clear();
    }
    cache.insert(pattern.to_string(), compiled.clone());
    Ok(compiled)
}

/// `regexMatch regex s`
pub(crate) fn regex_match(args: &[Value]) -> Result<Value, Error> {
    want("regexMatch", args, 2)?;
    Ok(Value::from(
        regex(&arg_str(args, 0))?.is_match(&arg_str(args, 1)),
    ))
}

/// `regexFind regex s`: the first match or "".
pub(crate) fn regex_find(args: &[Value]) -> Result<Value, Error> {
    want("regexFind", args, 2)?;
    let s = arg_str(args, 1);
    Ok(Value::from(
        regex(&arg_str(args, 0))?
            .find(&s)
            .map_or("", |m| m.as_str()),
    ))
}

/// `regexFindAll regex s n`: up to n matches (n < 0: all).
pub(crate) fn regex_find_all(args: &[Value]) -> Result<Value, Error> {
    want("regexFindAll", args, 3)?;
    let s = arg_str(args, 1);
    let limit = usize::try_from(to_i64(&args[2])).unwrap_or(usize::MAX);
    let re = regex(&arg_str(args, 0))?;
    meter::check_items("regexFindAll", re.find_iter(&s).take(limit).count())?;
    let found: Vec<Value> = re
        .find_iter(&s)
        .take(limit)
        .map(|m| Value::from(m.as_str()))
        .collect();
    // Go's FindAllString answers a nil slice, not an empty one, when nothing matches.
    Ok(GoSlice::nil_if_empty("[]string", found))
}

/// `regexReplaceAll regex s repl` (`$1` expands groups).
pub(crate) fn regex_replace_all(args: &[Value]) -> Result<Value, Error> {
    want("regexReplaceAll", args, 3)?;
    let s = arg_str(args, 1);
    let replacement = arg_str(args, 2);
    bounded_replace(
        "regexReplaceAll",
        &regex(&arg_str(args, 0))?,
        &s,
        |caps: &regex::Captures<'_>, out: &mut String| caps.expand(&replacement, out),
    )
}

/// `regexReplaceAllLiteral regex s repl`
pub(crate) fn regex_replace_all_literal(args: &[Value]) -> Result<Value, Error> {
    want("regexReplaceAllLiteral", args, 3)?;
    let s = arg_str(args, 1);
    let replacement = arg_str(args, 2);
    bounded_replace(
        "regexReplaceAllLiteral",
        &regex(&arg_str(args, 0))?,
        &s,
        |_: &regex::Captures<'_>, out: &mut String| out.push_str(&replacement),
    )
}

/// `re.replace_all` that stops appending once the result is over the value limit: a pattern
/// matching everywhere with a long replacement would otherwise multiply the input's size.
fn bounded_replace(
    name: &str,
    re: &Regex,
    s: &str,
    append: impl FnMut(&regex::Captures<'_>, &mut String),
) -> Result<Value, Error> {
    let replaced = re.replace_all(
        s,
        Bounded {
            bound: meter::value_bytes_limit(),
            append,
        },
    );
    meter::check_bytes(name, replaced.len())?;
    Ok(Value::from(replaced.into_owned()))
}

/// A replacer that appends nothing more once the result is past `bound` (the caller then fails).
struct Bounded<F> {
    bound: usize,
    append: F,
}

impl<F: FnMut(&regex::Captures<'_>, &mut String)> regex::Replacer for Bounded<F> {
    fn replace_append(&mut self, caps: &regex::Captures<'_>, dst: &mut String) {
        if dst.len() <= self.bound {
            (self.append)(caps, dst);
        }
    }
}

/// `regexSplit regex s n`
pub(crate) fn regex_split(args: &[Value]) -> Result<Value, Error> {
    want("regexSplit", args, 3)?;
    let s = arg_str(args, 1);
    let limit = to_i64(&args[2]);
    let re = regex(&arg_str(args, 0))?;
    let pieces = re.find_iter(&s).count() + 1;
    let wanted = usize::try_from(limit).map_or(pieces, |n| pieces.min(n));
    meter::check_items("regexSplit", wanted)?;
    let parts: Vec<Value> = if limit < 0 {
        re.split(&s).map(Value::from).collect()
    } else {
        re.splitn(&s, limit as usize).map(Value::from).collect()
    };
    Ok(GoSlice::value("[]string", parts))
}

/// `toString v`
pub(crate) fn to_string(args: &[Value]) -> Result<Value, Error> {
    want("toString", args, 1)?;
    meter::check_printed("toString", args)?;
    Ok(Value::from(to_go_string(&args[0])))
}

/// `html s`: Go's `html` builtin escaping.
pub(crate) fn html(args: &[Value]) -> Result<Value, Error> {
    let s: String = args.iter().map(to_go_string).collect();
    Ok(Value::from(
        s.replace('&', "&amp;")
            .replace('\'', "&#39;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&#34;")
            .replace('\0', "\u{fffd}"),
    ))
}

/// `urlquery s`: query escaping.
pub(crate) fn urlquery(args: &[Value]) -> Result<Value, Error> {
    let s: String = args.iter().map(to_go_string).collect();
    let mut out = String::new();
    for &byte in gostring::to_bytes(&s).iter() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    Ok(Value::from(out))
}

/// `sortAlpha list`: elements as strings, sorted.
pub(crate) fn sort_alpha(args: &[Value]) -> Result<Value, Error> {
    want("sortAlpha", args, 1)?;
    meter::check_printed("sortAlpha", args)?;
    // Sprig sorts a `[]string` in place of its string-slice conversion: a nil one stays nil.
    if super::gostruct::is_string_slice(&args[0])
        && list_items(&args[0]).is_some_and(|l| l.is_empty())
    {
        return Ok(args[0].clone());
    }
    let mut items: Vec<String> = match list_items(&args[0]) {
        // Sprig's string-slice conversion leaves nil elements out.
        Some(items) => items
            .iter()
            .filter(|v| !is_nil(v))
            .map(to_go_string)
            .collect(),
        None => vec![to_go_string(&args[0])],
    };
    items.sort();
    Ok(GoSlice::value(
        "[]string",
        items.into_iter().map(Value::from).collect(),
    ))
}

/// `print a b …`: Go's `fmt.Sprint` (spaces only between operands that are not both strings).
pub(crate) fn print(args: &[Value]) -> Result<Value, Error> {
    meter::check_printed("print", args)?;
    let mut out = String::new();
    for (i, value) in args.iter().enumerate() {
        let is_string = value.as_str().is_some();
        if i > 0 && !is_string && args[i - 1].as_str().is_none() {
            out.push(' ');
        }
        out.push_str(&go_string(value));
    }
    Ok(Value::from(out))
}

/// `println a b …`: operands separated by spaces, newline at the end.
pub(crate) fn println(args: &[Value]) -> Result<Value, Error> {
    meter::check_printed("println", args)?;
    let parts: Vec<String> = args.iter().map(go_string).collect();
    Ok(Value::from(format!("{}\n", parts.join(" "))))
}

/// `printf format a b …`
pub(crate) fn printf_fn(args: &[Value]) -> Result<Value, Error> {
    meter::check_printed("printf", args)?;
    let format = arg(args, 0).map(to_go_string).unwrap_or_default();
    Ok(Value::from(printf::sprintf(
        &format,
        args.get(1..).unwrap_or_default(),
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Helm v3.11.3 answers for the same texts.
    #[test]
    fn title_starts_words_after_go_separators() {
        assert_eq!(
            go_title("'diff' don't x-y a_b 1a ßa éa über.x"),
            "'Diff' Don'T X-Y A_b 1a ßa Éa Über.X"
        );
        assert_eq!(go_title("hello\u{a0}world"), "Hello\u{a0}World");
    }

    /// Helm v3.11.3 answers for the same words.
    #[test]
    fn initials_take_the_first_byte_of_each_word() {
        for (text, want) in [
            ("hello world", "hw"),
            ("ün", "\u{c3}"),
            ("ünï cödé", "\u{c3}c"),
            ("  a\tb\nc ", "abc"),
            ("", ""),
        ] {
            assert_eq!(byte_initials(text), want, "{text:?}");
        }
    }

    fn s(v: &str) -> Value {
        Value::from(v)
    }

    #[test]
    fn trunc_and_indent_behave_like_sprig() {
        assert_eq!(
            trunc(&[Value::from(3), s("abcdef")]).unwrap().to_string(),
            "abc"
        );
        assert_eq!(
            trunc(&[Value::from(-2), s("abcdef")]).unwrap().to_string(),
            "ef"
        );
        assert_eq!(
            trunc(&[Value::from(10), s("ab")]).unwrap().to_string(),
            "ab"
        );
        assert_eq!(
            indent(&[Value::from(2), s("a\nb")]).unwrap().to_string(),
            "  a\n  b"
        );
        assert_eq!(
            nindent(&[Value::from(2), s("a")]).unwrap().to_string(),
            "\n  a"
        );
    }

    #[test]
    fn quote_skips_nil_and_formats_numbers() {
        assert_eq!(quote(&[Value::from(7)]).unwrap().to_string(), "\"7\"");
        assert_eq!(quote(&[Value::UNDEFINED]).unwrap().to_string(), "");
        assert_eq!(
            quote(&[Value::from(8080.0), s("a\"b")])
                .unwrap()
                .to_string(),
            "\"8080\" \"a\\\"b\""
        );
        assert_eq!(squote(&[s("x")]).unwrap().to_string(), "'x'");
    }

    #[test]
    fn string_helpers_follow_go_semantics() {
        assert_eq!(
            title(&[s("gardener seed agent")]).unwrap().to_string(),
            "Gardener Seed Agent"
        );
        assert_eq!(
            trim_suffix(&[s("-"), s("name-")]).unwrap().to_string(),
            "name"
        );
        assert_eq!(
            replace(&[s("+"), s("_"), s("1+2+3")]).unwrap().to_string(),
            "1_2_3"
        );
        assert_eq!(split_list(&[s(","), s("a,b,c")]).unwrap().len(), Some(3));
        assert_eq!(
            split(&[s("."), s("a.b")])
                .unwrap()
                .get_attr("_1")
                .unwrap()
                .to_string(),
            "b"
        );
        assert_eq!(
            join(&[s(","), Value::from(vec![Value::from(1), Value::from("x")])])
                .unwrap()
                .to_string(),
            "1,x"
        );
        assert_eq!(
            snakecase(&[s("fooBar baz")]).unwrap().to_string(),
            "foo_bar_baz"
        );
        assert_eq!(
            substr(&[Value::from(1), Value::from(3), s("abcd")])
                .unwrap()
                .to_string(),
            "bc"
        );
    }

    #[test]
    fn regex_functions_use_go_argument_order() {
        assert_eq!(
            regex_replace_all(&[s("[0-9]+"), s("seed-123-abc-45"), s("N")])
                .unwrap()
                .to_string(),
            "seed-N-abc-N"
        );
        assert!(regex_match(&[s("^a.c$"), s("abc")]).unwrap().is_true());
        assert_eq!(
            regex_find(&[s("[0-9]+"), s("ab12cd34")])
                .unwrap()
                .to_string(),
            "12"
        );
        assert!(regex_match(&[s("("), s("x")]).is_err());
    }

    #[test]
    fn print_spaces_only_between_non_strings() {
        assert_eq!(
            print(&[s("a"), s("b"), Value::from(1), Value::from(2)])
                .unwrap()
                .to_string(),
            "ab1 2"
        );
        assert_eq!(print(&[Value::UNDEFINED]).unwrap().to_string(), "<nil>");
    }
}
