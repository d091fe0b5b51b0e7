//! Progress bars on stderr, fed from a load's count of requests done.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// What a progress bar measures progress against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// A number of requests.
    Requests(u64),
    /// A duration: the bar shows time, and the requests so far beside it.
    Duration(Duration),
}

/// A progress bar and the task feeding it.
#[derive(Debug)]
pub(crate) struct Progress(Option<(ProgressBar, tokio::task::JoinHandle<()>)>);

impl Progress {
    /// A bar named `label` fed from `done`, unless `quiet` (indicatif draws nothing when
    /// stderr is not a terminal). Stop it with [`Progress::finish`].
    pub(crate) fn start(quiet: bool, label: String, bound: Bound, done: Arc<AtomicUsize>) -> Self {
        if quiet {
            return Self(None);
        }
        let bar = bar(label, bound);
        let feed = bar.clone();
        let started = Instant::now();
        let ticker = tokio::spawn(async move {
            loop {
                update(
                    &feed,
                    bound,
                    done.load(Ordering::Relaxed),
                    started.elapsed(),
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Self(Some((bar, ticker)))
    }

    /// Removes the bar.
    pub(crate) fn finish(self) {
        if let Some((bar, ticker)) = self.0 {
            ticker.abort();
            bar.finish_and_clear();
        }
    }
}

fn bar(label: String, bound: Bound) -> ProgressBar {
    let (len, template) = match bound {
        Bound::Requests(n) => (n, "{prefix:>28} {bar:40} {pos}/{len} {elapsed}"),
        Bound::Duration(d) => (millis(d), "{prefix:>28} {bar:40} {msg}"),
    };
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(label);
    bar
}

fn update(bar: &ProgressBar, bound: Bound, done: usize, elapsed: Duration) {
    match bound {
        Bound::Requests(_) => bar.set_position(done as u64),
        Bound::Duration(d) => {
            bar.set_position(millis(elapsed).min(millis(d)));
            bar.set_message(format!(
                "{:.1}/{:.1} s, {done} requests",
                elapsed.min(d).as_secs_f64(),
                d.as_secs_f64()
            ));
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_bar_shows_time_not_a_count_against_zero() {
        let bound = Bound::Duration(Duration::from_secs(10));
        let bar = bar_of(bound);
        update(&bar, bound, 42, Duration::from_millis(2500));
        assert_eq!((bar.position(), bar.length()), (2500, Some(10_000)));
        assert_eq!(bar.message(), "2.5/10.0 s, 42 requests");
        // Past the deadline (the last requests finishing), the bar stays full.
        update(&bar, bound, 50, Duration::from_millis(10_300));
        assert_eq!(bar.position(), 10_000);
        let counted = Bound::Requests(300);
        let bar = bar_of(counted);
        update(&bar, counted, 120, Duration::from_secs(1));
        assert_eq!((bar.position(), bar.length()), (120, Some(300)));
    }

    fn bar_of(bound: Bound) -> ProgressBar {
        let bar = bar("levels".into(), bound);
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        bar
    }
}
