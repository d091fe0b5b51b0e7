//! Starting the event loops, one thread each over the one listening socket, and stopping
//! them: what the binary and the tests call. Apart from the loops themselves (`lib.rs`), so
//! that the per-request path stays where it was compiled and counted.

use std::io;
use std::net::TcpListener as StdListener;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use mio::net::TcpListener;
use mio::{Interest, Poll, Waker};

use crate::{EventLoop, LISTEN, WAKE};

/// The running event loops.
#[derive(Debug)]
pub struct Floor {
    stop: Arc<AtomicBool>,
    wakers: Vec<Arc<Waker>>,
    loops: Vec<JoinHandle<io::Result<()>>>,
}

/// Starts `loops` event loops serving `listener` (non-blocking, already listening).
pub fn start(listener: &StdListener, loops: NonZeroUsize) -> io::Result<Floor> {
    let stop = Arc::new(AtomicBool::new(false));
    let (mut wakers, mut handles) = (Vec::new(), Vec::new());
    for i in 0..loops.get() {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
        let mut listener = TcpListener::from_std(listener.try_clone()?);
        poll.registry()
            .register(&mut listener, LISTEN, Interest::READABLE)?;
        let stop = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name(format!("floor-{i}"))
            .spawn(move || EventLoop::new(poll, listener).run(&stop))?;
        wakers.push(waker);
        handles.push(handle);
    }
    Ok(Floor {
        stop,
        wakers,
        loops: handles,
    })
}

impl Floor {
    /// Stops every loop and waits for them; open connections are closed.
    pub fn stop(self) -> io::Result<()> {
        self.stop.store(true, Ordering::SeqCst);
        for waker in &self.wakers {
            waker.wake()?;
        }
        for handle in self.loops {
            handle
                .join()
                .map_err(|_| io::Error::other("an event loop panicked"))??;
        }
        Ok(())
    }
}
