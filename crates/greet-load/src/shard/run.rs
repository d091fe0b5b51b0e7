//! The agent's side of a shard: the server reached ([`reach`]), the shared start waited for,
//! the agent's share run, and its [`Report`] made ([`run_shard`]).

use std::fmt;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use greet_probe::Protocol;

use super::report::Report;
use super::Shard;
use crate::conn::{check_once, Wire};
use crate::expect::{Check, Expect};
use crate::run::run;
use crate::work::{Load, Work};

/// Why an agent could not run its shard.
#[derive(Debug)]
pub enum ShardError {
    /// `--index` not below `--agents`.
    Index {
        /// The index given.
        index: usize,
        /// The agents given.
        agents: usize,
    },
    /// The TLS client could not be made.
    Tls(rustls::Error),
    /// The server never answered, or its name never resolved.
    Unreachable {
        /// Its URL.
        url: String,
        /// The last failure.
        why: Box<dyn std::error::Error + Send + Sync>,
        /// How long the agent waited.
        wait: Duration,
    },
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Index { index, agents } => {
                write!(f, "--index {index} is not below --agents {agents}")
            }
            Self::Tls(err) => write!(f, "the TLS client: {err}"),
            Self::Unreachable { url, why, wait } => write!(f, "{url}: {why} (waited {wait:?})"),
        }
    }
}

impl std::error::Error for ShardError {}

/// The agent's side: waits for the shard's start, runs its share of the level on the server
/// at `addr` (its URL resolved), and returns what it counted.
pub async fn run_shard(shard: &Shard, addr: SocketAddr) -> Result<Report, ShardError> {
    if shard.index >= shard.agents {
        return Err(ShardError::Index {
            index: shard.index,
            agents: shard.agents,
        });
    }
    let wire = Wire::new(shard.protocol, &greet_probe::tls::Trust::Any)
        .map_err(ShardError::Tls)?
        .resuming(shard.tls_resume)
        .websocket(shard.websocket);
    let work = shard.own();
    let start_at = UNIX_EPOCH + Duration::from_millis(shard.start_at_ms);
    if let Ok(wait) = start_at.duration_since(SystemTime::now()) {
        tokio::time::sleep(wait).await;
    }
    let start_skew_s = since(start_at);
    let started_s = since(UNIX_EPOCH);
    let target = shard.target();
    let load = Load {
        addr,
        check: Check::for_request(&target, &shard.headers, shard.body.as_ref(), &shard.expect),
        target,
        headers: shard.headers.clone(),
        body: shard.body.clone(),
        timeout: shard.timeout,
        wire,
        work: work.clone(),
    };
    let counted = run(&load, Default::default()).await;
    let (concurrency, requests) = match work {
        Work::Fresh {
            concurrency,
            requests,
        } => (concurrency, requests),
        Work::Sessions { users, .. } => (
            users,
            usize::try_from(counted.tally().requests()).unwrap_or(usize::MAX),
        ),
        Work::Paced(ref s) => (s.connections, 0),
    };
    let cpu_s = greet_probe::procfs::stat(std::process::id())
        .map(|s| s.cpu_seconds())
        .unwrap_or(0.0);
    Ok(Report {
        index: shard.index,
        agents: shard.agents,
        concurrency,
        requests,
        start_skew_s,
        started_s,
        cpu_s,
        counted,
    })
}

/// The server at `url`: its address, once it resolves and, when `wait` is not zero, once its
/// `/health` answers `ok` over `protocol`, tried every half second for up to `wait` (a
/// cluster starts the agents beside the server, not after it).
pub async fn reach(
    url: &str,
    protocol: Protocol,
    wait: Duration,
) -> Result<SocketAddr, ShardError> {
    let deadline = Instant::now() + wait;
    let wire = Wire::new(protocol, &greet_probe::tls::Trust::Any).map_err(ShardError::Tls)?;
    let health = greet_core::paths::HEALTH;
    let check = Check::for_target(health, &Expect::Greeting);
    loop {
        let tried: Result<SocketAddr, Box<dyn std::error::Error + Send + Sync>> =
            match greet_probe::resolve(url).await {
                Ok(addr) if wait.is_zero() => return Ok(addr),
                Ok(addr) => check_once(addr, &wire, health, &check, Duration::from_secs(2))
                    .await
                    .map(|()| addr)
                    .map_err(Into::into),
                Err(why) => Err(why.into()),
            };
        match tried {
            Ok(addr) => return Ok(addr),
            Err(why) if Instant::now() >= deadline => {
                return Err(ShardError::Unreachable {
                    url: url.to_owned(),
                    why,
                    wait,
                })
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

/// Seconds since `then` (negative when it is still ahead).
fn since(then: SystemTime) -> f64 {
    match SystemTime::now().duration_since(then) {
        Ok(after) => after.as_secs_f64(),
        Err(before) => -before.duration().as_secs_f64(),
    }
}
