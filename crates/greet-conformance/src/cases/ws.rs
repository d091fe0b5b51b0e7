//! `GET /ws` as the contract has it (`greet_core::ws`): what is sent comes back, pings are
//! answered, closes are answered; a message over the limit, a broken frame, an idle socket
//! and a shutdown each close with their own code.

use futures_util::{SinkExt, StreamExt};
use greet_core::ws::{GOING_AWAY, IDLE, IDLE_TIMEOUT, MAX_MESSAGE_BYTES, PROTOCOL, TOO_BIG};
use rand::RngExt;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message as Msg;
use tokio_tungstenite::WebSocketStream;

use super::*;

type Socket = WebSocketStream<TcpStream>;

/// How long a case waits for any one answer.
const WAIT: Duration = Duration::from_secs(5);

/// A socket on `addr`'s `/ws`, its `101` checked.
async fn open(addr: SocketAddr) -> anyhow::Result<Socket> {
    let tcp = TcpStream::connect(addr).await?;
    let url = format!("ws://{addr}{}", paths::WS);
    let (socket, res) = tokio::time::timeout(WAIT, tokio_tungstenite::client_async(url, tcp))
        .await
        .map_err(|_| anyhow!("GET /ws: no handshake in {WAIT:?}"))?
        .map_err(|e| anyhow!("GET /ws: handshake: {e}"))?;
    ensure!(
        res.headers().contains_key("server"),
        "GET /ws: 101 without a server header"
    );
    Ok(socket)
}

/// The next message but pongs, within [`WAIT`]; `None` once the socket has ended.
async fn next(socket: &mut Socket, what: &str) -> anyhow::Result<Option<Msg>> {
    next_within(socket, WAIT, what).await
}

async fn next_within(
    socket: &mut Socket,
    wait: Duration,
    what: &str,
) -> anyhow::Result<Option<Msg>> {
    loop {
        let read = tokio::time::timeout(wait, socket.next())
            .await
            .map_err(|_| anyhow!("{what}: nothing in {wait:?}"))?;
        return match read {
            None => Ok(None),
            Some(Ok(Msg::Pong(_))) => continue,
            Some(Ok(message)) => Ok(Some(message)),
            Some(Err(err)) => Err(anyhow!("{what}: {err}")),
        };
    }
}

/// Sends `message` and expects it back as it went.
async fn round_trip(socket: &mut Socket, message: Msg, what: &str) -> Outcome {
    socket.send(message.clone()).await?;
    let echo = next(socket, what).await?;
    ensure!(
        echo.as_ref() == Some(&message),
        "{what}: echoed {:?}, want {} bytes back",
        echo.map(|m| elide(&format!("{m:?}"), 60)),
        message.len()
    );
    Ok(())
}

/// Reads until the server's close and expects `code` in it.
async fn expect_close(socket: &mut Socket, code: u16, what: &str) -> Outcome {
    expect_close_within(socket, WAIT, code, what).await
}

async fn expect_close_within(
    socket: &mut Socket,
    wait: Duration,
    code: u16,
    what: &str,
) -> Outcome {
    loop {
        match next_within(socket, wait, what).await? {
            Some(Msg::Close(Some(frame))) => {
                ensure!(
                    u16::from(frame.code) == code,
                    "{what}: closed with {} {:?}, want {code}",
                    u16::from(frame.code),
                    frame.reason.as_str()
                );
                return Ok(());
            }
            Some(Msg::Close(None)) => bail!("{what}: closed without a code, want {code}"),
            Some(_) => continue,
            None => bail!("{what}: ended without a close frame, want {code}"),
        }
    }
}

fn random_bytes(len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    rand::rng().fill(&mut bytes[..]);
    bytes
}

/// `/ws` echoes text (empty, and not ASCII), binary, a message in three fragments and one of
/// the largest size; a ping gets its pong; 100 messages sent at once come back in order;
/// a close gets its close, with the client's code.
pub async fn ws_echoes(addr: SocketAddr) -> Outcome {
    let mut socket = open(addr).await?;
    for (message, what) in [
        (Msg::text("Olá, sockets!"), "text"),
        (Msg::text(""), "empty text"),
        (Msg::binary(random_bytes(1000)), "binary"),
        (
            Msg::binary(random_bytes(MAX_MESSAGE_BYTES)),
            "binary of the limit",
        ),
    ] {
        round_trip(&mut socket, message, &format!("/ws {what}")).await?;
    }
    let text = OpCode::Data(Data::Text);
    let fragments = [
        Frame::message("one ", text, false),
        Frame::message("two ", OpCode::Data(Data::Continue), false),
        Frame::message("three", OpCode::Data(Data::Continue), true),
    ];
    for fragment in fragments {
        socket.send(Msg::Frame(fragment)).await?;
    }
    let echo = next(&mut socket, "/ws fragments").await?;
    ensure!(
        echo == Some(Msg::text("one two three")),
        "/ws fragments: echoed {echo:?}"
    );
    socket.send(Msg::Ping("are you there".into())).await?;
    let pong = tokio::time::timeout(WAIT, socket.next()).await;
    ensure!(
        matches!(&pong, Ok(Some(Ok(Msg::Pong(p)))) if &p[..] == b"are you there"),
        "/ws ping: answered {pong:?}"
    );
    let many: Vec<Msg> = (0..100)
        .map(|i| Msg::text(format!("message {i}")))
        .collect();
    for message in &many {
        socket.feed(message.clone()).await?;
    }
    socket.flush().await?;
    for (i, message) in many.iter().enumerate() {
        let echo = next(&mut socket, "/ws 100 at once").await?;
        ensure!(
            echo.as_ref() == Some(message),
            "/ws 100 at once: message {i} came back as {echo:?}"
        );
    }
    let bye = CloseFrame {
        code: 4000.into(),
        reason: "bye".into(),
    };
    socket.send(Msg::Close(Some(bye))).await?;
    expect_close(&mut socket, 4000, "/ws close").await?;
    ensure!(
        next(&mut socket, "/ws after close").await?.is_none(),
        "/ws: the socket goes on after the close"
    );
    Ok(())
}

/// A message over the limit closes with 1009, in one frame or in fragments; an unmasked
/// frame (RFC 6455 §5.1) closes with 1002; and the server echoes on a new socket after each.
pub async fn ws_closes_on_bad_messages(addr: SocketAddr) -> Outcome {
    let mut socket = open(addr).await?;
    socket
        .send(Msg::binary(random_bytes(MAX_MESSAGE_BYTES + 1)))
        .await?;
    expect_close(&mut socket, TOO_BIG.code, "/ws one frame over the limit").await?;

    let mut socket = open(addr).await?;
    let half = random_bytes(MAX_MESSAGE_BYTES / 2 + 1);
    let binary = OpCode::Data(Data::Binary);
    socket
        .send(Msg::Frame(Frame::message(half.clone(), binary, false)))
        .await?;
    let last = Frame::message(half, OpCode::Data(Data::Continue), true);
    socket.send(Msg::Frame(last)).await?;
    expect_close(&mut socket, TOO_BIG.code, "/ws fragments over the limit").await?;

    let code = unmasked_frame_closes(addr).await?;
    ensure!(
        code == PROTOCOL.code,
        "/ws unmasked frame: closed with {code}, want {}",
        PROTOCOL.code
    );
    round_trip(&mut open(addr).await?, Msg::text("still here"), "/ws after").await
}

/// Sends a text frame without the client's mask on a raw handshake and returns the code of
/// the close it gets.
async fn unmasked_frame_closes(addr: SocketAddr) -> anyhow::Result<u16> {
    let mut tcp = TcpStream::connect(addr).await?;
    let handshake = "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                     Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    tcp.write_all(handshake.as_bytes()).await?;
    let mut read = Vec::new();
    let exchange = async {
        let mut buf = [0u8; 1024];
        while !read.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = tcp.read(&mut buf).await?;
            ensure!(n > 0, "closed during the handshake");
            read.extend_from_slice(&buf[..n]);
        }
        ensure!(read.starts_with(b"HTTP/1.1 101"), "no 101");
        let end = read.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4;
        read.drain(..end);
        tcp.write_all(&[0x81, 0x02, b'h', b'i']).await?;
        while read.len() < 4 {
            let n = tcp.read(&mut buf).await?;
            ensure!(n > 0, "closed without a close frame");
            read.extend_from_slice(&buf[..n]);
        }
        ensure!(
            read[0] == 0x88,
            "answered frame {:#04x}, want a close",
            read[0]
        );
        Ok(u16::from_be_bytes([read[2], read[3]]))
    };
    tokio::time::timeout(WAIT, exchange)
        .await
        .map_err(|_| anyhow!("/ws unmasked frame: nothing in {WAIT:?}"))?
        .map_err(|e: anyhow::Error| anyhow!("/ws unmasked frame: {e}"))
}

/// A socket that sends nothing is closed with 1000 once [`IDLE_TIMEOUT`] has passed, not
/// before; one that keeps sending is not.
pub async fn ws_idle_is_closed(addr: SocketAddr) -> Outcome {
    let (mut idle, mut busy) = (open(addr).await?, open(addr).await?);
    let started = Instant::now();
    let keep_busy = async {
        while started.elapsed() < IDLE_TIMEOUT + Duration::from_secs(1) {
            round_trip(&mut busy, Msg::text("busy"), "/ws busy").await?;
            tokio::time::sleep(IDLE_TIMEOUT / 5).await;
        }
        Ok::<_, anyhow::Error>(())
    };
    let (closed, kept) = tokio::join!(
        expect_close_within(&mut idle, IDLE_TIMEOUT + WAIT, IDLE.code, "/ws idle"),
        keep_busy
    );
    let waited = started.elapsed();
    closed?;
    kept?;
    ensure!(
        waited >= IDLE_TIMEOUT - Duration::from_millis(100),
        "/ws idle: closed after {waited:?}, before {IDLE_TIMEOUT:?}"
    );
    round_trip(&mut busy, Msg::text("still busy"), "/ws busy after").await
}

/// On shutdown (`stop`, which returns once the server has exited) open sockets close with
/// 1001, and the server waits for them: it exits once they have, well within its drain.
pub async fn ws_goes_away_on_shutdown(
    addr: SocketAddr,
    stop: impl FnOnce() + Send + 'static,
) -> Outcome {
    let mut sockets = [open(addr).await?, open(addr).await?];
    round_trip(&mut sockets[0], Msg::text("before"), "/ws before shutdown").await?;
    let stopped = tokio::task::spawn_blocking(stop);
    for (i, socket) in sockets.iter_mut().enumerate() {
        let what = format!("/ws {i} on shutdown");
        expect_close(socket, GOING_AWAY.code, &what).await?;
        // The client's close in answer lets the server go.
        let _ = socket.close(None).await;
    }
    tokio::time::timeout(WAIT, stopped)
        .await
        .map_err(|_| anyhow!("/ws shutdown: the server still runs after {WAIT:?}"))??;
    Ok(())
}
