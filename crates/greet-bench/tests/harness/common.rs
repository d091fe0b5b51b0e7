//! What the harness's integration tests share: running the binary against the servers the
//! test build made, a scratch results directory, reading what it wrote into the harness's own
//! types (a renamed field fails to compile or to read, where a JSON lookup would pass as null).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use greet_bench::Results;
use greet_model::plan::{package, FLOOR, SERVERS};

pub(crate) const BENCH: &str = env!("CARGO_BIN_EXE_greet-bench");

/// The machine, for the tests that load it heavily (valgrind, busy loops, a swarm of engines,
/// throughput on both cores) or whose figures move with its pace (a capacity; counts, which
/// follow the load generator's pace a little). A heavy test takes it alone ([`turn`]): none of
/// these runs beside it. The ramps (2,000 requests a second at most) and the capacity searches
/// (a 50 ms delay bounds them at 320 a second) load little but fail beside busy loops: they
/// share it ([`shared_turn`]), beside one another, never beside a heavy one. The other tests
/// run beside all of them, but for a test that judges timings ([`quiet`]), which no run of the
/// harness is beside.
static MACHINE: RwLock<()> = RwLock::new(());

/// The machine alone ([`MACHINE`]), until the guard drops. A test that panicked in its turn
/// leaves the others theirs.
pub(crate) fn turn() -> RwLockWriteGuard<'static, ()> {
    MACHINE.write().unwrap_or_else(PoisonError::into_inner)
}

/// A turn on the machine beside the other light ones ([`MACHINE`]), until the guard drops.
pub(crate) fn shared_turn() -> RwLockReadGuard<'static, ()> {
    MACHINE.read().unwrap_or_else(PoisonError::into_inner)
}

/// Every run of the harness ([`bench`]) against a test that judges timings against each other
/// ([`quiet`]). Such a test decided nothing beside the quick scenario tests, which take no
/// turn: `all --quick` on both cores spread its blocks' ratios from 0.44 to 1.10.
static QUIET: RwLock<()> = RwLock::new(());

thread_local! {
    /// This thread holds [`QUIET`] alone: its own runs of the harness go ahead.
    static ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The machine alone, and no other run of the harness beside it (those wait), until it drops.
pub(crate) struct Quiet {
    _machine: RwLockWriteGuard<'static, ()>,
    _runs: RwLockWriteGuard<'static, ()>,
}

impl Drop for Quiet {
    fn drop(&mut self) {
        ALONE.with(|alone| alone.set(false));
    }
}

/// The machine quiet ([`Quiet`]): for a test whose verdicts a busy neighbour would blur.
pub(crate) fn quiet() -> Quiet {
    let machine = turn();
    let runs = QUIET.write().unwrap_or_else(PoisonError::into_inner);
    ALONE.with(|alone| alone.set(true));
    Quiet {
        _machine: machine,
        _runs: runs,
    }
}

/// The servers' binaries (and the floor's): the debug ones `cargo test --workspace` built next to this harness
/// when they are all there (a small ladder needs no optimisation), else none, and the harness
/// builds the release ones itself.
pub(crate) fn bin_dir_args() -> Vec<String> {
    let dir = Path::new(BENCH).parent().expect("target dir").to_path_buf();
    let all = SERVERS
        .iter()
        .chain([&FLOOR])
        .all(|s| dir.join(package(s)).is_file());
    if all {
        vec!["--bin-dir".into(), dir.display().to_string()]
    } else {
        Vec::new()
    }
}

pub(crate) fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("greet-bench-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A run of the harness's place beside the others, never beside a test that holds
/// [`quiet`] (it waits), until the guard drops; none in that test's own thread.
pub(crate) fn beside_quiet() -> Option<RwLockReadGuard<'static, ()>> {
    (!ALONE.with(std::cell::Cell::get))
        .then(|| QUIET.read().unwrap_or_else(PoisonError::into_inner))
}

pub(crate) fn bench(args: &[&str]) -> Output {
    let _beside = beside_quiet();
    Command::new(BENCH)
        .args(args)
        .args(bin_dir_args())
        .stdin(Stdio::null())
        .output()
        .expect("greet-bench runs")
}

/// `greet-bench args…`, which must succeed (else its stderr says why).
pub(crate) fn bench_ok(args: &[&str]) -> Output {
    let run = bench(args);
    assert!(
        run.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    run
}

/// The packages of the servers, in their default order.
pub(crate) fn packages() -> Vec<String> {
    SERVERS.iter().map(|s| package(s)).collect()
}

/// What a run printed: its stdout, then its stderr.
pub(crate) fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The ladder of a run that failed one server: it exited 1 saying each of `naming`, and its
/// results.json in `out` holds that one failure.
pub(crate) fn ladder_failed_once(
    run: &Output,
    out: &Path,
    naming: &[&str],
) -> greet_bench::scenario::ladder::Section {
    let said = said(run);
    assert_eq!(run.status.code(), Some(1), "{said}");
    for words in naming {
        assert!(said.contains(words), "{words:?} not said: {said}");
    }
    let ladder = results(&out.join("results.json"))
        .sections
        .ladder
        .expect("ladder");
    assert_eq!(
        ladder.frame.failures.len(),
        1,
        "{:?}",
        ladder.frame.failures
    );
    ladder
}

/// `results.json` of a run, read into the harness's types.
/// `greet-bench args… --out DIR` on the release servers the harness builds (counts on a debug
/// build move with its timing), which must succeed: its stdout, results.json and report.html,
/// the directory removed.
pub(crate) fn release_run(name: &str, args: &[&str]) -> (String, Results, String) {
    let _beside = beside_quiet();
    let out = out_dir(name);
    let run = Command::new(BENCH)
        .args(args)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .output()
        .expect("greet-bench runs");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let read = results(&out.join("results.json"));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let _ = std::fs::remove_dir_all(&out);
    (stdout, read, html)
}

pub(crate) fn results(path: &Path) -> Results {
    let text = std::fs::read_to_string(path).expect("results.json");
    let results: Results = serde_json::from_str(&text).expect("results.json has the schema");
    assert_eq!(results.schema_version, greet_model::results::SCHEMA_VERSION);
    results
}

/// Every opened element is closed, in order (what an XML parser would check first).
pub(crate) fn assert_balanced(doc: &str, what: &str) {
    let mut open: Vec<&str> = Vec::new();
    for tag in doc.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap_or_default();
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name.trim()), "{what}: </{name}>");
        } else if !tag.ends_with('/') && !tag.starts_with('?') && !tag.starts_with('!') {
            open.push(tag.split_whitespace().next().unwrap_or_default());
        }
    }
    assert!(open.is_empty(), "{what}: unclosed {open:?}");
}

/// `greet-bench args…` is refused with a one-line error and exit 2; its stderr.
pub(crate) fn assert_one_line_error(args: &[&str]) -> String {
    let output = Command::new(BENCH)
        .args(args)
        .output()
        .expect("greet-bench runs");
    let stderr = assert_one_line_exit(&output, 2);
    assert!(stderr.contains("error"), "{args:?}: {stderr}");
    stderr
}

/// A run that ended with exit `code` and said why in one line on stderr; that stderr.
pub(crate) fn assert_one_line_exit(output: &Output, code: i32) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    stderr
}

/// The blocks both `a` and `b` ran undisturbed in, their client not the limit: what a paired
/// comparison of them rests on ([`greet_model::results::Trial::left_out`]).
pub(crate) fn undisturbed(
    a: &[greet_model::results::Trial],
    b: &[greet_model::results::Trial],
) -> usize {
    a.iter()
        .zip(b)
        .filter(|(x, y)| !x.left_out() && !y.left_out())
        .count()
}
