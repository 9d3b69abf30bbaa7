//! The cluster state: objects, one global resourceVersion, watch history,
//! list snapshots for pagination, faults and counters.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use serde_json::{json, Value};

use crate::resources::RESOURCES;

/// A stored object and its serialized form (shared by lists and watches).
#[derive(Clone)]
pub struct Obj {
    /// The object (its resourceVersion may be stale after a flood touch; use `rv`).
    pub value: Arc<Value>,
    pub bytes: Arc<Vec<u8>>,
    pub rv: u64,
}

impl Obj {
    pub fn new(value: Value, rv: u64) -> Obj {
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        Obj {
            value: Arc::new(value),
            bytes: Arc::new(bytes),
            rv,
        }
    }
}

/// One change, as every watcher will see it.
pub struct Event {
    pub rv: u64,
    pub res: usize,
    pub obj: Arc<Value>,
    /// The whole watch line, `{"type":..,"object":..}\n`, serialized once.
    pub line: Arc<Vec<u8>>,
}

#[derive(Default, Clone)]
pub struct Faults {
    pub split_chunks: bool,
    pub malformed_line_once: bool,
    pub drop_after_events: Option<u64>,
    pub status429: u32,
    pub retry_after: u32,
    pub status500: u32,
    pub latency_ms: u64,
    pub seed: u64,
}

#[derive(Default)]
pub struct Stats {
    pub open_watches: i64,
    pub in_flight: i64,
    pub max_in_flight: i64,
    pub requests: u64,
}

pub struct State {
    pub rv: u64,
    /// Per resource: (namespace, name) → object.
    pub objects: Vec<BTreeMap<(String, String), Obj>>,
    pub history: VecDeque<Event>,
    pub history_cap: usize,
    /// Watches from an RV below this are gone (410).
    pub oldest_rv: u64,
    pub snapshots: HashMap<u64, Arc<Vec<Obj>>>,
    pub snapshot_rvs: HashMap<u64, u64>,
    pub next_snapshot: u64,
    /// Bumped to close every open watch.
    pub drop_gen: u64,
    pub faults: Faults,
    pub stats: Stats,
    pub uid_counter: u64,
    pub churn_per_sec: f64,
    pub churn_seed: u64,
    /// Per open watch: the last resourceVersion it has written (flood pacing).
    pub watch_progress: HashMap<u64, u64>,
    pub next_watch_id: u64,
}

pub type Shared = Arc<(Mutex<State>, Condvar)>;

pub fn lock(s: &Shared) -> MutexGuard<'_, State> {
    match s.0.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

pub fn rfc3339(secs: u64) -> String {
    let days = secs / 86400;
    let rem = secs % 86400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if mo <= 2 { y + 1 } else { y };
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

impl State {
    pub fn new(history_cap: usize) -> State {
        State {
            rv: 1,
            objects: RESOURCES.iter().map(|_| BTreeMap::new()).collect(),
            history: VecDeque::new(),
            history_cap: history_cap.max(1),
            oldest_rv: 1,
            snapshots: HashMap::new(),
            snapshot_rvs: HashMap::new(),
            next_snapshot: 1,
            drop_gen: 0,
            faults: Faults::default(),
            stats: Stats::default(),
            uid_counter: 0,
            churn_per_sec: 0.0,
            churn_seed: 1,
            watch_progress: HashMap::new(),
            next_watch_id: 1,
        }
    }

    fn next_uid(&mut self) -> String {
        self.uid_counter += 1;
        let n = self.uid_counter;
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            n.wrapping_mul(2654435761) & 0xffff_ffff,
            n & 0xffff,
            n & 0xfff,
            (n >> 12) & 0xfff,
            n
        )
    }

    fn record(&mut self, res: usize, kind: &str, obj: &Obj) {
        let mut line = Vec::with_capacity(obj.bytes.len() + 32);
        line.extend_from_slice(b"{\"type\":\"");
        line.extend_from_slice(kind.as_bytes());
        line.extend_from_slice(b"\",\"object\":");
        line.extend_from_slice(&obj.bytes);
        line.extend_from_slice(b"}\n");
        self.history.push_back(Event {
            rv: self.rv,
            res,
            obj: obj.value.clone(),
            line: Arc::new(line),
        });
        while self.history.len() > self.history_cap {
            if let Some(e) = self.history.pop_front() {
                self.oldest_rv = e.rv;
            }
        }
    }

    /// Create an object (server fills metadata). Err = (code, reason, message).
    pub fn create(
        &mut self,
        res: usize,
        ns: Option<&str>,
        mut v: Value,
    ) -> Result<Obj, (u16, &'static str, String)> {
        let r = &RESOURCES[res];
        if !v.is_object() {
            return Err((400, "BadRequest", "body must be a JSON object".into()));
        }
        let mut name = v
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if name.is_empty() {
            if let Some(g) = v.pointer("/metadata/generateName").and_then(Value::as_str) {
                name = format!("{g}{:05x}", self.uid_counter.wrapping_mul(7919) & 0xfffff);
            }
        }
        if name.is_empty() {
            return Err((422, "Invalid", "metadata.name: Required value".into()));
        }
        let ns = if r.namespaced {
            ns.or_else(|| v.pointer("/metadata/namespace").and_then(Value::as_str))
                .unwrap_or("default")
                .to_string()
        } else {
            String::new()
        };
        let key = (ns.clone(), name.clone());
        if self.objects[res].contains_key(&key) {
            return Err((
                409,
                "AlreadyExists",
                format!("{} \"{}\" already exists", r.plural, name),
            ));
        }
        self.rv += 1;
        let uid = self.next_uid();
        v["apiVersion"] = json!(r.api_version());
        v["kind"] = json!(r.kind);
        let meta = &mut v["metadata"];
        if !meta.is_object() {
            *meta = json!({});
        }
        meta["name"] = json!(name);
        if r.namespaced {
            meta["namespace"] = json!(ns);
        }
        meta["uid"] = json!(uid);
        meta["resourceVersion"] = json!(self.rv.to_string());
        meta["generation"] = json!(1);
        if meta
            .get("creationTimestamp")
            .and_then(Value::as_str)
            .is_none()
        {
            meta["creationTimestamp"] = json!(now_rfc3339());
        }
        let obj = Obj::new(v, self.rv);
        self.objects[res].insert(key, obj.clone());
        self.record(res, "ADDED", &obj);
        Ok(obj)
    }

    /// Replace an existing object; a stale resourceVersion in the body is a conflict.
    pub fn update(
        &mut self,
        res: usize,
        ns: &str,
        name: &str,
        mut v: Value,
    ) -> Result<Obj, (u16, &'static str, String)> {
        let r = &RESOURCES[res];
        let key = (ns.to_string(), name.to_string());
        let Some(old) = self.objects[res].get(&key).cloned() else {
            return Err((
                404,
                "NotFound",
                format!("{} \"{}\" not found", r.plural, name),
            ));
        };
        if !v.is_object() {
            return Err((400, "BadRequest", "body must be a JSON object".into()));
        }
        if let Some(given) = v
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
        {
            if !given.is_empty() && given != old.rv.to_string() {
                return Err((409, "Conflict", format!("Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again", r.plural, name)));
            }
        }
        self.rv += 1;
        v["apiVersion"] = json!(r.api_version());
        v["kind"] = json!(r.kind);
        if !v["metadata"].is_object() {
            v["metadata"] = json!({});
        }
        for f in ["uid", "creationTimestamp", "name", "namespace"] {
            if let Some(x) = old.value["metadata"].get(f) {
                v["metadata"][f] = x.clone();
            }
        }
        let gen = old
            .value
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let gen = if old.value.get("spec") != v.get("spec") {
            gen + 1
        } else {
            gen
        };
        v["metadata"]["generation"] = json!(gen);
        v["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let obj = Obj::new(v, self.rv);
        self.objects[res].insert(key, obj.clone());
        self.record(res, "MODIFIED", &obj);
        Ok(obj)
    }

    pub fn delete(
        &mut self,
        res: usize,
        ns: &str,
        name: &str,
    ) -> Result<Obj, (u16, &'static str, String)> {
        let key = (ns.to_string(), name.to_string());
        let Some(old) = self.objects[res].remove(&key) else {
            return Err((
                404,
                "NotFound",
                format!("{} \"{}\" not found", RESOURCES[res].plural, name),
            ));
        };
        self.rv += 1;
        let mut v = (*old.value).clone();
        v["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let obj = Obj::new(v, self.rv);
        self.record(res, "DELETED", &obj);
        Ok(obj)
    }

    /// Bump an object's resourceVersion without re-serializing it (floods):
    /// the new RV is spliced into the stored bytes.
    pub fn touch(&mut self, res: usize, key: &(String, String)) -> bool {
        let Some(old) = self.objects[res].get(key).cloned() else {
            return false;
        };
        self.rv += 1;
        let needle = format!("\"resourceVersion\":\"{}\"", old.rv);
        let bytes = match find(&old.bytes, needle.as_bytes()) {
            Some(at) => {
                let mut b = Vec::with_capacity(old.bytes.len() + 4);
                b.extend_from_slice(&old.bytes[..at]);
                b.extend_from_slice(format!("\"resourceVersion\":\"{}\"", self.rv).as_bytes());
                b.extend_from_slice(&old.bytes[at + needle.len()..]);
                b
            }
            None => return false,
        };
        let obj = Obj {
            value: old.value.clone(),
            bytes: Arc::new(bytes),
            rv: self.rv,
        };
        self.objects[res].insert(key.clone(), obj.clone());
        self.record(res, "MODIFIED", &obj);
        true
    }

    /// Forget all history: older RVs and outstanding continue tokens expire.
    pub fn compact(&mut self) {
        self.history.clear();
        self.oldest_rv = self.rv;
        self.snapshots.clear();
        self.snapshot_rvs.clear();
    }

    pub fn snapshot_rv(&self, id: u64) -> u64 {
        self.snapshot_rvs.get(&id).copied().unwrap_or(self.rv)
    }
}

pub fn status_json(code: u16, reason: &str, message: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code, "details": {}
    }))
    .unwrap_or_default()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
