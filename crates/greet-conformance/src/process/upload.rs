//! A server binary with uploads: memory that stays flat however large the body, and an
//! upload in flight when SIGTERM comes.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use greet_probe::procfs;

use super::{start, Signal};
use crate::cases::{self, Outcome};

/// An upload in flight when SIGTERM comes (8 MiB sent over a second, the signal half-way)
/// completes: it is answered with its whole count, and once its client has gone the process
/// exits 0 within 3 s.
pub async fn sigterm_lets_an_upload_finish(bin: &str) -> Outcome {
    use tokio::io::AsyncWriteExt;
    const SIZE: usize = 8 << 20;
    let mut server = start(bin, &["--delay-ms", "0", "--shutdown-timeout-secs", "5"])?;
    let addr = server.addr();
    crate::client::get(addr, "/health").await?;
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let head = format!("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: {SIZE}\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    let chunk = vec![7u8; SIZE / 16];
    for i in 0..16 {
        if i == 8 {
            server.signal(Signal::SIGTERM)?;
        }
        stream.write_all(&chunk).await?;
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    let (mut buf, mut res) = (Vec::new(), greet_probe::http1::Response::new());
    greet_probe::http1::read(&mut stream, &mut buf, &mut res, Default::default())
        .await
        .map_err(|e| anyhow!("the upload in flight at SIGTERM: {e}"))?;
    let received: greet_core::upload::Received =
        serde_json::from_slice(res.body()).with_context(|| {
            format!(
                "the upload in flight at SIGTERM: {} {:?}",
                res.status(),
                res.text()
            )
        })?;
    if received.bytes != SIZE as u64 {
        bail!(
            "the upload in flight at SIGTERM counted {} bytes of {SIZE}",
            received.bytes
        );
    }
    // The client goes, as one would: the server has nothing left to drain, and exits.
    drop(stream);
    let waited = Instant::now();
    let status = tokio::task::spawn_blocking(move || {
        (server.wait_timeout(Duration::from_secs(5)), server.stderr())
    })
    .await?;
    match status {
        (Ok(Some(status)), _) if status.success() && waited.elapsed() < Duration::from_secs(3) => {
            Ok(())
        }
        (status, stderr) => bail!(
            "after SIGTERM and the upload: {status:?} {:?} after the client went; stderr: {stderr}",
            waited.elapsed()
        ),
    }
}

/// An upload of `size` bytes (declared, sent as fast as the server takes it) leaves the
/// server's peak RSS within 8 MiB of what it was before: the body is streamed, never held.
pub async fn an_upload_leaves_memory_flat(bin: &str, size: u64) -> Outcome {
    use tokio::io::AsyncWriteExt;
    let max = (size + 1).to_string();
    let server = start(bin, &["--delay-ms", "0", "--max-upload", &max])?;
    let addr = server.addr();
    cases::health_is_ok(addr).await?;
    let peak = || {
        procfs::status(server.pid())
            .map(|s| s.hwm_kib)
            .context("no /proc status")
    };
    let before = peak()?;
    let started = Instant::now();
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let head = format!("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    let chunk = vec![0u8; 256 << 10];
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        stream.write_all(&chunk[..n]).await?;
        left -= n as u64;
    }
    let (mut buf, mut res) = (Vec::new(), greet_probe::http1::Response::new());
    greet_probe::http1::read(&mut stream, &mut buf, &mut res, Default::default()).await?;
    let took = started.elapsed();
    let after = peak()?;
    let received: greet_core::upload::Received = serde_json::from_slice(res.body())
        .with_context(|| format!("upload answered {} {:?}", res.status(), res.text()))?;
    eprintln!(
        "{bin}: {} MiB uploaded in {took:?}: peak RSS {before} KiB before, {after} KiB after",
        size >> 20
    );
    if received.bytes != size {
        bail!("the upload counted {} bytes of {size}", received.bytes);
    }
    if after > before + 8 * 1024 {
        bail!("peak RSS went from {before} KiB to {after} KiB with a {size}-byte upload");
    }
    Ok(())
}
