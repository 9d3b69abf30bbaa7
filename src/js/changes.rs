//! Coalescing cache changes into one diff per frame.
//!
//! A dashboard must not re-render per watch event. The informer records each
//! key's change here as the cache applies it; at most once per frame the accumulated changes become one
//! diff `{ added, updated, removed, version }`. Per key, only the net effect
//! across the frame is reported: added-then-deleted disappears, deleted-then-
//! added is an update, and so on.

use crate::rt::fx::FxHashMap;

/// The kind of one change as the informer reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// The key appeared.
    Add,
    /// The key's object changed.
    Update,
    /// The key disappeared.
    Delete,
}

/// The net effect of a frame's changes to one key.
#[derive(Clone, Copy, Debug)]
struct NetChange {
    /// When the key was first touched since the last flush: the diff's order.
    seq: u32,
    existed_before: bool,
    exists_now: bool,
}

/// One coalesced diff.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    /// Keys that did not exist at the previous diff and exist now.
    pub added: Vec<String>,
    /// Keys that existed before and still exist, with a different object.
    pub updated: Vec<String>,
    /// Keys that existed before and are gone.
    pub removed: Vec<String>,
    /// Increments with every non-empty diff.
    pub version: u64,
}

impl Diff {
    /// Whether the diff reports nothing.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.updated.is_empty() && self.removed.is_empty()
    }
}

/// Accumulates changes between flushes. O(1) per change; the flush is
/// O(changed keys), never O(cache size).
#[derive(Default)]
pub struct ChangeSet {
    pending: FxHashMap<String, NetChange>,
    version: u64,
}

impl ChangeSet {
    /// Record one change. Returns true if this is the first change since the
    /// last flush (the caller schedules a flush then).
    pub fn record(&mut self, key: &str, kind: ChangeKind) -> bool {
        let first = self.pending.is_empty();
        let exists_now = kind != ChangeKind::Delete;
        match self.pending.get_mut(key) {
            Some(c) => c.exists_now = exists_now,
            None => {
                let existed_before = kind != ChangeKind::Add;
                // Keys in a flood are distinct mostly: one copy each.
                let seq = u32::try_from(self.pending.len()).unwrap_or(u32::MAX);
                self.pending.insert(
                    key.to_owned(),
                    NetChange {
                        seq,
                        existed_before,
                        exists_now,
                    },
                );
            }
        }
        first
    }

    /// Whether `key` appeared since the last flush (subscribers have not
    /// been told of it yet).
    pub fn is_new(&self, key: &str) -> bool {
        self.pending
            .get(key)
            .is_some_and(|c| !c.existed_before && c.exists_now)
    }

    /// Every key changed since the last flush.
    pub fn pending_keys(&self) -> impl Iterator<Item = &str> {
        self.pending.keys().map(String::as_str)
    }

    /// Whether any key appeared since the last flush.
    pub fn any_new(&self) -> bool {
        self.pending
            .values()
            .any(|c| !c.existed_before && c.exists_now)
    }

    /// The current version (of the last non-empty diff).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Take the net diff of everything recorded since the last flush, in the
    /// order keys were first touched; the keys whose changes cancelled out
    /// (added, then deleted), which no diff names, go to `cancelled`.
    pub fn flush(&mut self, cancelled: &mut Vec<String>) -> Diff {
        let mut diff = Diff::default();
        let mut touched: Vec<(String, NetChange)> = self.pending.drain().collect();
        crate::rt::sort::sort_by(&mut touched, |a, b| a.1.seq.cmp(&b.1.seq));
        for (key, c) in touched {
            match (c.existed_before, c.exists_now) {
                (false, true) => diff.added.push(key),
                (true, true) => diff.updated.push(key),
                (true, false) => diff.removed.push(key),
                (false, false) => cancelled.push(key),
            }
        }
        if !diff.is_empty() {
            self.version += 1;
        }
        diff.version = self.version;
        diff
    }
}
