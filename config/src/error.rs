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
}
