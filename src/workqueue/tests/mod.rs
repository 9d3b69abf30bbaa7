//! Behaviour tests for the work queues (IDs from the module docs' table).

mod delaying_tests;
mod metrics_tests;
mod queue_tests;
mod rate_limiter_tests;
mod rate_limiting_queue_tests;
mod worker_tests;

use std::time::Duration;

pub(super) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
