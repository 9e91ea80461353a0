//! Rendering: per-chart translation cache, template objects, execution order, output splitting and ordering.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::BuildHasherDefault;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock, Mutex};

use minijinja::value::{Value, ValueKind};
use minijinja::{Environment, UndefinedBehavior};

use crate::chart::Chart;
use crate::funcs::gostring;
pub use crate::funcs::template::Lookup;
use crate::funcs::template::{self, ActionTable, USER_ERROR_PREFIX};
use crate::funcs::value::{GoMap, MUTATIONS, MapType, from_json, from_json_exact, write_go};
use crate::gotmpl::ParseError;
use crate::load::Limits;
use crate::meter::{self, Session};
use crate::objects::{self, Files};
use crate::precompile::{ChartTranslation, translate_chart};
use crate::prepared::{Inputs, Prepared, ReleaseKey, Shared, Unit, helm_order};
use crate::translation::TemplateFile;
use crate::values;

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// A template does not parse as a Go template.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The translated template was rejected by minijinja (a translator bug; the message names the template).
    #[error("compiling translated template {template}: {message}")]
    Compile {
        /// The template path or define name.
        template: String,
        /// minijinja's message.
        message: String,
    },
    /// Executing a template failed (including `required` and `fail`).
    #[error("{message}")]
    Execute {
        /// The outermost template being executed.
        template: String,
        /// Line in that template.
        line: Option<usize>,
        /// The Go action that failed, if known.
        action: Option<String>,
        /// Helm-like message (for `required`/`fail`: `execution error at (path:line): message`).
        message: String,
    },
    /// A render limit of [`Limits`] was exceeded (value size, element count, output size or time).
    #[error("{message}")]
    Limit {
        /// The outermost template being executed.
        template: String,
        /// Line in that template.
        line: Option<usize>,
        /// The limit's name as in the agent configuration (`maxValueBytes`, `maxValueItems`,
        /// `maxOutputBytes`, `maxRenderTime`).
        limit: &'static str,
        /// What went over the limit and where, e.g. `template: c/templates/a.yaml:1: executing …
        /// at <print $s $s>: print: a value of 33554432 bytes is over maxValueBytes = 16777216 bytes`.
        message: String,
    },
    /// The values violate `values.schema.json` of the chart or a subchart (Helm's message, one line per violation).
    #[error("{message}")]
    Schema {
        /// The top chart.
        chart: String,
        /// Helm's text.
        message: String,
    },
    /// A rendered document is not valid YAML.
    #[error("YAML parse error on {template}: {source}")]
    Yaml {
        /// The template path.
        template: String,
        /// The YAML error.
        #[source]
        source: serde_yaml::Error,
    },
}

impl RenderError {
    /// The template path (or define name) the error is about.
    pub fn template(&self) -> &str {
        match self {
            RenderError::Parse(e) => &e.template,
            RenderError::Compile { template, .. }
            | RenderError::Execute { template, .. }
            | RenderError::Limit { template, .. }
            | RenderError::Yaml { template, .. } => template,
            RenderError::Schema { chart, .. } => chart,
        }
    }
}

/// Release and cluster information for one render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// `.Release.Name`.
    pub release_name: String,
    /// `.Release.Namespace`.
    pub namespace: String,
    /// Supplied values (ControllerDeployment values with injected `gardener` values merged on top).
    pub values: serde_json::Value,
    /// `.Capabilities.KubeVersion` (default `v1.20.0`, Helm v3.11's engine default and the fixtures').
    pub kube_version: String,
    /// `.Capabilities.APIVersions`: group/versions and `group/version/Kind` entries (default: Helm v3.11's
    /// `helm template` set, [`crate::helm_default_api_versions`]; the agent passes the seed's discovery).
    pub api_versions: Vec<String>,
    /// `.Release.Revision`.
    pub revision: i64,
    /// `.Release.IsUpgrade` (and `IsInstall` is its negation).
    pub is_upgrade: bool,
    /// Where `lookup` reads objects; `None` (offline) makes it return an empty map like `helm template`.
    pub lookup: Option<Arc<dyn Lookup>>,
    /// Bounds on values, output and time of this render (the archive bounds apply when loading).
    pub limits: Limits,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            release_name: "release-name".into(),
            namespace: "default".into(),
            values: serde_json::Value::Object(serde_json::Map::new()),
            kube_version: crate::capabilities::HELM_DEFAULT_KUBE_VERSION.into(),
            api_versions: crate::capabilities::helm_default_api_versions(),
            revision: 1,
            is_upgrade: false,
            lookup: None,
            limits: Limits::default(),
        }
    }
}

/// One rendered object.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The template path that produced it.
    pub template: String,
    /// The object.
    pub object: serde_json::Value,
}

/// The output of a render: text per template path, like Helm's engine returns it (partials and NOTES.txt excluded).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    /// Rendered text by template path.
    pub templates: BTreeMap<String, String>,
    /// API versions a template asked `.Capabilities.APIVersions.Has` about that were not in the set.
    pub api_version_misses: BTreeSet<String>,
}

impl Rendered {
    /// Splits every template into objects: empty and comment-only documents and `helm.sh/hook` objects dropped,
    /// ordered by Helm's install order of kinds, then template path, then position.
    ///
    /// # Errors
    /// A document that is not valid YAML, naming its template.
    pub fn manifests(&self) -> Result<Vec<Manifest>, RenderError> {
        let mut out = Vec::new();
        for (template, text) in &self.templates {
            for object in parse_documents(template, text)? {
                let hook = object
                    .pointer("/metadata/annotations/helm.sh~1hook")
                    .is_some();
                if !hook {
                    out.push(Manifest {
                        template: template.clone(),
                        object,
                    });
                }
            }
        }
        out.sort_by_key(|m| {
            install_rank(
                m.object
                    .get("kind")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default(),
            )
        });
        Ok(out)
    }
}

/// Parses a rendered template as a multi-document YAML stream, dropping empty and comment-only documents.
///
/// # Errors
/// Invalid YAML, naming the template.
pub fn parse_documents(template: &str, text: &str) -> Result<Vec<serde_json::Value>, RenderError> {
    use serde::Deserialize as _;
    let mut out = Vec::new();
    if text.trim().is_empty() {
        return Ok(out);
    }
    seedlet_yamlguard::check(text).map_err(|too_deep| RenderError::Yaml {
        template: template.to_string(),
        source: <serde_yaml::Error as serde::de::Error>::custom(too_deep),
    })?;
    for document in serde_yaml::Deserializer::from_str(text) {
        let object =
            serde_json::Value::deserialize(document).map_err(|source| RenderError::Yaml {
                template: template.to_string(),
                source,
            })?;
        if !object.is_null() {
            out.push(object);
        }
    }
    Ok(out)
}

/// Helm's install order as a sort key for `kind`; unknown kinds sort after all known ones (by
/// name). The agent's ManagedResource applier applies objects in the same order.
pub fn install_rank(kind: &str) -> (usize, String) {
    const ORDER: &[&str] = &[
        "PriorityClass",
        "Namespace",
        "NetworkPolicy",
        "ResourceQuota",
        "LimitRange",
        "PodSecurityPolicy",
        "PodDisruptionBudget",
        "ServiceAccount",
        "Secret",
        "SecretList",
        "ConfigMap",
        "StorageClass",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleList",
        "ClusterRoleBinding",
        "ClusterRoleBindingList",
        "Role",
        "RoleList",
        "RoleBinding",
        "RoleBindingList",
        "Service",
        "DaemonSet",
        "Pod",
        "ReplicationController",
        "ReplicaSet",
        "Deployment",
        "HorizontalPodAutoscaler",
        "StatefulSet",
        "Job",
        "CronJob",
        "IngressClass",
        "Ingress",
        "APIService",
    ];
    match ORDER.iter().position(|k| *k == kind) {
        Some(rank) => (rank, String::new()),
        None => (ORDER.len(), kind.to_string()),
    }
}

/// Renders charts; holds the per-chart translation cache (thread-safe, shareable).
#[derive(Debug, Default)]
pub struct Renderer {
    cache: Mutex<HashMap<String, Arc<Compiled>>>,
}

impl Drop for Renderer {
    /// Charts translated with the helper thread's help are freed on it (see [`crate::translation::drop_on_helper`]).
    fn drop(&mut self) {
        let cache = self.cache.get_mut().unwrap_or_else(|p| p.into_inner());
        if cache.values().any(|compiled| compiled.helped) {
            crate::translation::drop_on_helper(std::mem::take(cache));
        }
    }
}

/// Charts kept translated at once; beyond this the cache starts over.
const CACHE_CHARTS: usize = 64;

impl Renderer {
    /// An empty renderer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Renders `chart` with `options`, translating it on first use.
    ///
    /// # Errors
    /// Parse errors, template execution errors (with template, line, action and `required`/`fail` messages).
    pub fn render(&self, chart: &Chart, options: &RenderOptions) -> Result<Rendered, RenderError> {
        let compiled = self.compiled(chart)?;
        compiled.render(chart, options)
    }

    fn compiled(&self, chart: &Chart) -> Result<Arc<Compiled>, RenderError> {
        let key = chart.digest().to_string();
        if let Some(found) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(Arc::clone(found));
        }
        let compiled = Arc::new(Compiled::new(chart)?);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= CACHE_CHARTS {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&compiled));
        Ok(compiled)
    }
}

/// The settings and functions every chart's environment starts from, built once: cloning an environment shares
/// its function table, and no chart adds a function (`include`, `template` and `tpl` find the chart's action table
/// in the execution context), so every renderer uses this one table.
static BASE_ENVIRONMENT: LazyLock<Environment<'static>> = LazyLock::new(base_environment);

/// The functions of [`BASE_ENVIRONMENT`] by name, in a hash map: minijinja looks a called name up in the
/// execution context first and then in the environment's globals, a `BTreeMap` of about 230 names sharing the
/// `f_` prefix (a dozen string comparisons per call, 5 % of a cached render), so the context answers for them
/// from here ([`function`]).
static FUNCTIONS: LazyLock<HashMap<&'static str, Value, BuildHasherDefault<NameHasher>>> =
    LazyLock::new(|| {
        BASE_ENVIRONMENT
            .globals()
            .filter(|(name, _)| name.starts_with("f_"))
            .collect()
    });

/// The template function registered as `name` (`f_<go name>`).
pub(crate) fn function(name: &str) -> Option<Value> {
    FUNCTIONS.get(name).cloned()
}

/// FNV-1a over the bytes of a function name: short keys, a fixed set, no untrusted input to defend against.
#[derive(Default)]
struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &byte in bytes {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = hash;
    }
}

fn base_environment() -> Environment<'static> {
    // No default filters, tests or globals: translated templates only call our `f_*` functions.
    let mut env = Environment::empty();
    env.add_function("namespace", minijinja::functions::namespace);
    env.set_keep_trailing_newline(true);
    // Strict: the plain undefined a field of a non-map gives fails where it is used (`funcs::value::missing`).
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Errors carry the translated text they happened in (read only on the failure path, for Go's text of a broken
    // field chain: `funcs::field_error`); a render that succeeds does not pay for it.
    env.set_debug(true);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_recursion_limit(1000);
    env.set_formatter(|out, _state, value| {
        // Go prints `<no value>` for nil; Helm strips it from each file's output, not from `include` results.
        if value.is_undefined() || value.is_none() {
            return out
                .write_str(template::NO_VALUE)
                .map_err(minijinja::Error::from);
        }
        // Bytes (`.Files.GetBytes`) print as Go prints a `[]byte`, a list of numbers, below.
        if let Some(s) = value.as_str().filter(|_| value.kind() != ValueKind::Bytes) {
            out.write_str(s).map_err(minijinja::Error::from)?;
            // Reports an output bound this write passed, on this line.
            return meter::check_exceeded();
        }
        meter::check_printed("printing a value", std::slice::from_ref(value))?;
        let mut text = String::new();
        write_go(&mut text, value);
        out.write_str(&text).map_err(minijinja::Error::from)?;
        meter::check_exceeded()
    });
    crate::funcs::register(&mut env);
    env
}

/// A chart translated into one minijinja environment (templates of the chart and all subcharts).
#[derive(Debug)]
struct Compiled {
    env: Arc<Environment<'static>>,
    actions: Arc<ActionTable>,
    /// `.Files` per chart path (`name`, `name/charts/sub`, …).
    files: HashMap<String, Value>,
    /// The last supplied values and the chart's values coalesced with them: an agent renders a chart again and
    /// again with the same values, and coalescing copies every default of the chart and its subcharts.
    coalesced: Mutex<Option<(serde_json::Value, Arc<serde_json::Value>)>>,
    /// The root data of every template of the last render that changed no map at all, with what it was made
    /// from. A render takes it out (so no other render can see it) and reuses it for the same values, release
    /// and capabilities instead of building every map again; it goes back only if nothing was changed.
    pristine: Mutex<Option<Prepared>>,
    /// The last `.Capabilities.APIVersions` list, shared by the renders that pass the same one.
    api_versions: Mutex<Option<Arc<[String]>>>,
    /// Whether the translated templates hold stray byte characters (`"\xc3"`-like literals, unquoted when
    /// translating): every render of the chart then looks for them in what it prints.
    strays: bool,
    /// Whether the translation helper thread took part in translating the chart.
    helped: bool,
}

fn collect_templates<'a>(
    chart: &'a Chart,
    chart_path: &str,
    out: &mut Vec<TemplateFile<'a>>,
    files: &mut HashMap<String, Value>,
) {
    files.insert(
        chart_path.to_string(),
        Value::from_object(Files::new(
            chart
                .files
                .iter()
                .map(|f| (f.name.as_str(), f.data.as_slice())),
        )),
    );
    for file in &chart.templates {
        out.push(TemplateFile {
            path: format!("{chart_path}/{}", file.name),
            data: &file.data,
        });
    }
    for (name, sub) in values::subcharts(chart) {
        collect_templates(sub, &format!("{chart_path}/charts/{name}"), out, files);
    }
}

/// Helm's parse order: deeper paths first, then reverse lexical order; later definitions win.
fn parse_order(paths: &mut [TemplateFile<'_>]) {
    paths.sort_by(|a, b| helm_order(&a.path, &b.path));
}

impl Compiled {
    fn new(chart: &Chart) -> Result<Self, RenderError> {
        let mut templates = Vec::new();
        let mut files = HashMap::new();
        collect_templates(chart, chart.name(), &mut templates, &mut files);
        parse_order(&mut templates);
        // Every template is parsed and translated now (Helm parses them all, so a broken one fails any render);
        // minijinja compiles one when a render first reaches it, through the environment's loader, or earlier on
        // the translation helper.
        let ChartTranslation {
            env,
            actions,
            strays,
            helped,
        } = translate_chart(&templates, &BASE_ENVIRONMENT)?;
        let actions = Arc::new(actions);
        Ok(Self {
            env,
            actions,
            files,
            coalesced: Mutex::new(None),
            pristine: Mutex::new(None),
            api_versions: Mutex::new(None),
            strays,
            helped,
        })
    }

    /// `chart`'s values coalesced with `supplied`, reused while the very same values (same keys in the same
    /// order) are supplied again. The chart is the one this translation was made from: both are keyed by its
    /// digest, and a loaded chart is not changed afterwards.
    fn coalesced_values(
        &self,
        chart: &Chart,
        supplied: &serde_json::Value,
    ) -> Arc<serde_json::Value> {
        let last = self.coalesced.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((key, values)) = last.as_ref()
            && values::same_order_equal(key, supplied)
        {
            return Arc::clone(values);
        }
        drop(last);
        let values = Arc::new(values::coalesce(chart, supplied));
        *self.coalesced.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((supplied.clone(), Arc::clone(&values)));
        values
    }

    /// `api_versions` as a shared list, the previous render's when it is the same.
    fn api_versions(&self, api_versions: &[String]) -> Arc<[String]> {
        let mut last = self.api_versions.lock().unwrap_or_else(|p| p.into_inner());
        match last.as_ref() {
            Some(list) if **list == *api_versions => Arc::clone(list),
            _ => {
                let list = crate::capabilities::shared_api_versions(api_versions);
                *last = Some(Arc::clone(&list));
                list
            }
        }
    }

    fn render(&self, chart: &Chart, options: &RenderOptions) -> Result<Rendered, RenderError> {
        let values_arc = self.coalesced_values(chart, &options.values);
        // Any change of any map from here on keeps this render's root data from being reused.
        let epoch = MUTATIONS.load(Ordering::SeqCst);
        if let Some(message) = crate::schema::validate_chart(chart, &values_arc) {
            return Err(RenderError::Schema {
                chart: chart.name().to_string(),
                message,
            });
        }
        let inputs = Inputs {
            values: values_arc,
            release: ReleaseKey::of(options),
            kube_version: options.kube_version.clone(),
            api_versions: self.api_versions(&options.api_versions),
        };
        let reused = self
            .pristine
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .filter(|prepared| prepared.inputs.same_as(&inputs));
        // Root data made for this render is read once per path, mostly: keeping what its paths gave pays off
        // only from the render that reuses it on.
        let (prepared, kept) = match reused {
            Some(prepared) => (prepared, true),
            None => (self.prepare(chart, inputs), false),
        };
        let mut out = BTreeMap::new();
        let session = Session::start(options.limits);
        if self.strays {
            session.note_strays();
        }
        let lookup = options
            .lookup
            .as_ref()
            .map(|l| Value::from_object(template::LookupObject(Arc::clone(l))));
        for unit in &prepared.units {
            let template = self
                .env
                .get_template(&unit.path)
                .map_err(|e| RenderError::Compile {
                    template: unit.path.clone(),
                    message: e.to_string(),
                })?;
            let mut sink = session.file_sink(&unit.path, unit.size);
            if let Some(root) = GoMap::of(&unit.root) {
                root.put_own_entry("Template", unit.template.clone());
            }
            // One include cache per template: `.` is shared by a chart's templates, but its `.Template` differs.
            let cache = Value::from_object(template::IncludeCache::default());
            template
                .render_captured_to(
                    template::ExecContext {
                        dot: unit.root.clone(),
                        depth: 0,
                        cache: Some(cache),
                        lookup: lookup.clone(),
                        aliases: unit.aliases.clone(),
                        resolved: kept.then(|| Arc::clone(&unit.resolved)),
                        actions: Arc::clone(&self.actions),
                    }
                    .value(),
                    &mut sink,
                )
                .map_err(|e| self.execute_error(unit, &e, &session))?;
            if let Some(exceeded) = session.exceeded() {
                // Raw text passed the bound after the last emission or call.
                return Err(RenderError::Limit {
                    template: unit.path.clone(),
                    line: None,
                    limit: exceeded.limit,
                    message: exceeded.message,
                });
            }
            if unit.path.ends_with("/NOTES.txt") {
                continue;
            }
            let text = sink.into_string();
            session.count_output(text.len());
            // A stray byte (a character cut by `substr`, say) shows as U+FFFD, as a Go string read as UTF-8 does.
            let text = match gostring::printable(&text) {
                std::borrow::Cow::Borrowed(_) => text,
                std::borrow::Cow::Owned(printable) => printable,
            };
            out.insert(unit.path.clone(), template::strip_no_value(text));
        }
        // Taking the misses empties the set, so reused root data starts the next render with none.
        let api_version_misses =
            std::mem::take(&mut *prepared.misses.lock().unwrap_or_else(|p| p.into_inner()));
        if MUTATIONS.load(Ordering::SeqCst) == epoch {
            *self.pristine.lock().unwrap_or_else(|p| p.into_inner()) = Some(prepared);
        }
        Ok(Rendered {
            templates: out,
            api_version_misses,
        })
    }

    /// Builds the root data of every template of `chart` for `inputs`, in Helm's execution order.
    fn prepare(&self, chart: &Chart, inputs: Inputs) -> Prepared {
        let release = from_json_exact(&serde_json::json!({
            "Name": inputs.release.name,
            "Namespace": inputs.release.namespace,
            "IsInstall": !inputs.release.is_upgrade,
            "IsUpgrade": inputs.release.is_upgrade,
            "Revision": inputs.release.revision,
            "Service": "Helm",
        }));
        let misses = objects::Misses::default();
        let capabilities = objects::capabilities(
            &inputs.kube_version,
            Arc::clone(&inputs.api_versions),
            &misses,
        );
        let shared = Shared {
            release,
            capabilities,
        };
        let root_values = from_json(&inputs.values);
        let mut units = Vec::new();
        self.collect_units(
            chart,
            chart.name(),
            chart.name(),
            true,
            &root_values,
            &inputs.values,
            &shared,
            &mut units,
        );
        // Helm executes templates in its parse order (deeper paths first, then reverse lexical), which decides
        // which error is reported first and the order of side effects such as `set` on shared values.
        units.sort_by(|a, b| helm_order(&a.path, &b.path));
        Prepared {
            inputs,
            misses,
            units,
        }
    }

    /// Prepares the root data (`.`) of every template to execute in `chart` and its enabled subcharts, and
    /// returns the chart's root data. As in Helm's engine, the templates of one chart share one root map, and
    /// `.Subcharts.<name>` is the root map of subchart `<name>` (its templates' `.`).
    #[allow(clippy::too_many_arguments)]
    fn collect_units(
        &self,
        chart: &Chart,
        name: &str,
        chart_path: &str,
        is_root: bool,
        values: &Value,
        values_json: &serde_json::Value,
        shared: &Shared,
        units: &mut Vec<Unit>,
    ) -> Value {
        let mut subchart_roots = BTreeMap::new();
        for (sub_name, sub) in values::subcharts(chart) {
            if !values::subchart_enabled(chart, &sub_name, &sub.metadata.name, values_json) {
                continue;
            }
            let sub_json = values_json
                .get(&sub_name)
                .cloned()
                .unwrap_or(serde_json::Value::Object(serde_json::Map::new()));
            // The subchart sees the very map the parent has under `.Values.<sub>`, as in Helm.
            let sub_values = values
                .get_attr(&sub_name)
                .ok()
                .filter(|v| !v.is_undefined())
                .unwrap_or_else(|| from_json(&sub_json));
            let sub_path = format!("{chart_path}/charts/{sub_name}");
            let sub_root = self.collect_units(
                sub,
                &sub_name,
                &sub_path,
                false,
                &sub_values,
                &sub_json,
                shared,
                units,
            );
            subchart_roots.insert(sub_name, sub_root);
        }
        let files = self
            .files
            .get(chart_path)
            .cloned()
            .unwrap_or_else(|| Value::from_object(Files::default()));
        // Helm's `.Values` is a `chartutil.Values`: the same map, seen under that type.
        let typed_values = if GoMap::of(values).is_some() {
            GoMap::view(values, MapType::Values)
        } else {
            values.clone()
        };
        // Helm's engine keeps a chart's root data as a `map[string]interface {}` (so `.Subcharts.<name>` is one),
        // and its templates see it as a `chartutil.Values`.
        let root = GoMap::value(BTreeMap::from([
            ("Values".to_string(), typed_values),
            ("Release".to_string(), shared.release.clone()),
            (
                "Chart".to_string(),
                objects::chart_object(chart, name, is_root),
            ),
            ("Capabilities".to_string(), shared.capabilities.clone()),
            ("Files".to_string(), files),
            ("Subcharts".to_string(), GoMap::value(subchart_roots)),
        ]));
        let typed_root = GoMap::view(&root, MapType::Values);
        let base_path = Value::from(format!("{chart_path}/templates"));
        for file in &chart.templates {
            let base_name = file.name.rsplit('/').next().unwrap_or(&file.name);
            if base_name.starts_with('_') {
                continue;
            }
            let path = format!("{chart_path}/{}", file.name);
            let template = GoMap::typed(
                BTreeMap::from([
                    ("Name".to_string(), Value::from(path.as_str())),
                    ("BasePath".to_string(), base_path.clone()),
                ]),
                MapType::Values,
            );
            let aliases = self.actions.aliases(&path);
            units.push(Unit {
                path,
                size: file.data.len(),
                root: typed_root.clone(),
                template,
                aliases,
                resolved: Arc::default(),
            });
        }
        root
    }

    fn execute_error(
        &self,
        unit: &Unit,
        error: &minijinja::Error,
        session: &Session,
    ) -> RenderError {
        let path = unit.path.as_str();
        let described = template::describe(error, &self.actions, &unit.root);
        let line = error.line();
        if let Some(exceeded) = session.exceeded() {
            // Output bounds fail in the writer, whose error text says nothing of the limit.
            let message = if described.contains(&exceeded.message) {
                described
            } else {
                format!("{described}: {}", exceeded.message)
            };
            return RenderError::Limit {
                template: path.to_string(),
                line,
                limit: exceeded.limit,
                message,
            };
        }
        let action =
            line.and_then(|l| template::action_at(&self.actions, error.name().unwrap_or(path), l));
        let message = match described.rfind(USER_ERROR_PREFIX) {
            // `required`/`fail`: Helm reports only the innermost location and the message.
            Some(at) => described[at + USER_ERROR_PREFIX.len()..].to_string(),
            None => described,
        };
        RenderError::Execute {
            template: path.to_string(),
            line,
            action,
            message,
        }
    }
}
