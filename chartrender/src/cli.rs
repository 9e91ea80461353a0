//! `seedlet render`: offline rendering of a chart or a ControllerDeployment, printed like `helm template`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use clap::{ArgGroup, Args, ValueEnum};

use crate::oci::{Credentials, OciPuller, PullOptions, Reference};
use crate::set_values::{SetError, SetKind};
use crate::values::{GardenerInfo, gardener_values, merge_values};
use crate::{Chart, ChartError, Limits, RenderError, RenderOptions, Renderer};

/// Arguments of `seedlet render`, in Helm's words (`helm template [NAME] CHART -n NS -f FILE
/// --set K=V`), plus `--deployment` for a ControllerDeployment and `--seed` for Gardener's values.
#[derive(Debug, Clone, Args)]
#[command(group(
    ArgGroup::new("source")
        .required(true)
        .args(["chart", "deployment", "name_and_chart", "oci"])
))]
pub struct RenderArgs {
    /// Release name and chart, as in `helm template [NAME] CHART`; a single value is the chart.
    #[arg(value_name = "[NAME] CHART", num_args = 1..=2, conflicts_with_all = ["chart", "deployment", "oci"])]
    pub name_and_chart: Vec<String>,
    /// Chart directory or `.tgz` archive.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["deployment", "oci"])]
    pub chart: Option<PathBuf>,
    /// ControllerDeployment YAML (core.gardener.cloud/v1 `helm.rawChart` or `helm.ociRepository`, or v1beta1
    /// `type: helm` + `providerConfig.chart`).
    #[arg(long, value_name = "FILE", conflicts_with = "oci")]
    pub deployment: Option<PathBuf>,
    /// OCI chart reference (`oci://registry/repository:tag` or `…@sha256:…`); loopback registries over plain HTTP.
    #[arg(long, value_name = "REF")]
    pub oci: Option<String>,
    /// User name for the OCI registry (the password comes from `SEEDLET_OCI_PASSWORD`).
    #[arg(long)]
    pub oci_username: Option<String>,
    /// Password for the OCI registry.
    #[arg(
        long,
        env = "SEEDLET_OCI_PASSWORD",
        hide_env_values = true,
        requires = "oci_username"
    )]
    pub oci_password: Option<String>,
    /// PEM CA certificates trusted for HTTPS registries besides the system roots.
    #[arg(long, value_name = "FILE")]
    pub ca_bundle: Option<PathBuf>,
    /// Values files layered in order over the chart's (and the deployment's) values.
    #[arg(short = 'f', long = "values", value_name = "FILE")]
    pub values: Vec<PathBuf>,
    /// Values on the command line (`a.b=1,c={x,y}`), typed like Helm's; after the values files.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Like `--set`, every value a string; applied after `--set`.
    #[arg(long = "set-string", value_name = "KEY=VALUE")]
    pub set_string: Vec<String>,
    /// Like `--set`, every value JSON (`a={"b":[1]}`); applied before `--set`, as Helm does.
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
    /// Seed YAML to build the injected `gardener.*` values from.
    #[arg(long, value_name = "FILE")]
    pub seed: Option<PathBuf>,
    /// Release name when no NAME is given (gardenlet uses the ControllerRegistration name).
    #[arg(long, value_name = "NAME", default_value = "release-name")]
    pub release: String,
    /// Release namespace (gardenlet uses `extension-<ControllerInstallation name>`).
    #[arg(short = 'n', long, default_value = "default")]
    pub namespace: String,
    /// `.Capabilities.KubeVersion` (Helm v3.11's engine default; its release binaries say `v1.26.0`).
    #[arg(long, default_value = crate::HELM_DEFAULT_KUBE_VERSION)]
    pub kube_version: String,
    /// API versions added to Helm's default `.Capabilities.APIVersions` set (`-a monitoring.coreos.com/v1`).
    #[arg(
        short = 'a',
        long = "api-versions",
        value_name = "VERSION",
        value_delimiter = ','
    )]
    pub api_versions: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Yaml)]
    pub output: OutputFormat,
    /// Largest string a template may build, in bytes (default 16 MiB; see docs/limits.md).
    #[arg(long, value_name = "BYTES")]
    pub max_value_bytes: Option<usize>,
    /// Most elements of a list or map a template may build (default 1000000).
    #[arg(long, value_name = "COUNT")]
    pub max_value_items: Option<usize>,
    /// Largest output of the chart, all files together, in bytes (default 64 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_output_bytes: Option<u64>,
    /// Longest render (`500ms`, `30s`, `2m`; default 10s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub max_render_time: Option<Duration>,
}

impl RenderArgs {
    /// The default limits with the `--max-*` flags applied.
    fn limits(&self) -> Limits {
        let defaults = Limits::default();
        Limits {
            max_value_bytes: self.max_value_bytes.unwrap_or(defaults.max_value_bytes),
            max_value_items: self.max_value_items.unwrap_or(defaults.max_value_items),
            max_output_bytes: self.max_output_bytes.unwrap_or(defaults.max_output_bytes),
            max_render_time: self.max_render_time.unwrap_or(defaults.max_render_time),
            ..defaults
        }
    }

    /// The chart path and release name, from `[NAME] CHART` or `--chart` and `--release`.
    fn chart_and_release(&self) -> (Option<PathBuf>, String) {
        match self.name_and_chart.as_slice() {
            [chart] => (Some(PathBuf::from(chart)), self.release.clone()),
            [name, chart, ..] => (Some(PathBuf::from(chart)), name.clone()),
            [] => (self.chart.clone(), self.release.clone()),
        }
    }
}

/// A duration flag: a number with `ms`, `s` or `m`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => text.split_at(at),
        None => return Err(format!("{text:?} needs a unit: ms, s or m")),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a number with a unit"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?}, use ms, s or m")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

/// How `seedlet render` prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// `---\n# Source: <path>\n<text>` per template, like `helm template`.
    Yaml,
    /// A JSON object `{template path: rendered text}`.
    Json,
}

/// Why `seedlet render` failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input file could not be read.
    #[error("reading {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An input file is not valid YAML.
    #[error("parsing {path}")]
    Yaml {
        /// The file.
        path: PathBuf,
        /// The YAML error.
        #[source]
        source: serde_yaml::Error,
    },
    /// A values file has a key or value Helm refuses (a null key, an integer key above `int64`, a `!!binary` value
    /// that is no base64), with sigs.k8s.io/yaml's message.
    #[error("failed to parse {path}: error converting YAML to JSON: {message}")]
    ValuesRefused {
        /// The file.
        path: PathBuf,
        /// What sigs.k8s.io/yaml says of the key or value.
        message: String,
    },
    /// The ControllerDeployment carries no usable chart.
    #[error("{path}: {message}")]
    Deployment {
        /// The file.
        path: PathBuf,
        /// What is missing or wrong.
        message: String,
    },
    /// Loading the chart failed.
    #[error("loading chart")]
    Chart(#[from] ChartError),
    /// Rendering failed.
    #[error("rendering chart")]
    Render(#[from] RenderError),
    /// A `--set`, `--set-string` or `--set-json` argument does not parse.
    #[error("invalid {flag} argument")]
    Set {
        /// The flag.
        flag: &'static str,
        /// What is wrong.
        #[source]
        source: SetError,
    },
    /// Pulling the OCI chart failed.
    #[error("pulling OCI chart")]
    Oci(#[from] crate::oci::OciError),
    /// Encoding the JSON output failed.
    #[error("encoding output")]
    Output(#[from] serde_json::Error),
}

/// Renders according to `args` and returns the text to print.
///
/// # Errors
/// Unreadable or invalid inputs, chart loading and rendering failures.
pub fn run(args: &RenderArgs) -> Result<String, Error> {
    let limits = args.limits();
    let (chart_path, release_name) = args.chart_and_release();
    let (chart, mut values) = match (&chart_path, &args.deployment, &args.oci) {
        (Some(path), _, _) => (load_chart(path, &limits)?, serde_json::json!({})),
        (None, Some(path), _) => match deployment_chart(path)? {
            (DeploymentChart::Raw(bytes), values) => (Chart::from_bytes(&bytes, &limits)?, values),
            (DeploymentChart::Oci(reference), values) => {
                (pull_chart(args, &reference, &limits)?, values)
            }
        },
        (None, None, Some(reference)) => (
            pull_chart(args, &Reference::parse(reference)?, &limits)?,
            serde_json::json!({}),
        ),
        (None, None, None) => {
            return Err(Error::Deployment {
                path: PathBuf::from("-"),
                message: "a chart (CHART or --chart), --deployment or --oci is required".into(),
            });
        }
    };
    for path in &args.values {
        let overlay = read_values(path)?;
        merge_values(&mut values, &overlay);
    }
    // Helm's order: --set-json, --set, --set-string, each over the values files.
    for (flag, arguments, kind) in [
        ("--set-json", &args.set_json, SetKind::Json),
        ("--set", &args.set, SetKind::Typed),
        ("--set-string", &args.set_string, SetKind::String),
    ] {
        for argument in arguments {
            let mut overlay = serde_json::json!({});
            crate::set_values::apply(&mut overlay, argument, kind)
                .map_err(|source| Error::Set { flag, source })?;
            merge_values(&mut values, &overlay);
        }
    }
    if let Some(path) = &args.seed {
        let seed = read_yaml(path)?;
        merge_values(
            &mut values,
            &gardener_values(&seed, &GardenerInfo::default()),
        );
    }
    let options = RenderOptions {
        release_name,
        namespace: args.namespace.clone(),
        values,
        kube_version: args.kube_version.clone(),
        api_versions: crate::helm_default_api_versions()
            .into_iter()
            .chain(args.api_versions.iter().cloned())
            .collect(),
        limits,
        ..RenderOptions::default()
    };
    let rendered = Renderer::new().render(&chart, &options)?;
    match args.output {
        OutputFormat::Json => Ok(serde_json::to_string_pretty(&rendered.templates)? + "\n"),
        OutputFormat::Yaml => Ok(helm_template_text(&rendered.templates)),
    }
}

/// Formats templates like `helm template`: whitespace-only outputs skipped, each prefixed with its source.
pub fn helm_template_text(templates: &std::collections::BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for (path, text) in templates {
        if text.trim().is_empty() {
            continue;
        }
        out.push_str("---\n# Source: ");
        out.push_str(path);
        out.push('\n');
        out.push_str(text.trim_start_matches('\n'));
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn read_yaml(path: &Path) -> Result<serde_json::Value, Error> {
    let value: serde_json::Value =
        crate::chart::from_yaml(&read(path)?).map_err(|source| Error::Yaml {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(if value.is_null() {
        serde_json::json!({})
    } else {
        value
    })
}

/// A values file (`-f`) read as Helm reads one: a map, YAML 1.1 scalars, the keys it refuses refused.
fn read_values(path: &Path) -> Result<serde_json::Value, Error> {
    crate::chart::parse_values_map(&read(path)?).map_err(|e| match e {
        crate::values_yaml::ValuesYamlError::Yaml(source) => Error::Yaml {
            path: path.to_path_buf(),
            source,
        },
        crate::values_yaml::ValuesYamlError::Refused(message) => Error::ValuesRefused {
            path: path.to_path_buf(),
            message,
        },
    })
}

fn load_chart(path: &Path, limits: &Limits) -> Result<Chart, Error> {
    if path.is_dir() {
        return Ok(Chart::from_dir(path, limits)?);
    }
    Ok(Chart::from_bytes(&read(path)?, limits)?)
}

/// Pulls an OCI chart with the CLI's credentials and CA bundle.
fn pull_chart(args: &RenderArgs, reference: &Reference, limits: &Limits) -> Result<Chart, Error> {
    let ca_bundle = args.ca_bundle.as_deref().map(read).transpose()?;
    let puller = OciPuller::new(PullOptions {
        ca_bundle,
        ..PullOptions::default()
    })?;
    let credentials = args.oci_username.as_ref().map(|username| Credentials {
        username: username.clone(),
        password: args.oci_password.clone().unwrap_or_default(),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| Error::Read {
            path: PathBuf::from("<tokio runtime>"),
            source,
        })?;
    let pulled = runtime.block_on(puller.pull(reference, credentials.as_ref()))?;
    Ok(Chart::from_bytes(&pulled.archive, limits)?)
}

/// Where a ControllerDeployment's chart is.
enum DeploymentChart {
    /// `helm.rawChart` / `providerConfig.chart`: the archive.
    Raw(Vec<u8>),
    /// `helm.ociRepository`.
    Oci(Reference),
}

/// The OCI reference of `helm.ociRepository`: `ref`, or `repository` with `tag` and/or `digest`.
///
/// # Errors
/// An incomplete or invalid reference.
pub fn oci_repository_reference(
    oci: &serde_json::Value,
) -> Result<Reference, crate::oci::OciError> {
    let field = |k: &str| {
        oci.get(k)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if let Some(reference) = field("ref") {
        return Reference::parse(reference);
    }
    let mut text = field("repository").unwrap_or_default().to_string();
    if let Some(tag) = field("tag") {
        text.push(':');
        text.push_str(tag);
    }
    if let Some(digest) = field("digest") {
        text.push('@');
        text.push_str(digest);
    }
    Reference::parse(&text)
}

/// Extracts the chart and values from a ControllerDeployment in either API version.
fn deployment_chart(path: &Path) -> Result<(DeploymentChart, serde_json::Value), Error> {
    let deployment = read_yaml(path)?;
    let invalid = |message: &str| Error::Deployment {
        path: path.to_path_buf(),
        message: message.to_string(),
    };
    let (encoded, values) = if let Some(helm) = deployment.get("helm") {
        let raw = helm.get("rawChart").and_then(serde_json::Value::as_str);
        if let (None, Some(oci)) = (raw, helm.get("ociRepository")) {
            let values = helm
                .get("values")
                .filter(|v| v.is_object())
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            return Ok((DeploymentChart::Oci(oci_repository_reference(oci)?), values));
        }
        (
            raw.ok_or_else(|| invalid("helm.rawChart is missing"))?,
            helm.get("values"),
        )
    } else if deployment.get("type").and_then(serde_json::Value::as_str) == Some("helm") {
        let config = deployment
            .get("providerConfig")
            .ok_or_else(|| invalid("providerConfig is missing"))?;
        let chart = config
            .get("chart")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| invalid("providerConfig.chart is missing"))?;
        (chart, config.get("values"))
    } else {
        return Err(invalid(
            "not a helm ControllerDeployment (no .helm and no type: helm)",
        ));
    };
    let compact: String = encoded.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| invalid(&format!("chart is not valid base64: {e}")))?;
    let values = values
        .filter(|v| v.is_object())
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    Ok((DeploymentChart::Raw(bytes), values))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn render_time_flags_take_ms_s_and_m() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("10h").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn helm_template_text_skips_empty_outputs_and_adds_sources() {
        let mut templates = BTreeMap::new();
        templates.insert("c/templates/a.yaml".to_string(), "\nkind: A\n".to_string());
        templates.insert("c/templates/empty.yaml".to_string(), "\n  \n".to_string());
        assert_eq!(
            helm_template_text(&templates),
            "---\n# Source: c/templates/a.yaml\nkind: A\n"
        );
    }
}
