//! What both kinds of chart are laid out on and lettered with, plain numbers and text: the
//! page's size and margins, the palette, round axis scales, how ticks and values are
//! written, and labels broken into lines that fit their group.

pub(super) const WIDTH: f64 = 720.0;
pub(super) const HEIGHT: f64 = 360.0;
pub(super) const LEFT: f64 = 70.0;
pub(super) const RIGHT: f64 = 20.0;
pub(super) const TOP: f64 = 40.0;
pub(super) const BOTTOM: f64 = 70.0;
pub(super) const PALETTE: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
];

/// Roughly the width of a 12 px sans-serif character.
pub(super) const CHAR_WIDTH: f64 = 6.5;

/// `label` in lines of at most `max` characters where it can be broken: after a space, or
/// before a `/`. A piece longer than a line stays whole.
pub(super) fn wrap(label: &str, max: usize) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    for word in label.split(' ') {
        for (i, part) in word.split('/').enumerate() {
            let part = if i == 0 {
                part.to_owned()
            } else {
                format!("/{part}")
            };
            let glue = if i == 0 && !pieces.is_empty() {
                " "
            } else {
                ""
            };
            pieces.push(format!("{glue}{part}"));
        }
    }
    let mut lines: Vec<String> = Vec::new();
    for piece in pieces.into_iter().filter(|p| !p.trim().is_empty()) {
        match lines.last_mut() {
            Some(line) if line.chars().count() + piece.chars().count() <= max => {
                line.push_str(&piece)
            }
            _ => lines.push(piece.trim_start().to_owned()),
        }
    }
    lines
}

/// A round top for the axis and the step between its gridlines.
pub(super) fn nice_scale(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (1.0, 0.25);
    }
    let raw = max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    ((max / step).ceil() * step, step)
}

pub(super) fn fmt_tick(v: f64, step: f64) -> String {
    if step >= 1.0 {
        format!("{v:.0}")
    } else {
        let decimals = (-step.log10().floor()) as usize + 1;
        format!("{v:.decimals$}")
    }
}

pub(super) fn fmt_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `0.1`, `1`, `10`, `1000` as an axis label.
pub(super) fn fmt_log_tick(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        let decimals = (-v.log10()).round() as usize;
        format!("{v:.decimals$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_labels_wrap_at_spaces_and_slashes() {
        assert_eq!(wrap("/greetings c=50", 20), ["/greetings c=50"]);
        assert_eq!(
            wrap("/greetings/blocking c=200", 12),
            ["/greetings", "/blocking", "c=200"]
        );
        assert_eq!(
            wrap("/greetings/blocking c=200", 16),
            ["/greetings", "/blocking c=200"]
        );
        assert_eq!(wrap("w1 b200", 20), ["w1 b200"]);
    }

    #[test]
    fn scales_are_round() {
        assert_eq!(nice_scale(1.23), (1.25, 0.25));
        assert_eq!(nice_scale(14.2), (15.0, 5.0));
        assert_eq!(nice_scale(0.0), (1.0, 0.25));
        assert_eq!(nice_scale(43.0), (50.0, 10.0));
    }
}
