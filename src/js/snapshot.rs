//! Snapshot arrays (`getSnapshot()` of informers and scoped views),
//! patched from one diff to the next.
//!
//! A dashboard reads a snapshot once per frame that brought a diff. Built
//! anew, it costs the whole view (every object listed, sorted and handed to
//! JS: tens of milliseconds for 20,000 objects), every frame of a busy
//! cluster. Between two reads only the keys the diffs named (and those the
//! next diff will name) can differ, so the array is copied and those keys
//! are patched in place, found by binary search: O(n) for the copy (one
//! native `slice`) plus O(k log n) for k changed keys. The informer keeps
//! the keys of its recent diffs ([`DiffLog`]) for every snapshot to catch
//! up from.

use std::collections::VecDeque;

use js_sys::{Array, Uint32Array, Uint8Array};
use wasm_bindgen::prelude::*;

use super::object::to_js;
use crate::cache::{object_key, Indexer};
use crate::rest::KubeObject;

#[wasm_bindgen(module = "/src/js/objects.js")]
extern "C" {
    #[wasm_bindgen(js_name = patchedSnapshot)]
    fn patched_snapshot(old: &Array, at: Uint32Array, replace: Uint8Array, objs: &Array) -> Array;
    #[wasm_bindgen(js_name = sameElements)]
    fn same_elements(a: &Array, b: &Array) -> bool;
}

/// The keys of the recent diffs, by version, for snapshots to catch up
/// from. Bounded: past [`DiffLog::cap`] keys the oldest diffs go, and a
/// snapshot older than what is left is built anew.
#[derive(Default)]
pub struct DiffLog {
    diffs: VecDeque<(u64, Vec<String>)>,
    keys: usize,
    /// Diffs up to this version are gone.
    floor: u64,
    /// Kept only once a snapshot was taken: handlers alone need none.
    on: bool,
    /// Keys touched in frames whose changes cancelled out (added, then
    /// deleted): no diff named them, but a snapshot read in between may hold
    /// them; they go with the next diff.
    carry: Vec<String>,
}

impl DiffLog {
    /// Keep what `cache_len` objects' snapshots are worth patching from:
    /// more keys than this, and building anew is about as cheap.
    fn cap(cache_len: usize) -> usize {
        (cache_len / 4).max(1024)
    }

    /// Start keeping diffs (a snapshot now exists at `version`).
    pub fn start(&mut self, version: u64) {
        if !self.on {
            self.on = true;
            self.floor = version;
        }
    }

    /// Whether diffs are kept (a snapshot was taken).
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Note the keys a flush touched: those of diff `version` when one was
    /// delivered, else kept for the next.
    pub fn push(&mut self, version: u64, delivered: bool, touched: Vec<String>, cache_len: usize) {
        if !self.on {
            return;
        }
        if !delivered {
            self.carry.extend(touched);
            if self.carry.len() > Self::cap(cache_len) {
                // Too many to patch: snapshots older than now are built anew.
                self.carry = Vec::new();
                self.diffs.clear();
                self.keys = 0;
                self.floor = version + 1;
            }
            return;
        }
        let mut keys = std::mem::take(&mut self.carry);
        keys.extend(touched);
        self.keys += keys.len();
        self.diffs.push_back((version, keys));
        while self.keys > Self::cap(cache_len) {
            let Some((v, k)) = self.diffs.pop_front() else {
                break;
            };
            self.keys -= k.len();
            self.floor = v;
        }
    }

    /// The keys of every diff after `version`, or `None` when some are gone.
    fn since(&self, version: u64) -> Option<impl Iterator<Item = &str>> {
        (version >= self.floor).then(|| {
            self.diffs
                .iter()
                .filter(move |(v, _)| *v > version)
                .flat_map(|(_, k)| k.iter().map(String::as_str))
        })
    }
}

/// At most this many insertions and removals are patched (each moves the
/// keys after it); past them the snapshot is built anew.
const MAX_MOVES: usize = 64;

/// A snapshot array and the keys it holds.
pub struct Snapshot {
    /// The diff version the array is current for.
    pub version: u64,
    /// The frozen array handed out.
    pub array: Array,
    /// The keys of `array`'s objects in its order (namespace, then name);
    /// `None` when some key does not split back into its object's namespace
    /// and name (a name holding `/`), which only a full build handles.
    keys: Option<Vec<Box<str>>>,
}

/// What a key's position in snapshot order compares: `(namespace, name)`.
fn order_of(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, key),
    }
}

impl Snapshot {
    /// The snapshot of `objs` (sorted in snapshot order) at `version`; its
    /// array is `previous` when that holds the same object versions.
    pub fn build(version: u64, objs: &[KubeObject], previous: Option<&Array>) -> Snapshot {
        let array: Array = objs.iter().map(to_js).collect();
        let array = match previous {
            Some(p) if same_elements(p, &array) => p.clone(),
            // Shared by every reader: frozen.
            _ => js_sys::Object::freeze(&array).unchecked_into(),
        };
        let keys: Option<Vec<Box<str>>> = objs
            .iter()
            .map(|o| {
                let k = object_key(o).ok()?;
                (order_of(&k) == (o.namespace(), o.name())).then(|| k.into_boxed_str())
            })
            .collect();
        Snapshot {
            version,
            array,
            keys,
        }
    }

    /// The array patched to `version`: for the keys of the diffs `log` holds
    /// since this snapshot, and `pending` (applied, not yet in a diff), what
    /// `cache` holds now if `admits` it. `None` when only a full build will
    /// do (the caller builds one). The same array when nothing here changed.
    pub fn patch<'a>(
        &mut self,
        version: u64,
        log: &DiffLog,
        pending: impl Iterator<Item = &'a str>,
        cache: &Indexer,
        admits: impl Fn(&KubeObject) -> bool,
    ) -> Option<Array> {
        let keys = self.keys.as_mut()?;
        let pending: Vec<&str> = pending.collect();
        let wanted: Vec<&str> = log
            .since(self.version)?
            .chain(pending.iter().copied())
            .collect();
        if wanted.len() > DiffLog::cap(keys.len()) {
            return None;
        }
        // One op per key: (position in the old array, replaces it, the key, what goes there).
        let mut ops: Vec<(u32, bool, &str, Option<KubeObject>)> = Vec::new();
        let mut moves = 0;
        for key in wanted {
            let now = cache.get_by_key(key).filter(|o| admits(o));
            if now
                .as_ref()
                .is_some_and(|o| order_of(key) != (o.namespace(), o.name()))
            {
                return None;
            }
            let found = keys.binary_search_by(|k| order_of(k).cmp(&order_of(key)));
            let (at, op) = match (found, now) {
                (Ok(i), Some(o)) => (i, (true, Some(o))),
                (Ok(i), None) => (i, (true, None)),
                (Err(i), Some(o)) => (i, (false, Some(o))),
                (Err(_), None) => continue,
            };
            if !op.0 || op.1.is_none() {
                moves += 1;
                if moves > MAX_MOVES {
                    return None;
                }
            }
            ops.push((u32::try_from(at).ok()?, op.0, key, op.1));
        }
        // A key named twice (delivered, then changed again) is patched once.
        crate::rt::sort::sort_by(&mut ops, |a, b| a.2.cmp(b.2));
        ops.dedup_by(|a, b| a.2 == b.2);
        // Last position first, so earlier positions stay valid; at one
        // position the element there goes before what is inserted before
        // it, and insertions go in from the last key down.
        crate::rt::sort::sort_by(&mut ops, |a, b| {
            b.0.cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then_with(|| order_of(b.2).cmp(&order_of(a.2)))
        });
        self.version = version;
        if ops.is_empty() {
            // Nothing here changed: the same array, as React expects.
            return Some(self.array.clone());
        }
        let at: Vec<u32> = ops.iter().map(|o| o.0).collect();
        let replace: Vec<u8> = ops.iter().map(|o| u8::from(o.1)).collect();
        let objs: Array = ops
            .iter()
            .map(|o| o.3.as_ref().map_or(JsValue::UNDEFINED, to_js))
            .collect();
        let array = patched_snapshot(
            &self.array,
            Uint32Array::from(&at[..]),
            Uint8Array::from(&replace[..]),
            &objs,
        );
        for (i, replaces, key, obj) in &ops {
            let i = *i as usize;
            match (replaces, obj) {
                (true, Some(_)) => {}
                (true, None) => {
                    keys.remove(i);
                }
                (false, _) => keys.insert(i, (*key).into()),
            }
        }
        self.array = array.clone();
        Some(array)
    }
}
