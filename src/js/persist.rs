//! Warm starts from IndexedDB (`InformerFactory` option `persist`).
//!
//! Each informer's objects and the resourceVersion they are current at are
//! written in the background: a handler only records which keys changed (no
//! work on the event path beyond a set insert), and one task per factory
//! writes at most one transaction of at most [`MAX_PER_WRITE`] objects per
//! informer every `intervalMs`, reading the objects from the cache at that
//! time. The resourceVersion is written only with a batch that leaves no key
//! unwritten while the handler has seen every applied change, so the stored
//! objects are never older than the stored version (a watch from it replays
//! whatever came later).
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
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::error::KubeErrorInit;
use super::options;
use crate::cache::{
    object_key, Handler, Notification, Registration, Seed, SeedSource, SharedIndexInformer,
};
use crate::rest::{Auth, KubeObject};
use crate::rt::{real_clock, spawn_local, TaskHandle};

/// Objects one write transaction carries per informer, at most.
pub const MAX_PER_WRITE: usize = 2000;
/// How long a start waits for its stored copy before listing instead.
const LOAD_TIMEOUT: Duration = Duration::from_secs(3);
/// The longest warning kept (a hostile database cannot grow it).
const MAX_WARNING: usize = 300;

#[wasm_bindgen(module = "/src/js/persist.js")]
extern "C" {
    type PersistStore;
    #[wasm_bindgen(constructor)]
    fn new(name: &str, server: &str, identity: &str, on_warning: &js_sys::Function)
        -> PersistStore;
    #[wasm_bindgen(method)]
    fn load(this: &PersistStore, scope: &str) -> Promise;
    #[wasm_bindgen(method)]
    fn forget(this: &PersistStore, scope: &str);
    #[wasm_bindgen(method, js_name = drop)]
    fn discard(this: &PersistStore, scope: &str) -> Promise;
    #[wasm_bindgen(method)]
    fn write(
        this: &PersistStore,
        scope: &str,
        puts: &Array,
        deletes: &Array,
        rv: Option<String>,
        count: Option<f64>,
    ) -> Promise;
    #[wasm_bindgen(js_name = clearStore)]
    fn clear_store(name: &str) -> Promise;
}

/// One informer's pending writes.
struct Tracked {
    scope: String,
    inf: SharedIndexInformer,
    reg: Registration,
    dirty: Rc<RefCell<HashSet<String>>>,
    /// More keys changed than are worth tracking (mostly deleted ones):
    /// the copy is rewritten from the cache instead.
    overflow: Rc<Cell<bool>>,
    /// The resourceVersion last written (skip rewriting an unchanged copy).
    stored_rv: RefCell<String>,
}

/// A factory's persistence: the store, its informers, the writer task.
pub struct Persist {
    name: String,
    store: PersistStore,
    enabled: Cell<bool>,
    warning: Rc<RefCell<Option<String>>>,
    interval: Duration,
    tracked: RefCell<Vec<Rc<Tracked>>>,
    writer: RefCell<Option<TaskHandle>>,
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
        let store = PersistStore::new(&name, &config.base_url, &identity, &on_warning);
        Ok(Some(Rc::new(Persist {
            name,
            store,
            enabled: Cell::new(true),
            warning,
            interval,
            tracked: RefCell::new(Vec::new()),
            writer: RefCell::new(None),
        })))
    }

    fn warn(&self, msg: String) {
        web_sys_warn(&msg);
        *self.warning.borrow_mut() = Some(msg);
    }

    /// Stop writing (for good) and say why.
    fn turn_off(&self, why: String) {
        self.enabled.set(false);
        if let Some(t) = self.writer.borrow_mut().take() {
            t.abort();
        }
        for t in self.tracked.borrow_mut().drain(..) {
            t.reg.remove();
        }
        self.warn(why);
    }

    /// The seed source of the informer stored under `scope`; `warm` is set
    /// when a stored copy was found.
    pub fn seed_source(self: &Rc<Self>, scope: &str, warm: Rc<Cell<bool>>) -> SeedSource {
        let me = Rc::downgrade(self);
        let scope = scope.to_owned();
        Rc::new(move || {
            let (me, scope, warm) = (me.clone(), scope.clone(), warm.clone());
            Box::pin(async move {
                let p = me.upgrade()?;
                let load = JsFuture::from(p.store.load(&scope));
                drop(p);
                let timeout = real_clock().sleep(LOAD_TIMEOUT);
                let result = match select(load, Box::pin(timeout)).await {
                    Either::Left((r, _)) => r,
                    Either::Right(_) => {
                        if let Some(p) = me.upgrade() {
                            p.warn(format!("reading the stored copy of {scope} took too long: listing instead"));
                        }
                        return None;
                    }
                };
                let p = me.upgrade()?;
                let stored = match result {
                    Ok(v) if v.is_null() || v.is_undefined() => return None,
                    Ok(v) => v,
                    Err(e) => {
                        p.warn(format!("stored data could not be read ({}): listing instead", describe(&e)));
                        return None;
                    }
                };
                match decode(&stored) {
                    Ok(seed) => {
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

    /// Write `inf`'s changes from now on.
    pub fn track(self: &Rc<Self>, inf: &SharedIndexInformer, scope: &str) {
        if !self.enabled.get() {
            return;
        }
        let dirty: Rc<RefCell<HashSet<String>>> = Rc::default();
        let overflow: Rc<Cell<bool>> = Rc::default();
        let (d, over, cache) = (dirty.clone(), overflow.clone(), inf.indexer().clone());
        // Only the key: the object is read from the cache when written.
        let handler: Handler = Rc::new(move |n: Notification| {
            if over.get() {
                return None;
            }
            let key = match &n {
                Notification::Add(o, _) | Notification::Update(_, o) => object_key(o).ok(),
                Notification::Delete(del) => del.key().ok(),
            };
            if let Some(k) = key {
                let mut d = d.borrow_mut();
                d.insert(k);
                // Keys of objects that exist are bounded by the cache; past
                // that, deleted ones: rewrite instead of growing.
                if d.len() > cache.len() + 4 * MAX_PER_WRITE {
                    d.clear();
                    d.shrink_to_fit();
                    over.set(true);
                }
            }
            None
        });
        let reg = inf.add_handler(handler, false);
        self.tracked.borrow_mut().push(Rc::new(Tracked {
            scope: scope.to_owned(),
            inf: inf.clone(),
            reg,
            dirty,
            overflow,
            stored_rv: RefCell::new(String::new()),
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

    /// One write of `t`'s pending changes (bounded), and its
    /// resourceVersion when that leaves the stored copy complete.
    async fn write_one(&self, t: &Tracked) -> Result<(), JsValue> {
        if t.overflow.get() {
            JsFuture::from(self.store.discard(&t.scope)).await?;
            t.stored_rv.borrow_mut().clear();
            let mut all = HashSet::new();
            t.inf.indexer().for_each(|k, _| {
                all.insert(k.to_owned());
            });
            *t.dirty.borrow_mut() = all;
            t.overflow.set(false);
        }
        let keys: Vec<String> = {
            let mut dirty = t.dirty.borrow_mut();
            let keys: Vec<String> = dirty.iter().take(MAX_PER_WRITE).cloned().collect();
            for k in &keys {
                dirty.remove(k);
            }
            keys
        };
        // Every applied change is in the batch (or was written earlier).
        let complete = t.dirty.borrow().is_empty()
            && t.inf.queued_deltas() == 0
            && t.reg.pending() == 0
            && t.inf.has_synced();
        let rv = t.inf.last_sync_resource_version();
        let write_rv = complete && !rv.is_empty() && *t.stored_rv.borrow() != rv;
        if keys.is_empty() && !write_rv {
            return Ok(());
        }
        let (puts, deletes) = (Array::new(), Array::new());
        for k in &keys {
            match t.inf.indexer().get_by_key(k) {
                Some(o) => {
                    let pair = Array::of2(&k.as_str().into(), &o.raw_str().into());
                    puts.push(&pair);
                }
                None => {
                    deletes.push(&k.as_str().into());
                }
            }
        }
        let (rv_arg, count) = if write_rv {
            (Some(rv.clone()), Some(t.inf.indexer().len() as f64))
        } else {
            (None, None)
        };
        let written = JsFuture::from(self.store.write(&t.scope, &puts, &deletes, rv_arg, count)).await;
        if let Err(e) = written {
            // Not written: keep the keys for whoever writes next.
            t.dirty.borrow_mut().extend(keys);
            return Err(e);
        }
        if write_rv {
            *t.stored_rv.borrow_mut() = rv;
        }
        Ok(())
    }
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

/// The stored copy (`{ rv, savedAt, objects }`) as a seed; any object that
/// is not valid JSON discards the whole copy.
fn decode(v: &JsValue) -> Result<Seed, String> {
    let rv = options::string(v, "rv")
        .ok()
        .flatten()
        .filter(|r| !r.is_empty())
        .ok_or("no resourceVersion")?;
    let saved = options::number(v, "savedAt")
        .ok()
        .flatten()
        .ok_or("no time")?;
    let arr: Array = options::prop(v, "objects")
        .and_then(|a| a.dyn_into().ok())
        .ok_or("no objects")?;
    let mut objects = Vec::with_capacity(arr.length() as usize);
    for item in arr.iter() {
        let text = item.as_string().ok_or("an object is not text")?;
        let obj = KubeObject::from_json_vec(text.into_bytes())
            .map_err(|e| format!("an object is not valid: {e}"))?;
        objects.push(obj);
    }
    Ok(Seed {
        objects,
        resource_version: rv,
        stored_at_ms: saved,
    })
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
/// identity), e.g. at logout; resolves once deleted.
#[wasm_bindgen(js_name = clearPersisted, unchecked_return_type = "Promise<void>")]
pub fn clear_persisted(name: String) -> Promise {
    let p = clear_store(&name);
    future_to_promise(async move {
        JsFuture::from(p).await?;
        Ok(JsValue::UNDEFINED)
    })
}
