//! `ladder.csv` (one row per server and level) and `resources.csv` (one row per server).

use std::fmt::Write as _;

use crate::results::Results;

/// One row per server and level.
pub fn ladder(results: &Results) -> String {
    let mut out = String::from(
        "server,endpoint,concurrency,requests,success_rate,total_s,slowest_s,fastest_s,average_s,\
         requests_per_s,p50_ms,p90_ms,p99_ms,p999_ms,max_ms,connect_avg_ms,connect_max_ms,\
         errors,max_cpu_pct,max_rss_mib,max_threads\n",
    );
    for s in &results.servers {
        for r in &s.runs {
            let errors: Vec<_> = r.errors.iter().map(|(k, n)| format!("{k}={n}")).collect();
            let _ = writeln!(
                out,
                "{},{},{},{},{:.2},{:.6},{:.6},{:.6},{:.6},{:.4},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{},{},{},{}",
                field(&s.name),
                field(&s.endpoint),
                r.concurrency,
                r.requests,
                r.success_rate,
                r.total_s,
                r.slowest_s,
                r.fastest_s,
                r.average_s,
                r.requests_per_s,
                r.latency_ms.p50,
                r.latency_ms.p90,
                r.latency_ms.p99,
                r.latency_ms.p999,
                r.latency_ms.max,
                r.connect_ms.avg,
                r.connect_ms.max,
                field(&errors.join(";")),
                opt(r.max_cpu_pct),
                opt(r.max_rss_mib),
                r.max_threads.map_or(String::new(), |t| t.to_string()),
            );
        }
    }
    out
}

/// One row per server.
pub fn resources(results: &Results) -> String {
    let mut out = String::from(
        "server,endpoint,startup_s,idle_rss_mib,max_cpu_pct,max_rss_mib,max_threads,error\n",
    );
    for s in &results.servers {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{}",
            field(&s.name),
            field(&s.endpoint),
            s.startup_s.map_or(String::new(), |v| format!("{v:.6}")),
            opt(s.idle_rss_mib),
            opt(s.max_cpu_pct),
            opt(s.max_rss_mib),
            s.max_threads.map_or(String::new(), |t| t.to_string()),
            field(s.error.as_deref().unwrap_or("")),
        );
    }
    out
}

fn opt(value: Option<f64>) -> String {
    value.map_or(String::new(), |v| format!("{v:.2}"))
}

/// A CSV field, quoted when it needs to be (RFC 4180).
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn quotes_when_needed() {
        assert_eq!(field("greet-axum"), "greet-axum");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
