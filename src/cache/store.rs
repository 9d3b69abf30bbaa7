//! The Store / Indexer: the informer's local copy of cluster state
//! (client-go's `threadSafeStore` + `storeIndex`).
//!
//! Every write updates the indexes incrementally: for an update, the
//! object's old index values are computed and only the values that changed
//! move between buckets, and a bucket that becomes empty is dropped (ST-06..08).
//! New index values are computed *before* anything is mutated, so a failing
//! index function leaves the store exactly as it was (client-go panics there;
//! a panic would kill the wasm module). Keys are `Rc<str>` shared by the item
//! map and every index bucket.
//!
//! The store is single-threaded (`Rc<RefCell<…>>`): cloning an [`Indexer`]
//! gives another handle to the same data, which is how listers read what the
//! informer writes.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::rc::Rc;

use super::keys::{object_key, KeyError};
use crate::rest::KubeObject;

/// Maps an object to the index values it is listed under (zero or more).
pub type IndexFunc = Rc<dyn Fn(&KubeObject) -> Result<Vec<String>, String>>;

/// Named index functions.
pub type Indexers = HashMap<String, IndexFunc>;

/// The conventional name of the namespace index (ST-13).
pub const NAMESPACE_INDEX: &str = "namespace";

/// The namespace index function: `[namespace]`, `""` for cluster-scoped objects.
pub fn namespace_index_func() -> IndexFunc {
    Rc::new(|o: &KubeObject| Ok(vec![o.namespace().unwrap_or("").to_owned()]))
}

/// An index on one label's value (objects without the label are not listed),
/// which lets an equality selector on that label use the index.
pub fn label_index_func(label: &str) -> IndexFunc {
    let label = label.to_owned();
    Rc::new(move |o: &KubeObject| {
        Ok(o.meta()
            .labels()
            .get(&label)
            .map(|v| vec![v.to_owned()])
            .unwrap_or_default())
    })
}

/// The index name [`Indexer::add_label_index`] uses for a label.
pub fn label_index_name(label: &str) -> String {
    format!("label:{label}")
}

/// The companion index of [`label_index_name`] keyed by `namespace/value`,
/// so a namespaced equality query reads exactly its matches.
pub fn label_ns_index_name(label: &str) -> String {
    format!("label-ns:{label}")
}

/// A store-level transform (client-go's `WithTransformer`).
pub type StoreTransformer = Rc<dyn Fn(KubeObject) -> Result<KubeObject, String>>;

/// Why a store operation failed. Nothing was changed when one is returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The object has no usable key (ST-04).
    Key(KeyError),
    /// An index function failed for an object.
    IndexFunc {
        /// The index.
        index: String,
        /// The function's error.
        message: String,
    },
    /// `by_index` / `index_keys` on an index that does not exist (ST-10).
    UnknownIndex(String),
    /// `add_indexers` with a name that already exists (ST-12).
    IndexerConflict(String),
    /// The store's transformer failed (ST-05).
    Transform(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Key(e) => write!(f, "{e}"),
            StoreError::IndexFunc { index, message } => write!(
                f,
                "unable to calculate an index entry for index {index:?}: {message}"
            ),
            StoreError::UnknownIndex(n) => write!(f, "Index with name {n} does not exist"),
            StoreError::IndexerConflict(n) => write!(f, "indexer conflict: {n}"),
            StoreError::Transform(m) => write!(f, "transforming: {m}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<KeyError> for StoreError {
    fn from(e: KeyError) -> Self {
        StoreError::Key(e)
    }
}

type Bucket = HashSet<Rc<str>>;

#[derive(Default)]
struct Inner {
    items: HashMap<Rc<str>, KubeObject>,
    /// Each key's current index values (per index), so an update or delete
    /// never recomputes the old values.
    values: HashMap<Rc<str>, Vec<Vec<String>>>,
    indexers: Vec<(String, IndexFunc)>,
    /// Per index (same order as `indexers`): value → keys.
    indices: Vec<HashMap<String, Bucket>>,
    last_sync_rv: String,
    /// Applied to every object on add, update and replace (ST-05).
    transformer: Option<StoreTransformer>,
    /// Bumped on every change (cheap "did anything change" checks for snapshots).
    version: u64,
}

/// The indexed store. Clone it to share it (listers, snapshots).
#[derive(Clone, Default)]
pub struct Indexer {
    inner: Rc<RefCell<Inner>>,
}

impl fmt::Debug for Indexer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = self.inner.borrow();
        f.debug_struct("Indexer")
            .field("items", &i.items.len())
            .field("indexes", &i.indexers.len())
            .finish()
    }
}

fn compute(
    indexers: &[(String, IndexFunc)],
    obj: &KubeObject,
) -> Result<Vec<Vec<String>>, StoreError> {
    indexers
        .iter()
        .map(|(name, f)| {
            f(obj).map_err(|message| StoreError::IndexFunc {
                index: name.clone(),
                message,
            })
        })
        .collect()
}

fn remove_from(index: &mut HashMap<String, Bucket>, value: &str, key: &Rc<str>) {
    if let Some(bucket) = index.get_mut(value) {
        bucket.remove(key);
        if bucket.is_empty() {
            index.remove(value);
        }
    }
}

impl Inner {
    /// Move `key` from `old` values to `new` values in every index, touching
    /// only values that differ.
    fn reindex(&mut self, key: &Rc<str>, old: Option<&[Vec<String>]>, new: Option<&[Vec<String>]>) {
        for (i, index) in self.indices.iter_mut().enumerate() {
            let old_vals = old.and_then(|o| o.get(i)).map(Vec::as_slice).unwrap_or(&[]);
            let new_vals = new.and_then(|n| n.get(i)).map(Vec::as_slice).unwrap_or(&[]);
            if old_vals == new_vals {
                continue;
            }
            for v in old_vals {
                if !new_vals.contains(v) {
                    remove_from(index, v, key);
                }
            }
            for v in new_vals {
                if !old_vals.contains(v) {
                    index.entry(v.clone()).or_default().insert(key.clone());
                }
            }
        }
    }
}

impl Indexer {
    /// An empty store with the given indexers.
    pub fn new(indexers: Indexers) -> Self {
        let s = Indexer::default();
        // A fresh store has no names to conflict with.
        let _ = s.add_indexers(indexers);
        s
    }

    /// An empty store with the built-in `namespace` index.
    pub fn with_namespace_index() -> Self {
        let mut ix = Indexers::new();
        ix.insert(NAMESPACE_INDEX.to_owned(), namespace_index_func());
        Self::new(ix)
    }

    /// A store whose objects pass through `transform` on add, update and
    /// replace — not on delete (ST-05).
    pub fn with_transformer(self, transform: StoreTransformer) -> Self {
        self.inner.borrow_mut().transformer = Some(transform);
        self
    }

    fn transformed(&self, obj: KubeObject) -> Result<KubeObject, StoreError> {
        let t = self.inner.borrow().transformer.clone();
        match t {
            Some(t) => t(obj).map_err(StoreError::Transform),
            None => Ok(obj),
        }
    }

    /// Insert or replace an object (ST-01: add and update are both upserts).
    pub fn add(&self, obj: KubeObject) -> Result<(), StoreError> {
        let obj = self.transformed(obj)?;
        let key = object_key(&obj)?;
        self.upsert(key, obj)
    }

    /// Same as [`add`](Indexer::add).
    pub fn update(&self, obj: KubeObject) -> Result<(), StoreError> {
        self.add(obj)
    }

    /// Insert or replace the object under `key`.
    pub fn upsert(&self, key: String, obj: KubeObject) -> Result<(), StoreError> {
        let mut inner = self.inner.borrow_mut();
        let new_vals = compute(&inner.indexers, &obj)?;
        let key: Rc<str> = match inner.items.get_key_value(key.as_str()) {
            Some((k, _)) => k.clone(),
            None => Rc::from(key),
        };
        let old_vals = inner.values.remove(&key);
        let rv = obj.resource_version();
        if !rv.is_empty() {
            inner.last_sync_rv.clear();
            inner.last_sync_rv.push_str(rv);
        }
        inner.reindex(&key, old_vals.as_deref(), Some(&new_vals));
        inner.values.insert(key.clone(), new_vals);
        inner.items.insert(key, obj);
        inner.version += 1;
        Ok(())
    }

    /// Remove the object with `obj`'s key; absent keys are a no-op (ST-02).
    pub fn delete(&self, obj: &KubeObject) -> Result<(), StoreError> {
        let key = object_key(obj)?;
        self.delete_key(&key);
        let rv = obj.resource_version();
        if !rv.is_empty() {
            self.inner.borrow_mut().last_sync_rv = rv.to_owned();
        }
        Ok(())
    }

    /// Remove the object under `key`, returning it.
    pub fn delete_key(&self, key: &str) -> Option<KubeObject> {
        let mut inner = self.inner.borrow_mut();
        let (k, old) = inner.items.remove_entry(key)?;
        let old_vals = inner.values.remove(&k);
        inner.reindex(&k, old_vals.as_deref(), None);
        inner.version += 1;
        Some(old)
    }

    /// The stored object with `obj`'s key.
    pub fn get(&self, obj: &KubeObject) -> Result<Option<KubeObject>, StoreError> {
        Ok(self.get_by_key(&object_key(obj)?))
    }

    /// The stored object under `key`.
    pub fn get_by_key(&self, key: &str) -> Option<KubeObject> {
        self.inner.borrow().items.get(key).cloned()
    }

    /// Whether `key` is stored.
    pub fn contains_key(&self, key: &str) -> bool {
        self.inner.borrow().items.contains_key(key)
    }

    /// Every object (unspecified order).
    pub fn list(&self) -> Vec<KubeObject> {
        self.inner.borrow().items.values().cloned().collect()
    }

    /// Every key (unspecified order).
    pub fn list_keys(&self) -> Vec<String> {
        self.inner
            .borrow()
            .items
            .keys()
            .map(|k| k.to_string())
            .collect()
    }

    /// Call `f` for every stored object without collecting them.
    pub fn for_each(&self, mut f: impl FnMut(&str, &KubeObject)) {
        for (k, v) in self.inner.borrow().items.iter() {
            f(k, v);
        }
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.inner.borrow().items.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Swap the whole content and rebuild every index (ST-03). Fails without
    /// changing anything if an object cannot be keyed or indexed.
    pub fn replace(
        &self,
        objects: Vec<KubeObject>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        let objects = objects
            .into_iter()
            .map(|o| self.transformed(o))
            .collect::<Result<Vec<_>, _>>()?;
        let mut inner = self.inner.borrow_mut();
        let mut items: HashMap<Rc<str>, KubeObject> = HashMap::with_capacity(objects.len());
        for obj in objects {
            // A key listed twice keeps its last object, as a map insert does.
            items.insert(Rc::from(object_key(&obj)?), obj);
        }
        let mut indices: Vec<HashMap<String, Bucket>> =
            inner.indexers.iter().map(|_| HashMap::new()).collect();
        let mut values = HashMap::with_capacity(items.len());
        for (key, obj) in &items {
            let vals = compute(&inner.indexers, obj)?;
            for (i, vs) in vals.iter().enumerate() {
                if let Some(index) = indices.get_mut(i) {
                    for v in vs {
                        index.entry(v.clone()).or_default().insert(key.clone());
                    }
                }
            }
            values.insert(key.clone(), vals);
        }
        inner.items = items;
        inner.values = values;
        inner.indices = indices;
        inner.last_sync_rv = resource_version.to_owned();
        inner.version += 1;
        Ok(())
    }

    /// Add indexers (ST-12): a duplicate name is an error; existing objects are
    /// indexed at once. Nothing changes if any object fails to index.
    pub fn add_indexers(&self, new: Indexers) -> Result<(), StoreError> {
        let mut inner = self.inner.borrow_mut();
        let mut names: Vec<&String> = new.keys().collect();
        names.sort();
        for n in &names {
            if inner.indexers.iter().any(|(existing, _)| existing == *n) {
                return Err(StoreError::IndexerConflict((*n).clone()));
            }
        }
        let mut built = Vec::new();
        for name in names {
            let Some(f) = new.get(name) else { continue };
            let mut index: HashMap<String, Bucket> = HashMap::new();
            let mut per_key: Vec<(Rc<str>, Vec<String>)> = Vec::with_capacity(inner.items.len());
            for (k, obj) in inner.items.iter() {
                let vals = f(obj).map_err(|message| StoreError::IndexFunc {
                    index: name.clone(),
                    message,
                })?;
                for v in &vals {
                    index.entry(v.clone()).or_default().insert(k.clone());
                }
                per_key.push((k.clone(), vals));
            }
            built.push((name.clone(), f.clone(), index, per_key));
        }
        for (name, f, index, per_key) in built {
            inner.indexers.push((name, f));
            inner.indices.push(index);
            let width = inner.indexers.len();
            for (k, vals) in per_key {
                let entry = inner.values.entry(k).or_default();
                entry.resize(width - 1, Vec::new());
                entry.push(vals);
            }
        }
        inner.version += 1;
        Ok(())
    }

    /// Add a [`label_index_func`] index named [`label_index_name`]`(label)`
    /// and its namespaced companion [`label_ns_index_name`], unless present.
    pub fn add_label_index(&self, label: &str) -> Result<(), StoreError> {
        let name = label_index_name(label);
        if self.has_index(&name) {
            return Ok(());
        }
        let mut ix = Indexers::new();
        ix.insert(name, label_index_func(label));
        let l = label.to_owned();
        ix.insert(
            label_ns_index_name(label),
            Rc::new(move |o: &KubeObject| {
                Ok(o.meta()
                    .labels()
                    .get(&l)
                    .map(|v| vec![format!("{}/{v}", o.namespace().unwrap_or(""))])
                    .unwrap_or_default())
            }),
        );
        self.add_indexers(ix)
    }

    /// Whether an index with this name exists.
    pub fn has_index(&self, name: &str) -> bool {
        self.inner.borrow().indexers.iter().any(|(n, _)| n == name)
    }

    /// Names of the indexes.
    pub fn index_names(&self) -> Vec<String> {
        self.inner
            .borrow()
            .indexers
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    }

    fn index_pos(&self, name: &str) -> Result<usize, StoreError> {
        self.inner
            .borrow()
            .indexers
            .iter()
            .position(|(n, _)| n == name)
            .ok_or_else(|| StoreError::UnknownIndex(name.to_owned()))
    }

    /// Objects sharing any of `obj`'s values in index `name` (ST-11).
    pub fn index(&self, name: &str, obj: &KubeObject) -> Result<Vec<KubeObject>, StoreError> {
        let pos = self.index_pos(name)?;
        let inner = self.inner.borrow();
        let Some((_, f)) = inner.indexers.get(pos) else {
            return Ok(Vec::new());
        };
        let vals = f(obj).map_err(|message| StoreError::IndexFunc {
            index: name.to_owned(),
            message,
        })?;
        let mut seen: HashSet<&Rc<str>> = HashSet::new();
        let mut out = Vec::new();
        if let Some(index) = inner.indices.get(pos) {
            for v in &vals {
                for k in index.get(v).into_iter().flatten() {
                    if seen.insert(k) {
                        if let Some(o) = inner.items.get(k) {
                            out.push(o.clone());
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Keys listed under `value` in index `name`, sorted (ST-10).
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<String>, StoreError> {
        let pos = self.index_pos(name)?;
        let inner = self.inner.borrow();
        let mut keys: Vec<String> = inner
            .indices
            .get(pos)
            .and_then(|ix| ix.get(value))
            .map(|b| b.iter().map(|k| k.to_string()).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        Ok(keys)
    }

    /// Objects listed under `value` in index `name` (unspecified order).
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<KubeObject>, StoreError> {
        let mut out = Vec::new();
        self.for_each_in_index(name, value, |_, o| out.push(o.clone()))?;
        Ok(out)
    }

    /// Call `f` for every object under `value` in index `name`.
    pub fn for_each_in_index(
        &self,
        name: &str,
        value: &str,
        mut f: impl FnMut(&str, &KubeObject),
    ) -> Result<(), StoreError> {
        let pos = self.index_pos(name)?;
        let inner = self.inner.borrow();
        if let Some(bucket) = inner.indices.get(pos).and_then(|ix| ix.get(value)) {
            for k in bucket {
                if let Some(o) = inner.items.get(k) {
                    f(k, o);
                }
            }
        }
        Ok(())
    }

    /// Number of objects under `value` in index `name` (0 for unknown).
    pub fn index_len(&self, name: &str, value: &str) -> usize {
        let Ok(pos) = self.index_pos(name) else {
            return 0;
        };
        self.inner
            .borrow()
            .indices
            .get(pos)
            .and_then(|ix| ix.get(value))
            .map_or(0, HashSet::len)
    }

    /// Values with at least one object in index `name`; empty for an unknown index (ST-09).
    pub fn list_index_func_values(&self, name: &str) -> Vec<String> {
        let Ok(pos) = self.index_pos(name) else {
            return Vec::new();
        };
        self.inner
            .borrow()
            .indices
            .get(pos)
            .map(|ix| ix.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The resourceVersion of the last write (ST-14: last write, not maximum).
    pub fn last_sync_resource_version(&self) -> String {
        self.inner.borrow().last_sync_rv.clone()
    }

    /// Record a bookmark's resourceVersion.
    pub fn bookmark(&self, rv: &str) {
        self.inner.borrow_mut().last_sync_rv = rv.to_owned();
    }

    /// A counter bumped by every change: equal values mean nothing changed.
    pub fn version(&self) -> u64 {
        self.inner.borrow().version
    }
}
