//! HTTP/1.1 pipelining on the load generator's connection: a batch of requests written at
//! once, its answers read in order, one outcome each.

use std::time::{Duration, Instant};

use greet_probe::http1::{self, Options};
use tokio::io::AsyncWriteExt;

use super::{Connection, Miss};
use crate::count::{ErrorKind, Opened, Outcome};
use crate::expect::Check;

impl Connection {
    /// Over HTTP/1.1, `batch` (`n` requests back to back, [`super::Request::pipelined`]) written at
    /// once, then the `n` answers read in order, each checked and timed from `began`: one
    /// outcome per request, in order. All within `timeout`; what is unanswered then, or
    /// after the connection failed, fails with it. A kept-alive connection the server had
    /// closed before anything came is replaced once, as [`Self::send`] does.
    pub(crate) async fn send_pipelined(
        &mut self,
        batch: &[u8],
        n: usize,
        check: &Check,
        timeout: Duration,
        began: Instant,
    ) -> Vec<Outcome> {
        let mut outcomes = Vec::with_capacity(n);
        let mut connect = None;
        let attempt = async {
            match self
                .exchange_batch(batch, n, check, began, &mut connect, &mut outcomes)
                .await
            {
                Err(Miss::Stale) if outcomes.is_empty() => {
                    self.close().await;
                    self.exchange_batch(batch, n, check, began, &mut connect, &mut outcomes)
                        .await
                }
                done => done,
            }
            .map_err(ErrorKind::from)
        };
        let failed = match tokio::time::timeout(timeout, attempt).await {
            Ok(Ok(())) => None,
            Ok(Err(kind)) => Some(kind),
            Err(_) => Some(ErrorKind::Timeout),
        };
        if let Some(kind) = failed {
            self.close().await;
            // The first request not answered keeps the connect it made, if none was answered.
            outcomes.resize_with(n, || Outcome::Failed {
                kind,
                connect: connect.take(),
            });
        }
        outcomes
    }

    async fn exchange_batch(
        &mut self,
        batch: &[u8],
        n: usize,
        check: &Check,
        began: Instant,
        connect: &mut Option<Opened>,
        outcomes: &mut Vec<Outcome>,
    ) -> Result<(), Miss> {
        let reused = self.http1.is_some();
        if !reused {
            let (io, opened) = self.wire.open(self.addr, Instant::now()).await?;
            self.http1 = Some(io);
            *connect = Some(opened);
        }
        let Some(io) = self.http1.as_mut() else {
            return Err(Miss::Failed(ErrorKind::Connect));
        };
        self.buf.clear();
        let written = async {
            io.write_all(batch).await?;
            io.flush().await
        };
        if written.await.is_err() {
            return Err(if reused {
                Miss::Stale
            } else {
                Miss::Failed(ErrorKind::Io)
            });
        }
        for i in 0..n {
            // `read` keeps what follows an answer in `buf`: the next answers.
            if http1::read(io, &mut self.buf, &mut self.res, Options::default())
                .await
                .is_err()
            {
                let nothing_came = i == 0 && self.buf.is_empty() && self.res.status() == 0;
                return Err(if reused && nothing_came {
                    Miss::Stale
                } else {
                    Miss::Failed(ErrorKind::Io)
                });
            }
            let connect = connect.take();
            outcomes.push(match check.bytes(self.res.status(), self.res.body()) {
                Ok(bytes) => Outcome::Ok {
                    latency: began.elapsed(),
                    connect,
                    bytes,
                },
                Err(kind) => Outcome::Failed { kind, connect },
            });
            if !self.res.keep_alive() {
                self.http1 = None;
                return match i + 1 == n {
                    true => Ok(()),
                    false => Err(Miss::Failed(ErrorKind::Io)),
                };
            }
        }
        // Bytes after the last answer: some answer's framing was wrong.
        if !self.buf.is_empty() {
            return Err(Miss::Failed(ErrorKind::Io));
        }
        Ok(())
    }
}
