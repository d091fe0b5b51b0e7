//! Servers the harness did not build, given with `--target`: small servers in the test that
//! answer as other stacks do (chunked, `Connection: close`, HTTP/1.0, another content type)
//! get the light check and load like the workspace's own; one that answers wrong fails in one
//! short line and the run goes on.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use crate::common::{assert_one_line_exit, bench, bench_ok, out_dir, results};

/// How a fake server frames its greeting.
#[derive(Clone, Copy)]
enum Style {
    /// Keep-alive, chunked body.
    Chunked,
    /// A length, then `Connection: close` and the close.
    Close,
    /// HTTP/1.0, no length: the body runs to the close.
    Http10,
    /// Keep-alive, `application/json`, a length.
    Json,
    /// 404 to everything.
    NotFound,
}

fn answer(style: Style) -> Vec<u8> {
    let words = ["Hello", "Hi", "Olá", "Oi", "Hallo"];
    let body = format!("{} World!", words[rand_index(words.len())]);
    match style {
        Style::Chunked => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n\
             {:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        ),
        Style::Close => format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ),
        Style::Http10 => format!("HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\n{body}"),
        Style::Json => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        ),
        Style::NotFound => {
            let page = "<html>".to_owned() + &"not here ".repeat(500) + "</html>";
            format!(
                "HTTP/1.1 404 Not Found\r\ncontent-length: {}\r\n\r\n{page}",
                page.len()
            )
        }
    }
    .into_bytes()
}

fn rand_index(n: usize) -> usize {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as usize)
        % n
}

/// A server on its own threads, one thread per connection, answering every request in `style`.
fn fake(style: Style) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream, style));
        }
    });
    addr
}

fn serve(mut stream: TcpStream, style: Style) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.drain(..end + 4);
            if stream.write_all(&answer(style)).is_err() {
                return;
            }
            if matches!(style, Style::Close | Style::Http10) {
                return;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn target(name: &str, style: Style) -> String {
    format!("{name}=http://{}", fake(style))
}

#[test]
fn foreign_targets_are_checked_lightly_and_loaded_and_a_wrong_one_fails_briefly() {
    let out = out_dir("targets");
    let targets = [
        target("chunked", Style::Chunked),
        target("close", Style::Close),
        target("http10", Style::Http10),
        target("json", Style::Json),
        target("broken", Style::NotFound),
    ];
    let mut args = vec!["--quiet", "--concurrency", "5,20"];
    for t in &targets {
        args.extend(["--target", t.as_str()]);
    }
    args.extend(["--out", out.to_str().expect("utf-8")]);
    let run = bench(&args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        run.status.code(),
        Some(1),
        "the broken one fails the run: {stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line for the broken target: {stderr}");
    assert!(
        lines[0].contains("broken") && lines[0].contains("404"),
        "{stderr}"
    );
    assert!(lines[0].len() < 300, "short: {} bytes", lines[0].len());

    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    let names: Vec<_> = ladder.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["chunked", "close", "http10", "json", "broken"]);
    for server in &ladder.servers[..4] {
        assert_eq!(server.levels.len(), 2, "{}", server.name);
        for level in &server.levels {
            let f = &level.run.load;
            assert_eq!(f.success_rate, 100.0, "{}: {f:?}", server.name);
            assert_eq!(f.requests, level.concurrency as u64);
        }
        assert!(
            server.startup_s.is_none(),
            "no start-up figure for a target"
        );
    }
    assert!(ladder.servers[4].levels.is_empty());
    assert_eq!(ladder.frame.failures.len(), 1);
    assert!(ladder.frame.failures[0]
        .error
        .starts_with("light check failed"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn keep_alive_scenarios_load_targets_too() {
    let chunked = target("chunked", Style::Chunked);
    let close = target("close", Style::Close);
    let out = out_dir("target-loops");
    bench_ok(&[
        "loops",
        "--quick",
        "--quiet",
        "--repeats",
        "2",
        "--target",
        &chunked,
        "--target",
        &close,
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    let loops = results(&out.join("results.json"))
        .sections
        .loops
        .expect("loops");
    for shape in &loops.shapes {
        let names: Vec<_> = shape.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["chunked", "close"]);
        for server in &shape.servers {
            for run in &server.runs {
                assert_eq!(run.load.success_rate, 100.0, "{run:?}");
                assert!(run.server.cpu_avg_pct.is_none(), "nothing sampled");
            }
        }
        let (chunked, close) = (&shape.servers[0].runs[0], &shape.servers[1].runs[0]);
        // Keep-alive holds on chunked answers; `Connection: close` costs a connection each.
        assert_eq!(chunked.load.connects, shape.users as u64);
        assert_eq!(close.load.connects, close.load.requests);
    }

    let soak_out = out_dir("target-soak");
    bench_ok(&[
        "soak",
        "--quick",
        "--quiet",
        "--target",
        &chunked,
        "--expect",
        "World!$",
        "--endpoints",
        "/greetings",
        "--out",
        soak_out.to_str().expect("utf-8"),
    ]);
    let soak = results(&soak_out.join("results.json"))
        .sections
        .soak
        .expect("soak");
    assert_eq!(soak.cells.len(), 2, "one target, one endpoint, two levels");
    for cell in &soak.cells {
        assert_eq!(
            (cell.server.as_str(), cell.success_rate),
            ("chunked", 100.0)
        );
        assert_eq!(cell.threads_total, None, "no threads counted for a target");
    }
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&soak_out);
}

#[test]
fn expectations_and_contracts_are_applied() {
    let json = target("json", Style::Json);
    let out = out_dir("target-expect");
    let dir = out.to_str().expect("utf-8");
    // The same small ladder on the target, with `extra` flags.
    let with = |extra: &[&'static str]| {
        let mut args = vec!["--quiet", "--concurrency", "3", "--target", &json];
        args.extend(extra);
        args.extend(["--out", dir]);
        args
    };
    // A pattern the answers do not match: the light check says so.
    let run = bench(&with(&["--expect", "^\\{"]));
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("not what --expect asks for"), "{stderr}");
    // `any` takes any 2xx.
    bench_ok(&with(&["--expect", "any"]));
    // The full contract is for servers that keep it: this one does not, in one short line.
    let run = bench(&with(&["--contract", "full"]));
    let stderr = assert_one_line_exit(&run, 1);
    assert!(
        stderr.contains("contract case(s) failed") && stderr.len() < 700,
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_target_that_answers_h2c_with_http1_is_a_failure_not_a_result() {
    let out = out_dir("targets-h2c");
    let t = target("http1-only", Style::Json);
    let run = bench(&[
        "--quiet",
        "--concurrency",
        "5",
        "--protocol",
        "h2c",
        "--expect",
        "any",
        "--target",
        &t,
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("would not speak h2c"), "{stderr}");
    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    assert_eq!(ladder.transport.protocol.name(), "h2c");
    assert_eq!(
        ladder.frame.failures.len(),
        1,
        "{:?}",
        ladder.frame.failures
    );
    assert!(ladder.servers.iter().all(|s| s.levels.is_empty()));
}
