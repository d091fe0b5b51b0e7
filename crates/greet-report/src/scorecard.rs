//! The scorecard, built: each section names its headline figures ([`Row`]s, through
//! [`crate::Render::scorecard`]), and this module ranks the servers on each, gives
//! every cell its verdict against the best by the same test every comparison uses (each
//! league apart: the crates at their defaults, the tuned), and has `words` write the
//! words from the verdicts; `scorecard_text` prints it.

use greet_model::plan::{is_tuned, reference_role, Metric};
use greet_model::results::{Cell, Cores, Mark, ScoreRow, Scorecard, Trial};
use greet_stats::median;
use greet_stats::paired::{self, Alpha, Blocks, Family, Judged, Member, Word};

use crate::left_out::{self, Lopsided};
use crate::order::{Placed, Placing};
use crate::words::{floor_words, words};
use crate::Sections;

/// A headline figure as a section names it: every server's runs of it.
#[derive(Debug, Clone)]
pub struct Row {
    /// What it is: `keep-alive throughput, c=200`.
    pub figure: String,
    /// Its metric.
    pub metric: Metric,
    /// One per server.
    pub entries: Vec<Entry>,
    /// Measured once a server by design (start-up): no repeats can decide it.
    pub once: bool,
}

/// One server's runs of a headline figure.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The server.
    pub server: String,
    /// The figure in each run.
    pub values: Vec<f64>,
    /// The client or the probe ended it: the server may do more.
    pub capped: bool,
    /// How busy the client's and the server's CPUs were (medians over its runs), where
    /// measured.
    pub cores: Option<Cores>,
    /// The server's CPU per request, microseconds, where measured.
    pub cpu_us: Option<f64>,
    /// Figures closer than this share of each other are one figure (a capacity search's
    /// last bracket); 0 where every difference counts.
    pub resolution: f64,
    /// Whether each run is left out ([`Trial::left_out`]: the machine disturbed it, or the
    /// client bound it): that block is left out of its comparisons. Empty: every block counts.
    pub disturbed: Vec<bool>,
    /// Each run's place in the run ([`Trial::seq`]), where recorded: which of two ran first
    /// in a block ([`crate::order`]). Empty: not recorded.
    pub seqs: Vec<Option<u64>>,
}

impl Entry {
    /// `values` of `server`, neither capped nor with a CPU figure.
    pub fn new(server: &str, values: Vec<f64>) -> Self {
        Self {
            server: server.to_owned(),
            values,
            capped: false,
            cores: None,
            cpu_us: None,
            resolution: 0.0,
            disturbed: Vec::new(),
            seqs: Vec::new(),
        }
    }

    /// A closed loop's throughput over `runs`, with the server's CPU per request; capped
    /// where the client bound it (the medians of both sides' CPU shares,
    /// [`Cores::client_bound`]), and a block left out where the machine disturbed it or the
    /// client bound it.
    pub fn throughput(server: &str, runs: &[Trial]) -> Self {
        let cpu: Vec<f64> = runs
            .iter()
            .filter_map(Trial::server_us_per_request)
            .collect();
        let cores = Cores::median_of(runs);
        Self {
            cpu_us: (cpu.len() == runs.len() && !cpu.is_empty()).then(|| median(&cpu)),
            capped: cores.is_some_and(|c| c.client_bound()),
            cores,
            disturbed: runs.iter().map(Trial::left_out).collect(),
            seqs: runs.iter().map(|r| r.seq).collect(),
            ..Self::new(server, greet_model::results::throughputs(runs))
        }
    }

    /// Its figures as blocks of a paired comparison: not a number where the machine
    /// disturbed the run, which leaves the block out ([`Blocks::of`]).
    fn blocks(&self) -> Vec<f64> {
        let disturbed = |i: usize| self.disturbed.get(i).copied().unwrap_or(false);
        (self.values.iter().enumerate())
            .map(|(i, &v)| if disturbed(i) { f64::NAN } else { v })
            .collect()
    }
}

impl Row {
    /// `figure` in `metric`, one entry per server.
    pub fn new(figure: impl Into<String>, metric: Metric, entries: Vec<Entry>) -> Self {
        Self {
            figure: figure.into(),
            metric,
            entries,
            once: false,
        }
    }

    /// Measured once a server by design: its `?` asks for no more repeats.
    pub fn once(self) -> Self {
        Self { once: true, ..self }
    }
}

/// The entry of each group of `items` with the highest median throughput: a server's best
/// setting.
pub fn best_each<T>(
    items: &[T],
    server: impl Fn(&T) -> &str,
    runs: impl Fn(&T) -> &[Trial],
) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for item in items {
        let entry = Entry::throughput(server(item), runs(item));
        if entry.values.is_empty() {
            continue;
        }
        match out.iter_mut().find(|e| e.server == entry.server) {
            Some(e) if median(&e.values) < median(&entry.values) => *e = entry,
            Some(_) => {}
            None => out.push(entry),
        }
    }
    out
}

/// The whole run judged as one family at `band`: every comparison `sections` hold judged
/// again, and the scorecard drawn. Every section's scorecard rows (each server against its
/// row's best) and every comparison of its lists are members of the family; the run's
/// threshold ([`paired::threshold`]) divided by a section's looks is the error rate its
/// verdicts are judged at, so a pair in both the scorecard and a list gets one word.
pub fn judge_run<S: Sections>(sections: &mut S, band: f64) -> Scorecard {
    let mut members: Vec<Member> = (sections.comparisons_mut().into_iter())
        .map(|(looks, c)| c.member(band, looks))
        .collect();
    for present in sections.present() {
        members.extend(row_members(
            &present.section.scorecard(),
            band,
            present.looks,
        ));
    }
    let threshold = paired::threshold(members);
    for (looks, comparison) in sections.comparisons_mut() {
        comparison.judge_at(band, threshold / looks.max(1) as f64);
    }
    of(sections, band, threshold)
}

/// The scorecard of `sections` at `band`: each section's rows judged at the run's `threshold`
/// divided by its looks ([`judge_run`]).
fn of<S: Sections>(sections: &S, band: f64, threshold: Alpha) -> Scorecard {
    let (mut rows, mut placed, mut lopsided) = (Vec::new(), Vec::new(), Vec::new());
    for present in sections.present() {
        let alpha = threshold / present.looks.max(1) as f64;
        let section = present.section.scorecard();
        let (places, left) = diagnosed(present.name, &section);
        placed.extend(places);
        lopsided.extend(left);
        rows.extend(judged(present.name, section, alpha, band));
    }
    let columns = |cells: &dyn Fn(&ScoreRow) -> &[Cell]| {
        let mut names: Vec<String> = Vec::new();
        for cell in rows.iter().flat_map(cells) {
            if !names.contains(&cell.server) {
                names.push(cell.server.clone());
            }
        }
        names
    };
    let servers = columns(&|r| &r.cells);
    let references = columns(&|r| &r.references);
    let tuned = columns(&|r| &r.tuned);
    let mut words = words(&servers, &rows, &|r| &r.cells, band);
    words.extend(
        self::words(&tuned, &rows, &|r| &r.tuned, band)
            .into_iter()
            .map(|w| format!("Tuned: {w}")),
    );
    words.extend(floor_words(&servers, &references, &rows));
    words.extend(crate::order::words(&placed));
    words.extend(crate::left_out::words(&lopsided));
    for present in sections.present() {
        words.extend(present.section.words());
    }
    Scorecard {
        band,
        servers,
        references,
        tuned,
        rows,
        words,
    }
}

/// A section's rows (scenario `scenario`'s), judged at error rates `alpha` against `band`.
pub fn judged(scenario: &str, rows: Vec<Row>, alpha: Alpha, band: f64) -> Vec<ScoreRow> {
    rows.into_iter()
        .filter_map(|row| score(scenario, row, alpha, band))
        .collect()
}

/// A row made ready to judge, in one league: its servers' entries and the references apart,
/// each one's median, and which is the best by median.
struct Ranked {
    entries: Vec<Entry>,
    references: Vec<Entry>,
    medians: Vec<f64>,
    best: usize,
    higher: bool,
}

impl Ranked {
    /// The tuned league's (`tuned`) or the defaults'; none without a figure to rank.
    fn of(row: &Row, tuned: bool) -> Option<Self> {
        let (references, entries): (Vec<Entry>, Vec<Entry>) = row
            .entries
            .iter()
            .filter(|e| !e.values.is_empty() && e.values.iter().all(|v| v.is_finite()))
            .filter(|e| reference_role(&e.server).is_some() || is_tuned(&e.server) == tuned)
            .cloned()
            .partition(|e| reference_role(&e.server).is_some());
        let higher = row.metric.higher_is_better();
        // Where less of a timed figure is better, zero is nothing measured (a level too short
        // for a CPU tick); a count of zero is a count (no allocation a request).
        let unmeasured = |m: f64| !higher && row.metric.band().is_none() && m <= 0.0;
        let references: Vec<Entry> = references
            .into_iter()
            .filter(|e| !unmeasured(median(&e.values)))
            .collect();
        let medians: Vec<f64> = entries.iter().map(|e| median(&e.values)).collect();
        let best = (0..entries.len()).reduce(|a, b| {
            let better = if higher {
                medians[b] > medians[a]
            } else {
                medians[b] < medians[a]
            };
            if better {
                b
            } else {
                a
            }
        })?;
        // A timed best of zero is no figure (nothing measured), not a win.
        if unmeasured(medians[best]) {
            return None;
        }
        Some(Self {
            entries,
            references,
            medians,
            best,
            higher,
        })
    }

    /// Entry `i` against the best, block by block, and the band they are equal within: the
    /// run's `band`, or wider where either cannot be told apart closer.
    fn against_best(&self, i: usize, band: f64) -> (Blocks, f64) {
        let (e, best) = (&self.entries[i], &self.entries[self.best]);
        let band = band.max(e.resolution).max(best.resolution);
        (Blocks::of(&e.blocks(), &best.blocks()), band)
    }

    /// The other entries' indices.
    fn others(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.entries.len()).filter(|&i| i != self.best)
    }

    /// The others that can get a word: not capped (a capped figure is the client's limit,
    /// not the server's), so not members of the run's family.
    fn judged(&self) -> impl Iterator<Item = usize> + '_ {
        self.others().filter(|&i| !self.entries[i].capped)
    }
}

/// The block diagnostics of `rows` (scenario `scenario`'s), each row judged by blocks: where a
/// place moved a figure ([`crate::order`]), where blocks left out fell on one server ([`left_out`]).
fn diagnosed(scenario: &str, rows: &[Row]) -> (Vec<Placed>, Vec<Lopsided>) {
    let (mut placed, mut lopsided) = (Vec::new(), Vec::new());
    for r in rows.iter().filter(|r| by_blocks(r)) {
        let what = format!("on {scenario}: {}", r.figure);
        let servers: Vec<Placing<'_>> = (r.entries.iter())
            .map(|e| (e.server.as_str(), e.blocks(), e.seqs.as_slice()))
            .collect();
        placed.extend(crate::order::placed(&what, &servers));
        // Not a capped server's: the client's limit left its blocks out, as `Capped` says.
        let kept = r.entries.iter().map(|e| !e.capped);
        let uncapped = (servers.into_iter().zip(kept)).filter_map(|(s, k)| k.then_some(s));
        lopsided.extend(left_out::lopsided(&what, uncapped));
    }
    (placed, lopsided)
}

/// Whether a row's verdicts come from blocks: not a count (a count repeats, and is judged on
/// its band and grain) and not a figure measured once a server.
fn by_blocks(row: &Row) -> bool {
    !row.once && row.metric.band().is_none()
}

/// The members of the run's family that a section's `rows` make at `band`, its blocks looked
/// at `looks` times: each row's servers against its best, in each league.
pub fn row_members(rows: &[Row], band: f64, looks: usize) -> Vec<Member> {
    rows.iter()
        .filter(|r| by_blocks(r))
        .flat_map(|r| [Ranked::of(r, false), Ranked::of(r, true)])
        .flatten()
        .flat_map(|r| {
            r.judged()
                .map(|i| {
                    let (blocks, band) = r.against_best(i, band);
                    Member {
                        blocks,
                        band,
                        looks,
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// One row ranked and judged at error rate `alpha` against `band`, each league apart; none
/// without a figure to rank.
fn score(scenario: &str, row: Row, alpha: Alpha, band: f64) -> Option<ScoreRow> {
    let (cells, references) = league(&row, false, alpha, band).unwrap_or_default();
    let (tuned, tuned_references) = league(&row, true, alpha, band).unwrap_or_default();
    if cells.is_empty() && tuned.is_empty() {
        return None;
    }
    // The references' shares are of the best at the defaults, or of the best tuned server
    // where only tuned servers ran.
    let references = if cells.is_empty() {
        tuned_references
    } else {
        references
    };
    Some(ScoreRow {
        scenario: scenario.to_owned(),
        figure: row.figure,
        metric: row.metric,
        once: row.once,
        cells,
        references,
        tuned,
    })
}

/// The cells of one league of `row` (the `tuned` one or the defaults') and its references',
/// ranked and judged at error rate `alpha` against `band`; none without a figure to rank. The reference
/// servers are not ranked: each gets its share of the best, and each server its share of
/// the floor.
fn league(row: &Row, tuned: bool, alpha: Alpha, band: f64) -> Option<(Vec<Cell>, Vec<Cell>)> {
    let ranked = Ranked::of(row, tuned)?;
    let Ranked {
        entries,
        references,
        medians,
        best,
        higher,
    } = &ranked;
    let (best, higher) = (*best, *higher);
    let share = |m: f64| share_of(higher, medians[best], m);
    let floor = references
        .iter()
        .find(|e| reference_role(&e.server) == Some("floor"))
        .map(|e| median(&e.values));
    // Every other cell against the best, then the best from what they came to.
    let mut judged: Vec<Option<Judged>> = vec![None; entries.len()];
    let mut marks: Vec<Mark> = vec![Mark::Alone; entries.len()];
    for i in ranked.others() {
        let e = &entries[i];
        let word = match row.metric.same_count(medians[i], medians[best]) {
            // A count repeats: it differs from the best past its band, and one run is enough.
            Some(true) => Word::Equal,
            Some(false) => Word::Behind,
            None => {
                let (blocks, band) = ranked.against_best(i, band);
                let j = Family::with_band(band).judge_at(&blocks, higher, alpha);
                judged[i] = Some(j);
                if row.once {
                    Word::Undecided
                } else {
                    j.word
                }
            }
        };
        marks[i] = match Mark::of(word) {
            // A capped figure is the client's limit, not the server's: no verdict.
            _ if e.capped => Mark::Capped,
            // Against a capped best, only "behind" holds: the best could be higher still.
            Mark::Equal | Mark::Ahead if entries[best].capped => Mark::Undecided,
            mark => mark,
        };
    }
    let others: Vec<Mark> = ranked.others().map(|i| marks[i]).collect();
    marks[best] = if others.is_empty() {
        Mark::Alone
    } else if entries[best].capped {
        // The client's limit is no server's figure, even the highest.
        Mark::Capped
    } else if others.iter().all(|&m| m == Mark::Behind) {
        Mark::Ahead
    } else if others
        .iter()
        .all(|&m| matches!(m, Mark::Behind | Mark::Equal))
    {
        Mark::Equal
    } else {
        // Undecided against one, or one capped that may be ahead of it.
        Mark::Undecided
    };
    let cells = entries
        .iter()
        .enumerate()
        .map(|(i, e)| Cell {
            server: e.server.clone(),
            median: medians[i],
            runs: e.values.len(),
            share: share(medians[i]),
            mark: marks[i],
            vs_best: judged[i],
            capped: e.capped,
            cores: e.cores,
            cpu_us_per_request: e.cpu_us,
            of_floor: floor.map(|f| share_of(higher, f, medians[i])),
        })
        .collect();
    let references = references
        .iter()
        .map(|e| {
            let m = median(&e.values);
            Cell {
                server: e.server.clone(),
                median: m,
                runs: e.values.len(),
                share: share(m),
                mark: Mark::Alone,
                vs_best: None,
                capped: e.capped,
                cores: e.cores,
                cpu_us_per_request: e.cpu_us,
                of_floor: floor.map(|f| share_of(higher, f, m)),
            }
        })
        .collect();
    Some((cells, references))
}

/// `m`'s share of `best`: their ratio, the better one over the other where less is better.
fn share_of(higher: bool, best: f64, m: f64) -> f64 {
    match (higher, best, m) {
        (_, b, m) if b == m => 1.0,
        (true, b, m) if b > 0.0 => m / b,
        // A best count at or below zero (none, or one that fell): others are none of it.
        (false, b, m) if m > 0.0 => (b / m).max(0.0),
        _ => 0.0,
    }
}

/// Where every server of the scorecard is a copy of one (`greet-hyper`, `greet-hyper#2`…), an
/// A/A run: every ahead or behind word it gives is false. Their count over the cells judged
/// against their row's best, and how high the rate of false words can be.
pub(crate) fn copies(scorecard: &Scorecard) -> Option<String> {
    let base = |s: &str| s.split('#').next().unwrap_or(s).to_owned();
    let first = base(scorecard.servers.first()?);
    let copies = scorecard.servers.len() > 1 && scorecard.servers.iter().all(|s| base(s) == first);
    if !copies {
        return None;
    }
    let judged: Vec<Mark> = (scorecard.rows.iter())
        .filter(|r| !r.once)
        .flat_map(|r| &r.cells)
        .filter(|c| c.vs_best.is_some())
        .map(|c| c.mark)
        .collect();
    let words = (judged.iter())
        .filter(|&&m| matches!(m, Mark::Ahead | Mark::Behind))
        .count();
    let bound = greet_stats::binomial_upper(words, judged.len(), 0.95);
    Some(format!(
        "A/A: every server a copy of {first}: {words} ahead/behind word(s) over {} cells judged \
         against their row's best, each one false (the false-word rate at most {:.1}% at 95%).",
        judged.len(),
        bound * 100.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scorecard_text::text;
    use greet_stats::paired::BAND;

    /// The error rate `rows` alone are judged at, one look.
    fn alpha_of(rows: &[Row]) -> paired::Alpha {
        paired::threshold(row_members(rows, BAND, 1))
    }

    fn row(metric: Metric, entries: &[(&str, &[f64], bool)]) -> ScoreRow {
        let entries = entries
            .iter()
            .map(|(s, v, capped)| Entry {
                capped: *capped,
                ..Entry::new(s, v.to_vec())
            })
            .collect();
        let row = Row::new(metric.name(), metric, entries);
        let alpha = alpha_of(std::slice::from_ref(&row));
        score("soak", row, alpha, BAND).unwrap()
    }

    fn marks(row: &ScoreRow) -> Vec<(String, Mark)> {
        row.cells
            .iter()
            .map(|c| (c.server.clone(), c.mark))
            .collect()
    }

    /// Eight blocks of a figure near 100, `scale` times, each block off by `jitter` at most.
    fn blocks(scale: f64, jitter: f64) -> Vec<f64> {
        [100.0, 104.0, 99.0, 103.0, 101.0, 106.0, 98.0, 102.0]
            .iter()
            .enumerate()
            .map(|(i, v)| v * scale * (1.0 + jitter * if i % 2 == 0 { 1.0 } else { -0.7 }))
            .collect()
    }

    #[test]
    fn each_cell_is_judged_against_the_best() {
        let fast = blocks(1.0, 0.0);
        let same = blocks(1.0, 0.01);
        let slow = blocks(0.8, 0.02);
        let r = row(
            Metric::Throughput,
            &[
                ("a", &slow, false),
                ("b", &fast, false),
                ("c", &same, false),
            ],
        );
        assert_eq!(
            marks(&r),
            [
                ("a".into(), Mark::Behind),
                ("b".into(), Mark::Equal),
                ("c".into(), Mark::Equal)
            ]
        );
        let a = r.cell("a").unwrap();
        assert!((a.share - median(&slow) / median(&same)).abs() < 1e-9);
        let j = a.vs_best.unwrap();
        assert_eq!((j.word, j.blocks), (Word::Behind, 8));
        assert!(
            j.low < j.ratio && j.ratio < j.high && j.high < 0.95,
            "{j:?}"
        );
        assert_eq!(r.cell("c").unwrap().share, 1.0);
        assert_eq!(r.cell("c").unwrap().vs_best, None);
        // Less is better: the best's median over each one's.
        let r = row(Metric::Total, &[("a", &slow, false), ("b", &fast, false)]);
        assert_eq!(marks(&r)[0], ("a".into(), Mark::Ahead));
        assert_eq!(marks(&r)[1], ("b".into(), Mark::Behind));
    }

    /// A count of zero is a count (no allocation a request): its row stays, and what is
    /// within the count's grain of it is equal, what is past it behind. A timed figure of zero
    /// is nothing measured: no row.
    #[test]
    fn a_count_of_zero_is_a_count_and_a_time_of_zero_is_none() {
        let counted = |values: [f64; 3]| {
            let entries = ["a", "b", "c"]
                .iter()
                .zip(values)
                .map(|(s, v)| Entry::new(s, vec![v]))
                .collect();
            let row = Row::new("allocations", Metric::Allocations, entries);
            score("cost", row, alpha_of(&[]), BAND)
        };
        let r = counted([0.0, 3.0, 0.01]).expect("a count of zero keeps its row");
        assert_eq!(
            marks(&r),
            [
                ("a".into(), Mark::Equal),
                ("b".into(), Mark::Behind),
                ("c".into(), Mark::Equal)
            ]
        );
        assert_eq!(r.cell("b").unwrap().share, 0.0);
        // One that fell below zero is the best, and no other's share goes below zero.
        let r = counted([-0.02, 3.0, 0.01]).expect("a row");
        assert_eq!(marks(&r)[1], ("b".into(), Mark::Behind));
        assert!(r.cells.iter().all(|c| c.share >= 0.0), "{r:?}");
        let timed = Row::new(
            "CPU",
            Metric::CpuPerRequest,
            vec![Entry::new("a", vec![0.0]), Entry::new("b", vec![3.0])],
        );
        assert!(score("rate", timed, alpha_of(&[]), BAND).is_none());
    }

    /// A figure the client bound gets no word, even one the blocks decide or the best, and is
    /// no member of the run's family; against a capped best only "behind" holds.
    #[test]
    fn a_capped_figure_gets_no_word_and_a_capped_best_only_behind() {
        let best = blocks(1.0, 0.0);
        let same = blocks(0.98, 0.0);
        let slow = blocks(0.8, 0.02);
        let r = row(
            Metric::Throughput,
            &[("a", &same, true), ("b", &best, false)],
        );
        assert_eq!(
            marks(&r),
            [("a".into(), Mark::Capped), ("b".into(), Mark::Undecided)]
        );
        assert_eq!(r.cell("a").unwrap().vs_best.unwrap().word, Word::Equal);
        let rows = |capped: bool| {
            [Row::new(
                "x",
                Metric::Throughput,
                vec![
                    Entry {
                        capped,
                        ..Entry::new("a", same.clone())
                    },
                    Entry::new("b", best.clone()),
                ],
            )]
        };
        assert_eq!(row_members(&rows(false), BAND, 1).len(), 1);
        assert_eq!(
            row_members(&rows(true), BAND, 1).len(),
            0,
            "out of the family"
        );
        // The best capped: what is equal to it may be behind it, what is behind it is.
        let r = row(
            Metric::Throughput,
            &[("a", &same, false), ("b", &best, true), ("c", &slow, false)],
        );
        assert_eq!(
            marks(&r),
            [
                ("a".into(), Mark::Undecided),
                ("b".into(), Mark::Capped),
                ("c".into(), Mark::Behind)
            ]
        );
    }

    /// Copies of one server make an A/A run: its words are counted, with their bound; other
    /// runs say nothing of it.
    #[test]
    fn an_a_a_run_counts_its_false_words() {
        let best = blocks(1.0, 0.0);
        let same = blocks(0.98, 0.0);
        let slow = blocks(0.8, 0.02);
        let rows = vec![
            row(
                Metric::Throughput,
                &[("a", &same, false), ("a#2", &best, false)],
            ),
            row(
                Metric::Throughput,
                &[("a", &slow, false), ("a#2", &best, false)],
            ),
        ];
        let card = |servers: &[&str]| Scorecard {
            band: BAND,
            servers: servers.iter().map(|s| s.to_string()).collect(),
            references: Vec::new(),
            tuned: Vec::new(),
            rows: rows.clone(),
            words: Vec::new(),
        };
        let line = copies(&card(&["a", "a#2"])).expect("an A/A run");
        assert!(
            line.contains("copy of a: 1 ahead/behind word(s) over 2 cells"),
            "{line}"
        );
        assert!(line.contains("at most 97.5%"), "{line}");
        assert_eq!(copies(&card(&["a", "b"])), None);
        assert_eq!(copies(&card(&["a"])), None);
    }

    /// A crate with knobs is ranked among the tuned only: a tuned server far ahead leaves the
    /// defaults' verdicts as they were, and is judged against the best tuned one.
    #[test]
    fn tuned_servers_are_a_league_of_their_own() {
        let fast = blocks(1.0, 0.0);
        let slow = blocks(0.8, 0.01);
        let tuned = blocks(3.0, 0.01);
        let r = row(
            Metric::Throughput,
            &[
                ("greet-a", &slow, false),
                ("greet-a+mimalloc", &tuned, false),
                ("greet-b", &fast, false),
                ("greet-b+mimalloc", &fast, false),
            ],
        );
        assert_eq!(
            marks(&r),
            [
                ("greet-a".into(), Mark::Behind),
                ("greet-b".into(), Mark::Ahead)
            ]
        );
        let tuned_marks: Vec<(&str, Mark)> = r
            .tuned
            .iter()
            .map(|c| (c.server.as_str(), c.mark))
            .collect();
        assert_eq!(
            tuned_marks,
            [
                ("greet-a+mimalloc", Mark::Ahead),
                ("greet-b+mimalloc", Mark::Behind)
            ]
        );
        assert!((r.cell("greet-b+mimalloc").unwrap().share - 1.0 / 3.0).abs() < 0.01);
        // Only tuned servers: the row stands, with no default cell, and the floor with it.
        let alone = row(
            Metric::Throughput,
            &[
                ("greet-a+mimalloc", &tuned, false),
                ("greet-floor", &fast, false),
            ],
        );
        assert!(alone.cells.is_empty() && alone.tuned.len() == 1);
        assert_eq!(alone.references.len(), 1);
        let of_floor = alone.cell("greet-a+mimalloc").unwrap().of_floor.unwrap();
        assert!((of_floor - 3.0).abs() < 0.1, "{of_floor}");
        assert!(!is_tuned("c++srv") && is_tuned("greet-a+mimalloc"));
        assert!(is_tuned("greet-a+mimalloc#2"), "named again, in its league");
        let card = Scorecard {
            band: BAND,
            servers: vec!["greet-a".into(), "greet-b".into()],
            tuned: vec!["greet-a+mimalloc".into(), "greet-b+mimalloc".into()],
            rows: vec![r.clone()],
            ..Scorecard::default()
        };
        let printed = text(&card);
        assert!(printed.contains("ran tuned, with knobs"), "{printed}");
        let header = printed
            .lines()
            .find(|l| l.trim_start().starts_with("greet-a "))
            .unwrap();
        assert!(header.find("greet-b").unwrap() < header.find("greet-a+mimalloc").unwrap());
        let tuned_words = words(&card.tuned, &card.rows, &|r| &r.tuned, BAND);
        assert_eq!(tuned_words.len(), 2, "{tuned_words:?}");
        assert!(
            tuned_words[0].starts_with("greet-a+mimalloc is ahead"),
            "{tuned_words:?}"
        );
    }

    /// The floor and the anchor are never ranked: a floor far ahead leaves the servers'
    /// verdicts as they were, and each server gets its share of the floor.
    #[test]
    fn references_are_measured_against_never_ranked() {
        let fast = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0];
        let slow = [80.0, 81.0, 82.0, 83.0, 84.0, 85.0];
        let floor = [200.0, 202.0, 204.0, 206.0, 208.0, 210.0];
        let anchor = [150.0, 151.0, 153.0, 154.0, 155.0, 156.0];
        let r = row(
            Metric::Throughput,
            &[
                ("greet-a", &slow, false),
                ("greet-floor", &floor, false),
                ("greet-b", &fast, false),
                ("nginx", &anchor, false),
            ],
        );
        assert_eq!(
            marks(&r),
            [
                ("greet-a".into(), Mark::Behind),
                ("greet-b".into(), Mark::Ahead)
            ]
        );
        let of_floor = |s: &str| r.cell(s).unwrap().of_floor.unwrap();
        assert!((of_floor("greet-b") - 102.5 / 205.0).abs() < 1e-9);
        assert!((of_floor("nginx") - 153.5 / 205.0).abs() < 1e-9);
        assert_eq!(r.references.len(), 2);
        assert!((r.cell("greet-floor").unwrap().share - 2.0).abs() < 1e-9);
        // Less is better: the floor's over each one's.
        let r = row(
            Metric::CpuPerRequest,
            &[("greet-a", &[40.0], false), ("greet-floor", &[10.0], false)],
        );
        assert!((r.cell("greet-a").unwrap().of_floor.unwrap() - 0.25).abs() < 1e-9);
        assert_eq!(r.cell("greet-a").unwrap().mark, Mark::Alone);
        // A floor with no CPU measured is no floor.
        let unmeasured = row(
            Metric::CpuPerRequest,
            &[("greet-a", &[40.0], false), ("greet-floor", &[0.0], false)],
        );
        assert!(unmeasured.references.is_empty());
        assert_eq!(unmeasured.cell("greet-a").unwrap().of_floor, None);

        let card = Scorecard {
            band: BAND,
            servers: vec!["greet-a".into()],
            references: vec!["greet-floor".into(), "nginx".into()],
            tuned: Vec::new(),
            rows: vec![r],
            words: Vec::new(),
        };
        let words = floor_words(&card.servers, &card.references, &card.rows);
        assert_eq!(words.len(), 1, "{words:?}");
        assert!(words[0].contains("greet-a 0.25"), "{words:?}");
        let text = text(&card);
        assert!(
            text.contains("greet-floor and nginx ran as references"),
            "{text}"
        );
        assert!(text
            .lines()
            .any(|l| l.contains("greet-a") && l.contains("greet-floor")));
        // nginx has no figure on that row: a blank, not n/a.
        assert!(!text.contains("n/a"), "{text}");
    }

    #[test]
    fn too_few_blocks_decide_nothing_and_a_cap_gets_no_verdict() {
        let r = row(
            Metric::Throughput,
            &[("a", &[1.0], false), ("b", &[2.0], false)],
        );
        assert_eq!(
            marks(&r),
            [("a".into(), Mark::Undecided), ("b".into(), Mark::Undecided)]
        );
        // Five blocks wholly apart are still too few for a 95% interval.
        let five = [10.0, 11.0, 12.0, 13.0, 14.0];
        let double = five.map(|v| v * 2.0);
        let r = row(
            Metric::Throughput,
            &[("a", &five, false), ("b", &double, false)],
        );
        assert_eq!(marks(&r)[0], ("a".into(), Mark::Undecided));
        let low = blocks(0.5, 0.0);
        let high = blocks(1.0, 0.0);
        let r = row(
            Metric::Throughput,
            &[("a", &low, true), ("b", &high, false)],
        );
        assert_eq!(
            marks(&r),
            [("a".into(), Mark::Capped), ("b".into(), Mark::Undecided)]
        );
        // The best leads only if it is ahead of every other, not just the runner-up.
        let close = blocks(0.8, 0.01);
        let wild: Vec<f64> = blocks(1.0, 0.0)
            .iter()
            .enumerate()
            .map(|(i, v)| v * [0.3, 1.2][i % 2])
            .collect();
        let best = blocks(1.0, 0.0);
        let r = row(
            Metric::Throughput,
            &[
                ("a", &best, false),
                ("b", &close, false),
                ("c", &wild, false),
            ],
        );
        assert_eq!(
            marks(&r),
            [
                ("a".into(), Mark::Undecided),
                ("b".into(), Mark::Behind),
                ("c".into(), Mark::Undecided)
            ]
        );
        // A best of zero where less is better is nothing measured: no row.
        let zero = vec![0.0; 4];
        let entries = vec![Entry::new("a", zero), Entry::new("b", best.to_vec())];
        assert!(score(
            "rate",
            Row::new("p99", Metric::P99, entries),
            Alpha::both(0.05),
            BAND
        )
        .is_none());
        let r = row(Metric::Throughput, &[("a", &high, false)]);
        assert_eq!(marks(&r), [("a".into(), Mark::Alone)]);
    }

    #[test]
    fn a_block_the_machine_disturbed_is_left_out() {
        let best = blocks(1.0, 0.0);
        let mut slow = blocks(0.8, 0.0);
        // Two blocks where a burst of steal fell on one side only.
        (slow[0], slow[1]) = (best[0] * 2.0, best[1] * 0.2);
        let mut disturbed = vec![false; best.len()];
        (disturbed[0], disturbed[1]) = (true, true);
        let entries = vec![
            Entry {
                disturbed,
                ..Entry::new("a", slow)
            },
            Entry::new("b", best.clone()),
        ];
        let row = Row::new("throughput", Metric::Throughput, entries);
        let alpha = alpha_of(std::slice::from_ref(&row));
        let r = score("soak", row, alpha, BAND).expect("a row");
        let j = r.cell("a").and_then(|c| c.vs_best).expect("a against b");
        assert_eq!(j.blocks, best.len() - 2, "{j:?}");
        assert!((j.ratio - 0.8).abs() < 1e-9, "{j:?}");
    }

    /// Blocks left out on one server's side alone are named, unless the client's limit left
    /// them out (a capped cell, which the scorecard already says is capped).
    #[test]
    fn blocks_left_out_on_one_side_are_named_unless_capped() {
        let steady = blocks(1.0, 0.0);
        let all_out = vec![true; steady.len()];
        let row = |capped| {
            let entries = vec![
                Entry {
                    disturbed: all_out.clone(),
                    capped,
                    ..Entry::new("a", steady.clone())
                },
                Entry::new("b", steady.clone()),
            ];
            vec![Row::new("throughput", Metric::Throughput, entries)]
        };
        let (_, lopsided) = diagnosed("workloads", &row(false));
        assert_eq!(lopsided.len(), 1, "{lopsided:?}");
        assert_eq!(
            lopsided[0].alone,
            [("a".into(), steady.len()), ("b".into(), 0)]
        );
        let (_, capped) = diagnosed("workloads", &row(true));
        assert!(capped.is_empty(), "{capped:?}");
    }

    #[test]
    fn the_words_follow_the_verdicts() {
        let fast = blocks(1.0, 0.0);
        let slow = blocks(0.8, 0.0);
        let rows = vec![
            row(
                Metric::Throughput,
                &[("a", &slow, false), ("b", &fast, false)],
            ),
            row(Metric::Cpu, &[("a", &fast, false), ("b", &slow, false)]),
            row(Metric::Rss, &[("a", &fast, false), ("b", &fast, false)]),
            row(
                Metric::Startup,
                &[("a", &[1.0], false), ("b", &[2.0], false)],
            ),
        ];
        let words = words(&["a".into(), "b".into()], &rows, &|r| &r.cells, BAND);
        assert_eq!(
            words,
            [
                "a is behind on soak: throughput (0.80 of the best, 0.80× [0.80, 0.80]); cpu \
                 (0.80 of the best, 1.25× [1.25, 1.25]).",
                "b is ahead on soak: throughput; cpu.",
                "Equal, every server within ±5% of the best, on 1 figure(s): soak (rss).",
                "Undecided: 2 of 8 cells, on 1 of 4 figure(s) (some on 1 block(s): 6 are the fewest \
                 that can decide one; --repeats adds blocks): soak (startup)."
            ]
        );
    }

    /// A run's section as the family sees it: its scorecard rows and its lists' comparisons,
    /// its blocks looked at `looks` times.
    struct Part {
        looks: usize,
        rows: Vec<Row>,
        comparisons: Vec<paired::Comparison>,
    }

    impl crate::Tables for Part {
        fn tables(&self) -> Vec<crate::table::Table> {
            Vec::new()
        }
    }

    impl crate::Charts for Part {
        type Chart = crate::svg::Drawing;
        fn charts(&self) -> Vec<(String, crate::svg::Drawing)> {
            Vec::new()
        }
    }

    impl crate::Render for Part {
        fn csv(&self) -> anyhow::Result<Vec<(String, String)>> {
            Ok(Vec::new())
        }
        fn points(&self) -> Vec<crate::points::Point> {
            Vec::new()
        }
        fn scorecard(&self) -> Vec<Row> {
            self.rows.clone()
        }
    }

    struct Run(Vec<Part>);

    impl Sections for Run {
        fn present(&self) -> Vec<crate::Present<'_>> {
            (self.0.iter())
                .map(|part| crate::Present {
                    name: "soak",
                    title: "soak",
                    block: "a repeat",
                    measures_again: false,
                    stores: false,
                    looks: part.looks,
                    section: part,
                })
                .collect()
        }
        fn comparisons_mut(&mut self) -> Vec<(usize, &mut paired::Comparison)> {
            (self.0.iter_mut())
                .flat_map(|p| {
                    let looks = p.looks;
                    p.comparisons.iter_mut().map(move |c| (looks, c))
                })
                .collect()
        }
    }

    /// A comparison of `a` over `b` whose eight blocks all have `ratio`, give or take 0.5%.
    fn tight(ratio: f64) -> paired::Comparison {
        let b = blocks(1.0, 0.0);
        let a: Vec<f64> = (b.iter().enumerate())
            .map(|(i, v)| v * ratio * (1.0 + 0.005 * (i % 3) as f64))
            .collect();
        paired::Comparison::new(paired::Figure::RequestsPerS, "a", &a, "b", &b)
    }

    /// Twenty comparisons that show nothing, each its own: each block's ratio about 0.8 or
    /// 1.25 in turn.
    fn nothing() -> Vec<paired::Comparison> {
        let b = blocks(1.0, 0.0);
        (0..20)
            .map(|k| {
                let a: Vec<f64> = (b.iter().enumerate())
                    .map(|(i, v)| if i % 2 == 0 { v * 0.8 } else { v * 1.25 })
                    .map(|v| v * (1.0 + 0.001 * k as f64))
                    .collect();
                paired::Comparison::new(paired::Figure::RequestsPerS, "a", &a, "b", &b)
            })
            .collect()
    }

    #[test]
    fn the_runs_band_judges_every_comparison_and_the_scorecard() {
        let part = |comparison| Part {
            looks: 1,
            rows: vec![Row::new(
                "throughput",
                Metric::Throughput,
                vec![
                    Entry::new("a", blocks(1.1, 0.0)),
                    Entry::new("b", blocks(1.0, 0.0)),
                ],
            )],
            comparisons: vec![comparison],
        };
        // 10% apart: ahead past ±5%, equal within ±20%.
        let mut run = Run(vec![part(tight(1.1))]);
        let card = judge_run(&mut run, BAND);
        assert_eq!(run.0[0].comparisons[0].word(), Word::Ahead);
        assert_eq!(card.rows[0].cell("a").unwrap().mark, Mark::Ahead);
        let card = judge_run(&mut run, 0.2);
        let c = &run.0[0].comparisons[0];
        assert_eq!((c.word(), c.band), (Word::Equal, 0.2));
        assert_eq!(card.band, 0.2);
        assert_eq!(card.rows[0].cell("a").unwrap().mark, Mark::Equal);
        assert!(
            card.words
                .iter()
                .any(|w| w.contains("within ±20% of the best")),
            "{:?}",
            card.words
        );
        assert!(text(&card).contains("by more than ±20%"), "{}", text(&card));
        // A comparison that cannot be told apart closer keeps its wider band.
        run.0[0].comparisons[0] = tight(1.1).resolved(0.3);
        judge_run(&mut run, BAND);
        assert_eq!(run.0[0].comparisons[0].band, 0.3);
    }

    #[test]
    fn the_run_is_one_family_and_each_scenario_pays_for_its_looks() {
        let lead = || Part {
            looks: 1,
            rows: Vec::new(),
            comparisons: vec![tight(1.2)],
        };
        // Alone, eight blocks all 20% ahead decide it (p = 2/256).
        let mut alone = Run(vec![lead()]);
        judge_run(&mut alone, BAND);
        let judged = alone.0[0].comparisons[0].judged;
        assert_eq!(judged.word, Word::Ahead);
        assert!((judged.level - 0.95).abs() < 1e-9, "{judged:?}");
        // Beside another scenario's twenty comparisons that show nothing, the run's rate
        // is shared with them: 2/256 is past 0.05/21, and the lead is undecided.
        let mut run = Run(vec![
            lead(),
            Part {
                looks: 1,
                rows: Vec::new(),
                comparisons: nothing(),
            },
        ]);
        judge_run(&mut run, BAND);
        let judged = run.0[0].comparisons[0].judged;
        assert_eq!(judged.word, Word::Undecided, "{judged:?}");
        assert!(
            (judged.level - (1.0 - 0.05 / 21.0)).abs() < 1e-9,
            "{judged:?}"
        );
        // A scenario that could look three times is judged three times stricter.
        let mut looked = Run(vec![Part { looks: 3, ..lead() }]);
        judge_run(&mut looked, BAND);
        let judged = looked.0[0].comparisons[0].judged;
        assert_eq!(judged.word, Word::Ahead);
        assert!(
            (judged.level - (1.0 - 0.05 / 3.0)).abs() < 1e-9,
            "{judged:?}"
        );
    }
}
