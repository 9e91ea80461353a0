//! Whether a file a configuration names as a kubeconfig is one a daemon can connect with: it
//! parses as a kubeconfig, and its current context names a cluster with a server and a user.
//! Without this check a file full of garbage passed `check-config`, and the agent then retried
//! against it every few seconds forever.

use kube::config::Kubeconfig;

/// Largest kubeconfig read (certificates and keys inline make a few tens of KiB).
pub const MAX_BYTES: u64 = 1024 * 1024;

/// What is wrong with the kubeconfig in `path`, `None` when a client can be built from it. The
/// file must exist (checked before).
pub fn problem(path: &str) -> Option<String> {
    let size = match std::fs::metadata(path) {
        Ok(metadata) => metadata.len(),
        Err(error) => return Some(format!("cannot read file {path}: {error}")),
    };
    if size > MAX_BYTES {
        return Some(format!(
            "{path} is not a kubeconfig: {size} bytes, more than {MAX_BYTES}"
        ));
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => return Some(format!("cannot read file {path}: {error}")),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Some(format!("{path} is not a kubeconfig: not UTF-8 text"));
    };
    text_problem(&text).map(|problem| format!("{path} is not a usable kubeconfig: {problem}"))
}

/// What is wrong with the kubeconfig `text`, `None` when it is complete.
pub fn text_problem(text: &str) -> Option<String> {
    if text.trim().is_empty() {
        return Some("the file is empty".to_owned());
    }
    let kubeconfig = match Kubeconfig::from_yaml(text) {
        Ok(kubeconfig) => kubeconfig,
        Err(_) => return Some(format!("cannot parse it: {}", parse_problem(text))),
    };
    if kubeconfig.kind.is_none() && kubeconfig.clusters.is_empty() && kubeconfig.contexts.is_empty()
    {
        return Some("no clusters and no contexts (is it a kubeconfig at all?)".to_owned());
    }
    let Some(current) = kubeconfig
        .current_context
        .as_deref()
        .filter(|name| !name.is_empty())
    else {
        return Some("no current-context".to_owned());
    };
    let Some(context) = kubeconfig
        .contexts
        .iter()
        .find(|named| named.name == current)
        .and_then(|named| named.context.as_ref())
    else {
        return Some(format!("current-context {current:?} names no context"));
    };
    let cluster_name = context.cluster.as_str();
    let Some(cluster) = kubeconfig
        .clusters
        .iter()
        .find(|named| named.name == cluster_name)
        .and_then(|named| named.cluster.as_ref())
    else {
        return Some(format!(
            "context {current:?} names cluster {cluster_name:?}, which is not defined"
        ));
    };
    match cluster.server.as_deref().map(str::trim) {
        None | Some("") => {
            return Some(format!("cluster {cluster_name:?} has no server"));
        }
        Some(server) if !(server.starts_with("https://") || server.starts_with("http://")) => {
            return Some(format!(
                "server {server:?} of cluster {cluster_name:?} is not an http(s) URL"
            ));
        }
        Some(_) => {}
    }
    let Some(user) = context.user.as_deref().filter(|user| !user.is_empty()) else {
        return Some(format!("context {current:?} names no user"));
    };
    if !kubeconfig.auth_infos.iter().any(|named| named.name == user) {
        return Some(format!(
            "context {current:?} names user {user:?}, which is not defined"
        ));
    }
    None
}

/// Why `text` is no kubeconfig, in words that never quote it: parser messages show the text
/// around the error, and a file given by mistake may hold a token or a key.
fn parse_problem(text: &str) -> String {
    use serde_yaml::Value;
    let documents: Result<Vec<Value>, serde_yaml::Error> = serde_yaml::Deserializer::from_str(text)
        .map(serde::Deserialize::deserialize)
        .collect();
    match documents {
        Err(error) => match error.location() {
            Some(at) => format!("not YAML (line {}, column {})", at.line(), at.column()),
            None => "not YAML".to_owned(),
        },
        Ok(documents) => match documents.iter().find(|document| !document.is_mapping()) {
            Some(Value::Sequence(_)) => "a YAML list, not a mapping".to_owned(),
            Some(Value::Null) => "an empty YAML document".to_owned(),
            Some(_) => "a YAML scalar, not a mapping".to_owned(),
            None => "a field of the wrong type or shape".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "apiVersion: v1
kind: Config
current-context: garden
contexts:
- name: garden
  context: {cluster: garden, user: seed}
clusters:
- name: garden
  cluster: {server: 'https://garden.example:6443'}
users:
- name: seed
  user: {token: abc}
";

    #[test]
    fn a_complete_kubeconfig_passes() {
        assert_eq!(text_problem(GOOD), None);
    }

    #[test]
    fn garbage_and_half_kubeconfigs_are_named_with_what_is_missing() {
        let table: &[(&str, &str)] = &[
            ("", "the file is empty"),
            ("  \n", "the file is empty"),
            (
                "hello world, no kubeconfig",
                "cannot parse it: a YAML scalar",
            ),
            ("[1, 2, 3]", "cannot parse it: a YAML list"),
            ("{{{{", "cannot parse it: not YAML (line "),
            (
                "clusters: 7\n",
                "cannot parse it: a field of the wrong type",
            ),
            ("token-abc123", "cannot parse it: a YAML scalar"),
            ("foo: bar\n", "no clusters and no contexts"),
            (
                &GOOD.replace("current-context: garden\n", ""),
                "no current-context",
            ),
            (
                &GOOD.replace("current-context: garden", "current-context: other"),
                "current-context \"other\" names no context",
            ),
            (
                &GOOD.replace(
                    "{cluster: garden, user: seed}",
                    "{cluster: gone, user: seed}",
                ),
                "names cluster \"gone\", which is not defined",
            ),
            (
                &GOOD.replace("{server: 'https://garden.example:6443'}", "{}"),
                "cluster \"garden\" has no server",
            ),
            (
                &GOOD.replace("https://garden.example:6443", "garden.example:6443"),
                "is not an http(s) URL",
            ),
            (
                &GOOD.replace("{cluster: garden, user: seed}", "{cluster: garden}"),
                "names no user",
            ),
            (
                &GOOD.replace("- name: seed", "- name: someone-else"),
                "names user \"seed\", which is not defined",
            ),
        ];
        for (text, expected) in table {
            let problem = text_problem(text).unwrap_or_default();
            assert!(
                !problem.contains("abc123"),
                "the text is never quoted: {problem}"
            );
            assert!(
                problem.contains(expected),
                "{text:?}: expected {expected:?}, got {problem:?}"
            );
        }
    }

    #[test]
    fn the_file_is_named_and_oversized_or_binary_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("garbage");
        std::fs::write(&garbage, "garbage\n").unwrap();
        let path = garbage.to_str().unwrap();
        let found = problem(path).unwrap();
        assert!(
            found.starts_with(&format!("{path} is not a usable kubeconfig: ")),
            "{found}"
        );
        let binary = dir.path().join("binary");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        assert!(problem_of(&binary).contains("not UTF-8"));
        let huge = dir.path().join("huge");
        std::fs::write(&huge, vec![b'a'; 1024 * 1024 + 1]).unwrap();
        assert!(problem_of(&huge).contains("more than"));
        let good = dir.path().join("good");
        std::fs::write(&good, GOOD).unwrap();
        assert_eq!(problem(good.to_str().unwrap()), None);
    }

    fn problem_of(path: &std::path::Path) -> String {
        problem(path.to_str().unwrap()).unwrap_or_default()
    }
}
