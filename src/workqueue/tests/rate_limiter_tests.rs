//! RLM-01..06: client-go `default_rate_limiters_test.go`.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use super::ms;
use crate::rt::FakeClock;
use crate::workqueue::{
    default_controller_rate_limiter, default_item_based_rate_limiter, BucketRateLimiter,
    ItemExponentialRateLimiter, ItemFastSlowRateLimiter, MaxOfRateLimiter, RateLimiter,
    WithMaxWaitRateLimiter,
};

#[test]
fn rlm_01_item_exponential() {
    let l = ItemExponentialRateLimiter::new(ms(1), Duration::from_secs(1));
    let got: Vec<_> = (0..5).map(|_| l.when(&"one")).collect();
    assert_eq!(got, vec![ms(1), ms(2), ms(4), ms(8), ms(16)]);
    assert_eq!(l.num_requeues(&"one"), 5);
    assert_eq!(l.when(&"two"), ms(1), "items are independent");
    assert_eq!(l.when(&"two"), ms(2));
    assert_eq!(l.num_requeues(&"two"), 2);
    l.forget(&"one");
    assert_eq!(l.num_requeues(&"one"), 0);
    assert_eq!(l.when(&"one"), ms(1));
    // Capped at max.
    let capped: Vec<_> = (0..12).map(|_| l.when(&"three")).collect();
    assert_eq!(capped[9], ms(512));
    assert_eq!(capped[10], Duration::from_secs(1));
    assert_eq!(capped[11], Duration::from_secs(1));
}

#[test]
fn rlm_01_exponential_overflow() {
    let l = ItemExponentialRateLimiter::new(ms(1), Duration::from_secs(1000));
    for _ in 0..5 {
        l.when(&"one");
    }
    assert_eq!(l.when(&"one"), ms(32), "6th call");
    for _ in 0..1000 {
        l.when(&"overflow1");
    }
    assert_eq!(
        l.when(&"overflow1"),
        Duration::from_secs(1000),
        "no overflow after 1000 calls"
    );
    assert_eq!(l.num_requeues(&"overflow1"), 1001);

    let l =
        ItemExponentialRateLimiter::new(Duration::from_secs(60), Duration::from_secs(1000 * 3600));
    assert_eq!(l.when(&"two"), Duration::from_secs(60));
    assert_eq!(l.when(&"two"), Duration::from_secs(120));
    assert_eq!(l.when(&"two"), Duration::from_secs(240), "3rd call: 4 min");

    // Extreme bases never panic and stay at the cap.
    let l = ItemExponentialRateLimiter::new(Duration::MAX, Duration::MAX);
    assert_eq!(l.when(&"x"), Duration::MAX);
    assert_eq!(l.when(&"x"), Duration::MAX);
    let l = ItemExponentialRateLimiter::new(Duration::from_nanos(1), Duration::MAX);
    let last = (0..200).map(|_| l.when(&"y")).last();
    assert_eq!(last, Some(Duration::MAX));
    let l = ItemExponentialRateLimiter::new(Duration::ZERO, Duration::from_secs(1));
    let last = (0..200).map(|_| l.when(&"z")).last();
    assert_eq!(last, Some(Duration::ZERO), "a zero base stays zero");
}

#[test]
fn rlm_02_fast_slow() {
    let l = ItemFastSlowRateLimiter::new(ms(5), Duration::from_secs(10), 3);
    let got: Vec<_> = (0..5).map(|_| l.when(&"one")).collect();
    assert_eq!(
        got,
        vec![
            ms(5),
            ms(5),
            ms(5),
            Duration::from_secs(10),
            Duration::from_secs(10)
        ]
    );
    assert_eq!(l.num_requeues(&"one"), 5);
    assert_eq!(l.when(&"two"), ms(5));
    assert_eq!(l.when(&"two"), ms(5));
    assert_eq!(l.num_requeues(&"two"), 2);
    l.forget(&"one");
    assert_eq!(l.num_requeues(&"one"), 0);
    assert_eq!(l.when(&"one"), ms(5));
}

#[test]
fn rlm_03_max_of() {
    let l = MaxOfRateLimiter::new(vec![
        Rc::new(ItemFastSlowRateLimiter::new(
            ms(5),
            Duration::from_secs(3),
            3,
        )),
        Rc::new(ItemExponentialRateLimiter::new(
            ms(1),
            Duration::from_secs(1),
        )),
    ]);
    let got: Vec<_> = (0..5).map(|_| l.when(&"one")).collect();
    assert_eq!(
        got,
        vec![
            ms(5),
            ms(5),
            ms(5),
            Duration::from_secs(3),
            Duration::from_secs(3)
        ]
    );
    assert_eq!(l.num_requeues(&"one"), 5);
    assert_eq!(l.when(&"two"), ms(5));
    assert_eq!(l.when(&"two"), ms(5));
    assert_eq!(l.num_requeues(&"two"), 2);
    l.forget(&"one");
    assert_eq!(l.num_requeues(&"one"), 0, "forget reaches every child");
    assert_eq!(l.when(&"one"), ms(5));
}

#[test]
fn rlm_04_bucket_101st_waits_100ms() {
    let clock = FakeClock::new();
    let l = BucketRateLimiter::new(clock.shared(), 10.0, 100);
    for i in 0..100 {
        assert_eq!(
            RateLimiter::<&str>::when(&l, &"x"),
            Duration::ZERO,
            "call {i} within the burst"
        );
    }
    assert_eq!(
        RateLimiter::<&str>::when(&l, &"y"),
        ms(100),
        "101st call waits 100 ms"
    );
    assert_eq!(
        RateLimiter::<&str>::when(&l, &"z"),
        ms(200),
        "102nd call waits 200 ms"
    );
    assert_eq!(RateLimiter::<&str>::num_requeues(&l, &"y"), 0);
    RateLimiter::<&str>::forget(&l, &"y"); // no effect
    assert_eq!(RateLimiter::<&str>::when(&l, &"y"), ms(300));
}

#[test]
fn rlm_04_bucket_refills_over_time() {
    let clock = FakeClock::new();
    let l = BucketRateLimiter::new(clock.shared(), 10.0, 100);
    for _ in 0..102 {
        l.reserve();
    }
    // Two tokens in debt; one second refills ten.
    clock.advance(Duration::from_secs(1));
    for i in 0..8 {
        assert_eq!(l.reserve(), Duration::ZERO, "refilled token {i}");
    }
    assert_eq!(l.reserve(), ms(100));
    // A long idle period refills only up to the burst.
    clock.advance(Duration::from_secs(3600));
    for _ in 0..100 {
        assert_eq!(l.reserve(), Duration::ZERO);
    }
    assert_eq!(l.reserve(), ms(100));
    // Degenerate buckets never panic.
    let zero_burst = BucketRateLimiter::new(clock.shared(), 10.0, 0);
    assert_eq!(zero_burst.reserve(), Duration::MAX);
    let infinite = BucketRateLimiter::new(clock.shared(), f64::INFINITY, 0);
    assert_eq!(infinite.reserve(), Duration::ZERO);
    let stopped = BucketRateLimiter::new(clock.shared(), 0.0, 1);
    assert_eq!(stopped.reserve(), Duration::ZERO);
    assert_eq!(stopped.reserve(), Duration::MAX);
}

#[test]
fn rlm_05_default_controller_sequence() {
    let clock = FakeClock::new();
    let l = default_controller_rate_limiter::<&str>(clock.shared());
    let mut expected = Vec::new();
    let mut d = ms(5);
    for _ in 0..18 {
        expected.push(d);
        d *= 2;
    }
    assert_eq!(expected[17], ms(655_360));
    for _ in 0..5 {
        expected.push(Duration::from_secs(1000));
    }
    let mut got = Vec::new();
    for _ in 0..expected.len() {
        let d = l.when(&"failing");
        got.push(d);
        // Idle system: the retry happens when it is due.
        clock.advance(d);
    }
    assert_eq!(got[..3], [ms(5), ms(10), ms(20)]);
    assert_eq!(
        got[17],
        Duration::from_millis(655_360),
        "18th failure: 655.36 s"
    );
    assert_eq!(got[18], Duration::from_secs(1000), "19th: capped at 1000 s");
    assert_eq!(got, expected);
    assert_eq!(l.num_requeues(&"failing"), 23);
    l.forget(&"failing");
    assert_eq!(l.when(&"failing"), ms(5));
}

#[test]
fn rlm_05_default_controller_bucket_dominates_bursts() {
    let clock = FakeClock::new();
    let l = default_controller_rate_limiter::<u32>(clock.shared());
    let delays: Vec<_> = (0..102).map(|i| l.when(&i)).collect();
    assert!(
        delays[..100].iter().all(|d| *d == ms(5)),
        "fresh items get the 5 ms base"
    );
    assert_eq!(
        delays[100],
        ms(100),
        "101st distinct item waits for the bucket"
    );
    assert_eq!(delays[101], ms(200));
}

#[test]
fn rlm_05_default_item_based() {
    let l = default_item_based_rate_limiter::<&str>();
    let got: Vec<_> = (0..22).map(|_| l.when(&"x")).collect();
    assert_eq!(got[..4], [ms(1), ms(2), ms(4), ms(8)]);
    assert_eq!(got[19], Duration::from_millis(524_288));
    assert_eq!(got[20], Duration::from_secs(1000));
    assert_eq!(got[21], Duration::from_secs(1000));
}

/// 5 ms for the first 100 calls, then 1000 s (as in client-go's test).
struct StepLimiter {
    calls: Cell<u32>,
}

impl RateLimiter<&'static str> for StepLimiter {
    fn when(&self, _item: &&'static str) -> Duration {
        self.calls.set(self.calls.get() + 1);
        if self.calls.get() <= 100 {
            ms(5)
        } else {
            Duration::from_secs(1000)
        }
    }
    fn forget(&self, _item: &&'static str) {
        self.calls.set(0);
    }
    fn num_requeues(&self, _item: &&'static str) -> u32 {
        self.calls.get()
    }
}

#[test]
fn rlm_06_with_max_wait() {
    let l = WithMaxWaitRateLimiter::new(
        Rc::new(StepLimiter {
            calls: Cell::new(0),
        }),
        Duration::from_secs(500),
    );
    for i in 0..100 {
        assert_eq!(l.when(&"a"), ms(5), "call {i}");
    }
    assert_eq!(
        l.when(&"a"),
        Duration::from_secs(500),
        "capped at the max wait"
    );
    assert_eq!(l.num_requeues(&"a"), 101, "forwarded");
    l.forget(&"a");
    assert_eq!(l.num_requeues(&"a"), 0, "forwarded");
    assert_eq!(l.when(&"a"), ms(5));
}
