//! `seedlet sandbox serve`: one sandbox API server on its own, like `kind create cluster` for a
//! single cluster: says where it serves, where its kubeconfig is and `ready`, then serves until
//! stopped.

use std::path::PathBuf;

use seedlet_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::files::{self, StateDir};

/// Name of the admin kubeconfig written into the state directory.
pub const ADMIN_KUBECONFIG: &str = "admin.kubeconfig";

/// How `seedlet sandbox serve` runs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// State directory (store, CA, `admin.kubeconfig`, `ca.crt`); kept across runs.
    pub dir: PathBuf,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Cluster name, also the kubeconfig's context name.
    pub name: String,
}

/// Serves one sandbox until `shutdown`, after writing `DIR/admin.kubeconfig` (0600) and
/// `DIR/ca.crt` and printing the address, the kubeconfig path and `ready`.
///
/// # Errors
/// [`Error::StateDirInUse`] when another process serves from the directory, [`Error::Sandbox`]
/// when the server cannot start, [`Error::StateDir`] when a file cannot be written.
pub async fn serve(options: ServeOptions, shutdown: CancellationToken) -> Result<(), Error> {
    let state = StateDir::prepare(Some(options.dir.clone()))?;
    let sandbox = Sandbox::builder()
        .name(options.name.clone())
        .dir(state.root())
        .port(options.port)
        .start()
        .await
        .map_err(|source| Error::Sandbox {
            name: "served",
            source,
        })?;
    let kubeconfig = files::named_kubeconfig(sandbox.admin_kubeconfig(), &options.name);
    let written = (|| -> Result<PathBuf, Error> {
        let path =
            state.write_kubeconfig(ADMIN_KUBECONFIG, &files::kubeconfig_yaml(&kubeconfig))?;
        state.write_config("ca.crt", &sandbox.ca_cert_pem())?;
        Ok(path)
    })();
    let kubeconfig_path = match written {
        Ok(path) => path,
        Err(error) => {
            sandbox.shutdown().await;
            return Err(error);
        }
    };
    crate::output::print(&format!(
        "sandbox API server {} serving at {}",
        options.name,
        sandbox.endpoint()
    ));
    crate::output::print(&format!("  state directory: {}", state.root().display()));
    crate::output::print(&format!("  kubeconfig: {}", kubeconfig_path.display()));
    crate::output::print(&format!(
        "  try: kubectl --kubeconfig {} get namespaces",
        kubeconfig_path.display()
    ));
    crate::output::print("ready");
    shutdown.cancelled().await;
    sandbox.shutdown().await;
    Ok(())
}
