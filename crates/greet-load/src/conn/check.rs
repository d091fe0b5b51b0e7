//! The light check: one request of a load on a fresh connection, its answer checked, and
//! what came back instead when it fails ([`CheckFailed`]).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use greet_probe::Protocol;

use super::{request, Connection, Wire};
use crate::count::{ErrorKind, Outcome};
use crate::expect::Check;
use crate::message::{Header, RequestBody};

/// Why the light check of a target failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailed {
    /// `GET`, or `POST` with a body.
    pub method: &'static str,
    /// The target asked for.
    pub target: String,
    /// What came back instead of a valid answer.
    pub why: Unanswered,
}

/// What came back instead of a valid answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unanswered {
    /// No connection.
    Connect,
    /// No answer within the limit.
    Timeout(Duration),
    /// The server settled on another protocol than this one.
    Protocol(Protocol),
    /// No valid HTTP answer.
    NotHttp,
    /// An answer the check refused: its status and the start of its body.
    Refused {
        /// Its status.
        status: u16,
        /// Its body, lossily as text, cut at 60 characters.
        body: String,
        /// Whether the body was cut.
        cut: bool,
    },
}

impl std::fmt::Display for CheckFailed {
    /// One short line: `GET /x: cannot connect`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: ", self.method, self.target)?;
        match &self.why {
            Unanswered::Connect => f.write_str("cannot connect"),
            Unanswered::Timeout(limit) => write!(f, "no answer within {limit:?}"),
            Unanswered::Protocol(p) => write!(f, "the server would not speak {p}"),
            Unanswered::NotHttp => f.write_str("no valid HTTP answer"),
            Unanswered::Refused { status, body, cut } => write!(
                f,
                "answered {status} {body:?}{}, which is not what --expect asks for",
                if *cut { "…" } else { "" }
            ),
        }
    }
}

impl std::error::Error for CheckFailed {}

/// The light check: one `GET target` on a fresh connection over `wire`, valid as `check`
/// says, within `timeout`.
pub async fn check_once(
    addr: SocketAddr,
    wire: &Wire,
    target: &str,
    check: &Check,
    timeout: Duration,
) -> Result<(), CheckFailed> {
    check_request(addr, wire, (target, &[], None), check, timeout).await
}

/// [`check_once`] with a load's own request: its header fields, and its body as a POST.
pub async fn check_request(
    addr: SocketAddr,
    wire: &Wire,
    (target, headers, body): (&str, &[Header], Option<&RequestBody>),
    check: &Check,
    timeout: Duration,
) -> Result<(), CheckFailed> {
    let request = request(addr, target, headers, body, wire);
    let mut conn = Connection::new(addr, wire);
    let now = Instant::now();
    let outcome = conn.send(&request, check, timeout, now, now).await;
    conn.close().await;
    let why = match outcome {
        Outcome::Ok { .. } => return Ok(()),
        Outcome::Failed { kind, .. } => match kind {
            ErrorKind::Connect => Unanswered::Connect,
            ErrorKind::Timeout => Unanswered::Timeout(timeout),
            ErrorKind::Protocol => Unanswered::Protocol(wire.protocol),
            ErrorKind::Io | ErrorKind::Panic => Unanswered::NotHttp,
            ErrorKind::Status | ErrorKind::Body => {
                let (status, body) = conn.answer();
                let text = String::from_utf8_lossy(body);
                Unanswered::Refused {
                    status,
                    body: text
                        .chars()
                        .take(60)
                        .collect::<String>()
                        .replace(['\r', '\n'], " "),
                    cut: text.chars().count() > 60,
                }
            }
        },
    };
    Err(CheckFailed {
        method: if body.is_some() { "POST" } else { "GET" },
        target: target.to_owned(),
        why,
    })
}
