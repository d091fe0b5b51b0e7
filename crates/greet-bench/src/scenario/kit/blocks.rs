//! How a scenario measures in blocks and what it compares: servers started once and measured
//! block by block in a balanced order ([`Members`]), the pause that lets a load's
//! connections close before the next ([`settle`]), a settings grid that holds the default,
//! and every pair of contenders on one figure.

use std::time::Instant;

use anyhow::Result;

use crate::harness::{Harness, Up};
use greet_model::plan::Budget;

use super::{Book, Run};

/// Servers started once and measured in blocks: each block measures every member once (a
/// server, or a server in one case), in a Williams order ([`greet_stats::order`]: every member
/// in every place, and after every other, alike over a cycle of blocks), so that a slow spell
/// of the machine, or what a slice leaves behind, falls on a block's members alike and cancels
/// in their ratios ([`greet_stats::paired`]). A member is named by who fails with it (its server).
pub(crate) struct Members {
    each: Vec<(String, Option<Up>)>,
}

impl Members {
    /// None yet.
    pub(crate) fn new() -> Self {
        Self { each: Vec::new() }
    }

    /// Starts a member of `who` in a step of its own (`start` brings it up and warms it);
    /// one that fails to start is left out of every block.
    pub(crate) async fn start<K: Run>(
        &mut self,
        book: &mut Book<'_, K>,
        who: &str,
        start: impl AsyncFnOnce() -> Result<Up>,
    ) -> Result<()> {
        let mut slot = None;
        book.step(who, async |_| {
            slot = Some(start().await?);
            Ok(())
        })
        .await?;
        self.each.push((who.to_owned(), slot));
        Ok(())
    }

    /// `least` blocks, then `more.step` blocks at a time while `decided(book)` is false and
    /// `more` has looks and time left (`until`): for each block,
    /// `slice(book, member, block, up)` for every member still up, in a Williams order; a
    /// member whose server fails is dropped from the rest. Returns the blocks run.
    pub(crate) async fn blocks<'a, K: Run>(
        &mut self,
        book: &mut Book<'a, K>,
        (least, more, until): (usize, Budget, Instant),
        decided: impl Fn(&mut Book<'a, K>) -> bool,
        mut slice: impl AsyncFnMut(&mut Book<'a, K>, usize, usize, &mut Up) -> Result<()>,
    ) -> Result<usize> {
        let n = self.each.len();
        let (mut done, mut target, mut looks) = (0, least, 1);
        loop {
            while done < target {
                for i in greet_stats::order::williams(n, done) {
                    let (who, slot) = &mut self.each[i];
                    let Some(up) = slot.as_mut() else { continue };
                    book.step(who, async |book| slice(book, i, done, up).await)
                        .await?;
                    if book.has_failed(who) {
                        *slot = None;
                    }
                }
                done += 1;
            }
            if looks >= more.looks() || Instant::now() >= until || decided(book) {
                return Ok(done);
            }
            looks += 1;
            target += more.step;
        }
    }

    /// Stops every member still up, each in a step of its own.
    pub(crate) async fn release<K: Run>(
        self,
        harness: &Harness,
        book: &mut Book<'_, K>,
    ) -> Result<()> {
        for (who, up) in self.each {
            if let Some(up) = up {
                book.step(&who, async |_| harness.release(up).await).await?;
            }
        }
        Ok(())
    }
}

/// The connections a load leaves behind when it ends.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Leftover {
    /// A keep-alive load's: one per user.
    KeepAlive,
    /// A ladder level's: up to its concurrency in fresh connections, closing at once.
    Fresh,
}

/// `items` in block `block`'s order (from 0): a Williams design ([`greet_stats::order`]), so
/// that over a cycle of blocks each takes every place, and follows every other, alike.
pub(crate) fn in_order<T>(items: &[T], block: usize) -> impl Iterator<Item = &T> {
    greet_stats::order::williams(items.len(), block)
        .into_iter()
        .map(move |i| &items[i])
}

/// Lets the last load's connections close before the next one starts.
pub(crate) async fn settle(leftover: Leftover) {
    let wait = match leftover {
        Leftover::KeepAlive => std::time::Duration::from_millis(100),
        Leftover::Fresh => std::time::Duration::from_millis(250),
    };
    tokio::time::sleep(wait).await;
}

/// `grid` with `always` in it, sorted, each value once: a grid always holds the default.
pub(crate) fn grid_with(grid: &[usize], always: usize) -> Vec<usize> {
    let mut grid = grid.to_vec();
    grid.push(always);
    grid.sort_unstable();
    grid.dedup();
    grid
}

/// Every pair of `samples` (labels that start with the server's table name) compared on
/// `figure`, but the reference servers': they are measured against, never compared.
pub(crate) fn contenders_pairwise(
    figure: greet_stats::paired::Figure,
    samples: &[(String, Vec<f64>)],
) -> Vec<greet_stats::paired::Comparison> {
    let kept: Vec<(String, Vec<f64>)> = samples
        .iter()
        .filter(|(label, _)| {
            let server = label.split_whitespace().next().unwrap_or_default();
            greet_model::plan::reference_role(server).is_none()
        })
        .cloned()
        .collect();
    greet_stats::paired::pairwise(figure, &kept)
}
