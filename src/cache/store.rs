//! The Store / Indexer: the informer's local copy of cluster state
//! (client-go's `threadSafeStore` + `storeIndex`).
//!
//! Layout: objects live in `u32` slots (`slots.rs`); every index bucket
//! holds slot ids (`index.rs`), and the values each slot is filed under are
//! remembered per slot and index, so an update moves the object only between
//! the buckets whose value changed, and a bucket that becomes empty is dropped
//! (ST-06..08). The namespace and label indexes this module builds
//! ([`Indexer::with_namespace_index`], [`Indexer::add_label_index`]) are
//! evaluated by the store from borrowed strings: an update that leaves the
//! namespace and labels alone allocates nothing and touches no bucket.
//!
//! User callbacks (the transformer and custom index functions) run before
//! the store is borrowed for writing, so a failing index function leaves the
//! store exactly as it was (client-go panics there; a panic would kill the
//! wasm module), a callback that reads the store sees the state before the
//! write, and a callback that writes to it gets [`StoreError::Reentrant`]
//! instead of a `RefCell` panic. The same holds for writes from inside the
//! visitor of [`Indexer::for_each`] and friends, which hold a read borrow.
//!
//! The store is single-threaded (`Rc<RefCell<…>>`): cloning an [`Indexer`]
//! gives another handle to the same data, which is how listers read what the
//! informer writes.

use std::cell::{Ref, RefCell, RefMut};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use super::index::{Index, Kind, LabelMemo, Vals};
use super::keys::{object_key, write_object_key, KeyError};
use super::slots::Slots;
use crate::rest::KubeObject;
use crate::rt::fx::{FxHashMap, FxHashSet};

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

/// A transform applied once to each incoming object before it is kept
/// (client-go's `TransformFunc`): by the DeltaFIFO before queueing (DF-14),
/// by an [`Indexer`] built [`with_transformer`](Indexer::with_transformer)
/// before storing. An `Err` skips the object with that message.
pub type Transformer = Rc<dyn Fn(KubeObject) -> Result<KubeObject, String>>;

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
    /// A write from inside one of the store's own callbacks (an index
    /// function, or the visitor of `for_each`/`for_each_in_index`), which
    /// would otherwise change the store under a reader. Nothing was changed.
    Reentrant,
    /// The store holds `u32::MAX` objects and cannot take another.
    Full,
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
            StoreError::Reentrant => {
                f.write_str("the store was written from inside one of its own callbacks")
            }
            StoreError::Full => f.write_str("the store is full"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Key(e) => Some(e),
            _ => None,
        }
    }
}

impl StoreError {
    /// A `Status`-style reason for reports: `Invalid` (no key),
    /// `IndexFailed`, `TransformFailed`, or `InternalError`.
    pub fn reason(&self) -> &'static str {
        match self {
            StoreError::Key(_) => "Invalid",
            StoreError::IndexFunc { .. } => "IndexFailed",
            StoreError::Transform(_) => "TransformFailed",
            _ => "InternalError",
        }
    }
}

impl From<KeyError> for StoreError {
    fn from(e: KeyError) -> Self {
        StoreError::Key(e)
    }
}

/// A custom index function with its index name, in index order.
struct CustomFn {
    name: String,
    func: IndexFunc,
}

/// What the custom index functions computed for one object, and the index
/// layout they were computed for.
struct Computed {
    /// One sorted, de-duplicated list per custom index, in index order.
    values: Vec<Vec<String>>,
    /// `State::index_generation` when the functions were read.
    generation: u64,
}

#[derive(Default)]
struct State {
    slots: Slots,
    indexes: Vec<Index>,
    /// Per slot, per index: the values the slot is filed under, at
    /// `slot * indexes.len() + index` (one flat array: a slot's records share
    /// a cache line, and a freed slot's row is empty).
    vals: Vec<Vals>,
    /// The custom indexes' functions, shared so a write can take them out
    /// of the store (one reference-count bump) and run them unborrowed.
    customs: Rc<Vec<CustomFn>>,
    /// Bumped when indexes are added: values computed for another layout
    /// are stale.
    index_generation: u64,
    /// Reused for the key of `add`/`delete` and for `ns/value` strings.
    key_buf: String,
    scratch: String,
    last_sync_rv: String,
    /// Bumped on every change (cheap "did anything change" checks for snapshots).
    version: u64,
}

struct Shared {
    state: RefCell<State>,
    /// Applied to every object on add, update and replace (ST-05). Apart from
    /// the state so that running it needs no state borrow.
    transformer: RefCell<Option<Transformer>>,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            state: RefCell::new(State::default()),
            transformer: RefCell::new(None),
        }
    }
}

/// The indexed store. Clone it to share it (listers, snapshots).
#[derive(Clone, Default)]
pub struct Indexer {
    inner: Rc<Shared>,
}

impl fmt::Debug for Indexer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Indexer");
        if let Ok(st) = self.inner.state.try_borrow() {
            d.field("items", &st.slots.len())
                .field("indexes", &st.indexes.len());
        }
        d.finish()
    }
}

impl State {
    fn index(&self, name: &str) -> Option<&Index> {
        self.indexes.iter().find(|i| i.name == name)
    }

    fn index_or_err(&self, name: &str) -> Result<&Index, StoreError> {
        self.index(name)
            .ok_or_else(|| StoreError::UnknownIndex(name.to_owned()))
    }

    /// Insert or replace `obj` under `key` and refile it in every index,
    /// returning the object it replaced. Runs no user code; fails only
    /// before changing anything.
    fn upsert(
        &mut self,
        key: &str,
        obj: KubeObject,
        computed: &Computed,
    ) -> Result<Option<KubeObject>, StoreError> {
        if computed.generation != self.index_generation {
            return Err(StoreError::Reentrant);
        }
        let (id, fresh) = self
            .slots
            .insert_key(key, &obj)
            .map_err(|_| StoreError::Full)?;
        let stride = self.indexes.len();
        let base = id as usize * stride;
        if self.vals.len() < base + stride {
            self.vals.resize_with(base + stride, Vals::default);
        }
        let row = self.vals.get_mut(base..base + stride).unwrap_or_default();
        let mut customs = computed.values.iter();
        let mut memo = LabelMemo::default();
        for (index, slot) in self.indexes.iter_mut().zip(row) {
            match index.kind.builtin(&obj, &mut memo) {
                Some(b) => index.set_builtin(id, slot, b, &mut self.scratch),
                None => {
                    let vals = customs.next().map_or(&[] as &[String], Vec::as_slice);
                    index.set(id, slot, vals);
                }
            }
        }
        let rv = obj.resource_version();
        if !rv.is_empty() {
            self.last_sync_rv.clear();
            self.last_sync_rv.push_str(rv);
        }
        let old = self.slots.set_obj(id, obj);
        self.version += 1;
        // A fresh slot already held `obj` itself.
        Ok(old.filter(|_| !fresh))
    }

    /// Remove the object under `key` from the table and every index.
    fn remove(&mut self, key: &str) -> Option<KubeObject> {
        let (id, obj) = self.slots.remove(key)?;
        let stride = self.indexes.len();
        let base = id as usize * stride;
        if let Some(row) = self.vals.get_mut(base..base + stride) {
            for (index, slot) in self.indexes.iter_mut().zip(row) {
                index.remove(id, slot);
            }
        }
        self.version += 1;
        Some(obj)
    }

    fn rebuild_customs(&mut self) {
        self.customs = Rc::new(
            self.indexes
                .iter()
                .filter(|i| matches!(i.kind, Kind::Custom))
                .map(|i| CustomFn {
                    name: i.name.clone(),
                    func: i.func.clone(),
                })
                .collect(),
        );
    }
}

/// Run one custom index function, normalising its values: sorted and
/// distinct (a value listed twice files the object once either way).
fn run_custom(name: &str, f: &IndexFunc, obj: &KubeObject) -> Result<Vec<String>, StoreError> {
    let mut v = f(obj).map_err(|message| StoreError::IndexFunc {
        index: name.to_owned(),
        message,
    })?;
    if v.len() > 1 {
        crate::rt::sort::sort(&mut v);
        v.dedup();
    }
    Ok(v)
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
        let s = Indexer::default();
        // A fresh store has no names to conflict with.
        let _ = s.add_indexes(vec![(
            NAMESPACE_INDEX.to_owned(),
            namespace_index_func(),
            Kind::Namespace,
        )]);
        s
    }

    /// A store whose objects pass through `transform` on add, update and
    /// replace — not on delete (ST-05).
    #[must_use]
    pub fn with_transformer(self, transform: Transformer) -> Self {
        if let Ok(mut t) = self.inner.transformer.try_borrow_mut() {
            *t = Some(transform);
        }
        self
    }

    /// A read borrow. Cannot fail: the state is borrowed mutably only inside
    /// this module, in code that calls no user callback.
    fn read(&self) -> Ref<'_, State> {
        self.inner.state.borrow()
    }

    /// A write borrow, or [`StoreError::Reentrant`] when a reader (a
    /// visitor callback) is active.
    fn write(&self) -> Result<RefMut<'_, State>, StoreError> {
        self.inner
            .state
            .try_borrow_mut()
            .map_err(|_| StoreError::Reentrant)
    }

    fn transformed(&self, obj: KubeObject) -> Result<KubeObject, StoreError> {
        let t = self
            .inner
            .transformer
            .try_borrow()
            .ok()
            .and_then(|t| t.clone());
        match t {
            Some(t) => t(obj).map_err(StoreError::Transform),
            None => Ok(obj),
        }
    }

    /// The custom index values of `obj`, computed with no borrow held.
    fn computed(&self, obj: &KubeObject) -> Result<Computed, StoreError> {
        let (customs, generation) = {
            let st = self.read();
            (st.customs.clone(), st.index_generation)
        };
        let mut values = Vec::with_capacity(customs.len());
        for c in customs.iter() {
            values.push(run_custom(&c.name, &c.func, obj)?);
        }
        Ok(Computed { values, generation })
    }

    /// Insert or replace an object (ST-01: add and update are both upserts).
    pub fn add(&self, obj: KubeObject) -> Result<(), StoreError> {
        let obj = self.transformed(obj)?;
        if obj.name().is_empty() {
            // Key errors come before index errors, as in client-go.
            object_key(&obj)?;
        }
        let computed = self.computed(&obj)?;
        let mut st = self.write()?;
        let st = &mut *st;
        let mut key = std::mem::take(&mut st.key_buf);
        let r = write_object_key(&obj, &mut key)
            .map_err(StoreError::from)
            .and_then(|()| st.upsert(&key, obj, &computed));
        st.key_buf = key;
        r.map(drop)
    }

    /// Same as [`add`](Indexer::add).
    pub fn update(&self, obj: KubeObject) -> Result<(), StoreError> {
        self.add(obj)
    }

    /// Insert or replace the object under `key`.
    pub fn upsert(&self, key: String, obj: KubeObject) -> Result<(), StoreError> {
        self.insert(&key, obj).map(drop)
    }

    /// Insert or replace the object under `key`, returning the object it
    /// replaced: one lookup where a `get_by_key` before an `upsert` takes
    /// two (the informer's write path, once per event).
    pub fn insert(&self, key: &str, obj: KubeObject) -> Result<Option<KubeObject>, StoreError> {
        let computed = self.computed(&obj)?;
        self.write()?.upsert(key, obj, &computed)
    }

    /// Remove the object with `obj`'s key; absent keys are a no-op (ST-02).
    pub fn delete(&self, obj: &KubeObject) -> Result<(), StoreError> {
        let key = object_key(obj)?;
        let removed = {
            let mut st = self.write()?;
            let removed = st.remove(&key);
            let rv = obj.resource_version();
            if !rv.is_empty() {
                st.last_sync_rv.clear();
                st.last_sync_rv.push_str(rv);
            }
            removed
        };
        // Dropped after the borrow ends.
        drop(removed);
        Ok(())
    }

    /// Remove the object under `key`, returning it. Returns `None` without
    /// removing anything when called from inside one of the store's visitor
    /// callbacks (see [`StoreError::Reentrant`]).
    pub fn delete_key(&self, key: &str) -> Option<KubeObject> {
        self.write().ok()?.remove(key)
    }

    /// The stored object with `obj`'s key.
    pub fn get(&self, obj: &KubeObject) -> Result<Option<KubeObject>, StoreError> {
        Ok(self.get_by_key(&object_key(obj)?))
    }

    /// The stored object under `key`.
    pub fn get_by_key(&self, key: &str) -> Option<KubeObject> {
        self.read().slots.get_by_key(key).map(|s| s.obj.clone())
    }

    /// Whether `key` is stored.
    pub fn contains_key(&self, key: &str) -> bool {
        self.read().slots.id(key).is_some()
    }

    /// Every object (unspecified order).
    pub fn list(&self) -> Vec<KubeObject> {
        let st = self.read();
        let mut out = Vec::with_capacity(st.slots.len());
        out.extend(st.slots.iter().map(|(_, s)| s.obj.clone()));
        out
    }

    /// Every key (unspecified order).
    pub fn list_keys(&self) -> Vec<String> {
        let st = self.read();
        let mut out = Vec::with_capacity(st.slots.len());
        out.extend(st.slots.iter().map(|(_, s)| s.key.to_string()));
        out
    }

    /// Call `f` for every stored object without collecting them. Writes to
    /// the store from inside `f` fail with [`StoreError::Reentrant`].
    pub fn for_each(&self, mut f: impl FnMut(&str, &KubeObject)) {
        let st = self.read();
        for (_, s) in st.slots.iter() {
            f(&s.key, &s.obj);
        }
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.read().slots.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Swap the whole content and rebuild every index (ST-03). Fails without
    /// changing anything if an object cannot be transformed, keyed or indexed.
    /// A key listed twice keeps its last object.
    pub fn replace(
        &self,
        objects: Vec<KubeObject>,
        resource_version: &str,
    ) -> Result<(), StoreError> {
        let objects = objects
            .into_iter()
            .map(|o| self.transformed(o))
            .collect::<Result<Vec<_>, _>>()?;
        let keys = objects
            .iter()
            .map(object_key)
            .collect::<Result<Vec<_>, _>>()?;
        let mut last: FxHashMap<&str, usize> = FxHashMap::default();
        last.reserve(keys.len());
        for (i, k) in keys.iter().enumerate() {
            last.insert(k, i);
        }
        let (customs, generation) = {
            let st = self.read();
            (st.customs.clone(), st.index_generation)
        };
        // Only the surviving object of a key is indexed, so an earlier,
        // overwritten duplicate cannot fail the list.
        let mut survivors = Vec::with_capacity(last.len());
        for ((i, key), obj) in keys.iter().enumerate().zip(objects) {
            if last.get(key.as_str()) != Some(&i) {
                continue;
            }
            let mut values = Vec::with_capacity(customs.len());
            for c in customs.iter() {
                values.push(run_custom(&c.name, &c.func, &obj)?);
            }
            survivors.push((key.as_str(), obj, Computed { values, generation }));
        }
        let old = {
            let mut st = self.write()?;
            let st = &mut *st;
            if st.index_generation != generation {
                return Err(StoreError::Reentrant);
            }
            // With the layout checked and ids to spare, no upsert below can
            // fail, so the swap is all or nothing.
            if u32::try_from(survivors.len()).is_err() {
                return Err(StoreError::Full);
            }
            // Keep the old table until the borrow ends: dropping 50,000
            // objects is the slow part and needs no borrow.
            let old = std::mem::take(&mut st.slots);
            st.vals.clear();
            for index in st.indexes.iter_mut() {
                index.clear();
            }
            st.slots.reserve(survivors.len());
            for (key, obj, computed) in survivors {
                st.upsert(key, obj, &computed)?;
            }
            st.last_sync_rv.clear();
            st.last_sync_rv.push_str(resource_version);
            st.version += 1;
            old
        };
        drop(old);
        Ok(())
    }

    /// Add indexers (ST-12): a duplicate name is an error; existing objects are
    /// indexed at once. Nothing changes if any object fails to index.
    pub fn add_indexers(&self, new: Indexers) -> Result<(), StoreError> {
        self.add_indexes(
            new.into_iter()
                .map(|(name, f)| (name, f, Kind::Custom))
                .collect(),
        )
    }

    /// Add indexes of any kind, in name order (so the layout does not depend
    /// on hash-map order). Custom functions run with no borrow held.
    fn add_indexes(&self, mut new: Vec<(String, IndexFunc, Kind)>) -> Result<(), StoreError> {
        crate::rt::sort::sort_by(&mut new, |a, b| a.0.cmp(&b.0));
        let (objs, version, generation) = {
            let st = self.read();
            for (n, _, _) in &new {
                if st.index(n).is_some() {
                    return Err(StoreError::IndexerConflict(n.clone()));
                }
            }
            let needs_objs = new.iter().any(|(_, _, k)| matches!(k, Kind::Custom));
            let objs: Vec<(u32, KubeObject)> = if needs_objs {
                st.slots.iter().map(|(id, s)| (id, s.obj.clone())).collect()
            } else {
                Vec::new()
            };
            (objs, st.version, st.index_generation)
        };
        let mut computed: Vec<Vec<Vec<String>>> = Vec::with_capacity(new.len());
        for (name, f, kind) in &new {
            if !matches!(kind, Kind::Custom) {
                computed.push(Vec::new());
                continue;
            }
            let mut vals = Vec::with_capacity(objs.len());
            for (_, obj) in &objs {
                vals.push(run_custom(name, f, obj)?);
            }
            computed.push(vals);
        }
        let mut st = self.write()?;
        let st = &mut *st;
        if st.version != version || st.index_generation != generation {
            // A function changed the store while it was being indexed.
            return Err(StoreError::Reentrant);
        }
        // Widen the per-slot records to the new number of indexes.
        let old_stride = st.indexes.len();
        let new_stride = old_stride + new.len();
        let rows = st.slots.capacity();
        let mut widened: Vec<Vals> = Vec::with_capacity(rows * new_stride);
        let mut old_vals = std::mem::take(&mut st.vals).into_iter();
        for _ in 0..rows {
            let start = widened.len();
            widened.extend(old_vals.by_ref().take(old_stride));
            widened.resize_with(start + new_stride, Vals::default);
        }
        st.vals = widened;
        for (k, ((name, func, kind), vals)) in new.into_iter().zip(computed).enumerate() {
            let mut index = Index::new(name, func, kind);
            let col = old_stride + k;
            if matches!(index.kind, Kind::Custom) {
                for ((id, _), v) in objs.iter().zip(vals) {
                    if let Some(slot) = st.vals.get_mut(*id as usize * new_stride + col) {
                        index.set(*id, slot, &v);
                    }
                }
            } else {
                for (id, s) in st.slots.iter() {
                    let (Some(b), Some(slot)) = (
                        index.kind.builtin(&s.obj, &mut LabelMemo::default()),
                        st.vals.get_mut(id as usize * new_stride + col),
                    ) else {
                        continue;
                    };
                    index.set_builtin(id, slot, b, &mut st.scratch);
                }
            }
            st.indexes.push(index);
        }
        st.rebuild_customs();
        st.index_generation += 1;
        st.version += 1;
        Ok(())
    }

    /// Add a [`label_index_func`] index named [`label_index_name`]`(label)`
    /// and its namespaced companion [`label_ns_index_name`], unless present.
    /// Both are evaluated by the store itself (no closure call per write).
    pub fn add_label_index(&self, label: &str) -> Result<(), StoreError> {
        let name = label_index_name(label);
        if self.has_index(&name) {
            return Ok(());
        }
        let key: Rc<str> = Rc::from(label);
        let l = label.to_owned();
        let ns_func: IndexFunc = Rc::new(move |o: &KubeObject| {
            Ok(o.meta()
                .labels()
                .get(&l)
                .map(|v| vec![format!("{}/{v}", o.namespace().unwrap_or(""))])
                .unwrap_or_default())
        });
        self.add_indexes(vec![
            (name, label_index_func(label), Kind::Label(key.clone())),
            (label_ns_index_name(label), ns_func, Kind::LabelNs(key)),
        ])
    }

    /// Whether an index with this name exists.
    pub fn has_index(&self, name: &str) -> bool {
        self.read().index(name).is_some()
    }

    /// Names of the indexes.
    pub fn index_names(&self) -> Vec<String> {
        self.read().indexes.iter().map(|i| i.name.clone()).collect()
    }

    /// Objects sharing any of `obj`'s values in index `name` (ST-11).
    pub fn index(&self, name: &str, obj: &KubeObject) -> Result<Vec<KubeObject>, StoreError> {
        let f = self.read().index_or_err(name)?.func.clone();
        // The function runs with no borrow held.
        let vals = f(obj).map_err(|message| StoreError::IndexFunc {
            index: name.to_owned(),
            message,
        })?;
        let st = self.read();
        let index = st.index_or_err(name)?;
        let mut seen: FxHashSet<u32> = FxHashSet::default();
        let mut out = Vec::new();
        for v in &vals {
            for &id in index.bucket(v).into_iter().flatten() {
                if seen.insert(id) {
                    if let Some(s) = st.slots.get(id) {
                        out.push(s.obj.clone());
                    }
                }
            }
        }
        Ok(out)
    }

    /// Keys listed under `value` in index `name`, sorted (ST-10).
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<String>, StoreError> {
        let st = self.read();
        let index = st.index_or_err(name)?;
        let mut keys: Vec<String> = index
            .bucket(value)
            .into_iter()
            .flatten()
            .filter_map(|&id| st.slots.get(id).map(|s| s.key.to_string()))
            .collect();
        crate::rt::sort::sort(&mut keys);
        Ok(keys)
    }

    /// Objects listed under `value` in index `name` (unspecified order).
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<KubeObject>, StoreError> {
        let mut out = Vec::new();
        self.for_each_in_index(name, value, |_, o| out.push(o.clone()))?;
        Ok(out)
    }

    /// Call `f` for every object under `value` in index `name`. Writes to
    /// the store from inside `f` fail with [`StoreError::Reentrant`].
    pub fn for_each_in_index(
        &self,
        name: &str,
        value: &str,
        mut f: impl FnMut(&str, &KubeObject),
    ) -> Result<(), StoreError> {
        let st = self.read();
        let index = st.index_or_err(name)?;
        for &id in index.bucket(value).into_iter().flatten() {
            if let Some(s) = st.slots.get(id) {
                f(&s.key, &s.obj);
            }
        }
        Ok(())
    }

    /// Call `f` for every object filed under all of `probes` (index name,
    /// value) at once. Walks the smallest bucket and tests membership in the
    /// others by slot id, so an object outside the intersection is never
    /// read. Returns `false` (visiting nothing) if an index does not exist.
    pub(crate) fn for_each_in_all(
        &self,
        probes: &[(&str, &str)],
        mut f: impl FnMut(&KubeObject),
    ) -> bool {
        let st = self.read();
        let mut buckets = Vec::with_capacity(probes.len());
        for (name, value) in probes {
            let Some(index) = st.index(name) else {
                return false;
            };
            match index.bucket(value) {
                Some(b) => buckets.push(b),
                // An empty bucket: the intersection is empty.
                None => return true,
            }
        }
        crate::rt::sort::sort_by(&mut buckets, |a, b| a.len().cmp(&b.len()));
        let Some((walk, others)) = buckets.split_first() else {
            return true;
        };
        for &id in walk.iter() {
            if others.iter().all(|b| b.contains(&id)) {
                if let Some(s) = st.slots.get(id) {
                    f(&s.obj);
                }
            }
        }
        true
    }

    /// Number of objects under `value` in index `name` (0 for unknown).
    pub fn index_len(&self, name: &str, value: &str) -> usize {
        self.read()
            .index(name)
            .and_then(|i| i.bucket(value))
            .map_or(0, |b| b.len())
    }

    /// Values with at least one object in index `name`; empty for an unknown index (ST-09).
    pub fn list_index_func_values(&self, name: &str) -> Vec<String> {
        self.read()
            .index(name)
            .map(|i| i.values().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// The resourceVersion of the last write (ST-14: last write, not maximum).
    pub fn last_sync_resource_version(&self) -> String {
        self.read().last_sync_rv.clone()
    }

    /// Record a bookmark's resourceVersion. Ignored when called from inside
    /// one of the store's visitor callbacks.
    pub fn bookmark(&self, rv: &str) {
        if let Ok(mut st) = self.write() {
            st.last_sync_rv.clear();
            st.last_sync_rv.push_str(rv);
        }
    }

    /// A counter bumped by every change: equal values mean nothing changed.
    pub fn version(&self) -> u64 {
        self.read().version
    }
}
