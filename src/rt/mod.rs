//! The runtime seam: everything time- or scheduling-related goes through here so
//! that the layers above run unchanged on the browser's event loop and under a
//! deterministic fake clock in native tests.
//!
//! * [`Clock`] / [`SharedClock`]: `now()` and timers. [`real_clock`] uses
//!   `performance.now()` and `setTimeout` in wasm (never `window`, so it works in
//!   pages, workers, Node and edge runtimes); [`FakeClock`] only moves when a test
//!   advances it.
//! * [`spawn_local`] / [`yield_now`]: tasks on the single-threaded executor.
//!   Natively the executor is a thread-local pool that tests drive with
//!   `run_until_stalled` or `block_on` (native only).
//! * [`Notify`]: a single-threaded "something changed" signal.
//! * [`Rng`]: a small seedable generator for jitter (no OS entropy needed in wasm).
//! * [`reserve_heap`]: grow wasm memory in one step before a large decode.

mod clock;
mod exec;
mod fake_clock;
mod heap;
mod notify;
mod rand;
mod time;

pub use clock::{real_clock, Clock, SharedClock, Sleep};
#[cfg(not(target_arch = "wasm32"))]
pub use exec::{block_on, run_until_stalled};
pub use exec::{spawn_local, yield_now, TaskHandle};
pub use fake_clock::FakeClock;
pub use heap::reserve_heap;
pub use notify::{Notified, Notify};
pub use rand::{random_f64, seed_thread_rng, Rng};
pub use time::Instant;
