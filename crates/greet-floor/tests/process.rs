//! The reference server's binary over real sockets: its answers, pipelining, HEAD, closing
//! and refusing, and a clean stop on SIGTERM.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use greet_conformance::client::{exchange, get, request};
use greet_launch::process::{Launch, ServerProcess, Signal};

fn floor() -> ServerProcess {
    Launch::new(env!("CARGO_BIN_EXE_greet-floor"))
        .args(["--host", "127.0.0.1", "--workers", "2"])
        .start()
        .expect("greet-floor starts and logs its address")
}

#[tokio::test]
async fn answers_its_endpoints_with_date_and_length() {
    let server = floor();
    let addr = server.addr();
    for (path, status, body, content_type) in [
        ("/health", 200, "ok", greet_core::CONTENT_TYPE),
        ("/plaintext", 200, "Hello, World!", greet_core::CONTENT_TYPE),
        (
            "/json",
            200,
            r#"{"message":"Hello, World!"}"#,
            greet_core::JSON_CONTENT_TYPE,
        ),
        ("/nowhere", 404, "not found", greet_core::CONTENT_TYPE),
    ] {
        let res = get(addr, path).await.expect(path);
        assert_eq!(
            (res.status(), res.text().as_str()),
            (status, body),
            "{path}"
        );
        assert_eq!(res.header("content-type"), Some(content_type), "{path}");
        assert_eq!(res.header("server"), Some("greet-floor"));
        let date = res.header("date").expect("a Date header");
        assert!(httpdate::parse_http_date(date).is_ok(), "{date}");
    }
}

#[tokio::test]
async fn greets_by_name_at_once_and_refuses_a_bad_name() {
    let server = floor();
    for (path, name) in [
        ("/greetings?name=Ada", "Ada"),
        ("/greetings/blocking?name=J%C3%BAlia+M", "Júlia M"),
        ("/greetings", "World"),
    ] {
        let text = get(server.addr(), path).await.expect(path).text();
        let (word, rest) = text.split_once(' ').expect("<word> <name>!");
        assert!(greet_core::WORDS.contains(&word), "{text}");
        assert_eq!(rest, format!("{name}!"));
    }
    let bad = get(server.addr(), "/greetings?name=%zz").await.unwrap();
    assert_eq!(bad.status(), 400);
}

#[tokio::test]
async fn head_has_the_length_and_no_body_and_other_methods_are_refused() {
    let server = floor();
    let head = exchange(server.addr(), &request("HEAD", "/plaintext", ""), true)
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.header("content-length"), Some("13"));
    assert!(head.body().is_empty());
    let post = request("POST", "/plaintext", "Content-Length: 3\r\n");
    let mut raw = post.clone();
    raw.extend_from_slice(b"abc");
    let refused = exchange(server.addr(), &raw, false).await.unwrap();
    assert_eq!(refused.status(), 405);
    assert_eq!(refused.header("allow"), Some(greet_core::ALLOWED_METHODS));
}

/// Sixteen requests in one write, as TechEmpower's plaintext test pipelines them, come back
/// in order on one connection; `Connection: close` then closes it after its answer.
#[test]
fn pipelined_requests_are_answered_in_order_then_close_closes() {
    let server = floor();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let one = "GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut batch = one.repeat(15);
    batch += "GET /json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    // Split mid-request, so a request arriving in two reads is kept for the next.
    let (a, b) = batch.as_bytes().split_at(one.len() * 7 + 5);
    stream.write_all(a).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    stream.write_all(b).unwrap();
    let mut all = String::new();
    stream.read_to_string(&mut all).expect("the server closes");
    assert_eq!(all.matches("HTTP/1.1 200 OK").count(), 16, "{all}");
    assert_eq!(all.matches("Hello, World!").count(), 16);
    assert!(all.ends_with(r#"{"message":"Hello, World!"}"#), "{all}");
    assert_eq!(all.matches("connection: close").count(), 1);
}

/// Answers that do not fit the socket wait for it: a client that sends 100,000 pipelined
/// requests before reading any answer gets every one, in order.
#[test]
fn a_client_that_reads_late_gets_every_answer() {
    let server = floor();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let n = 100_000;
    let mut batch = "GET /json HTTP/1.1\r\nHost: x\r\n\r\n".repeat(n - 1);
    batch += "GET /plaintext HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let writer = {
        let mut stream = stream.try_clone().unwrap();
        std::thread::spawn(move || stream.write_all(batch.as_bytes()))
    };
    // Let the answers pile up in the server before the first read.
    std::thread::sleep(Duration::from_millis(300));
    let mut all = String::new();
    stream.read_to_string(&mut all).expect("the server closes");
    writer.join().unwrap().unwrap();
    assert_eq!(all.matches("HTTP/1.1 200 OK").count(), n);
    assert!(
        all.ends_with("Hello, World!"),
        "{}",
        &all[all.len() - 100..]
    );
}

#[test]
fn garbage_is_a_400_and_a_closed_connection() {
    let server = floor();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(b"NOT HTTP\0\r\n\r\n").unwrap();
    let mut all = String::new();
    stream.read_to_string(&mut all).unwrap();
    assert!(all.starts_with("HTTP/1.1 400 Bad Request"), "{all}");
}

#[test]
fn sigterm_stops_it_with_exit_0_and_tls_flags_are_refused() {
    let mut server = floor();
    let addr: SocketAddr = server.addr();
    assert!(TcpStream::connect(addr).is_ok());
    server.signal(Signal::SIGTERM).unwrap();
    let status = server
        .wait_timeout(Duration::from_secs(5))
        .unwrap()
        .expect("it stops within 5 s");
    assert!(status.success(), "{status}");

    // TLS flags are refused as bad flags, before a start-up line could name TLS.
    let tls = std::process::Command::new(env!("CARGO_BIN_EXE_greet-floor"))
        .args(["--port", "0", "--tls-self-signed"])
        .output()
        .expect("greet-floor runs");
    let stderr = String::from_utf8_lossy(&tls.stderr);
    assert_eq!(tls.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cleartext only"), "{stderr}");
    assert!(!stderr.contains("listening"), "{stderr}");
}

#[test]
fn its_start_up_line_names_only_http_1_1() {
    let server = floor();
    let line = server.stderr();
    let line = line
        .lines()
        .find(|l| l.contains("listening"))
        .expect("a listening line");
    assert!(line.contains("protocols=\"http: http/1.1\""), "{line}");
}

/// A SIGTERM at the floor's listening line, as the harness may send it: a clean exit every
/// time (the shared main holds the signal back before that line).
#[test]
fn sigterm_at_the_listening_line_drains_every_time() {
    let bin = env!("CARGO_BIN_EXE_greet-floor");
    if let Err(why) = greet_conformance::process::sigterm_at_the_listening_line_exits_0(bin, 25) {
        panic!("{why:#}");
    }
}
