//! The workspace's command-line conventions, shared by the servers, the harness and the load
//! agent, so that every program here behaves alike:
//!
//! - [`parse_args`]: `--help` and `--version` print and exit 0; a bad flag is one line on
//!   stderr (`program: error: …`) and exit 2, never clap's multi-line usage;
//! - [`one_line`]: clap's error as that line, keeping what it names and its tips;
//! - [`parse_duration`], [`parse_any_duration`]: `10s`, `500ms`, `2m` or plain seconds.
//! - [`parse_bytes`]: `64MiB`, `1G`, `512k` or plain bytes.
//!
//! Each value parser returns a one-line reason (a `String`, as clap's `value_parser` takes
//! it): clap prints it after the flag's name.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

/// Parses `T` from the command line the way every binary here does: `--help` and
/// `--version` print and give `Err(0)`; a bad flag is one line on stderr, `program: error:
/// …`, and `Err(2)`.
pub fn parse_args<T: Parser>(program: &str) -> Result<T, ExitCode> {
    T::try_parse().map_err(|err| {
        if err.use_stderr() {
            eprintln!("{program}: {} (see --help)", one_line(&err));
            ExitCode::from(2)
        } else {
            let _ = err.print();
            ExitCode::SUCCESS
        }
    })
}

/// clap's error as one line: what it says before its usage lines, joined, so that the
/// arguments it names ("the following required arguments were not provided: `<URL>...`") and
/// its tips ("a similar argument exists: '--concurrency'") stay in.
pub fn one_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let mut line = String::new();
    for part in rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(part);
    }
    if line.is_empty() {
        "error: bad arguments".to_owned()
    } else {
        line
    }
}

/// `10s`, `500ms`, `2m` (a plain number is refused: `5` could be seconds or milliseconds);
/// zero is refused.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = parse_any_duration(text)?;
    if d.is_zero() {
        return Err(format!("{text:?}: a duration must be more than zero"));
    }
    Ok(d)
}

/// [`parse_duration`], zero allowed.
pub fn parse_any_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        return Err(format!(
            "{text:?}: a duration needs its unit, e.g. 10s, 500ms or 2m"
        ));
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= 86_400.0 => {
            Ok(Duration::from_secs_f64(v * scale))
        }
        _ => Err(format!(
            "{text:?} is not a duration (e.g. 10s, 500ms, 2m, up to a day)"
        )),
    }
}

/// A size in bytes: plain (`1048576`), or with a binary unit (`k`, `KiB`, `M`, `MiB`, `G`,
/// `GiB`, any case: powers of 1024, as memory and file sizes are given).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit (use k, M, G or plain bytes)"
            ))
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("{text:?} is not a size in bytes (e.g. 65536, 64MiB, 1G)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Parser)]
    #[command(name = "t")]
    struct Flags {
        #[arg(long)]
        concurrency: Option<u32>,
        #[arg(required = true, value_name = "URL")]
        urls: Vec<String>,
    }

    fn error(args: &[&str]) -> String {
        one_line(&Flags::try_parse_from(args).expect_err("bad flags"))
    }

    #[test]
    fn flag_errors_keep_what_they_name() {
        assert_eq!(
            error(&["t"]),
            "error: the following required arguments were not provided: <URL>..."
        );
        let typo = error(&["t", "--concurrenc", "3", "http://x"]);
        assert!(
            typo.starts_with("error: unexpected argument '--concurrenc' found; "),
            "{typo}"
        );
        assert!(
            typo.contains("a similar argument exists: '--concurrency'"),
            "{typo}"
        );
        let bad = error(&["t", "--concurrency", "x", "u"]);
        assert!(
            !bad.contains('\n') && !bad.contains("For more information"),
            "{bad}"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("65536"), Ok(65536));
        assert_eq!(parse_bytes("64MiB"), Ok(64 << 20));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(parse_bytes("512k"), Ok(512 << 10));
        assert_eq!(parse_bytes("0"), Ok(0));
        for bad in ["", "M", "1.5G", "-1", "1Q", "99999999999T"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        // A bare number could be seconds or milliseconds: refused.
        let bare = parse_duration("5").unwrap_err();
        assert!(bare.contains("needs its unit"), "{bare}");
        assert!(parse_duration("0s").is_err());
        assert_eq!(parse_any_duration("0s"), Ok(Duration::ZERO));
        assert!(parse_any_duration("2d").is_err());
        assert!(parse_any_duration("-1s").is_err());
    }
}
