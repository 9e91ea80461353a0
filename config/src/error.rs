//! Errors of loading a configuration, and the field-path problems a rejected configuration carries.

use std::fmt;
use std::path::PathBuf;

/// One thing wrong with a configuration, at a field path such as
/// `controllers.seedCare.conditionThresholds[0].duration`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where the problem is, in the camelCase field names of the file (`.` between fields, `[i]` for list items).
    pub path: String,
    /// What is wrong, lower-case.
    pub message: String,
}

impl Problem {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("reading configuration file {file}")]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The file is not YAML (or JSON).
    #[error("parsing configuration file {file} as yaml")]
    Yaml {
        /// The file.
        file: PathBuf,
        /// The parser failure, with line and column.
        #[source]
        source: serde_yaml::Error,
    },
    /// The file is larger or nested deeper than any configuration: refused before the YAML
    /// parser, whose time grows with the square of unclosed `[`/`{` levels.
    #[error("configuration file {file} is no configuration: {problem}")]
    TooComplex {
        /// The file.
        file: PathBuf,
        /// What limit it exceeds.
        problem: String,
    },
    /// The `apiVersion`/`kind` pair is not one seedlet reads.
    #[error(
        "configuration file {file} has apiVersion {api_version:?} and kind {kind:?}; expected {expected}"
    )]
    UnknownKind {
        /// The file.
        file: PathBuf,
        /// The `apiVersion` found (empty when missing).
        api_version: String,
        /// The `kind` found (empty when missing).
        kind: String,
        /// The accepted pairs, for the message.
        expected: String,
    },
    /// The file holds a valid configuration of another kind than the caller asked for.
    #[error("configuration file {file} is a {found}, expected a {expected}")]
    WrongKind {
        /// The file.
        file: PathBuf,
        /// The kind found.
        found: &'static str,
        /// The kind asked for.
        expected: &'static str,
    },
    /// The configuration has unknown fields, values of the wrong type, or fails validation.
    #[error("configuration file {file} is invalid: {}", join(problems))]
    Invalid {
        /// The file.
        file: PathBuf,
        /// Every problem found, in file order where possible.
        problems: Vec<Problem>,
    },
}

impl ConfigError {
    /// The field-path problems of an invalid configuration (empty for other errors).
    pub fn problems(&self) -> &[Problem] {
        match self {
            ConfigError::Invalid { problems, .. } => problems,
            _ => &[],
        }
    }

    /// Every problem as a line `<file>: <path>: <problem>` (`<file>: <problem>` when the file as
    /// a whole is the problem), as `seedlet check-config` and the daemons print them.
    pub fn lines(&self) -> Vec<String> {
        let at =
            |file: &PathBuf, problem: &dyn fmt::Display| format!("{}: {problem}", file.display());
        match self {
            ConfigError::Read { file, source } => vec![at(file, &format!("cannot read: {source}"))],
            ConfigError::Yaml { file, source } => {
                vec![at(file, &format!("not valid YAML: {source}"))]
            }
            ConfigError::TooComplex { file, problem } => vec![at(file, problem)],
            ConfigError::UnknownKind {
                file,
                api_version,
                kind,
                expected,
            } => {
                let known = crate::api_versions::KNOWN;
                let problem = if api_version.is_empty() {
                    Problem::new("apiVersion", format!("required; expected {expected}"))
                } else if !known.contains(&api_version.as_str()) {
                    Problem::new(
                        "apiVersion",
                        format!("{api_version:?} is not read by seedlet; expected {expected}"),
                    )
                } else if kind.is_empty() {
                    Problem::new("kind", format!("required; expected {expected}"))
                } else {
                    Problem::new(
                        "kind",
                        format!("{kind:?} is not a kind of {api_version}; expected {expected}"),
                    )
                };
                vec![at(file, &problem)]
            }
            ConfigError::WrongKind {
                file,
                found,
                expected,
            } => vec![at(
                file,
                &Problem::new(
                    "kind",
                    format!("{found}, expected {expected} for this command"),
                ),
            )],
            ConfigError::Invalid { file, problems } => {
                problems.iter().map(|problem| at(file, problem)).collect()
            }
        }
    }
}

fn join(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_display_puts_the_path_first() {
        let problem = Problem::new("server.metrics.port", "must be > 0");
        assert_eq!(problem.to_string(), "server.metrics.port: must be > 0");
        assert_eq!(
            Problem::new("", "not a mapping").to_string(),
            "not a mapping"
        );
    }

    #[test]
    fn invalid_error_lists_every_problem() {
        let error = ConfigError::Invalid {
            file: PathBuf::from("a.yaml"),
            problems: vec![Problem::new("a", "x"), Problem::new("b.c[0]", "y")],
        };
        assert_eq!(
            error.to_string(),
            "configuration file a.yaml is invalid: a: x; b.c[0]: y"
        );
        assert_eq!(error.problems().len(), 2);
    }

    #[test]
    fn lines_put_the_file_and_the_path_first() {
        let file = PathBuf::from("a.yaml");
        let expected = "gardenlet.config.gardener.cloud/v1alpha1 GardenletConfiguration".to_owned();
        let unknown = |api_version: &str, kind: &str| {
            ConfigError::UnknownKind {
                file: file.clone(),
                api_version: api_version.into(),
                kind: kind.into(),
                expected: expected.clone(),
            }
            .lines()
        };
        assert_eq!(
            unknown("", ""),
            [format!("a.yaml: apiVersion: required; expected {expected}")]
        );
        assert_eq!(
            unknown("v1", "Pod"),
            [format!(
                "a.yaml: apiVersion: \"v1\" is not read by seedlet; expected {expected}"
            )]
        );
        assert_eq!(
            unknown("gardenlet.config.gardener.cloud/v1alpha1", "Gardenlet"),
            [format!(
                "a.yaml: kind: \"Gardenlet\" is not a kind of gardenlet.config.gardener.cloud/v1alpha1; expected {expected}"
            )]
        );
        let read = ConfigError::Read {
            file: file.clone(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        };
        assert_eq!(read.lines(), ["a.yaml: cannot read: gone"]);
        let invalid = ConfigError::Invalid {
            file,
            problems: vec![Problem::new("a", "x"), Problem::new("", "y")],
        };
        assert_eq!(invalid.lines(), ["a.yaml: a: x", "a.yaml: y"]);
    }
}
