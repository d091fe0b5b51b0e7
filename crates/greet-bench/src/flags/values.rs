//! Flag values: each parser turns one into a typed value or a one-line reason, and the help
//! helpers print the plan's defaults as the flags would take them.

use std::time::Duration;

use greet_server::Knob;
use greet_store::{DatabaseUrl, RedisUrl};

use greet_model::plan::{self, Contract, ServerSpec, Target, Threshold};

pub(crate) use greet_cli::{parse_any_duration, parse_duration};
pub(crate) use greet_load::flags::{parse_agents, parse_expect, parse_level};

/// `text [default: normal; --quick: quick]`.
pub(crate) fn help(
    text: &str,
    normal: impl std::fmt::Display,
    quick: impl std::fmt::Display,
) -> String {
    format!("{text} [default: {normal}; --quick: {quick}]")
}

/// `text [default: value]`.
pub(crate) fn help1(text: &str, value: impl std::fmt::Display) -> String {
    format!("{text} [default: {value}]")
}

pub(crate) fn list<T: std::fmt::Display>(values: &[T]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

pub(crate) fn millis(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

pub(crate) fn parse_contract(text: &str) -> Result<Contract, String> {
    match text {
        "light" => Ok(Contract::Light),
        "full" => Ok(Contract::Full),
        _ => Err(format!("{text:?}: the contract checks are light and full")),
    }
}

pub(crate) fn parse_store(text: &str) -> Result<String, String> {
    match text.trim() {
        "sqlite" | "postgres" => Ok(text.trim().to_owned()),
        _ => Err(format!(
            "{text:?}: the stores are sqlite and postgres (PostgreSQL + Redis)"
        )),
    }
}

pub(crate) fn parse_database_url(text: &str) -> Result<DatabaseUrl, String> {
    match text.parse::<DatabaseUrl>().map_err(|e| e.to_string())? {
        url @ DatabaseUrl::Postgres(_) => Ok(url),
        DatabaseUrl::Sqlite(_) => Err("the postgres store needs a postgres:// URL".to_owned()),
    }
}

pub(crate) fn parse_redis_url(text: &str) -> Result<RedisUrl, String> {
    text.parse()
        .map_err(|e: greet_store::StoreError| e.to_string())
}

pub(crate) fn parse_server(text: &str) -> Result<ServerSpec, String> {
    let (short, endpoint) = match text.split_once(':') {
        Some((short, endpoint)) => (short, Some(parse_path(endpoint)?)),
        None => (text, None),
    };
    let short = short.strip_prefix("greet-").unwrap_or(short);
    let crate_short = plan::crate_of(short);
    if !plan::SERVERS.contains(&crate_short)
        && !plan::is_peer(crate_short)
        && !plan::is_reference(crate_short)
    {
        return Err(format!(
            "unknown server {crate_short:?}: known are {}, the JVM peers {} and the references {}",
            plan::SERVERS.join(", "),
            plan::PEERS.join(", "),
            plan::REFERENCES.join(", ")
        ));
    }
    let short = with_tuned(short)?;
    check_knobs(&short)?;
    Ok(ServerSpec { short, endpoint })
}

/// `hyper+tuned` as the knobs it stands for ([`plan::tuned`]), so that every table names
/// them: `hyper+pipeline-flush+no-head-timeout+panic-abort`.
fn with_tuned(short: &str) -> Result<String, String> {
    let crate_short = plan::crate_of(short);
    let names = plan::knobs_of(short);
    // Named twice by hand is refused (check_knobs); named by hand and by the set is not.
    let mut knobs: Vec<&str> = names.iter().copied().filter(|n| *n != "tuned").collect();
    if names.contains(&"tuned") {
        let tuned = plan::tuned(crate_short);
        if tuned.is_empty() {
            return Err(format!("{short:?}: {crate_short} has no tuned set"));
        }
        for knob in tuned {
            if !knobs.contains(knob) {
                knobs.push(knob);
            }
        }
    }
    Ok(std::iter::once(crate_short)
        .chain(knobs)
        .collect::<Vec<_>>()
        .join(&plan::KNOB_MARK.to_string()))
}

/// `hyper+pipeline-flush`: each knob after a `+` must be one of greet_server's, once, and
/// apply to the crate.
fn check_knobs(short: &str) -> Result<(), String> {
    let binary = plan::binary(short);
    let theirs = || {
        let names: Vec<&str> = Knob::ALL
            .into_iter()
            .filter(|k| k.applies_to(&binary))
            .map(Knob::name)
            .collect();
        if names.is_empty() {
            format!("{binary} has no knobs")
        } else {
            format!("{binary}'s knobs are {}", names.join(", "))
        }
    };
    let names = plan::knobs_of(short);
    for (i, name) in names.iter().enumerate() {
        let knob = Knob::named(name)
            .ok_or_else(|| format!("{short:?}: {name:?} is not a knob: {}", theirs()))?;
        if !knob.applies_to(&binary) {
            return Err(format!("{short:?}: {}", knob.refusal(&binary)));
        }
        if names[..i].contains(name) {
            return Err(format!("{short:?}: {name} is named twice"));
        }
    }
    Ok(())
}

pub(crate) fn parse_short(text: &str) -> Result<String, String> {
    let spec = parse_server(text)?;
    if spec.endpoint.is_some() {
        return Err(format!(
            "{text:?}: only the ladder takes an endpoint per server"
        ));
    }
    Ok(spec.short)
}

pub(crate) fn parse_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=4096).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a count from 1 to 4096")),
    }
}

pub(crate) fn parse_repeats(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a number of runs from 1 to 1000")),
    }
}

pub(crate) fn parse_positive(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{text:?} is not a count above zero")),
    }
}

pub(crate) fn parse_path(text: &str) -> Result<String, String> {
    if text.starts_with('/') && !text.contains(char::is_whitespace) {
        Ok(text.to_owned())
    } else {
        Err(format!("{text:?} is not a path (it must start with /)"))
    }
}

pub(crate) fn parse_target(text: &str) -> Result<Target, String> {
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

/// `--band`: a percentage with its `%` (a bare `5` could be read as 5 or as 500%), above 0
/// and at most [`greet_stats::paired::WIDEST_BAND`], as a share (`5%` is 0.05).
pub(crate) fn parse_band(text: &str) -> Result<f64, String> {
    let widest = greet_stats::paired::WIDEST_BAND * 100.0;
    let pct = text
        .trim()
        .strip_suffix('%')
        .ok_or_else(|| format!("{text:?} is not a band: a percentage with its %, e.g. 5%"))?;
    match pct.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= widest => Ok(p / 100.0),
        _ => Err(format!(
            "{text:?} is not a band: a percentage above 0% and at most {widest}%, e.g. 5%"
        )),
    }
}

/// A run's `--threshold`: an absolute value, or with `--baseline` a ratio (`1.1x`).
pub(crate) fn parse_threshold(text: &str) -> Result<Threshold, String> {
    text.parse()
}

/// A baseline's name: letters, digits, `.`, `_` and `-`, as a folder name anywhere.
pub(crate) fn parse_baseline_name(text: &str) -> Result<String, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_is_a_percentage_with_its_sign() {
        assert_eq!(parse_band("5%"), Ok(0.05));
        assert_eq!(parse_band(" 2.5 %"), Ok(0.025));
        for wrong in ["5", "0.05", "0%", "-5%", "51%", "five%", "%"] {
            let err = parse_band(wrong).unwrap_err();
            assert!(err.contains("is not a band"), "{wrong}: {err}");
        }
    }

    #[test]
    fn a_server_takes_its_own_knobs_and_no_other() {
        let spec = parse_server("greet-hyper+pipeline-flush+stack-headers").unwrap();
        assert_eq!(spec.short, "hyper+pipeline-flush+stack-headers");
        assert_eq!(
            parse_short("actix+os-keep-alive").unwrap(),
            "actix+os-keep-alive"
        );
        let not_its = parse_server("actix+pipeline-flush").unwrap_err();
        assert!(
            not_its.contains("applies to greet-hyper and greet-axum"),
            "{not_its}"
        );
        let unknown = parse_server("axum+turbo").unwrap_err();
        assert!(
            unknown.contains("greet-axum's knobs are pipeline-flush"),
            "{unknown}"
        );
        assert!(parse_server("floor+pipeline-flush")
            .unwrap_err()
            .contains("greet-floor"));
        assert!(parse_server("hyper+stack-headers+stack-headers")
            .unwrap_err()
            .contains("twice"));
        assert_eq!(
            parse_short("hyper+tuned").unwrap(),
            "hyper+pipeline-flush+no-head-timeout+panic-abort"
        );
        assert_eq!(
            parse_short("actix+panic-abort+tuned").unwrap(),
            "actix+panic-abort+os-keep-alive+mimalloc+fat-lto"
        );
        assert_eq!(
            parse_short("hyper+tuned+pipeline-flush+tuned").unwrap(),
            "hyper+pipeline-flush+no-head-timeout+panic-abort"
        );
        assert!(parse_server("floor+tuned")
            .unwrap_err()
            .contains("no tuned set"));
        assert!(parse_server("hyperx+pipeline-flush")
            .unwrap_err()
            .contains("unknown server \"hyperx\""));
    }
}
