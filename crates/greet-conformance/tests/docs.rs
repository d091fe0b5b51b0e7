//! `docs/bad-input.md` is generated from the bad-input table and what the three servers
//! answer; this test fails when the two drift apart. Regenerate with
//! `GREET_UPDATE_DOCS=1 cargo test -p greet-conformance --test docs`.

use std::path::Path;

use greet_conformance::bad_input::{answer, markdown, table};
use greet_conformance::spawn::{spawn, Spawned};
use greet_server::ServerConfig;

macro_rules! start_all {
    ($($short:ident => $run:path,)*) => {
        vec![$((stringify!($short), start($run)),)*]
    };
}

type Run = fn(
    std::net::TcpListener,
    ServerConfig,
    greet_conformance::spawn::Shutdown,
) -> std::io::Result<()>;

fn start(run: Run) -> Spawned {
    let config = ServerConfig {
        port: 0,
        delay_ms: 0,
        shutdown_timeout_secs: 1,
        ..ServerConfig::default()
    };
    spawn(run, config).expect("server starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_doc_matches_the_table() {
    let servers: Vec<(&str, Spawned)> = greet_conformance::for_each_server!(start_all);
    let mut answers = Vec::new();
    for (_, server) in &servers {
        let mut column = Vec::new();
        for row in table() {
            column.push(answer(server.addr(), &row.request).await);
        }
        answers.push(column);
    }
    let names: Vec<&str> = servers
        .iter()
        .map(|(short, _)| {
            if *short == "actix" {
                "actix-web"
            } else {
                short
            }
        })
        .collect();
    let generated = markdown(&names, &answers);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/bad-input.md");
    if std::env::var_os("GREET_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).expect("docs/bad-input.md written");
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "docs/bad-input.md differs from the table and the servers' answers; regenerate it with \
         GREET_UPDATE_DOCS=1 cargo test -p greet-conformance --test docs"
    );
}
