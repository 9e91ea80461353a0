//! Checks of the files a configuration names, as the daemon would find them when it starts: a
//! kubeconfig path that does not exist, or a file that is no usable kubeconfig
//! ([`crate::kubeconfig_file`]), is a configuration error, reported like the others.
//!
//! Kept apart from [`crate::load`] because the answer depends on the machine (and, for the
//! agent, on the `GARDEN_KUBECONFIG` and `KUBECONFIG` overrides), not on the file alone.

use serde_json::Value;

use crate::error::Problem;

/// Reads one environment variable.
pub(crate) type Lookup<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// Which daemon a document configures.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Daemon {
    /// `seedlet agent`.
    Agent,
    /// `seedlet garden`.
    Garden,
}

/// The kubeconfig files of `document` (read as written, so that they are checked even when
/// other fields are invalid) that the daemon would fail to read, after the environment
/// overrides `lookup` yields (`|name| std::env::var(name).ok()` in the binary).
pub(crate) fn file_problems(document: &Value, daemon: Daemon, lookup: &Lookup<'_>) -> Vec<Problem> {
    let from_env = |name: &str| lookup(name).filter(|value| !value.is_empty());
    let written = |pointer: &str| {
        document
            .pointer(pointer)
            .and_then(Value::as_str)
            .filter(|path| !path.is_empty())
            .map(str::to_owned)
    };
    let mut files = Vec::new();
    let mut add = |field: &str, variable: Option<&str>, pointer: &str| match variable
        .and_then(|variable| from_env(variable).map(|path| (variable, path)))
    {
        Some((variable, path)) => files.push((format!("{field} (from {variable})"), path)),
        None => {
            if let Some(path) = written(pointer) {
                files.push((field.to_owned(), path));
            }
        }
    };
    match daemon {
        Daemon::Agent => {
            add(
                "gardenClientConnection.kubeconfig",
                Some("GARDEN_KUBECONFIG"),
                "/gardenClientConnection/kubeconfig",
            );
            add(
                "seedClientConnection.kubeconfig",
                Some("KUBECONFIG"),
                "/seedClientConnection/kubeconfig",
            );
            add(
                "gardenClientConnection.bootstrapKubeconfigFile",
                None,
                "/gardenClientConnection/bootstrapKubeconfigFile",
            );
        }
        Daemon::Garden => add(
            "gardenClientConnection.kubeconfig",
            None,
            "/gardenClientConnection/kubeconfig",
        ),
    }
    files
        .into_iter()
        .filter_map(|(field, path)| {
            file_problem(&path)
                .or_else(|| crate::kubeconfig_file::problem(&path))
                .map(|message| Problem::new(field, message))
        })
        .collect()
}

/// Why `path` is no readable file, if it is not.
fn file_problem(path: &str) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => match std::fs::File::open(path) {
            Ok(_) => None,
            Err(error) => Some(format!("cannot read file {path}: {error}")),
        },
        Ok(_) => Some(format!("{path} is not a file")),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("file {path} does not exist"))
        }
        Err(error) => Some(format!("cannot read file {path}: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(document: &Value, daemon: Daemon, env: &[(&str, &str)]) -> Vec<String> {
        let lookup = |name: &str| {
            env.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        };
        file_problems(document, daemon, &lookup)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn missing_kubeconfigs_are_named_with_their_field_and_the_overriding_variable() {
        let document = json!({
            "gardenClientConnection": {"kubeconfig": "/nonexistent/garden"},
            "seedClientConnection": {"kubeconfig": "/nonexistent/seed"},
        });
        assert_eq!(
            messages(&document, Daemon::Agent, &[]),
            [
                "gardenClientConnection.kubeconfig: file /nonexistent/garden does not exist",
                "seedClientConnection.kubeconfig: file /nonexistent/seed does not exist",
            ]
        );
        let manifest = env!("CARGO_MANIFEST_DIR");
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = write_kubeconfig(&dir);
        assert_eq!(
            messages(
                &document,
                Daemon::Agent,
                &[("GARDEN_KUBECONFIG", &kubeconfig), ("KUBECONFIG", manifest)]
            ),
            [format!(
                "seedClientConnection.kubeconfig (from KUBECONFIG): {manifest} is not a file"
            )]
        );
        assert_eq!(
            messages(&document, Daemon::Garden, &[("KUBECONFIG", manifest)]),
            ["gardenClientConnection.kubeconfig: file /nonexistent/garden does not exist"],
            "the garden controller reads no overrides"
        );
    }

    fn write_kubeconfig(dir: &tempfile::TempDir) -> String {
        let path = dir.path().join("kubeconfig");
        std::fs::write(
            &path,
            "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n\
             clusters: [{name: k, cluster: {server: 'https://k:6443'}}]\nusers: [{name: u, user: {}}]\n",
        )
        .unwrap();
        path.to_str().unwrap().to_owned()
    }

    #[test]
    fn unset_kubeconfigs_and_existing_kubeconfigs_pass() {
        assert!(messages(&json!({}), Daemon::Agent, &[]).is_empty());
        let dir = tempfile::tempdir().unwrap();
        let existing = json!({"gardenClientConnection": {"kubeconfig": write_kubeconfig(&dir)}});
        assert!(messages(&existing, Daemon::Garden, &[]).is_empty());
    }

    #[test]
    fn files_that_are_no_kubeconfigs_are_named_with_their_field() {
        let cargo_toml = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
        let document = json!({"gardenClientConnection": {
            "kubeconfig": cargo_toml, "bootstrapKubeconfigFile": cargo_toml}});
        let found = messages(&document, Daemon::Agent, &[]);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with(&format!(
                "gardenClientConnection.kubeconfig: {cargo_toml} is not a usable kubeconfig: "
            )),
            "{found:?}"
        );
        assert!(
            found[1].starts_with(&format!(
                "gardenClientConnection.bootstrapKubeconfigFile: {cargo_toml} is not a usable kubeconfig: "
            )),
            "{found:?}"
        );
    }
}
