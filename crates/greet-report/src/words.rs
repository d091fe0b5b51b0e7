//! The scorecard's words: sentences drawn from its marks, never written by hand and only from
//! decided figures (who is ahead or behind, on what, what is equal, what is undecided), and
//! each server's share of the floor.

use greet_model::plan::reference_role;
use greet_model::results::{Cell, Mark, ScoreRow};
use greet_stats::median;
use greet_stats::paired;

/// Each server's share of the floor, and the anchor's, over the figures the floor has: the
/// median of each one's shares.
pub(super) fn floor_words(
    servers: &[String],
    references: &[String],
    rows: &[ScoreRow],
) -> Vec<String> {
    let floor = references
        .iter()
        .find(|r| reference_role(r) == Some("floor"));
    let Some(floor) = floor else {
        return Vec::new();
    };
    // What the machine can do is a rate: counts and what a crate costs are not shares of it.
    let floored: Vec<&ScoreRow> = rows
        .iter()
        .filter(|r| r.cell(floor).is_some() && r.metric.band().is_none() && !r.once)
        .collect();
    let shares = |name: &str| -> Option<(f64, usize)> {
        let of: Vec<f64> = floored
            .iter()
            .filter_map(|r| r.cell(name)?.of_floor)
            .collect();
        (!of.is_empty()).then(|| (median(&of), of.len()))
    };
    let each: Vec<String> = servers
        .iter()
        .filter_map(|s| shares(s).map(|(m, _)| format!("{s} {m:.2}")))
        .collect();
    let mut out = Vec::new();
    if !each.is_empty() {
        out.push(format!(
            "Against the floor ({floor}: one event loop per core, prebuilt answers), each \
             server keeps this share of what the machine can do (median over {} figure(s)): {}.",
            floored.len(),
            each.join(", ")
        ));
    }
    for anchor in references
        .iter()
        .filter(|r| reference_role(r) == Some("anchor"))
    {
        if let Some((m, n)) = shares(anchor) {
            out.push(format!(
                "{anchor}, the outside anchor, reaches {m:.2} of the floor (median over {n} \
                 figure(s))."
            ));
        }
    }
    out
}

/// The verdicts of one league (the cells `league` takes of each row, judged against `band`)
/// in words: each
/// server's lead and lag, what is equal, and what the run left undecided. Only decided
/// figures make a claim.
pub(super) fn words(
    servers: &[String],
    rows: &[ScoreRow],
    league: &dyn Fn(&ScoreRow) -> &[Cell],
    band: f64,
) -> Vec<String> {
    let mut out = Vec::new();
    let contested: Vec<&ScoreRow> = rows.iter().filter(|r| league(r).len() > 1).collect();
    if contested.is_empty() {
        return out;
    }
    let interval = |r: &ScoreRow, server: &str| {
        r.cell(server)
            .and_then(|c| c.vs_best)
            .map_or(String::new(), |j| format!(", {}", j.show()))
    };
    for server in servers {
        let with = |mark: Mark| -> Vec<&ScoreRow> {
            contested
                .iter()
                .copied()
                .filter(|r| r.cell(server).is_some_and(|c| c.mark == mark))
                .collect()
        };
        let (ahead, behind) = (with(Mark::Ahead), with(Mark::Behind));
        if !ahead.is_empty() {
            let names = listed(&ahead, |r| r.figure.clone());
            out.push(format!("{server} is ahead on {names}."));
        }
        if !behind.is_empty() {
            let shares = listed(&behind, |r| {
                let (share, interval) = (share(r, server), interval(r, server));
                format!("{} ({share} of the best{interval})", r.figure)
            });
            out.push(format!("{server} is behind on {shares}."));
        }
    }
    let all = |r: &&ScoreRow, mark: Mark| league(r).iter().all(|c| c.mark == mark);
    let equal: Vec<&ScoreRow> = contested
        .iter()
        .copied()
        .filter(|r| all(r, Mark::Equal))
        .collect();
    if !equal.is_empty() {
        out.push(format!(
            "Equal, every server within {} of the best, on {} figure(s): {}.",
            paired::percent(band),
            equal.len(),
            by_scenario(&equal)
        ));
    }
    let open: Vec<&ScoreRow> = contested
        .iter()
        .copied()
        .filter(|r| league(r).iter().any(|c| c.mark == Mark::Undecided))
        .collect();
    if !open.is_empty() {
        let fewest = open
            .iter()
            .flat_map(|r| league(r).iter().filter_map(|c| c.vs_best.map(|j| j.blocks)))
            .min()
            .unwrap_or(1);
        let more = if fewest < paired::FEWEST_BLOCKS {
            format!(
                " (some on {fewest} block(s): {} are the fewest that can decide one; \
                 --repeats adds blocks)",
                paired::FEWEST_BLOCKS
            )
        } else {
            String::new()
        };
        // Cells, not only figures: "undecided on 4 of 4 figures" beside "axum is behind on
        // two of them" read as if nothing was decided.
        let undecided: usize = (open.iter())
            .map(|r| {
                league(r)
                    .iter()
                    .filter(|c| c.mark == Mark::Undecided)
                    .count()
            })
            .sum();
        let cells: usize = contested.iter().map(|r| league(r).len()).sum();
        out.push(format!(
            "Undecided: {undecided} of {cells} cells, on {} of {} figure(s){more}: {}.",
            open.len(),
            contested.len(),
            by_scenario(&open)
        ));
    }
    let capped: Vec<&ScoreRow> = (contested.iter().copied())
        .filter(|r| league(r).iter().any(|c| c.mark == Mark::Capped))
        .collect();
    if !capped.is_empty() {
        // Where the shares are known, they say whose CPU ran out.
        let shares = listed(&capped, |r| {
            let each: Vec<String> = (league(r).iter())
                .filter(|c| c.mark == Mark::Capped)
                .map(|c| match c.cores {
                    Some(cores) => format!("{}: {}", c.server, cores.line()),
                    None => c.server.clone(),
                })
                .collect();
            format!("{} ({})", r.figure, each.join(", "))
        });
        out.push(format!(
            "A capped figure (>) is the client's or the probe's limit, not the server's: it \
             gets no verdict. Capped: {shares}."
        ));
    }
    out
}

/// `server`'s share of the best on `row`, two decimals.
fn share(row: &ScoreRow, server: &str) -> String {
    format!("{:.2}", row.cell(server).map_or(0.0, |c| c.share))
}

/// `rows` in order, each as `each` says, its scenario named before the first of its rows:
/// `workloads: baseline throughput (…); static throughput (…); protocols: h2 throughput (…)`.
fn listed(rows: &[&ScoreRow], each: impl Fn(&ScoreRow) -> String) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut scenario: Option<&str> = None;
    for row in rows {
        let text = each(row);
        if scenario == Some(row.scenario.as_str()) {
            out.push(text);
        } else {
            out.push(format!("{}: {text}", row.scenario));
            scenario = Some(&row.scenario);
        }
    }
    out.join("; ")
}

/// `rows` counted by scenario: `sweep (2), business (4)`, or one row's figure.
fn by_scenario(rows: &[&ScoreRow]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for row in rows {
        match counts.iter_mut().find(|(s, _)| *s == row.scenario) {
            Some((_, n)) => *n += 1,
            None => counts.push((&row.scenario, 1)),
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(s, n)| {
            if *n == 1 {
                let figure = rows
                    .iter()
                    .find(|r| r.scenario == *s)
                    .map_or("", |r| &r.figure);
                format!("{s} ({figure})")
            } else {
                format!("{s} ({n})")
            }
        })
        .collect();
    parts.join(", ")
}
