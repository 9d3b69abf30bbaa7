//! One incrementally maintained index: value → bucket of slot ids.
//!
//! The store remembers, per slot and index, the values the object was last
//! filed under ([`Vals`], sharing the bucket's value string), so an update
//! never calls an index function on the old object again and touches only
//! values that changed. When an object's namespace and labels did not
//! change — the usual status update — an update compares one string per
//! index, allocates nothing and touches no bucket.

use std::rc::Rc;

use super::store::IndexFunc;
use crate::rest::KubeObject;
use crate::rt::fx::{FxHashMap, FxHashSet};

/// A bucket: the slot ids filed under one value.
pub(crate) type Bucket = FxHashSet<u32>;

/// What an index computes. The built-in kinds are evaluated by the store
/// itself from borrowed strings (no allocation, no user code); only
/// `Custom` calls the index function.
#[derive(Clone)]
pub(crate) enum Kind {
    /// `[namespace]`, `""` for cluster-scoped objects.
    Namespace,
    /// The value of one label, nothing when absent.
    Label(Rc<str>),
    /// `namespace/value` of one label, nothing when absent.
    LabelNs(Rc<str>),
    /// The user's function, run with no store borrow held.
    Custom,
}

/// A built-in kind's value for an object, borrowed from the object.
#[derive(Clone, Copy)]
pub(crate) enum Builtin<'a> {
    /// No value.
    None,
    /// One value.
    One(&'a str),
    /// One value `ns/value`, compared piecewise so that an unchanged
    /// object needs no formatted string.
    NsValue(&'a str, &'a str),
}

/// The last label looked up while computing one object's built-in values:
/// a label index and its namespaced companion share the key (`Rc::ptr_eq`),
/// so the object's label list — separate heap strings, cold in cache — is
/// searched once per label rather than once per index.
#[derive(Default)]
pub(crate) struct LabelMemo<'a> {
    key: Option<*const u8>,
    value: Option<&'a str>,
}

impl Kind {
    /// The built-in value of `obj`; `None` for a custom index.
    pub(crate) fn builtin<'a>(
        &self,
        obj: &'a KubeObject,
        memo: &mut LabelMemo<'a>,
    ) -> Option<Builtin<'a>> {
        let mut label = |k: &Rc<str>| {
            let ptr = Rc::as_ptr(k) as *const u8;
            if memo.key != Some(ptr) {
                memo.key = Some(ptr);
                memo.value = obj.meta().labels().get(k);
            }
            memo.value
        };
        Some(match self {
            Kind::Namespace => Builtin::One(obj.namespace().unwrap_or("")),
            Kind::Label(k) => label(k).map_or(Builtin::None, Builtin::One),
            Kind::LabelNs(k) => label(k).map_or(Builtin::None, |v| {
                Builtin::NsValue(obj.namespace().unwrap_or(""), v)
            }),
            Kind::Custom => return None,
        })
    }
}

/// Longest value kept inline in a [`Vals`] record.
const INLINE: usize = 22;

/// The values one object is filed under in one index (distinct).
///
/// Short values (namespaces, most label values, `ns/value` pairs) are kept
/// inline, so checking that an update did not change them reads only the
/// slot's own record and not a string elsewhere on the heap: with one
/// distinct value per pod (`pod-template-hash`), that string is a cache miss.
#[derive(Default, Clone)]
pub(crate) enum Vals {
    /// Not filed.
    #[default]
    None,
    /// One value of at most [`INLINE`] bytes.
    Inline(u8, [u8; INLINE]),
    /// One longer value, sharing the bucket's string.
    One(Rc<str>),
    /// A multi-valued custom index.
    Many(Box<[Rc<str>]>),
}

impl Vals {
    /// A record of exactly one value; `shared` is the bucket's string when
    /// the caller has it at hand.
    fn one(value: &str, shared: Option<Rc<str>>) -> Vals {
        if value.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            if let Some(dst) = bytes.get_mut(..value.len()) {
                dst.copy_from_slice(value.as_bytes());
                return Vals::Inline(value.len() as u8, bytes);
            }
        }
        Vals::One(shared.unwrap_or_else(|| Rc::from(value)))
    }

    fn len(&self) -> usize {
        match self {
            Vals::None => 0,
            Vals::Inline(..) | Vals::One(_) => 1,
            Vals::Many(v) => v.len(),
        }
    }

    /// Value `i` as bytes (comparisons need no UTF-8 check).
    fn bytes(&self, i: usize) -> Option<&[u8]> {
        match (self, i) {
            (Vals::Inline(len, b), 0) => b.get(..usize::from(*len)),
            (Vals::One(v), 0) => Some(v.as_bytes()),
            (Vals::Many(v), i) => v.get(i).map(|s| s.as_bytes()),
            _ => None,
        }
    }

    /// Value `i` as a string (for bucket lookups).
    fn str(&self, i: usize) -> Option<&str> {
        match (self, i) {
            (Vals::One(v), 0) => Some(v),
            (Vals::Many(v), i) => v.get(i).map(|s| &**s),
            // Inline bytes were copied from a `&str` whole, so this holds.
            (Vals::Inline(..), 0) => self.bytes(0).and_then(|b| std::str::from_utf8(b).ok()),
            _ => None,
        }
    }

    /// Whether the record is exactly `new` (same order: custom values are
    /// sorted, built-ins have one).
    fn equals<S: AsRef<str>>(&self, new: &[S]) -> bool {
        self.len() == new.len()
            && new
                .iter()
                .enumerate()
                .all(|(i, n)| self.bytes(i) == Some(n.as_ref().as_bytes()))
    }

    fn contains(&self, value: &str) -> bool {
        (0..self.len()).any(|i| self.bytes(i) == Some(value.as_bytes()))
    }

    /// Whether the record is the single value `ns/v`, without building it.
    fn is_ns_value(&self, ns: &str, v: &str) -> bool {
        let Some(stored) = self.bytes(0).filter(|_| self.len() == 1) else {
            return false;
        };
        stored.len() == ns.len() + 1 + v.len()
            && stored.starts_with(ns.as_bytes())
            && stored.ends_with(v.as_bytes())
            && stored.get(ns.len()) == Some(&b'/')
    }
}

/// A bucket with its own copy of the value handle, so filing a slot under
/// an existing value is one hash lookup that also yields the shared string.
struct Members {
    value: Rc<str>,
    ids: Bucket,
}

/// One named index.
pub(crate) struct Index {
    /// The index name.
    pub(crate) name: String,
    /// The function, as registered (used for custom kinds and `Indexer::index`).
    pub(crate) func: IndexFunc,
    /// How values are computed.
    pub(crate) kind: Kind,
    /// value → slots filed under it; never holds an empty bucket (ST-08).
    buckets: FxHashMap<Rc<str>, Members>,
}

impl Index {
    /// An empty index.
    pub(crate) fn new(name: String, func: IndexFunc, kind: Kind) -> Self {
        Index {
            name,
            func,
            kind,
            buckets: FxHashMap::default(),
        }
    }

    /// Empty every bucket.
    pub(crate) fn clear(&mut self) {
        self.buckets.clear();
    }

    /// The bucket of `value`.
    pub(crate) fn bucket(&self, value: &str) -> Option<&Bucket> {
        self.buckets.get(value).map(|m| &m.ids)
    }

    /// Values with at least one object.
    pub(crate) fn values(&self) -> impl Iterator<Item = &str> + '_ {
        self.buckets.keys().map(|k| &**k)
    }

    /// File slot `id` under a built-in value; `scratch` is reused to format
    /// `ns/value` only when the value changed.
    pub(crate) fn set_builtin(
        &mut self,
        id: u32,
        slot: &mut Vals,
        new: Builtin<'_>,
        scratch: &mut String,
    ) {
        match new {
            Builtin::None => self.set(id, slot, &[] as &[&str]),
            Builtin::One(n) => self.set(id, slot, &[n]),
            Builtin::NsValue(ns, v) => {
                if slot.is_ns_value(ns, v) {
                    return;
                }
                scratch.clear();
                scratch.push_str(ns);
                scratch.push('/');
                scratch.push_str(v);
                self.set(id, slot, &[scratch.as_str()]);
            }
        }
    }

    /// File slot `id` under exactly `new` (distinct values), moving it out
    /// of the values it no longer has.
    pub(crate) fn set<S: AsRef<str>>(&mut self, id: u32, slot: &mut Vals, new: &[S]) {
        if slot.equals(new) {
            return;
        }
        let old = std::mem::take(slot);
        for i in 0..old.len() {
            if let Some(o) = old.str(i) {
                if !new.iter().any(|n| n.as_ref() == o) {
                    remove_member(&mut self.buckets, o, id);
                }
            }
        }
        let mut stored: Vec<Rc<str>> = Vec::with_capacity(new.len());
        for n in new {
            let n = n.as_ref();
            if old.contains(n) {
                // Still filed there; only the record needs the string.
                if let Some(m) = self.buckets.get(n) {
                    stored.push(m.value.clone());
                }
            } else {
                stored.push(add_member(&mut self.buckets, n, id));
            }
        }
        *slot = match stored.len() {
            0 => Vals::None,
            1 => match (new.first(), stored.pop()) {
                (Some(n), shared) => Vals::one(n.as_ref(), shared),
                (None, _) => Vals::None,
            },
            _ => Vals::Many(stored.into_boxed_slice()),
        };
    }

    /// Take slot `id` out of every bucket it is filed under.
    pub(crate) fn remove(&mut self, id: u32, slot: &mut Vals) {
        let old = std::mem::take(slot);
        for i in 0..old.len() {
            if let Some(o) = old.str(i) {
                remove_member(&mut self.buckets, o, id);
            }
        }
    }
}

fn remove_member(buckets: &mut FxHashMap<Rc<str>, Members>, value: &str, id: u32) {
    if let Some(m) = buckets.get_mut(value) {
        m.ids.remove(&id);
        if m.ids.is_empty() {
            buckets.remove(value);
        }
    }
}

/// Add `id` under `value`, returning the bucket's value string so the
/// per-slot record shares it instead of copying it.
fn add_member(buckets: &mut FxHashMap<Rc<str>, Members>, value: &str, id: u32) -> Rc<str> {
    if let Some(m) = buckets.get_mut(value) {
        m.ids.insert(id);
        return m.value.clone();
    }
    let k: Rc<str> = Rc::from(value);
    let mut ids = Bucket::default();
    ids.insert(id);
    buckets.insert(
        k.clone(),
        Members {
            value: k.clone(),
            ids,
        },
    );
    k
}
