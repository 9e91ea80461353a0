//! `GardenClient`: the hot-swappable handle to the garden API that every agent controller uses.
//!
//! The identity replaces the inner `kube::Client` when it rotates, renews or re-bootstraps the certificate.
//! Each swap bumps a generation counter published on a `tokio::sync::watch` channel, so long-running work
//! (watches, controllers) can restart on the new credentials:
//!
//! ```no_run
//! # async fn controller(client: kube::Client) -> Result<(), kube::Error> { Ok(()) }
//! # async fn demo(garden: seedlet_bootstrap::GardenClient) -> Result<(), kube::Error> {
//! // One-off calls: take the current client each time.
//! let _version = garden.client().apiserver_version().await?;
//! // Long-running work: restarted with the new client after every swap.
//! garden.run_with_current(|client| controller(client)).await?;
//! # Ok(()) }
//! ```

use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};

use jiff::Timestamp;
use tokio::sync::watch;

/// A cheaply clonable handle to the garden API whose credentials can be swapped in place.
#[derive(Clone)]
pub struct GardenClient {
    shared: Arc<Shared>,
}

struct Shared {
    client: RwLock<kube::Client>,
    generation: watch::Sender<u64>,
    expiry: watch::Sender<Option<Timestamp>>,
}

impl GardenClient {
    /// A handle starting with `client`, at generation 0, whose certificate ends at `expiry` (if known).
    /// This client and every swapped-in one send their writes through the write budget
    /// ([`seedlet_runtime::budget::guarded`]).
    pub fn new(client: kube::Client, expiry: Option<Timestamp>) -> Self {
        let (generation, _) = watch::channel(0);
        let (expiry, _) = watch::channel(expiry);
        Self {
            shared: Arc::new(Shared {
                client: RwLock::new(seedlet_runtime::budget::guarded(client)),
                generation,
                expiry,
            }),
        }
    }

    /// The current client; cheap (a clone of a `kube::Client`). Take it per call, do not keep it across awaits
    /// that may outlive a swap.
    pub fn client(&self) -> kube::Client {
        self.shared
            .client
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many times the client has been swapped.
    pub fn generation(&self) -> u64 {
        *self.shared.generation.borrow()
    }

    /// A receiver that is notified after every swap (its value is the new generation).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.shared.generation.subscribe()
    }

    /// NotAfter of the client certificate in use; `None` for credentials without an inline certificate.
    pub fn certificate_expiry(&self) -> Option<Timestamp> {
        *self.shared.expiry.borrow()
    }

    /// A receiver that is notified whenever the certificate expiry changes (for metrics and Seed status).
    pub fn subscribe_expiry(&self) -> watch::Receiver<Option<Timestamp>> {
        self.shared.expiry.subscribe()
    }

    /// The current client and its generation, read together (a swap publishes both at once).
    pub fn current(&self) -> (kube::Client, u64) {
        let client = self
            .shared
            .client
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        (client.clone(), *self.shared.generation.borrow())
    }

    /// Runs `work` with the current client; when the client is swapped, the running future is dropped and
    /// `work` starts again with the new client. Returns when `work` returns.
    pub async fn run_with_current<F, Fut, T>(&self, mut work: F) -> T
    where
        F: FnMut(kube::Client) -> Fut,
        Fut: Future<Output = T>,
    {
        self.run_with_current_generation(|client, _| work(client))
            .await
    }

    /// [`GardenClient::run_with_current`], also passing the client's generation (state kept per
    /// credential, such as the shared informers, is keyed by it).
    pub async fn run_with_current_generation<F, Fut, T>(&self, mut work: F) -> T
    where
        F: FnMut(kube::Client, u64) -> Fut,
        Fut: Future<Output = T>,
    {
        let mut swaps = self.subscribe();
        loop {
            swaps.mark_unchanged();
            let (client, generation) = self.current();
            let future = work(client, generation);
            tokio::select! {
                out = future => {
                    // Work that ended because of a swap (its watches closed with the old
                    // client) starts again on the new client like work the swap interrupted.
                    if !swaps.has_changed().unwrap_or(false) {
                        return out;
                    }
                    tracing::info!(generation = *swaps.borrow(), "garden client swapped, restarting work");
                }
                changed = swaps.changed() => {
                    if changed.is_err() {
                        // The sender lives in `self.shared`, which `self` keeps alive, so this cannot happen;
                        // if it ever did, keep running on the current client rather than spin.
                        let (client, generation) = self.current();
                        return work(client, generation).await;
                    }
                    tracing::info!(generation = *swaps.borrow(), "garden client swapped, restarting work");
                }
            }
        }
    }

    /// Replaces the client and publishes the new generation and expiry.
    pub(crate) fn swap(&self, client: kube::Client, expiry: Option<Timestamp>) {
        self.shared.expiry.send_replace(expiry);
        // The generation moves under the client's lock, so `current` never pairs one with the
        // other's predecessor.
        let mut current = self
            .shared
            .client
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        *current = seedlet_runtime::budget::guarded(client);
        self.shared
            .generation
            .send_modify(|generation| *generation += 1);
    }
}

impl std::fmt::Debug for GardenClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GardenClient")
            .field("generation", &self.generation())
            .field("certificate_expiry", &self.certificate_expiry())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    fn offline_client() -> kube::Client {
        kube::Client::try_from(kube::Config::new("http://127.0.0.1:1".parse().unwrap())).unwrap()
    }

    #[tokio::test]
    async fn swap_bumps_generation_and_publishes_expiry() {
        let garden = GardenClient::new(offline_client(), None);
        let mut swaps = garden.subscribe();
        let expiry: Timestamp = "2031-01-01T00:00:00Z".parse().unwrap();
        garden.swap(offline_client(), Some(expiry));
        assert!(swaps.has_changed().unwrap());
        assert_eq!(*swaps.borrow_and_update(), 1);
        assert_eq!(garden.generation(), 1);
        assert_eq!(garden.certificate_expiry(), Some(expiry));
    }

    #[tokio::test]
    async fn work_that_ends_because_of_a_swap_starts_again_on_the_new_generation() {
        let garden = GardenClient::new(offline_client(), None);
        let swapper = garden.clone();
        let result = garden
            .run_with_current_generation(|_client, generation| {
                let swapper = swapper.clone();
                async move {
                    if generation == 0 {
                        // Like a controller whose watches close with the old credential.
                        swapper.swap(offline_client(), None);
                    }
                    generation
                }
            })
            .await;
        assert_eq!(result, 1, "the result of the work on the new generation");
    }

    #[tokio::test]
    async fn work_restarts_with_new_client_after_swap_and_returns_its_result() {
        let garden = GardenClient::new(offline_client(), None);
        let starts = Arc::new(AtomicUsize::new(0));
        let runner = {
            let (garden, starts) = (garden.clone(), Arc::clone(&starts));
            tokio::spawn(async move {
                garden
                    .run_with_current(|_client| {
                        let start = starts.fetch_add(1, Ordering::SeqCst);
                        async move {
                            if start == 0 {
                                std::future::pending::<()>().await;
                            }
                            start
                        }
                    })
                    .await
            })
        };
        while starts.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        garden.swap(offline_client(), None);
        let result = tokio::time::timeout(Duration::from_secs(5), runner)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(result, 1, "second run (after the swap) returned");
        assert_eq!(starts.load(Ordering::SeqCst), 2);
    }
}
