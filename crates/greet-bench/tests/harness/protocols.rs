//! The load over every protocol: the three servers loaded over h2c, https and h2 with every
//! answer checked, the protocol recorded, HTTP/2 connections shared by `--streams`, and
//! `--protocol` / `--streams` that cannot be honoured refused in one line.

use crate::common::{assert_one_line_error, bench_ok, out_dir, packages, results, BENCH};
use greet_probe::Protocol;

#[test]
fn the_ladder_runs_over_every_protocol() {
    for protocol in ["h2c", "https", "h2"] {
        let out = out_dir(&format!("protocol-{protocol}"));
        let run = bench_ok(&[
            "--concurrency",
            "10,30",
            "--delay-ms",
            "50",
            "--protocol",
            protocol,
            "--out",
            out.to_str().expect("utf-8 path"),
        ]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        let stdout = String::from_utf8_lossy(&run.stdout);
        let tls = protocol != "h2c";
        assert_eq!(
            stdout.contains(&format!(
                "TLS ({protocol}): a full handshake per fresh connection"
            )),
            tls,
            "{stdout}"
        );
        assert!(
            stderr.contains(&format!("answers over {protocol}")),
            "every measured server is checked over {protocol} first: {stderr}"
        );
        let ladder = results(&out.join("results.json"))
            .sections
            .ladder
            .expect("the ladder's section");
        assert_eq!(
            (ladder.transport.protocol.name(), ladder.transport.streams),
            (protocol, 1)
        );
        assert!(
            ladder.frame.failures.is_empty(),
            "{:?}",
            ladder.frame.failures
        );
        let names: Vec<_> = ladder.servers.iter().map(|s| s.name.clone()).collect();
        assert_eq!(names, packages());
        for server in &ladder.servers {
            assert_eq!(server.levels.len(), 2, "{protocol} {}", server.name);
            for level in &server.levels {
                let load = &level.run.load;
                let what = format!("{protocol} {} c={}", server.name, level.concurrency);
                assert_eq!(load.success_rate, 100.0, "{what}: {:?}", load.errors);
                assert_eq!(load.requests, level.concurrency as u64, "{what}");
                // One request per fresh connection (and a full handshake), as over HTTP/1.1.
                assert_eq!(load.connects, load.requests, "{what}");
                match &load.handshake_ms {
                    Some(h) => {
                        assert!(tls, "{what}: no handshake in cleartext");
                        assert_eq!(h.count, load.requests, "{what}");
                        assert_eq!(h.resumed, 0, "{what}: no session resumed by default");
                        assert!(
                            0.0 < h.p50 && h.p50 <= h.p99 && h.p99 <= h.max,
                            "{what}: {h:?}"
                        );
                    }
                    None => assert!(!tls, "{what}: every TLS connection's handshake timed"),
                }
            }
        }
    }
}

/// `--tls-resume`: the ladder's fresh connections resume the sessions the ones before left
/// (rustls's client keeps 8 tickets a server, one used per connection), said in the table.
#[test]
fn tls_sessions_resume_when_asked() {
    let out = out_dir("protocol-resume");
    let run = bench_ok(&[
        "--servers",
        "hyper",
        "--concurrency",
        "10,30",
        "--delay-ms",
        "50",
        "--protocol",
        "https",
        "--tls-resume",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("resuming the sessions earlier ones left"),
        "{stdout}"
    );
    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    assert!(ladder.transport.tls_resume);
    let handshakes: Vec<_> = ladder.servers[0]
        .levels
        .iter()
        .map(|l| l.run.load.handshake_ms.clone().expect("over TLS"))
        .collect();
    for h in &handshakes {
        assert!(h.resumed <= h.count, "{h:?}");
    }
    // The second level's connections find the first's tickets.
    assert!(handshakes[1].resumed > 0, "{handshakes:?}");
}

#[test]
fn http2_users_share_connections_by_streams() {
    let out = out_dir("protocol-streams");
    bench_ok(&[
        "loops",
        "--quiet",
        "--servers",
        "hyper,actix",
        "--shapes",
        "8x25",
        "--repeats",
        "1",
        "--protocol",
        "h2",
        "--streams",
        "4",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let loops = results(&out.join("results.json"))
        .sections
        .loops
        .expect("loops");
    assert_eq!(
        (loops.transport.protocol.name(), loops.transport.streams),
        ("h2", 4)
    );
    assert!(
        loops.frame.failures.is_empty(),
        "{:?}",
        loops.frame.failures
    );
    for server in &loops.shapes[0].servers {
        for run in &server.runs {
            assert_eq!(run.load.success_rate, 100.0, "{}: {run:?}", server.name);
            assert_eq!(run.load.requests, 8 * 25, "{}", server.name);
            // Eight users, four to a connection.
            assert_eq!(run.load.connects, 2, "{}: {run:?}", server.name);
        }
    }
}

#[test]
fn protocols_that_cannot_be_honoured_are_refused_in_one_line() {
    let line = assert_one_line_error(&["--streams", "4"]);
    assert!(line.contains("--protocol h2c or h2"), "{line}");
    // A list of streams is capacity's and protocols' alone, and over HTTP/2.
    let line = assert_one_line_error(&["rate", "--protocol", "h2c", "--streams", "1,10"]);
    assert!(
        line.contains("only capacity and protocols take a list"),
        "{line}"
    );
    let line = assert_one_line_error(&["rate", "--tls-resume"]);
    assert!(line.contains("--protocol https or h2"), "{line}");
    // Short-lived connections are keep-alive users': the ladder and the open loops have none.
    for scenario in ["ladder", "rate", "capacity"] {
        let line = assert_one_line_error(&[scenario, "--requests-per-connection", "10"]);
        assert!(
            line.contains("--requests-per-connection 10 makes keep-alive users reconnect"),
            "{scenario}: {line}"
        );
    }
    let line = assert_one_line_error(&["capacity", "--streams", "1,10"]);
    assert!(line.contains("--protocol h2c or h2"), "{line}");
    let line = assert_one_line_error(&["capacity", "--protocol", "h2c", "--streams", "1,0"]);
    assert!(line.contains("\"0\""), "{line}");
    let line = assert_one_line_error(&["--protocol", "h2", "--servers", "hyper,tomcat"]);
    assert!(
        line.contains("tomcat") && line.contains("cleartext"),
        "{line}"
    );
    let line = assert_one_line_error(&["--protocol", "h3"]);
    assert!(line.contains("h3"), "{line}");
    let line = assert_one_line_error(&["--target", "tls=https://127.0.0.1:8443"]);
    assert!(line.contains("https or h2"), "{line}");
    let line = assert_one_line_error(&["--protocol", "h2", "--target", "x=http://127.0.0.1:1"]);
    assert!(line.contains("http1 or h2c"), "{line}");
}

#[test]
fn protocols_quick_measures_every_server_over_every_protocol() {
    let out = out_dir("protocols-scenario");
    let run = bench_ok(&[
        "protocols",
        "--quick",
        "--quiet",
        "--streams",
        "1,4",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("Protocols: zero delay"), "{stdout}");
    assert!(stdout.contains("h2c, 4 streams"), "{stdout}");
    let section = results(&out.join("results.json"))
        .sections
        .protocols
        .expect("the protocols section");
    assert_eq!(section.protocols, Protocol::ALL);
    assert!(
        section.frame.failures.is_empty(),
        "{:?}",
        section.frame.failures
    );
    // HTTP/2 at each stream count, the others at one.
    let cases = section.cases();
    assert_eq!(cases.len(), 6, "{cases:?}");
    assert_eq!(section.cells.len(), 3 * 6, "servers x cases");
    for cell in &section.cells {
        let what = format!("{} {}", cell.server, cell.case());
        assert_eq!(cell.runs.len(), section.frame.repeats, "{what}");
        assert_eq!(cell.success_rate, 100.0, "{what}");
        assert!(cell.requests_per_s.median > 0.0, "{what}");
        let tls = cell.protocol.tls();
        for run in &cell.runs {
            assert_eq!(run.load.handshake_ms.is_some(), tls, "{what}");
            // The users share connections by the cell's streams.
            let connections = section.concurrency.div_ceil(cell.streams) as u64;
            assert_eq!(run.load.connects, connections, "{what}");
        }
    }
    // Every case but HTTP/1.1 against the same server's HTTP/1.1.
    assert_eq!(section.of_http1.len(), 3 * 5);
    for g in &section.of_http1 {
        let cell = |p: Protocol, streams: usize| {
            section
                .cells
                .iter()
                .find(|c| c.server == g.server && c.protocol == p && c.streams == streams)
                .expect("cell")
        };
        let expected = cell(g.protocol, g.streams).requests_per_s.median
            / cell(Protocol::Http1, 1).requests_per_s.median;
        assert!((g.gain.gain - expected).abs() < 1e-9, "{g:?}");
    }
    // Per case, every pair of servers on their shares of their HTTP/1.1.
    assert_eq!(section.comparisons.len(), 5);
    for c in &section.comparisons {
        assert_eq!(c.comparisons.len(), 3, "{c:?}");
    }
    assert!(out.join("protocols.csv").is_file() && out.join("protocols.svg").is_file());
}

#[test]
fn check_verifies_running_servers_over_http2_and_tls() {
    use greet_conformance::spawn::{quick, spawn};
    use greet_server::ServerConfig;

    let start = |config| spawn(greet_hyper::run, config).expect("server starts");
    let plain = start(quick());
    let tls = start(ServerConfig {
        tls_self_signed: true,
        ..quick()
    });
    let check = |url: &str, extra: &[&str]| {
        let run = std::process::Command::new(BENCH)
            .args(["check", url])
            .args(extra)
            .output()
            .expect("greet-bench runs");
        let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
        (run.status.code(), stdout)
    };
    let plain_url = plain.base_url();
    let tls_url = format!("https://{}", tls.addr());
    let (code, out) = check(&plain_url, &["--protocol", "h2c"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("contract check passed (and the same over h2c)"),
        "{out}"
    );
    let (code, out) = check(&tls_url, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("over https and h2"), "{out}");
    // The wrong scheme for the protocol, and cleartext on a TLS port, fail in one line each.
    let (code, out) = check(&tls_url, &["--protocol", "h2c"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("needs an http:// URL"), "{out}");
    let (code, out) = check(&format!("http://{}", tls.addr()), &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out.trim().lines().count(), 1, "{out}");
}
