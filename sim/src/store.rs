//! The object store: every object of every resource under one global
//! resourceVersion, plus the watch history.
//!
//! Objects are kept as their serialized JSON (shared, never copied, by gets,
//! lists and every watcher) beside a small [`Meta`] (name, namespace, labels,
//! the values of the resource's field labels), so selectors never re-parse
//! JSON. Writes parse the current object when they need it.
//!
//! Each history [`Event`] keeps the object before the write too. That gives
//! two things the API server has and a naive sim lacks: the state at any
//! resourceVersion still inside the history window (exact lists and continue
//! tokens after later writes, see list.rs), and selector-aware watch events
//! (an object that stops matching a watch's selector arrives as DELETED, one
//! that starts matching as ADDED).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::clock::{now_secs, rfc3339};
use crate::resources::{Resource, RESOURCES};
use crate::selectors::{FieldSelector, LabelSelector, Labels};
use crate::status::ApiError;

/// (namespace, name); namespace is "" for cluster-scoped objects.
pub type Key = (String, String);

/// What selectors look at, extracted once per write.
#[derive(Debug, Default)]
pub struct Meta {
    /// metadata.namespace ("" when cluster-scoped).
    pub namespace: String,
    /// metadata.name.
    pub name: String,
    /// metadata.labels.
    pub labels: Labels,
    /// Values of the resource's extra field labels.
    pub fields: Vec<(&'static str, String)>,
}

impl Meta {
    fn extract(r: &Resource, v: &Value) -> Meta {
        let text = |p: &str| {
            v.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let labels = v
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let fields = r
            .fields
            .iter()
            .map(|f| {
                let ptr = format!("/{}", f.replace('.', "/"));
                let value = match v.pointer(&ptr) {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => String::new(),
                    Some(Value::Object(o)) if *f == "source" => o
                        .get("component")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    Some(other) => other.to_string(),
                };
                (*f, value)
            })
            .collect();
        Meta {
            namespace: text("/metadata/namespace"),
            name: text("/metadata/name"),
            labels,
            fields,
        }
    }

    /// The value of a field label, if the resource has it.
    pub fn field(&self, label: &str) -> Option<&str> {
        match label {
            "metadata.name" => Some(&self.name),
            "metadata.namespace" => Some(&self.namespace),
            _ => self
                .fields
                .iter()
                .find(|(f, _)| *f == label)
                .map(|(_, v)| v.as_str()),
        }
    }
}

/// One version of a stored object.
#[derive(Clone, Debug)]
pub struct Obj {
    /// The serialized object, shared.
    pub bytes: Arc<[u8]>,
    /// What selectors need.
    pub meta: Arc<Meta>,
    /// Its resourceVersion.
    pub rv: u64,
}

impl Obj {
    /// Serialize a value as a stored object of resource `res`.
    pub fn new(res: usize, v: &Value, rv: u64) -> Obj {
        let meta = RESOURCES
            .get(res)
            .map(|r| Meta::extract(r, v))
            .unwrap_or_default();
        Obj {
            bytes: serde_json::to_vec(v).unwrap_or_default().into(),
            meta: Arc::new(meta),
            rv,
        }
    }

    /// The object parsed (writes only; reads share the bytes).
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }

    /// Its (namespace, name).
    pub fn key(&self) -> Key {
        (self.meta.namespace.clone(), self.meta.name.clone())
    }
}

/// Watch event types stored in the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Removed (the object carries the deletion's resourceVersion).
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One write, as every watcher will see it.
#[derive(Clone, Debug)]
pub struct Event {
    /// The resourceVersion of the write.
    pub rv: u64,
    /// Resource index.
    pub res: usize,
    /// What happened.
    pub kind: EventType,
    /// The object after the write (for a delete: the last state, new RV).
    pub obj: Obj,
    /// The object before the write (None for a create).
    pub prev: Option<Obj>,
}

/// Which objects a list or watch wants.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Resource index.
    pub res: usize,
    /// Restrict to a namespace.
    pub namespace: Option<String>,
    /// Label selector.
    pub labels: LabelSelector,
    /// Field selector.
    pub fields: FieldSelector,
}

impl Filter {
    /// Everything of one resource.
    #[cfg(test)]
    pub fn all(res: usize) -> Filter {
        Filter {
            res,
            ..Filter::default()
        }
    }

    /// Whether an object passes.
    pub fn matches(&self, meta: &Meta) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|n| n == meta.namespace)
            && self.labels.matches(&meta.labels)
            && self.fields.matches(|f| meta.field(f))
    }

    /// An event as this watcher must see it (selector transitions become
    /// ADDED / DELETED), or None when it does not concern it.
    pub fn view(&self, e: &Event) -> Option<EventType> {
        if e.res != self.res {
            return None;
        }
        let now = self.matches(&e.obj.meta);
        match e.kind {
            EventType::Modified => {
                let before = e.prev.as_ref().is_some_and(|p| self.matches(&p.meta));
                match (before, now) {
                    (true, true) => Some(EventType::Modified),
                    (false, true) => Some(EventType::Added),
                    (true, false) => Some(EventType::Deleted),
                    (false, false) => None,
                }
            }
            kind => now.then_some(kind),
        }
    }
}

/// Watch replay: what a watcher at some RV gets next.
#[derive(Debug)]
pub enum Since {
    /// Events to send (already filtered) and the RV scanned up to.
    Events(Vec<(EventType, Obj)>, u64),
    /// The RV is older than the history: 410.
    Expired(u64),
}

/// The store.
pub struct Store {
    /// The global resourceVersion: the RV of the last write.
    pub rv: u64,
    pub(crate) objects: Vec<BTreeMap<Key, Obj>>,
    pub(crate) history: VecDeque<Event>,
    pub(crate) history_cap: usize,
    /// Watches and exact lists need RV ≥ this (older → 410).
    pub oldest_rv: u64,
    pub(crate) snapshots: VecDeque<crate::list::Snapshot>,
    pub(crate) next_snapshot: u64,
    /// Continue tokens of snapshots below this id were issued before a compaction.
    pub(crate) first_valid_snapshot: u64,
    uid_counter: u64,
    /// Source of creation timestamps (tests pin it).
    pub clock: fn() -> u64,
    /// Serve `resourceVersion=0` lists whole, ignoring `limit`, as the API
    /// server's watch cache has long done: a client's first list of a big
    /// collection then arrives as one response.
    pub rv0_ignores_limit: bool,
}

/// A delete's preconditions against the object, as the API server checks
/// them (a dry run too): a resourceVersion that moved is the usual 409, a
/// uid that differs a 409 saying both.
pub fn check_preconditions(
    r: &Resource,
    name: &str,
    old: &Obj,
    rv: Option<&str>,
    uid: Option<&str>,
) -> Result<(), ApiError> {
    if rv.is_some_and(|p| !p.is_empty() && p != old.rv.to_string()) {
        return Err(conflict(r, name));
    }
    if let Some(want) = uid.filter(|u| !u.is_empty()) {
        let have = old.value()["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if want != have {
            return Err(ApiError::new(
                409,
                "Conflict",
                format!(
                    "Precondition failed: UID in precondition: {want}, UID in object meta: {have}"
                ),
            )
            .with_details(r.group, r.plural, name));
        }
    }
    Ok(())
}

fn conflict(r: &Resource, name: &str) -> ApiError {
    let qualified = if r.group.is_empty() {
        r.plural.to_string()
    } else {
        format!("{}.{}", r.plural, r.group)
    };
    ApiError::new(
        409,
        "Conflict",
        format!("Operation cannot be fulfilled on {qualified} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"),
    )
    .with_details(r.group, r.plural, name)
}

fn res_of(res: usize) -> Result<&'static Resource, ApiError> {
    RESOURCES
        .get(res)
        .ok_or_else(|| ApiError::new(404, "NotFound", "no such resource"))
}

impl Store {
    /// An empty store keeping `history_cap` events.
    pub fn new(history_cap: usize) -> Store {
        Store {
            rv: 1,
            objects: RESOURCES.iter().map(|_| BTreeMap::new()).collect(),
            history: VecDeque::new(),
            history_cap: history_cap.max(1),
            oldest_rv: 1,
            snapshots: VecDeque::new(),
            next_snapshot: 1,
            first_valid_snapshot: 1,
            uid_counter: 0,
            clock: now_secs,
            rv0_ignores_limit: false,
        }
    }

    /// One object.
    pub fn get(&self, res: usize, ns: &str, name: &str) -> Option<&Obj> {
        self.objects
            .get(res)?
            .get(&(ns.to_string(), name.to_string()))
    }

    /// All objects of a resource, in key order.
    pub fn iter(&self, res: usize) -> impl Iterator<Item = (&Key, &Obj)> {
        self.objects.get(res).into_iter().flatten()
    }

    /// How many objects a resource has.
    pub fn count(&self, res: usize) -> usize {
        self.objects.get(res).map_or(0, BTreeMap::len)
    }

    /// The first key ≥ `from` (wrapping to the first key): a cheap,
    /// deterministic "random" pick for churn.
    pub fn key_at_or_after(&self, res: usize, from: &Key) -> Option<Key> {
        let map = self.objects.get(res)?;
        map.range(from.clone()..)
            .next()
            .or_else(|| map.iter().next())
            .map(|(k, _)| k.clone())
    }

    /// Events kept in the history.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    fn next_uid(&mut self) -> String {
        self.uid_counter += 1;
        let n = self.uid_counter;
        let h = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            h >> 32,
            (h >> 16) & 0xffff,
            h & 0xfff,
            (n >> 12) & 0xfff,
            n & 0xffff_ffff_ffff
        )
    }

    fn record(&mut self, res: usize, kind: EventType, obj: Obj, prev: Option<Obj>) {
        self.history.push_back(Event {
            rv: self.rv,
            res,
            kind,
            obj,
            prev,
        });
        while self.history.len() > self.history_cap {
            if let Some(e) = self.history.pop_front() {
                self.oldest_rv = e.rv;
            }
        }
    }

    /// Create an object; the server fills uid, resourceVersion, generation
    /// and (when absent) creationTimestamp. `ns` is the request's namespace.
    pub fn create(&mut self, res: usize, ns: Option<&str>, mut v: Value) -> Result<Obj, ApiError> {
        let r = res_of(res)?;
        let Some(map) = v.as_object_mut() else {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        };
        let meta = map
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            return Err(ApiError::bad_request("metadata must be an object"));
        }
        let mut name = meta["name"].as_str().unwrap_or("").to_string();
        if name.is_empty() {
            if let Some(prefix) = meta["generateName"].as_str() {
                let n = self
                    .uid_counter
                    .wrapping_add(1)
                    .wrapping_mul(0x2545_F491_4F6C_DD1D);
                let suffix: String = (0..5)
                    .map(|i| {
                        char::from(b"bcdfghjklmnpqrstvwxz2456789"[((n >> (i * 5)) % 27) as usize])
                    })
                    .collect();
                name = format!("{prefix}{suffix}");
            }
        }
        if name.is_empty() {
            return Err(ApiError::new(422, "Invalid", format!("{} \"\" is invalid: metadata.name: Required value: name or generateName is required", r.kind)));
        }
        let namespace = if r.namespaced {
            ns.or_else(|| meta["namespace"].as_str())
                .filter(|s| !s.is_empty())
                .unwrap_or("default")
                .to_string()
        } else {
            String::new()
        };
        let key = (namespace.clone(), name.clone());
        if self.objects.get(res).is_some_and(|m| m.contains_key(&key)) {
            return Err(ApiError::new(
                409,
                "AlreadyExists",
                format!("{} \"{name}\" already exists", r.plural),
            )
            .with_details(r.group, r.plural, &name));
        }
        self.rv += 1;
        let uid = self.next_uid();
        let created = rfc3339((self.clock)());
        map.insert("apiVersion".into(), json!(r.api_version()));
        map.insert("kind".into(), json!(r.kind));
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("name".into(), json!(name));
            if r.namespaced {
                meta.insert("namespace".into(), json!(namespace));
            } else {
                meta.remove("namespace");
            }
            meta.insert("uid".into(), json!(uid));
            meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
            meta.insert("generation".into(), json!(1));
            if meta
                .get("creationTimestamp")
                .and_then(Value::as_str)
                .is_none()
            {
                meta.insert("creationTimestamp".into(), json!(created));
            }
        }
        let obj = Obj::new(res, &v, self.rv);
        if let Some(m) = self.objects.get_mut(res) {
            m.insert(key, obj.clone());
        }
        self.record(res, EventType::Added, obj.clone(), None);
        Ok(obj)
    }

    /// Replace an object. A non-empty `metadata.resourceVersion` in the body
    /// is a precondition (stale → 409 Conflict). Identity fields are kept;
    /// generation is bumped when `spec` changes.
    pub fn update(
        &mut self,
        res: usize,
        ns: &str,
        name: &str,
        mut v: Value,
    ) -> Result<Obj, ApiError> {
        let r = res_of(res)?;
        let Some(old) = self.get(res, ns, name).cloned() else {
            return Err(ApiError::not_found(r.group, r.plural, name));
        };
        if !v.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        if !v["metadata"].is_object() {
            v["metadata"] = json!({});
        }
        let given = v["metadata"]["resourceVersion"].as_str().unwrap_or("");
        if !given.is_empty() && given != old.rv.to_string() {
            return Err(conflict(r, name));
        }
        if let Some(body_name) = v["metadata"]["name"].as_str() {
            if !body_name.is_empty() && body_name != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({body_name}) does not match the name on the URL ({name})"
                )));
            }
        }
        let old_v = old.value();
        self.rv += 1;
        v["apiVersion"] = json!(r.api_version());
        v["kind"] = json!(r.kind);
        for f in ["uid", "creationTimestamp", "name", "namespace"] {
            match old_v["metadata"].get(f) {
                Some(x) => v["metadata"][f] = x.clone(),
                None => {
                    if let Some(m) = v["metadata"].as_object_mut() {
                        m.remove(f);
                    }
                }
            }
        }
        let generation = old_v["metadata"]["generation"].as_i64().unwrap_or(1);
        let bump = i64::from(old_v.get("spec") != v.get("spec"));
        v["metadata"]["generation"] = json!(generation + bump);
        v["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let obj = Obj::new(res, &v, self.rv);
        if let Some(m) = self.objects.get_mut(res) {
            m.insert((ns.to_string(), name.to_string()), obj.clone());
        }
        self.record(res, EventType::Modified, obj.clone(), Some(old));
        Ok(obj)
    }

    /// Delete an object; returns its last state carrying the deletion's RV.
    /// `precondition` is an optional resourceVersion that must match.
    pub fn delete(
        &mut self,
        res: usize,
        ns: &str,
        name: &str,
        precondition: Option<&str>,
        uid: Option<&str>,
    ) -> Result<Obj, ApiError> {
        let r = res_of(res)?;
        let key = (ns.to_string(), name.to_string());
        let Some(old) = self.objects.get(res).and_then(|m| m.get(&key)).cloned() else {
            return Err(ApiError::not_found(r.group, r.plural, name));
        };
        check_preconditions(r, name, &old, precondition, uid)?;
        if let Some(m) = self.objects.get_mut(res) {
            m.remove(&key);
        }
        self.rv += 1;
        let mut v = old.value();
        v["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let obj = Obj::new(res, &v, self.rv);
        self.record(res, EventType::Deleted, obj.clone(), Some(old));
        Ok(obj)
    }

    /// Bump an object's resourceVersion without re-serializing it (floods):
    /// the new RV is spliced into the stored bytes.
    pub fn touch(&mut self, res: usize, key: &Key) -> bool {
        let Some(old) = self.objects.get(res).and_then(|m| m.get(key)).cloned() else {
            return false;
        };
        let needle = format!("\"resourceVersion\":\"{}\"", old.rv);
        let Some(at) = memchr::memmem::find(&old.bytes, needle.as_bytes()) else {
            return false;
        };
        self.rv += 1;
        let replacement = format!("\"resourceVersion\":\"{}\"", self.rv);
        let mut b = Vec::with_capacity(old.bytes.len() + 4);
        b.extend_from_slice(old.bytes.get(..at).unwrap_or_default());
        b.extend_from_slice(replacement.as_bytes());
        b.extend_from_slice(old.bytes.get(at + needle.len()..).unwrap_or_default());
        let obj = Obj {
            bytes: b.into(),
            meta: old.meta.clone(),
            rv: self.rv,
        };
        if let Some(m) = self.objects.get_mut(res) {
            m.insert(key.clone(), obj.clone());
        }
        self.record(res, EventType::Modified, obj, Some(old));
        true
    }

    /// Forget all history: watches and exact lists from any older RV, and
    /// every continue token issued so far, now get 410 Expired.
    pub fn compact(&mut self) {
        self.history.clear();
        self.oldest_rv = self.rv;
        self.snapshots.clear();
        self.first_valid_snapshot = self.next_snapshot;
    }

    /// What a watcher that has seen everything up to `from` gets next
    /// (at most `max_scan` history entries are looked at).
    pub fn events_after(&self, from: u64, filter: &Filter, max_scan: usize) -> Since {
        if from < self.oldest_rv {
            return Since::Expired(self.oldest_rv);
        }
        let start = self.history.partition_point(|e| e.rv <= from);
        let mut last = from;
        let mut out = Vec::new();
        for e in self.history.range(start..).take(max_scan) {
            if let Some(kind) = filter.view(e) {
                out.push((kind, e.obj.clone()));
            }
            last = e.rv;
        }
        Since::Events(out, last)
    }

    /// The objects of `filter.res` matching `filter` as they were at `rv`
    /// (in key order), rebuilt from the history. Err when `rv` is outside it.
    pub fn items_at(&self, rv: u64, filter: &Filter) -> Result<Vec<Obj>, ApiError> {
        if rv > self.rv {
            return Err(too_large(rv, self.rv));
        }
        if rv < self.oldest_rv {
            return Err(ApiError::expired(format!(
                "The resourceVersion for the provided list is too old: {rv} (oldest kept: {})",
                self.oldest_rv
            )));
        }
        // State at rv of every key written since: the `prev` of its first later event.
        let start = self.history.partition_point(|e| e.rv <= rv);
        let mut changed: BTreeMap<Key, Option<Obj>> = BTreeMap::new();
        for e in self
            .history
            .range(start..)
            .rev()
            .filter(|e| e.res == filter.res)
        {
            changed.insert(e.obj.key(), e.prev.clone());
        }
        let mut out: Vec<Obj> = self
            .iter(filter.res)
            .filter(|(k, _)| !changed.contains_key(*k))
            .map(|(_, o)| o)
            .chain(changed.values().flatten())
            .filter(|o| filter.matches(&o.meta))
            .cloned()
            .collect();
        if !changed.is_empty() {
            out.sort_by(|a, b| {
                (&a.meta.namespace, &a.meta.name).cmp(&(&b.meta.namespace, &b.meta.name))
            });
        }
        Ok(out)
    }
}

/// The API server's answer to an RV from the future.
pub fn too_large(rv: u64, current: u64) -> ApiError {
    let mut e = ApiError::new(
        504,
        "Timeout",
        format!("Too large resource version: {rv}, current: {current}"),
    );
    e.details = json!({"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1});
    e
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::resources::ids::{CONFIGMAPS, PODS};

    pub(crate) fn store() -> Store {
        let mut s = Store::new(1000);
        s.clock = || 1_767_225_600;
        s
    }

    pub(crate) fn cm(name: &str, labels: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
    }

    #[test]
    fn create_fills_server_fields_and_bumps_the_global_rv() {
        let mut s = store();
        let a = s
            .create(CONFIGMAPS, Some("ns1"), cm("a", json!({})))
            .unwrap();
        let b = s
            .create(PODS, Some("ns1"), json!({"metadata": {"name": "p"}}))
            .unwrap();
        assert_eq!(
            (a.rv, b.rv, s.rv),
            (2, 3, 3),
            "one counter across resources"
        );
        let v = a.value();
        assert_eq!(v["kind"], "ConfigMap");
        assert_eq!(v["apiVersion"], "v1");
        assert_eq!(v["metadata"]["namespace"], "ns1");
        assert_eq!(v["metadata"]["resourceVersion"], "2");
        assert_eq!(v["metadata"]["generation"], 1);
        assert_eq!(v["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
        assert_ne!(v["metadata"]["uid"], b.value()["metadata"]["uid"]);
        let err = s
            .create(CONFIGMAPS, Some("ns1"), cm("a", json!({})))
            .unwrap_err();
        assert_eq!((err.code, err.reason), (409, "AlreadyExists"));
        let err = s.create(CONFIGMAPS, Some("ns1"), json!([1])).unwrap_err();
        assert_eq!(err.code, 400);
        let g = s
            .create(
                CONFIGMAPS,
                Some("ns1"),
                json!({"metadata": {"generateName": "gen-"}}),
            )
            .unwrap();
        assert!(g.meta.name.starts_with("gen-") && g.meta.name.len() == 9);
    }

    #[test]
    fn update_preconditions_generation_and_404() {
        let mut s = store();
        s.create(
            CONFIGMAPS,
            Some("ns"),
            json!({"metadata": {"name": "a"}, "spec": {"x": 1}}),
        )
        .unwrap();
        let stale = json!({"metadata": {"name": "a", "resourceVersion": "1"}, "spec": {"x": 2}});
        let err = s.update(CONFIGMAPS, "ns", "a", stale).unwrap_err();
        assert_eq!((err.code, err.reason), (409, "Conflict"));
        let fresh = json!({"metadata": {"name": "a", "resourceVersion": "2"}, "spec": {"x": 2}});
        let o = s.update(CONFIGMAPS, "ns", "a", fresh).unwrap();
        assert_eq!(o.value()["metadata"]["generation"], 2, "spec changed");
        let o = s
            .update(
                CONFIGMAPS,
                "ns",
                "a",
                json!({"metadata": {}, "spec": {"x": 2}, "status": {"y": 1}}),
            )
            .unwrap();
        let v = o.value();
        assert_eq!(v["metadata"]["generation"], 2, "status only: no bump");
        assert_eq!(v["metadata"]["name"], "a", "identity kept");
        assert_eq!(v["metadata"]["resourceVersion"], o.rv.to_string());
        let err = s.update(CONFIGMAPS, "ns", "zz", json!({})).unwrap_err();
        assert_eq!(err.code, 404);
    }

    #[test]
    fn delete_returns_the_object_at_the_deletion_rv() {
        let mut s = store();
        s.create(CONFIGMAPS, Some("ns"), cm("a", json!({})))
            .unwrap();
        let d = s.delete(CONFIGMAPS, "ns", "a", None, None).unwrap();
        assert_eq!(d.rv, s.rv);
        assert_eq!(d.value()["metadata"]["resourceVersion"], s.rv.to_string());
        assert_eq!(s.count(CONFIGMAPS), 0);
        assert_eq!(
            s.delete(CONFIGMAPS, "ns", "a", None, None)
                .unwrap_err()
                .code,
            404
        );
    }

    #[test]
    fn touch_splices_the_new_rv_into_the_shared_bytes() {
        let mut s = store();
        s.create(CONFIGMAPS, Some("ns"), cm("a", json!({"app": "x"})))
            .unwrap();
        assert!(s.touch(CONFIGMAPS, &("ns".into(), "a".into())));
        let o = s.get(CONFIGMAPS, "ns", "a").unwrap();
        assert_eq!(o.rv, 3);
        assert_eq!(o.value()["metadata"]["resourceVersion"], "3");
        assert_eq!(o.meta.labels.get("app").map(String::as_str), Some("x"));
        assert!(!s.touch(CONFIGMAPS, &("ns".into(), "missing".into())));
    }

    #[test]
    fn watch_replay_from_history_in_order() {
        let mut s = store();
        let start = s.rv;
        s.create(CONFIGMAPS, Some("ns"), cm("a", json!({})))
            .unwrap();
        s.create(PODS, Some("ns"), json!({"metadata": {"name": "p"}}))
            .unwrap();
        s.update(CONFIGMAPS, "ns", "a", cm("a", json!({"x": "1"})))
            .unwrap();
        s.delete(CONFIGMAPS, "ns", "a", None, None).unwrap();
        let Since::Events(evs, last) = s.events_after(start, &Filter::all(CONFIGMAPS), 100) else {
            panic!("expired")
        };
        let kinds: Vec<_> = evs.iter().map(|(k, o)| (k.as_str(), o.rv)).collect();
        assert_eq!(kinds, [("ADDED", 2), ("MODIFIED", 4), ("DELETED", 5)]);
        assert_eq!(last, s.rv, "scanned past other resources' events too");
        let Since::Events(evs, _) = s.events_after(4, &Filter::all(CONFIGMAPS), 100) else {
            panic!("expired")
        };
        assert_eq!(evs.len(), 1, "only events after the RV");
    }

    #[test]
    fn watch_from_a_compacted_rv_is_expired() {
        let mut s = store();
        let start = s.rv;
        s.create(CONFIGMAPS, Some("ns"), cm("a", json!({})))
            .unwrap();
        s.compact();
        assert!(matches!(
            s.events_after(start, &Filter::all(CONFIGMAPS), 10),
            Since::Expired(_)
        ));
        assert!(
            matches!(s.events_after(s.rv, &Filter::all(CONFIGMAPS), 10), Since::Events(ref e, _) if e.is_empty())
        );
        // History overflow compacts too.
        let mut s = Store::new(2);
        for i in 0..5 {
            s.create(CONFIGMAPS, Some("ns"), cm(&format!("c{i}"), json!({})))
                .unwrap();
        }
        assert_eq!(s.history_len(), 2);
        assert!(matches!(
            s.events_after(2, &Filter::all(CONFIGMAPS), 10),
            Since::Expired(_)
        ));
        assert!(
            matches!(s.events_after(4, &Filter::all(CONFIGMAPS), 10), Since::Events(ref e, _) if e.len() == 2)
        );
    }

    #[test]
    fn selector_transitions_become_added_and_deleted() {
        let mut s = store();
        let start = s.rv;
        s.create(CONFIGMAPS, Some("ns"), cm("a", json!({"app": "web"})))
            .unwrap();
        s.update(CONFIGMAPS, "ns", "a", cm("a", json!({"app": "api"})))
            .unwrap();
        s.update(CONFIGMAPS, "ns", "a", cm("a", json!({"app": "web"})))
            .unwrap();
        s.update(
            CONFIGMAPS,
            "ns",
            "a",
            cm("a", json!({"app": "web", "v": "2"})),
        )
        .unwrap();
        let f = Filter {
            labels: LabelSelector::parse("app=web").unwrap(),
            ..Filter::all(CONFIGMAPS)
        };
        let Since::Events(evs, _) = s.events_after(start, &f, 100) else {
            panic!()
        };
        let kinds: Vec<_> = evs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kinds, ["ADDED", "DELETED", "ADDED", "MODIFIED"]);
    }

    #[test]
    fn items_at_rebuilds_past_states() {
        let mut s = store();
        s.create(CONFIGMAPS, Some("ns"), cm("a", json!({})))
            .unwrap();
        s.create(CONFIGMAPS, Some("ns"), cm("b", json!({})))
            .unwrap();
        let at = s.rv;
        s.update(CONFIGMAPS, "ns", "a", cm("a", json!({"x": "1"})))
            .unwrap();
        s.delete(CONFIGMAPS, "ns", "b", None, None).unwrap();
        s.create(CONFIGMAPS, Some("ns"), cm("c", json!({})))
            .unwrap();
        let past = s.items_at(at, &Filter::all(CONFIGMAPS)).unwrap();
        let names: Vec<_> = past.iter().map(|o| (o.meta.name.as_str(), o.rv)).collect();
        assert_eq!(names, [("a", 2), ("b", 3)]);
        let now = s.items_at(s.rv, &Filter::all(CONFIGMAPS)).unwrap();
        let names: Vec<_> = now.iter().map(|o| o.meta.name.as_str()).collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(
            s.items_at(s.rv + 1, &Filter::all(CONFIGMAPS))
                .unwrap_err()
                .code,
            504
        );
        s.compact();
        assert_eq!(
            s.items_at(at, &Filter::all(CONFIGMAPS)).unwrap_err().code,
            410
        );
    }
}
