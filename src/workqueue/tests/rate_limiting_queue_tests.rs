//! RLM-07: client-go `rate_limiting_queue_test.go`.

use std::rc::Rc;
use std::time::Duration;

use super::ms;
use crate::rt::{run_until_stalled, FakeClock, Instant};
use crate::workqueue::WorkQueue as _;
use crate::workqueue::{ItemExponentialRateLimiter, RateLimitingQueue};

#[test]
fn rlm_07_rate_limiting_queue() {
    let clock = FakeClock::new();
    let limiter = Rc::new(ItemExponentialRateLimiter::new(
        ms(1),
        Duration::from_secs(1),
    ));
    let q = RateLimitingQueue::new(clock.shared(), limiter);

    assert_eq!(q.add_rate_limited("one"), ms(1));
    run_until_stalled();
    assert_eq!(
        clock.next_deadline(),
        Some(Instant::from_origin(ms(1))),
        "one is ready at +1 ms"
    );
    assert_eq!(q.add_rate_limited("one"), ms(2));
    assert_eq!(q.num_requeues(&"one"), 2);

    assert_eq!(q.add_rate_limited("two"), ms(1));
    assert_eq!(q.add_rate_limited("two"), ms(2));
    assert_eq!(q.num_requeues(&"two"), 2);

    q.forget(&"one");
    assert_eq!(q.num_requeues(&"one"), 0);
    assert_eq!(q.add_rate_limited("one"), ms(1));
    assert_eq!(q.delayed_len(), 2, "pending duplicates collapse");

    clock.advance(ms(1));
    run_until_stalled();
    assert_eq!(q.len(), 2, "both fire at their earliest ready time");
    assert_eq!(q.metrics().retries, 5);
}

#[test]
fn rlm_07_forget_does_not_touch_membership() {
    let clock = FakeClock::new();
    let q = RateLimitingQueue::with_default_limiter(clock.shared());
    q.add("a");
    assert_eq!(q.try_get(), Some("a"));
    q.add_rate_limited("a");
    q.forget(&"a");
    assert_eq!(q.processing(), 1, "forget does not mark done");
    assert_eq!(
        q.delayed_len(),
        1,
        "forget does not cancel the pending retry"
    );
    q.done(&"a");
    clock.advance(ms(5));
    run_until_stalled();
    assert_eq!(q.len(), 1);
    q.shut_down();
    assert_eq!(
        q.add_rate_limited("b"),
        Duration::ZERO,
        "ignored after shutdown"
    );
    assert_eq!(q.num_requeues(&"b"), 0, "and the limiter is not consulted");
}
