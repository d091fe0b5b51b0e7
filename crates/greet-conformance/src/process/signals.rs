//! Signals a server binary must take as a drain: with requests in flight, at once after its
//! listening line, and with connections still in the kernel's accept queue.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};

use super::{start, Signal};
use crate::cases::{self, Outcome};

/// A signal with `in_flight` requests under way at a 1 s delay: every one is answered 200,
/// new connections are refused, and the process exits 0 within the delay plus 1 s.
pub async fn signal_drains_in_flight(bin: &str, signal: Signal, in_flight: usize) -> Outcome {
    let mut server = start(bin, &["--delay-ms", "1000", "--shutdown-timeout-secs", "5"])?;
    let addr = server.addr();
    let requests = tokio::spawn(cases::concurrent_greetings(addr, "/greetings", in_flight));
    // Let every request reach the server and start its delay.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let signalled = Instant::now();
    server.signal(signal)?;

    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = tokio::net::TcpStream::connect(addr).await.is_err();

    let answered = requests.await?;
    let status = tokio::task::spawn_blocking(move || {
        let status = server.wait_timeout(Duration::from_secs(5));
        (status, server.stderr())
    })
    .await?;
    let (status, stderr) = (status.0?, status.1);
    let elapsed = signalled.elapsed();

    answered.map_err(|e| anyhow!("in-flight requests after {signal}: {e:#}"))?;
    if !refused {
        bail!("still accepting connections 200 ms after {signal}");
    }
    match status {
        Some(status) if status.success() && elapsed < Duration::from_secs(2) => Ok(()),
        Some(status) => Err(anyhow!(
            "after {signal}: {status} in {elapsed:?}; stderr: {stderr}"
        )),
        None => Err(anyhow!(
            "still running 5 s after {signal}; stderr: {stderr}"
        )),
    }
}

/// A SIGTERM the moment the server says it listens, as a harness may send it: it exits 0
/// every time, however early the signal came (it is held until the handlers are in place,
/// not taken by the default action). Tried `times` times, to catch a race.
pub fn sigterm_at_the_listening_line_exits_0(bin: &str, times: usize) -> Outcome {
    for i in 1..=times {
        let mut server = start(bin, &["--delay-ms", "0"])?;
        server.signal(Signal::SIGTERM)?;
        match server.wait_timeout(Duration::from_secs(10))? {
            Some(status) if status.success() => {}
            Some(status) => bail!(
                "try {i} of {times}: {status} on a SIGTERM at its listening line; stderr: {}",
                server.stderr()
            ),
            None => bail!("try {i} of {times}: still running 10 s after a SIGTERM"),
        }
    }
    Ok(())
}

/// Connections the kernel completed before a SIGTERM but the server had not taken yet (it is
/// stopped with SIGSTOP while `queued` clients connect and send a request; SIGTERM, then
/// SIGCONT): to their clients they are connected, so each is answered 200, none reset, and the
/// process exits 0.
pub async fn sigterm_serves_the_accept_queue(bin: &str, queued: usize) -> Outcome {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut server = start(bin, &["--delay-ms", "100", "--shutdown-timeout-secs", "5"])?;
    let addr = server.addr();
    // Once it has answered, it serves: a signal now is its drain's, not its start-up's.
    crate::client::get(addr, "/health").await?;
    server.signal(Signal::SIGSTOP)?;
    let mut clients = Vec::with_capacity(queued);
    let connected = async {
        for _ in 0..queued {
            let mut stream = tokio::net::TcpStream::connect(addr).await?;
            stream
                .write_all(b"GET /greetings HTTP/1.1\r\nhost: queue\r\nconnection: close\r\n\r\n")
                .await?;
            clients.push(stream);
        }
        anyhow::Ok(())
    }
    .await;
    server.signal(Signal::SIGTERM)?;
    server.signal(Signal::SIGCONT)?;
    connected.context("connecting to the stopped server")?;

    let mut answers = tokio::task::JoinSet::new();
    for mut stream in clients {
        answers.spawn(async move {
            let mut answer = Vec::new();
            let read = stream.read_to_end(&mut answer);
            match tokio::time::timeout(Duration::from_secs(5), read).await {
                Ok(Ok(_)) if answer.starts_with(b"HTTP/1.1 200") => Ok(()),
                Ok(Ok(_)) => Err(format!(
                    "answered {:?}",
                    String::from_utf8_lossy(&answer[..answer.len().min(40)])
                )),
                Ok(Err(err)) => Err(err.to_string()),
                Err(_) => Err("no answer in 5 s".to_owned()),
            }
        });
    }
    let mut lost = Vec::new();
    while let Some(answer) = answers.join_next().await {
        if let Err(why) = answer? {
            lost.push(why);
        }
    }
    let (status, stderr) = tokio::task::spawn_blocking(move || {
        let status = server.wait_timeout(Duration::from_secs(5));
        (status, server.stderr())
    })
    .await?;
    let status = status?;
    if let Some(first) = lost.first() {
        bail!(
            "{} of {queued} connections queued at SIGTERM were not answered (first: {first}); \
             server {status:?}, stderr: {stderr}",
            lost.len()
        );
    }
    match status {
        Some(status) if status.success() => Ok(()),
        Some(status) => bail!("after SIGTERM: {status}"),
        None => bail!("still running 5 s after SIGTERM"),
    }
}
