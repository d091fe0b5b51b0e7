//! The CSV writer every scenario's files go through: each row is serde structs written by the
//! `csv` crate (a key struct and the run's columns, side by side in a tuple), so the header is
//! the structs' fields and a row cannot drift from it. Each scenario names its own files and
//! rows (most: one row a run, keyed by [`CellKey`]).

use anyhow::Result;
use serde::Serialize;

use greet_model::results::Trial;

/// `rows` as CSV text, the header from the row type's fields.
pub fn write<T: Serialize>(rows: impl IntoIterator<Item = T>) -> Result<String> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row)?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

/// A [`Trial`]'s columns.
#[derive(Debug, Serialize)]
pub struct RunColumns {
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
    /// The columns of `run`.
    pub fn of(run: &Trial) -> Self {
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

/// The key of a row of one run of a cell: its server, endpoint and setting (a concurrency,
/// flags, a store and flags…), and which repeat.
#[derive(Debug, Serialize)]
pub struct CellKey<'a> {
    server: &'a str,
    endpoint: &'a str,
    setting: String,
    repeat: usize,
}

impl<'a> CellKey<'a> {
    /// A cell's rows: one a run, numbered from 1.
    pub fn rows(
        server: &'a str,
        endpoint: &'a str,
        setting: String,
        runs: &'a [Trial],
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
            CellKey {
                server: "a,b",
                endpoint: "/greetings",
                setting: "c=10".to_owned(),
                repeat: 1,
            },
            RunColumns::of(&Trial::default()),
        )])
        .unwrap();
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        assert!(
            header.starts_with("server,endpoint,setting,repeat,requests,success_rate,"),
            "{header}"
        );
        let row = lines.next().unwrap();
        assert!(
            row.starts_with("\"a,b\",/greetings,c=10,1,0,"),
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
