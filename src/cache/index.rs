//! One incrementally maintained index: value → bucket of slot ids.
//!
//! The store remembers, per slot and index, the values the object was last
//! filed under ([`Vals`], sharing the bucket's value string), so an update
//! never calls an index function on the old object again and touches only
//! values that changed. When an object's namespace and labels did not
//! change — the usual status update — an update compares one string per
//! index, allocates nothing and touches no bucket.

use std::rc::Rc;

use super::fx::{FxHashMap, FxHashSet};
use super::store::IndexFunc;
use crate::rest::KubeObject;

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

impl Kind {
    /// The built-in value of `obj`; `None` for a custom index.
    pub(crate) fn builtin<'a>(&self, obj: &'a KubeObject) -> Option<Builtin<'a>> {
        let labels = || obj.meta().labels();
        Some(match self {
            Kind::Namespace => Builtin::One(obj.namespace().unwrap_or("")),
            Kind::Label(k) => labels().get(k).map_or(Builtin::None, Builtin::One),
            Kind::LabelNs(k) => labels().get(k).map_or(Builtin::None, |v| {
                Builtin::NsValue(obj.namespace().unwrap_or(""), v)
            }),
            Kind::Custom => return None,
        })
    }
}

/// The values one object is filed under in one index (distinct).
#[derive(Default, Clone)]
pub(crate) enum Vals {
    /// Not filed.
    #[default]
    None,
    /// The usual case: one value.
    One(Rc<str>),
    /// A multi-valued custom index.
    Many(Box<[Rc<str>]>),
}

impl Vals {
    fn as_slice(&self) -> &[Rc<str>] {
        match self {
            Vals::None => &[],
            Vals::One(v) => std::slice::from_ref(v),
            Vals::Many(v) => v,
        }
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
    pub(crate) fn set_builtin(&mut self, id: u32, slot: &mut Vals, new: Builtin<'_>, scratch: &mut String) {
        match (new, &*slot) {
            (Builtin::None, Vals::None) => {}
            (Builtin::One(n), Vals::One(o)) if **o == *n => {}
            (Builtin::NsValue(ns, v), Vals::One(o)) if is_ns_value(o, ns, v) => {}
            (Builtin::None, _) => self.set(id, slot, &[] as &[&str]),
            (Builtin::One(n), _) => self.set(id, slot, &[n]),
            (Builtin::NsValue(ns, v), _) => {
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
        let current = slot.as_slice();
        if current.len() == new.len() && current.iter().zip(new).all(|(o, n)| **o == *n.as_ref()) {
            return;
        }
        let old = std::mem::take(slot);
        let old = old.as_slice();
        for o in old {
            if !new.iter().any(|n| n.as_ref() == &**o) {
                remove_member(&mut self.buckets, o, id);
            }
        }
        let mut stored: Vec<Rc<str>> = Vec::with_capacity(new.len());
        for n in new {
            let n = n.as_ref();
            let rc = match old.iter().find(|o| &***o == n) {
                Some(kept) => kept.clone(),
                None => add_member(&mut self.buckets, n, id),
            };
            stored.push(rc);
        }
        *slot = restore(&stored);
    }

    /// Take slot `id` out of every bucket it is filed under.
    pub(crate) fn remove(&mut self, id: u32, slot: &mut Vals) {
        let old = std::mem::take(slot);
        for o in old.as_slice() {
            remove_member(&mut self.buckets, o, id);
        }
    }
}

/// `stored == ns + "/" + v`, without building the string.
fn is_ns_value(stored: &str, ns: &str, v: &str) -> bool {
    stored.len() == ns.len() + 1 + v.len()
        && stored.starts_with(ns)
        && stored.ends_with(v)
        && stored.as_bytes().get(ns.len()) == Some(&b'/')
}

fn restore(vals: &[Rc<str>]) -> Vals {
    match vals {
        [] => Vals::None,
        [one] => Vals::One(one.clone()),
        many => Vals::Many(many.into()),
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
