//! A compact set of vertex ids: a sorted `Vec<u32>` (4 bytes an element), for the adjacency of
//! the authorizer's graph. Most vertices have one to three neighbours, where a hash set would
//! spend a table of buckets on each; the few with many (a registration's installations, a
//! project namespace's shoots) still answer `contains` by binary search.

/// A vertex's index in the graph's node table.
pub(super) type Id = u32;

/// A sorted set of [`Id`]s.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Ids(Vec<Id>);

impl Ids {
    /// Adds `id`; whether it was new.
    pub(super) fn insert(&mut self, id: Id) -> bool {
        match self.0.binary_search(&id) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, id);
                true
            }
        }
    }

    /// Removes `id`; whether it was there. Gives memory back once at most a quarter is used.
    pub(super) fn remove(&mut self, id: Id) -> bool {
        let Ok(at) = self.0.binary_search(&id) else {
            return false;
        };
        self.0.remove(at);
        if self.0.len() <= self.0.capacity() / 4 {
            self.0.shrink_to(self.0.len() * 2);
        }
        true
    }

    /// Whether `id` is in the set.
    #[cfg(test)]
    pub(super) fn contains(&self, id: Id) -> bool {
        self.0.binary_search(&id).is_ok()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The ids in ascending order.
    pub(super) fn iter(&self) -> impl Iterator<Item = Id> + '_ {
        self.0.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_stay_sorted_and_unique() {
        // (operations, expected content); `+n` inserts, `-n` removes.
        let cases: &[(&[i64], &[Id])] = &[
            (&[], &[]),
            (&[3, 1, 2], &[1, 2, 3]),
            (&[1, 1, 1], &[1]),
            (&[5, -5], &[]),
            (&[5, -4], &[5]),
            (&[7, 2, 9, -7, 4], &[2, 4, 9]),
        ];
        for (operations, expected) in cases {
            let mut ids = Ids::default();
            for &operation in *operations {
                let id = Id::try_from(operation.unsigned_abs()).expect("small");
                if operation >= 0 {
                    ids.insert(id);
                } else {
                    ids.remove(id);
                }
            }
            assert_eq!(ids.iter().collect::<Vec<_>>(), *expected, "{operations:?}");
            assert_eq!(ids.is_empty(), expected.is_empty());
        }
    }

    #[test]
    fn insert_and_remove_say_whether_they_changed_the_set() {
        let mut ids = Ids::default();
        assert!(ids.insert(4));
        assert!(!ids.insert(4));
        assert!(ids.contains(4));
        assert!(!ids.remove(3));
        assert!(ids.remove(4));
        assert!(!ids.contains(4));
    }

    #[test]
    fn a_set_that_shrank_gives_memory_back() {
        let mut ids = Ids::default();
        for id in 0..1000 {
            ids.insert(id);
        }
        for id in 0..999 {
            ids.remove(id);
        }
        assert_eq!(ids.iter().collect::<Vec<_>>(), [999]);
        assert!(ids.0.capacity() <= 4, "capacity {}", ids.0.capacity());
    }
}
