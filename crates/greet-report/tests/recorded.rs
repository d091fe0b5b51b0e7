//! The block diagnostics on a recorded run: the eight throughput rows of a default `workloads`
//! run at 20 blocks (`workloads-placed.json`: three servers, each block's figure, `null` where
//! its load was left out, each load's place in the run, and whether the cell was capped), on a
//! quiet day of this machine (steal at most 2.1%).
//!
//! What they found there: no server's place in a block moved a figure past the threshold over
//! the pairs tested, and no blocks left out fell on one server, but for WebSocket echo against
//! actix-web, every block of which the client's limit left out: a capped cell, which the
//! diagnostic leaves to the scorecard's `Capped` (counted, it would be named).

use greet_report::{left_out, order};
use serde::Deserialize;

#[derive(Deserialize)]
struct Row {
    figure: String,
    servers: Vec<Server>,
}

#[derive(Deserialize)]
struct Server {
    server: String,
    capped: bool,
    blocks: Vec<Option<f64>>,
    seqs: Vec<Option<u64>>,
}

fn recorded() -> Vec<Row> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads-placed.json");
    let text = std::fs::read_to_string(&path).expect("workloads-placed.json");
    serde_json::from_str(&text).expect("rows")
}

/// A server's blocks as the diagnostics read them: not a number where left out.
fn placing(s: &Server) -> order::Placing<'_> {
    let blocks = s.blocks.iter().map(|b| b.unwrap_or(f64::NAN)).collect();
    (&s.server, blocks, &s.seqs)
}

#[test]
fn a_recorded_run_shows_no_order_effect_and_no_lopsided_blocks() {
    let rows = recorded();
    assert_eq!(rows.len(), 8);
    let (mut placed, mut lopsided, mut counted) = (Vec::new(), Vec::new(), Vec::new());
    for row in &rows {
        let what = format!("on workloads: {}", row.figure);
        let all: Vec<_> = row.servers.iter().map(placing).collect();
        placed.extend(order::placed(&what, &all));
        let uncapped = row.servers.iter().filter(|s| !s.capped).map(placing);
        lopsided.extend(left_out::lopsided(&what, uncapped));
        counted.extend(left_out::lopsided(&what, all));
    }
    // Every pair with blocks each way round is tested: 3 pairs on each of 8 rows, but the two
    // of WebSocket echo whose actix-web blocks are all left out.
    assert_eq!(placed.len(), 22, "{placed:?}");
    let smallest = placed.iter().map(|p| p.position.p).fold(1.0, f64::min);
    eprintln!(
        "order: {} pairs, smallest p {smallest:.4}, threshold {:.4}",
        placed.len(),
        0.05 / placed.len() as f64
    );
    assert!(order::words(&placed).is_empty(), "{placed:?}");
    assert!(lopsided.is_empty(), "{lopsided:?}");
    // The capped cell's blocks, counted, would be named: the client's limit follows the server.
    let said = left_out::words(&counted);
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said
        .iter()
        .all(|w| w.contains("websocket") && w.contains("greet-actix's")));
}
