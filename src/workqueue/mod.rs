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
//! # Behaviour → test map
//!
//! | ID | behaviour | tests (`src/workqueue/tests/`) |
//! |----|-----------|-------|
//! | WQ-01 | dedup of waiting items, FIFO order, `len` counts waiting only | `queue_tests::wq_01_len_counts_unique_waiting_items`, `wq_01_collapse_touches_waiting_item`, `wq_01_fifo_order_of_first_add` |
//! | WQ-02 | `get` waits, hands out head, never to two consumers | `queue_tests::wq_02_basic_producers_consumers`, `wq_02_get_waits_until_add`, `wq_02_dropped_woken_get_passes_wakeup_on` |
//! | WQ-03 | add while processing marks dirty; `done` requeues once and then releases the item | `queue_tests::wq_03_reinsert_after_done`, `wq_03_collapse_while_processing`, `wq_03_add_while_processing_blocks_second_consumer`, `wq_03_add_while_processing_many_consumers`, `wq_03_done_releases_the_item` |
//! | WQ-04 | shutdown ignores adds, hands out queued, then `None`; dirty in-flight requeued | `queue_tests::wq_04_shutdown_hands_out_queued_then_none`, `wq_04_shutdown_releases_parked_getters`, `wq_04_no_drain_with_plain_shutdown`, `wq_04_drain_with_dirty_item` |
//! | WQ-05 | drain waits for in-flight only; later shutdown releases it | `queue_tests::wq_05_drain_waits_for_done`, `wq_05_shutdown_releases_drain`, `wq_05_drain_ignores_untaken_items` |
//! | WQ-06 | `shutting_down`; custom order, touch only for waiting items | `queue_tests::wq_06_shutting_down_flag`, `wq_06_custom_order_is_used`, `wq_01_collapse_touches_waiting_item`, `wq_03_collapse_while_processing` |
//! | DQ-01 | zero delay adds now; ignored after shutdown | `delaying_tests::dq_01_zero_delay_is_plain_add`, `dq_01_add_after_ignored_after_shutdown` |
//! | DQ-02 | visible only at now + d; fires once | `delaying_tests::dq_02_simple_queue` |
//! | DQ-03 | dedup keeps the earliest ready time | `delaying_tests::dq_03_dedup_keeps_earliest` |
//! | DQ-04 | ready-time order; immediate add not blocked | `delaying_tests::dq_04_copy_shifting_ready_order`, `dq_04_add_two_fire_early`, `dq_04_immediate_add_not_blocked_by_pending` |
//! | DQ (timer) | one timer for the earliest item; cancelled on shutdown or drop | `delaying_tests::dq_timer_exactly_one_armed_for_earliest`, `dq_timer_cancelled_on_shutdown`, `dq_timer_dropping_queue_cancels_timer` |
//! | RLM-01 | item exponential, overflow-safe | `rate_limiter_tests::rlm_01_item_exponential`, `rlm_01_exponential_overflow` |
//! | RLM-02 | fast/slow | `rate_limiter_tests::rlm_02_fast_slow` |
//! | RLM-03 | max-of | `rate_limiter_tests::rlm_03_max_of` |
//! | RLM-04 | token bucket reservation (101st call waits 100 ms) | `rate_limiter_tests::rlm_04_bucket_101st_waits_100ms`, `rlm_04_bucket_refills_over_time` |
//! | RLM-05 | default limiters: 5 ms … 655.36 s (18th) … 1000 s | `rate_limiter_tests::rlm_05_default_controller_sequence`, `rlm_05_default_controller_bucket_dominates_bursts`, `rlm_05_default_item_based` |
//! | RLM-06 | max-wait wrapper | `rate_limiter_tests::rlm_06_with_max_wait` |
//! | RLM-07 | rate-limited queue | `rate_limiting_queue_tests::rlm_07_rate_limiting_queue`, `rlm_07_forget_does_not_touch_membership` |
//! | metrics | depth, adds, retries, latency, work duration, unfinished, longest, callback | `metrics_tests::metrics_snapshot_tracks_latency_and_work`, `metrics_add_while_processing_counts_latency_from_readd`, `metrics_timings_can_be_disabled`, `metrics_callback_reports_periodically_and_on_shutdown` |
//! | workers | backoff then success and forget; requeue paths; no self-concurrency (60 seeds); stop drains; abort pairs done; time-sliced yield | `worker_tests::workers_fail_three_times_then_succeed_with_backoff`, `workers_requeue_and_requeue_after_paths`, `workers_never_reconcile_an_item_concurrently_with_itself`, `workers_run_concurrently_and_stop_gracefully`, `workers_abort_still_marks_in_flight_done`, `workers_yield_to_other_tasks_after_a_time_slice` |

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
