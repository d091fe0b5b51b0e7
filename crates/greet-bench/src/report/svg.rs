//! Drawing a [`Chart`] as a self-contained SVG document: a grouped bar chart with optional
//! min–max whiskers, drawn by hand (no dependencies). What to draw is `charts`'s.

use std::fmt::Write as _;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 70.0;
const PALETTE: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
];

/// One chart's data: groups along the x axis, a bar per series in each group.
pub struct Chart {
    /// Title on top.
    pub title: String,
    /// Unit of the y axis.
    pub unit: String,
    /// Group labels along the x axis.
    pub groups: Vec<String>,
    /// `(name, value per group)`; `None` draws no bar.
    pub series: Vec<(String, Vec<Option<f64>>)>,
    /// Per series, per group: a `[low, high]` range drawn over the bar (min–max of repeats);
    /// empty for none.
    pub whiskers: Vec<Vec<Option<[f64; 2]>>>,
}

/// Draws `chart` as a standalone SVG document.
pub fn render(chart: &Chart) -> String {
    let whisker = |s: usize, g: usize| {
        chart
            .whiskers
            .get(s)
            .and_then(|w| w.get(g))
            .copied()
            .flatten()
    };
    let max = chart
        .series
        .iter()
        .flat_map(|(_, values)| values.iter().flatten())
        .chain(
            chart
                .whiskers
                .iter()
                .flatten()
                .flatten()
                .map(|[_, high]| high),
        )
        .fold(0.0_f64, |m, &v| m.max(v));
    let (top, step) = nice_scale(max);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y = |v: f64| TOP + plot_h * (1.0 - v / top);
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(
        out,
        r#"<title>{}</title><rect width="100%" height="100%" fill="white"/>"#,
        esc(&chart.title)
    );
    let _ = write!(
        out,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        WIDTH / 2.0,
        esc(&chart.title)
    );
    // Y axis: gridlines and labels.
    let mut tick = 0.0;
    while tick <= top + step / 2.0 {
        let ty = y(tick);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{}" y1="{ty:.1}" y2="{ty:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            ty + 4.0,
            fmt_tick(tick, step)
        );
        tick += step;
    }
    let _ = write!(
        out,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + plot_h / 2.0,
        esc(&chart.unit)
    );
    // Bars.
    let groups = chart.groups.len().max(1) as f64;
    let group_w = plot_w / groups;
    let bars = chart.series.len().max(1) as f64;
    let bar_w = group_w * 0.8 / bars;
    for (g, label) in chart.groups.iter().enumerate() {
        let gx = LEFT + group_w * g as f64;
        for (s, (name, values)) in chart.series.iter().enumerate() {
            if let Some(Some(v)) = values.get(g) {
                let x = gx + group_w * 0.1 + bar_w * s as f64;
                let top_y = y(*v);
                let _ = write!(
                    out,
                    r#"<rect x="{x:.1}" y="{top_y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                    (bar_w - 2.0).max(1.0),
                    (TOP + plot_h - top_y).max(0.0),
                    PALETTE[s % PALETTE.len()],
                    esc(name),
                    fmt_value(*v)
                );
                if let Some([low, high]) = whisker(s, g) {
                    let cx = x + bar_w / 2.0 - 1.0;
                    let _ = write!(
                        out,
                        r##"<path d="M{cx:.1} {:.1}V{:.1}M{:.1} {:.1}h6M{:.1} {:.1}h6" stroke="#222" fill="none"><title>{}: {}-{}</title></path>"##,
                        y(low),
                        y(high),
                        cx - 3.0,
                        y(low),
                        cx - 3.0,
                        y(high),
                        esc(name),
                        fmt_value(low),
                        fmt_value(high)
                    );
                }
                if bars * groups <= 16.0 {
                    let _ = write!(
                        out,
                        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
                        x + bar_w / 2.0 - 1.0,
                        top_y - 3.0,
                        fmt_value(*v)
                    );
                }
            }
        }
        // A label wider than its group goes on as many lines as it needs, broken at spaces
        // and slashes, rather than over its neighbours.
        let max_chars = ((group_w / CHAR_WIDTH) as usize).max(4);
        for (i, line) in wrap(label, max_chars).iter().enumerate() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                gx + group_w / 2.0,
                TOP + plot_h + 16.0 + 13.0 * i as f64,
                esc(line)
            );
        }
    }
    let _ = write!(
        out,
        r##"<line x1="{LEFT}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#333"/>"##,
        WIDTH - RIGHT,
        TOP + plot_h,
        TOP + plot_h
    );
    // Legend.
    if chart.series.len() > 1 {
        let mut lx = LEFT;
        let ly = HEIGHT - 22.0;
        for (s, (name, _)) in chart.series.iter().enumerate() {
            let _ = write!(
                out,
                r#"<rect x="{lx:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{ly:.1}">{}</text>"#,
                ly - 10.0,
                PALETTE[s % PALETTE.len()],
                lx + 16.0,
                esc(name)
            );
            lx += 24.0 + 7.0 * name.chars().count() as f64;
        }
    }
    out.push_str("</svg>\n");
    out
}

/// Roughly the width of a 12 px sans-serif character.
const CHAR_WIDTH: f64 = 6.5;

/// `label` in lines of at most `max` characters where it can be broken: after a space, or
/// before a `/`. A piece longer than a line stays whole.
fn wrap(label: &str, max: usize) -> Vec<String> {
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
fn nice_scale(max: f64) -> (f64, f64) {
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

fn fmt_tick(v: f64, step: f64) -> String {
    if step >= 1.0 {
        format!("{v:.0}")
    } else {
        let decimals = (-step.log10().floor()) as usize + 1;
        format!("{v:.decimals$}")
    }
}

fn fmt_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Escapes text for XML and HTML.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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

    #[test]
    fn renders_bars_and_escapes() {
        let chart = Chart {
            title: "a <b> & c".into(),
            unit: "s".into(),
            groups: vec!["100".into(), "300".into()],
            series: vec![
                ("x".into(), vec![Some(1.0), None]),
                ("y".into(), vec![Some(2.0), Some(3.0)]),
            ],
            whiskers: vec![vec![Some([0.5, 4.0]), None]],
        };
        let svg = render(&chart);
        assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(
            svg.matches("<rect x=").count(),
            3 + 2,
            "three bars and two legend keys"
        );
        assert!(svg.contains("a &lt;b&gt; &amp; c"));
        assert_eq!(svg.matches("<path ").count(), 1, "one whisker");
        // The whisker's top sets the scale: 4 is the top gridline.
        assert!(svg.contains(">4</text>"), "{svg}");
    }
}
