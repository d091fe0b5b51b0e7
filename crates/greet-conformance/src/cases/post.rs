//! `POST /greetings` as the contract has it: a JSON name greeted as JSON, and every body it
//! refuses, with its status (the rules are `greet_core::post`'s).

use greet_core::post::{self, MAX_BODY_BYTES};

use super::*;
use crate::client::post_greetings_request;

/// `POST /greetings` with a JSON name → 200 `{"greeting":"<word> <name>!"}` as JSON: with
/// `application/json`, with parameters, with a `+json` type; other fields ignored, escapes
/// decoded, an empty name World.
pub async fn post_greets_as_json(addr: SocketAddr) -> Outcome {
    for (content_type, body, name) in [
        ("application/json", r#"{"name":"Ana"}"#, "Ana"),
        (
            "application/json; charset=utf-8",
            r#"{"id":1,"name":"Jo\u00e3o"}"#,
            "João",
        ),
        ("application/vnd.greetings+json", r#"{"name":""}"#, "World"),
    ] {
        let what = format!("POST /greetings ({content_type}) {body}");
        let res = fetch(
            addr,
            &post_greetings_request(Some(content_type), body.as_bytes()),
            false,
        )
        .await?;
        ensure!(
            res.status() == 200,
            "{what}: status {}, body {:?}",
            res.status(),
            elide(&res.text(), 60)
        );
        expect_framed(&res, JSON_CONTENT_TYPE, &what)?;
        let text = res.text();
        let greeting: post::Greeting<'_> =
            serde_json::from_str(&text).map_err(|e| anyhow!("{what}: {e}: {text:?}"))?;
        ensure!(
            WORDS
                .iter()
                .any(|w| greeting.greeting == format!("{w} {name}!")),
            "{what}: {text:?}"
        );
    }
    Ok(())
}

/// `POST /greetings` refused, each with a plain-text reason, and the server greets after:
/// a content type that is not JSON, or none (415); a body that is not JSON (400), or not an
/// object with a string name (400); a name the query's rules refuse (400); a body over the
/// limit (413), declared (answered at once, though no byte of it was sent) or chunked.
pub async fn post_refuses_bad_bodies(addr: SocketAddr) -> Outcome {
    let json = Some("application/json");
    let long = format!(r#"{{"name":"{}"}}"#, "a".repeat(MAX_NAME_CHARS + 1));
    let padded = format!(r#"{{"name":"Ana","pad":"{}"}}"#, " ".repeat(MAX_BODY_BYTES));
    let ana = r#"{"name":"Ana"}"#;
    let rows: Vec<(&str, Vec<u8>, u16)> = vec![
        (
            "text/plain",
            post_greetings_request(Some("text/plain"), ana.as_bytes()),
            415,
        ),
        (
            "no content type",
            post_greetings_request(None, ana.as_bytes()),
            415,
        ),
        (
            "a form",
            post_greetings_request(Some("application/x-www-form-urlencoded"), b"name=Ana"),
            415,
        ),
        ("an empty body", post_greetings_request(json, b""), 400),
        (
            "cut JSON",
            post_greetings_request(json, br#"{"name":"#),
            400,
        ),
        (
            "JSON and more",
            post_greetings_request(json, br#"{"name":"Ana"} x"#),
            400,
        ),
        ("no name", post_greetings_request(json, b"{}"), 400),
        ("an array", post_greetings_request(json, br#"["Ana"]"#), 400),
        (
            "a number for a name",
            post_greetings_request(json, br#"{"name":7}"#),
            400,
        ),
        (
            "a control character",
            post_greetings_request(json, br#"{"name":"a\u0001b"}"#),
            400,
        ),
        (
            "a long name",
            post_greetings_request(json, long.as_bytes()),
            400,
        ),
        (
            "a body over the limit",
            post_greetings_request(json, padded.as_bytes()),
            413,
        ),
        (
            "a declared 100 MB, none of it sent",
            request(
                "POST",
                "/greetings",
                "Content-Type: application/json\r\nContent-Length: 100000000\r\n",
            ),
            413,
        ),
        ("chunked over the limit", chunked_over_the_limit(), 413),
    ];
    for (what, raw, status) in rows {
        expect_error_at(addr, &raw, status, &format!("POST /greetings with {what}")).await?;
    }
    expect_greeting_at(addr, "/greetings", "World").await
}

/// A chunked `POST /greetings` whose one chunk crosses the body limit. The body ends: actix-web
/// reads a refused chunked body to its end before it closes the connection.
fn chunked_over_the_limit() -> Vec<u8> {
    let size = MAX_BODY_BYTES + 1;
    let mut raw = request(
        "POST",
        "/greetings",
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
    );
    raw.extend_from_slice(format!("{size:x}\r\n").as_bytes());
    raw.extend(std::iter::repeat_n(b' ', size));
    raw.extend_from_slice(b"\r\n0\r\n\r\n");
    raw
}
