//! The garden of a garden run: the sandbox, its CRDs and bootstrap token, and the garden
//! controller as a separate `seedlet-garden` (or `seedlet garden`) process whose webhooks the
//! sandbox calls.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use seedlet_landscape::files::{self, StateDir};
use seedlet_landscape::garden_setup::{self, BootstrapToken};
use seedlet_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use super::GardenOptions;
use super::observe::Observers;
use crate::Error;
use crate::process::MeasuredProcess;

/// The garden controller's user in the garden (its kubeconfig's client certificate).
const CONTROLLER_USER: &str = "seedlet-garden-controller";
/// How long the controller's webhook server may take to listen.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(60);

/// Everything a garden run started.
pub struct GardenLandscape {
    pub(super) state: StateDir,
    pub(super) garden: Sandbox,
    pub(super) stop: CancellationToken,
    pub(super) controller: Option<MeasuredProcess>,
    pub(super) observers: Observers,
    pub(super) token: BootstrapToken,
    pub(super) log: PathBuf,
}

impl GardenLandscape {
    /// Starts the garden sandbox, prepares it, starts the garden controller process and points
    /// the sandbox at its webhooks.
    pub async fn start(options: &GardenOptions) -> Result<Self, Error> {
        let state = StateDir::prepare(options.dir.clone()).map_err(Error::Landscape)?;
        let garden = Sandbox::builder()
            .name("garden")
            .start()
            .await
            .map_err(|source| Error::Sandbox {
                name: "garden",
                source,
            })?;
        let client = garden.client();
        garden_setup::install_crds(&client, seedlet_api::crds::garden_crds())
            .await
            .map_err(Error::Landscape)?;
        // The namespaces, the garden identity and one bootstrap token for the CSRs.
        let token = garden_setup::prepare_garden(&client, &super::seeds::seed_name(0))
            .await
            .map_err(Error::Landscape)?;
        let log = state.path("garden.log");
        let mut landscape = Self {
            state,
            garden,
            stop: CancellationToken::new(),
            controller: None,
            observers: Observers::default(),
            token,
            log,
        };
        if let Err(error) = landscape.start_controller(options).await {
            landscape.stop().await;
            return Err(error);
        }
        landscape.observers.start(&client, &landscape.stop);
        Ok(landscape)
    }

    async fn start_controller(&mut self, options: &GardenOptions) -> Result<(), Error> {
        let tls = seedlet_landscape::webhooks::write_serving_certificate(&self.state, &self.garden)
            .map_err(Error::Landscape)?;
        let kubeconfig = self
            .garden
            .kubeconfig_for(CONTROLLER_USER, &["system:masters"])
            .map_err(|source| Error::Sandbox {
                name: "garden",
                source,
            })?;
        let kubeconfig = self
            .state
            .write_kubeconfig(
                "garden-controller.kubeconfig",
                &files::kubeconfig_yaml(&kubeconfig),
            )
            .map_err(Error::Landscape)?;
        let webhook_port = crate::landscape::free_port()?;
        let health_port = crate::landscape::free_port()?;
        let config = controller_config(
            &kubeconfig,
            &tls,
            webhook_port,
            [health_port, crate::landscape::free_port()?],
            options.monitor_period,
        );
        let config_path = self
            .state
            .write_config("garden-controller.yaml", &config)
            .map_err(Error::Landscape)?;
        seedlet_config::load_garden_controller(&config_path).map_err(|source| Error::Config {
            component: "garden controller",
            source,
        })?;
        let args = crate::process::daemon_args(&options.garden_binary, "garden", &config_path);
        let mut process = MeasuredProcess::spawn_component(
            "garden controller",
            &options.garden_binary,
            &args,
            &self.log,
            options.sample_interval,
            &[],
        )?;
        let address = SocketAddr::from(([127, 0, 0, 1], webhook_port));
        let health = SocketAddr::from(([127, 0, 0, 1], health_port));
        let started = Instant::now();
        // Ready: bootstrapper RBAC written and caches synced; and the webhooks listen.
        while !(ready(health).await && tokio::net::TcpStream::connect(address).await.is_ok()) {
            process.ensure_running(&self.log)?;
            if started.elapsed() > LISTEN_TIMEOUT {
                return Err(Error::Timeout {
                    what: format!(
                        "the garden controller's /readyz on {health} and webhooks on {address}"
                    ),
                    timeout: LISTEN_TIMEOUT,
                    log: self.log.clone(),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.controller = Some(process);
        seedlet_landscape::webhooks::enable(&self.state, &self.garden, address)
            .await
            .map_err(Error::Landscape)?;
        Ok(())
    }

    /// Fails when the controller process has exited.
    pub fn ensure_running(&mut self) -> Result<(), Error> {
        match self.controller.as_mut() {
            Some(process) => process.ensure_running(&self.log),
            None => Ok(()),
        }
    }

    /// Stops the heartbeats, the watches, the controller and the sandbox.
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(process) = self.controller.take() {
            process.stop().await;
        }
        self.garden.shutdown().await;
    }
}

/// Whether `GET /readyz` on `address` answers 200 (plain HTTP/1.0, no client library needed).
async fn ready(address: SocketAddr) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(address).await else {
        return false;
    };
    if stream
        .write_all(b"GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .is_err()
    {
        return false;
    }
    let mut head = [0_u8; 12];
    stream.read_exact(&mut head).await.is_ok() && head.ends_with(b" 200")
}

/// The controller's configuration: the bench's garden kubeconfig, fixed loopback ports picked
/// free, the webhooks, and the lifecycle's `monitorPeriod`.
fn controller_config(
    kubeconfig: &std::path::Path,
    tls: &std::path::Path,
    webhook_port: u16,
    [health_port, metrics_port]: [u16; 2],
    monitor_period: Duration,
) -> String {
    format!(
        "# Written by `seedlet bench garden`.
apiVersion: seedlet.gardener.cloud/v1alpha1
kind: GardenControllerConfiguration
gardenClientConnection:
  kubeconfig: {kubeconfig}
controllers:
  seedLifecycle:
    syncPeriod: 10s
    monitorPeriod: {monitor}s
    shootMonitorPeriod: 10m
leaderElection:
  leaderElect: false
logLevel: info
logFormat: text
server:
  healthProbes:
    bindAddress: 127.0.0.1
    port: {health_port}
  metrics:
    bindAddress: 127.0.0.1
    port: {metrics_port}
webhooks:
  server:
    bindAddress: 127.0.0.1
    port: {webhook_port}
  tls:
    serverCertDir: {tls}
",
        kubeconfig = kubeconfig.display(),
        monitor = monitor_period.as_secs(),
        tls = tls.display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controller_config_is_valid() {
        let text = controller_config(
            std::path::Path::new("/tmp/garden.kubeconfig"),
            std::path::Path::new("/tmp/tls"),
            40001,
            [40002, 40003],
            Duration::from_secs(10),
        );
        match seedlet_config::parse(&text, "garden.yaml") {
            Ok(seedlet_config::AnyConfig::GardenController(config)) => {
                assert_eq!(
                    config.controllers.seed_lifecycle.monitor_period.as_std(),
                    Duration::from_secs(10)
                );
                assert!(!config.leader_election.leader_elect);
            }
            Ok(_) => panic!("not a garden controller configuration"),
            Err(error) => panic!("invalid: {error}"),
        }
    }
}
