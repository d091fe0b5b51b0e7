//! Real PostgreSQL and Redis servers, started from the machine's packages on loopback ports in
//! a temporary directory, for the tests and the harness; stopped and removed on drop.
//!
//! PostgreSQL refuses to run as root: when this process is root, `initdb` and `postgres`
//! run as the `postgres` system user (the Debian package creates it). A store that is not
//! installed is an error naming the package to install, never a silent skip.
//!
//! Every server started here has a watchdog (a `sh` loop) that stops it when the process that
//! started it is gone, so a test binary that exits without dropping (a `static` instance, a
//! panic in a signal handler) leaves nothing running.

use std::fs;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::Signal;

use server::Server;

mod server;

/// The role `initdb` creates, owner of every database here (trust authentication).
pub const PG_USER: &str = "greet";

/// What to install when a store is missing.
pub const PG_PACKAGE: &str = "apt-get install -y postgresql";
/// What to install when Redis is missing.
pub const REDIS_PACKAGE: &str = "apt-get install -y redis-server";
/// Redis keeps one visit counter per distinct name: bounded by memory, least recently used
/// keys evicted first, as `compose.yaml` runs it, so a flood of unique names levels off.
pub const REDIS_BOUNDS: [&str; 4] = ["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"];

/// Why a store could not be started: one line for a person, saying what to do where there is
/// something to do.
#[derive(Debug)]
pub enum LaunchError {
    /// Not installed here: what is missing, and the line that installs it.
    NotInstalled {
        /// What was looked for.
        what: &'static str,
        /// `apt-get install -y …`.
        install: &'static str,
    },
    /// A file, directory, port or program that could not be used.
    Io {
        /// What was being done.
        what: String,
        /// What the system said.
        source: io::Error,
    },
    /// A program that ran and failed, with its last words.
    Failed {
        /// What failed.
        what: String,
        /// Its last line of output.
        last: String,
    },
}

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotInstalled { what, install } => write!(f, "{what}: {install}"),
            Self::Io { what, source } => write!(f, "{what}: {source}"),
            Self::Failed { what, last } => write!(f, "{what}: {last}"),
        }
    }
}

impl std::error::Error for LaunchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `what` failed with `source`.
fn io_error(what: impl Into<String>) -> impl FnOnce(io::Error) -> LaunchError {
    let what = what.into();
    move |source| LaunchError::Io { what, source }
}

/// What to install before [`Postgres::start`] and [`Redis::start`] can run, as one
/// `apt-get install` line; `None` when both are there.
pub fn missing_packages() -> Option<String> {
    const APT: &str = "apt-get install -y ";
    let missing: Vec<&str> = [
        (PG_PACKAGE, postgres_bin().is_none()),
        (
            REDIS_PACKAGE,
            crate::process::which("redis-server", []).is_none(),
        ),
    ]
    .into_iter()
    .filter(|&(_, missing)| missing)
    .map(|(install, _)| install.trim_start_matches(APT))
    .collect();
    (!missing.is_empty()).then(|| format!("{APT}{}", missing.join(" ")))
}

/// A PostgreSQL server of our own.
#[derive(Debug)]
pub struct Postgres {
    server: Server,
    bin: PathBuf,
    data: PathBuf,
    counting: bool,
}

/// A Redis server of our own.
#[derive(Debug)]
pub struct Redis {
    server: Server,
    bin: PathBuf,
}

impl Postgres {
    /// `initdb` in a fresh temporary directory, then the server on a free loopback port;
    /// returns once it accepts connections. The role [`PG_USER`] owns it; the `postgres`
    /// database is empty.
    pub fn start() -> Result<Self, LaunchError> {
        Self::start_with(false)
    }

    /// [`Postgres::start`], with `pg_stat_statements` loaded: the statement counters
    /// TechEmpower's verification reads (each database that reads them creates the extension).
    /// Off in [`Postgres::start`], where it would cost every statement a little.
    pub fn start_counting_statements() -> Result<Self, LaunchError> {
        Self::start_with(true)
    }

    fn start_with(counting: bool) -> Result<Self, LaunchError> {
        let bin = postgres_bin().ok_or(LaunchError::NotInstalled {
            what: "PostgreSQL server not found (initdb, postgres)",
            install: PG_PACKAGE,
        })?;
        let user = if is_root() {
            Some(system_user("postgres").ok_or(LaunchError::NotInstalled {
                what: "running as root, PostgreSQL needs the postgres user",
                install: PG_PACKAGE,
            })?)
        } else {
            None
        };
        let dir = temp_dir("pg", user)?;
        let data = dir.join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .args([
                "-D",
                path_str(&data)?,
                "-U",
                PG_USER,
                "-A",
                "trust",
                "-E",
                "UTF8",
            ])
            .args(["--no-sync", "--locale=C"]);
        run_as(&mut initdb, user);
        let out = initdb.output().map_err(io_error("initdb"))?;
        if !out.status.success() {
            let _ = fs::remove_dir_all(&dir);
            return Err(LaunchError::Failed {
                what: "initdb failed".to_owned(),
                last: last_line(&String::from_utf8_lossy(&out.stderr)),
            });
        }
        let mut pg = Self {
            server: Server::new(dir, user),
            bin,
            data,
            counting,
        };
        pg.server.port = free_port()?;
        pg.restart()?;
        Ok(pg)
    }

    /// Starts the server again (after [`Postgres::stop`]) on the same port and data.
    pub fn restart(&mut self) -> Result<(), LaunchError> {
        let mut cmd = Command::new(self.bin.join("postgres"));
        cmd.args(["-D", path_str(&self.data)?, "-h", "127.0.0.1"])
            .args(["-p", &self.server.port.to_string()])
            .args(["-k", path_str(&self.server.dir)?])
            // A throwaway server: durability buys nothing here.
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
            .args(["-c", "full_page_writes=off", "-c", "max_connections=300"]);
        if self.counting {
            cmd.args(["-c", "shared_preload_libraries=pg_stat_statements"])
                .args(["-c", "pg_stat_statements.track=all"]);
        }
        self.server
            .spawn(cmd, "ready to accept connections", Signal::SIGINT)
    }

    /// Stops the server (fast shutdown: open connections are cut) and waits for it.
    pub fn stop(&mut self) {
        self.server.stop(Signal::SIGINT);
    }

    /// `postgres://greet@127.0.0.1:PORT/DB`.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://{PG_USER}@127.0.0.1:{}/{database}",
            self.server.port
        )
    }

    /// Creates an empty database.
    pub fn create_database(&self, name: &str) -> Result<(), LaunchError> {
        let out = Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-p", &self.server.port.to_string()])
            .args(["-U", PG_USER, name])
            .output()
            .map_err(io_error("createdb"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(LaunchError::Failed {
                what: format!("createdb {name}"),
                last: last_line(&String::from_utf8_lossy(&out.stderr)),
            })
        }
    }

    /// The postmaster's pid, while it runs (its backends are its children).
    pub fn pid(&self) -> Option<u32> {
        self.server.pid()
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }
}

impl Redis {
    /// A Redis server on a free loopback port, without persistence; returns once it accepts
    /// connections.
    pub fn start() -> Result<Self, LaunchError> {
        let bin = crate::process::which("redis-server", []).ok_or(LaunchError::NotInstalled {
            what: "Redis server not found (redis-server)",
            install: REDIS_PACKAGE,
        })?;
        let dir = temp_dir("redis", None)?;
        let mut redis = Self {
            server: Server::new(dir, None),
            bin,
        };
        redis.server.port = free_port()?;
        redis.restart()?;
        Ok(redis)
    }

    /// Starts the server again (after [`Redis::stop`]) on the same port; it starts empty.
    pub fn restart(&mut self) -> Result<(), LaunchError> {
        let mut cmd = Command::new(&self.bin);
        cmd.args([
            "--port",
            &self.server.port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .args(["--save", "", "--appendonly", "no"])
        .args(REDIS_BOUNDS)
        .args(["--dir", path_str(&self.server.dir)?]);
        self.server
            .spawn(cmd, "Ready to accept connections", Signal::SIGTERM)
    }

    /// Stops the server and waits for it.
    pub fn stop(&mut self) {
        self.server.stop(Signal::SIGTERM);
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.server.port)
    }

    /// The server's pid, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.server.pid()
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }
}

/// The newest `/usr/lib/postgresql/<version>/bin` with a server, else `initdb` on PATH.
fn postgres_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).or_else(|| {
        let initdb = crate::process::which("initdb", [])?;
        let bin = fs::canonicalize(initdb).ok()?.parent()?.to_owned();
        bin.join("postgres").is_file().then_some(bin)
    })
}

fn is_root() -> bool {
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `(uid, gid)` of a system user, from /etc/passwd.
fn system_user(name: &str) -> Option<(u32, u32)> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.first() == Some(&name) && fields.len() > 3)
            .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
            .flatten()
    })
}

fn run_as(cmd: &mut Command, user: Option<(u32, u32)>) {
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid);
    }
}

/// A new directory under the temp dir, owned by `user` if given.
fn temp_dir(kind: &str, user: Option<(u32, u32)>) -> Result<PathBuf, LaunchError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("greet-{kind}-{}-{n}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(io_error(dir.display().to_string()))?;
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
            .map_err(io_error(dir.display().to_string()))?;
    }
    Ok(dir)
}

/// A loopback port free right now (the stores cannot be told to pick one themselves).
fn free_port() -> Result<u16, LaunchError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(io_error("no free port"))
}

fn path_str(path: &Path) -> Result<&str, LaunchError> {
    path.to_str().ok_or_else(|| LaunchError::Failed {
        what: path.display().to_string(),
        last: "not UTF-8".to_owned(),
    })
}

fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(no output)")
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use std::net::TcpStream;
    use std::time::Duration;

    use super::*;

    #[test]
    fn reads_system_users() {
        assert_eq!(system_user("root"), Some((0, 0)));
        assert_eq!(system_user("no-such-user-here"), None);
    }

    /// Redis's answer to one inline command.
    fn redis_says(addr: SocketAddr, command: &str) -> String {
        use std::io::{Read, Write};
        let mut conn = TcpStream::connect(addr).expect("connect");
        conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        conn.write_all(format!("{command}\r\n").as_bytes()).unwrap();
        let mut answer = vec![0; 4096];
        let n = conn.read(&mut answer).expect("an answer");
        String::from_utf8_lossy(&answer[..n]).into_owned()
    }

    #[test]
    #[ignore = "needs redis-server: apt-get install -y redis-server"]
    fn redis_starts_bounded_stops_and_restarts() {
        let mut redis = Redis::start().expect("redis-server");
        let policy = redis_says(redis.addr(), "CONFIG GET maxmemory*");
        assert!(policy.contains("allkeys-lru"), "{policy}");
        assert!(policy.contains(&(64u64 << 20).to_string()), "{policy}");
        let dir = redis.server.dir.clone();
        redis.stop();
        assert!(TcpStream::connect(redis.addr()).is_err());
        redis.restart().expect("restart");
        assert!(TcpStream::connect(redis.addr()).is_ok());
        drop(redis);
        assert!(!dir.exists());
    }

    #[test]
    #[ignore = "needs PostgreSQL: apt-get install -y postgresql"]
    fn postgres_starts_stops_and_restarts() {
        let mut pg = Postgres::start().expect("postgres");
        pg.create_database("t1").expect("createdb");
        assert!(pg.create_database("t1").is_err(), "twice");
        let pid = pg.pid().unwrap();
        pg.stop();
        assert!(TcpStream::connect(pg.addr()).is_err());
        assert!(greet_probe::procfs::stat(pid).is_none(), "stopped");
        pg.restart().expect("restart");
        pg.create_database("t2").expect("createdb after restart");
    }
}
