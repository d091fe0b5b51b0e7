//! What a knob ([`greet_server::Knob`]) gives up, as the contract says it: [`failing_rows`] runs
//! the quick cases, the slow head, HTTP/1.1's idle limit and a WebSocket echo against a live
//! server and names every row that fails. A server at its defaults passes every one of them
//! (the contract suite), so each row named with a knob on is one that the knob changed.

use std::net::SocketAddr;

use greet_probe::tls::Trust;
use greet_probe::Protocol;

use crate::{cases, failing, protocols, quick_cases};

/// The row of [`cases::slow_head_is_cut`].
pub const SLOW_HEAD: &str = "slow_head_is_cut";
/// The row of [`protocols::idle_connection_is_closed`] over HTTP/1.1.
pub const IDLE: &str = "idle_connection_is_closed";
/// The row of [`cases::ws_echoes`]: a WebSocket handshake and its echo.
pub const WS: &str = "ws_echoes";

/// Every row of the contract that the server at `addr` fails, with what differed, in
/// [`QUICK_CASES`](crate::QUICK_CASES) order and then the slow head, the idle limit and the
/// WebSocket echo; all run at once, in about ten seconds (the slow head's wait).
pub async fn failing_rows(addr: SocketAddr) -> Vec<(&'static str, String)> {
    let mut runs = quick_cases(addr);
    runs.push((SLOW_HEAD, tokio::spawn(cases::slow_head_is_cut(addr))));
    runs.push((
        IDLE,
        tokio::spawn(async move {
            protocols::idle_connection_is_closed(addr, Protocol::Http1, &Trust::Any, "/health")
                .await
                .map(|_| ())
        }),
    ));
    runs.push((WS, tokio::spawn(cases::ws_echoes(addr))));
    failing(runs).await
}
