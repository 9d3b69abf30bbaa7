//! The worker runner: N concurrent async workers around a reconcile function.
//!
//! client-go leaves this loop to each controller (`processNextWorkItem` in
//! sample-controller); controller-runtime packages it. Here the workers are
//! tasks interleaved on the one thread. Per item a worker does:
//!
//! | reconcile result             | queue calls                          |
//! |------------------------------|--------------------------------------|
//! | `Ok(Reconciled::Done)`       | `forget`, `done`                     |
//! | `Ok(Reconciled::Requeue)`    | `add_rate_limited`, `done`           |
//! | `Ok(Reconciled::RequeueAfter(d))` | `forget`, `add_after(d)`, `done` |
//! | `Err(e)` (a JS throw arrives as this) | `add_rate_limited`, error hook, `done` |
//!
//! `done` is called by a guard, so it also happens when the worker task is
//! aborted in the middle of a reconcile. A worker that has run for a whole
//! time slice (default 10 ms on the queue's clock) without the queue making it
//! wait yields to the event loop, so reconciles that complete synchronously
//! cannot starve the page; a per-item yield would cost a macrotask (≥ 1 ms in
//! Node) per item.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::hash::Hash;
use std::rc::Rc;
use std::time::Duration;

use super::interface::WorkQueue;
use super::queue::{Queue, Taker};
use super::rate_limiting_queue::RateLimitingQueue;
use crate::rt::{spawn_local, yield_now, Notify, TaskHandle};

/// What a successful reconcile asks for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reconciled {
    /// Finished: forget the item's retry history.
    Done,
    /// Try again after the rate limiter's delay (no error reported).
    Requeue,
    /// Forget the retry history and look again after this delay (periodic
    /// re-checks).
    RequeueAfter(Duration),
}

/// Called with an item and the error its reconcile returned.
pub type ErrorHook<T, E> = Rc<dyn Fn(&T, E)>;

/// How to run the workers.
pub struct WorkerOptions<T, E> {
    /// Number of concurrent workers (at least 1 is used).
    pub workers: usize,
    /// Yield to the event loop after running this long without waiting for
    /// work (`None` = never yield).
    pub time_slice: Option<Duration>,
    /// Receives every reconcile error after the item was requeued.
    pub on_error: Option<ErrorHook<T, E>>,
}

impl<T, E> Default for WorkerOptions<T, E> {
    fn default() -> Self {
        WorkerOptions {
            workers: 1,
            time_slice: Some(Duration::from_millis(10)),
            on_error: None,
        }
    }
}

impl<T, E> WorkerOptions<T, E> {
    /// `workers` concurrent workers, other options default.
    pub fn workers(workers: usize) -> Self {
        WorkerOptions {
            workers,
            ..Self::default()
        }
    }

    /// Set the error hook.
    #[must_use]
    pub fn on_error(mut self, hook: impl Fn(&T, E) + 'static) -> Self {
        self.on_error = Some(Rc::new(hook));
        self
    }
}

struct PoolShared {
    running: Cell<usize>,
    exited: Notify,
    tasks: RefCell<Vec<TaskHandle>>,
}

/// Handle to running workers. Cloning gives another handle to the same pool.
pub struct WorkerPool<T> {
    queue: RateLimitingQueue<T>,
    shared: Rc<PoolShared>,
}

impl<T> Clone for WorkerPool<T> {
    fn clone(&self) -> Self {
        WorkerPool {
            queue: self.queue.clone(),
            shared: self.shared.clone(),
        }
    }
}

/// Start workers that take items from `queue` and pass each to `reconcile`.
pub fn run_workers<T, E, F, Fut>(
    queue: RateLimitingQueue<T>,
    options: WorkerOptions<T, E>,
    reconcile: F,
) -> WorkerPool<T>
where
    T: Hash + Eq + Clone + 'static,
    E: 'static,
    F: Fn(T) -> Fut + 'static,
    Fut: Future<Output = Result<Reconciled, E>> + 'static,
{
    let shared = Rc::new(PoolShared {
        running: Cell::new(0),
        exited: Notify::new(),
        tasks: RefCell::new(Vec::new()),
    });
    let reconcile = Rc::new(reconcile);
    for _ in 0..options.workers.max(1) {
        shared.running.set(shared.running.get() + 1);
        let task = spawn_local(worker(
            queue.clone(),
            reconcile.clone(),
            options.on_error.clone(),
            options.time_slice,
            ExitGuard {
                pool: shared.clone(),
                _taker: queue.queue().taker(),
            },
        ));
        shared.tasks.borrow_mut().push(task);
    }
    WorkerPool { queue, shared }
}

impl<T: Hash + Eq + Clone + 'static> WorkerPool<T> {
    /// The queue the workers serve.
    pub fn queue(&self) -> &RateLimitingQueue<T> {
        &self.queue
    }

    /// Number of worker tasks still running: 0 once the queue's drain (or
    /// [`stop`](Self::stop)) has returned, and at once after
    /// [`abort`](Self::abort).
    pub fn running(&self) -> usize {
        self.shared.running.get()
    }

    /// Graceful stop: shut the queue down (at the call), let the workers
    /// finish every item already queued or in flight, and resolve once all
    /// of them have exited.
    pub fn stop(&self) -> impl std::future::Future<Output = ()> + 'static {
        // The queue's own method: its future holds no borrow of `self`.
        let drained = self.queue.queue().shut_down_with_drain();
        let shared = self.shared.clone();
        async move {
            drained.await;
            loop {
                let exited = shared.exited.notified();
                if shared.running.get() == 0 {
                    return;
                }
                exited.await;
            }
        }
    }

    /// Hard stop: shut the queue down and cancel the workers at their current
    /// await point (in-flight items are still marked done). The workers count
    /// as exited at once: a cancelled task is dropped, and its in-flight item
    /// marked done, when the executor next polls it, but none of them runs
    /// user code again.
    pub fn abort(&self) {
        self.queue.shut_down();
        for t in self.shared.tasks.borrow().iter() {
            t.abort();
        }
        self.shared.running.set(0);
        self.shared.exited.notify_waiters();
    }
}

/// Counts a worker as exited however its task ends (and as no longer
/// taking items from its queue).
struct ExitGuard<T: Hash + Eq + Clone + 'static> {
    pool: Rc<PoolShared>,
    _taker: Taker<T>,
}

impl<T: Hash + Eq + Clone + 'static> Drop for ExitGuard<T> {
    fn drop(&mut self) {
        self.pool
            .running
            .set(self.pool.running.get().saturating_sub(1));
        self.pool.exited.notify_waiters();
    }
}

/// Marks the item done however processing ends.
struct DoneGuard<'a, T: Hash + Eq + Clone + 'static> {
    queue: &'a Queue<T>,
    item: &'a T,
}

impl<T: Hash + Eq + Clone + 'static> Drop for DoneGuard<'_, T> {
    fn drop(&mut self) {
        self.queue.done(self.item);
    }
}

async fn worker<T, E, F, Fut>(
    queue: RateLimitingQueue<T>,
    reconcile: Rc<F>,
    on_error: Option<ErrorHook<T, E>>,
    time_slice: Option<Duration>,
    _exit: ExitGuard<T>,
) where
    T: Hash + Eq + Clone + 'static,
    F: Fn(T) -> Fut + 'static,
    Fut: Future<Output = Result<Reconciled, E>> + 'static,
{
    let clock = queue.clock().clone();
    let mut slice_start = clock.now();
    loop {
        // An empty queue means `get` will wait, which yields anyway.
        let idle = queue.is_empty();
        let Some(item) = queue.get().await else { break };
        if idle {
            slice_start = clock.now();
        }
        {
            let _done = DoneGuard {
                queue: queue.queue(),
                item: &item,
            };
            match reconcile(item.clone()).await {
                Ok(Reconciled::Done) => queue.forget(&item),
                Ok(Reconciled::Requeue) => {
                    queue.add_rate_limited(item.clone());
                }
                Ok(Reconciled::RequeueAfter(d)) => {
                    queue.forget(&item);
                    queue.add_after(item.clone(), d);
                }
                Err(e) => {
                    queue.add_rate_limited(item.clone());
                    if let Some(hook) = &on_error {
                        hook(&item, e);
                    }
                }
            }
        }
        if let Some(slice) = time_slice {
            if clock.now() - slice_start >= slice {
                yield_now().await;
                slice_start = clock.now();
            }
        }
    }
}
