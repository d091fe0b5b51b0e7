//! What two servers are compared on ([`Figure`]), and a comparison as the reports keep it
//! ([`Comparison`]): its blocks as ratios, its band and its word.

use serde::{Deserialize, Serialize};

use super::{Alpha, Blocks, Family, Judged, Member, Word, BAND};

/// The per-run figure two servers are compared on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Valid responses per second (higher is better).
    RequestsPerS,
    /// A fresh-connection level's first-connect-to-last-response time (lower is better).
    TotalS,
    /// An open-loop level's corrected 99th-percentile latency (lower is better).
    P99Ms,
    /// An open-loop level's achieved rate (higher is better).
    AchievedRps,
    /// A protocol's throughput as a fraction of the same server's HTTP/1.1 (higher is better).
    ShareOfHttp1,
    /// The highest open-loop rate held within a latency objective (higher is better).
    CapacityRps,
    /// The server's CPU per request at a fixed rate, microseconds (lower is better).
    ServerUsPerRequest,
}

impl Figure {
    /// Its name in the tables.
    pub fn describe(self) -> &'static str {
        match self {
            Self::RequestsPerS => "throughput",
            Self::TotalS => "total time",
            Self::P99Ms => "p99",
            Self::AchievedRps => "achieved rate",
            Self::ShareOfHttp1 => "share of its HTTP/1.1",
            Self::CapacityRps => "capacity at the objective",
            Self::ServerUsPerRequest => "server CPU per request",
        }
    }

    /// More of it is better.
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Self::TotalS | Self::P99Ms | Self::ServerUsPerRequest)
    }
}

/// Two named things compared block by block: their ratio, its interval and its word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The figure compared.
    pub figure: Figure,
    /// The first one's name (a server, or a setting).
    pub a: String,
    /// The second one's name.
    pub b: String,
    /// Each block's ratio of `a` over `b`, in block order.
    pub ratios: Vec<f64>,
    /// Ratios within this share of 1 are equal (the run's band, or [`Comparison::resolution`]
    /// where that is wider).
    pub band: f64,
    /// The figure cannot be told apart closer than this share of it (a capacity search's
    /// last bracket): its band is at least this wide. 0 where every difference counts; none
    /// in a file from before it was written, which judged every comparison at ±5%, so a
    /// wider `band` there was the resolution ([`Comparison::floor`]).
    #[serde(default)]
    pub resolution: Option<f64>,
    /// The ratio, its interval and its word, for `a` against `b`.
    #[serde(flatten)]
    pub judged: Judged,
}

impl Comparison {
    /// `a` against `b` on `figure`, paired by index (the same index, the same block), judged
    /// alone at the default band; the run's family judges it again
    /// ([`Comparison::judge_at`]).
    pub fn new(figure: Figure, a_name: &str, a: &[f64], b_name: &str, b: &[f64]) -> Self {
        let blocks = Blocks::of(a, b);
        let family = Family::default();
        Self {
            figure,
            a: a_name.to_owned(),
            b: b_name.to_owned(),
            ratios: blocks.ratios(),
            band: family.band,
            resolution: Some(0.0),
            judged: family.judge_one(blocks, figure.higher_is_better()),
        }
    }

    /// The comparison of figures that cannot be told apart closer than `resolution` (a share
    /// of the figure): its band is at least that wide.
    pub fn resolved(mut self, resolution: f64) -> Self {
        self.resolution = Some(resolution);
        self.band = self.band.max(resolution);
        self.judged = Family::with_band(self.band).judge_one(self.blocks(), self.higher());
        self
    }

    /// Its member of the run's family, at the run's `band`, its scenario having looked
    /// `looks` times.
    pub fn member(&self, band: f64, looks: usize) -> Member {
        Member {
            blocks: self.blocks(),
            band: band.max(self.floor()),
            looks,
        }
    }

    /// The narrowest band it can be judged against: its resolution.
    pub fn floor(&self) -> f64 {
        self.resolution
            .unwrap_or(if self.band > BAND { self.band } else { 0.0 })
    }

    /// Its blocks.
    pub fn blocks(&self) -> Blocks {
        Blocks::of_ratios(&self.ratios)
    }

    /// More of its figure is better.
    pub fn higher(&self) -> bool {
        self.figure.higher_is_better()
    }

    /// Judged again at the run's `band` (or its resolution, where wider) and error rates
    /// `alpha`.
    pub fn judge_at(&mut self, band: f64, alpha: Alpha) {
        self.band = band.max(self.floor());
        let family = Family::with_band(self.band);
        self.judged = family.judge_at(&self.blocks(), self.higher(), alpha);
    }

    /// Its word.
    pub fn word(&self) -> Word {
        self.judged.word
    }

    /// One line for the tables, e.g.
    /// `greet-hyper / greet-axum throughput: 1.04× [1.01, 1.07] over 8 blocks, undecided`.
    pub fn line(&self) -> String {
        format!(
            "{} / {} {}: {} over {} block(s), {}",
            self.a,
            self.b,
            self.figure.describe(),
            self.judged.show(),
            self.judged.blocks,
            self.judged.word.describe()
        )
    }
}

/// Every pair of `samples` (name, values of `figure` block by block), in order: (0, 1),
/// (0, 2), …, (1, 2), …
pub fn pairwise(figure: Figure, samples: &[(String, Vec<f64>)]) -> Vec<Comparison> {
    let mut out = Vec::new();
    for (i, (a_name, a)) in samples.iter().enumerate() {
        for (b_name, b) in &samples[i + 1..] {
            out.push(Comparison::new(figure, a_name, a, b_name, b));
        }
    }
    out
}
