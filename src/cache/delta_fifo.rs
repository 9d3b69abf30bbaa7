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
//! client-go ≥ 1.36 uses RealFIFO for informers; we keep DeltaFIFO as the
//! informer queue (the issue makes it the pipeline), and get RealFIFO's
//! observable ordering from the post-process counter above.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::rc::Rc;

use super::keys::{object_key, DeltaObject, KeyError, Tombstone};
use super::store::Indexer;
use crate::rest::KubeObject;
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
}

impl KnownObjects for Indexer {
    fn known_keys(&self) -> Vec<String> {
        self.list_keys()
    }
    fn known_object(&self, key: &str) -> Option<KubeObject> {
        self.get_by_key(key)
    }
}

/// Transforms each incoming object once, before it is queued (DF-14).
pub type Transformer = Rc<dyn Fn(KubeObject) -> Result<KubeObject, String>>;

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

impl std::error::Error for FifoError {}

impl From<KeyError> for FifoError {
    fn from(e: KeyError) -> Self {
        FifoError::Key(e)
    }
}

#[derive(Default)]
struct Inner {
    items: HashMap<String, Vec<Delta>>,
    queue: VecDeque<String>,
    populated: bool,
    initial_population_count: usize,
    closed: bool,
    emit_replaced: bool,
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
        match &self.transformer {
            Some(t) => t(obj).map_err(FifoError::Transform),
            None => Ok(obj),
        }
    }

    /// Append a delta under `key` (client-go's queueActionLocked) and dedup.
    fn queue_action(inner: &mut Inner, key: String, delta: Delta) {
        let deltas = inner.items.entry(key.clone()).or_default();
        let was_empty = deltas.is_empty();
        deltas.push(delta);
        // DF-04: only two trailing Deleted deltas are ever merged.
        let n = deltas.len();
        if n >= 2
            && deltas[n - 1].kind == DeltaType::Deleted
            && deltas[n - 2].kind == DeltaType::Deleted
        {
            if matches!(deltas[n - 2].object, DeltaObject::Tombstone(_)) {
                deltas.remove(n - 2);
            } else {
                deltas.pop();
            }
        }
        if was_empty {
            inner.queue.push_back(key);
        }
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
        let queued = inner.items.get(&key).is_some_and(|d| !d.is_empty());
        let known = self.known.as_ref().map(|k| k.known_object(&key).is_some());
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
    pub fn replace(&self, list: Vec<KubeObject>, _resource_version: &str) -> Result<(), FifoError> {
        let mut prepared = Vec::with_capacity(list.len());
        for obj in list {
            let obj = self.transform(obj)?;
            let key = object_key(&obj)?;
            prepared.push((key, obj));
        }
        let mut inner = self.inner.borrow_mut();
        let kind = if inner.emit_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        let mut keys: HashSet<String> = HashSet::with_capacity(prepared.len());
        for (key, obj) in prepared {
            keys.insert(key.clone());
            Self::queue_action(
                &mut inner,
                key,
                Delta {
                    kind,
                    object: DeltaObject::Object(obj),
                },
            );
        }
        // Queue-based detection: queued keys absent from the list.
        let mut queued_deletions = 0;
        let stale: Vec<(String, Option<KubeObject>)> = inner
            .items
            .iter()
            .filter(|(k, d)| !keys.contains(*k) && !d.is_empty())
            .map(|(k, d)| (k.clone(), d.last().and_then(|d| d.object.object().cloned())))
            .collect();
        for (key, obj) in stale {
            queued_deletions += 1;
            let t = DeltaObject::Tombstone(Tombstone {
                key: key.clone(),
                obj,
            });
            Self::queue_action(
                &mut inner,
                key,
                Delta {
                    kind: DeltaType::Deleted,
                    object: t,
                },
            );
        }
        // Known-objects-based detection: stored keys absent from the list and not queued.
        if let Some(known) = &self.known {
            for key in known.known_keys() {
                if keys.contains(&key) || inner.items.get(&key).is_some_and(|d| !d.is_empty()) {
                    continue;
                }
                queued_deletions += 1;
                let t = DeltaObject::Tombstone(Tombstone {
                    key: key.clone(),
                    obj: known.known_object(&key),
                });
                Self::queue_action(
                    &mut inner,
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
            inner.initial_population_count = keys.len() + queued_deletions;
        }
        drop(inner);
        self.notify();
        Ok(())
    }

    /// Re-offer every known object that has nothing queued, as `Sync` (DF-09).
    pub fn resync(&self) {
        let Some(known) = &self.known else { return };
        let mut inner = self.inner.borrow_mut();
        let mut any = false;
        for key in known.known_keys() {
            if inner.items.get(&key).is_some_and(|d| !d.is_empty()) {
                continue;
            }
            if let Some(obj) = known.known_object(&key) {
                Self::queue_action(
                    &mut inner,
                    key,
                    Delta {
                        kind: DeltaType::Sync,
                        object: DeltaObject::Object(obj),
                    },
                );
                any = true;
            }
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
            let Some(deltas) = inner.items.remove(&key) else {
                continue;
            };
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
