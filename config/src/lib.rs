//! Component configuration for the seedlet agent and garden controller.
//!
//! [`load`] reads a YAML (or JSON) file, recognises the kind from `apiVersion`/`kind`, decodes it,
//! applies defaults and validates it, returning every problem with its field path:
//!
//! - [`GardenletConfiguration`] (`gardenlet.config.gardener.cloud/v1alpha1`) for the agent, compatible
//!   with gardenlet's: every field gardenlet knows is accepted, unimplemented ones are listed by
//!   [`GardenletConfiguration::ignored_fields`];
//! - [`GardenControllerConfiguration`] (`seedlet.gardener.cloud/v1alpha1`) for the garden controller,
//!   which also reads gardener-controller-manager's own
//!   [`controllermanager::ControllerManagerConfiguration`] unchanged (unimplemented fields are
//!   listed by [`AnyConfig::ignored_fields`]).
//!
//! Durations use Go syntax ([`Duration`]). Unknown fields are errors naming their path.

mod api_versions;
mod bounds;
mod common;
pub mod controllermanager;
mod decode;
mod defaults;
mod duration;
mod error;
mod files;
pub mod garden;
pub mod garden_projects;
pub mod garden_seed;
pub mod garden_webhooks;
pub mod gardenlet;
pub mod kubeconfig_file;
mod quantity;
mod validate;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use common::{
    ClientConnection, ConditionThreshold, LeaderElection, LogFormat, LogLevel, SecretReference,
    Server, ServerConfiguration, UnknownValue, threshold_for,
};
pub use defaults::{
    GARDEN_CONTROLLER_HEALTH_PORT, GARDEN_CONTROLLER_LEADER_ELECTION_NAME,
    GARDEN_CONTROLLER_METRICS_PORT, GARDENLET_HEALTH_PORT, GARDENLET_LEADER_ELECTION_NAME,
    GARDENLET_METRICS_PORT, LEADER_ELECTION_NAMESPACE,
};
pub use duration::{Duration, DurationError};
pub use error::{ConfigError, Problem};
pub use garden::GardenControllerConfiguration;
pub use gardenlet::GardenletConfiguration;
pub use quantity::{Quantity, QuantityError};

/// A loaded configuration of either component.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyConfig {
    /// The agent's configuration.
    Gardenlet(Box<GardenletConfiguration>),
    /// The garden controller's configuration.
    GardenController(Box<GardenControllerConfiguration>),
}

impl AnyConfig {
    /// The `kind` of the file it was read from (`ControllerManagerConfiguration` for Gardener's
    /// garden controller file; [`AnyConfig::kind`] is the daemon's kind).
    pub fn file_kind(&self) -> &'static str {
        match self {
            AnyConfig::GardenController(config) if config.kind == controllermanager::KIND => {
                controllermanager::KIND
            }
            other => other.kind(),
        }
    }

    /// The `kind` of the configuration.
    pub fn kind(&self) -> &'static str {
        match self {
            AnyConfig::Gardenlet(_) => gardenlet::KIND,
            AnyConfig::GardenController(_) => garden::KIND,
        }
    }

    /// The log threshold the configuration asks for.
    pub fn log_level(&self) -> LogLevel {
        match self {
            AnyConfig::Gardenlet(config) => config.log_level,
            AnyConfig::GardenController(config) => config.log_level,
        }
    }

    /// The log format the configuration asks for.
    pub fn log_format(&self) -> LogFormat {
        match self {
            AnyConfig::Gardenlet(config) => config.log_format,
            AnyConfig::GardenController(config) => config.log_format,
        }
    }

    /// Paths of set fields that seedlet does not implement (see [`GardenletConfiguration::ignored_fields`]).
    pub fn ignored_fields(&self) -> Vec<String> {
        match self {
            AnyConfig::Gardenlet(config) => config.ignored_fields(),
            AnyConfig::GardenController(config) => config.ignored.clone(),
        }
    }
}

/// Reads, decodes, defaults and validates the configuration in `path`, whichever kind it is.
///
/// # Errors
///
/// [`ConfigError::Read`] / [`ConfigError::Yaml`] when the file cannot be read or parsed,
/// [`ConfigError::UnknownKind`] for another `apiVersion`/`kind`, and [`ConfigError::Invalid`] with
/// every problem (unknown fields, bad values, failed rules) by field path.
pub fn load(path: impl AsRef<Path>) -> Result<AnyConfig, ConfigError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: path.to_owned(),
        source,
    })?;
    parse(&text, path)
}

/// Like [`load`], for text already read; `file` names the origin in errors.
///
/// # Errors
///
/// As [`load`], except for reading.
pub fn parse(text: &str, file: impl Into<PathBuf>) -> Result<AnyConfig, ConfigError> {
    parse_document(text, file.into(), None)
}

/// Like [`load`], and also reports the kubeconfig files the daemon would fail to read, after the
/// environment overrides `lookup` yields (`|name| std::env::var(name).ok()`): what
/// `seedlet check-config` and the daemons load with, so that they agree.
///
/// # Errors
///
/// As [`load`]; missing kubeconfig files are [`ConfigError::Invalid`] problems at their field.
pub fn load_for_daemon(
    path: impl AsRef<Path>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<AnyConfig, ConfigError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: path.to_owned(),
        source,
    })?;
    parse_document(&text, path.to_owned(), Some(&lookup))
}

fn parse_document(
    text: &str,
    file: PathBuf,
    lookup: Option<&files::Lookup<'_>>,
) -> Result<AnyConfig, ConfigError> {
    if let Some(problem) = bounds::too_complex(text) {
        return Err(ConfigError::TooComplex { file, problem });
    }
    let document: Value = serde_yaml::from_str(text).map_err(|source| ConfigError::Yaml {
        file: file.clone(),
        source,
    })?;
    let field = |name: &str| {
        document
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    let missing_files = |daemon| match lookup {
        Some(lookup) => files::file_problems(&document, daemon, lookup),
        None => Vec::new(),
    };
    match (api_version.as_str(), kind.as_str()) {
        (gardenlet::API_VERSION, gardenlet::KIND) => {
            let config = finish(
                &document,
                &file,
                defaults::apply_gardenlet_defaults,
                gardenlet::validate,
                missing_files(files::Daemon::Agent),
            )?;
            Ok(AnyConfig::Gardenlet(Box::new(config)))
        }
        (garden::API_VERSION, garden::KIND) => {
            let config = finish(
                &document,
                &file,
                defaults::apply_garden_controller_defaults,
                garden::validate,
                missing_files(files::Daemon::Garden),
            )?;
            Ok(AnyConfig::GardenController(Box::new(config)))
        }
        (controllermanager::API_VERSION, controllermanager::KIND) => {
            let source: controllermanager::ControllerManagerConfiguration =
                finish(&document, &file, |_| {}, |_| Vec::new(), Vec::new())?;
            let (mut config, ignored) = controllermanager::into_garden(&source);
            defaults::apply_garden_controller_defaults(&mut config);
            config.ignored = ignored;
            let mut problems = controllermanager::validate(&config);
            problems.extend(missing_files(files::Daemon::Garden));
            if !problems.is_empty() {
                return Err(ConfigError::Invalid { file, problems });
            }
            Ok(AnyConfig::GardenController(Box::new(config)))
        }
        _ => Err(ConfigError::UnknownKind {
            file,
            api_version,
            kind,
            expected: format!(
                "{} {}, {} {} or {} {}",
                gardenlet::API_VERSION,
                gardenlet::KIND,
                garden::API_VERSION,
                garden::KIND,
                controllermanager::API_VERSION,
                controllermanager::KIND
            ),
        }),
    }
}

/// Loads an agent configuration.
///
/// # Errors
///
/// As [`load`], plus [`ConfigError::WrongKind`] when the file holds a garden controller configuration.
pub fn load_gardenlet(path: impl AsRef<Path>) -> Result<GardenletConfiguration, ConfigError> {
    let path = path.as_ref();
    match load(path)? {
        AnyConfig::Gardenlet(config) => Ok(*config),
        other => Err(ConfigError::WrongKind {
            file: path.to_owned(),
            found: other.kind(),
            expected: gardenlet::KIND,
        }),
    }
}

/// Loads a garden controller configuration.
///
/// # Errors
///
/// As [`load`], plus [`ConfigError::WrongKind`] when the file holds an agent configuration.
pub fn load_garden_controller(
    path: impl AsRef<Path>,
) -> Result<GardenControllerConfiguration, ConfigError> {
    let path = path.as_ref();
    match load(path)? {
        AnyConfig::GardenController(config) => Ok(*config),
        other => Err(ConfigError::WrongKind {
            file: path.to_owned(),
            found: other.kind(),
            expected: garden::KIND,
        }),
    }
}

/// Decodes, defaults and validates one kind; unknown fields and rule violations are reported together.
fn finish<T: DeserializeOwned>(
    document: &Value,
    file: &Path,
    apply_defaults: fn(&mut T),
    validate: fn(&T) -> Vec<Problem>,
    missing_files: Vec<Problem>,
) -> Result<T, ConfigError> {
    let invalid = |problems| ConfigError::Invalid {
        file: file.to_owned(),
        problems,
    };
    let (config, mut problems) = decode::decode::<T>(document);
    let Some(mut config) = config else {
        problems.extend(missing_files);
        return Err(invalid(problems));
    };
    apply_defaults(&mut config);
    problems.extend(validate(&config));
    problems.extend(missing_files);
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(invalid(problems))
    }
}
