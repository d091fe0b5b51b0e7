//! `docs/bad-input.md` and `docs/http2-attacks.md` are generated from the bad-input table and
//! the hostile HTTP/2 clients, and what the three servers answer; these tests fail when the
//! files and the servers drift apart. Regenerate with
//! `GREET_UPDATE_DOCS=1 cargo test -p greet-conformance --test docs`.

use std::path::Path;

use std::time::Duration;

use greet_conformance::bad_input::{answer, markdown, table};
use greet_conformance::h2_attacks::{self, attack, Attack};
use greet_conformance::spawn::{spawn, Run, Spawned};
use greet_server::ServerConfig;

macro_rules! start_all {
    ($($short:ident => $run:path,)*) => {
        vec![$((stringify!($short), start($run)),)*]
    };
}

fn config() -> ServerConfig {
    ServerConfig {
        port: 0,
        delay_ms: 0,
        shutdown_timeout_secs: 1,
        ..ServerConfig::default()
    }
}

fn start(run: Run) -> Spawned {
    spawn(run, config()).expect("server starts")
}

/// Each server's cleartext and TLS (`--tls-self-signed`) instance.
fn start_pair(run: Run) -> (Spawned, Spawned) {
    let tls = ServerConfig {
        tls_self_signed: true,
        ..config()
    };
    (start(run), spawn(run, tls).expect("server starts"))
}

macro_rules! start_pairs {
    ($($short:ident => $run:path,)*) => {
        vec![$((stringify!($short), start_pair($run)),)*]
    };
}

/// The servers' names in the tables' heads.
fn head(short: &str) -> &str {
    if short == "actix" {
        "actix-web"
    } else {
        short
    }
}

/// Writes `generated` to `docs/NAME` under `GREET_UPDATE_DOCS`, else fails if it differs.
fn write_or_compare(name: &str, generated: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(name);
    if std::env::var_os("GREET_UPDATE_DOCS").is_some() {
        std::fs::write(&path, generated).expect("docs written");
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    let differ: Vec<String> = on_disk
        .lines()
        .zip(generated.lines())
        .filter(|(have, want)| have != want)
        .map(|(have, want)| format!("\n  on disk: {have}\n  now:     {want}"))
        .collect();
    assert!(
        on_disk == generated,
        "docs/{name} differs from what the servers answer{}; regenerate it with \
         GREET_UPDATE_DOCS=1 cargo test -p greet-conformance --test docs",
        differ.concat()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_doc_matches_the_table() {
    let servers: Vec<(&str, Spawned)> = greet_conformance::for_each_server!(start_all);
    let mut answers = Vec::new();
    for (_, server) in &servers {
        let mut column = Vec::new();
        for row in table() {
            column.push(answer(server.addr(), &row).await);
        }
        answers.push(column);
    }
    let names: Vec<&str> = servers.iter().map(|(short, _)| head(short)).collect();
    write_or_compare("bad-input.md", &markdown(&names, &answers));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_attacks_doc_matches_the_servers() {
    let servers: Vec<(&str, (Spawned, Spawned))> = greet_conformance::for_each_server!(start_pairs);
    let mut answers = Vec::new();
    for (_, (plain, tls)) in &servers {
        let mut column = Vec::new();
        for kind in Attack::ALL {
            let duration = Duration::from_millis(1500);
            column.push(attack(kind, plain.addr(), Some(tls.addr()), duration).await);
        }
        answers.push(column);
    }
    let names: Vec<&str> = servers.iter().map(|(short, _)| head(short)).collect();
    write_or_compare("http2-attacks.md", &h2_attacks::markdown(&names, &answers));
}
