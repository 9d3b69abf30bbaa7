//! DeltaFIFO: per-key ordered deltas between the reflector and the store.
//!
//! Keys leave in the order they first entered; each pop hands over every
//! delta accumulated for one key, oldest first (DF-01/02). Deletions are
//! deduplicated by the exact two-delete rule (DF-04), `replace` detects
//! deletions from the queue and from the known objects and queues
//! `DeletedFinalStateUnknown` tombstones (DF-05..08), and `resync` re-offers
//! known objects that are not queued (DF-09).
//!
//! Single-threaded differences from client-go: `pop` is an async wait on the
//! local executor instead of a condition variable; the process function runs
//! inside [`DeltaFifo::pop_and_process`], and the initial-population counter
//! drops *after* it returns — RealFIFO's ordering, which DF-15 recommends, so
//! `has_synced` never reports an item that has not been applied.
//!
//! client-go ≥ 1.36 uses RealFIFO for informers; [`RealFifo`](super::RealFifo)
//! is here too, chosen per informer ([`QueueKind`](super::QueueKind)).

use std::cell::RefCell;
use std::collections::hash_map::Entry as MapEntry;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;

use super::keys::{object_key, DeltaObject, KeyError, Tombstone};
use super::store::Indexer;
use super::store::Transformer;
use crate::rest::KubeObject;
use crate::rt::fx::FxHashMap;
use crate::rt::Notify;

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeltaType {
    /// Created (or first seen).
    Added,
    /// Changed.
    Updated,
    /// Removed (possibly a tombstone).
    Deleted,
    /// Re-listed with `emit_delta_type_replaced`.
    Replaced,
    /// Re-listed or resynced.
    Sync,
}

/// One change to one object.
#[derive(Clone, Debug, PartialEq)]
pub struct Delta {
    /// The kind of change.
    pub kind: DeltaType,
    /// The object (or tombstone).
    pub object: DeltaObject,
}

/// Read access to what the store already holds (client-go's `KeyListerGetter`).
pub trait KnownObjects {
    /// Every stored key.
    fn known_keys(&self) -> Vec<String>;
    /// The stored object under `key`.
    fn known_object(&self, key: &str) -> Option<KubeObject>;
    /// Whether `key` is stored. The default fetches the object; a store can
    /// answer without cloning it.
    fn known_contains(&self, key: &str) -> bool {
        self.known_object(key).is_some()
    }
    /// Visit every stored key with its object. The default builds the key
    /// list; a store can walk its table without allocating a key per object
    /// (a relist visits every one of them). `f` must not write to the store.
    fn for_each_known(&self, f: &mut dyn FnMut(&str, &KubeObject)) {
        for key in self.known_keys() {
            if let Some(obj) = self.known_object(&key) {
                f(&key, &obj);
            }
        }
    }
}

impl KnownObjects for Indexer {
    fn known_keys(&self) -> Vec<String> {
        self.list_keys()
    }
    fn known_object(&self, key: &str) -> Option<KubeObject> {
        self.get_by_key(key)
    }
    fn known_contains(&self, key: &str) -> bool {
        self.contains_key(key)
    }
    fn for_each_known(&self, f: &mut dyn FnMut(&str, &KubeObject)) {
        self.for_each(|k, o| f(k, o));
    }
}

/// Why a queue operation failed (nothing was queued).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FifoError {
    /// The object could not be keyed.
    Key(KeyError),
    /// The transformer failed.
    Transform(String),
}

impl fmt::Display for FifoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FifoError::Key(e) => write!(f, "{e}"),
            FifoError::Transform(m) => write!(f, "transforming: {m}"),
        }
    }
}

impl std::error::Error for FifoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FifoError::Key(e) => Some(e),
            FifoError::Transform(_) => None,
        }
    }
}

impl FifoError {
    /// A `Status`-style reason: `Invalid` (no valid key) or `TransformFailed`.
    pub fn reason(&self) -> &'static str {
        match self {
            FifoError::Key(_) => "Invalid",
            FifoError::Transform(_) => "TransformFailed",
        }
    }
}

impl From<KeyError> for FifoError {
    fn from(e: KeyError) -> Self {
        FifoError::Key(e)
    }
}

/// An object [`DeltaFifo::replace`] left out.
#[derive(Clone, Debug, PartialEq)]
pub struct SkippedObject {
    /// Its key, or as much of it as the object has (`namespace/` for a nameless one).
    pub key: String,
    /// Why it was left out.
    pub error: FifoError,
}

/// `namespace/name` (or `name`) from whatever metadata an object has, for
/// reporting an object that has no valid key.
pub(crate) fn describe(obj: &KubeObject) -> String {
    match obj.namespace() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{}", obj.name()),
        _ => obj.name().to_owned(),
    }
}

/// A listed object transformed and keyed, swapped for the stored copy when
/// the store holds this very version (shared by both queues).
pub(crate) fn prepare_object(
    transformer: Option<&Transformer>,
    known: Option<&dyn KnownObjects>,
    obj: KubeObject,
) -> Result<(String, KubeObject), SkippedObject> {
    let key_hint = describe(&obj);
    let (key, obj) = transform_with(transformer, obj)
        .and_then(|o| Ok((object_key(&o)?, o)))
        .map_err(|error| SkippedObject {
            key: key_hint,
            error,
        })?;
    let stored = known
        .and_then(|k| k.known_object(&key))
        .filter(|k| k.same_version(&obj));
    Ok((key, stored.unwrap_or(obj)))
}

/// `obj` through the queue's transformer, if it has one.
pub(crate) fn transform_with(
    transformer: Option<&Transformer>,
    obj: KubeObject,
) -> Result<KubeObject, FifoError> {
    match transformer {
        Some(t) => t(obj).map_err(FifoError::Transform),
        None => Ok(obj),
    }
}

/// A list split into what `keyed` accepts and what it refuses.
pub(crate) fn split_list(
    list: Vec<KubeObject>,
    keyed: impl Fn(KubeObject) -> Result<(String, KubeObject), SkippedObject>,
) -> (Vec<(String, KubeObject)>, Vec<SkippedObject>) {
    let mut ok = Vec::with_capacity(list.len());
    let mut skipped = Vec::new();
    for obj in list {
        match keyed(obj) {
            Ok(p) => ok.push(p),
            Err(s) => skipped.push(s),
        }
    }
    (ok, skipped)
}

/// Key an object that already went through a queue's `prepare`.
pub(crate) fn key_prepared(obj: KubeObject) -> Result<(String, KubeObject), SkippedObject> {
    match object_key(&obj) {
        Ok(key) => Ok((key, obj)),
        Err(error) => Err(SkippedObject {
            key: describe(&obj),
            error: FifoError::Key(error),
        }),
    }
}

/// One queued key's deltas.
#[derive(Default)]
struct Entry {
    deltas: Vec<Delta>,
    /// The `replace` epoch that last listed this key: "is the key in the
    /// list being replaced" is one comparison instead of a set of every
    /// listed key built per relist.
    listed: u64,
}

#[derive(Default)]
struct Inner {
    items: FxHashMap<String, Entry>,
    queue: VecDeque<String>,
    /// Bumped by every `replace` (starts at 1 for the first).
    epoch: u64,
    populated: bool,
    initial_population_count: usize,
    closed: bool,
    emit_replaced: bool,
    /// Deltas across all keys: what back-pressure bounds, since a flood of
    /// updates to a few keys grows deltas, not keys.
    deltas: usize,
}

/// Options of a [`DeltaFifo`].
#[derive(Clone, Default)]
pub struct DeltaFifoOptions {
    /// The store, for delete detection and resync.
    pub known_objects: Option<Rc<dyn KnownObjects>>,
    /// Emit `Replaced` instead of `Sync` for relisted objects.
    pub emit_delta_type_replaced: bool,
    /// Applied once to every incoming object.
    pub transformer: Option<Transformer>,
}

/// The queue. Clone to share.
#[derive(Clone)]
pub struct DeltaFifo {
    inner: Rc<RefCell<Inner>>,
    known: Option<Rc<dyn KnownObjects>>,
    transformer: Option<Transformer>,
    notify: Notify,
}

/// One popped key with its deltas.
#[derive(Debug)]
pub struct Popped {
    /// The key.
    pub key: String,
    /// Its deltas, oldest first.
    pub deltas: Vec<Delta>,
    /// Whether this item belongs to the initial list (DF-11).
    pub is_in_initial_list: bool,
}

impl DeltaFifo {
    /// A new, empty queue.
    pub fn new(opts: DeltaFifoOptions) -> Self {
        DeltaFifo {
            inner: Rc::new(RefCell::new(Inner {
                emit_replaced: opts.emit_delta_type_replaced,
                ..Inner::default()
            })),
            known: opts.known_objects,
            transformer: opts.transformer,
            notify: Notify::new(),
        }
    }

    fn transform(&self, obj: KubeObject) -> Result<KubeObject, FifoError> {
        transform_with(self.transformer.as_ref(), obj)
    }

    /// Append a delta under `key` (client-go's queueActionLocked) and dedup.
    fn queue_action(inner: &mut Inner, key: String, delta: Delta) {
        Self::queue_entry(inner, key, delta);
    }

    /// [`queue_action`](Self::queue_action), returning the key's entry.
    fn queue_entry(inner: &mut Inner, key: String, delta: Delta) -> &mut Entry {
        let Inner {
            items,
            queue,
            deltas: total,
            ..
        } = inner;
        let entry = match items.entry(key) {
            MapEntry::Occupied(o) => {
                // A key with deltas is in the queue already.
                if o.get().deltas.is_empty() {
                    queue.push_back(o.key().clone());
                }
                o.into_mut()
            }
            MapEntry::Vacant(v) => {
                queue.push_back(v.key().clone());
                v.insert(Entry::default())
            }
        };
        let deltas = &mut entry.deltas;
        deltas.push(delta);
        *total += 1;
        // DF-04: only two trailing Deleted deltas are ever merged.
        let n = deltas.len();
        if let [.., prev, last] = deltas.as_slice() {
            if last.kind == DeltaType::Deleted && prev.kind == DeltaType::Deleted {
                if matches!(prev.object, DeltaObject::Tombstone(_)) {
                    deltas.remove(n - 2);
                } else {
                    deltas.pop();
                }
                *total -= 1;
            }
        }
        entry
    }

    fn notify(&self) {
        self.notify.notify_waiters();
    }

    /// Queue an `Added` delta.
    pub fn add(&self, obj: KubeObject) -> Result<(), FifoError> {
        self.add_kind(DeltaType::Added, obj)
    }

    /// Queue an `Updated` delta.
    pub fn update(&self, obj: KubeObject) -> Result<(), FifoError> {
        self.add_kind(DeltaType::Updated, obj)
    }

    fn add_kind(&self, kind: DeltaType, obj: KubeObject) -> Result<(), FifoError> {
        let obj = self.transform(obj)?;
        let key = object_key(&obj)?;
        let mut inner = self.inner.borrow_mut();
        inner.populated = true;
        Self::queue_action(
            &mut inner,
            key,
            Delta {
                kind,
                object: DeltaObject::Object(obj),
            },
        );
        drop(inner);
        self.notify();
        Ok(())
    }

    /// Queue a `Deleted` delta, unless the object is unknown everywhere (DF-03).
    pub fn delete(&self, obj: DeltaObject) -> Result<(), FifoError> {
        let obj = match obj {
            DeltaObject::Object(o) => DeltaObject::Object(self.transform(o)?),
            t => t,
        };
        let key = obj.key()?;
        let mut inner = self.inner.borrow_mut();
        inner.populated = true;
        let queued = inner.items.get(&key).is_some_and(|e| !e.deltas.is_empty());
        let known = self.known.as_ref().map(|k| k.known_contains(&key));
        let drop_it = match known {
            None => !queued,
            Some(exists) => !exists && !queued,
        };
        if drop_it {
            return Ok(());
        }
        Self::queue_action(
            &mut inner,
            key,
            Delta {
                kind: DeltaType::Deleted,
                object: obj,
            },
        );
        drop(inner);
        self.notify();
        Ok(())
    }

    /// Replace the queue's view with a full list (DF-05..08, DF-10).
    ///
    /// Listed keys are stamped with this relist's epoch instead of being
    /// collected into a set; queue-based deletion detection reads only the
    /// keys that were queued before the list (every key queued by the list
    /// is in it), and known-based detection walks the store without copying
    /// its keys.
    ///
    /// An object that cannot be transformed or keyed is left out, as if the
    /// list did not hold it (a cached version of it is deleted rather than
    /// served stale), and returned with its error for the caller to report.
    pub fn replace(&self, list: Vec<KubeObject>, resource_version: &str) -> Vec<SkippedObject> {
        let (prepared, skipped) = split_list(list, |o| self.prepare(o));
        self.replace_keyed(prepared, resource_version);
        skipped
    }

    /// What a listed object becomes in the queue: transformed and
    /// keyed, and swapped for the stored copy when the store already holds
    /// this very version (same key and resourceVersion), so a relist keeps
    /// one copy of what did not change instead of two. Called on each item
    /// as a list streams in, it keeps a list's peak memory near the size of
    /// the cache (see [`replace_prepared`](Self::replace_prepared)).
    pub fn prepare(&self, obj: KubeObject) -> Result<(String, KubeObject), SkippedObject> {
        prepare_object(self.transformer.as_ref(), self.known.as_deref(), obj)
    }

    /// [`replace`](Self::replace) with objects that each went through
    /// [`prepare`](Self::prepare): keyed again, not transformed again.
    pub fn replace_prepared(
        &self,
        list: Vec<KubeObject>,
        resource_version: &str,
    ) -> Vec<SkippedObject> {
        let (keyed, skipped) = split_list(list, key_prepared);
        self.replace_keyed(keyed, resource_version);
        skipped
    }

    fn replace_keyed(&self, prepared: Vec<(String, KubeObject)>, _resource_version: &str) {
        let mut inner = self.inner.borrow_mut();
        let inner = &mut *inner;
        let kind = if inner.emit_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        inner.epoch += 1;
        let epoch = inner.epoch;
        let queued_before = inner.queue.len();
        inner.items.reserve(prepared.len());
        inner.queue.reserve(prepared.len());
        let mut listed = 0usize;
        for (key, obj) in prepared {
            let entry = Self::queue_entry(
                inner,
                key,
                Delta {
                    kind,
                    object: DeltaObject::Object(obj),
                },
            );
            if entry.listed != epoch {
                entry.listed = epoch;
                listed += 1;
            }
        }
        // Queue-based detection: keys queued before the list and absent from it.
        let mut queued_deletions = 0;
        let stale: Vec<(String, Option<KubeObject>)> = inner
            .queue
            .iter()
            .take(queued_before)
            .filter_map(|k| {
                let e = inner.items.get(k.as_str())?;
                (e.listed != epoch && !e.deltas.is_empty()).then(|| {
                    let last = e.deltas.last().and_then(|d| d.object.object().cloned());
                    (k.clone(), last)
                })
            })
            .collect();
        for (key, obj) in stale {
            queued_deletions += 1;
            let t = DeltaObject::Tombstone(Tombstone {
                key: key.clone(),
                obj,
            });
            Self::queue_action(
                inner,
                key,
                Delta {
                    kind: DeltaType::Deleted,
                    object: t,
                },
            );
        }
        // Known-objects-based detection: stored keys absent from the list and
        // not queued (a listed key is queued, so one lookup answers both).
        if let Some(known) = &self.known {
            let mut gone: Vec<(String, KubeObject)> = Vec::new();
            known.for_each_known(&mut |key, obj| {
                if inner.items.get(key).is_none_or(|e| e.deltas.is_empty()) {
                    gone.push((key.to_owned(), obj.clone()));
                }
            });
            for (key, obj) in gone {
                queued_deletions += 1;
                let t = DeltaObject::Tombstone(Tombstone {
                    key: key.clone(),
                    obj: Some(obj),
                });
                Self::queue_action(
                    inner,
                    key,
                    Delta {
                        kind: DeltaType::Deleted,
                        object: t,
                    },
                );
            }
        }
        if !inner.populated {
            inner.populated = true;
            inner.initial_population_count = listed + queued_deletions;
        }
        self.notify();
    }

    /// Re-offer every known object that has nothing queued, as `Sync` (DF-09).
    pub fn resync(&self) {
        let Some(known) = &self.known else { return };
        let mut inner = self.inner.borrow_mut();
        let mut offer: Vec<(String, KubeObject)> = Vec::new();
        known.for_each_known(&mut |key, obj| {
            if inner.items.get(key).is_none_or(|e| e.deltas.is_empty()) {
                offer.push((key.to_owned(), obj.clone()));
            }
        });
        let any = !offer.is_empty();
        for (key, obj) in offer {
            Self::queue_action(
                &mut inner,
                key,
                Delta {
                    kind: DeltaType::Sync,
                    object: DeltaObject::Object(obj),
                },
            );
        }
        drop(inner);
        if any {
            self.notify();
        }
    }

    /// Whether the first `replace` (or any first write) has been fully processed (DF-10).
    pub fn has_synced(&self) -> bool {
        let i = self.inner.borrow();
        i.populated && i.initial_population_count == 0
    }

    /// Keys waiting to be popped.
    pub fn len(&self) -> usize {
        self.inner.borrow().queue.len()
    }

    /// Deltas waiting across all keys.
    pub fn queued_deltas(&self) -> usize {
        self.inner.borrow().deltas
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Close the queue: waiting pops wake; queued items are still handed out,
    /// then pops return `None` (DF-12).
    pub fn close(&self) {
        self.inner.borrow_mut().closed = true;
        self.notify();
    }

    /// Whether [`close`](DeltaFifo::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.borrow().closed
    }

    fn try_take(&self) -> Option<Popped> {
        let mut inner = self.inner.borrow_mut();
        while let Some(key) = inner.queue.pop_front() {
            // A key can be queued with no deltas only transiently; skip it.
            let Some(Entry { deltas, .. }) = inner.items.remove(key.as_str()) else {
                continue;
            };
            inner.deltas = inner.deltas.saturating_sub(deltas.len());
            let is_in_initial_list = !(inner.populated && inner.initial_population_count == 0);
            return Some(Popped {
                key,
                deltas,
                is_in_initial_list,
            });
        }
        None
    }

    /// Wait for the next key, or `None` once closed and empty. The caller
    /// must call [`done`](DeltaFifo::done) after processing it (or use
    /// [`pop_and_process`](DeltaFifo::pop_and_process)).
    pub async fn pop(&self) -> Option<Popped> {
        loop {
            let wait = self.notify.notified();
            if let Some(p) = self.try_take() {
                return Some(p);
            }
            if self.inner.borrow().closed {
                return None;
            }
            wait.await;
        }
    }

    /// Take the next key without waiting.
    pub fn try_pop(&self) -> Option<Popped> {
        self.try_take()
    }

    /// Mark a popped item processed: counts down the initial population.
    pub fn done(&self, popped: &Popped) {
        if popped.is_in_initial_list {
            let mut inner = self.inner.borrow_mut();
            inner.initial_population_count = inner.initial_population_count.saturating_sub(1);
        }
    }

    /// Pop one key, run `process` on it, then count it as processed. The
    /// item is not re-queued if `process` fails (DF-12).
    pub async fn pop_and_process<E>(
        &self,
        process: impl FnOnce(&Popped) -> Result<(), E>,
    ) -> Option<Result<(), E>> {
        let popped = self.pop().await?;
        let r = process(&popped);
        self.done(&popped);
        Some(r)
    }
}
