//! Prints the bad-input table as Markdown, with what each server actually answers:
//! `cargo run -p greet-conformance --example bad_input_table` (the README's table).

use greet_conformance::bad_input::{answer, table, Answer};
use greet_conformance::spawn::spawn;
use greet_core::ServerConfig;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let config = ServerConfig {
        port: 0,
        delay_ms: 0,
        shutdown_timeout_secs: 1,
        ..ServerConfig::default()
    };
    let servers = [
        spawn(greet_axum::run, config.clone())?,
        spawn(greet_actix::run, config.clone())?,
        spawn(greet_hyper::run, config)?,
    ];
    println!("| input | axum | actix-web | hyper | why they differ |");
    println!("|---|---|---|---|---|");
    for row in table() {
        let mut cells = Vec::new();
        for server in &servers {
            cells.push(match answer(server.addr(), &row.request).await {
                Ok(Answer::Status(s)) => s.to_string(),
                Ok(Answer::Closed) => "closed".to_owned(),
                Err(err) => format!("error: {err}"),
            });
        }
        println!("| {} | {} | {} |", row.name, cells.join(" | "), row.why);
    }
    Ok(())
}
