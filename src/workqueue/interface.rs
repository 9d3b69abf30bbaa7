//! What every work queue offers (client-go's `workqueue.Interface`), as a
//! trait the queue types implement instead of dereferencing to one another.

use std::future::Future;
use std::hash::Hash;

use super::metrics::QueueMetrics;
use super::queue::{Get, Queue};
use crate::rt::SharedClock;

/// The operations of every work queue: [`Queue`], and the
/// [`DelayingQueue`](super::DelayingQueue) and
/// [`RateLimitingQueue`](super::RateLimitingQueue) built on it. Generic code
/// (a worker loop) takes any of them through this trait.
///
/// Each method has the semantics of the same method on [`Queue`], whose
/// docs state them.
pub trait WorkQueue<T: Hash + Eq + Clone + 'static> {
    /// The basic queue underneath.
    fn queue(&self) -> &Queue<T>;

    /// See [`Queue::add`].
    fn add(&self, item: T) {
        self.queue().add(item)
    }

    /// See [`Queue::get`].
    fn get(&self) -> Get<T> {
        self.queue().get()
    }

    /// See [`Queue::try_get`].
    fn try_get(&self) -> Option<T> {
        self.queue().try_get()
    }

    /// See [`Queue::done`].
    fn done(&self, item: &T) {
        self.queue().done(item)
    }

    /// See [`Queue::len`].
    fn len(&self) -> usize {
        self.queue().len()
    }

    /// See [`Queue::is_empty`].
    fn is_empty(&self) -> bool {
        self.queue().is_empty()
    }

    /// See [`Queue::processing`].
    fn processing(&self) -> usize {
        self.queue().processing()
    }

    /// See [`Queue::shut_down`].
    fn shut_down(&self) {
        self.queue().shut_down()
    }

    /// See [`Queue::shut_down_with_drain`].
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + '_ {
        self.queue().shut_down_with_drain()
    }

    /// See [`Queue::shutting_down`].
    fn shutting_down(&self) -> bool {
        self.queue().shutting_down()
    }

    /// See [`Queue::clock`].
    fn clock(&self) -> &SharedClock {
        self.queue().clock()
    }

    /// See [`Queue::name`].
    fn name(&self) -> &str {
        self.queue().name()
    }

    /// A snapshot of the queue's metrics (see [`Queue::metrics`]; delaying
    /// queues fill in the delayed count).
    fn metrics(&self) -> QueueMetrics {
        self.queue().metrics()
    }
}

impl<T: Hash + Eq + Clone + 'static> WorkQueue<T> for Queue<T> {
    fn queue(&self) -> &Queue<T> {
        self
    }
}
