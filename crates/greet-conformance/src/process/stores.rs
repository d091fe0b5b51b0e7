//! Process tests of the stores: they cost nothing until used, and a flood of unique names
//! levels off in memory.

use super::*;

/// A directory under the temp dir of this test's own, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(what: &str) -> anyhow::Result<Self> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("greet-{what}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
        Ok(Self(dir))
    }

    fn files(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The stores cost nothing until used: a server that has served `/greetings`,
/// `/greetings/blocking` and `/health` has made no database file (its temp dir stays empty,
/// and the seed thread comes only with the file);
/// the first `/db` makes the file, seeds it and answers within the store timeout, and the
/// file goes when the server stops.
pub async fn stores_cost_nothing_until_used(bin: &str) -> Outcome {
    let tmp = TempDir::new("lazy")?;
    let mut server = Launch::new(bin)
        .args([
            "--delay-ms",
            "0",
            "--workers",
            "1",
            "--blocking-threads",
            "1",
        ])
        .env("TMPDIR", tmp.0.to_str().context("temp dir not UTF-8")?)
        .start()?;
    let addr = server.addr();
    for _ in 0..3 {
        cases::greets_world(addr).await?;
        cases::health_is_ok(addr).await?;
        cases::blocking_endpoint_greets(addr).await?;
    }
    let files = tmp.files();
    if !files.is_empty() {
        bail!("made {files:?} before any store-bound request");
    }
    let threads = procfs::status(server.pid())
        .context("no /proc status")?
        .threads;
    let started = Instant::now();
    let res = crate::client::get(addr, "/db").await?;
    let first_db = started.elapsed();
    eprintln!("{bin}: {threads} threads before the stores; first /db in {first_db:?}");
    if res.status() != 200 {
        bail!("first /db: status {}: {}", res.status(), res.text());
    }
    if first_db > greet_store::settings::DEFAULT_TIMEOUT {
        bail!("first /db took {first_db:?}");
    }
    // One database: its file and the two WAL mode keeps beside it.
    let files = tmp.files();
    let databases: Vec<&String> = files.iter().filter(|f| f.ends_with(".sqlite")).collect();
    let beside = |f: &String| {
        databases.len() == 1
            && [".sqlite", ".sqlite-wal", ".sqlite-shm"]
                .iter()
                .any(|end| f.strip_suffix(end) == databases[0].strip_suffix(".sqlite"))
    };
    if databases.len() != 1 || !files.iter().all(beside) {
        bail!("after /db the temp dir holds {files:?}, want one .sqlite file (and its -wal, -shm)");
    }
    let status = tokio::task::spawn_blocking(move || {
        let status = server.stop(Duration::from_secs(5));
        (status, server.stderr())
    })
    .await?;
    match status {
        (Ok(status), _) if status.success() => {}
        (status, stderr) => bail!("stopping: {status:?}; stderr: {stderr}"),
    }
    let files = tmp.files();
    if !files.is_empty() {
        bail!("the database outlived the server: {files:?}");
    }
    Ok(())
}

/// Distinct names sent to `/business` by [`unique_names_level_off`].
pub const FLOOD_NAMES: usize = 1_000_000;
// The flood must fill the counters well before its second half, which must not grow.
const _: () = assert!(greet_store::MEMORY_NAMES.get() * 2 < FLOOD_NAMES);

/// A client walking through [`FLOOD_NAMES`] distinct names on `/business` (in-process visit
/// counters): the server's memory levels off once the counters are full
/// ([`greet_store::MEMORY_NAMES`]), and `/health` and `/business` still answer, counting
/// a name visited again. The bound is greet-store's, the same on every server, and a million
/// requests take minutes in a debug build: one server's tests run it (`greet-hyper`'s).
pub async fn unique_names_level_off(bin: &str) -> Outcome {
    const CONNECTIONS: usize = 4;
    const BATCH: usize = 500;
    let server = start(bin, &["--workers", "1"])?;
    let addr = server.addr();
    let pid = server.pid();
    let rss = move || {
        procfs::status(pid)
            .map(|s| s.rss_kib)
            .context("no /proc status")
    };
    let before = rss()?;
    let mut readings = Vec::new();
    let step = FLOOD_NAMES / 10;
    let started = Instant::now();
    for round in 0..10 {
        let mut flood = tokio::task::JoinSet::new();
        for c in 0..CONNECTIONS {
            let first = round * step + c * (step / CONNECTIONS);
            let names = first..first + step / CONNECTIONS;
            flood.spawn(async move { visit_each(addr, names, BATCH).await });
        }
        while let Some(joined) = flood.join_next().await {
            joined??;
        }
        readings.push(rss()?);
    }
    eprintln!(
        "{bin}: RSS {before} KiB before, then per {step} names: {readings:?} KiB ({:?})",
        started.elapsed()
    );
    cases::health_is_ok(addr).await?;
    cases::business_greets_and_counts(addr).await?;
    // Full after MEMORY_NAMES names; what the second half of the flood added is churn.
    let half = readings[readings.len() / 2 - 1];
    let last = *readings.last().expect("readings");
    // The reading after MEMORY_NAMES names: the counters just full.
    let filled = readings[greet_store::MEMORY_NAMES.get() / step - 1];
    if last > half + 2 * 1024 {
        bail!(
            "RSS still growing: {half} KiB after {} names, {last} KiB after {FLOOD_NAMES}",
            FLOOD_NAMES / 2
        );
    }
    if filled <= before {
        bail!("the counters took no memory ({before} → {filled} KiB): nothing was counted");
    }
    Ok(())
}

/// `GET /business?name=flood-<i>` for each `i` of `names` on one connection, `batch`
/// requests pipelined at a time, each answered 200 with a first visit.
async fn visit_each(
    addr: std::net::SocketAddr,
    names: std::ops::Range<usize>,
    batch: usize,
) -> Outcome {
    use greet_probe::http1;
    use tokio::io::AsyncWriteExt;
    let mut conn = tokio::net::TcpStream::connect(addr).await?;
    let (mut buf, mut res) = (Vec::new(), http1::Response::new());
    let mut requests = Vec::new();
    let mut next = names.start;
    while next < names.end {
        let end = (next + batch).min(names.end);
        requests.clear();
        for i in next..end {
            requests.extend_from_slice(
                format!("GET /business?name=flood-{i} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
            );
        }
        conn.write_all(&requests).await?;
        for i in next..end {
            http1::read(&mut conn, &mut buf, &mut res, http1::Options::default())
                .await
                .map_err(|e| anyhow!("flood-{i}: {e}"))?;
            if res.status() != 200 || !res.text().ends_with(",\"visits\":1}") {
                bail!("flood-{i}: {} {}", res.status(), res.text());
            }
        }
        next = end;
    }
    Ok(())
}
