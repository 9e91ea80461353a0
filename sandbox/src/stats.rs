//! Request accounting: how many requests each authenticated user sent, so that load tests can
//! report the request rate a component issues to a cluster (kube-apiserver exposes the same as
//! `apiserver_request_total`, without the per-user split).

use std::collections::BTreeMap;
use std::sync::Mutex;

/// Requests served per authenticated user name (before impersonation).
#[derive(Debug, Default)]
pub struct RequestCounts {
    by_user: Mutex<BTreeMap<String, u64>>,
}

impl RequestCounts {
    /// Counts one request of `user`.
    pub(crate) fn record(&self, user: &str) {
        let mut by_user = self
            .by_user
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match by_user.get_mut(user) {
            Some(count) => *count += 1,
            None => {
                by_user.insert(user.to_owned(), 1);
            }
        }
    }

    /// The counts so far, by user name. Requests failed by fault injection or rejected before
    /// authentication are not counted.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        self.by_user
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
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
}
