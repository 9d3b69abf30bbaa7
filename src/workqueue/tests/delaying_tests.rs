//! DQ-01..04 and the one-timer rule: client-go `delaying_queue_test.go`.

use std::time::Duration;

use super::ms;
use crate::rt::{run_until_stalled, FakeClock, Instant, Rng};
use crate::workqueue::DelayingQueue;
use crate::workqueue::WorkQueue as _;

fn setup() -> (FakeClock, DelayingQueue<&'static str>) {
    let clock = FakeClock::new();
    let q = DelayingQueue::new(clock.shared());
    (clock, q)
}

fn step(clock: &FakeClock, d: Duration) {
    clock.advance(d);
    run_until_stalled();
}

fn at(d: Duration) -> Instant {
    Instant::from_origin(d)
}

#[test]
fn dq_01_zero_delay_is_plain_add() {
    let (clock, q) = setup();
    q.add_after("foo", Duration::ZERO);
    assert_eq!(q.len(), 1);
    run_until_stalled();
    assert_eq!(clock.pending_timers(), 0, "no timer for an immediate add");
}

#[test]
fn dq_01_add_after_ignored_after_shutdown() {
    let (clock, q) = setup();
    q.shut_down();
    q.add_after("foo", ms(10));
    q.add_after("bar", Duration::ZERO);
    run_until_stalled();
    assert_eq!(q.delayed_len(), 0);
    step(&clock, ms(20));
    assert_eq!(q.len(), 0);
    assert_eq!(clock.pending_timers(), 0);
}

#[test]
fn dq_02_simple_queue() {
    let (clock, q) = setup();
    q.add_after("foo", ms(50));
    run_until_stalled();
    assert_eq!(q.len(), 0, "not visible before its delay");
    assert_eq!(q.delayed_len(), 1);
    step(&clock, ms(49));
    assert_eq!(q.len(), 0);
    step(&clock, ms(11));
    assert_eq!(q.len(), 1);
    assert_eq!(q.try_get(), Some("foo"));
    q.done(&"foo");
    step(&clock, Duration::from_secs(10));
    assert_eq!(q.len(), 0, "nothing else fires later");
    assert_eq!(
        clock.pending_timers(),
        0,
        "no timer left armed when nothing is pending"
    );
}

#[test]
fn dq_03_dedup_keeps_earliest() {
    let (clock, q) = setup();
    // A later duplicate does not postpone.
    q.add_after("foo", ms(50));
    q.add_after("foo", ms(70));
    run_until_stalled();
    assert_eq!(q.delayed_len(), 1);
    step(&clock, ms(60));
    assert_eq!(q.len(), 1);
    assert_eq!(q.try_get(), Some("foo"));
    q.done(&"foo");
    step(&clock, ms(20));
    assert_eq!(q.len(), 0, "fires once, nothing at 70 ms");

    // An earlier duplicate moves it earlier.
    q.add_after("foo", ms(50));
    q.add_after("foo", ms(30));
    run_until_stalled();
    step(&clock, ms(40));
    assert_eq!(q.len(), 1);
    assert_eq!(q.try_get(), Some("foo"));
    q.done(&"foo");
    step(&clock, ms(20));
    assert_eq!(q.len(), 0, "nothing at the superseded 50 ms");
    assert_eq!(clock.pending_timers(), 0);
}

#[test]
fn dq_04_copy_shifting_ready_order() {
    let (clock, q) = setup();
    q.add_after("foo", Duration::from_secs(1));
    q.add_after("bar", ms(500));
    q.add_after("baz", ms(250));
    run_until_stalled();
    assert_eq!(q.len(), 0);
    step(&clock, Duration::from_secs(2));
    assert_eq!(q.len(), 3);
    let got: Vec<_> = std::iter::from_fn(|| q.try_get()).collect();
    assert_eq!(got, vec!["baz", "bar", "foo"]);
}

#[test]
fn dq_04_add_two_fire_early() {
    let (clock, q) = setup();
    q.add_after("foo", Duration::from_secs(1));
    q.add_after("bar", ms(50));
    run_until_stalled();
    step(&clock, ms(60));
    assert_eq!(q.len(), 1);
    assert_eq!(q.try_get(), Some("bar"));
    q.add_after("baz", Duration::from_secs(2));
    run_until_stalled();
    step(&clock, Duration::from_secs(1));
    assert_eq!(q.len(), 1);
    assert_eq!(q.try_get(), Some("foo"));
    step(&clock, Duration::from_secs(2));
    assert_eq!(q.len(), 1);
    assert_eq!(q.try_get(), Some("baz"));
}

#[test]
fn dq_04_immediate_add_not_blocked_by_pending() {
    let (clock, q) = setup();
    q.add_after("foo", Duration::from_secs(1));
    q.add("foo");
    assert_eq!(q.len(), 1, "the pending entry does not block a plain add");
    assert_eq!(q.try_get(), Some("foo"));
    q.done(&"foo");
    step(&clock, Duration::from_secs(1));
    assert_eq!(q.len(), 1, "the delayed entry still fires");
    q.add("foo");
    assert_eq!(q.len(), 1, "and normal dedup applies");
}

#[test]
fn dq_timer_exactly_one_armed_for_earliest() {
    let clock = FakeClock::new();
    let q: DelayingQueue<u32> = DelayingQueue::new(clock.shared());
    let mut rng = Rng::with_seed(11);
    let mut expected: Vec<(Duration, u32)> = Vec::new();
    for i in 0..300u32 {
        let d = ms(1 + rng.next_u64() % 5_000);
        q.add_after(i, d);
        // Occasionally move an existing item earlier.
        if i % 7 == 0 {
            q.add_after(i, d / 2 + ms(1));
        }
        let ready = if i % 7 == 0 { d.min(d / 2 + ms(1)) } else { d };
        expected.push((ready, i));
        run_until_stalled();
        let earliest = expected.iter().map(|(d, _)| *d).min();
        assert_eq!(
            clock.pending_timers(),
            1,
            "exactly one timer armed after insert {i}"
        );
        assert_eq!(clock.next_deadline(), earliest.map(at));
    }
    expected.sort();
    let mut fired = Vec::new();
    while clock.pending_timers() > 0 {
        assert_eq!(clock.pending_timers(), 1);
        let Some(next) = clock.next_deadline() else {
            break;
        };
        clock.set(next);
        run_until_stalled();
        fired.extend(std::iter::from_fn(|| q.try_get()));
    }
    let want: Vec<u32> = expected.iter().map(|(_, i)| *i).collect();
    assert_eq!(fired.len(), want.len());
    // Ties may come in either order; compare the ready times.
    let times: Vec<Duration> = fired
        .iter()
        .map(|i| {
            expected
                .iter()
                .find(|(_, j)| j == i)
                .map(|(d, _)| *d)
                .unwrap_or_default()
        })
        .collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted, "items become ready in ready-time order");
    assert_eq!(q.delayed_len(), 0);
}

#[test]
fn dq_timer_cancelled_on_shutdown() {
    let (clock, q) = setup();
    q.add_after("foo", Duration::from_secs(5));
    q.add_after("bar", Duration::from_secs(1));
    run_until_stalled();
    assert_eq!(clock.pending_timers(), 1);
    q.shut_down();
    run_until_stalled();
    assert_eq!(clock.pending_timers(), 0, "shutdown drops the timer");
    assert_eq!(q.delayed_len(), 0);
    step(&clock, Duration::from_secs(10));
    assert_eq!(q.len(), 0);
}

#[test]
fn dq_timer_dropping_queue_cancels_timer() {
    let (clock, q) = setup();
    q.add_after("foo", Duration::from_secs(5));
    run_until_stalled();
    assert_eq!(clock.pending_timers(), 1);
    drop(q);
    run_until_stalled();
    assert_eq!(clock.pending_timers(), 0);
}
