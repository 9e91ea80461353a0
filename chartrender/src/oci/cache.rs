//! Chart archives by layer digest, bounded by total bytes; the least recently used go first.

use std::collections::HashMap;
use std::sync::Arc;

/// The cache; callers hold it under a mutex.
#[derive(Debug, Default)]
pub(crate) struct BlobCache {
    entries: HashMap<String, (Arc<[u8]>, u64)>,
    clock: u64,
    bytes: u64,
}

impl BlobCache {
    /// The archive with `digest`, marking it used.
    pub(crate) fn get(&mut self, digest: &str) -> Option<Arc<[u8]>> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(digest).map(|(data, used)| {
            *used = clock;
            Arc::clone(data)
        })
    }

    /// Keeps `data` under `digest`, evicting the least recently used until at most `limit` bytes are held.
    /// Data larger than the limit is not kept.
    pub(crate) fn insert(&mut self, digest: &str, data: Arc<[u8]>, limit: u64) {
        let size = data.len() as u64;
        if size > limit || self.entries.contains_key(digest) {
            return;
        }
        while self.bytes + size > limit {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((old, _)) = self.entries.remove(&oldest) {
                self.bytes -= old.len() as u64;
            }
        }
        self.clock += 1;
        self.bytes += size;
        self.entries.insert(digest.to_string(), (data, self.clock));
    }

    /// Bytes held.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_evicts_least_recently_used_to_stay_in_bound() {
        let mut cache = BlobCache::default();
        let blob = |n: usize| Arc::<[u8]>::from(vec![0u8; n]);
        cache.insert("a", blob(4), 10);
        cache.insert("b", blob(4), 10);
        assert!(cache.get("a").is_some());
        cache.insert("c", blob(4), 10);
        assert!(cache.get("b").is_none(), "b was least recently used");
        assert!(cache.get("a").is_some() && cache.get("c").is_some());
        assert_eq!(cache.bytes(), 8);
        cache.insert("huge", blob(11), 10);
        assert!(cache.get("huge").is_none());
    }
}
