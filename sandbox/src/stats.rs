//! Request accounting: how many requests each authenticated user sent, so that load tests can
//! report the request rate a component issues to a cluster (kube-apiserver exposes the same as
//! `apiserver_request_total`, without the per-user split), and fault tests can tell exactly how
//! many requests a client sent while some of them were failed on purpose.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Requests per authenticated user name: served ones and ones failed by fault injection.
#[derive(Debug, Default)]
pub struct RequestCounts {
    served: Mutex<BTreeMap<String, u64>>,
    injected: Mutex<BTreeMap<String, u64>>,
}

impl RequestCounts {
    /// Counts one served request of `user`.
    pub(crate) fn record(&self, user: &str) {
        add(&self.served, user);
    }

    /// Counts one request of `user` that fault injection failed instead of serving.
    pub(crate) fn record_injected(&self, user: &str) {
        add(&self.injected, user);
    }

    /// The served counts so far, by user name: every authenticated request that was not failed
    /// by fault injection (whatever its answer, errors included). Requests rejected before
    /// authentication are not counted.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        lock(&self.served).clone()
    }

    /// Requests failed by fault injection so far, by user name. A user's requests sent are the
    /// sum of this and [`RequestCounts::snapshot`].
    pub fn injected_snapshot(&self) -> BTreeMap<String, u64> {
        lock(&self.injected).clone()
    }
}

/// TLS connections accepted, by the protocol ALPN chose, and how many are open now: what tells
/// a client multiplexing its requests and watches over HTTP/2 from one opening a connection per
/// watch over HTTP/1.1.
#[derive(Debug, Default)]
pub struct ConnectionCounts {
    http2: AtomicU64,
    http1: AtomicU64,
    open: AtomicU64,
}

/// A snapshot of [`ConnectionCounts`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Connections {
    /// Connections that negotiated `h2`, since start.
    pub http2: u64,
    /// Connections that negotiated `http/1.1` or nothing, since start.
    pub http1: u64,
    /// Connections open now.
    pub open: u64,
}

impl ConnectionCounts {
    /// Counts an accepted connection; the returned guard counts it closed when dropped.
    pub(crate) fn opened(self: &std::sync::Arc<Self>, http2: bool) -> OpenConnection {
        let counter = if http2 { &self.http2 } else { &self.http1 };
        counter.fetch_add(1, Ordering::Relaxed);
        self.open.fetch_add(1, Ordering::Relaxed);
        OpenConnection(self.clone())
    }

    /// The counts now.
    pub fn snapshot(&self) -> Connections {
        Connections {
            http2: self.http2.load(Ordering::Relaxed),
            http1: self.http1.load(Ordering::Relaxed),
            open: self.open.load(Ordering::Relaxed),
        }
    }
}

/// One open connection of [`ConnectionCounts`].
pub(crate) struct OpenConnection(std::sync::Arc<ConnectionCounts>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

fn add(counts: &Mutex<BTreeMap<String, u64>>, user: &str) {
    let mut counts = lock(counts);
    match counts.get_mut(user) {
        Some(count) => *count += 1,
        None => {
            counts.insert(user.to_owned(), 1);
        }
    }
}

fn lock(counts: &Mutex<BTreeMap<String, u64>>) -> std::sync::MutexGuard<'_, BTreeMap<String, u64>> {
    counts
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_per_user() {
        let counts = RequestCounts::default();
        counts.record("admin");
        counts.record("system:bootstrap:abcdef");
        counts.record("admin");
        let snapshot = counts.snapshot();
        assert_eq!(snapshot.get("admin"), Some(&2));
        assert_eq!(snapshot.get("system:bootstrap:abcdef"), Some(&1));
        assert_eq!(snapshot.len(), 2);
    }

    #[test]
    fn injected_failures_are_counted_apart_from_served_requests() {
        let counts = RequestCounts::default();
        counts.record("agent");
        counts.record_injected("agent");
        counts.record_injected("agent");
        counts.record_injected("admin");
        assert_eq!(counts.snapshot(), BTreeMap::from([("agent".into(), 1)]));
        assert_eq!(
            counts.injected_snapshot(),
            BTreeMap::from([("admin".into(), 1), ("agent".into(), 2)])
        );
    }
}
