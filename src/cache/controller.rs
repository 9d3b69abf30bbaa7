//! The controller loop (client-go's `controller.processLoop` +
//! `processDeltas`): pop a key's deltas from the [`DeltaFifo`], write the
//! store, then tell a [`DeltaHandler`] — store first, always (CT-01).
//!
//! * Add vs update is decided by presence in the store, not by the delta
//!   type; an update carries the cached old object, which may be several
//!   versions behind or identical to the new one (CT-01/02).
//! * `Deleted` removes the key and passes the delta's object on — the
//!   server's final state or a `DeletedFinalStateUnknown` tombstone (CT-03, SI-17).
//! * Initial-list items carry `is_in_initial_list` (CT-08).
//! * Processing errors (an unkeyable object, a failing index function) skip
//!   that version and the loop goes on (CT-07; client-go panics on a failing
//!   index function). The store is left without the key rather than with a
//!   stale version of it (handlers see a delete), and the failure goes to
//!   the controller's failure callback with the key; the informer reports it
//!   and relists when it came from a watch event, since the reflector's RV
//!   has already moved past it.
//! * Back-pressure: before each key the loop asks the handler for room
//!   ([`DeltaHandler::has_room`]); when a listener's backlog is full it
//!   waits, the queue fills, and the reflector stops reading the watch.
//! * Cooperative scheduling: at most `batch` keys or `time_slice` per turn,
//!   then the loop yields to the host event loop, so a 50,000-object sync
//!   never blocks a page for more than a slice. After each turn it fires the
//!   `drained` signal that the reflector's back-pressure waits on.
//!
//! Single-thread notes: a key's store write and its notifications happen in
//! one synchronous step (no `await` in between), which is what client-go's
//! queue lock guarantees; late handler registration is synchronous too, so
//! it can never land in the middle of one (SI-03). The queue is DeltaFIFO
//! (per-key coalescing), not client-go ≥ 1.36's atomic RealFIFO: a relist's
//! deletions reach handlers after its adds/updates rather than before them,
//! and a DELETE for a never-cached object is dropped by the queue (DF-03).

use std::rc::Rc;
use std::time::Duration;

use futures::future::LocalBoxFuture;

use super::delta_fifo::{DeltaType, Popped};
use super::informer_queue::InformerQueue;
use super::keys::DeltaObject;
use super::store::{Indexer, StoreError};
use crate::rest::KubeObject;
use crate::rt::{yield_now, Notify, SharedClock};

/// Receives what the controller applied (client-go's `ResourceEventHandler`).
///
/// Each call names the key the change was stored under, so a handler that
/// needs it does not derive it from the object again.
pub trait DeltaHandler {
    /// A new key was stored.
    fn on_add(&self, key: &str, obj: &KubeObject, is_in_initial_list: bool);
    /// A cached key was overwritten; `old` is what the cache held.
    fn on_update(&self, key: &str, old: &KubeObject, new: &KubeObject);
    /// A key was removed; `obj` is the final state or a tombstone.
    fn on_delete(&self, key: &str, obj: &DeltaObject);
    /// Whether the next key may be applied now (false while a consumer's
    /// backlog is full).
    fn has_room(&self) -> bool {
        true
    }
    /// Resolves when [`has_room`](DeltaHandler::has_room) may be true again.
    fn wait_for_room(&self) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

/// A version the store refused (see `process_deltas`).
#[derive(Clone, Debug, PartialEq)]
pub struct ApplyFailure {
    /// The popped key.
    pub key: String,
    /// Why the store refused it.
    pub error: StoreError,
    /// Whether it came from a watch event (`Added`/`Updated`) rather than a
    /// list or resync: the reflector's RV is already past it.
    pub from_watch: bool,
}

/// Apply one popped key to `indexer` and notify `handler` after each write.
/// A version the store refuses is skipped: a cached older version is
/// removed (and `on_delete` told) so the cache never serves a version it
/// knows to be stale; the remaining deltas are applied; the last failure is
/// returned.
pub(crate) fn process_deltas(
    indexer: &Indexer,
    popped: &Popped,
    handler: &dyn DeltaHandler,
) -> Result<(), ApplyFailure> {
    let mut failure = None;
    // Every delta of a popped item was queued under its key.
    let key = popped.key.as_str();
    for d in &popped.deltas {
        match (d.kind, &d.object) {
            (DeltaType::Deleted, obj) => {
                indexer.delete_key(key);
                handler.on_delete(key, obj);
            }
            (kind, DeltaObject::Object(obj)) => match indexer.insert(key, obj.clone()) {
                Ok(Some(old)) => handler.on_update(key, &old, obj),
                Ok(None) => handler.on_add(key, obj, popped.is_in_initial_list),
                Err(error) => {
                    if let Some(old) = indexer.delete_key(key) {
                        handler.on_delete(key, &DeltaObject::Object(old));
                    }
                    failure = Some(ApplyFailure {
                        key: popped.key.clone(),
                        error,
                        from_watch: matches!(kind, DeltaType::Added | DeltaType::Updated),
                    });
                }
            },
            // Only `Deleted` deltas carry tombstones.
            (_, DeltaObject::Tombstone(_)) => {}
        }
    }
    failure.map_or(Ok(()), Err)
}

/// How much work one turn of the loop may do before yielding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControllerOptions {
    /// Keys per turn (1000, client-go's RealFIFO batch size).
    pub batch: usize,
    /// Wall time per turn (8 ms: half a 60 Hz frame).
    pub time_slice: Duration,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        ControllerOptions {
            batch: 1000,
            time_slice: Duration::from_millis(8),
        }
    }
}

/// The process loop over a queue and a store.
pub struct Controller {
    fifo: InformerQueue,
    indexer: Indexer,
    handler: Rc<dyn DeltaHandler>,
    clock: SharedClock,
    opts: ControllerOptions,
    drained: Notify,
    on_turn: Option<Rc<dyn Fn()>>,
    on_failure: Option<Rc<dyn Fn(ApplyFailure)>>,
}

impl Controller {
    /// A loop popping `fifo` into `indexer`, notifying `handler`.
    pub fn new(
        fifo: impl Into<InformerQueue>,
        indexer: Indexer,
        handler: Rc<dyn DeltaHandler>,
        clock: SharedClock,
        opts: ControllerOptions,
    ) -> Self {
        Controller {
            fifo: fifo.into(),
            indexer,
            handler,
            clock,
            opts,
            drained: Notify::new(),
            on_turn: None,
            on_failure: None,
        }
    }

    /// Receive every version the store refused (CT-07).
    #[must_use]
    pub fn with_on_failure(mut self, f: Rc<dyn Fn(ApplyFailure)>) -> Self {
        self.on_failure = Some(f);
        self
    }

    /// Fire `drained` after every turn (the reflector's back-pressure signal).
    #[must_use]
    pub fn with_drained(mut self, drained: Notify) -> Self {
        self.drained = drained;
        self
    }

    /// Call `f` after every turn (sync detection, status counters).
    #[must_use]
    pub fn with_on_turn(mut self, f: Rc<dyn Fn()>) -> Self {
        self.on_turn = Some(f);
        self
    }

    /// Whether the queue's initial population has been applied (CT-12).
    #[cfg(all(test, not(target_arch = "wasm32")))]
    pub fn has_synced(&self) -> bool {
        self.fifo.has_synced()
    }

    /// Run until the queue is closed and drained.
    pub async fn run(self) {
        let batch = self.opts.batch.max(1);
        loop {
            if !self.handler.has_room() {
                self.handler.wait_for_room().await;
            }
            let Some(first) = self.fifo.pop().await else {
                return;
            };
            let start = self.clock.now();
            let mut next = Some(first);
            let mut n = 0usize;
            while let Some(p) = next.take() {
                if let Err(f) = process_deltas(&self.indexer, &p, self.handler.as_ref()) {
                    if let Some(cb) = &self.on_failure {
                        cb(f);
                    }
                }
                self.fifo.done(&p);
                n += 1;
                // Check the clock every 64 keys: cheap, and fine-grained enough.
                let out_of_time = n.is_multiple_of(64)
                    && self.clock.now().saturating_duration_since(start) >= self.opts.time_slice;
                if n < batch && !out_of_time && self.handler.has_room() {
                    next = self.fifo.try_pop();
                }
            }
            self.drained.notify_waiters();
            if let Some(f) = &self.on_turn {
                f();
            }
            yield_now().await;
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::cache::delta_fifo::{DeltaFifo, DeltaFifoOptions, KnownObjects};
    use crate::cache::keys::object_key;
    use crate::cache::keys::Tombstone;
    use crate::rest::fixtures::obj;
    use crate::rt::{run_until_stalled, spawn_local, FakeClock};
    use std::cell::RefCell;

    #[derive(Default)]
    struct Rec(RefCell<Vec<String>>);
    impl DeltaHandler for Rec {
        fn on_add(&self, key: &str, o: &KubeObject, initial: bool) {
            assert_eq!(key, object_key(o).unwrap());
            self.0.borrow_mut().push(format!(
                "add {}@{} {initial}",
                o.name(),
                o.resource_version()
            ));
        }
        fn on_update(&self, key: &str, old: &KubeObject, new: &KubeObject) {
            assert_eq!(key, object_key(new).unwrap());
            assert_eq!(key, object_key(old).unwrap());
            self.0.borrow_mut().push(format!(
                "update {}@{}->{}",
                new.name(),
                old.resource_version(),
                new.resource_version()
            ));
        }
        fn on_delete(&self, key: &str, o: &DeltaObject) {
            assert_eq!(key, o.key().unwrap());
            let what = match o {
                DeltaObject::Object(o) => format!("{}@{}", o.name(), o.resource_version()),
                DeltaObject::Tombstone(t) => format!(
                    "tombstone {}@{}",
                    t.key,
                    t.obj.as_ref().map(|o| o.resource_version()).unwrap_or("-")
                ),
            };
            self.0.borrow_mut().push(format!("delete {what}"));
        }
    }

    fn rig() -> (DeltaFifo, Indexer, Rc<Rec>) {
        let indexer = Indexer::with_namespace_index();
        let fifo = DeltaFifo::new(DeltaFifoOptions {
            known_objects: Some(Rc::new(indexer.clone()) as Rc<dyn KnownObjects>),
            emit_delta_type_replaced: true,
            transformer: None,
        });
        (fifo, indexer, Rc::new(Rec::default()))
    }

    fn drain(fifo: &DeltaFifo, ix: &Indexer, h: &Rec) {
        while let Some(p) = fifo.try_pop() {
            process_deltas(ix, &p, h).unwrap();
            fifo.done(&p);
        }
    }

    #[test]
    fn ct_01_add_vs_update_by_presence_and_store_written_first() {
        let (fifo, ix, h) = rig();
        fifo.add(obj("ns/a", 1)).unwrap();
        fifo.update(obj("ns/a", 2)).unwrap();
        drain(&fifo, &ix, &h);
        assert_eq!(*h.0.borrow(), vec!["add a@1 false", "update a@1->2"]);
        // A Sync of an uncached key is an add.
        let p = Popped {
            key: "ns/b".into(),
            deltas: vec![crate::cache::Delta {
                kind: DeltaType::Sync,
                object: DeltaObject::Object(obj("ns/b", 5)),
            }],
            is_in_initial_list: false,
        };
        struct Check(Indexer);
        impl DeltaHandler for Check {
            fn on_add(&self, key: &str, o: &KubeObject, _: bool) {
                assert_eq!(key, object_key(o).unwrap());
                assert!(self.0.get_by_key(key).is_some());
            }
            fn on_update(&self, _: &str, _: &KubeObject, _: &KubeObject) {}
            fn on_delete(&self, _: &str, _: &DeltaObject) {}
        }
        process_deltas(&ix, &p, &Check(ix.clone())).unwrap();
        assert_eq!(ix.get_by_key("ns/b").unwrap().resource_version(), "5");
    }

    #[test]
    fn ct_02_update_old_is_whatever_the_cache_held() {
        let (fifo, ix, h) = rig();
        fifo.add(obj("ns/a", 1)).unwrap();
        drain(&fifo, &ix, &h);
        // Two updates coalesced under one key: old of the first is 1, of the second 2.
        fifo.update(obj("ns/a", 2)).unwrap();
        fifo.update(obj("ns/a", 3)).unwrap();
        fifo.replace(vec![obj("ns/a", 3)], "3");
        drain(&fifo, &ix, &h);
        assert_eq!(
            h.0.borrow()[1..],
            ["update a@1->2", "update a@2->3", "update a@3->3"]
        );
    }

    #[test]
    fn ct_03_si_17_relist_deletions_are_tombstones_with_the_cached_object() {
        let (fifo, ix, h) = rig();
        fifo.replace(vec![obj("p/1", 1), obj("p/2", 2), obj("p/3", 3)], "3");
        drain(&fifo, &ix, &h);
        h.0.borrow_mut().clear();
        fifo.replace(vec![obj("p/1", 4), obj("p/2", 5), obj("p/4", 6)], "6");
        drain(&fifo, &ix, &h);
        let mut got = h.0.borrow().clone();
        got.sort();
        assert_eq!(
            got,
            vec![
                "add 4@6 false",
                "delete tombstone p/3@3",
                "update 1@1->4",
                "update 2@2->5"
            ]
        );
        let mut keys = ix.list_keys();
        keys.sort();
        assert_eq!(keys, vec!["p/1", "p/2", "p/4"]);
        // Replace with nothing deletes everything.
        fifo.replace(vec![], "7");
        drain(&fifo, &ix, &h);
        assert!(ix.is_empty());
    }

    #[test]
    fn ct_04_resync_delivers_update_of_the_same_object() {
        let (fifo, ix, h) = rig();
        fifo.add(obj("ns/a", 1)).unwrap();
        drain(&fifo, &ix, &h);
        fifo.resync();
        drain(&fifo, &ix, &h);
        assert_eq!(h.0.borrow()[1], "update a@1->1");
    }

    #[test]
    fn ct_07_failed_item_is_dropped_and_the_loop_continues() {
        let (fifo, ix, h) = rig();
        let failing: crate::cache::IndexFunc = Rc::new(|o: &KubeObject| {
            if o.name() == "bad" {
                Err("no".into())
            } else {
                Ok(vec![])
            }
        });
        ix.add_indexers([("f".to_owned(), failing)].into_iter().collect())
            .unwrap();
        let clock = FakeClock::new();
        let c = Controller::new(
            fifo.clone(),
            ix.clone(),
            h.clone(),
            clock.shared(),
            ControllerOptions::default(),
        );
        let t = spawn_local(c.run());
        fifo.add(obj("ns/bad", 1)).unwrap();
        fifo.add(obj("ns/good", 2)).unwrap();
        run_until_stalled();
        assert!(ix.get_by_key("ns/good").is_some());
        assert_eq!(*h.0.borrow(), vec!["add good@2 false"]);
        fifo.close();
        run_until_stalled();
        t.abort();
    }

    #[test]
    fn ct_08_initial_list_adds_are_flagged_later_ones_are_not() {
        let (fifo, ix, h) = rig();
        fifo.replace(vec![obj("p/1", 1)], "1");
        drain(&fifo, &ix, &h);
        fifo.replace(vec![obj("p/1", 2), obj("p/2", 3)], "3");
        drain(&fifo, &ix, &h);
        assert_eq!(
            *h.0.borrow(),
            vec!["add 1@1 true", "update 1@1->2", "add 2@3 false"]
        );
    }

    #[test]
    fn ct_12_has_synced_delegates_to_the_queue_and_turns_are_bounded() {
        let (fifo, ix, h) = rig();
        let clock = FakeClock::new();
        let turns = Rc::new(RefCell::new(Vec::new()));
        let t2 = turns.clone();
        let ix2 = ix.clone();
        let c = Controller::new(
            fifo.clone(),
            ix.clone(),
            h.clone(),
            clock.shared(),
            ControllerOptions {
                batch: 10,
                time_slice: Duration::from_secs(1),
            },
        )
        .with_on_turn(Rc::new(move || t2.borrow_mut().push(ix2.len())));
        assert!(!c.has_synced());
        let list: Vec<KubeObject> = (0..25).map(|i| obj(&format!("p/{i}"), i)).collect();
        fifo.replace(list, "25");
        let task = spawn_local(c.run());
        run_until_stalled();
        assert!(fifo.has_synced());
        assert_eq!(*turns.borrow(), vec![10, 20, 25]);
        task.abort();
    }

    #[test]
    fn delete_of_a_tombstone_without_object_reaches_the_handler() {
        let (_fifo, ix, h) = rig();
        let p = Popped {
            key: "ns/x".into(),
            deltas: vec![crate::cache::Delta {
                kind: DeltaType::Deleted,
                object: DeltaObject::Tombstone(Tombstone {
                    key: "ns/x".into(),
                    obj: None,
                }),
            }],
            is_in_initial_list: false,
        };
        process_deltas(&ix, &p, h.as_ref()).unwrap();
        assert_eq!(*h.0.borrow(), vec!["delete tombstone ns/x@-"]);
    }
}
