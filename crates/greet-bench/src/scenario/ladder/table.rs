//! The ladder's tables: the original experiment's two (same columns and layout) and an
//! extended one with a row per level.

use super::Level;
use super::{LadderServer, Section};

use greet_report::table::{agent_rows, agents_table, comparison_notes, failure_notes, opt, Table};
use greet_report::Tables;

/// The ladder's three tables: the original's two and the extended one.
impl Tables for Section {
    fn tables(&self) -> Vec<Table> {
        let levels: Vec<String> = self.concurrency.iter().map(ToString::to_string).collect();
        let mut original = Table::new(
            format!(
                "Ladder: {} concurrent, one request per fresh connection, --delay-ms {} --workers {}, {} run(s) each{}",
                levels.join(", "),
                self.delay_ms,
                self.workers,
                self.frame.repeats,
                if self.frame.repeats > 1 { " (figures are medians)" } else { "" }
            ),
            &[
                "Application",
                "numRequests",
                "Concurrency",
                "Success rate(%)",
                "Total(secs)",
                "Slowest(secs)",
                "Fastest(secs)",
                "Average(secs)",
                "Requests/sec",
            ],
            per_level(&self.servers, |s, l| {
                let f = &l.run.load;
                vec![
                    s.name.clone(),
                    f.requests.to_string(),
                    l.concurrency.to_string(),
                    format!("{:.2}", f.success_rate),
                    format!("{:.4}", f.total_s),
                    format!("{:.4}", f.slowest_s),
                    format!("{:.4}", f.fastest_s),
                    format!("{:.4}", f.average_s),
                    format!("{:.4}", f.requests_per_s),
                ]
            }),
        );
        original.notes = failure_notes(&self.frame.failures);
        let resources = Table::new(
            "Start-up and resources",
            &[
                "Application",
                "StartUpTime(sec)",
                "Max CPU(%)",
                "Max Memory(MB)",
            ],
            vec![self
                .servers
                .iter()
                .map(|s| {
                    vec![
                        s.name.clone(),
                        opt(s.startup_s, 4),
                        opt(s.cpu_max_pct, 2),
                        opt(s.rss_max_mib, 2),
                    ]
                })
                .collect()],
        );
        let mut extended = Table::new(
            "Latency percentiles, connect times, threads, errors",
            &[
                "Application",
                "Concurrency",
                "p50(ms)",
                "p90(ms)",
                "p99(ms)",
                "p99.9(ms)",
                "Connect avg(ms)",
                "Connect max(ms)",
                "Max threads",
                "Errors",
            ],
            per_level(&self.servers, |s, l| {
                let f = &l.run.load;
                let errors = if f.errors.is_empty() {
                    "0".to_owned()
                } else {
                    let kinds: Vec<_> = f.errors.iter().map(|(k, n)| format!("{k}:{n}")).collect();
                    kinds.join(",")
                };
                vec![
                    s.name.clone(),
                    l.concurrency.to_string(),
                    format!("{:.1}", f.latency_ms.p50),
                    format!("{:.1}", f.latency_ms.p90),
                    format!("{:.1}", f.latency_ms.p99),
                    format!("{:.1}", f.latency_ms.p999),
                    format!("{:.2}", f.connect_ms.avg),
                    format!("{:.2}", f.connect_ms.max),
                    l.run
                        .server
                        .threads_max
                        .map_or("-".to_owned(), |t| t.to_string()),
                    errors,
                ]
            }),
        );
        extended.notes = comparison_notes(&self.comparisons);
        let mut tables = vec![original, resources, extended];
        if self.over_tls() {
            tables.push(handshakes(self));
        }
        let with_agents = self.servers.iter().flat_map(|s| &s.levels);
        if with_agents.clone().any(|l| !l.run.agents.is_empty()) {
            let rows = self.servers.iter().map(|s| {
                let levels = s.levels.iter().map(|l| (s.name.as_str(), l));
                levels
                    .flat_map(|(name, l)| agent_rows(name, l.concurrency, &l.run))
                    .collect()
            });
            let mut agents = agents_table(rows.collect());
            agents.notes = self
                .servers
                .iter()
                .filter_map(|s| Some(format!("{} ran on swarm node {}", s.name, s.node.as_ref()?)))
                .collect();
            tables.push(agents);
        }
        tables
    }
}

/// Over TLS: each level's connect, then its handshakes, and the server's CPU per connection
/// (against the same in cleartext, what a handshake costs the server).
fn handshakes(ladder: &Section) -> Table {
    let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.2}"));
    Table::new(
        format!(
            "TLS ({}): {}",
            ladder.transport.protocol,
            if ladder.transport.tls_resume {
                "a handshake per fresh connection, resuming the sessions earlier ones left \
                 (--tls-resume)"
            } else {
                "a full handshake per fresh connection, no session resumed"
            }
        ),
        &[
            "Application",
            "Concurrency",
            "Connect avg(ms)",
            "Handshakes",
            "Resumed",
            "Handshake avg(ms)",
            "Handshake p50(ms)",
            "Handshake p99(ms)",
            "Handshake max(ms)",
            "Server CPU per connection(ms)",
        ],
        per_level(&ladder.servers, |s, l| {
            let f = &l.run.load;
            let h = f.handshake_ms.as_ref();
            let cpu_per_connection = l
                .run
                .server
                .cpu_avg_pct
                .filter(|_| f.connects > 0)
                .map(|pct| pct / 100.0 * f.total_s * 1000.0 / f.connects as f64);
            vec![
                s.name.clone(),
                l.concurrency.to_string(),
                format!("{:.2}", f.connect_ms.avg),
                h.map_or("-".to_owned(), |h| h.count.to_string()),
                h.map_or("-".to_owned(), |h| h.resumed.to_string()),
                ms(h.map(|h| h.avg)),
                ms(h.map(|h| h.p50)),
                ms(h.map(|h| h.p99)),
                ms(h.map(|h| h.max)),
                ms(cpu_per_connection),
            ]
        }),
    )
}

/// One group of rows per server, one row per level, with `cells` for each row.
fn per_level(
    servers: &[LadderServer],
    cells: impl Fn(&LadderServer, &Level) -> Vec<String>,
) -> Vec<Vec<Vec<String>>> {
    servers
        .iter()
        .map(|s| s.levels.iter().map(|l| cells(s, l)).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use greet_model::results::{Failure, Figures, Frame, Mode, Transport, Trial};

    fn ladder_of() -> Section {
        // Figures as the original published them (its req/s came from unrounded totals).
        let level = |c: usize, total_s, slowest_s, fastest_s, average_s, requests_per_s| Level {
            concurrency: c,
            run: Trial {
                load: Figures {
                    requests: c as u64,
                    success_rate: 100.0,
                    total_s,
                    slowest_s,
                    fastest_s,
                    average_s,
                    requests_per_s,
                    ..Figures::default()
                },
                ..Trial::default()
            },
            runs: Vec::new(),
        };
        let server = |name: &str, levels, startup_s, cpu, mem| LadderServer {
            name: name.to_owned(),
            endpoint: "/greetings".to_owned(),
            startup_s,
            cpu_max_pct: cpu,
            rss_max_mib: mem,
            levels,
            ..LadderServer::default()
        };
        Section {
            frame: Frame {
                repeats: 1,
                failures: vec![Failure {
                    server: "greetings-api-undertow".into(),
                    error: "died".into(),
                }],
                ..Frame::new(1)
            },
            transport: Transport::default(),
            mode: Mode::Process,
            delay_ms: 1000,
            workers: 1,
            blocking_threads: 200,
            concurrency: vec![100, 2700],
            timeout_s: 60.0,
            servers: vec![
                server(
                    "greetings-api-tomcat",
                    vec![
                        level(100, 1.2949, 1.2942, 1.2701, 1.2822, 77.2256),
                        level(2700, 14.3752, 14.2423, 1.0296, 7.4867, 187.8241),
                    ],
                    Some(1.892),
                    Some(101.26),
                    Some(269.1),
                ),
                server(
                    "greetings-api-undertow",
                    vec![level(100, 1.3076, 1.3066, 1.2665, 1.2833, 76.4765)],
                    None,
                    None,
                    None,
                ),
            ],
            comparisons: Vec::new(),
        }
    }

    #[test]
    fn ladder_matches_the_original_layout() {
        let expected = "\
Application | numRequests | Concurrency | Success rate(%) | Total(secs) | Slowest(secs) | Fastest(secs) | Average(secs) | Requests/sec |
---------------------- + ----------- + ----------- + --------------- + ----------- + ------------- + ------------- + ------------- + ------------ |
  greetings-api-tomcat |         100 |         100 |          100.00 |      1.2949 |        1.2942 |        1.2701 |        1.2822 |      77.2256 |
  greetings-api-tomcat |        2700 |        2700 |          100.00 |     14.3752 |       14.2423 |        1.0296 |        7.4867 |     187.8241 |
...................... + ........... + ........... + ............... + ........... + ............. + ............. + ............. + ............ |
greetings-api-undertow |         100 |         100 |          100.00 |      1.3076 |        1.3066 |        1.2665 |        1.2833 |      76.4765 |
";
        let tables = ladder_of().tables();
        assert_eq!(tables[0].text(), expected);
        assert_eq!(tables[0].notes, ["greetings-api-undertow FAILED: died"]);
    }

    #[test]
    fn resources_matches_the_original_layout() {
        let expected = "\
Application | StartUpTime(sec) | Max CPU(%) | Max Memory(MB) |
---------------------- + ---------------- + ---------- + -------------- |
  greetings-api-tomcat |           1.8920 |     101.26 |         269.10 |
greetings-api-undertow |                - |          - |              - |
";
        assert_eq!(ladder_of().tables()[1].text(), expected);
    }

    #[test]
    fn extended_has_a_row_per_level() {
        let text = ladder_of().tables()[2].text();
        assert_eq!(text.lines().count(), 2 + 3 + 1);
        assert!(text.lines().all(|l| l.ends_with(" |")));
    }
}
