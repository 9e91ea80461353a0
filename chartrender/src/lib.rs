//! Helm chart archives to Kubernetes manifests via Go-template to minijinja translation.
//!
//! ```no_run
//! # fn demo(bytes: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
//! use seedlet_chartrender::{Chart, Limits, RenderOptions, Renderer};
//! let chart = Chart::from_archive(bytes, &Limits::default())?;
//! let renderer = Renderer::new(); // keeps translated charts, share it
//! let out = renderer.render(&chart, &RenderOptions { release_name: "demo".into(), ..Default::default() })?;
//! for manifest in out.manifests()? {
//!     println!("{} {}", manifest.template, manifest.object["kind"]);
//! }
//! # Ok(()) }
//! ```
//!
//! Design: every template file is parsed as a Go `text/template` once per chart (keyed by the chart digest),
//! translated into minijinja source (`gotmpl`), and executed by minijinja with Go/Sprig semantics supplied by
//! the registered functions (`funcs`): pipelines become calls with the piped value last, Go truthiness and
//! `and`/`or` map onto minijinja's, variables live in a namespace so Go scoping holds, and maps are shared
//! mutable objects like Go maps.

mod blockyaml;
mod capabilities;
mod chart;
pub mod cli;
mod funcs;
mod glob;
mod gotmpl;
mod helmignore;
mod load;
mod meter;
mod nesting;
mod objects;
pub mod oci;
mod precompile;
mod prepared;
mod render;
mod schema;
pub mod set_values;
mod translation;
mod values;
mod values_yaml;
mod yaml11;

pub use capabilities::{HELM_DEFAULT_KUBE_VERSION, helm_default_api_versions, version_set};
pub use chart::{Chart, ChartError, Dependency, Metadata};
pub use gotmpl::ParseError;
pub use load::{ChartFile, Limits, LoadError};
pub use render::{
    Lookup, Manifest, RenderError, RenderOptions, Rendered, Renderer, install_rank, parse_documents,
};
pub use values::{GardenerInfo, gardener_values, merge_values};

/// Any failure of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Loading the chart failed.
    #[error(transparent)]
    Chart(#[from] ChartError),
    /// Rendering failed.
    #[error(transparent)]
    Render(#[from] RenderError),
}
