//! The contract, one async function per rule of the API (the README's table). Each takes the
//! address of a running server and returns `Err` with what differed, in one short line. The
//! contract suite runs every case against every server; [`crate::check`] runs the quick ones
//! before a benchmark.
//!
//! Cases that need a particular server configuration say so in their docs.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure};
use greet_core::limits::{MAX_HEADERS, MAX_HEAD_BYTES, MAX_TARGET_BYTES};
use greet_core::name::MAX_NAME_CHARS;
use greet_core::records::{self, Business, Message, World};
use greet_core::{
    paths, GreetError, ALLOWED_METHODS, CONTENT_TYPE, GREETINGS_METHODS, HTML_CONTENT_TYPE,
    JSON_CONTENT_TYPE, NOSNIFF_HEADER, NOSNIFF_VALUE, UPLOAD_METHODS, WORDS, WS_METHODS,
};
use greet_probe::http1;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::client::{exchange, exchange_within, get, get_request, request, Response};
use greetings::expect_greeting_at;

pub use crate::Outcome;

mod bad_inputs;
mod compression;
mod greetings;
mod post;
mod statics;
mod techempower;
mod upload;
mod ws;

pub use bad_inputs::bad_inputs_get_their_answers;
pub use compression::{compression_follows_accept_encoding, compression_off_sends_as_is};
pub use greetings::{
    blocking_endpoint_greets, blocking_pool_is_bounded, concurrent_greetings,
    decodes_form_urlencoding, delay_does_not_block, empty_name_is_world, every_word_appears,
    greets_by_name, greets_world, head_has_no_body, ignores_other_parameters, joins_repeated_names,
    rejects_bad_encoding, rejects_control_characters, rejects_long_names,
};
pub use post::{post_greets_as_json, post_refuses_bad_bodies};
pub use statics::{static_files_are_served, static_files_stay_inside, static_fixture};
pub use upload::{
    upload_counts_and_checksums, upload_refuses_over_http2, upload_refuses_over_the_limit,
    upload_stall_is_cut,
};
pub use ws::{ws_closes_on_bad_messages, ws_echoes, ws_goes_away_on_shutdown, ws_idle_is_closed};

pub use techempower::{
    cached_queries_follow_techempower, db_answers_a_world_row, fortunes_are_sorted_and_escaped,
    json_says_hello, pipelined_requests_answer_in_order, pipelined_targets, plaintext_says_hello,
    queries_follow_techempower, updates_follow_techempower,
};

/// `text` cut to `max` characters, with `…` where it was cut: failure messages stay one
/// short line even when they quote an 8 KiB request target or a foreign server's page.
pub fn elide(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The first line of a raw request, elided, to name it in a message.
fn request_line(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    elide(text.lines().next().unwrap_or_default(), 48)
}

async fn fetch(addr: SocketAddr, raw: &[u8], head: bool) -> anyhow::Result<Response> {
    exchange(addr, raw, head)
        .await
        .map_err(|e| anyhow!("{:?}: {e}", request_line(raw)))
}

async fn fetch_get(addr: SocketAddr, target: &str) -> anyhow::Result<Response> {
    fetch(addr, &get_request(target), false).await
}

/// Every response: plain text, `nosniff`, and a `content-length` that matches the body sent
/// (nothing follows the body before the server closes). For the answer to a HEAD, only that
/// the length is there and that no body follows.
fn expect_plain(res: &Response, what: &str) -> Outcome {
    expect_framed(res, CONTENT_TYPE, what)
}

/// [`expect_plain`] for a body of `content_type`. Every answer also names its server and
/// carries a `date` in HTTP's date format, as TechEmpower's header rules require.
fn expect_framed(res: &Response, content_type: &str, what: &str) -> Outcome {
    ensure!(
        res.header("content-type") == Some(content_type),
        "{what}: content-type {:?}",
        res.header("content-type")
    );
    ensure!(
        res.header("server").is_some_and(|s| !s.is_empty()),
        "{what}: no server header"
    );
    ensure!(
        res.header("date")
            .is_some_and(|d| httpdate::parse_http_date(d).is_ok()),
        "{what}: date {:?}, want an HTTP date",
        res.header("date")
    );
    ensure!(
        res.header(NOSNIFF_HEADER) == Some(NOSNIFF_VALUE),
        "{what}: {NOSNIFF_HEADER} {:?}",
        res.header(NOSNIFF_HEADER)
    );
    let length = res
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok());
    ensure!(length.is_some(), "{what}: no content-length");
    ensure!(
        res.after.is_empty(),
        "{what}: {} bytes after the body: {:?}",
        res.after.len(),
        elide(&String::from_utf8_lossy(&res.after), 40)
    );
    ensure!(
        res.head || length == Some(res.body().len()),
        "{what}: content-length {length:?}, body {} bytes",
        res.body().len()
    );
    Ok(())
}

fn expect_status(res: &Response, status: u16, what: &str) -> Outcome {
    ensure!(
        res.status() == status,
        "{what}: status {} (want {status}), body {:?}",
        res.status(),
        elide(&res.text(), 60)
    );
    expect_plain(res, what)
}

async fn expect_error_at(addr: SocketAddr, raw: &[u8], status: u16, what: &str) -> Outcome {
    let res = fetch(addr, raw, false).await?;
    expect_status(&res, status, what)?;
    ensure!(!res.body().is_empty(), "{what}: {status} without a reason");
    Ok(())
}

/// Any other method on a route → 405 with `Allow: GET, HEAD` (on `/greetings`, which takes
/// POST too, `Allow: GET, HEAD, POST`; on `/upload`, `Allow: POST`; on `/ws`, `Allow: GET`).
pub async fn other_methods_get_405(addr: SocketAddr) -> Outcome {
    for path in paths::ALL {
        let (methods, allow): (&[&str], _) = match path {
            paths::GREETINGS => (&["PUT", "DELETE", "PATCH", "OPTIONS"], GREETINGS_METHODS),
            paths::UPLOAD => (&["GET", "HEAD", "PUT", "DELETE", "OPTIONS"], UPLOAD_METHODS),
            paths::WS => (&["HEAD", "POST", "PUT", "DELETE", "OPTIONS"], WS_METHODS),
            _ => (
                &["POST", "PUT", "DELETE", "PATCH", "OPTIONS"],
                ALLOWED_METHODS,
            ),
        };
        for method in methods {
            let what = format!("{method} {path}");
            let raw = request(method, path, "Content-Length: 0\r\n");
            let res = fetch(addr, &raw, *method == "HEAD").await?;
            expect_status(&res, 405, &what)?;
            ensure!(
                res.header("allow") == Some(allow),
                "{what}: allow {:?}",
                res.header("allow")
            );
        }
    }
    Ok(())
}

/// `GET /health` → 200 `ok`.
pub async fn health_is_ok(addr: SocketAddr) -> Outcome {
    let res = fetch_get(addr, "/health").await?;
    expect_status(&res, 200, "/health")?;
    ensure!(res.text() == "ok", "/health: body {:?}", res.text());
    Ok(())
}

/// Anything else → 404, plain text.
pub async fn unknown_paths_get_404(addr: SocketAddr) -> Outcome {
    for target in [
        "/",
        "/nope",
        "/greetings/",
        "/greetingsx",
        "/health/x",
        "/GREETINGS",
        "/db/",
        "/queries/x",
        "/Business",
    ] {
        expect_error_at(addr, &get_request(target), 404, target).await?;
    }
    Ok(())
}

/// A 200 with a JSON body of `T`.
fn expect_json<T: serde::de::DeserializeOwned>(res: &Response, what: &str) -> anyhow::Result<T> {
    ensure!(
        res.status() == 200,
        "{what}: status {} (want 200), body {:?}",
        res.status(),
        elide(&res.text(), 60)
    );
    expect_framed(res, JSON_CONTENT_TYPE, what)?;
    serde_json::from_slice(res.body())
        .map_err(|e| anyhow!("{what}: {e}: {:?}", elide(&res.text(), 60)))
}

/// `GET /business?name=X` → `{"name","greeting","visits"}`: a known person's stored word, a
/// random word for anyone else, the name read as `/greetings` reads it, and visits counted
/// up by one per call (a name of its own per run, so runs do not share counts).
pub async fn business_greets_and_counts(addr: SocketAddr) -> Outcome {
    let person = rand::random_range(1..=records::PEOPLE);
    let name = records::person_name(person);
    let target = format!("{}?name={name}", paths::BUSINESS);
    let mut last = 0;
    for _ in 0..3 {
        let body: Business = expect_json(&fetch_get(addr, &target).await?, &target)?;
        let want = format!("{} {name}!", records::person_word(person));
        ensure!(
            body.greets(&name) && body.greeting == want,
            "{target}: {body:?}, want greeting {want:?}"
        );
        ensure!(
            body.visits > last,
            "{target}: visits {} after {last}",
            body.visits
        );
        last = body.visits;
    }
    let unique = format!("Jo%C3%A3o-{}", rand::random::<u32>());
    let decoded = unique.replace("%C3%A3", "ã");
    for visits in 1..=2 {
        let target = format!("{}?name={unique}", paths::BUSINESS);
        let body: Business = expect_json(&fetch_get(addr, &target).await?, &target)?;
        let word = body.greeting.strip_suffix(&format!(" {decoded}!"));
        ensure!(
            body.name == decoded
                && word.is_some_and(|w| WORDS.contains(&w))
                && body.visits == visits,
            "{target}: {body:?}, want name {decoded:?}, a random word, visits {visits}"
        );
    }
    let body: Business = expect_json(&fetch_get(addr, paths::BUSINESS).await?, "/business")?;
    ensure!(
        body.name == "World",
        "/business: name {:?}, want World",
        body.name
    );
    Ok(())
}

/// `/business` refuses the names `/greetings` refuses, with the same status and reason.
pub async fn business_refuses_bad_names(addr: SocketAddr) -> Outcome {
    for (query, err) in [
        ("name=%ZZ", GreetError::BadPercentEncoding),
        ("name=%FF", GreetError::NotUtf8),
        ("name=a%00b", GreetError::ControlCharacter),
    ] {
        let target = format!("{}?{query}", paths::BUSINESS);
        let res = fetch_get(addr, &target).await?;
        expect_status(&res, err.status(), &target)?;
        ensure!(
            res.text() == err.reason(),
            "{target}: body {:?}",
            res.text()
        );
    }
    let target = format!(
        "{}?name={}",
        paths::BUSINESS,
        "a".repeat(MAX_NAME_CHARS + 1)
    );
    expect_error_at(
        addr,
        &get_request(&target),
        400,
        "/business, 257-character name",
    )
    .await
}

/// With the database and cache unreachable: `/db`, `/queries` and `/business` are 503 with a
/// plain reason within `timeout` (and a little), while `/health` and `/greetings` are
/// served. Needs a server whose stores are down.
pub async fn stores_down_gives_503(addr: SocketAddr, timeout: Duration) -> Outcome {
    for target in [
        "/db",
        "/queries?queries=3",
        "/fortunes",
        "/updates?queries=3",
        "/cached-queries?count=3",
        "/business?name=Ana",
    ] {
        let start = Instant::now();
        let res = fetch_get(addr, target).await?;
        let took = start.elapsed();
        expect_status(&res, 503, target)?;
        ensure!(
            res.text().starts_with("service unavailable"),
            "{target}: body {:?}",
            res.text()
        );
        ensure!(
            took < timeout + Duration::from_millis(500),
            "{target}: 503 after {took:?}"
        );
    }
    health_is_ok(addr).await?;
    greets_world(addr).await
}

/// A request target over 8 KiB → 414; exactly 8 KiB is served.
pub async fn long_target_gets_414(addr: SocketAddr) -> Outcome {
    let prefix = "/greetings?x=";
    let longest = format!("{prefix}{}", "a".repeat(MAX_TARGET_BYTES - prefix.len()));
    expect_greeting_at(addr, &longest, "World").await?;
    let over = format!("{longest}a");
    expect_error_at(addr, &get_request(&over), 414, "8 KiB + 1 target").await
}

/// A head over 16 KiB, or with more than 64 header fields → 431, whether the shared check
/// or the framework's own parser (past 96 fields) sees it first. 64 fields are served.
pub async fn oversized_head_gets_431(addr: SocketAddr) -> Outcome {
    // `request` sends Host and Connection: two fields of the 64.
    let fields = |n: usize| (0..n).map(|i| format!("x-f{i}: v\r\n")).collect::<String>();
    let res = fetch(
        addr,
        &request("GET", "/health", &fields(MAX_HEADERS - 2)),
        false,
    )
    .await?;
    expect_status(&res, 200, "64 header fields")?;
    let raw = request("GET", "/health", &fields(MAX_HEADERS - 1));
    expect_error_at(addr, &raw, 431, "65 header fields").await?;
    let res = fetch(addr, &request("GET", "/health", &fields(120)), false).await?;
    ensure!(
        res.status() == 431,
        "122 header fields: status {}",
        res.status()
    );
    let big = format!("x-big: {}\r\n", "v".repeat(MAX_HEAD_BYTES));
    expect_error_at(addr, &request("GET", "/health", &big), 431, "16 KiB header").await
}

/// HTTP/1.1 without `Host` → 400; HTTP/1.0 without it is fine. The status only: actix-web's
/// parser rejects such a request itself, with a bare 400, before any application code runs.
pub async fn missing_host_gets_400(addr: SocketAddr) -> Outcome {
    let raw = b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n";
    let res = fetch(addr, raw, false).await?;
    ensure!(
        res.status() == 400,
        "HTTP/1.1 without Host: status {}",
        res.status()
    );
    let res = fetch(addr, b"GET /health HTTP/1.0\r\n\r\n", false).await?;
    expect_status(&res, 200, "HTTP/1.0 without Host")
}

/// Garbage on the wire gets an error status or a closed connection, at once, and the server
/// goes on serving. A server that says nothing for 6 s fails: a hang is not an answer.
pub async fn survives_garbage(addr: SocketAddr) -> Outcome {
    survives_garbage_within(addr, Duration::from_secs(6)).await
}

/// [`survives_garbage`], each exchange given `limit`.
pub async fn survives_garbage_within(addr: SocketAddr, limit: Duration) -> Outcome {
    // Blank lines alone are not here: a server may skip empty lines before a request line
    // (RFC 9112, 2.2) and hyper does, so they are a head that never completes, which
    // `slow_head_is_cut` covers.
    let garbage: [&[u8]; 5] = [
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
        b"GET\r\n\r\n",
        b"GET / HTTP/9.9\r\nHost: x\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
        b"\x00\x01\x02\x03\xff\xfe\r\n\r\n",
    ];
    let mut set = tokio::task::JoinSet::new();
    for raw in garbage {
        set.spawn(async move { (raw, exchange_within(addr, raw, false, limit).await) });
    }
    while let Some(joined) = set.join_next().await {
        let (raw, answer) = joined?;
        let what = request_line(raw);
        match answer {
            Ok(res) => ensure!(
                (400..600).contains(&res.status()),
                "{what:?}: status {}",
                res.status()
            ),
            Err(err) if err.kind() == std::io::ErrorKind::TimedOut => {
                bail!("{what:?}: no answer and no close within {limit:?}")
            }
            // Closed (or reset) without an answer: allowed.
            Err(_) => {}
        }
    }
    health_is_ok(addr).await
}

/// A client that never finishes its request head is disconnected after 5 s (actix-web
/// writes a 408 first; hyper closes without a word). Takes about 5 s.
pub async fn slow_head_is_cut(addr: SocketAddr) -> Outcome {
    let io = |e: std::io::Error| anyhow!("slow head: {e}");
    let mut stream = TcpStream::connect(addr).await.map_err(io)?;
    let start = Instant::now();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .map_err(io)?;
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest)).await;
    let elapsed = start.elapsed();
    ensure!(read.is_ok(), "slow head: still connected after 10 s");
    ensure!(
        (Duration::from_millis(4500)..Duration::from_millis(7000)).contains(&elapsed),
        "slow head: cut after {elapsed:?}, want 5 s"
    );
    let text = String::from_utf8_lossy(&rest);
    ensure!(
        rest.is_empty() || text.starts_with("HTTP/1.1 408"),
        "slow head: answered {text:?}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that reads each request and answers `reply`, or holds the connection
    /// without a word when there is none.
    async fn fake(reply: Option<&'static [u8]>) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = stream.read(&mut buf).await;
                    match reply {
                        Some(reply) => {
                            let _ = stream.write_all(reply).await;
                        }
                        None => tokio::time::sleep(Duration::from_secs(5)).await,
                    }
                });
            }
        });
        addr
    }

    #[tokio::test]
    async fn a_server_that_never_answers_garbage_fails() {
        let addr = fake(None).await;
        let err = survives_garbage_within(addr, Duration::from_millis(200))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("no answer and no close"), "{err}");
    }

    #[tokio::test]
    async fn a_body_longer_than_its_content_length_fails() {
        let addr = fake(Some(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n\
              x-content-type-options: nosniff\r\nserver: fake\r\n\
              date: Mon, 30 Nov 2026 17:00:00 GMT\r\ncontent-length: 2\r\n\r\nok!",
        ))
        .await;
        let err = health_is_ok(addr).await.unwrap_err().to_string();
        assert!(err.contains("1 bytes after the body"), "{err}");
    }

    #[tokio::test]
    async fn a_plain_answer_passes() {
        let addr = fake(Some(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n\
              x-content-type-options: nosniff\r\nserver: fake\r\n\
              date: Mon, 30 Nov 2026 17:00:00 GMT\r\ncontent-length: 2\r\n\r\nok",
        ))
        .await;
        health_is_ok(addr).await.expect("a plain answer passes");
    }

    /// TechEmpower's header rule: an answer that does not name its server, or whose date is
    /// not an HTTP date, fails.
    #[tokio::test]
    async fn an_answer_without_server_or_date_fails() {
        let addr = fake(Some(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n\
              x-content-type-options: nosniff\r\n\
              date: Mon, 30 Nov 2026 17:00:00 GMT\r\ncontent-length: 2\r\n\r\nok",
        ))
        .await;
        let err = health_is_ok(addr).await.unwrap_err().to_string();
        assert!(err.contains("no server header"), "{err}");
        let addr = fake(Some(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n\
              x-content-type-options: nosniff\r\nserver: fake\r\n\
              date: yesterday\r\ncontent-length: 2\r\n\r\nok",
        ))
        .await;
        let err = health_is_ok(addr).await.unwrap_err().to_string();
        assert!(err.contains("want an HTTP date"), "{err}");
    }

    #[test]
    fn long_values_are_elided() {
        assert_eq!(elide("abcdef", 3), "abc…");
        assert_eq!(elide("abc", 3), "abc");
        assert_eq!(elide("ééé", 2), "éé…");
    }
}
