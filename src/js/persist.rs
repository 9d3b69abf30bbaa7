//! Warm starts from IndexedDB (`InformerFactory` option `persist`).
//!
//! Each informer's objects and the resourceVersion they are current at are
//! written in the background. Objects are stored in buckets (by a hash of
//! their key, about [`PER_BUCKET`] each): a handler only marks the bucket of
//! each changed key (no work on the event path beyond a set insert), and one
//! task per factory writes at most one transaction of about
//! [`MAX_PER_WRITE`] objects per informer every `intervalMs`, rebuilding the
//! marked buckets from the cache at that time.
//!
//! The stored objects are never older than the stored resourceVersion: a
//! watch from it replays what came later, and replaying whole objects onto
//! newer ones converges. Under steady churn some bucket is always marked,
//! so the version advances in rounds: when the handler has seen every
//! applied change, the version then (`r0`) and the buckets marked then are
//! remembered; those buckets are written first, each read from the cache at
//! its own (later) time, and once all are written every stored bucket is at
//! least as new as `r0`, which is stored. Buckets marked during a round are
//! written too, but do not hold it up, so the stored version trails the
//! cache by about one round. Every transaction that writes buckets also
//! writes the number of stored entries (checked on load) with the last
//! version stored, which stays valid as buckets only get newer.
//!
//! On start the informer's seed source reads the copy back (see
//! [`crate::cache::InformerOptions::seed`]). Anything unreadable is
//! discarded with a warning and the informer starts cold; a failed write
//! (a full quota) turns persistence off for the factory with a warning. The
//! snippet (`persist.js`) keys copies by a hash of the server URL and the
//! identity, so one user's copy is never read for another.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::{Rc, Weak};
use std::time::Duration;

use futures::future::{select, Either};
use js_sys::{Array, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::error::KubeErrorInit;
use super::options;
use super::promise::{future_to_promise, rejecting};
use crate::cache::{
    object_key, Handler, Notification, Registration, Seed, SeedSource, SharedIndexInformer,
};
use crate::rest::{Auth, KubeObject};
use crate::rt::{real_clock, spawn_local, TaskHandle};

/// Objects one write transaction carries per informer (at least one bucket).
pub const MAX_PER_WRITE: usize = 4000;
/// Objects per bucket a copy is laid out for.
pub const PER_BUCKET: usize = 256;
/// The most buckets of one copy (which bounds the marks a handler keeps).
const MAX_BUCKETS: u32 = 4096;
/// How long a start waits for its stored copy before listing instead.
const LOAD_TIMEOUT: Duration = Duration::from_secs(3);
/// The longest warning kept (a hostile database cannot grow it).
const MAX_WARNING: usize = 300;
/// Writes with changes pending and no newer version stored after which the
/// copy is reported as falling behind.
const STALE_WRITES: u32 = 30;

#[wasm_bindgen(module = "/src/js/persist.js")]
extern "C" {
    type PersistStore;
    #[wasm_bindgen(constructor)]
    fn new(
        name: &str,
        server: &str,
        identity: &str,
        on_warning: &js_sys::Function,
        max_copies: u32,
    ) -> PersistStore;
    #[wasm_bindgen(method)]
    fn load(this: &PersistStore, scope: &str) -> Promise;
    #[wasm_bindgen(method)]
    fn forget(this: &PersistStore, scope: &str);
    #[wasm_bindgen(method)]
    fn unclaim(this: &PersistStore, scope: &str);
    #[wasm_bindgen(method)]
    fn claim(this: &PersistStore, scope: &str) -> Promise;
    #[wasm_bindgen(method)]
    fn release(this: &PersistStore);
    #[wasm_bindgen(method)]
    fn listen(this: &PersistStore, on_cleared: &js_sys::Function);
    #[wasm_bindgen(method, js_name = drop)]
    fn discard(this: &PersistStore, scope: &str) -> Promise;
    #[wasm_bindgen(method)]
    fn write(
        this: &PersistStore,
        scope: &str,
        puts: &Array,
        meta: &JsValue,
        base: &str,
        sweep: bool,
    ) -> Promise;
    #[wasm_bindgen(js_name = clearStore)]
    fn clear_store(name: &str) -> Promise;
    #[wasm_bindgen(js_name = dropStore)]
    fn drop_store(name: &str);
}

/// How one informer's copy is laid out, shared by its seed source and writer.
#[derive(Default)]
struct Layout {
    buckets: Cell<u32>,
    /// No copy in this layout yet (a cold start, or the cache outgrew it):
    /// the next write replaces the stored copy with the whole cache.
    rewrite: Cell<bool>,
    /// Entries stored per bucket (known from the copy read or rewritten):
    /// their sum is the `count` written with every batch.
    counts: RefCell<Vec<u32>>,
    /// The stored resourceVersion and since when the copy is current at it;
    /// `None` while no version is stored (no meta record exists then).
    stored: RefCell<Option<(String, f64)>>,
}

/// A version the copy is made current at (see the module doc).
struct Round {
    rv: String,
    /// When the cache was at `rv` (the copy's `savedAt` once stored).
    at: f64,
    /// Buckets marked when the round started and not written since.
    left: HashSet<u32>,
}

/// One informer's pending writes.
struct Tracked {
    scope: String,
    /// The scope without its cache shape: copies of other shapes of it are
    /// left behind by a changed transform (a new deploy), and swept.
    base: String,
    /// Whether a write has swept them yet (once per informer).
    swept: Cell<bool>,
    inf: SharedIndexInformer,
    reg: Registration,
    layout: Rc<Layout>,
    /// Buckets with changes not yet written.
    dirty: Rc<RefCell<HashSet<u32>>>,
    /// The version being made current, if any.
    round: RefCell<Option<Round>>,
    /// Writes since the stored version last caught up, while changes were
    /// pending (see [`STALE_WRITES`]).
    behind: Cell<u32>,
    /// The warning this informer set about falling behind, while it stands.
    lag_warning: RefCell<Option<String>>,
    /// This tab writes the copy (see `claim` in the snippet).
    owner: Cell<bool>,
    /// Another tab wrote it meanwhile: once ours, it is rewritten whole.
    was_busy: Cell<bool>,
}

/// The bucket of `key` among `n` (FNV-1a: stable across releases and hosts).
fn bucket_of(key: &str, n: u32) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in key.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h % n.max(1)
}

/// Buckets for a copy of `n` objects.
fn buckets_for(n: usize) -> u32 {
    (n.div_ceil(PER_BUCKET)).clamp(1, MAX_BUCKETS as usize) as u32
}

/// A factory's persistence: the store, its informers, the writer task.
pub struct Persist {
    name: String,
    store: PersistStore,
    enabled: Cell<bool>,
    warning: Rc<RefCell<Option<String>>>,
    interval: Duration,
    tracked: RefCell<Vec<Rc<Tracked>>>,
    layouts: RefCell<std::collections::HashMap<String, Rc<Layout>>>,
    writer: RefCell<Option<TaskHandle>>,
    /// Told when another tab clears the stored copies; listened for again
    /// whenever an informer is tracked, since `stop` lets go of the channel.
    on_cleared: RefCell<Option<js_sys::Function>>,
}

impl Drop for Persist {
    fn drop(&mut self) {
        // The channel and the Web Locks are the page's until released.
        self.store.release();
    }
}

impl Persist {
    /// The `persist` option of a factory over `client`, if given. Its
    /// identity is `persist.identity`, else the client's bearer token (only
    /// ever hashed); a `tokenProvider` needs an explicit `identity`.
    pub fn from_options(
        opts: &JsValue,
        client: &crate::rest::Client,
    ) -> Result<Option<Rc<Persist>>, JsValue> {
        let Some(p) = options::prop(opts, "persist") else {
            return Ok(None);
        };
        options::known_members(
            &p,
            &["name", "identity", "intervalMs", "maxCopies"],
            "persist",
        )?;
        let name = options::string(&p, "name")?
            .filter(|n| !n.is_empty())
            .ok_or_else(|| KubeErrorInit::invalid("`persist.name` is required"))?;
        let config = client.config();
        let identity = match (options::string(&p, "identity")?, &config.auth) {
            (Some(id), _) => id,
            (None, Auth::Bearer(token)) => token.clone(),
            (None, Auth::None) => String::new(),
            (None, Auth::Provider(_)) => {
                return Err(KubeErrorInit::invalid(
                    "`persist.identity` is required with a tokenProvider (its tokens change, the user does not)",
                )
                .into())
            }
        };
        let interval = options::millis(options::number(&p, "intervalMs")?.unwrap_or(1000.0))
            .max(Duration::from_millis(50));
        // Scopes come and go (a filter per route): their copies may not.
        let max_copies = options::whole_number(&p, "maxCopies", 100_000)?
            .unwrap_or(64)
            .max(1);
        let warning: Rc<RefCell<Option<String>>> = Rc::default();
        let w = warning.clone();
        let on_warning: js_sys::Function = Closure::<dyn Fn(String)>::new(move |msg: String| {
            let mut msg = msg;
            if msg.len() > MAX_WARNING {
                let cut = (0..=MAX_WARNING).rev().find(|i| msg.is_char_boundary(*i));
                msg.truncate(cut.unwrap_or(0));
            }
            web_sys_warn(&msg);
            *w.borrow_mut() = Some(msg);
        })
        .into_js_value()
        .unchecked_into();
        let store = PersistStore::new(&name, &config.base_url, &identity, &on_warning, max_copies);
        // Where there is no IndexedDB (Node, some workers) there is nothing
        // to read or write: off from the start, with the reason.
        let available = Reflect::get(&js_sys::global(), &"indexedDB".into())
            .is_ok_and(|v| !v.is_undefined() && !v.is_null());
        if !available {
            let msg = "persistence is off: IndexedDB is not available here";
            web_sys_warn(msg);
            *warning.borrow_mut() = Some(msg.to_owned());
        }
        let persist = Rc::new(Persist {
            name,
            store,
            enabled: Cell::new(available),
            warning,
            interval,
            tracked: RefCell::new(Vec::new()),
            layouts: RefCell::default(),
            writer: RefCell::new(None),
            on_cleared: RefCell::new(None),
        });
        if available {
            let weak = Rc::downgrade(&persist);
            let on_cleared: js_sys::Function = Closure::<dyn Fn()>::new(move || {
                let Some(p) = weak.upgrade().filter(|p| p.enabled.get()) else {
                    return;
                };
                p.turn_off("another tab cleared the stored copies: persistence is off".into());
                // A write of ours that crossed the clear is deleted too.
                drop_store(&p.name);
            })
            .into_js_value()
            .unchecked_into();
            persist.store.listen(&on_cleared);
            *persist.on_cleared.borrow_mut() = Some(on_cleared);
        }
        Ok(Some(persist))
    }

    fn warn(&self, msg: String) {
        web_sys_warn(&msg);
        *self.warning.borrow_mut() = Some(msg);
    }

    /// Stop writing (for good) and say why.
    fn turn_off(&self, why: String) {
        // Informers reading at once all meet the same failure: said once.
        if !self.enabled.replace(false) {
            return;
        }
        self.stop();
        self.warn(why);
    }

    /// Whether stored copies are read and written (off where there is no
    /// IndexedDB, or after a write failed).
    pub fn is_enabled(&self) -> bool {
        self.enabled.get()
    }

    /// The seed source of the informer stored under `scope`; `warm` is set
    /// when a stored copy was found.
    pub fn seed_source(self: &Rc<Self>, scope: &str, warm: Rc<Cell<bool>>) -> SeedSource {
        let me = Rc::downgrade(self);
        let layout = self.layout(scope);
        let scope = scope.to_owned();
        Rc::new(move || {
            let (me, scope, warm, layout) =
                (me.clone(), scope.clone(), warm.clone(), layout.clone());
            Box::pin(async move {
                // Until a copy is read, what is stored is not what the cache
                // holds: the first write replaces it whole.
                layout.rewrite.set(true);
                let p = me.upgrade()?;
                let load = JsFuture::from(p.store.load(&scope));
                drop(p);
                let timeout = real_clock().sleep(LOAD_TIMEOUT);
                let result = match select(load, Box::pin(timeout)).await {
                    Either::Left((r, _)) => r,
                    Either::Right(_) => {
                        if let Some(p) = me.upgrade() {
                            p.warn(format!(
                                "reading the stored copy of {scope} took too long: listing instead"
                            ));
                        }
                        return None;
                    }
                };
                let p = me.upgrade()?;
                let stored = match result {
                    Ok(v) if v.is_null() || v.is_undefined() => return None,
                    Ok(v) => v,
                    // Where the page may not use IndexedDB at all (an opaque
                    // origin, a browser that denies storage), writes would
                    // fail as this read did: say so now, not at the first write.
                    Err(e)
                        if matches!(
                            error_name(&e).as_deref(),
                            Some("SecurityError" | "NotSupportedError")
                        ) =>
                    {
                        p.turn_off(format!(
                            "IndexedDB cannot be used here ({}): persistence is off",
                            describe(&e)
                        ));
                        return None;
                    }
                    Err(e) => {
                        p.warn(format!(
                            "stored data could not be read ({}): listing instead",
                            describe(&e)
                        ));
                        return None;
                    }
                };
                match decode(&stored) {
                    Ok((seed, buckets, counts)) => {
                        // The cache starts as the copy: only changes are written.
                        layout.buckets.set(buckets);
                        *layout.counts.borrow_mut() = counts;
                        *layout.stored.borrow_mut() =
                            Some((seed.resource_version.clone(), seed.stored_at_ms));
                        layout.rewrite.set(false);
                        warm.set(true);
                        Some(seed)
                    }
                    Err(why) => {
                        p.warn(format!("the stored copy of {scope} was discarded: {why}"));
                        p.store.forget(&scope);
                        None
                    }
                }
            })
        })
    }

    fn layout(&self, scope: &str) -> Rc<Layout> {
        self.layouts
            .borrow_mut()
            .entry(scope.to_owned())
            .or_insert_with(|| {
                Rc::new(Layout {
                    buckets: Cell::new(1),
                    rewrite: Cell::new(true),
                    ..Layout::default()
                })
            })
            .clone()
    }

    /// Stop writing `inf`'s changes (it was dropped); its stored copy stays
    /// for the next start.
    pub fn untrack(&self, inf: &SharedIndexInformer) {
        let mut gone = Vec::new();
        self.tracked.borrow_mut().retain(|t| {
            let keep = !t.inf.ptr_eq(inf);
            if !keep {
                t.reg.remove();
                gone.push(t.scope.clone());
            }
            keep
        });
        // The scope's next informer starts from what it reads; meanwhile the
        // copy is not ours to write (or keep from a sweep).
        let mut layouts = self.layouts.borrow_mut();
        for scope in gone {
            self.store.unclaim(&scope);
            layouts.remove(&scope);
        }
    }

    /// Write `inf`'s changes from now on.
    /// `scope` is the key its copy is stored under, `base` the same scope
    /// without the cache shape.
    pub fn track(self: &Rc<Self>, inf: &SharedIndexInformer, scope: &str, base: &str) {
        if !self.enabled.get() {
            return;
        }
        if let Some(f) = &*self.on_cleared.borrow() {
            self.store.listen(f);
        }
        let layout = self.layout(scope);
        let dirty: Rc<RefCell<HashSet<u32>>> = Rc::default();
        let (d, l) = (dirty.clone(), layout.clone());
        // Only the bucket: its objects are read from the cache when written.
        let handler: Handler = Rc::new(move |n: Notification| {
            let key = match &n {
                // A rewrite reads the whole cache anyway; the initial adds of
                // a warm start are the stored copy itself.
                _ if l.rewrite.get() => None,
                Notification::Add(_, true) => None,
                Notification::Add(o, false) | Notification::Update(_, o) => object_key(o).ok(),
                Notification::Delete(del) => del.key().ok(),
            };
            if let Some(k) = key {
                d.borrow_mut().insert(bucket_of(&k, l.buckets.get()));
            }
            None
        });
        let reg = inf.add_handler(handler, false);
        self.tracked.borrow_mut().push(Rc::new(Tracked {
            scope: scope.to_owned(),
            base: base.to_owned(),
            swept: Cell::new(false),
            inf: inf.clone(),
            reg,
            layout,
            dirty,
            round: RefCell::new(None),
            behind: Cell::new(0),
            lag_warning: RefCell::new(None),
            owner: Cell::new(false),
            was_busy: Cell::new(false),
        }));
        if self.writer.borrow().is_none() {
            let me = Rc::downgrade(self);
            *self.writer.borrow_mut() = Some(spawn_local(write_loop(me, self.interval)));
        }
    }

    /// Stop writing (factory shutdown); stored copies stay.
    pub fn stop(&self) {
        if let Some(t) = self.writer.borrow_mut().take() {
            t.abort();
        }
        for t in self.tracked.borrow_mut().drain(..) {
            t.reg.remove();
        }
        self.store.release();
    }

    /// Stop writing and delete every stored copy under this name.
    pub fn clear(&self) -> Promise {
        self.stop();
        self.enabled.set(false);
        clear_store(&self.name)
    }

    /// `{ enabled, warning? }` for an informer's status.
    pub fn status_js(&self) -> JsValue {
        let o = Object::new();
        let _ = Reflect::set(&o, &"enabled".into(), &self.enabled.get().into());
        if let Some(w) = self.warning.borrow().as_deref() {
            let _ = Reflect::set(&o, &"warning".into(), &w.into());
        }
        o.into()
    }

    /// One write of `t`'s pending changes (bounded), with the newest version
    /// the stored objects are known to be current at (see the module doc).
    async fn write_one(&self, t: &Tracked) -> Result<(), JsValue> {
        // A restored copy the server has not confirmed yet is what is stored
        // already: written back, it would be dated now (`storedAt`), and an
        // offline visit would make stale data look fresh.
        if !t.inf.has_synced() || t.inf.status().with(|s| s.stored_at_ms.is_some()) {
            return Ok(());
        }
        let layout = &t.layout;
        if !t.owner.get() {
            let claimed = JsFuture::from(self.store.claim(&t.scope)).await?;
            if claimed.as_bool() != Some(true) {
                // Another tab writes this copy; try again next time.
                t.was_busy.set(true);
                t.dirty.borrow_mut().clear();
                return Ok(());
            }
            t.owner.set(true);
            if t.was_busy.get() {
                layout.rewrite.set(true);
            }
        }
        let n = t.inf.indexer().len();
        // Grown far past its layout: lay it out again.
        if !layout.rewrite.get() && buckets_for(n) >= layout.buckets.get().saturating_mul(4) {
            layout.rewrite.set(true);
        }
        if layout.rewrite.get() {
            JsFuture::from(self.store.discard(&t.scope)).await?;
            let b = buckets_for(n);
            layout.buckets.set(b);
            *layout.counts.borrow_mut() = vec![0; b as usize];
            *layout.stored.borrow_mut() = None;
            *t.round.borrow_mut() = None;
            *t.dirty.borrow_mut() = (0..b).collect();
            layout.rewrite.set(false);
        }
        let buckets = layout.buckets.get();
        // Caught up: every change up to `rv` is in the cache and its bucket
        // is marked or was written after it, so once the marked buckets are
        // written the whole copy is at least as new as `rv`.
        if t.round.borrow().is_none() && t.inf.queued_deltas() == 0 && t.reg.pending() == 0 {
            let rv = t.inf.last_sync_resource_version();
            let newer = layout
                .stored
                .borrow()
                .as_ref()
                .is_none_or(|(s, _)| *s != rv);
            if !rv.is_empty() && newer {
                *t.round.borrow_mut() = Some(Round {
                    rv,
                    at: js_sys::Date::now(),
                    left: t.dirty.borrow().clone(),
                });
            }
        }
        let per_write = (MAX_PER_WRITE / n.div_ceil(buckets as usize).max(1)).max(1);
        let chosen = take_batch(
            &mut t.dirty.borrow_mut(),
            t.round.borrow_mut().as_mut().map(|r| &mut r.left),
            per_write,
        );
        let finished = t.round.borrow().as_ref().is_some_and(|r| r.left.is_empty());
        if chosen.is_empty() && !finished {
            // Nothing changed since the copy was last made current.
            t.behind.set(0);
            return Ok(());
        }
        // Until the round is finished the version stored before stays valid:
        // the buckets written meanwhile are only newer.
        let version = if finished {
            t.round.borrow().as_ref().map(|r| (r.rv.clone(), r.at))
        } else {
            layout.stored.borrow().clone()
        };
        // Each bucket: its objects' JSON back to back, and where each ends.
        let mut parts: std::collections::HashMap<u32, (Vec<u8>, Vec<u32>)> =
            chosen.iter().map(|b| (*b, Default::default())).collect();
        if !chosen.is_empty() {
            t.inf.indexer().for_each(|k, o| {
                if let Some((bytes, ends)) = parts.get_mut(&bucket_of(k, buckets)) {
                    bytes.extend_from_slice(o.raw_str().as_bytes());
                    ends.push(u32::try_from(bytes.len()).unwrap_or(u32::MAX));
                }
            });
        }
        let mut counts = layout.counts.borrow().clone();
        counts.resize(buckets as usize, 0);
        let puts: Array = parts
            .into_iter()
            .map(|(b, (bytes, ends))| {
                if let Some(c) = counts.get_mut(b as usize) {
                    *c = u32::try_from(ends.len()).unwrap_or(u32::MAX);
                }
                let part = Array::new();
                part.push(&b.into());
                part.push(&js_sys::Uint8Array::from(&bytes[..]));
                part.push(&js_sys::Uint32Array::from(&ends[..]));
                part
            })
            .collect();
        let meta = match &version {
            Some((rv, at)) => {
                let total: f64 = counts.iter().map(|c| f64::from(*c)).sum();
                let o = Object::new();
                for (k, v) in [
                    ("rv", JsValue::from(rv.as_str())),
                    ("count", total.into()),
                    ("buckets", buckets.into()),
                    ("savedAt", (*at).into()),
                ] {
                    let _ = Reflect::set(&o, &k.into(), &v);
                }
                o.into()
            }
            None => JsValue::UNDEFINED,
        };
        let sweep = version.is_some() && !t.swept.get();
        let written = self.store.write(&t.scope, &puts, &meta, &t.base, sweep);
        if let Err(e) = JsFuture::from(written).await {
            // Not written: mark them again for whoever writes next, and
            // start the round over.
            t.dirty.borrow_mut().extend(chosen);
            *t.round.borrow_mut() = None;
            return Err(e);
        }
        *layout.counts.borrow_mut() = counts;
        if sweep {
            t.swept.set(true);
        }
        if finished {
            *layout.stored.borrow_mut() = version;
            *t.round.borrow_mut() = None;
            t.behind.set(0);
            if let Some(ours) = t.lag_warning.take() {
                let mut w = self.warning.borrow_mut();
                if w.as_deref() == Some(ours.as_str()) {
                    *w = None;
                }
            }
        } else {
            t.behind.set(t.behind.get().saturating_add(1));
            if t.behind.get() >= STALE_WRITES && t.lag_warning.borrow().is_none() {
                let msg = format!(
                    "the stored copy of {} is falling behind: the cache changes faster than \
                     {MAX_PER_WRITE} objects per {} ms are written, so a reload may start \
                     from an older copy or list",
                    t.scope,
                    self.interval.as_millis()
                );
                self.warn(msg.clone());
                *t.lag_warning.borrow_mut() = Some(msg);
            }
        }
        Ok(())
    }
}

/// Up to `max` of the `dirty` buckets, those of `first` (the buckets a round
/// waits for) before the others; each is taken out of both sets.
fn take_batch(dirty: &mut HashSet<u32>, first: Option<&mut HashSet<u32>>, max: usize) -> Vec<u32> {
    let mut chosen: Vec<u32> = Vec::new();
    if let Some(first) = first {
        chosen.extend(first.iter().take(max).copied());
        for b in &chosen {
            first.remove(b);
            dirty.remove(b);
        }
    }
    let rest: Vec<u32> = dirty
        .iter()
        .take(max.saturating_sub(chosen.len()))
        .copied()
        .collect();
    for b in &rest {
        dirty.remove(b);
    }
    chosen.extend(rest);
    chosen
}

async fn write_loop(me: Weak<Persist>, interval: Duration) {
    loop {
        real_clock().sleep(interval).await;
        let Some(p) = me.upgrade() else { return };
        let all: Vec<Rc<Tracked>> = p.tracked.borrow().clone();
        for t in all {
            if !p.enabled.get() {
                return;
            }
            if let Err(e) = p.write_one(&t).await {
                let why = if error_name(&e).as_deref() == Some("QuotaExceededError") {
                    "the storage quota is exhausted".to_owned()
                } else {
                    format!("writing failed ({})", describe(&e))
                };
                p.turn_off(format!("{why}: persistence is off"));
                return;
            }
        }
    }
}

/// The stored copy (`{ rv, savedAt, buckets, parts }`) as a seed, its
/// bucket count and the entries of each bucket; any object that is not
/// valid JSON, or not in its key's bucket, discards the whole copy.
fn decode(v: &JsValue) -> Result<(Seed, u32, Vec<u32>), String> {
    let rv = options::string(v, "rv")
        .ok()
        .flatten()
        .filter(|r| !r.is_empty())
        .ok_or("no resourceVersion")?;
    // A clock that was ahead when the copy was written does not date it
    // in the future.
    let saved = options::number(v, "savedAt")
        .ok()
        .flatten()
        .ok_or("no time")?
        .min(js_sys::Date::now());
    let buckets = options::number(v, "buckets")
        .ok()
        .flatten()
        .filter(|b| b.fract() == 0.0 && *b >= 1.0 && *b <= f64::from(MAX_BUCKETS))
        .ok_or("no layout")? as u32;
    let parts: Array = options::prop(v, "parts")
        .and_then(|a| a.dyn_into().ok())
        .ok_or("no objects")?;
    let mut objects = Vec::new();
    let mut counts = vec![0u32; buckets as usize];
    // The stored count is of entries: a key stored twice is a damaged copy,
    // which would otherwise pass for a complete one.
    let mut keys: Vec<String> = Vec::new();
    for part in parts.iter() {
        let bytes: js_sys::Uint8Array = options::prop(&part, "bytes")
            .and_then(|b| b.dyn_into().ok())
            .ok_or("a bucket has no bytes")?;
        let ends: js_sys::Uint32Array = options::prop(&part, "ends")
            .and_then(|e| e.dyn_into().ok())
            .ok_or("a bucket has no ends")?;
        let bucket = options::number(&part, "bucket")
            .ok()
            .flatten()
            .filter(|b| b.fract() == 0.0 && *b >= 0.0 && *b < f64::from(buckets))
            .ok_or("a bucket is outside the layout")? as u32;
        if let Some(c) = counts.get_mut(bucket as usize) {
            *c = ends.length();
        }
        // Each object is copied once, straight from the stored bytes.
        let len = bytes.length();
        let mut start = 0u32;
        for end in ends.to_vec() {
            if end < start || end > len {
                return Err("a bucket's ends are out of order".into());
            }
            let obj = KubeObject::from_json_vec(bytes.subarray(start, end).to_vec())
                .map_err(|e| format!("an object is not valid: {e}"))?;
            let key = object_key(&obj).map_err(|e| format!("an object has no key: {e}"))?;
            // Rewriting its own bucket would leave it behind, stored twice.
            if bucket_of(&key, buckets) != bucket {
                return Err("an object is stored in another bucket than its key's".into());
            }
            keys.push(key);
            objects.push(obj);
            start = end;
        }
    }
    crate::rt::sort::sort_by(&mut keys, |a, b| a.cmp(b));
    if keys.windows(2).any(|w| w[0] == w[1]) {
        return Err("an object is stored twice".into());
    }
    Ok((
        Seed {
            objects,
            resource_version: rv,
            stored_at_ms: saved,
        },
        buckets,
        counts,
    ))
}

fn error_name(e: &JsValue) -> Option<String> {
    Reflect::get(e, &"name".into()).ok()?.as_string()
}

fn describe(e: &JsValue) -> String {
    let name = error_name(e).unwrap_or_else(|| "Error".into());
    let msg = Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_default();
    let mut s = format!("{name}: {msg}");
    s.truncate(s.char_indices().nth(200).map_or(s.len(), |(i, _)| i));
    s
}

fn web_sys_warn(msg: &str) {
    web_sys::console::warn_2(&"kubewasm: persistence:".into(), &msg.into());
}

/// Delete every stored copy kept under `name` (for every server and
/// identity), e.g. at logout; resolves once deleted, and at once where
/// storage is denied (nothing can have been stored). Call it after `init()`,
/// as every export.
#[wasm_bindgen(js_name = clearPersisted, unchecked_return_type = "Promise<void>")]
pub fn clear_persisted(#[wasm_bindgen(unchecked_param_type = "string")] name: JsValue) -> Promise {
    rejecting((|| {
        let p = clear_store(&super::options::string_arg(&name, "name")?);
        Ok(future_to_promise(async move {
            JsFuture::from(p).await?;
            Ok(JsValue::UNDEFINED)
        }))
    })())
}
