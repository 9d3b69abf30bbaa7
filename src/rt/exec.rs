use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::{AbortHandle, Abortable};

/// Handle to a task spawned with [`spawn_local`]. Dropping it detaches the task;
/// [`abort`](TaskHandle::abort) cancels it at its next suspension point, dropping
/// its future (and with it any fetch or timer it owns).
#[derive(Debug, Clone)]
pub struct TaskHandle {
    abort: AbortHandle,
}

impl TaskHandle {
    /// Cancel the task. Idempotent.
    pub fn abort(&self) {
        self.abort.abort();
    }

    /// Whether [`abort`](TaskHandle::abort) has been called.
    pub fn is_aborted(&self) -> bool {
        self.abort.is_aborted()
    }
}

/// Spawn a future on the local (single-threaded) executor.
///
/// In wasm this is the JS microtask queue via `wasm-bindgen-futures`; natively it
/// is a thread-local pool driven by `block_on` (and, in tests,
/// `run_until_stalled`).
pub fn spawn_local<F>(fut: F) -> TaskHandle
where
    F: Future<Output = ()> + 'static,
{
    spawn_boxed(Box::pin(fut))
}

/// One instance of the abort wrapper and of the executor's task for every
/// spawned future (each future type would otherwise get its own copies).
#[inline(never)]
fn spawn_boxed(fut: Pin<Box<dyn Future<Output = ()>>>) -> TaskHandle {
    let (abort, reg) = AbortHandle::new_pair();
    let task = async move {
        let _ = Abortable::new(fut, reg).await;
    };
    platform::spawn(task);
    TaskHandle { abort }
}

/// Yield to the host event loop so a long job does not block rendering or I/O.
///
/// In wasm this waits for the next macrotask (`setImmediate` where the host
/// has it, as Node does, else a zero-delay timeout), which lets the browser
/// paint and deliver input between batches; natively it re-queues the
/// current task once.
pub async fn yield_now() {
    platform::yield_now().await
}

/// A future that is pending exactly once, after waking itself.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[cfg(target_arch = "wasm32")]
mod platform {
    use super::*;
    use wasm_bindgen::prelude::*;

    pub fn spawn(task: impl Future<Output = ()> + 'static) {
        wasm_bindgen_futures::spawn_local(task);
    }

    #[wasm_bindgen(module = "/src/rt/host.js")]
    extern "C" {
        #[wasm_bindgen(js_name = nextTask)]
        fn next_task() -> js_sys::Promise;
    }

    pub async fn yield_now() {
        // The promise only resolves (nothing rejects it); an error would only
        // mean the wait ended early, which a yield can live with.
        let _ = wasm_bindgen_futures::JsFuture::from(next_task()).await;
        // Keep the helper used on every target.
        YieldOnce(true).await;
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod platform {
    use super::*;
    use futures::executor::{LocalPool, LocalSpawner};
    use futures::task::LocalSpawnExt;
    use std::cell::RefCell;

    thread_local! {
        static POOL: RefCell<LocalPool> = RefCell::new(LocalPool::new());
        static SPAWNER: LocalSpawner = POOL.with(|p| p.borrow().spawner());
    }

    pub fn spawn(task: impl Future<Output = ()> + 'static) {
        // Spawning only fails once the pool is gone (thread teardown), when
        // dropping the task is the right outcome.
        let _ = SPAWNER.try_with(|s| s.spawn_local(task));
    }

    /// Make the spawner before the pool is borrowed to run: made lazily by
    /// a task's first `spawn_local`, it would borrow the running pool.
    fn ensure_spawner() {
        let _ = SPAWNER.try_with(|_| ());
    }

    pub async fn yield_now() {
        YieldOnce(false).await
    }

    #[cfg(any(test, feature = "testing"))]
    pub fn run_until_stalled() {
        ensure_spawner();
        POOL.with(|p| p.borrow_mut().run_until_stalled());
    }

    pub fn block_on<F: Future>(f: F) -> F::Output {
        ensure_spawner();
        POOL.with(|p| p.borrow_mut().run_until(f))
    }
}

/// Run every spawned task on this thread until none can make progress (native
/// tests only). Must not be called from inside a task.
#[cfg(all(not(target_arch = "wasm32"), any(test, feature = "testing")))]
pub fn run_until_stalled() {
    platform::run_until_stalled()
}

/// Drive `f` to completion, running spawned tasks alongside it (native only).
/// Must not be called from inside a task.
#[cfg(not(target_arch = "wasm32"))]
pub fn block_on<F: Future>(f: F) -> F::Output {
    platform::block_on(f)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn spawned_tasks_run_and_abort_cancels() {
        let hits = Rc::new(Cell::new(0));
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let h = hits.clone();
        let handle = spawn_local(async move {
            h.set(h.get() + 1);
            let _ = rx.await;
            h.set(h.get() + 10);
        });
        run_until_stalled();
        assert_eq!(hits.get(), 1);
        handle.abort();
        let _ = tx.send(());
        run_until_stalled();
        assert_eq!(hits.get(), 1, "an aborted task never resumes");
        assert!(handle.is_aborted());
    }

    #[test]
    fn yield_now_lets_other_tasks_run() {
        let log = Rc::new(std::cell::RefCell::new(Vec::new()));
        for id in 0..2 {
            let log = log.clone();
            spawn_local(async move {
                for step in 0..2 {
                    log.borrow_mut().push((id, step));
                    yield_now().await;
                }
            });
        }
        run_until_stalled();
        assert_eq!(*log.borrow(), vec![(0, 0), (1, 0), (0, 1), (1, 1)]);
        assert_eq!(block_on(async { 7 }), 7);
    }

    /// On a thread that has spawned nothing yet, the first spawn happens
    /// inside `block_on` (the README's flow, run natively).
    #[test]
    fn block_on_runs_what_is_spawned_inside_it_on_a_fresh_thread() {
        let ran = std::thread::spawn(|| {
            let ran = Rc::new(Cell::new(false));
            let r = ran.clone();
            block_on(async move {
                spawn_local(async move { r.set(true) });
                yield_now().await;
            });
            ran.get()
        })
        .join()
        .expect("no panic");
        assert!(ran);
    }
}
