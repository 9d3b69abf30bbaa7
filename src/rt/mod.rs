//! The runtime seam: everything time- or scheduling-related goes through here so
//! that the layers above run unchanged on the browser's event loop and under a
//! deterministic fake clock in native tests.
//!
//! * [`Clock`] / [`SharedClock`]: `now()` and timers. [`real_clock`] uses
//!   `performance.now()` and `setTimeout` in wasm (never `window`, so it works in
//!   pages, workers, Node and edge runtimes); a fake clock (the `testing`
//!   feature) only moves when a test advances it.
//! * [`spawn_local`] / [`yield_now`]: tasks on the single-threaded executor.
//!   Natively the executor is a thread-local pool that `block_on` drives.
//! * [`Backoff`]: the one exponential backoff shape (request retries and the
//!   reflector's relist backoff).
//! * [`NetworkEvents`] / [`host_network`]: the host's `online` and `offline`
//!   events (browsers only), which cut a reflector's backoff short and
//!   re-open a watch that was open while the network was gone.
//!
//! Crate-internal: a single-threaded "something changed" signal, a seedable
//! generator for jitter (no OS entropy needed in wasm), a fast hasher for the
//! cache's maps, one shared sort (one copy of std's in the module), and growing wasm memory in one step before a large decode.

mod backoff;
mod clock;
mod exec;
#[cfg(any(test, feature = "testing"))]
mod fake_clock;
pub(crate) mod fx;
mod heap;
mod network;
mod notify;
mod rand;
pub(crate) mod sort;
mod time;

pub use backoff::Backoff;
pub use clock::{real_clock, Clock, SharedClock, Sleep};
#[cfg(not(target_arch = "wasm32"))]
pub use exec::block_on;
pub use exec::{spawn_local, yield_now, TaskHandle};
pub use network::{host_network, Listening, NetworkEvents, NetworkMark, Online};
pub use time::Instant;

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) use exec::run_until_stalled;
#[cfg(test)]
pub(crate) use fake_clock::FakeClock;
pub(crate) use heap::reserve_heap;
pub(crate) use notify::{Notified, Notify};
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) use rand::seed_thread_rng;
pub(crate) use rand::{random_f64, Rng};

/// The runtime's test support (see [`crate::testing`]).
#[cfg(feature = "testing")]
pub(crate) mod testing {
    #[cfg(not(target_arch = "wasm32"))]
    pub use super::exec::run_until_stalled;
    pub use super::fake_clock::FakeClock;
    pub use super::rand::{seed_thread_rng, Rng};
}
