//! The store's object table: objects in slots addressed by `u32` ids.
//!
//! Index buckets hold slot ids instead of key strings: an id hashes in one
//! multiply, costs 4 bytes per bucket member, and needs no reference-count
//! traffic, and a key string is stored once however many indexes file the
//! object. Freed ids are reused, so the table stays as large as the peak
//! number of objects, not the number ever written.

use std::rc::Rc;

use crate::rest::KubeObject;
use crate::rt::fx::FxHashMap;

/// One stored object and its key.
pub(crate) struct Slot {
    /// The object's key, shared with the key map.
    pub(crate) key: Rc<str>,
    /// The stored object.
    pub(crate) obj: KubeObject,
}

/// Key → slot id, plus the slots themselves.
#[derive(Default)]
pub(crate) struct Slots {
    ids: FxHashMap<Rc<str>, u32>,
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
}

/// The table already holds `u32::MAX` slots; no id is left to hand out.
#[derive(Debug)]
pub(crate) struct Full;

impl Slots {
    /// Number of stored objects.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Number of ids handed out so far (live or free): per-slot side tables
    /// size themselves by this.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The id stored under `key`.
    pub(crate) fn id(&self, key: &str) -> Option<u32> {
        self.ids.get(key).copied()
    }

    /// The slot with id `id`, if it is live.
    pub(crate) fn get(&self, id: u32) -> Option<&Slot> {
        self.slots.get(id as usize).and_then(Option::as_ref)
    }

    /// The object under `key`.
    pub(crate) fn get_by_key(&self, key: &str) -> Option<&Slot> {
        self.id(key).and_then(|id| self.get(id))
    }

    /// The id for `key`, allocating a slot that holds `obj` if the key is
    /// new (`true` in the result). An existing slot is left unchanged: the
    /// caller replaces its object with [`set_obj`](Slots::set_obj) once the
    /// indexes are updated.
    pub(crate) fn insert_key(&mut self, key: &str, obj: &KubeObject) -> Result<(u32, bool), Full> {
        if let Some(&id) = self.ids.get(key) {
            return Ok((id, false));
        }
        let key: Rc<str> = Rc::from(key);
        let slot = Slot {
            key: key.clone(),
            obj: obj.clone(),
        };
        let id = match self.free.pop() {
            Some(id) => {
                if let Some(entry) = self.slots.get_mut(id as usize) {
                    *entry = Some(slot);
                }
                id
            }
            None => {
                let id = u32::try_from(self.slots.len()).map_err(|_| Full)?;
                self.slots.push(Some(slot));
                id
            }
        };
        self.ids.insert(key, id);
        Ok((id, true))
    }

    /// Replace the object in live slot `id`, returning the one it held.
    pub(crate) fn set_obj(&mut self, id: u32, obj: KubeObject) -> Option<KubeObject> {
        match self.slots.get_mut(id as usize) {
            Some(Some(slot)) => Some(std::mem::replace(&mut slot.obj, obj)),
            _ => None,
        }
    }

    /// Free the slot under `key`, returning its id and object.
    pub(crate) fn remove(&mut self, key: &str) -> Option<(u32, KubeObject)> {
        let id = self.ids.remove(key)?;
        let slot = self.slots.get_mut(id as usize).and_then(Option::take)?;
        self.free.push(id);
        Some((id, slot.obj))
    }

    /// Reserve room for `n` more objects.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.ids.reserve(n);
        self.slots.reserve(n);
    }

    /// Live slots with their ids, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &Slot)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i as u32, s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn o(name: &str) -> KubeObject {
        KubeObject::from_value(&json!({"metadata": {"name": name}})).unwrap()
    }

    #[test]
    fn freed_ids_are_reused_and_live_ids_stay_put() {
        let mut s = Slots::default();
        let (a, new_a) = s.insert_key("a", &o("a")).unwrap();
        let (b, _) = s.insert_key("b", &o("b")).unwrap();
        assert!(new_a);
        assert_eq!(s.insert_key("a", &o("a2")).unwrap(), (a, false));
        assert_eq!(s.remove("a").map(|(id, _)| id), Some(a));
        assert!(s.get(a).is_none());
        assert!(s.remove("a").is_none());
        let (c, new_c) = s.insert_key("c", &o("c")).unwrap();
        assert!(new_c);
        assert_eq!(c, a, "the freed id is handed out again");
        assert_eq!(s.capacity(), 2);
        assert_eq!(s.get_by_key("b").map(|s| s.obj.name()), Some("b"));
        assert_eq!(s.id("b"), Some(b));
        assert_eq!(s.get_by_key("c").map(|s| &*s.key), Some("c"));
        assert_eq!(s.len(), 2);
        let ids: Vec<u32> = s.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, vec![a, b]);
    }
}
