//! `greet-bench compare OLD NEW`: two runs read and compared ([`crate::diff`]), the table
//! printed, then each threshold.

use std::path::Path;

use crate::diff::{self, Format};
use crate::gate;
use greet_model::plan::Threshold;

use super::Outcome;

/// Compares run `new` with `old` (`noise`, the settings that `vary` on purpose, and the
/// output `format`), then holds the ratios to `thresholds`: usage when a run cannot be read,
/// breached when a threshold is.
pub(crate) fn run(
    (old, new): (&Path, &Path),
    (noise, vary, format): (f64, &[String], Format),
    thresholds: &[Threshold],
) -> Outcome {
    let compared = diff::read(old)
        .and_then(|old| diff::read(new).map(|new| (old, new)))
        .and_then(|(old, new)| diff::diff(&old, &new, noise, vary));
    let mut compared = match compared {
        Ok(compared) => compared,
        Err(err) => return Outcome::Usage(format!("{err:#}")),
    };
    let checked = gate::check_ratios(thresholds, Some(&mut compared));
    print!("{}", diff::render(&compared, format));
    for threshold in &checked {
        eprintln!("{threshold}");
    }
    if checked.iter().all(|t| t.held) {
        Outcome::Done
    } else {
        Outcome::Breached
    }
}
