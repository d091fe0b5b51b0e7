//! Drawing a [`Chart`] (a grouped bar chart with optional min–max whiskers) or a
//! [`LineChart`] as a self-contained SVG document, by hand (no dependencies), on the page
//! `canvas` lays out and letters. What to draw is each scenario's, as a [`Drawing`].

use std::fmt::Write as _;
use std::ops::Sub;

use crate::canvas::{
    fmt_log_tick, fmt_tick, fmt_value, nice_scale, wrap, BOTTOM, CHAR_WIDTH, HEIGHT, LEFT, PALETTE,
    RIGHT, TOP, WIDTH,
};

/// One chart's data: groups along the x axis, a bar per series in each group.
#[derive(Debug)]
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

/// A chart of either kind, as a scenario hands it to the report.
#[derive(Debug)]
pub enum Drawing {
    /// Grouped bars.
    Bars(Chart),
    /// Lines on a logarithmic axis.
    Lines(LineChart),
}

impl Drawing {
    /// The chart as a standalone SVG document.
    pub fn render(&self) -> String {
        match self {
            Self::Bars(chart) => render(chart),
            Self::Lines(chart) => render_lines(chart),
        }
    }
}

impl From<Chart> for Drawing {
    fn from(chart: Chart) -> Self {
        Self::Bars(chart)
    }
}

impl From<LineChart> for Drawing {
    fn from(chart: LineChart) -> Self {
        Self::Lines(chart)
    }
}

/// A chart's document up to its plot: the root element, a white ground, the title centred on
/// `centre`.
fn open(title: &str, centre: f64) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12"><title>{0}</title><rect width="100%" height="100%" fill="white"/><text x="{centre}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{0}</text>"#,
        esc(title)
    )
}

/// Draws `chart` as a standalone SVG document.
pub fn render(chart: &Chart) -> String {
    render_banded(chart, &[])
}

/// Draws `chart` with a shaded band behind each group's bars, `[low, high]` group by group
/// (a verdict chart's band of "equal"); a group past the end of `bands` has none.
pub fn render_banded(chart: &Chart, bands: &[[f64; 2]]) -> String {
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
        .chain(bands.iter().map(|[_, high]| high))
        .fold(0.0_f64, |m, &v| m.max(v));
    let (top, step) = nice_scale(max);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y = |v: f64| TOP + plot_h * (1.0 - v / top);
    let mut out = open(&chart.title, WIDTH / 2.0);
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
        if let Some([low, high]) = bands.get(g) {
            let _ = write!(
                out,
                r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#59a14f" fill-opacity="0.15"><title>equal: {}-{}</title></rect>"##,
                gx + group_w * 0.05,
                y(*high),
                group_w * 0.9,
                (y(*low) - y(*high)).max(0.0),
                fmt_value(*low),
                fmt_value(*high)
            );
        }
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

/// How a line chart's x axis reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Values as they are, from zero.
    Linear,
    /// Percentiles by their nines, HdrHistogram style: 90 at 1, 99 at 2, 99.9 at 3…; 100 (the
    /// maximum) past the last.
    Nines,
}

/// One line: points in x order, a colour by index, dashed or not.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Its name in the legend.
    pub name: String,
    /// `(x, y)` points.
    pub points: Vec<(f64, f64)>,
    /// Index into the palette.
    pub colour: usize,
    /// Drawn dashed.
    pub dashed: bool,
}

/// A line chart with a logarithmic y axis (latencies spread over decades).
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Title on top.
    pub title: String,
    /// What the x axis is.
    pub x_label: String,
    /// What the y axis is.
    pub y_label: String,
    /// How the x axis reads.
    pub x_axis: XAxis,
    /// The lines.
    pub lines: Vec<Line>,
}

/// Where percentile `p` (0–100) sits on a nines axis; 100 goes half a nine past `last`.
fn nines(p: f64, last: f64) -> f64 {
    if p >= 100.0 {
        last + 0.5
    } else {
        -(1.0 - p / 100.0).log10()
    }
}

/// Draws `chart` as a standalone SVG document.
pub fn render_lines(chart: &LineChart) -> String {
    let points = chart.lines.iter().flat_map(|l| l.points.iter());
    let ys: Vec<f64> = points.clone().map(|p| p.1).filter(|y| *y > 0.0).collect();
    let (lo, hi) = ys.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), &y| {
        (lo.min(y), hi.max(y))
    });
    let (lo, hi) = if ys.is_empty() { (1.0, 10.0) } else { (lo, hi) };
    let (decade_lo, decade_hi) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let last_nine = chart
        .lines
        .iter()
        .flat_map(|l| l.points.iter())
        .filter(|p| p.0 < 100.0)
        .map(|p| nines(p.0, 0.0))
        .fold(1.0_f64, f64::max)
        // 99.999 reads as 5.000000001 nines in floating point.
        .sub(1e-6)
        .ceil();
    let x_of = |x: f64| match chart.x_axis {
        XAxis::Linear => x,
        XAxis::Nines => nines(x, last_nine),
    };
    let x_max = match chart.x_axis {
        XAxis::Linear => nice_scale(points.map(|p| p.0).fold(0.0_f64, f64::max)).0,
        XAxis::Nines => last_nine + 0.5,
    };
    let plot_w = WIDTH - LEFT - RIGHT - 150.0;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |x: f64| LEFT + plot_w * (x_of(x) / x_max).clamp(0.0, 1.0);
    let py = |y: f64| {
        let v = y.max(10f64.powf(decade_lo)).log10();
        TOP + plot_h * (1.0 - (v - decade_lo) / (decade_hi - decade_lo))
    };
    let mut out = open(&chart.title, LEFT + plot_w / 2.0);
    // Y: a gridline per decade, labelled.
    let mut decade = decade_lo;
    while decade <= decade_hi + 1e-9 {
        let value = 10f64.powf(decade);
        let y = py(value);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y + 4.0,
            fmt_log_tick(value)
        );
        decade += 1.0;
    }
    // X: ticks.
    let ticks: Vec<(f64, String)> = match chart.x_axis {
        XAxis::Linear => {
            let step = nice_scale(x_max).1;
            (0..)
                .map(|i| i as f64 * step)
                .take_while(|x| *x <= x_max + step / 2.0)
                .map(|x| (x, fmt_tick(x, step)))
                .collect()
        }
        XAxis::Nines => {
            let mut ticks = vec![(50.0, "50%".to_owned())];
            for nines in 1..=last_nine as usize {
                let p = 100.0 - 100.0 / 10f64.powi(nines as i32);
                let label = match nines {
                    1 => "90%".to_owned(),
                    n => format!("99.{}%", "9".repeat(n - 2)).replace(".%", "%"),
                };
                ticks.push((p, label));
            }
            ticks.push((100.0, "max".to_owned()));
            ticks
        }
    };
    for (x, label) in ticks {
        let at = px(x);
        let _ = write!(
            out,
            r##"<line x1="{at:.1}" x2="{at:.1}" y1="{TOP}" y2="{:.1}" stroke="#eee"/><text x="{at:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 16.0,
            esc(&label)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{LEFT}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"##,
        LEFT + plot_w,
        TOP + plot_h,
        TOP + plot_h,
        LEFT + plot_w / 2.0,
        TOP + plot_h + 36.0,
        esc(&chart.x_label),
        TOP + plot_h / 2.0,
        esc(&chart.y_label)
    );
    // Lines, each with its points marked and named on hover.
    for line in &chart.lines {
        let colour = PALETTE[line.colour % PALETTE.len()];
        let path: Vec<String> = line
            .points
            .iter()
            .filter(|p| p.1 > 0.0)
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        if path.is_empty() {
            continue;
        }
        let dash = if line.dashed {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        let _ = write!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"{dash}><title>{}</title></polyline>"#,
            path.join(" "),
            esc(&line.name)
        );
        for &(x, y) in line.points.iter().filter(|p| p.1 > 0.0) {
            let _ = write!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{colour}"><title>{}: {} at {}</title></circle>"#,
                px(x),
                py(y),
                esc(&line.name),
                fmt_value(y),
                fmt_value(x)
            );
        }
    }
    // Legend, on the right.
    for (i, line) in chart.lines.iter().enumerate() {
        let y = TOP + 14.0 * i as f64;
        let x = LEFT + plot_w + 12.0;
        let colour = PALETTE[line.colour % PALETTE.len()];
        let dash = if line.dashed {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        let _ = write!(
            out,
            r#"<line x1="{x:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="2"{dash}/><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
            x + 18.0,
            x + 22.0,
            y + 4.0,
            esc(&line.name)
        );
    }
    out.push_str("</svg>\n");
    out
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
    fn line_charts_place_nines_and_decades() {
        assert!((nines(90.0, 3.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9, 3.0) - 3.0).abs() < 1e-9);
        assert_eq!(nines(100.0, 3.0), 3.5);
        let chart = LineChart {
            title: "t".into(),
            x_label: "percentile".into(),
            y_label: "ms".into(),
            x_axis: XAxis::Nines,
            lines: vec![Line {
                name: "50%".into(),
                points: vec![(50.0, 0.2), (99.0, 1.5), (99.9, 30.0), (100.0, 80.0)],
                colour: 0,
                dashed: false,
            }],
        };
        let svg = render_lines(&chart);
        assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle ").count(), 4);
        for label in [">0.1<", ">1<", ">10<", ">100<", ">99.9%<", ">max<"] {
            assert!(svg.contains(label), "{label} in {svg}");
        }
        assert!(!svg.contains(">99.99%<"), "no nine past the data's: {svg}");
        assert_eq!(fmt_log_tick(0.01), "0.01");
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
