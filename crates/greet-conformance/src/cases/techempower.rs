//! TechEmpower's tests as the contract has them: /db, /queries, /updates and
//! /cached-queries rows, /json and /plaintext, /fortunes, and pipelined requests answered in
//! order. Their rules follow TechEmpower's own verifier (toolset/test_types).

use super::*;

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
        serde_json::from_slice(res.body()).map_err(|e| anyhow!("{what}: {e}"))?;
    let rows = match (&value, array) {
        (serde_json::Value::Array(rows), true) => rows.iter().collect(),
        (serde_json::Value::Object(_), false) => vec![&value],
        _ => bail!(
            "{what}: {value}, want a JSON {}",
            if array { "array" } else { "object" }
        ),
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
        bail!(
            "/fortunes: differs from the valid page at byte {at}: {:?}",
            elide(body.get(at..).unwrap_or_default(), 60)
        );
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
            .map_err(|e| anyhow!("{what}: connect: {e}"))?;
        stream
            .write_all(&raw)
            .await
            .map_err(|e| anyhow!("{what}: {e}"))?;
        let mut buf = Vec::new();
        for (i, target) in targets.iter().enumerate() {
            let mut res = http1::Response::new();
            http1::read(&mut stream, &mut buf, &mut res, http1::Options::default())
                .await
                .map_err(|e| anyhow!("{what}: answer {} of {depth} ({target}): {e}", i + 1))?;
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
        anyhow!(
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
        .ok_or_else(|| anyhow!("{what}: no date"))?;
    let now = std::time::SystemTime::now();
    let skew = now.duration_since(date).unwrap_or_else(|e| e.duration());
    ensure!(
        skew <= Duration::from_secs(2),
        "{what}: date {:?} is {skew:?} from now",
        res.header("date")
    );
    Ok(())
}
