//! Flag values: each parser turns one into a typed value or a one-line reason, and the help
//! helpers print the plan's defaults as the flags would take them.

use std::time::Duration;

use greet_store::{DatabaseUrl, RedisUrl};

use crate::plan::{self, Contract, ServerSpec, Target, Threshold};
use crate::report::comparison::Format;

pub(super) use greet_cli::{parse_any_duration, parse_duration};
pub(super) use greet_load::flags::{parse_agents, parse_expect, parse_level};

/// `text [default: normal; --quick: quick]`.
pub(super) fn help(
    text: &str,
    normal: impl std::fmt::Display,
    quick: impl std::fmt::Display,
) -> String {
    format!("{text} [default: {normal}; --quick: {quick}]")
}

/// `text [default: value]`.
pub(super) fn help1(text: &str, value: impl std::fmt::Display) -> String {
    format!("{text} [default: {value}]")
}

pub(super) fn list<T: std::fmt::Display>(values: &[T]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

pub(super) fn shapes(values: &[(usize, usize)]) -> String {
    values
        .iter()
        .map(|(u, l)| format!("{u}x{l}"))
        .collect::<Vec<_>>()
        .join(",")
}

pub(super) fn millis(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

pub(super) fn refuse_target(_: &str) -> Result<String, String> {
    Err(
        "this scenario starts each server afresh with every setting: it cannot load a \
         --target (ladder, loops, soak and rate can)"
            .to_owned(),
    )
}

pub(super) fn parse_contract(text: &str) -> Result<Contract, String> {
    match text {
        "light" => Ok(Contract::Light),
        "full" => Ok(Contract::Full),
        _ => Err(format!("{text:?}: the contract checks are light and full")),
    }
}

pub(super) fn parse_store(text: &str) -> Result<String, String> {
    match text.trim() {
        "sqlite" | "postgres" => Ok(text.trim().to_owned()),
        _ => Err(format!(
            "{text:?}: the stores are sqlite and postgres (PostgreSQL + Redis)"
        )),
    }
}

pub(super) fn parse_test(text: &str) -> Result<crate::plan::Test, String> {
    crate::plan::Test::named(text.trim()).ok_or_else(|| {
        let names: Vec<&str> = crate::plan::Test::ALL.map(|t| t.name()).to_vec();
        format!("{text:?}: the tests are {}", names.join(", "))
    })
}

/// A row count as TechEmpower's `?queries=` allows: 1 to 500.
pub(super) fn parse_queries(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=greet_core::records::MAX_QUERIES).contains(&n) => Ok(n),
        _ => Err(format!("{text:?}: a count of rows from 1 to 500")),
    }
}

pub(super) fn parse_database_url(text: &str) -> Result<DatabaseUrl, String> {
    match text.parse::<DatabaseUrl>().map_err(|e| e.to_string())? {
        url @ DatabaseUrl::Postgres(_) => Ok(url),
        DatabaseUrl::Sqlite(_) => Err("the postgres store needs a postgres:// URL".to_owned()),
    }
}

pub(super) fn parse_redis_url(text: &str) -> Result<RedisUrl, String> {
    text.parse()
        .map_err(|e: greet_store::StoreError| e.to_string())
}

pub(super) fn percents(fractions: &[f64]) -> String {
    fractions
        .iter()
        .map(|f| format!("{:.0}", f * 100.0))
        .collect::<Vec<_>>()
        .join(",")
}

/// `50` (percent) → 0.5; 1 to 1000 percent.
pub(super) fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if (1.0..=1000.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!("{text:?} is not a percentage from 1 to 1000")),
    }
}

/// `--slo`: `p99<5ms` — a percentile (p50, p90, p99, p999) of the latency from the intended
/// send, under a bound in ms (or s).
pub(super) fn parse_slo(text: &str) -> Result<plan::Slo, String> {
    let bad = || {
        format!(
            "{text:?} is not an objective: p50, p90, p99 or p999, then < and a latency \
             (e.g. p99<5ms)"
        )
    };
    let (percentile, bound) = text.trim().split_once('<').ok_or_else(bad)?;
    let percentile = match percentile.trim() {
        "p50" => 50.0,
        "p90" => 90.0,
        "p99" => 99.0,
        "p999" | "p99.9" => 99.9,
        _ => return Err(bad()),
    };
    let bound = greet_cli::parse_duration(bound).map_err(|_| bad())?;
    Ok(plan::Slo {
        percentile,
        ms: bound.as_secs_f64() * 1000.0,
    })
}

pub(super) fn parse_server(text: &str) -> Result<ServerSpec, String> {
    let (short, endpoint) = match text.split_once(':') {
        Some((short, endpoint)) => (short, Some(parse_path(endpoint)?)),
        None => (text, None),
    };
    let short = short.strip_prefix("greet-").unwrap_or(short);
    if !plan::SERVERS.contains(&short) && !plan::is_peer(short) {
        return Err(format!(
            "unknown server {short:?}: known are {}, and the JVM peers {}",
            plan::SERVERS.join(", "),
            plan::PEERS.join(", ")
        ));
    }
    Ok(ServerSpec {
        short: short.to_owned(),
        endpoint,
    })
}

pub(super) fn parse_short(text: &str) -> Result<String, String> {
    let spec = parse_server(text)?;
    if spec.endpoint.is_some() {
        return Err(format!(
            "{text:?}: only the ladder takes an endpoint per server"
        ));
    }
    Ok(spec.short)
}

pub(super) fn parse_shape(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{text:?} is not a shape USERSxLOOPS, e.g. 100x1000");
    let (users, loops) = text.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    match (users.parse::<usize>(), loops.parse::<usize>()) {
        (Ok(u), Ok(l)) if (1..=100_000).contains(&u) && l >= 1 => Ok((u, l)),
        _ => Err(bad()),
    }
}

pub(super) fn parse_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=4096).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a count from 1 to 4096")),
    }
}

pub(super) fn parse_repeats(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a number of runs from 1 to 1000")),
    }
}

pub(super) fn parse_positive(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{text:?} is not a count above zero")),
    }
}

pub(super) fn parse_path(text: &str) -> Result<String, String> {
    if text.starts_with('/') && !text.contains(char::is_whitespace) {
        Ok(text.to_owned())
    } else {
        Err(format!("{text:?} is not a path (it must start with /)"))
    }
}

pub(super) fn parse_target(text: &str) -> Result<Target, String> {
    let (name, url) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?} is not NAME=URL"))?;
    if name.is_empty() {
        return Err(format!("{text:?} has an empty NAME"));
    }
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(format!("{url:?} is not an http:// or https:// URL"));
    }
    Ok(Target {
        name: name.to_owned(),
        url: url.trim_end_matches('/').to_owned(),
    })
}

/// A run's `--threshold`: an absolute value, or with `--baseline` a ratio (`1.1x`).
pub(super) fn parse_threshold(text: &str) -> Result<Threshold, String> {
    text.parse()
}

/// A `compare --threshold`: a ratio of NEW to OLD.
pub(super) fn parse_ratio_threshold(text: &str) -> Result<Threshold, String> {
    let threshold: Threshold = text.parse()?;
    if !threshold.ratio {
        return Err(format!(
            "{text:?}: compare holds ratios of NEW to OLD, e.g. 'p99<1.10x', 'throughput>0.95x'"
        ));
    }
    Ok(threshold)
}

/// `--noise 5` (percent) → 0.05; 0 to 100.
pub(super) fn parse_noise(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!("{text:?} is not a percentage from 0 to 100")),
    }
}

/// `--format`: text, md, json or html.
pub(super) fn parse_format(text: &str) -> Result<Format, String> {
    match text.trim() {
        "text" => Ok(Format::Text),
        "md" | "markdown" => Ok(Format::Markdown),
        "json" => Ok(Format::Json),
        "html" => Ok(Format::Html),
        _ => Err(format!("{text:?}: the formats are text, md, json and html")),
    }
}

/// A baseline's name: letters, digits, `.`, `_` and `-`, as a folder name anywhere.
pub(super) fn parse_baseline_name(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && !text.starts_with('.')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "{text:?} is not a baseline name (letters, digits, '.', '_' and '-')"
        ))
    }
}
