//! The webhooks `seedlet garden` serves for kube-apiserver so that seeds get least privilege
//! (spec `seed-authorizer.md`): the SeedAuthorizer (`POST /webhooks/auth/seed`, a
//! SubjectAccessReview webhook deciding from a resource-dependency [`graph`]) and SeedRestriction
//! (`POST /webhooks/admission/seedrestriction`, an admission webhook, [`restriction`]).

pub mod authorizer;
pub mod certificate;
pub mod graph;
pub mod identity;
pub mod informers;
pub mod metrics;
pub mod restriction;
pub mod review;
pub mod selectors;
pub mod server;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use seedlet_config::garden_webhooks::GardenWebhooks;
use seedlet_runtime::clock::Clock;

use crate::caches::GardenCaches;
use tokio_util::sync::CancellationToken;

pub use server::ServerError;

/// Starts the graph's watches (on the process's shared informers where a controller reads the
/// kind too) and the HTTPS server as `config` says; returns the bound address. Both run until
/// `stop`, on every replica (the webhooks need no leadership).
///
/// # Errors
/// [`ServerError`] for an unusable certificate or address.
pub async fn start(
    caches: Arc<GardenCaches>,
    config: &GardenWebhooks,
    clock: Arc<dyn Clock>,
    metrics: metrics::WebhookMetrics,
    stop: CancellationToken,
) -> Result<SocketAddr, ServerError> {
    let certificate =
        certificate::ServingCertificate::open(Path::new(&config.tls.server_cert_dir))?;
    let tls = certificate.server_config()?;
    let ip = if config.server.bind_address.is_empty() {
        std::net::IpAddr::from([0, 0, 0, 0])
    } else {
        config
            .server
            .bind_address
            .parse()
            .unwrap_or(std::net::IpAddr::from([0, 0, 0, 0]))
    };
    let port = if config.server.free_port {
        0
    } else {
        config.server.port
    };
    let client = caches.client().clone();
    let graph = Arc::new(informers::GraphState::new(clock, metrics.clone()));
    let webhooks = Arc::new(server::Webhooks {
        graph: graph.clone(),
        selectors: selectors::SelectorProbe::new(client.clone()),
        lookup: restriction::KubeLookup {
            client: client.clone(),
        },
        metrics,
        debug_handlers: config.enable_debug_handlers,
    });
    let (address, serving) = server::bind(
        SocketAddr::new(ip, port),
        tls,
        server::router(webhooks),
        stop.clone(),
    )
    .await?;
    tracing::info!(address = %address, "serving webhooks");
    tokio::spawn(certificate.keep_current(certificate::RELOAD_INTERVAL, stop.clone()));
    tokio::spawn(informers::run(caches, graph, stop));
    tokio::spawn(serving);
    Ok(address)
}
