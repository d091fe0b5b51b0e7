//! The values of a load's flags, which the agent and the harness both take: each parser
//! turns one into a typed value or a one-line reason (clap prints it after the flag's name).
//! Durations are `greet_cli`'s, as every program here reads them.

use crate::expect::{BadPattern, Expect};

/// Connections, users or requests of a level: 1 to 100,000.
pub fn parse_level(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=100_000).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a concurrency from 1 to 100000")),
    }
}

/// Agents splitting a level: 1 to 64.
pub fn parse_agents(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=64).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a number of agents from 1 to 64")),
    }
}

/// A rate in requests a second, above zero (exactly as written: the harness writes it).
pub fn parse_exact_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(r),
        _ => Err(format!(
            "{text:?} is not a rate in requests a second above 0"
        )),
    }
}

/// A rate in requests a second, from 1 to 10 million, with an optional `k` or `m` (`20k`).
pub fn parse_rate(text: &str) -> Result<f64, String> {
    match scaled_rate(text) {
        Some(r) if (1.0..=1e7).contains(&r) => Ok(r),
        _ => Err(format!(
            "{text:?} is not a rate (requests a second from 1 to 10m, e.g. 5000, 20k)"
        )),
    }
}

/// [`parse_rate`], zero and fractions allowed: where a ramp starts or ends, or an agent's
/// share of it.
pub fn parse_rate_or_zero(text: &str) -> Result<f64, String> {
    match scaled_rate(text) {
        Some(r) if (0.0..=1e7).contains(&r) => Ok(r),
        _ => Err(format!(
            "{text:?} is not a rate (requests a second from 0 to 10m, e.g. 5000, 20k)"
        )),
    }
}

fn scaled_rate(text: &str) -> Option<f64> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix(['k', 'K']) {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix(['m', 'M']) {
        (n, 1e6)
    } else {
        (t, 1.0)
    };
    let v = number.trim().parse::<f64>().ok()? * scale;
    v.is_finite().then_some(v)
}

/// `--expect`: `any`, or a regular expression.
pub fn parse_expect(text: &str) -> Result<Expect, String> {
    text.parse().map_err(|e: BadPattern| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_rates() {
        assert_eq!(parse_level("2700"), Ok(2700));
        assert!(parse_level("0").is_err() && parse_agents("65").is_err());
        assert_eq!(parse_exact_rate("1234.5"), Ok(1234.5));
        assert!(parse_exact_rate("0").is_err());
        assert_eq!(parse_rate("20k"), Ok(20_000.0));
        assert!(parse_rate("0.5").is_err() && parse_rate("11m").is_err());
        assert_eq!(parse_rate_or_zero("0"), Ok(0.0));
        assert!(parse_rate_or_zero("-1").is_err() && parse_rate_or_zero("inf").is_err());
    }
}
