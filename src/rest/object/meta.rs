//! The parsed part of an object's `metadata`, stored compactly.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use serde::Deserialize;

use super::super::scan::{MetaSpan, StrSpan};
use super::super::Error;

/// The parsed part of `metadata` that the cache, selectors and indexes use.
///
/// Annotations are not kept here (they can be large, e.g. the last-applied
/// configuration); read them on demand with [`KubeObject::annotations`](super::KubeObject::annotations).
///
/// The strings live in one buffer addressed by ranges: an object's metadata
/// is one allocation, not one per field, which matters on a busy watch
/// where every event builds one and frees the version it replaces.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ObjectMeta {
    text: Box<str>,
    name: Span,
    generate_name: Option<Span>,
    namespace: Option<Span>,
    uid: Span,
    resource_version: Span,
    generation: Option<i64>,
    creation_timestamp: Option<Span>,
    deletion_timestamp: Option<Span>,
    labels: Labels,
    owner_references: Box<[OwnerSpans]>,
}

/// One `ownerReferences` entry, its strings in the metadata's text buffer
/// (one allocation for every entry instead of four strings each).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct OwnerSpans {
    api_version: Span,
    kind: Span,
    name: Span,
    uid: Span,
    controller: Option<bool>,
    block_owner_deletion: Option<bool>,
}

/// A range of a text buffer.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Span(u32, u32);

impl Span {
    fn of(text: &str, s: Span) -> &str {
        text.get(s.0 as usize..s.1 as usize).unwrap_or_default()
    }
}

/// Appends strings to one buffer, handing out their ranges.
#[derive(Default)]
struct TextBuilder(String);

impl TextBuilder {
    fn push(&mut self, s: &str) -> Span {
        let start = self.0.len();
        self.0.push_str(s);
        // Metadata over 4 GiB cannot be decoded in the first place.
        let at = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Span(at(start), at(self.0.len()))
    }
}

/// Labels as a compact sorted list (cheaper than a map for the handful of
/// labels an object carries, and ordered for canonical output): keys and
/// values in one buffer, `(key start, key end = value start, value end)`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Labels {
    text: Box<str>,
    pairs: Box<[(u32, u32, u32)]>,
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl fmt::Debug for ObjectMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectMeta")
            .field("name", &self.name())
            .field("generate_name", &self.generate_name())
            .field("namespace", &self.namespace())
            .field("uid", &self.uid())
            .field("resource_version", &self.resource_version())
            .field("generation", &self.generation)
            .field("creation_timestamp", &self.creation_timestamp())
            .field("deletion_timestamp", &self.deletion_timestamp())
            .field("labels", &self.labels)
            .field("owner_references", &self.owner_references())
            .finish()
    }
}

/// A reference from an object to its owner (`metadata.ownerReferences[]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// The owner's `apiVersion`.
    #[serde(default)]
    pub api_version: String,
    /// The owner's `kind`.
    #[serde(default)]
    pub kind: String,
    /// The owner's name.
    #[serde(default)]
    pub name: String,
    /// The owner's uid.
    #[serde(default)]
    pub uid: String,
    /// Whether the owner is the managing controller.
    #[serde(default)]
    pub controller: Option<bool>,
    /// Whether deletion of the owner is blocked until this object is gone.
    #[serde(default)]
    pub block_owner_deletion: Option<bool>,
}

impl Labels {
    /// Build from any pairs; later duplicates win, the result is sorted by key.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let map: BTreeMap<String, String> = pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Self::from_sorted(map.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// Build from pairs already sorted by key, without duplicates.
    fn from_sorted<'a>(pairs: impl ExactSizeIterator<Item = (&'a str, &'a str)> + Clone) -> Self {
        let bytes: usize = pairs.clone().map(|(k, v)| k.len() + v.len()).sum();
        let mut text = TextBuilder(String::with_capacity(bytes));
        let mut out = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let key = text.push(k);
            let value = text.push(v);
            out.push((key.0, key.1, value.1));
        }
        Labels {
            text: text.0.into_boxed_str(),
            pairs: out.into_boxed_slice(),
        }
    }

    fn pair(&self, p: &(u32, u32, u32)) -> (&str, &str) {
        (
            Span::of(&self.text, Span(p.0, p.1)),
            Span::of(&self.text, Span(p.1, p.2)),
        )
    }

    /// The value of label `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        let i = self
            .pairs
            .binary_search_by(|p| self.pair(p).0.cmp(key))
            .ok()?;
        self.pairs.get(i).map(|p| self.pair(p).1)
    }

    /// Whether label `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Labels in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|p| self.pair(p))
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether there are no labels.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Heap bytes held.
    fn heap_bytes(&self) -> usize {
        self.text.len() + self.pairs.len() * std::mem::size_of::<(u32, u32, u32)>()
    }
}

impl ObjectMeta {
    /// `metadata.name` (empty when absent).
    pub fn name(&self) -> &str {
        Span::of(&self.text, self.name)
    }
    /// `metadata.generateName`.
    pub fn generate_name(&self) -> Option<&str> {
        self.generate_name.map(|s| Span::of(&self.text, s))
    }
    /// `metadata.namespace`; `None` for cluster-scoped objects (an empty string
    /// from the server is treated as absent, as the API server does).
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.map(|s| Span::of(&self.text, s))
    }
    /// `metadata.uid` (empty when absent).
    pub fn uid(&self) -> &str {
        Span::of(&self.text, self.uid)
    }
    /// `metadata.resourceVersion` (empty when absent). Opaque: compare only for
    /// equality, never order.
    pub fn resource_version(&self) -> &str {
        Span::of(&self.text, self.resource_version)
    }
    /// `metadata.generation`.
    pub fn generation(&self) -> Option<i64> {
        self.generation
    }
    /// `metadata.creationTimestamp` as sent (RFC 3339).
    pub fn creation_timestamp(&self) -> Option<&str> {
        self.creation_timestamp.map(|s| Span::of(&self.text, s))
    }
    /// `metadata.deletionTimestamp` as sent (RFC 3339).
    pub fn deletion_timestamp(&self) -> Option<&str> {
        self.deletion_timestamp.map(|s| Span::of(&self.text, s))
    }
    /// `metadata.labels`.
    pub fn labels(&self) -> &Labels {
        &self.labels
    }
    /// `metadata.ownerReferences` (built on each call: rarely read, so
    /// kept compact).
    pub fn owner_references(&self) -> Vec<OwnerReference> {
        let text = |s: Span| Span::of(&self.text, s).to_owned();
        self.owner_references
            .iter()
            .map(|r| OwnerReference {
                api_version: text(r.api_version),
                kind: text(r.kind),
                name: text(r.name),
                uid: text(r.uid),
                controller: r.controller,
                block_owner_deletion: r.block_owner_deletion,
            })
            .collect()
    }

    /// Heap bytes held (the text buffer, labels and owner references).
    pub(super) fn heap_bytes(&self) -> usize {
        self.text.len()
            + self.labels.heap_bytes()
            + self.owner_references.len() * std::mem::size_of::<OwnerSpans>()
    }
}

/// Parse the metadata value (`{…}` or `null`) found by the scanner: the
/// fields the cache needs are taken from the scan, annotations and
/// managedFields are skipped.
pub(super) fn parse_meta(m: Option<MetaSpan<'_>>) -> Result<ObjectMeta, Error> {
    let Some(m) = m else {
        return Ok(ObjectMeta::default());
    };
    let generation = match m.generation {
        None => None,
        Some(g) => Some(
            std::str::from_utf8(g)
                .ok()
                .and_then(|g| g.parse::<i64>().ok())
                .ok_or_else(|| Error::decode("metadata.generation is not an integer", g))?,
        ),
    };
    let fields = [
        m.name,
        m.generate_name,
        m.namespace,
        m.uid,
        m.resource_version,
        m.creation_timestamp,
        m.deletion_timestamp,
    ];
    let owner_bytes: usize = m
        .owner_references
        .iter()
        .flat_map(|r| [r.api_version, r.kind, r.name, r.uid])
        .flatten()
        .map(|s| s.bytes.len())
        .sum();
    let bytes = fields
        .iter()
        .flatten()
        .map(|s| s.bytes.len())
        .sum::<usize>()
        + owner_bytes;
    let mut text = TextBuilder(String::with_capacity(bytes));
    let mut push = |s: Option<StrSpan<'_>>| -> Result<Option<Span>, Error> {
        match s {
            Some(s) => Ok(Some(text.push(&s.to_cow()?))),
            None => Ok(None),
        }
    };
    // Absent and empty are the same for the optional fields, as on the server.
    let non_empty = |s: Option<Span>| s.filter(|s| s.1 > s.0);
    let name = push(m.name)?.unwrap_or_default();
    let generate_name = non_empty(push(m.generate_name)?);
    let namespace = non_empty(push(m.namespace)?);
    let uid = push(m.uid)?.unwrap_or_default();
    let resource_version = push(m.resource_version)?.unwrap_or_default();
    let creation_timestamp = non_empty(push(m.creation_timestamp)?);
    let deletion_timestamp = non_empty(push(m.deletion_timestamp)?);

    let mut labels = Vec::with_capacity(m.labels.len());
    for (k, v) in m.labels {
        labels.push((k.to_cow()?, v.to_cow()?));
    }
    // Sorted for binary search (servers send them sorted, which the sort
    // checks first); of duplicate keys the last one wins, as in a JSON
    // decoder (stable sort, then each later duplicate replaces the kept one).
    crate::rt::sort::sort_by(&mut labels, |a, b| a.0.cmp(&b.0));
    labels.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            std::mem::swap(later, kept);
        }
        same
    });
    let labels = Labels::from_sorted(labels.iter().map(|(k, v)| (k.as_ref(), v.as_ref())));

    let mut owner_references = Vec::with_capacity(m.owner_references.len());
    for r in m.owner_references {
        owner_references.push(OwnerSpans {
            api_version: push(r.api_version)?.unwrap_or_default(),
            kind: push(r.kind)?.unwrap_or_default(),
            name: push(r.name)?.unwrap_or_default(),
            uid: push(r.uid)?.unwrap_or_default(),
            controller: r.controller,
            block_owner_deletion: r.block_owner_deletion,
        });
    }
    Ok(ObjectMeta {
        text: text.0.into_boxed_str(),
        name,
        generate_name,
        namespace,
        uid,
        resource_version,
        generation,
        creation_timestamp,
        deletion_timestamp,
        labels,
        owner_references: owner_references.into_boxed_slice(),
    })
}

/// An `apiVersion` or `kind`: nearly every object of a collection has the
/// same, so the last few seen are shared instead of allocated per object.
pub(super) fn interned(s: Option<StrSpan<'_>>) -> Result<Rc<str>, Error> {
    thread_local! {
        static SEEN: RefCell<Vec<Rc<str>>> = const { RefCell::new(Vec::new()) };
        static NEXT: Cell<usize> = const { Cell::new(0) };
    }
    const KEEP: usize = 16;
    // Real ones are short; a long one is not kept (a server could send any).
    const LONGEST: usize = 128;
    let text = match s {
        Some(s) => s.to_cow()?,
        None => Cow::Borrowed(""),
    };
    if text.len() > LONGEST {
        return Ok(Rc::from(text.as_ref()));
    }
    Ok(SEEN.with(|seen| {
        let Ok(mut seen) = seen.try_borrow_mut() else {
            return Rc::from(text.as_ref());
        };
        if let Some(hit) = seen.iter().find(|n| n.as_ref() == text.as_ref()) {
            return hit.clone();
        }
        let name: Rc<str> = Rc::from(text.as_ref());
        if seen.len() < KEEP {
            seen.push(name.clone());
        } else {
            // Replaced in turn: bounded whatever a server sends.
            let i = NEXT.with(|n| n.replace((n.get() + 1) % KEEP));
            if let Some(slot) = seen.get_mut(i) {
                *slot = name.clone();
            }
        }
        name
    }))
}
