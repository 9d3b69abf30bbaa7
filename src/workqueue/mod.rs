//! Controller work queues: the basic queue, delaying queue, rate limiters and
//! the rate-limited queue, all on the local executor and the runtime clock,
//! plus metrics and a worker runner.
//!
//! Layering follows client-go's `util/workqueue`:
//!
//! * [`Queue`] — deduplicating FIFO with processing tracking (`queue.rs`).
//! * [`WorkQueue`] — the operations every queue offers (`interface.rs`).
//! * [`DelayingQueue`] — a queue that adds `add_after` (`delaying.rs`).
//! * [`RateLimiter`] and its implementations (`rate_limiters.rs`).
//! * [`RateLimitingQueue`] — a delaying queue that adds
//!   `add_rate_limited`/`forget`/`num_requeues` (`rate_limiting_queue.rs`).
//! * [`QueueMetrics`] snapshots and [`DurationSummary`] histograms (`metrics.rs`).
//! * [`run_workers`] — N async workers around a reconcile function (`worker.rs`).
//!
//! Every handle is an `Rc` inside, so cloning a queue (or limiter, or pool)
//! shares it; a binding layer can keep one clone per JS object.
//!
//! # The dirty/processing invariant
//!
//! Each item is in at most one of three states: *waiting* (dirty and in the
//! order), *processing* (handed out by `get`, not yet `done`), or *processing
//! and dirty* (added again while being processed). Consequently:
//!
//! * an item is never handed to two workers at once — `get` only hands out
//!   waiting items, and an add during processing does not make it waiting;
//! * an item re-added while processing is processed again after `done`,
//!   exactly once however many adds happened meanwhile;
//! * an item waiting is queued once however many adds happen.
//!
//! # Differences from client-go (single thread)
//!
//! * `Get` and `ShutDownWithDrain` are futures; `add` wakes one parked `get`
//!   (Go's `Signal`), shutdown wakes all (Go's `Broadcast`). A woken `get`
//!   that is dropped passes the wake-up to the next waiter.
//! * The delaying queue has no 10 s heartbeat and no 1000-entry add channel:
//!   `add_after` updates the pending set synchronously and exactly one clock
//!   timer is armed for the earliest item.
//! * Metrics are a snapshot struct (plus a periodic callback) instead of a
//!   Prometheus provider; `depth` is the number of waiting items.
//! * `try_get` (non-blocking get) is an addition for bindings and benchmarks.
//! * `add_rate_limited` after shutdown does not consult the limiter.
//!
//! The behaviour IDs used in the tests (WQ, DQ, RLM) are defined, with the
//! tests that check each one, in `docs/behaviours.md`.

mod delaying;
mod interface;
mod metrics;
mod queue;
mod rate_limiters;
mod rate_limiting_queue;
mod worker;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use delaying::DelayingQueue;
pub use interface::WorkQueue;
pub use metrics::{bucket_upper_bounds, DurationSummary, QueueMetrics, BUCKET_COUNT};
pub use queue::{FifoOrder, Get, Queue, QueueConfig, QueueOrder};
pub use rate_limiters::{
    default_controller_rate_limiter, default_item_based_rate_limiter, BucketRateLimiter,
    ItemExponentialRateLimiter, ItemFastSlowRateLimiter, MaxOfRateLimiter, RateLimiter,
    SharedRateLimiter, WithMaxWaitRateLimiter,
};
pub use rate_limiting_queue::RateLimitingQueue;
pub use worker::{run_workers, ErrorHook, Reconciled, WorkerOptions, WorkerPool};
