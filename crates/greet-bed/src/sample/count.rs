//! What a server process costs, counted rather than timed: the process run from its spawn to
//! its exit under an [`Instrument`] that writes its totals to a file as it exits, or, where
//! perf cannot count, its own counters in /proc read before it stops. A [`Totals`] is one
//! process's whole life (start-up, the load, shutdown); two of them, after loads of a few
//! requests and of N more, differ by what N requests cost, so start-up and shutdown cancel
//! ([`Totals::per_request`]).
//!
//! - callgrind (valgrind): user-space instructions, and cycles estimated from its cache
//!   model with the weights iai-callgrind uses (an L1 hit 1, a last-level hit 5, memory 35);
//!   and each function's own instructions, to say where they go;
//! - DHAT (valgrind): heap allocations and the bytes they asked for;
//! - perf: every syscall (the kernel's `raw_syscalls:sys_enter` tracepoint) but the waits
//!   (`WAITS`), context switches and the CPU time the kernel charged (`task-clock`), under
//!   real load.
//!
//! Only the server runs under an instrument; the load generator never does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use greet_probe::procfs;

/// glibc's tunables that keep its `memset` and `memcpy` on their vector loops at every size.
/// On a CPU with fast string instructions glibc moves and fills large blocks with one
/// `rep movsb`/`rep stosb`, which valgrind counts once a byte: a 128 KiB buffer zeroed per
/// read would count 131,072 instructions for what the hardware does in about the time of a
/// few thousand. Under callgrind the routines loop instead, 32 bytes an instruction, and the
/// count stays near the work. (`env` execs valgrind: the process is still the server's.)
pub const VECTOR_LOOPS: &str =
    "glibc.cpu.x86_rep_stosb_threshold=1099511627776:glibc.cpu.x86_rep_movsb_threshold=1099511627776";

/// A tool a server process runs under, and what it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instrument {
    /// valgrind's callgrind with its cache model: instructions, estimated cycles, functions.
    Callgrind,
    /// valgrind's DHAT: heap allocations and bytes.
    Dhat,
    /// perf's counters: syscalls, context switches, CPU time.
    Perf,
}

impl Instrument {
    /// The command prefix that runs a server under it, its totals written to `out`.
    pub fn prefix(self, out: &Path) -> Vec<String> {
        let out = out.display().to_string();
        let words: Vec<String> = match self {
            Self::Callgrind => vec![
                "env".into(),
                format!("GLIBC_TUNABLES={VECTOR_LOOPS}"),
                "valgrind".into(),
                "--quiet".into(),
                "--tool=callgrind".into(),
                "--cache-sim=yes".into(),
                format!("--callgrind-out-file={out}"),
                format!("--log-file={out}.log"),
            ],
            Self::Dhat => vec![
                "valgrind".into(),
                "--quiet".into(),
                "--tool=dhat".into(),
                format!("--dhat-out-file={out}"),
                format!("--log-file={out}.log"),
            ],
            Self::Perf => vec![
                "perf".into(),
                "stat".into(),
                "--field-separator=,".into(),
                format!("--output={out}"),
                perf_events(),
                "--".into(),
            ],
        };
        words
    }

    /// How many times slower a server starts, serves and stops under it: its start-up and
    /// drain are given that much longer.
    pub fn slowdown(self) -> u32 {
        match self {
            Self::Callgrind | Self::Dhat => 10,
            Self::Perf => 1,
        }
    }

    /// Whether it runs the server as a child of its own (perf) rather than in its own process
    /// (valgrind): the stop then goes to the child.
    pub fn forks(self) -> bool {
        self == Self::Perf
    }

    /// How many times the plan's requests it counts over: perf counts under real load, where
    /// a request costs microseconds, not the milliseconds it does under valgrind, and the
    /// kernel's batching moves a short load's syscalls by a few percent.
    pub fn scale(self) -> usize {
        match self {
            Self::Callgrind | Self::Dhat => 1,
            Self::Perf => 16,
        }
    }

    /// Its name in tables and lines.
    pub fn name(self) -> &'static str {
        match self {
            Self::Callgrind => "callgrind",
            Self::Dhat => "dhat",
            Self::Perf => "perf",
        }
    }

    /// Whether it can count on this machine; else the one line that says why not and what to
    /// install.
    pub fn available(self) -> Result<(), String> {
        match self {
            Self::Callgrind | Self::Dhat => {
                let ran = Command::new("valgrind").arg("--version").output();
                match ran {
                    Ok(out) if out.status.success() => Ok(()),
                    _ => Err("valgrind is not installed: apt-get install -y valgrind".to_owned()),
                }
            }
            Self::Perf => perf_counts_syscalls(),
        }
    }

    /// What the process that wrote `out` counted, from its spawn to its exit.
    pub fn read(self, out: &Path) -> Result<Totals> {
        let text = std::fs::read_to_string(out)
            .with_context(|| format!("{} wrote no {}", self.name(), out.display()))?;
        match self {
            Self::Callgrind => {
                let mut totals = callgrind(&text)?;
                totals.functions = functions(out).unwrap_or_default();
                Ok(totals)
            }
            Self::Dhat => dhat(&text),
            Self::Perf => perf(&text),
        }
    }
}

/// The syscalls a server makes to wait for work, left out of its count and counted apart
/// ([`Totals::epoll_waits`], [`Totals::futexes`]): how often an event loop finds nothing
/// ready, and a worker parks, follows the client's timing rather than the server's code.
/// Measured, `epoll_wait` alone moved from 0.06 to 2.2 a message between three runs of one
/// WebSocket echo, while its reads and writes stayed exactly 1.000 each. Yet futex is also
/// how a server pays for contention and hand-offs between its threads, so the tables show
/// both beside the syscalls, never judged.
const EPOLL_WAITS: [&str; 2] = [
    "syscalls:sys_enter_epoll_wait",
    "syscalls:sys_enter_epoll_pwait",
];

/// The futex tracepoint: a thread parking or waking another ([`EPOLL_WAITS`]).
const FUTEX: &str = "syscalls:sys_enter_futex";

/// perf's events: every syscall, the waits ([`EPOLL_WAITS`], [`FUTEX`]), context switches,
/// CPU time.
fn perf_events() -> String {
    format!(
        "--event=raw_syscalls:sys_enter,{},{FUTEX},context-switches,task-clock",
        EPOLL_WAITS.join(",")
    )
}

/// Whether perf can count the syscall tracepoint here (as root, with tracefs), as one line
/// where it cannot.
fn perf_counts_syscalls() -> Result<(), String> {
    let install = "apt-get install -y linux-perf, and run as root";
    let ran = Command::new("perf")
        .args(["stat", "--field-separator=,", &perf_events(), "--", "true"])
        .output();
    let out = match ran {
        Ok(out) => out,
        Err(_) => return Err(format!("perf is not installed: {install}")),
    };
    let said = String::from_utf8_lossy(&out.stderr);
    let counted = said
        .lines()
        .filter_map(|l| l.split(',').next())
        .any(|n| n.trim().parse::<u64>().is_ok());
    if out.status.success() && counted {
        Ok(())
    } else {
        let why = said
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no count");
        Err(format!(
            "perf cannot count the syscall tracepoints here ({}): {install}",
            why.trim()
        ))
    }
}

/// What one server process counted, whole.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// User-space instructions.
    pub instructions: Option<f64>,
    /// Cycles estimated from the cache model.
    pub cycles: Option<f64>,
    /// Heap allocations.
    pub allocations: Option<f64>,
    /// Bytes those allocations asked for.
    pub bytes: Option<f64>,
    /// Syscalls entered, the waits left out.
    pub syscalls: Option<f64>,
    /// `epoll_wait` and `epoll_pwait` calls: an event loop asking for work.
    pub epoll_waits: Option<f64>,
    /// futex calls: a thread parking, or waking another.
    pub futexes: Option<f64>,
    /// Context switches.
    pub switches: Option<f64>,
    /// CPU time the kernel charged, seconds.
    pub cpu_s: Option<f64>,
    /// Each function's own instructions (not those of what it calls).
    pub functions: BTreeMap<String, f64>,
}

impl Totals {
    /// What `n` more requests cost: `self` (after the larger load) less `fewer` (after the
    /// load `n` requests smaller), over `n`. A figure either lacks is none. A difference
    /// below zero is kept as counted: a count that fell as the load grew (a buffer grown in
    /// the smaller load and not the larger, context switches that batching spared) is no
    /// cost, and the tables flag it rather than print it as a cost of zero. Only the
    /// functions that grew are kept: they say where the instructions go.
    pub fn per_request(&self, fewer: &Totals, n: usize) -> Totals {
        let n = n.max(1) as f64;
        let each = |more: Option<f64>, less: Option<f64>| Some((more? - less?) / n);
        let functions = self
            .functions
            .iter()
            .filter_map(|(name, &more)| {
                let less = fewer.functions.get(name).copied().unwrap_or(0.0);
                let d = (more - less) / n;
                (d > 0.0).then(|| (name.clone(), d))
            })
            .collect();
        Totals {
            instructions: each(self.instructions, fewer.instructions),
            cycles: each(self.cycles, fewer.cycles),
            allocations: each(self.allocations, fewer.allocations),
            bytes: each(self.bytes, fewer.bytes),
            syscalls: each(self.syscalls, fewer.syscalls),
            epoll_waits: each(self.epoll_waits, fewer.epoll_waits),
            futexes: each(self.futexes, fewer.futexes),
            switches: each(self.switches, fewer.switches),
            cpu_s: each(self.cpu_s, fewer.cpu_s),
            functions,
        }
    }

    /// `other`'s figures where these have none: the instruments' counts of one load as one.
    pub fn and(mut self, other: Totals) -> Totals {
        fn fill(a: &mut Option<f64>, b: Option<f64>) {
            if a.is_none() {
                *a = b;
            }
        }
        fill(&mut self.instructions, other.instructions);
        fill(&mut self.cycles, other.cycles);
        fill(&mut self.allocations, other.allocations);
        fill(&mut self.bytes, other.bytes);
        fill(&mut self.syscalls, other.syscalls);
        fill(&mut self.epoll_waits, other.epoll_waits);
        fill(&mut self.futexes, other.futexes);
        fill(&mut self.switches, other.switches);
        fill(&mut self.cpu_s, other.cpu_s);
        if self.functions.is_empty() {
            self.functions = other.functions;
        }
        self
    }
}

/// A callgrind output's totals: its `events:` and `summary:` (or `totals:`) lines.
fn callgrind(text: &str) -> Result<Totals> {
    let line = |key: &str| text.lines().find_map(|l| l.strip_prefix(key));
    let events: Vec<&str> = line("events:")
        .context("callgrind's output names no events")?
        .split_whitespace()
        .collect();
    let counts: Vec<f64> = line("summary:")
        .or_else(|| line("totals:"))
        .context("callgrind's output has no summary")?
        .split_whitespace()
        .map(|n| n.parse::<f64>().unwrap_or(0.0))
        .collect();
    let event = |name: &str| {
        let at = events.iter().position(|e| *e == name)?;
        counts.get(at).copied()
    };
    let Some(ir) = event("Ir") else {
        bail!("callgrind counted no instructions (Ir)");
    };
    let cycles = (|| {
        let l1_misses = event("I1mr")? + event("D1mr")? + event("D1mw")?;
        let ll_misses = event("ILmr")? + event("DLmr")? + event("DLmw")?;
        let accesses = ir + event("Dr")? + event("Dw")?;
        let l1_hits = accesses - l1_misses;
        let ll_hits = l1_misses - ll_misses;
        Some(l1_hits + 5.0 * ll_hits + 35.0 * ll_misses)
    })();
    Ok(Totals {
        instructions: Some(ir),
        cycles,
        ..Totals::default()
    })
}

/// Each function's own instructions in a callgrind output, as callgrind_annotate (valgrind's
/// own reader) sums them; none where it is missing.
fn functions(out: &Path) -> Option<BTreeMap<String, f64>> {
    let ran = Command::new("callgrind_annotate")
        .args(["--inclusive=no", "--show=Ir", "--threshold=100"])
        .arg(out)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&ran.stdout);
    Some(annotated(&text))
}

/// callgrind_annotate's lines `  1,234 (12.3%)  file:function [object]`, as function → count.
fn annotated(text: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim_start();
        let Some((count, rest)) = line.split_once(' ') else {
            continue;
        };
        let Ok(count) = count.replace(',', "").parse::<f64>() else {
            continue;
        };
        let Some((_, rest)) = rest.split_once(')') else {
            continue;
        };
        let rest = rest.trim();
        if rest.starts_with("PROGRAM TOTALS") || rest.is_empty() {
            continue;
        }
        // `file:function [object]`: the file part holds no `:` of its own.
        let rest = rest.rsplit_once(" [").map_or(rest, |(f, _)| f);
        let function = rest.split_once(':').map_or(rest, |(_, f)| f).trim();
        *out.entry(function.to_owned()).or_insert(0.0) += count;
    }
    out
}

/// A DHAT output's totals: the blocks and bytes of every allocation point.
fn dhat(text: &str) -> Result<Totals> {
    let json: serde_json::Value =
        serde_json::from_str(text).context("DHAT's output is not JSON")?;
    let points = json
        .get("pps")
        .and_then(|p| p.as_array())
        .context("DHAT's output has no allocation points")?;
    let sum = |key: &str| -> f64 { points.iter().filter_map(|p| p.get(key)?.as_f64()).sum() };
    Ok(Totals {
        allocations: Some(sum("tbk")),
        bytes: Some(sum("tb")),
        ..Totals::default()
    })
}

/// perf stat's CSV lines (`count,unit,event,…`): syscalls less the waits, the waits apart,
/// context switches, task-clock.
fn perf(text: &str) -> Result<Totals> {
    let mut totals = Totals::default();
    let (mut epoll, mut futex) = (None::<f64>, None);
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split(',').collect();
        let (Some(count), Some(event)) = (fields.first(), fields.get(2)) else {
            continue;
        };
        let Ok(count) = count.trim().parse::<f64>() else {
            continue;
        };
        match event.trim() {
            "raw_syscalls:sys_enter" => totals.syscalls = Some(count),
            wait if EPOLL_WAITS.contains(&wait) => *epoll.get_or_insert(0.0) += count,
            FUTEX => futex = Some(count),
            "context-switches" => totals.switches = Some(count),
            // In milliseconds.
            "task-clock" => totals.cpu_s = Some(count / 1000.0),
            _ => {}
        }
    }
    let Some(all) = totals.syscalls else {
        bail!("perf counted no syscalls");
    };
    totals.syscalls = Some(all - epoll.unwrap_or(0.0) - futex.unwrap_or(0.0));
    totals.epoll_waits = epoll;
    totals.futexes = futex;
    Ok(totals)
}

/// What a live process's own counters say, for where perf cannot count: its read- and
/// write-class syscalls (`/proc/<pid>/io`), every thread's context switches, its CPU time.
pub fn proc_totals(pid: u32) -> Option<Totals> {
    let io = procfs::io(pid)?;
    let switches = procfs::context_switches(pid)?;
    let cpu = procfs::stat(pid)?.cpu_ticks as f64 / procfs::TICKS_PER_SEC as f64;
    Some(Totals {
        syscalls: Some((io.syscr + io.syscw) as f64),
        switches: Some(switches as f64),
        cpu_s: Some(cpu),
        ..Totals::default()
    })
}

/// Where the instruments write, a file a run: a directory of its own, removed at the end.
#[derive(Debug)]
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// A fresh directory of this process's own.
    pub fn new() -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("greet-bench-cost-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Self { dir })
    }

    /// Where the file `name` goes.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_totals_and_estimated_cycles() {
        let text = "version: 1\ncreator: callgrind-3.19.0\n\
                    events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n\
                    fn=(1) main\n1 5 1 1\n\
                    summary: 1000 300 200 10 20 30 1 2 3\n\
                    totals: 1000 300 200 10 20 30 1 2 3\n";
        let totals = callgrind(text).expect("read");
        assert_eq!(totals.instructions, Some(1000.0));
        // L1 hits 1500 - 60, LL hits 60 - 6, memory 6.
        assert_eq!(totals.cycles, Some(1440.0 + 5.0 * 54.0 + 35.0 * 6.0));
        let bare = callgrind("events: Ir\nsummary: 77\n").expect("read");
        assert_eq!((bare.instructions, bare.cycles), (Some(77.0), None));
        assert!(callgrind("events: Dr\nsummary: 5\n").is_err());
    }

    #[test]
    fn annotated_functions_are_summed_by_name() {
        let text = "\
--------------------------------------------------------------------------------
39,841,180 (100.0%)  PROGRAM TOTALS
--------------------------------------------------------------------------------
Ir                   file:function
--------------------------------------------------------------------------------
14,296,608 (35.88%)  ./string/memmove-vec-unaligned-erms.S:__memcpy_avx_unaligned_erms [/usr/lib/libc.so.6]
 1,507,936 ( 3.78%)  ???:<hyper::proto::h1::role::Server as hyper::Http1Transaction>::parse [/b/greet-hyper]
        12 ( 0.00%)  ???:<hyper::proto::h1::role::Server as hyper::Http1Transaction>::parse [/b/greet-hyper]
";
        let functions = annotated(text);
        assert_eq!(functions["__memcpy_avx_unaligned_erms"], 14_296_608.0);
        assert_eq!(
            functions["<hyper::proto::h1::role::Server as hyper::Http1Transaction>::parse"],
            1_507_948.0
        );
        assert_eq!(functions.len(), 2);
    }

    #[test]
    fn dhat_sums_every_point_and_perf_reads_its_csv() {
        let dhat = dhat(r#"{"pps":[{"tb":100,"tbk":2},{"tb":50,"tbk":3}]}"#).expect("read");
        assert_eq!((dhat.allocations, dhat.bytes), (Some(5.0), Some(150.0)));
        let text = "# started on Fri Dec  4\n\n21216,,raw_syscalls:sys_enter,78133684,100.00,,\n\
                    200,,syscalls:sys_enter_epoll_wait,78133684,100.00,,\n\
                    16,,syscalls:sys_enter_futex,78133684,100.00,,\n\
                    4392,,context-switches,78133684,100.00,56.211,K/sec\n\
                    78.13,msec,task-clock,78133684,100.00,0.119,CPUs utilized\n";
        let perf = perf(text).expect("read");
        assert_eq!(perf.syscalls, Some(21000.0), "the waits left out");
        assert_eq!((perf.epoll_waits, perf.futexes), (Some(200.0), Some(16.0)));
        assert_eq!(perf.switches, Some(4392.0));
        assert!((perf.cpu_s.unwrap() - 0.07813).abs() < 1e-9);
        assert!(super::perf("<not counted>,,raw_syscalls:sys_enter,0,100.00,,\n").is_err());
    }

    #[test]
    fn a_request_costs_the_difference_over_n() {
        let at = |ir: f64, calls: f64| Totals {
            instructions: Some(ir),
            syscalls: Some(calls),
            functions: BTreeMap::from([("f".to_owned(), ir / 2.0), ("start".to_owned(), 7.0)]),
            ..Totals::default()
        };
        let each = at(3000.0, 40.0).per_request(&at(2000.0, 30.0), 100);
        assert_eq!(each.instructions, Some(10.0));
        assert_eq!(each.syscalls, Some(0.1));
        assert_eq!(each.allocations, None);
        assert_eq!(each.functions, BTreeMap::from([("f".to_owned(), 5.0)]));
        // A count that fell as the load grew stays below zero, for the tables to flag; its
        // functions that fell are not where the instructions go.
        let shrunk = at(1000.0, 40.0).per_request(&at(2000.0, 30.0), 100);
        assert_eq!(shrunk.instructions, Some(-10.0), "kept as counted");
        assert_eq!(shrunk.syscalls, Some(0.1));
        assert!(shrunk.functions.is_empty(), "{:?}", shrunk.functions);
    }
}
