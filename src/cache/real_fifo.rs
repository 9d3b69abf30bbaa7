//! RealFIFO: every change queued in the order it happened, one delta per
//! pop, no per-key grouping or compaction (client-go's `RealFIFO`, its
//! informers' queue since 1.36).
//!
//! Differences from [`DeltaFifo`](super::DeltaFifo), as in client-go:
//! - a pop hands over one delta, so handlers see changes across keys in
//!   exactly the order the watch delivered them (DeltaFIFO hands over every
//!   queued delta of the key that entered first);
//! - `delete` always queues (no check against the store), and two deletes in
//!   a row stay two;
//! - `replace` queues its deletions first, as it finds them — for keys whose
//!   last queued delta is not a delete and that the list lacks, then for
//!   stored keys the list lacks and nothing queued names — and then every
//!   listed object as `Replaced`; the initial population is everything queued
//!   when the first list lands.
//!
//! As with DeltaFifo, the initial-population counter drops after the popped
//! item was processed ([`RealFifo::done`]), so `has_synced` never reports an
//! item that has not been applied, and [`queued_deltas`](RealFifo::queued_deltas)
//! is what the reflector's back-pressure bounds.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use super::delta_fifo::{
    key_prepared, prepare_object, split_list, transform_with, Delta, DeltaFifoOptions, DeltaType,
    FifoError, KnownObjects, Popped, SkippedObject,
};
use super::keys::{object_key, DeltaObject, Tombstone};
use super::store::Transformer;
use crate::rest::KubeObject;
use crate::rt::Notify;

#[derive(Default)]
struct Inner {
    items: VecDeque<(String, Delta)>,
    populated: bool,
    initial_population_count: usize,
    closed: bool,
}

/// The queue. Clone to share.
#[derive(Clone)]
pub struct RealFifo {
    inner: Rc<RefCell<Inner>>,
    known: Option<Rc<dyn KnownObjects>>,
    transformer: Option<Transformer>,
    notify: Notify,
}

impl RealFifo {
    /// A new, empty queue. `emit_delta_type_replaced` is ignored: relisted
    /// objects are always `Replaced`, as in client-go.
    pub fn new(opts: DeltaFifoOptions) -> Self {
        RealFifo {
            inner: Rc::default(),
            known: opts.known_objects,
            transformer: opts.transformer,
            notify: Notify::new(),
        }
    }

    fn push(&self, key: String, kind: DeltaType, object: DeltaObject) {
        let mut inner = self.inner.borrow_mut();
        inner.populated = true;
        inner.items.push_back((key, Delta { kind, object }));
        drop(inner);
        self.notify.notify_waiters();
    }

    fn transform(&self, obj: KubeObject) -> Result<KubeObject, FifoError> {
        transform_with(self.transformer.as_ref(), obj)
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
        self.push(key, kind, DeltaObject::Object(obj));
        Ok(())
    }

    /// Queue a `Deleted` delta (always: client-go's RealFIFO does not check
    /// the store).
    pub fn delete(&self, obj: DeltaObject) -> Result<(), FifoError> {
        let obj = match obj {
            DeltaObject::Object(o) => DeltaObject::Object(self.transform(o)?),
            t => t,
        };
        let key = obj.key()?;
        self.push(key, DeltaType::Deleted, obj);
        Ok(())
    }

    /// What a listed object becomes in the queue (see
    /// [`DeltaFifo::prepare`](super::DeltaFifo::prepare)).
    pub fn prepare(&self, obj: KubeObject) -> Result<(String, KubeObject), SkippedObject> {
        prepare_object(self.transformer.as_ref(), self.known.as_deref(), obj)
    }

    /// Replace the queue's view with a full list: deletions first, then the
    /// listed objects as `Replaced`. Objects that cannot be transformed or
    /// keyed are left out and returned.
    pub fn replace(&self, list: Vec<KubeObject>, resource_version: &str) -> Vec<SkippedObject> {
        let (prepared, skipped) = split_list(list, |o| self.prepare(o));
        self.replace_keyed(prepared, resource_version);
        skipped
    }

    /// [`replace`](Self::replace) with objects that went through
    /// [`prepare`](Self::prepare).
    pub fn replace_prepared(
        &self,
        list: Vec<KubeObject>,
        resource_version: &str,
    ) -> Vec<SkippedObject> {
        let (keyed, skipped) = split_list(list, key_prepared);
        self.replace_keyed(keyed, resource_version);
        skipped
    }

    fn replace_keyed(&self, list: Vec<(String, KubeObject)>, _resource_version: &str) {
        let mut inner = self.inner.borrow_mut();
        let listed: HashSet<&str> = list.iter().map(|(k, _)| k.as_str()).collect();
        // The last queued delta of each queued key, keys in first-queued order.
        let mut order: Vec<&str> = Vec::new();
        let mut last: std::collections::HashMap<&str, &Delta> = std::collections::HashMap::new();
        for (k, d) in &inner.items {
            if last.insert(k.as_str(), d).is_none() {
                order.push(k.as_str());
            }
        }
        let mut deletions: Vec<(String, Tombstone)> = Vec::new();
        for k in &order {
            let d = last[k];
            if listed.contains(k) || d.kind == DeltaType::Deleted {
                continue;
            }
            deletions.push((
                k.to_string(),
                Tombstone {
                    key: k.to_string(),
                    obj: d.object.object().cloned(),
                },
            ));
        }
        if let Some(known) = &self.known {
            known.for_each_known(&mut |key, obj| {
                if !listed.contains(key) && !last.contains_key(key) {
                    deletions.push((
                        key.to_owned(),
                        Tombstone {
                            key: key.to_owned(),
                            obj: Some(obj.clone()),
                        },
                    ));
                }
            });
        }
        drop(last);
        drop(order);
        drop(listed);
        for (key, t) in deletions {
            inner.items.push_back((
                key,
                Delta {
                    kind: DeltaType::Deleted,
                    object: DeltaObject::Tombstone(t),
                },
            ));
        }
        for (key, obj) in list {
            inner.items.push_back((
                key,
                Delta {
                    kind: DeltaType::Replaced,
                    object: DeltaObject::Object(obj),
                },
            ));
        }
        if !inner.populated {
            inner.populated = true;
            inner.initial_population_count = inner.items.len();
        }
        drop(inner);
        self.notify.notify_waiters();
    }

    /// Queue a `Sync` for every stored object that nothing queued names.
    pub fn resync(&self) {
        let Some(known) = &self.known else { return };
        let mut inner = self.inner.borrow_mut();
        let queued: HashSet<String> = inner.items.iter().map(|(k, _)| k.clone()).collect();
        let mut offer: Vec<(String, KubeObject)> = Vec::new();
        known.for_each_known(&mut |key, obj| {
            if !queued.contains(key) {
                offer.push((key.to_owned(), obj.clone()));
            }
        });
        let any = !offer.is_empty();
        for (key, obj) in offer {
            inner.items.push_back((
                key,
                Delta {
                    kind: DeltaType::Sync,
                    object: DeltaObject::Object(obj),
                },
            ));
        }
        drop(inner);
        if any {
            self.notify.notify_waiters();
        }
    }

    /// Whether the first `replace` (or any first write) has been fully processed.
    pub fn has_synced(&self) -> bool {
        let i = self.inner.borrow();
        i.populated && i.initial_population_count == 0
    }

    /// Deltas waiting (each its own item).
    pub fn len(&self) -> usize {
        self.inner.borrow().items.len()
    }

    /// Deltas waiting: what back-pressure bounds.
    pub fn queued_deltas(&self) -> usize {
        self.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Close the queue: waiting pops wake; queued items are still handed out,
    /// then pops return `None`.
    pub fn close(&self) {
        self.inner.borrow_mut().closed = true;
        self.notify.notify_waiters();
    }

    /// Whether [`close`](RealFifo::close) was called.
    pub fn is_closed(&self) -> bool {
        self.inner.borrow().closed
    }

    /// Take the next delta without waiting.
    pub fn try_pop(&self) -> Option<Popped> {
        let mut inner = self.inner.borrow_mut();
        let is_in_initial_list = !(inner.populated && inner.initial_population_count == 0);
        let (key, delta) = inner.items.pop_front()?;
        Some(Popped {
            key,
            deltas: vec![delta],
            is_in_initial_list,
        })
    }

    /// Wait for the next delta, or `None` once closed and empty. Call
    /// [`done`](RealFifo::done) after processing it.
    pub async fn pop(&self) -> Option<Popped> {
        loop {
            let wait = self.notify.notified();
            if let Some(p) = self.try_pop() {
                return Some(p);
            }
            if self.inner.borrow().closed {
                return None;
            }
            wait.await;
        }
    }

    /// Mark a popped item processed: counts down the initial population.
    pub fn done(&self, popped: &Popped) {
        if popped.is_in_initial_list {
            let mut inner = self.inner.borrow_mut();
            inner.initial_population_count = inner.initial_population_count.saturating_sub(1);
        }
    }
}
