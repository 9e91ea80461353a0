//! Turning a method + path + query into what a request is about (kube-apiserver's RequestInfo):
//! the typed [`Verb`], the resource path and its [`Subresource`].

use std::collections::BTreeMap;

use http::Method;

use crate::resources::Subresource;
use crate::status::ApiError;

/// The verb of a resource request, as authorization sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verb {
    /// GET of one object.
    #[default]
    Get,
    /// GET of a collection.
    List,
    /// GET with `watch=true` or the legacy `/watch/` prefix.
    Watch,
    /// POST to a collection.
    Create,
    /// PUT of one object.
    Update,
    /// PATCH of one object.
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
}

impl Verb {
    /// The verb of `method` on a path with or without an object name; `None` when the method is
    /// not served there.
    pub fn of(method: &Method, has_name: bool, watching: bool) -> Option<Verb> {
        Some(match *method {
            Method::GET | Method::HEAD if watching => Verb::Watch,
            Method::GET | Method::HEAD if has_name => Verb::Get,
            Method::GET | Method::HEAD => Verb::List,
            Method::POST if !has_name => Verb::Create,
            Method::PUT if has_name => Verb::Update,
            Method::PATCH if has_name => Verb::Patch,
            Method::DELETE if has_name => Verb::Delete,
            Method::DELETE => Verb::DeleteCollection,
            _ => return None,
        })
    }

    /// The lowercase name RBAC rules use.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

/// What an API path addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A resource path: `/api/v1/...` or `/apis/g/v/...`.
    Resource(RequestInfo),
    /// Anything else (`/version`, `/healthz`, discovery documents, unknown paths).
    NonResource(String),
}

/// What a resource request is about.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    /// The verb (from the method, the name and `watch`).
    pub verb: Verb,
    /// API group ("" for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace from the path ("" when none).
    pub namespace: String,
    /// Plural resource name.
    pub resource: String,
    /// Object name ("" for collections).
    pub name: String,
    /// Subresource.
    pub subresource: Subresource,
    /// Whether the legacy `/watch/` prefix was used.
    pub legacy_watch: bool,
}

/// Parses a request: its path and, for resource requests, the verb.
///
/// # Errors
/// 405 when the method is not served on the path (a POST to a named object, ...).
pub fn parse(
    method: &Method,
    path: &str,
    query: &BTreeMap<String, String>,
) -> Result<Target, ApiError> {
    let Target::Resource(mut info) = parse_path(path) else {
        return Ok(parse_path(path));
    };
    let watching = info.legacy_watch || flag(query, "watch");
    info.verb = Verb::of(method, !info.name.is_empty(), watching).ok_or_else(|| {
        ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )
    })?;
    Ok(Target::Resource(info))
}

/// Parses the path part of a URL (the verb is left at its default). Like Go's `URL.Path`,
/// which kube-apiserver routes on, `%XX` escapes are decoded first (`system%3Abasic-user` is the
/// object `system:basic-user`, `%2F` separates segments).
pub fn parse_path(path: &str) -> Target {
    let path = &decode_path(path);
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let (group, version, rest) = match parts.as_slice() {
        ["api", version, rest @ ..] if !rest.is_empty() => ("", *version, rest),
        ["apis", group, version, rest @ ..] if !rest.is_empty() => (*group, *version, rest),
        _ => return Target::NonResource(path.to_string()),
    };
    let mut info = RequestInfo {
        group: group.to_string(),
        version: version.to_string(),
        ..Default::default()
    };
    let mut rest: Vec<&str> = rest.to_vec();
    if rest.first() == Some(&"watch") {
        info.legacy_watch = true;
        rest.remove(0);
    }
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        info.namespace = rest[1].to_string();
        if rest.len() > 2 && rest[2] != "status" && rest[2] != "finalize" {
            rest.drain(..2);
        } else {
            // The namespace object itself (optionally its status/finalize subresource).
            info.resource = "namespaces".into();
            info.name = rest[1].to_string();
            info.subresource = Subresource::parse(rest.get(2).copied().unwrap_or_default());
            info.namespace.clear();
            if rest.len() > 3 {
                return Target::NonResource(path.to_string());
            }
            return Target::Resource(info);
        }
    }
    match rest.as_slice() {
        [resource] => info.resource = resource.to_string(),
        [resource, name] => {
            info.resource = resource.to_string();
            info.name = name.to_string();
        }
        [resource, name, subresource] => {
            info.resource = resource.to_string();
            info.name = name.to_string();
            info.subresource = Subresource::parse(subresource);
        }
        _ => return Target::NonResource(path.to_string()),
    }
    Target::Resource(info)
}

/// Parses a query string into a map (last value wins), decoding `%XX` and `+`.
pub fn parse_query(query: Option<&str>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        out.insert(percent_decode(k), percent_decode(v));
    }
    out
}

/// Decodes `application/x-www-form-urlencoded` text.
pub fn percent_decode(input: &str) -> String {
    decode(input, true)
}

/// Decodes the `%XX` escapes of a URL path (`+` stays a plus sign there).
pub fn decode_path(input: &str) -> String {
    decode(input, false)
}

/// Decodes `%XX` escapes, and `+` as a space when `plus_is_space`; an escape that is not two hex
/// digits stays as it is.
fn decode(input: &str, plus_is_space: bool) -> String {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a write is a dry run (`dryRun=All`): the `dryRun` query parameter and, for deletes,
/// the DeleteOptions body's `dryRun` list. Reads ignore it, as kube-apiserver does.
///
/// # Errors
/// 422 naming the verb's options kind for any value but `All`, in kube-apiserver's words.
pub fn dry_run(
    verb: Verb,
    query: &BTreeMap<String, String>,
    body: &[u8],
) -> Result<bool, ApiError> {
    let options = match verb {
        Verb::Create => "CreateOptions",
        Verb::Update => "UpdateOptions",
        Verb::Patch => "PatchOptions",
        Verb::Delete | Verb::DeleteCollection => "DeleteOptions",
        Verb::Get | Verb::List | Verb::Watch => return Ok(false),
    };
    let mut values: Vec<String> = query.get("dryRun").cloned().into_iter().collect();
    if options == "DeleteOptions"
        && let Ok(serde_json::Value::Object(body)) = serde_json::from_slice(body)
        && let Some(serde_json::Value::Array(listed)) = body.get("dryRun")
    {
        values.extend(
            listed
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_owned()),
        );
    }
    if values.iter().all(|v| v == "All") {
        return Ok(!values.is_empty());
    }
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    let detail = format!(
        "Unsupported value: []string{{{}}}: supported values: \"All\"",
        quoted.join(", ")
    );
    Err(ApiError::status(
        422,
        "Invalid",
        format!("{options}.meta.k8s.io \"\" is invalid: dryRun: {detail}"),
        Some(serde_json::json!({
            "group": "meta.k8s.io",
            "kind": options,
            "causes": [{"reason": "FieldValueNotSupported", "message": detail, "field": "dryRun"}],
        })),
    ))
}

/// Whether a query flag such as `watch` is set (`true`, `1`).
pub fn flag(query: &BTreeMap<String, String>, key: &str) -> bool {
    query.get(key).is_some_and(|v| v == "true" || v == "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(path: &str) -> RequestInfo {
        match parse_path(path) {
            Target::Resource(r) => r,
            Target::NonResource(p) => panic!("{p} should be a resource path"),
        }
    }

    #[test]
    fn namespaced_object_paths_split_into_parts() {
        let r = resource("/apis/apps/v1/namespaces/ns/deployments/web/status");
        assert_eq!(
            (r.group.as_str(), r.namespace.as_str(), r.resource.as_str()),
            ("apps", "ns", "deployments")
        );
        assert_eq!(
            (r.name.as_str(), &r.subresource),
            ("web", &Subresource::Status)
        );
    }

    #[test]
    fn path_escapes_are_decoded_before_routing() {
        for (path, namespace, name) in [
            (
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Aadmin",
                "",
                "system:admin",
            ),
            (
                "/api/v1/namespaces/d%65fault/configmaps/a+b",
                "default",
                "a+b",
            ),
            ("/api/v1/namespaces/default/configmaps%2Fc", "default", "c"),
            (
                "/api/v1/namespaces/default/configmaps/%zz",
                "default",
                "%zz",
            ),
            (
                "/api/v1/namespaces/default/configmaps/%e2%9c%93",
                "default",
                "\u{2713}",
            ),
        ] {
            let r = resource(path);
            assert_eq!(
                (r.namespace.as_str(), r.name.as_str()),
                (namespace, name),
                "{path}"
            );
        }
        assert_eq!(decode_path("a%2"), "a%2");
        assert_eq!(percent_decode("a+b%20c"), "a b c");
    }

    #[test]
    fn namespace_status_addresses_the_namespace_object() {
        let r = resource("/api/v1/namespaces/kc/status");
        assert_eq!(
            (r.resource.as_str(), r.name.as_str(), &r.subresource),
            ("namespaces", "kc", &Subresource::Status)
        );
        assert_eq!(r.namespace, "");
    }

    #[test]
    fn legacy_watch_prefix_is_recognised() {
        let r = resource("/api/v1/watch/namespaces/ns/configmaps");
        assert!(r.legacy_watch);
        assert_eq!(r.resource, "configmaps");
    }

    #[test]
    fn discovery_paths_are_not_resources() {
        assert_eq!(
            parse_path("/apis/apps/v1"),
            Target::NonResource("/apis/apps/v1".into())
        );
        assert_eq!(parse_path("/api"), Target::NonResource("/api".into()));
    }

    #[test]
    fn verbs_follow_method_name_and_watch() {
        for (method, has_name, watching, verb) in [
            (Method::GET, true, false, Some(Verb::Get)),
            (Method::GET, false, false, Some(Verb::List)),
            (Method::GET, false, true, Some(Verb::Watch)),
            (Method::HEAD, true, false, Some(Verb::Get)),
            (Method::POST, false, false, Some(Verb::Create)),
            (Method::POST, true, false, None),
            (Method::PUT, true, false, Some(Verb::Update)),
            (Method::PUT, false, false, None),
            (Method::PATCH, true, false, Some(Verb::Patch)),
            (Method::DELETE, true, false, Some(Verb::Delete)),
            (Method::DELETE, false, false, Some(Verb::DeleteCollection)),
            (Method::OPTIONS, true, false, None),
        ] {
            assert_eq!(
                Verb::of(&method, has_name, watching),
                verb,
                "{method} {has_name}"
            );
        }
    }

    #[test]
    fn dry_run_accepts_only_all() {
        let query = |v: &str| BTreeMap::from([("dryRun".to_string(), v.to_string())]);
        assert_eq!(dry_run(Verb::Create, &BTreeMap::new(), b""), Ok(false));
        assert_eq!(dry_run(Verb::Patch, &query("All"), b""), Ok(true));
        assert_eq!(dry_run(Verb::Get, &query("bogus"), b""), Ok(false));
        let body = br#"{"kind":"DeleteOptions","dryRun":["All"]}"#;
        assert_eq!(dry_run(Verb::Delete, &BTreeMap::new(), body), Ok(true));
        assert_eq!(dry_run(Verb::Update, &BTreeMap::new(), body), Ok(false));
        let error = dry_run(Verb::Update, &query("Some"), b"").expect_err("invalid");
        assert_eq!(error.code, 422);
        assert_eq!(
            error.body["message"],
            "UpdateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
        );
        let error = dry_run(
            Verb::DeleteCollection,
            &BTreeMap::new(),
            br#"{"dryRun":["x"]}"#,
        )
        .expect_err("invalid");
        assert_eq!(error.body["details"]["kind"], "DeleteOptions");
    }

    #[test]
    fn query_values_are_decoded() {
        let q = parse_query(Some("labelSelector=env+in+%28prod%2Cdev%29&watch=1"));
        assert_eq!(q["labelSelector"], "env in (prod,dev)");
        assert!(flag(&q, "watch"));
    }
}
