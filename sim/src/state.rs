//! The shared state of the running sim: the store behind one mutex (with a
//! condition variable every watcher waits on), faults, counters, the open
//! watches and the churn setting.

use std::collections::HashMap;
use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::faults::Faults;
use crate::store::Store;

/// Lock a mutex, recovering from poisoning (a panicked thread must not take
/// the whole server down with it).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Request counters for `/sim/stats`.
#[derive(Default)]
pub struct Stats {
    /// Open watch streams.
    pub open_watches: AtomicI64,
    /// API requests received whose response headers are not sent yet.
    pub in_flight: AtomicI64,
    /// High-water mark of `in_flight` since the last reset.
    pub max_in_flight: AtomicI64,
    /// API requests since the last reset.
    pub requests: AtomicU64,
    /// Background churn steps done.
    pub churn_steps: AtomicU64,
    /// Flood events written.
    pub flood_events: AtomicU64,
    /// API responses sent gzipped since the last reset.
    pub gzipped: AtomicU64,
}

/// One open watch, as the registry sees it.
struct WatchEntry {
    /// A handle on its socket, to close it from outside.
    socket: Option<TcpStream>,
    /// The last resourceVersion it has scanned (flood pacing).
    progress: u64,
}

/// Background churn settings.
#[derive(Clone, Debug, Default)]
pub struct Churn {
    /// Writes per second (0 = off).
    pub per_sec: f64,
    /// Seed; changing it restarts the sequence.
    pub seed: u64,
    /// Bumped on every change so the churn thread picks it up.
    pub generation: u64,
}

/// Everything the server threads share.
pub struct Sim {
    /// The objects.
    pub store: Mutex<Store>,
    /// Notified after writes, compaction and watch drops.
    pub changed: Condvar,
    /// Active faults.
    pub faults: Mutex<Faults>,
    /// Counters.
    pub stats: Stats,
    watches: Mutex<HashMap<u64, WatchEntry>>,
    next_watch: AtomicU64,
    /// Bumped by `/sim/drop-watches`.
    pub drop_generation: AtomicU64,
    /// Bumped by `/sim/drop-watches` with `expire`: open watches end with a
    /// 410 ERROR event and a clean close, as the API server ends a watcher
    /// whose window its cache no longer holds.
    pub expire_generation: AtomicU64,
    /// Background churn.
    pub churn: Mutex<Churn>,
    /// Required bearer token for /api and /apis.
    pub token: Option<String>,
    /// Directory served for other paths.
    pub static_dir: Option<PathBuf>,
    /// How often watches with allowWatchBookmarks get a BOOKMARK.
    pub bookmark_interval: Duration,
    /// Container logs (see logs.rs).
    pub logs: Mutex<crate::logs::Logs>,
    /// Gzip large API responses for clients that accept it (see compress.rs).
    pub compression: bool,
}

impl Sim {
    /// A sim around a store.
    pub fn new(store: Store, token: Option<String>, static_dir: Option<PathBuf>) -> Sim {
        Sim {
            store: Mutex::new(store),
            changed: Condvar::new(),
            faults: Mutex::new(Faults::default()),
            stats: Stats::default(),
            watches: Mutex::new(HashMap::new()),
            next_watch: AtomicU64::new(1),
            drop_generation: AtomicU64::new(0),
            expire_generation: AtomicU64::new(0),
            churn: Mutex::new(Churn::default()),
            token,
            static_dir,
            bookmark_interval: Duration::from_secs(1),
            logs: Mutex::default(),
            compression: true,
        }
    }

    /// Run a write against the store and wake every watcher.
    pub fn write<R>(&self, f: impl FnOnce(&mut Store) -> R) -> R {
        let out = f(&mut lock(&self.store));
        self.changed.notify_all();
        out
    }

    /// Register an open watch; the returned id unregisters it on drop.
    pub fn open_watch(&self, socket: Option<TcpStream>, progress: u64) -> u64 {
        let id = self.next_watch.fetch_add(1, Ordering::Relaxed);
        lock(&self.watches).insert(id, WatchEntry { socket, progress });
        self.stats.open_watches.fetch_add(1, Ordering::SeqCst);
        id
    }

    /// Record how far a watch has read.
    pub fn watch_progress(&self, id: u64, rv: u64) {
        if let Some(e) = lock(&self.watches).get_mut(&id) {
            e.progress = rv;
        }
        // The flood thread may be waiting for the slowest watcher.
        self.changed.notify_all();
    }

    /// Unregister a watch.
    pub fn close_watch(&self, id: u64) {
        if lock(&self.watches).remove(&id).is_some() {
            self.stats.open_watches.fetch_sub(1, Ordering::SeqCst);
        }
        self.changed.notify_all();
    }

    /// The RV the slowest open watch has reached.
    pub fn slowest_watch(&self) -> Option<u64> {
        lock(&self.watches).values().map(|e| e.progress).min()
    }

    /// Close every open watch now, mid-stream, even one blocked writing;
    /// returns how many were open.
    pub fn drop_watches(&self) -> usize {
        self.drop_generation.fetch_add(1, Ordering::SeqCst);
        let watches = lock(&self.watches);
        for e in watches.values() {
            if let Some(s) = &e.socket {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        let n = watches.len();
        drop(watches);
        self.changed.notify_all();
        n
    }

    /// End every open watch with a 410 ERROR event and a clean close.
    pub fn expire_watches(&self) -> usize {
        self.expire_generation.fetch_add(1, Ordering::SeqCst);
        let n = lock(&self.watches).len();
        self.changed.notify_all();
        n
    }

    /// Count an API request as received (in flight until headers go out).
    pub fn request_started(&self) {
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let now = self.stats.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.stats.max_in_flight.fetch_max(now, Ordering::SeqCst);
    }

    /// Its response headers are about to be written.
    pub fn request_answered(&self) {
        self.stats.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    /// `POST /sim/stats/reset`.
    pub fn reset_stats(&self) {
        self.stats.requests.store(0, Ordering::SeqCst);
        self.stats.gzipped.store(0, Ordering::SeqCst);
        let now = self.stats.in_flight.load(Ordering::SeqCst);
        self.stats.max_in_flight.store(now, Ordering::SeqCst);
    }
}
