//! `GET /greetings` as the contract has it: the greeting answer (which other cases check
//! too, through [`expect_greeting_at`]), the name rules, HEAD, `/greetings/blocking`, the five
//! words, and the delay as a timer on a bounded blocking pool. Apart from `mod.rs`, which
//! keeps the checks every case shares and the rules of the server as a whole.

use super::*;

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

/// [`expect_greeting`] for a GET of `target`: what a case that greets checks.
pub(super) async fn expect_greeting_at(addr: SocketAddr, target: &str, name: &str) -> Outcome {
    expect_greeting(&fetch_get(addr, target).await?, name, &elide(target, 48))
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
        let res = joined?.map_err(|e| anyhow!("/greetings: {e}"))?;
        expect_greeting(&res, "Ana", "/greetings?name=Ana")?;
        seen.insert(res.text());
    }
    ensure!(seen.len() == WORDS.len(), "saw only {seen:?}");
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
) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..n {
        let target = target.to_owned();
        set.spawn(async move { get(addr, &target).await });
    }
    while let Some(joined) = set.join_next().await {
        let res = joined?.map_err(|e| anyhow!("{target}: {e}"))?;
        expect_greeting(&res, "World", target)?;
    }
    Ok(start.elapsed())
}
