//! The root data of a render's templates (`.` with `.Values`, `.Release`, `.Capabilities`, `.Chart`, `.Template`)
//! in Helm's execution order, with what it was made from, so a renderer can keep it for the next render.

use std::sync::Arc;

use minijinja::value::Value;

use crate::funcs::context::ResolvedPaths;
use crate::funcs::template::AliasPaths;
use crate::objects::Misses;
use crate::render::RenderOptions;

/// Helm's order of template paths: deeper paths first, then reverse lexical order.
pub(crate) fn helm_order(a: &str, b: &str) -> std::cmp::Ordering {
    // A vectorised byte count: `matches('/')` ran a searcher per comparison, `filter(..).count()` took two bytes a
    // step (1 % of a cold shoot-cert-service render: two sorts per render).
    let depth = |p: &str| crate::gotmpl::count_byte(p.as_bytes(), b'/');
    depth(b).cmp(&depth(a)).then_with(|| b.cmp(a))
}

/// One template to execute with its root data.
#[derive(Debug)]
pub(crate) struct Unit {
    pub(crate) path: String,
    /// The template file's size, which its output is reserved for.
    pub(crate) size: usize,
    /// The root data (`.`) of the template's chart: one map shared by all templates of a chart, as in Helm, so
    /// what one template sets on `.` the templates executed after it see.
    pub(crate) root: Value,
    /// The template's `.Template` (`Name`, `BasePath`), put into `root` just before the template executes
    /// ([`crate::funcs::value::GoMap::put_own_entry`]), as Helm's engine does.
    pub(crate) template: Value,
    /// The field paths the template reads through `_p<n>` names.
    pub(crate) aliases: Option<AliasPaths>,
    /// What those paths gave from `root`, kept with it (see [`ResolvedPaths`]).
    pub(crate) resolved: Arc<ResolvedPaths>,
}

/// What the root data of a render is made from.
#[derive(Debug)]
pub(crate) struct Inputs {
    /// The chart's values coalesced with the supplied ones.
    pub(crate) values: Arc<serde_json::Value>,
    pub(crate) release: ReleaseKey,
    pub(crate) kube_version: String,
    pub(crate) api_versions: Arc<[String]>,
}

impl Inputs {
    /// Whether root data made from `self` serves a render of `other`: the same coalesced values (by identity,
    /// a translated chart hands out the same ones for the same supplied values), release and
    /// capabilities.
    pub(crate) fn same_as(&self, other: &Inputs) -> bool {
        Arc::ptr_eq(&self.values, &other.values)
            && Arc::ptr_eq(&self.api_versions, &other.api_versions)
            && self.release == other.release
            && self.kube_version == other.kube_version
    }
}

/// The `.Release` fields of [`RenderOptions`].
#[derive(Debug, PartialEq)]
pub(crate) struct ReleaseKey {
    pub(crate) name: String,
    pub(crate) namespace: String,
    pub(crate) is_upgrade: bool,
    pub(crate) revision: i64,
}

impl ReleaseKey {
    pub(crate) fn of(options: &RenderOptions) -> Self {
        Self {
            name: options.release_name.clone(),
            namespace: options.namespace.clone(),
            is_upgrade: options.is_upgrade,
            revision: options.revision,
        }
    }
}

/// The root data of every template of one render, in execution order, with what it was made from.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) inputs: Inputs,
    /// The API versions `.Capabilities.APIVersions.Has` answered false for (emptied after each render).
    pub(crate) misses: Misses,
    pub(crate) units: Vec<Unit>,
}

/// Objects shared by all templates of one render.
pub(crate) struct Shared {
    pub(crate) release: Value,
    pub(crate) capabilities: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_order_puts_deeper_paths_first_then_reverse_lexical() {
        let mut paths = vec![
            "c/templates/a.yaml",
            "c/charts/s/templates/z.yaml",
            "c/templates/b.yaml",
            "c/charts/s/templates/a.yaml",
            "c/templates/sub/x.yaml",
        ];
        paths.sort_by(|a, b| helm_order(a, b));
        assert_eq!(
            paths,
            [
                "c/charts/s/templates/z.yaml",
                "c/charts/s/templates/a.yaml",
                "c/templates/sub/x.yaml",
                "c/templates/b.yaml",
                "c/templates/a.yaml",
            ]
        );
    }
}
