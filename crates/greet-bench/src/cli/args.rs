//! The flags of the commands that are not scenarios: `compare`, `merge`, `kubernetes` and
//! `check` (`agent`'s are the load engine's own, `greet_load::agent::ShardArgs`).

use std::path::PathBuf;

use clap::Args;

use crate::diff::{self as compare, Format};
use crate::flags::{help1, parse_agents, parse_baseline_name, parse_level};
use crate::tools::kube::Kubernetes;
use greet_model::plan::{self, Threshold};

/// The settings of `compare`.
#[derive(Debug, Clone, Args)]
pub(super) struct CompareArgs {
    /// OLD NEW: the run compared against and the run compared, each its results.json or the
    /// folder holding it; with --baseline, NEW alone
    #[arg(required = true, num_args = 1..=2, value_name = "RUN")]
    pub(super) runs: Vec<PathBuf>,

    /// Compare against the baseline a run saved with --save-baseline NAME
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    pub(super) baseline: Option<String>,

    /// text (aligned columns), md (a Markdown table, for a pull-request comment), json, or
    /// html (one page: a forest plot of the ratios, then the table)
    #[arg(long, default_value = "text", value_parser = parse_format)]
    pub(super) format: Format,

    #[arg(long, value_parser = parse_noise,
          help = help1("A ratio within this many percent of 1 is never called a change",
                       compare::NOISE * 100.0))]
    pub(super) noise: Option<f64>,

    /// A setting the runs differ in on purpose (workers, delay_ms, …, or endpoint to pair one
    /// path with another): its figures are judged rather than shown as "settings differ"
    /// (repeatable)
    #[arg(long, value_name = "SETTING")]
    pub(super) vary: Vec<String>,

    /// A condition the ratios NEW/OLD must hold, e.g. 'p99<1.10x', 'throughput>0.95x',
    /// 'axum:total<1.05x' (of medians), 'max(total)<1.5x' (NEW's slowest run over OLD's)
    /// (repeatable); a breach exits 3
    #[arg(long = "threshold", value_name = "EXPR", value_parser = parse_ratio_threshold)]
    pub(super) thresholds: Vec<Threshold>,
}

impl CompareArgs {
    /// The two runs, OLD and NEW, or why the arguments do not name two.
    pub(super) fn runs(&self) -> Result<(PathBuf, PathBuf), &'static str> {
        match (&self.baseline, &self.runs[..]) {
            (Some(name), [new]) => Ok((plan::baseline_dir(name), new.clone())),
            (None, [old, new]) => Ok((old.clone(), new.clone())),
            (Some(_), _) => Err("compare --baseline NAME takes one run, NEW"),
            (None, _) => Err("compare takes two runs, OLD NEW (or --baseline NAME NEW)"),
        }
    }
}

/// The settings of `merge`.
#[derive(Debug, Clone, Args)]
pub(super) struct MergeArgs {
    /// Files holding the agents' output (their other lines are skipped) [default: stdin]
    #[arg(value_name = "FILE")]
    pub(super) files: Vec<PathBuf>,

    /// Print the merged level as JSON (a level as results.json holds it) instead
    #[arg(long)]
    pub(super) json: bool,
}

/// The settings of `kubernetes`.
#[derive(Debug, Clone, Args)]
pub(super) struct KubernetesArgs {
    /// The server
    #[arg(long, default_value = "hyper", value_parser = ["axum", "actix", "hyper"])]
    server: String,
    /// Agents: the Job's pods, each with its share of the level
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = parse_agents)]
    agents: usize,
    /// The level's concurrency (one request per fresh connection)
    #[arg(long, default_value_t = 2700, value_parser = parse_level)]
    concurrency: usize,
    /// The server's greeting delay
    #[arg(long, default_value_t = plan::DELAY_MS)]
    delay_ms: u64,
}

impl KubernetesArgs {
    pub(super) fn plan(self) -> Kubernetes {
        Kubernetes {
            server: self.server,
            agents: self.agents,
            concurrency: self.concurrency,
            delay_ms: self.delay_ms,
            ..Kubernetes::default()
        }
    }
}

/// The settings of `report`.
#[derive(Debug, Clone, Args)]
pub(super) struct ReportArgs {
    /// A run: its folder, or its results.json
    #[arg(value_name = "RUN")]
    pub(super) run: PathBuf,

    /// Write everything here, results.json with its new scorecard too [default: the run's
    /// folder, report.html, the CSVs and the charts only]
    #[arg(long, value_name = "DIR")]
    pub(super) out: Option<PathBuf>,
}

/// The settings of `check`.
#[derive(Debug, Clone, Args)]
pub(super) struct CheckArgs {
    /// Base URLs, e.g. http://127.0.0.1:8081, or https://127.0.0.1:8443 for a TLS port
    #[arg(required = true, value_name = "URL")]
    pub(super) urls: Vec<String>,

    /// Also over HTTP/2: h2c on an http:// URL (every answer as over HTTP/1.1), or h2 on an
    /// https:// one, whose contract is checked over HTTP/1.1 and HTTP/2 with TLS (the same
    /// answers over both; the raw HTTP/1.1 cases need cleartext) [default: http1 for
    /// http:// URLs, h2 for https://]
    #[arg(long, value_name = "PROTOCOL")]
    pub(super) protocol: Option<plan::Protocol>,
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
