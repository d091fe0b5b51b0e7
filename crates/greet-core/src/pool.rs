//! A bounded pool of OS threads for `/greetings/blocking`: the servlet thread-per-request
//! model, in Rust.
//!
//! Threads start on demand, one per job waiting, up to the bound, and then stay (as a servlet
//! container's workers do); further jobs queue until a thread is free. It is a pool of its own
//! rather than the runtime's `spawn_blocking`, because actix-web runs one runtime per worker,
//! each with its own blocking pool, and the bound must be one number for the whole server.

use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use crate::GreetError;

type Job = Box<dyn FnOnce() + Send + 'static>;

/// A handle to the pool; clones share the same threads.
#[derive(Clone)]
pub struct BlockingPool {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for BlockingPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingPool")
            .field("max_threads", &self.shared.max_threads)
            .finish_non_exhaustive()
    }
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    max_threads: usize,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    threads: usize,
    /// Threads waiting for work and not yet woken.
    idle: usize,
    /// Wake-ups sent and not yet taken: tells a real wake-up from a spurious one.
    wakeups: usize,
}

impl BlockingPool {
    /// A pool of at most `max_threads` threads; none is started until a job arrives.
    pub fn new(max_threads: NonZeroUsize) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
                max_threads: max_threads.get(),
            }),
        }
    }

    /// Threads started so far.
    pub fn threads(&self) -> usize {
        self.shared.lock().threads
    }

    /// Runs `f` on a pool thread and waits for it without blocking the caller's runtime.
    pub async fn run<F, R>(&self, f: F) -> Result<R, GreetError>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.execute(Box::new(move || {
            // The receiver is gone when the client went away: nothing to do then.
            let _ = tx.send(f());
        }));
        rx.await.map_err(|_| GreetError::Unavailable)
    }

    fn execute(&self, job: Job) {
        let mut state = self.shared.lock();
        state.queue.push_back(job);
        if state.idle > 0 {
            state.idle -= 1;
            state.wakeups += 1;
            self.shared.wake.notify_one();
        } else if state.threads < self.shared.max_threads {
            state.threads += 1;
            let shared = Arc::clone(&self.shared);
            let spawned = std::thread::Builder::new()
                .name("greet-blocking".into())
                .stack_size(256 * 1024)
                .spawn(move || shared.work());
            if let Err(err) = spawned {
                state.threads -= 1;
                tracing::warn!(%err, "could not start a blocking-pool thread");
                if state.threads == 0 {
                    // No thread will ever take it: dropping the job fails its caller (503).
                    state.queue.pop_back();
                }
            }
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Jobs run outside the lock, so a poisoned lock still holds consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn work(&self) {
        let mut state = self.lock();
        loop {
            while let Some(job) = state.queue.pop_front() {
                drop(state);
                job();
                state = self.lock();
            }
            state.idle += 1;
            loop {
                state = self
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                if state.wakeups > 0 {
                    state.wakeups -= 1;
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn never_runs_more_than_the_bound_at_once() {
        let pool = BlockingPool::new(NonZeroUsize::new(4).unwrap());
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let jobs = (0..20).map(|i| {
            let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
            let pool = pool.clone();
            async move {
                pool.run(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                    i
                })
                .await
            }
        });
        let handles: Vec<_> = jobs.map(tokio::spawn).collect();
        let mut results = Vec::new();
        for handle in handles {
            results.push(handle.await.unwrap());
        }
        assert_eq!(results, (0..20).map(Ok).collect::<Vec<_>>());
        assert_eq!(peak.load(Ordering::SeqCst), 4);
        assert_eq!(pool.threads(), 4);
    }

    #[tokio::test]
    async fn reuses_idle_threads() {
        let pool = BlockingPool::new(NonZeroUsize::new(8).unwrap());
        for i in 0..10 {
            assert_eq!(pool.run(move || i * 2).await, Ok(i * 2));
            // Let the thread get back to waiting: it is idle only once it does.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(pool.threads(), 1);
    }
}
