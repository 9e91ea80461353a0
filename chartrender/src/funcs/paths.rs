//! Go's `path` (and, on Linux, identical `path/filepath`) functions, and Sprig's `urlParse`/`urlJoin` with Go's
//! `net/url` splitting and escaping.

use minijinja::Error;
use minijinja::value::Value;

use super::value::{GoMap, map_entries, to_go_string};
use super::{arg_str, fail, want};

/// Go's `path.Clean`: lexical processing of `.`, `..` and repeated slashes.
pub(crate) fn clean_path(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `path.Base`.
pub(crate) fn base_name(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// Go's `path.Dir`: everything up to the last slash, cleaned.
pub(crate) fn dir_name(path: &str) -> String {
    let cut = path.rfind('/').map_or(0, |i| i + 1);
    clean_path(&path[..cut])
}

/// Go's `path.Ext`: the suffix from the final dot of the last element.
pub(crate) fn extension(path: &str) -> String {
    for (i, c) in path.char_indices().rev() {
        match c {
            '/' => break,
            '.' => return path[i..].to_string(),
            _ => {}
        }
    }
    String::new()
}

fn one_path(name: &str, args: &[Value], f: fn(&str) -> String) -> Result<Value, Error> {
    want(name, args, 1)?;
    Ok(Value::from(f(&arg_str(args, 0))))
}

/// `base p` / `osBase p`
pub(crate) fn base(args: &[Value]) -> Result<Value, Error> {
    one_path("base", args, base_name)
}

/// `dir p` / `osDir p`
pub(crate) fn dir(args: &[Value]) -> Result<Value, Error> {
    one_path("dir", args, dir_name)
}

/// `clean p` / `osClean p`
pub(crate) fn clean(args: &[Value]) -> Result<Value, Error> {
    one_path("clean", args, clean_path)
}

/// `ext p` / `osExt p`
pub(crate) fn ext(args: &[Value]) -> Result<Value, Error> {
    one_path("ext", args, extension)
}

/// `isAbs p` / `osIsAbs p`
pub(crate) fn is_abs(args: &[Value]) -> Result<Value, Error> {
    want("isAbs", args, 1)?;
    Ok(Value::from(arg_str(args, 0).starts_with('/')))
}

/// The parts of a URL as Go's `net/url` splits them.
#[derive(Debug, Default, PartialEq)]
struct Url {
    scheme: String,
    opaque: String,
    userinfo: Option<String>,
    host: String,
    path: String,
    raw_query: String,
    force_query: bool,
    fragment: String,
}

fn parse_url(raw: &str) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(format!(
            "parse {raw:?}: net/url: invalid control character in URL"
        ));
    }
    let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let mut url = Url {
        fragment: unescape(fragment).map_err(|e| format!("parse {raw:?}: {e}"))?,
        ..Url::default()
    };
    let mut rest = rest;
    if let Some(colon) = rest.find(':') {
        let candidate = &rest[..colon];
        let valid = candidate.starts_with(|c: char| c.is_ascii_alphabetic())
            && candidate
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if colon == 0 {
            return Err(format!("parse {raw:?}: missing protocol scheme"));
        }
        if valid {
            url.scheme = candidate.to_ascii_lowercase();
            rest = &rest[colon + 1..];
        }
    }
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') && !url.scheme.is_empty() {
        url.opaque = rest.to_string();
        return Ok(url);
    }
    if (!url.scheme.is_empty() || !rest.starts_with("///"))
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, path) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        match authority.rfind('@') {
            Some(at) => {
                url.userinfo = Some(authority[..at].to_string());
                url.host = authority[at + 1..].to_string();
            }
            None => url.host = authority.to_string(),
        }
        rest = path;
    }
    url.path = unescape(rest).map_err(|e| format!("parse {raw:?}: {e}"))?;
    Ok(url)
}

fn unescape(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
            let Some(hex) = hex else {
                let bad = text.get(i..(i + 3).min(text.len())).unwrap_or("%");
                return Err(format!("invalid URL escape {bad:?}"));
            };
            out.push(u8::from_str_radix(hex, 16).map_err(|e| e.to_string())?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Percent-encodes bytes outside the unreserved set and `allowed`.
fn escape(text: &str, allowed: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || allowed.as_bytes().contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Url {
    fn hostname(&self) -> String {
        let host = &self.host;
        if let Some(inner) = host.strip_prefix('[') {
            return inner.split(']').next().unwrap_or_default().to_string();
        }
        host.split(':').next().unwrap_or_default().to_string()
    }

    /// Go's `URL.String()`.
    fn render(&self) -> String {
        let mut out = String::new();
        if !self.scheme.is_empty() {
            out.push_str(&self.scheme);
            out.push(':');
        }
        if !self.opaque.is_empty() {
            out.push_str(&self.opaque);
        } else {
            if !self.scheme.is_empty() || !self.host.is_empty() || self.userinfo.is_some() {
                if !self.host.is_empty() || !self.path.is_empty() || self.userinfo.is_some() {
                    out.push_str("//");
                }
                if let Some(user) = &self.userinfo {
                    out.push_str(user);
                    out.push('@');
                }
                out.push_str(&escape(&self.host, "!$&'()*+,;=:[]<>\""));
            }
            let path = escape(&self.path, "$&+,/:;=@");
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                out.push('/');
            }
            if out.is_empty()
                && let Some(colon) = path.find(':')
                && !path[..colon].contains('/')
            {
                out.push_str("./");
            }
            out.push_str(&path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            out.push('?');
            out.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            out.push('#');
            out.push_str(&escape(&self.fragment, "$&+,/:;=?@!()*"));
        }
        out
    }
}

/// `urlParse s`: a dict of scheme, host, hostname, path, query, opaque, fragment, userinfo.
pub(crate) fn url_parse(args: &[Value]) -> Result<Value, Error> {
    want("urlParse", args, 1)?;
    let url = parse_url(&arg_str(args, 0))
        .map_err(|e| fail(format!("error calling urlParse: unable to parse url: {e}")))?;
    let entries = [
        ("scheme", url.scheme.clone()),
        ("host", url.host.clone()),
        ("hostname", url.hostname()),
        ("path", url.path.clone()),
        ("query", url.raw_query.clone()),
        ("opaque", url.opaque.clone()),
        ("fragment", url.fragment.clone()),
        ("userinfo", url.userinfo.clone().unwrap_or_default()),
    ];
    Ok(GoMap::value(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::from(v)))
            .collect(),
    ))
}

/// `urlJoin dict`: the URL made of a dict's parts.
pub(crate) fn url_join(args: &[Value]) -> Result<Value, Error> {
    want("urlJoin", args, 1)?;
    let parts = map_entries(&args[0]).ok_or_else(|| {
        fail(format!(
            "wrong type for value; expected map[string]interface {{}}; got {}",
            super::value::type_of(&args[0])
        ))
    })?;
    let field = |k: &str| parts.get(k).map(to_go_string).unwrap_or_default();
    let userinfo = field("userinfo");
    let url = Url {
        scheme: field("scheme"),
        opaque: field("opaque"),
        userinfo: (!userinfo.is_empty()).then_some(userinfo),
        host: field("host"),
        path: field("path"),
        raw_query: field("query"),
        force_query: false,
        fragment: field("fragment"),
    };
    Ok(Value::from(url.render()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_go() {
        for (input, clean, base, dir, ext) in [
            ("x/./y/../../z", "z", "z", "x/y/../..", ""),
            ("/a/b/c.tar.gz", "/a/b/c.tar.gz", "c.tar.gz", "/a/b", ".gz"),
            ("", ".", ".", ".", ""),
            ("a/", "a", "a", "a", ""),
            ("/", "/", "/", "/", ""),
            ("../../a", "../../a", "a", "../..", ""),
            ("/../a", "/a", "a", "/..", ""),
        ] {
            assert_eq!(clean_path(input), clean, "clean {input}");
            assert_eq!(base_name(input), base, "base {input}");
            assert_eq!(dir_name(input), clean_path(dir), "dir {input}");
            assert_eq!(extension(input), ext, "ext {input}");
        }
    }

    #[test]
    fn urls_split_and_join_like_net_url() {
        let url = parse_url("https://user@example.com:8443/p/q?x=1#frag").unwrap();
        assert_eq!(url.host, "example.com:8443");
        assert_eq!(url.hostname(), "example.com");
        assert_eq!(url.userinfo.as_deref(), Some("user"));
        assert_eq!(
            (
                url.path.as_str(),
                url.raw_query.as_str(),
                url.fragment.as_str()
            ),
            ("/p/q", "x=1", "frag")
        );
        assert_eq!(url.render(), "https://user@example.com:8443/p/q?x=1#frag");
        let opaque = parse_url("mailto:a@b.c").unwrap();
        assert_eq!(opaque.opaque, "a@b.c");
        assert_eq!(parse_url("http://[::1]:80/").unwrap().hostname(), "::1");
        assert!(parse_url(":x").is_err());
        assert!(parse_url("http://a/%zz").is_err());
        let spaced = Url {
            scheme: "http".into(),
            host: "h".into(),
            path: "a b".into(),
            ..Url::default()
        };
        assert_eq!(spaced.render(), "http://h/a%20b");
    }
}
