//! The read side of a store: what an informer hands its consumers.

use std::fmt;

use super::store::{Indexer, StoreError};
use crate::rest::KubeObject;

/// A read-only handle on a live store. Clones are cheap and share the data.
///
/// An informer's store is written by exactly one party, the informer's own
/// controller loop, in the order the changes arrived. Consumers get a
/// `Store`: the same live data (no copy; every read sees the latest applied
/// state), with no way to add, update or delete — a write from outside would
/// be overwritten by the next event or relist and would make the cache
/// disagree with both the server and what the handlers were told (kube-rs's
/// reflector `Writer`/`Store` split follows the same rule). Objects are
/// immutable shared handles, so keeping one never pins the cache's state.
#[derive(Clone)]
pub struct Store {
    pub(super) indexer: Indexer,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store").field("len", &self.len()).finish()
    }
}

impl Indexer {
    /// A read-only handle on this store, to hand to code that must not
    /// write to it.
    pub fn reader(&self) -> Store {
        Store {
            indexer: self.clone(),
        }
    }
}

impl Store {
    /// The stored object with `obj`'s key.
    pub fn get(&self, obj: &KubeObject) -> Result<Option<KubeObject>, StoreError> {
        self.indexer.get(obj)
    }

    /// The stored object under `key` (`namespace/name`, or `name` for
    /// cluster-scoped objects).
    pub fn get_by_key(&self, key: &str) -> Option<KubeObject> {
        self.indexer.get_by_key(key)
    }

    /// Whether `key` is stored.
    pub fn contains_key(&self, key: &str) -> bool {
        self.indexer.contains_key(key)
    }

    /// Every object (unspecified order).
    pub fn list(&self) -> Vec<KubeObject> {
        self.indexer.list()
    }

    /// Every key (unspecified order).
    pub fn list_keys(&self) -> Vec<String> {
        self.indexer.list_keys()
    }

    /// Call `f` for every stored object without collecting them.
    pub fn for_each(&self, f: impl FnMut(&str, &KubeObject)) {
        self.indexer.for_each(f)
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.indexer.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.indexer.is_empty()
    }

    /// Whether an index with this name exists.
    pub fn has_index(&self, name: &str) -> bool {
        self.indexer.has_index(name)
    }

    /// Names of the indexes.
    pub fn index_names(&self) -> Vec<String> {
        self.indexer.index_names()
    }

    /// Objects sharing any of `obj`'s values in index `name`.
    pub fn index(&self, name: &str, obj: &KubeObject) -> Result<Vec<KubeObject>, StoreError> {
        self.indexer.index(name, obj)
    }

    /// Keys listed under `value` in index `name`, sorted.
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<String>, StoreError> {
        self.indexer.index_keys(name, value)
    }

    /// Objects listed under `value` in index `name` (unspecified order).
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<KubeObject>, StoreError> {
        self.indexer.by_index(name, value)
    }

    /// Call `f` for every object under `value` in index `name`.
    pub fn for_each_in_index(
        &self,
        name: &str,
        value: &str,
        f: impl FnMut(&str, &KubeObject),
    ) -> Result<(), StoreError> {
        self.indexer.for_each_in_index(name, value, f)
    }

    /// Number of objects under `value` in index `name` (0 for unknown).
    pub fn index_len(&self, name: &str, value: &str) -> usize {
        self.indexer.index_len(name, value)
    }

    /// Values with at least one object in index `name`; empty for an
    /// unknown index.
    pub fn list_index_func_values(&self, name: &str) -> Vec<String> {
        self.indexer.list_index_func_values(name)
    }

    /// The resourceVersion of the last applied write.
    pub fn last_sync_resource_version(&self) -> String {
        self.indexer.last_sync_resource_version()
    }

    /// A counter bumped by every change: equal values mean nothing changed
    /// (cheap change detection for snapshots).
    pub fn version(&self) -> u64 {
        self.indexer.version()
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::cache::NAMESPACE_INDEX;
    use serde_json::json;

    fn pod(ns: &str, name: &str, rv: &str) -> KubeObject {
        KubeObject::from_value(&json!({
            "metadata": {"namespace": ns, "name": name, "resourceVersion": rv}
        }))
        .expect("valid")
    }

    #[test]
    fn a_reader_sees_every_write_of_its_indexer_live() {
        let ix = Indexer::with_namespace_index();
        let store = ix.reader();
        assert!(store.is_empty());
        let v0 = store.version();
        ix.add(pod("a", "p", "1")).expect("add");
        ix.add(pod("b", "q", "2")).expect("add");
        assert_eq!(store.len(), 2);
        assert!(store.version() > v0);
        assert_eq!(store.last_sync_resource_version(), "2");
        assert!(store.contains_key("a/p"));
        assert_eq!(
            store
                .get_by_key("b/q")
                .map(|o| o.resource_version().to_owned()),
            Some("2".into())
        );
        assert_eq!(
            store.index_keys(NAMESPACE_INDEX, "a").expect("index"),
            vec!["a/p"]
        );
        assert_eq!(store.index_len(NAMESPACE_INDEX, "b"), 1);
        ix.delete_key("a/p");
        assert_eq!(store.list_keys(), vec!["b/q"]);
        assert!(store
            .by_index(NAMESPACE_INDEX, "a")
            .expect("index")
            .is_empty());
    }
}
