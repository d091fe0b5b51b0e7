//! `GET /static/<path>` as the contract has it (`greet_server::statics`): the files of the
//! directory with their type, validators, ranges and compression, and nothing outside it,
//! however the path is spelled or linked.

use std::path::PathBuf;

use greet_server::statics::default_set;

use super::compression::decoded;
use super::*;

/// The type each file of the default set is served as (parameters aside).
fn content_type_of(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or_default() {
        "html" => "text/html",
        "css" => "text/css",
        "js" => "text/javascript",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain",
        "webmanifest" => "application/manifest+json",
        _ => "application/octet-stream",
    }
}

fn essence(content_type: Option<&str>) -> &str {
    content_type
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
}

/// Each of the 20 files of the default set as it is, with its content type, `ETag`,
/// `Last-Modified`, `server` and `nosniff`; a 304 for `If-None-Match` with its tag and for
/// `If-Modified-Since` its date; a 206 with the bytes asked for a `Range`; a script gzipped
/// when asked and an image not; a HEAD with the file's length and no body, and compressed as
/// its GET would be; a tag that does not match answered 200 whatever the date; 405 for POST.
/// Needs a server without `--static-dir`.
pub async fn static_files_are_served(addr: SocketAddr) -> Outcome {
    for (path, bytes) in default_set() {
        let target = format!("{}{path}", paths::STATIC);
        let what = format!("GET {target}");
        let res = fetch_get(addr, &target).await?;
        ensure!(res.status() == 200, "{what}: status {}", res.status());
        ensure!(
            res.body() == bytes,
            "{what}: {} bytes, not the file's {}",
            res.body().len(),
            bytes.len()
        );
        let want = content_type_of(path);
        ensure!(
            essence(res.header("content-type")) == want,
            "{what}: content-type {:?}, want {want}",
            res.header("content-type")
        );
        for name in ["etag", "last-modified", "server", NOSNIFF_HEADER] {
            ensure!(res.header(name).is_some(), "{what}: no {name}");
        }
    }

    let target = format!("{}index.html", paths::STATIC);
    let res = fetch_get(addr, &target).await?;
    let (etag, modified) = (
        res.header("etag").unwrap_or_default(),
        res.header("last-modified").unwrap_or_default(),
    );
    for (what, header) in [
        ("If-None-Match", format!("If-None-Match: {etag}\r\n")),
        (
            "If-None-Match among others",
            format!("If-None-Match: \"x\", {etag}\r\n"),
        ),
        (
            "If-Modified-Since",
            format!("If-Modified-Since: {modified}\r\n"),
        ),
    ] {
        let what = format!("GET {target} with {what}");
        let res = fetch(addr, &request("GET", &target, &header), false).await?;
        ensure!(
            res.status() == 304 && res.body().is_empty(),
            "{what}: status {}, {} bytes",
            res.status(),
            res.body().len()
        );
    }
    let res = fetch(
        addr,
        &request("GET", &target, "If-None-Match: \"other\"\r\n"),
        false,
    )
    .await?;
    ensure!(
        res.status() == 200,
        "GET {target} with another tag: status {}",
        res.status()
    );

    let large = format!("{}downloads/large.bin", paths::STATIC);
    let whole = &default_set()
        .into_iter()
        .find(|(p, _)| *p == "downloads/large.bin")
        .expect("large")
        .1;
    let res = fetch(
        addr,
        &request("GET", &large, "Range: bytes=100-199\r\n"),
        false,
    )
    .await?;
    ensure!(
        res.status() == 206
            && res.header("content-range") == Some(&format!("bytes 100-199/{}", whole.len()))
            && res.body() == &whole[100..200],
        "GET {large} with Range: bytes=100-199: status {}, content-range {:?}, {} bytes",
        res.status(),
        res.header("content-range"),
        res.body().len()
    );

    let script = format!("{}js/app.js", paths::STATIC);
    let head = fetch(
        addr,
        &request("HEAD", &script, "Accept-Encoding: gzip\r\n"),
        true,
    )
    .await?;
    ensure!(
        head.header("content-encoding") == Some("gzip") && head.body().is_empty(),
        "HEAD {script} with Accept-Encoding gzip: content-encoding {:?}, want the GET's gzip",
        head.header("content-encoding")
    );
    let stale = format!("If-None-Match: \"other\"\r\nIf-Modified-Since: {modified}\r\n");
    let res = fetch(addr, &request("GET", &target, &stale), false).await?;
    ensure!(
        res.status() == 200,
        "GET {target} with another tag and its date: status {}, want 200 (the tag decides)",
        res.status()
    );

    let head = fetch(addr, &request("HEAD", &large, ""), true).await?;
    ensure!(
        head.status() == 200 && head.header("content-length") == Some(&whole.len().to_string()),
        "HEAD {large}: status {}, content-length {:?}",
        head.status(),
        head.header("content-length")
    );

    for (path, compressed) in [("js/app.js", true), ("img/photo.png", false)] {
        let target = format!("{}{path}", paths::STATIC);
        let what = format!("GET {target} with Accept-Encoding gzip");
        let res = fetch(
            addr,
            &request("GET", &target, "Accept-Encoding: gzip\r\n"),
            false,
        )
        .await?;
        let coding = res.header("content-encoding");
        ensure!(
            coding == compressed.then_some("gzip"),
            "{what}: content-encoding {coding:?}"
        );
        let file = default_set()
            .into_iter()
            .find(|(p, _)| p == &path)
            .expect("file")
            .1;
        ensure!(
            decoded(coding, res.body())? == file,
            "{what}: not the file once decoded"
        );
    }

    let res = fetch(
        addr,
        &request("POST", &target, "Content-Length: 0\r\n"),
        false,
    )
    .await?;
    expect_status(&res, 405, &format!("POST {target}"))
}

/// What a static directory for [`static_files_stay_inside`] holds, made by
/// [`static_fixture`].
const SECRET: &str = "not for the web";

/// A directory to serve (`--static-dir`: the returned path's `site`), beside a secret file
/// outside it, and in it a page, a page in a subdirectory, a link to that page, a link to the
/// secret, and a link to `/etc`. The caller removes the returned directory.
pub fn static_fixture() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::symlink;
    let base = std::env::temp_dir().join(format!(
        "greet-static-fixture-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    let site = base.join("site");
    std::fs::create_dir_all(site.join("sub"))?;
    std::fs::write(base.join("secret.txt"), SECRET)?;
    std::fs::write(site.join("index.html"), "<p>in</p>")?;
    std::fs::write(site.join("sub/page.html"), "<p>sub</p>")?;
    std::fs::write(site.join(".env"), SECRET)?;
    symlink("sub/page.html", site.join("link-in.html"))?;
    symlink(base.join("secret.txt"), site.join("link-out.txt"))?;
    symlink("/etc", site.join("etc"))?;
    Ok(base)
}

/// Served from [`static_fixture`]'s `site`: nothing outside it, by every spelling of a way
/// out (dot segments plain, encoded, double-encoded and mixed, backslashes, absolute paths,
/// NUL, links out of it, hidden files), each a 404 or a 400 that shows nothing of the file;
/// a link that stays inside is served.
pub async fn static_files_stay_inside(addr: SocketAddr) -> Outcome {
    for path in [
        "../secret.txt",
        "..%2fsecret.txt",
        "..%2Fsecret.txt",
        "%2e%2e/secret.txt",
        "%2E%2E%2Fsecret.txt",
        ".%2e/secret.txt",
        "sub/../../secret.txt",
        "sub/%2e%2e/%2e%2e/secret.txt",
        "sub/..%2f..%2fsecret.txt",
        "%252e%252e/secret.txt",
        "..%5csecret.txt",
        "..%255csecret.txt",
        "..;/secret.txt",
        "%c0%ae%c0%ae/secret.txt",
        "%ef%bc%8e%ef%bc%8e/secret.txt",
        "/../secret.txt",
        "//etc/passwd",
        "%2fetc%2fpasswd",
        "sub/page.html%00.txt",
        "sub/page.html/../../../secret.txt",
        "link-out.txt",
        "etc/passwd",
        "etc%2fpasswd",
        ".env",
        "sub/",
        "sub",
        "",
    ] {
        let target = format!("{}{path}", paths::STATIC);
        let what = format!("GET {target}");
        let res = fetch_get(addr, &target).await?;
        ensure!(
            matches!(res.status(), 400 | 404),
            "{what}: status {}, want 404 (or 400)",
            res.status()
        );
        let text = res.text();
        ensure!(
            !text.contains(SECRET) && !text.contains("root:"),
            "{what}: served a file outside the directory"
        );
    }
    for (path, body) in [
        ("index.html", "<p>in</p>"),
        ("sub/page.html", "<p>sub</p>"),
        ("link-in.html", "<p>sub</p>"),
        ("sub%2Fpage.html", "<p>sub</p>"),
    ] {
        let target = format!("{}{path}", paths::STATIC);
        let res = fetch_get(addr, &target).await?;
        ensure!(
            res.status() == 200 && res.text() == body,
            "GET {target}: status {}, body {:?}",
            res.status(),
            elide(&res.text(), 40)
        );
    }
    Ok(())
}
