//! The CSV files, one row type per file: each row is serde structs written by the `csv` crate
//! (a key struct and the run's columns, side by side in a tuple), so the header is the
//! structs' fields and a row cannot drift from it.
//!
//! - `ladder.csv`: one row per server and level; `resources.csv`: one row per server;
//! - `loops.csv`, `soak.csv`, `sweep.csv`, `business.csv`, `protocols.csv`,
//!   `techempower.csv`: one row per run;
//!   `rate.csv`: one row per level; `rate-ramp.csv`: one row per second of a ramp;
//!   `capacity.csv`: one row per server and endpoint.

use anyhow::Result;
use serde::Serialize;

use crate::plan::ScenarioKind;
use crate::results::{
    Business, Capacity, Ladder, Loops, Protocols, Rate, Results, Run, Soak, Sweep, TechEmpower,
};

/// `(file name, contents)` of every CSV file of `results`.
pub(crate) fn files(results: &Results) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for kind in ScenarioKind::ALL {
        match kind {
            ScenarioKind::Ladder => results.ladder.as_ref().map(|s| ladder(s, &mut out)),
            ScenarioKind::Loops => results.loops.as_ref().map(|s| loops(s, &mut out)),
            ScenarioKind::Soak => results.soak.as_ref().map(|s| soak(s, &mut out)),
            ScenarioKind::Sweep => results.sweep.as_ref().map(|s| sweep(s, &mut out)),
            ScenarioKind::Business => results.business.as_ref().map(|s| business(s, &mut out)),
            ScenarioKind::Rate => results.rate.as_ref().map(|s| rate(s, &mut out)),
            ScenarioKind::Capacity => results.capacity.as_ref().map(|s| capacity(s, &mut out)),
            ScenarioKind::Protocols => results.protocols.as_ref().map(|s| protocols(s, &mut out)),
            ScenarioKind::TechEmpower => results
                .techempower
                .as_ref()
                .map(|s| techempower(s, &mut out)),
        }
        .transpose()?;
    }
    Ok(out)
}

fn ladder(ladder: &Ladder, out: &mut Vec<(String, String)>) -> Result<()> {
    let levels = ladder.servers.iter().flat_map(|s| {
        s.levels.iter().map(move |l| {
            let key = LevelKey {
                server: &s.name,
                endpoint: &s.endpoint,
                concurrency: l.concurrency,
            };
            (key, RunColumns::of(&l.run))
        })
    });
    out.push(("ladder.csv".to_owned(), write(levels)?));
    let servers = ladder.servers.iter().map(|s| ResourceRow {
        server: &s.name,
        endpoint: &s.endpoint,
        startup_s: s.startup_s,
        idle_rss_mib: s.idle_rss_mib,
        cpu_max_pct: s.cpu_max_pct,
        rss_max_mib: s.rss_max_mib,
        threads_max: s.threads_max,
        error: ladder
            .failures
            .iter()
            .find(|f| f.server == s.name)
            .map(|f| f.error.as_str()),
    });
    out.push(("resources.csv".to_owned(), write(servers)?));
    Ok(())
}

fn loops(loops: &Loops, out: &mut Vec<(String, String)>) -> Result<()> {
    let rows = loops.shapes.iter().flat_map(|shape| {
        shape.servers.iter().flat_map(move |s| {
            s.runs.iter().enumerate().map(move |(i, r)| {
                let key = LoopKey {
                    users: shape.users,
                    loops: shape.loops,
                    server: &s.name,
                    repeat: i + 1,
                };
                (key, RunColumns::of(r))
            })
        })
    });
    out.push(("loops.csv".to_owned(), write(rows)?));
    Ok(())
}

fn soak(soak: &Soak, out: &mut Vec<(String, String)>) -> Result<()> {
    let rows = soak
        .cells
        .iter()
        .flat_map(|c| CellKey::rows(&c.server, &c.endpoint, c.concurrency.to_string(), &c.runs));
    out.push(("soak.csv".to_owned(), write(rows)?));
    Ok(())
}

fn sweep(sweep: &Sweep, out: &mut Vec<(String, String)>) -> Result<()> {
    let rows = sweep
        .cells
        .iter()
        .flat_map(|c| CellKey::rows(&c.server, &c.endpoint, c.setting.label(), &c.runs));
    out.push(("sweep.csv".to_owned(), write(rows)?));
    Ok(())
}

fn protocols(protocols: &Protocols, out: &mut Vec<(String, String)>) -> Result<()> {
    let rows = protocols
        .cells
        .iter()
        .flat_map(|c| CellKey::rows(&c.server, "/greetings", c.case(), &c.runs));
    out.push(("protocols.csv".to_owned(), write(rows)?));
    Ok(())
}

fn techempower(techempower: &TechEmpower, out: &mut Vec<(String, String)>) -> Result<()> {
    let rows = techempower.cells.iter().flat_map(|c| {
        let setting = format!("{} {}", c.test, c.store);
        CellKey::rows(&c.server, &c.target, setting, &c.runs)
    });
    out.push(("techempower.csv".to_owned(), write(rows)?));
    Ok(())
}

fn business(business: &Business, out: &mut Vec<(String, String)>) -> Result<()> {
    let rows = business.cells.iter().flat_map(|c| {
        let setting = format!("{} {}", c.store, c.setting.label());
        CellKey::rows(&c.server, &c.endpoint, setting, &c.runs)
    });
    out.push(("business.csv".to_owned(), write(rows)?));
    Ok(())
}

fn rate(rate: &Rate, out: &mut Vec<(String, String)>) -> Result<()> {
    let rows = rate.servers.iter().flat_map(|s| {
        s.levels.iter().map(move |l| RateRow {
            server: &s.server,
            endpoint: &s.endpoint,
            level: &l.label,
            target_rps: l.target_rps,
            achieved_rps: l.achieved_rps,
            over_capacity: l.over_capacity,
            refused: l.refused.as_deref(),
            requests: l.requests,
            success_rate: l.success_rate,
            p50_ms: l.latency_ms.p50,
            p90_ms: l.latency_ms.p90,
            p99_ms: l.latency_ms.p99,
            p999_ms: l.latency_ms.p999,
            p9999_ms: l.latency_ms.p9999,
            max_ms: l.latency_ms.max,
            service_p50_ms: l.service_ms.p50,
            service_p99_ms: l.service_ms.p99,
            late: l.late,
            busy_max: l.busy_max,
            client_cpu_pct: l.client_cpu_pct,
            server_cpu_avg_pct: l.server.cpu_avg_pct,
        })
    });
    out.push(("rate.csv".to_owned(), write(rows)?));
    let seconds: Vec<_> = rate
        .servers
        .iter()
        .flat_map(|s| {
            s.levels.iter().flat_map(move |l| {
                l.windows.iter().map(move |w| RampRow {
                    server: &s.server,
                    endpoint: &s.endpoint,
                    level: &l.label,
                    at_s: w.at_s,
                    offered_rps: w.offered_rps,
                    achieved_rps: w.achieved_rps,
                    late: w.late,
                    success_rate: w.success_rate,
                    p50_ms: w.latency_ms.p50,
                    p99_ms: w.latency_ms.p99,
                    p999_ms: w.latency_ms.p999,
                    max_ms: w.latency_ms.max,
                })
            })
        })
        .collect();
    if !seconds.is_empty() {
        out.push(("rate-ramp.csv".to_owned(), write(seconds)?));
    }
    Ok(())
}

fn capacity(capacity: &Capacity, out: &mut Vec<(String, String)>) -> Result<()> {
    let rows = capacity.servers.iter().map(|s| CapacityRow {
        server: &s.server,
        endpoint: &s.endpoint,
        streams: s.streams,
        slo: &capacity.slo,
        capacity_rps: s.capacity_rps,
        at_top: s.at_top,
        searches: s
            .searches
            .iter()
            .map(|v| format!("{v:.0}"))
            .collect::<Vec<_>>()
            .join(" "),
        probe_rps: s.probe_rps,
        top_rps: s.top_rps,
        ramp_knee_rps: s.ramp_knee_rps,
        p50_ms_at_half: s.at_half.as_ref().map(|l| l.p50),
        p99_ms_at_half: s.at_half.as_ref().map(|l| l.p99),
        p50_ms_at_ninety: s.at_ninety.as_ref().map(|l| l.p50),
        p99_ms_at_ninety: s.at_ninety.as_ref().map(|l| l.p99),
        server_us_per_request: s.server_us_per_request,
        client_us_per_request: s.client_us_per_request,
    });
    out.push(("capacity.csv".to_owned(), write(rows)?));
    Ok(())
}

fn write<T: Serialize>(rows: impl IntoIterator<Item = T>) -> Result<String> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row)?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

/// A [`Run`]'s columns.
#[derive(Serialize)]
struct RunColumns {
    requests: u64,
    success_rate: f64,
    total_s: f64,
    requests_per_s: f64,
    fastest_s: f64,
    slowest_s: f64,
    average_s: f64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    p999_ms: f64,
    max_ms: f64,
    connects: u64,
    connect_avg_ms: f64,
    connect_max_ms: f64,
    /// Over TLS: the handshakes after the connects.
    handshake_avg_ms: Option<f64>,
    handshake_p99_ms: Option<f64>,
    /// `kind=n;kind=n`.
    errors: String,
    cpu_max_pct: Option<f64>,
    cpu_avg_pct: Option<f64>,
    rss_max_mib: Option<f64>,
    threads_max: Option<u64>,
}

impl RunColumns {
    fn of(run: &Run) -> Self {
        let (f, s) = (&run.load, &run.server);
        Self {
            requests: f.requests,
            success_rate: f.success_rate,
            total_s: f.total_s,
            requests_per_s: f.requests_per_s,
            fastest_s: f.fastest_s,
            slowest_s: f.slowest_s,
            average_s: f.average_s,
            p50_ms: f.latency_ms.p50,
            p90_ms: f.latency_ms.p90,
            p99_ms: f.latency_ms.p99,
            p999_ms: f.latency_ms.p999,
            max_ms: f.latency_ms.max,
            connects: f.connects,
            connect_avg_ms: f.connect_ms.avg,
            connect_max_ms: f.connect_ms.max,
            handshake_avg_ms: f.handshake_ms.as_ref().map(|h| h.avg),
            handshake_p99_ms: f.handshake_ms.as_ref().map(|h| h.p99),
            errors: f
                .errors
                .iter()
                .map(|(k, n)| format!("{k}={n}"))
                .collect::<Vec<_>>()
                .join(";"),
            cpu_max_pct: s.cpu_max_pct,
            cpu_avg_pct: s.cpu_avg_pct,
            rss_max_mib: s.rss_max_mib,
            threads_max: s.threads_max,
        }
    }
}

/// The key of a `ladder.csv` row.
#[derive(Serialize)]
struct LevelKey<'a> {
    server: &'a str,
    endpoint: &'a str,
    concurrency: usize,
}

/// A row of `resources.csv`.
#[derive(Serialize)]
struct ResourceRow<'a> {
    server: &'a str,
    endpoint: &'a str,
    startup_s: Option<f64>,
    idle_rss_mib: Option<f64>,
    cpu_max_pct: Option<f64>,
    rss_max_mib: Option<f64>,
    threads_max: Option<u64>,
    error: Option<&'a str>,
}

/// A row of `rate.csv`.
#[derive(Serialize)]
struct RateRow<'a> {
    server: &'a str,
    endpoint: &'a str,
    level: &'a str,
    target_rps: f64,
    achieved_rps: f64,
    over_capacity: bool,
    refused: Option<&'a str>,
    requests: u64,
    success_rate: f64,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    p999_ms: f64,
    p9999_ms: f64,
    max_ms: f64,
    service_p50_ms: f64,
    service_p99_ms: f64,
    late: u64,
    busy_max: usize,
    client_cpu_pct: f64,
    server_cpu_avg_pct: Option<f64>,
}

/// A row of `capacity.csv`.
#[derive(Serialize)]
struct CapacityRow<'a> {
    server: &'a str,
    endpoint: &'a str,
    streams: usize,
    slo: &'a str,
    capacity_rps: f64,
    at_top: bool,
    searches: String,
    probe_rps: f64,
    top_rps: f64,
    ramp_knee_rps: Option<f64>,
    p50_ms_at_half: Option<f64>,
    p99_ms_at_half: Option<f64>,
    p50_ms_at_ninety: Option<f64>,
    p99_ms_at_ninety: Option<f64>,
    server_us_per_request: Option<f64>,
    client_us_per_request: Option<f64>,
}

/// A row of `rate-ramp.csv`: one second of a ramp.
#[derive(Serialize)]
struct RampRow<'a> {
    server: &'a str,
    endpoint: &'a str,
    level: &'a str,
    at_s: u64,
    offered_rps: f64,
    achieved_rps: f64,
    late: u64,
    success_rate: f64,
    p50_ms: f64,
    p99_ms: f64,
    p999_ms: f64,
    max_ms: f64,
}

/// The key of a `loops.csv` row.
#[derive(Serialize)]
struct LoopKey<'a> {
    users: usize,
    loops: usize,
    server: &'a str,
    repeat: usize,
}

/// The key of a `soak.csv` row (setting: the concurrency), a `sweep.csv` row (setting: the
/// flags) and a `business.csv` row (setting: the store and the flags).
#[derive(Serialize)]
struct CellKey<'a> {
    server: &'a str,
    endpoint: &'a str,
    setting: String,
    repeat: usize,
}

impl<'a> CellKey<'a> {
    /// A cell's rows: one a run, numbered from 1.
    fn rows(
        server: &'a str,
        endpoint: &'a str,
        setting: String,
        runs: &'a [Run],
    ) -> impl Iterator<Item = (Self, RunColumns)> + 'a {
        runs.iter().enumerate().map(move |(i, r)| {
            let key = CellKey {
                server,
                endpoint,
                setting: setting.clone(),
                repeat: i + 1,
            };
            (key, RunColumns::of(r))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_rows_come_from_one_struct() {
        let text = write([(
            LevelKey {
                server: "a,b",
                endpoint: "/greetings",
                concurrency: 10,
            },
            RunColumns::of(&Run::default()),
        )])
        .unwrap();
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        assert!(
            header.starts_with("server,endpoint,concurrency,requests,success_rate,"),
            "{header}"
        );
        let row = lines.next().unwrap();
        assert!(
            row.starts_with("\"a,b\",/greetings,10,0,"),
            "quoted as RFC 4180 says: {row}"
        );
        let count = |line: &str| {
            ::csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(line.as_bytes())
                .records()
                .next()
                .unwrap()
                .unwrap()
                .len()
        };
        assert_eq!(count(header), count(row));
    }
}
