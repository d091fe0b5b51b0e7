//! The contract, one async function per rule of the API (the README's table). Each takes the
//! address of a running server and returns `Err` with what differed, in one short line. The
//! contract suite runs every case against every server; [`crate::check`] runs the quick ones
//! before a benchmark.
//!
//! Cases that need a particular server configuration say so in their docs.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use greet_core::limits::{MAX_HEADERS, MAX_HEAD_BYTES, MAX_TARGET_BYTES};
use greet_core::name::MAX_NAME_CHARS;
use greet_core::records::{self, Business, Message, World};
use greet_core::{
    paths, GreetError, ALLOWED_METHODS, CONTENT_TYPE, HTML_CONTENT_TYPE, JSON_CONTENT_TYPE,
    NOSNIFF_HEADER, NOSNIFF_VALUE, WORDS,
};
use greet_probe::http1;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub use crate::bad_input::bad_inputs_get_their_answers;
use crate::client::{exchange, exchange_within, get, get_request, request, Response};

pub use crate::Outcome;

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

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

async fn fetch(addr: SocketAddr, raw: &[u8], head: bool) -> Result<Response, String> {
    exchange(addr, raw, head)
        .await
        .map_err(|e| format!("{:?}: {e}", request_line(raw)))
}

async fn fetch_get(addr: SocketAddr, target: &str) -> Result<Response, String> {
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

/// A 200 with body `<word> <name>!`, `<word>` one of the five.
fn expect_greeting(res: &Response, name: &str, what: &str) -> Outcome {
    expect_status(res, 200, what)?;
    let body = res.text();
    let word = body.strip_suffix(&format!(" {name}!"));
    ensure!(
        word.is_some_and(|w| WORDS.contains(&w)),
        "{what}: body {:?}, want \"<word> {}!\"",
        elide(&body, 60),
        elide(name, 20)
    );
    Ok(())
}

async fn expect_greeting_at(addr: SocketAddr, target: &str, name: &str) -> Outcome {
    expect_greeting(&fetch_get(addr, target).await?, name, &elide(target, 48))
}

async fn expect_error_at(addr: SocketAddr, raw: &[u8], status: u16, what: &str) -> Outcome {
    let res = fetch(addr, raw, false).await?;
    expect_status(&res, status, what)?;
    ensure!(!res.body().is_empty(), "{what}: {status} without a reason");
    Ok(())
}

/// `GET /greetings` → `<word> World!`.
pub async fn greets_world(addr: SocketAddr) -> Outcome {
    expect_greeting_at(addr, "/greetings", "World").await
}

/// `?name=Ana` → `<word> Ana!`.
pub async fn greets_by_name(addr: SocketAddr) -> Outcome {
    expect_greeting_at(addr, "/greetings?name=Ana", "Ana").await
}

/// `?name=` and `?name` → World, as Spring's `defaultValue`.
pub async fn empty_name_is_world(addr: SocketAddr) -> Outcome {
    expect_greeting_at(addr, "/greetings?name=", "World").await?;
    expect_greeting_at(addr, "/greetings?name", "World").await
}

/// Form-urlencoded decoding: `Jo%C3%A3o` → João, `a+b` → `a b`.
pub async fn decodes_form_urlencoding(addr: SocketAddr) -> Outcome {
    expect_greeting_at(addr, "/greetings?name=Jo%C3%A3o", "João").await?;
    expect_greeting_at(addr, "/greetings?name=a+b", "a b").await?;
    expect_greeting_at(addr, "/greetings?name=%3Cb%3E", "<b>").await
}

/// `name=a&name=b` → `a,b`, as Spring binds repeated values to one String.
pub async fn joins_repeated_names(addr: SocketAddr) -> Outcome {
    expect_greeting_at(addr, "/greetings?name=a&name=b", "a,b").await
}

/// Other parameters are ignored, even with broken escapes.
pub async fn ignores_other_parameters(addr: SocketAddr) -> Outcome {
    expect_greeting_at(addr, "/greetings?x=%ZZ&name=Ana&y=1", "Ana").await
}

/// `%ZZ` (bad escape) and `%FF` (not UTF-8) → 400 with a plain reason.
pub async fn rejects_bad_encoding(addr: SocketAddr) -> Outcome {
    for target in [
        "/greetings?name=%ZZ",
        "/greetings?name=%FF",
        "/greetings?name=abc%",
    ] {
        expect_error_at(addr, &get_request(target), 400, target).await?;
    }
    Ok(())
}

/// A name of 256 characters is fine; 257 is a 400.
pub async fn rejects_long_names(addr: SocketAddr) -> Outcome {
    let longest = "é".repeat(MAX_NAME_CHARS);
    let target = format!("/greetings?name={}", "%C3%A9".repeat(MAX_NAME_CHARS));
    expect_greeting_at(addr, &target, &longest).await?;
    let target = format!("/greetings?name={}", "a".repeat(MAX_NAME_CHARS + 1));
    expect_error_at(addr, &get_request(&target), 400, "257-character name").await
}

/// Control characters in the name → 400.
pub async fn rejects_control_characters(addr: SocketAddr) -> Outcome {
    for target in [
        "/greetings?name=a%00b",
        "/greetings?name=%0A",
        "/greetings?name=%7F",
    ] {
        expect_error_at(addr, &get_request(target), 400, target).await?;
    }
    Ok(())
}

/// `HEAD /greetings`: the GET's status and headers, and not one byte of body.
pub async fn head_has_no_body(addr: SocketAddr) -> Outcome {
    let res = fetch(addr, &request("HEAD", "/greetings", ""), true).await?;
    expect_status(&res, 200, "HEAD /greetings")?;
    let length = res.header("content-length").unwrap_or("0");
    ensure!(
        length
            .parse::<usize>()
            .is_ok_and(|n| n >= "Hi World!".len()),
        "HEAD /greetings: content-length {length}, want the GET body's"
    );
    Ok(())
}

/// Any other method on a route → 405 with `Allow: GET, HEAD`.
pub async fn other_methods_get_405(addr: SocketAddr) -> Outcome {
    for path in paths::ALL {
        for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
            let what = format!("{method} {path}");
            let raw = request(method, path, "Content-Length: 0\r\n");
            let res = fetch(addr, &raw, false).await?;
            expect_status(&res, 405, &what)?;
            ensure!(
                res.header("allow") == Some(ALLOWED_METHODS),
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

/// `/greetings/blocking` greets as `/greetings` does.
pub async fn blocking_endpoint_greets(addr: SocketAddr) -> Outcome {
    expect_greeting_at(addr, "/greetings/blocking?name=Ana", "Ana").await
}

/// All five words appear, and no other, over 100 concurrent requests.
pub async fn every_word_appears(addr: SocketAddr) -> Outcome {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..100 {
        set.spawn(async move { get(addr, "/greetings?name=Ana").await });
    }
    let mut seen = std::collections::BTreeSet::new();
    while let Some(joined) = set.join_next().await {
        let res = joined
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("/greetings: {e}"))?;
        expect_greeting(&res, "Ana", "/greetings?name=Ana")?;
        seen.insert(res.text());
    }
    ensure!(seen.len() == WORDS.len(), "saw only {seen:?}");
    Ok(())
}

/// A 200 with a JSON body of `T`.
fn expect_json<T: serde::de::DeserializeOwned>(res: &Response, what: &str) -> Result<T, String> {
    ensure!(
        res.status() == 200,
        "{what}: status {} (want 200), body {:?}",
        res.status(),
        elide(&res.text(), 60)
    );
    expect_framed(res, JSON_CONTENT_TYPE, what)?;
    serde_json::from_slice(res.body())
        .map_err(|e| format!("{what}: {e}: {:?}", elide(&res.text(), 60)))
}

/// A row of `world`: id and `randomNumber` in `1..=10000` (TechEmpower's check). Not the
/// number as seeded: `/updates` gives rows new ones, and may run meanwhile.
fn expect_world(row: &World, what: &str) -> Outcome {
    ensure!(row.is_valid(), "{what}: row {row:?} is not a world row");
    Ok(())
}

/// TechEmpower's rules on a `/db` or `/queries` answer beyond the rows themselves: each row
/// an object of exactly the keys `id` and `randomNumber` (their check is case-insensitive and
/// warns of extra keys; none here), and a `date` of the current second, not one cached
/// (theirs: two answers 3 s apart must differ).
fn expect_techempower_json(res: &Response, array: bool, what: &str) -> Outcome {
    let value: serde_json::Value =
        serde_json::from_slice(res.body()).map_err(|e| format!("{what}: {e}"))?;
    let rows = match (&value, array) {
        (serde_json::Value::Array(rows), true) => rows.iter().collect(),
        (serde_json::Value::Object(_), false) => vec![&value],
        _ => {
            return Err(format!(
                "{what}: {value}, want a JSON {}",
                if array { "array" } else { "object" }
            ))
        }
    };
    for row in rows {
        let keys: Vec<&str> = row
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        ensure!(
            keys.len() == 2 && keys.contains(&"id") && keys.contains(&"randomNumber"),
            "{what}: row {row}, want exactly id and randomNumber"
        );
    }
    expect_current_date(res, what)
}

/// `GET /db` → one `world` row as `{"id":…,"randomNumber":…}`, `application/json`;
/// `HEAD /db` has its headers and no body.
pub async fn db_answers_a_world_row(addr: SocketAddr) -> Outcome {
    let body = fetch_get(addr, paths::DB).await?;
    expect_world(&expect_json(&body, "/db")?, "/db")?;
    expect_techempower_json(&body, false, "/db")?;
    let text = body.text();
    ensure!(
        text.starts_with("{\"id\":") && text.contains(",\"randomNumber\":"),
        "/db: body {text:?}, want {{\"id\":…,\"randomNumber\":…}}"
    );
    let res = fetch(addr, &request("HEAD", paths::DB, ""), true).await?;
    ensure!(res.status() == 200, "HEAD /db: status {}", res.status());
    expect_framed(&res, JSON_CONTENT_TYPE, "HEAD /db")
}

/// `GET /queries?queries=N` → a JSON array of N rows, N as TechEmpower reads it (missing,
/// empty, not a number or below 1 → 1; above 500 → 500); their verification's own cases
/// (`2`, `0`, `foo`, `501`, empty) among them.
pub async fn queries_follow_techempower(addr: SocketAddr) -> Outcome {
    expect_rows_as_asked(addr, paths::QUERIES, records::QUERIES_KEY).await
}

/// `GET /updates?queries=N` → a JSON array of N rows, given new numbers and written back,
/// N read as `/queries` reads it. That the rows are written is the stores' tests' (the table
/// is read back there) and TechEmpower's update count on PostgreSQL (`tests/stores.rs`).
pub async fn updates_follow_techempower(addr: SocketAddr) -> Outcome {
    expect_rows_as_asked(addr, paths::UPDATES, records::QUERIES_KEY).await
}

/// `GET /cached-queries?count=N` → a JSON array of N rows from the server's copy of the
/// table, N read as `/queries` reads it.
pub async fn cached_queries_follow_techempower(addr: SocketAddr) -> Outcome {
    expect_rows_as_asked(addr, paths::CACHED_QUERIES, records::COUNT_KEY).await
}

/// The rows `path?key=N` answers for TechEmpower's cases of N and a few more.
async fn expect_rows_as_asked(addr: SocketAddr, path: &str, key: &str) -> Outcome {
    for (query, n) in [
        (String::new(), 1),
        (format!("?{key}="), 1),
        (format!("?{key}=2"), 2),
        (format!("?{key}=20"), 20),
        (format!("?{key}=0"), 1),
        (format!("?{key}=foo"), 1),
        (format!("?{key}=-3"), 1),
        (format!("?{key}=501"), 500),
        (format!("?x=%ZZ&{key}=2"), 2),
    ] {
        let target = format!("{path}{query}");
        let res = fetch_get(addr, &target).await?;
        let rows: Vec<World> = expect_json(&res, &target)?;
        expect_techempower_json(&res, true, &target)?;
        ensure!(rows.len() == n, "{target}: {} rows, want {n}", rows.len());
        for row in &rows {
            expect_world(row, &target)?;
        }
    }
    Ok(())
}

/// `GET /json` → exactly `{"message":"Hello, World!"}`, `application/json`, with a current
/// `date`.
pub async fn json_says_hello(addr: SocketAddr) -> Outcome {
    let res = fetch_get(addr, paths::JSON).await?;
    expect_json::<serde_json::Value>(&res, paths::JSON)?;
    let message = serde_json::from_slice::<Message<'_>>(res.body()).ok();
    ensure!(
        message == Some(Message::hello()) && res.body() == br#"{"message":"Hello, World!"}"#,
        "/json: body {:?}",
        elide(&res.text(), 60)
    );
    expect_current_date(&res, paths::JSON)
}

/// `GET /plaintext` → exactly `Hello, World!`, plain text.
pub async fn plaintext_says_hello(addr: SocketAddr) -> Outcome {
    let res = fetch_get(addr, paths::PLAINTEXT).await?;
    expect_status(&res, 200, paths::PLAINTEXT)?;
    ensure!(
        res.body() == records::HELLO.as_bytes(),
        "/plaintext: body {:?}",
        elide(&res.text(), 60)
    );
    expect_current_date(&res, paths::PLAINTEXT)
}

/// `GET /fortunes` → the one valid page (the twelve rows and the added one, sorted by
/// message, escaped, the Japanese row intact), `text/html; charset=utf-8`.
pub async fn fortunes_are_sorted_and_escaped(addr: SocketAddr) -> Outcome {
    let res = fetch_get(addr, paths::FORTUNES).await?;
    ensure!(
        res.status() == 200,
        "/fortunes: status {} (want 200), body {:?}",
        res.status(),
        elide(&res.text(), 60)
    );
    expect_framed(&res, HTML_CONTENT_TYPE, paths::FORTUNES)?;
    if res.body() != records::FORTUNES_PAGE.as_bytes() {
        let body = res.text();
        let at = body
            .char_indices()
            .zip(records::FORTUNES_PAGE.chars())
            .find(|((_, got), want)| got != want)
            .map_or(
                body.len().min(records::FORTUNES_PAGE.len()),
                |((i, _), _)| i,
            );
        return Err(format!(
            "/fortunes: differs from the valid page at byte {at}: {:?}",
            elide(body.get(at..).unwrap_or_default(), 60)
        ));
    }
    expect_current_date(&res, paths::FORTUNES)
}

/// 16 requests in flight on one connection, as TechEmpower's plaintext load sends them: a
/// slow one (a store read) first, quick ones after, so a server that answered as each finished
/// would put the quick ones ahead of it.
pub fn pipelined_targets() -> Vec<String> {
    (0..16)
        .map(|i| match i {
            0 => format!("{}?queries=20", paths::QUERIES),
            5 | 11 => paths::JSON.to_owned(),
            _ => paths::PLAINTEXT.to_owned(),
        })
        .collect()
}

/// HTTP/1.1 pipelining, as TechEmpower's plaintext load sends it: [`pipelined_targets`]
/// written back to back on one connection before any answer is read are answered, all of
/// them, in order.
pub async fn pipelined_requests_answer_in_order(addr: SocketAddr) -> Outcome {
    let targets = pipelined_targets();
    let depth = targets.len();
    let mut raw = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        let close = if i + 1 == depth {
            "Connection: close\r\n"
        } else {
            ""
        };
        raw.extend_from_slice(
            format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{close}\r\n").as_bytes(),
        );
    }
    let what = format!("{depth} pipelined requests");
    tokio::time::timeout(crate::client::EXCHANGE_TIMEOUT, async {
        let mut stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("{what}: connect: {e}"))?;
        stream
            .write_all(&raw)
            .await
            .map_err(|e| format!("{what}: {e}"))?;
        let mut buf = Vec::new();
        for (i, target) in targets.iter().enumerate() {
            let mut res = http1::Response::new();
            http1::read(&mut stream, &mut buf, &mut res, http1::Options::default())
                .await
                .map_err(|e| format!("{what}: answer {} of {depth} ({target}): {e}", i + 1))?;
            let body = res.text();
            let in_order = match target.as_str() {
                paths::PLAINTEXT => body == records::HELLO,
                paths::JSON => body.starts_with("{\"message\""),
                _ => body.starts_with("[{\"id\""),
            };
            ensure!(
                res.status() == 200 && in_order,
                "{what}: answer {} of {depth} is {} {:?}, want {target}'s",
                i + 1,
                res.status(),
                elide(&body, 40)
            );
        }
        let mut after = Vec::new();
        let _ = stream.read_to_end(&mut after).await;
        buf.extend_from_slice(&after);
        ensure!(
            buf.is_empty(),
            "{what}: {} bytes after the last answer",
            buf.len()
        );
        Ok(())
    })
    .await
    .map_err(|_| {
        format!(
            "{what}: not all answered within {:?}",
            crate::client::EXCHANGE_TIMEOUT
        )
    })?
}

/// A `date` within 2 s of the client's clock: TechEmpower's "not cached" rule (two answers
/// 3 s apart must differ) as one request can check it.
fn expect_current_date(res: &Response, what: &str) -> Outcome {
    let date = res
        .header("date")
        .and_then(|d| httpdate::parse_http_date(d).ok())
        .ok_or_else(|| format!("{what}: no date"))?;
    let now = std::time::SystemTime::now();
    let skew = now.duration_since(date).unwrap_or_else(|e| e.duration());
    ensure!(
        skew <= Duration::from_secs(2),
        "{what}: date {:?} is {skew:?} from now",
        res.header("date")
    );
    Ok(())
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
        let (raw, answer) = joined.map_err(|e| e.to_string())?;
        let what = request_line(raw);
        match answer {
            Ok(res) => ensure!(
                (400..600).contains(&res.status()),
                "{what:?}: status {}",
                res.status()
            ),
            Err(err) if err.kind() == std::io::ErrorKind::TimedOut => {
                return Err(format!("{what:?}: no answer and no close within {limit:?}"))
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
    let io = |e: std::io::Error| format!("slow head: {e}");
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

/// 300 concurrent `/greetings` at a 1 s delay all finish in well under 2 s: the delay is a
/// timer, not a held thread. Needs a server with `--delay-ms 1000`.
pub async fn delay_does_not_block(addr: SocketAddr) -> Outcome {
    let elapsed = concurrent_greetings(addr, "/greetings", 300).await?;
    ensure!(
        elapsed < Duration::from_millis(1800),
        "300 concurrent at 1 s delay took {elapsed:?}"
    );
    Ok(())
}

/// 300 concurrent `/greetings/blocking` on 100 blocking threads at a 1 s delay take three
/// rounds, about 3 s: the pool is bounded. Needs `--delay-ms 1000 --blocking-threads 100`.
pub async fn blocking_pool_is_bounded(addr: SocketAddr) -> Outcome {
    let elapsed = concurrent_greetings(addr, "/greetings/blocking", 300).await?;
    ensure!(
        (Duration::from_secs(3)..Duration::from_millis(4500)).contains(&elapsed),
        "300 concurrent on 100 threads took {elapsed:?}, want about 3 s"
    );
    Ok(())
}

/// Fires `n` concurrent GETs of `target`, each on its own connection; all must greet World.
/// Returns the time from the first connect to the last response.
pub async fn concurrent_greetings(
    addr: SocketAddr,
    target: &str,
    n: usize,
) -> Result<Duration, String> {
    let start = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..n {
        let target = target.to_owned();
        set.spawn(async move { get(addr, &target).await });
    }
    while let Some(joined) = set.join_next().await {
        let res = joined
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("{target}: {e}"))?;
        expect_greeting(&res, "World", target)?;
    }
    Ok(start.elapsed())
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
            .unwrap_err();
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
        let err = health_is_ok(addr).await.unwrap_err();
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
        assert_eq!(health_is_ok(addr).await, Ok(()));
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
        let err = health_is_ok(addr).await.unwrap_err();
        assert!(err.contains("no server header"), "{err}");
        let addr = fake(Some(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n\
              x-content-type-options: nosniff\r\nserver: fake\r\n\
              date: yesterday\r\ncontent-length: 2\r\n\r\nok",
        ))
        .await;
        let err = health_is_ok(addr).await.unwrap_err();
        assert!(err.contains("want an HTTP date"), "{err}");
    }

    #[test]
    fn long_values_are_elided() {
        assert_eq!(elide("abcdef", 3), "abc…");
        assert_eq!(elide("abc", 3), "abc");
        assert_eq!(elide("ééé", 2), "éé…");
    }
}
