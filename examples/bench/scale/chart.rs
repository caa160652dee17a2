//! The chart of `--scale`: one panel per curve. The ratio to plain against processes and
//! against tasks, the memory held against scope values, and the ratio and the counters
//! collection's size against counters.

use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::measure::Result;
use crate::plot;
use crate::scenarios::Model;

use super::scopes::mib;
use super::{Curve, Curves, RateRow};

/// A panel of the chart.
type Panel<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Writes the four panels to `path` as an SVG; the panel of a curve that did not run is blank
/// but for its caption.
pub fn chart(path: &Path, server: &str, curves: &Curves) -> Result<()> {
    let root = SVGBackend::new(path, (1400, 1000)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        &format!("How each mode bends as the work grows (MongoDB {server})"),
        ("sans-serif", 24),
    )?;
    for (area, curve) in root.split_evenly((2, 2)).iter().zip(Curve::ALL) {
        let caption = caption(curve);
        if !curves.ran.contains(&curve) {
            // Building the chart draws its caption only: the panel stays blank.
            panel(area, caption).build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
            continue;
        }
        match curve {
            Curve::Processes => {
                rate_panel(area, caption, "processes", 0.0..17.0, &curves.processes)?
            }
            Curve::Tasks => rate_panel(
                area,
                caption,
                "tasks (log)",
                log_axis(0.7, curves.tasks.iter().map(|r| r.point)).log_scale(),
                &curves.tasks,
            )?,
            Curve::Scopes => memory_panel(area, caption, curves)?,
            Curve::Counters => counters_panel(area, caption, curves)?,
        }
    }
    root.present()?;
    Ok(())
}

/// The caption of the panel of `curve`.
fn caption(curve: Curve) -> &'static str {
    match curve {
        Curve::Processes => "ratio to plain against processes (8 tasks each)",
        Curve::Tasks => "ratio to plain against tasks in one process",
        Curve::Scopes => "memory held against scope values (scoped, batch 25)",
        Curve::Counters => "ratio to plain and collection size against counters (8 tasks)",
    }
}

/// The color of a mode's line.
fn color(model: Model) -> RGBColor {
    match model {
        Model::Plain => RGBColor(0x2c, 0xa0, 0x2c),
        Model::B1 => RGBColor(0xd6, 0x27, 0x28),
        Model::B25 => RGBColor(0x1f, 0x77, 0xb4),
        Model::Gapless => RGBColor(0x94, 0x67, 0xbd),
        Model::Proxy => RGBColor(0xff, 0x7f, 0x0e),
    }
}

/// The modes of `rows` other than plain, in the order they first appear.
fn sequenced(rows: &[RateRow]) -> Vec<Model> {
    let mut modes: Vec<Model> = Vec::new();
    for r in rows {
        if r.model != Model::Plain && !modes.contains(&r.model) {
            modes.push(r.model);
        }
    }
    modes
}

/// The points (x, ratio) of `model` in `rows`.
fn ratios(rows: &[RateRow], model: Model) -> Vec<(f64, f64)> {
    rows.iter()
        .filter(|r| r.model == model)
        .map(|r| (r.point as f64, r.ratio))
        .collect()
}

/// The top of a ratio axis: above every ratio of `rows` and above 1, with room for the legend.
fn ratio_top(rows: &[RateRow]) -> f64 {
    rows.iter().map(|r| r.ratio).fold(1.0, f64::max) * 1.4
}

/// A log axis from `low` to twice the largest of `points` (at least `low` × 10).
fn log_axis(low: f64, points: impl Iterator<Item = u64>) -> Range<f64> {
    low..points.map(|p| p as f64 * 2.0).fold(low * 10.0, f64::max)
}

/// The chart of a panel: its caption above, the margins and the axes' label areas.
fn panel<'a, 'b>(area: &'a Panel<'b>, caption: &str) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56);
    builder
}

/// The ratio of each mode of `rows` to plain, a line each, and plain's own (1.0) dashed.
fn ratio_lines<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    rows: &[RateRow],
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for model in sequenced(rows) {
        plot::line(chart, model.name(), ratios(rows, model), color(model), 3)?;
    }
    plot::level(chart, 1.0, "plain (1.0)", color(Model::Plain))
}

/// A panel of the ratio of each mode to plain against the curve's x, over `x`.
fn rate_panel<X>(area: &Panel, caption: &str, x_desc: &str, x: X, rows: &[RateRow]) -> Result<()>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = panel(area, caption).build_cartesian_2d(x, 0.0..ratio_top(rows))?;
    plot::mesh(&mut chart, x_desc, "docs/s over plain's").draw()?;
    ratio_lines(&mut chart, rows)?;
    plot::labels(&mut chart)
}

/// The live heap and the resident set held against scope values, with the bound of the scope
/// values a sequence remembers.
fn memory_panel(area: &Panel, caption: &str, curves: &Curves) -> Result<()> {
    let heap: Vec<(f64, f64)> = curves
        .scopes
        .iter()
        .map(|r| (r.scope_values as f64, mib(r.heap_held)))
        .collect();
    let rss: Vec<(f64, f64)> = curves
        .scopes
        .iter()
        .filter_map(|r| Some((r.scope_values as f64, mib(r.rss_held?))))
        .collect();
    let ys = heap.iter().chain(&rss).map(|p| p.1);
    let top = ys.clone().fold(1.0, f64::max) * 1.4;
    let bottom = ys.fold(0.0, f64::min) * 1.15;
    let mut chart = panel(area, caption).build_cartesian_2d(
        log_axis(5.0, curves.scopes.iter().map(|r| r.scope_values)).log_scale(),
        bottom..top,
    )?;
    plot::mesh(
        &mut chart,
        "scope values (log)",
        "MiB above the level before",
    )
    .draw()?;
    let lines = [
        ("live heap", heap, RGBColor(0x1f, 0x77, 0xb4)),
        ("resident set", rss, RGBColor(0x7f, 0x7f, 0x7f)),
    ];
    for (label, points, color) in lines {
        plot::line(&mut chart, label, points, color, 3)?;
    }
    let bound = RGBColor(0x40, 0x40, 0x40);
    chart
        .draw_series(DashedLineSeries::new(
            [(4096.0, bottom), (4096.0, top)],
            6,
            6,
            bound.stroke_width(1),
        ))?
        .label("4,096: the most scope values remembered")
        .legend(plot::legend(bound));
    plot::labels(&mut chart)
}

/// The ratio to plain against counters in the collection, and the collection's size on a
/// second axis.
fn counters_panel(area: &Panel, caption: &str, curves: &Curves) -> Result<()> {
    let rows = &curves.counters;
    let x = log_axis(100.0, rows.iter().map(|r| r.point));
    let sizes = |of: fn(&super::counters::CollectionSize) -> u64| -> Vec<(f64, f64)> {
        curves
            .collections
            .iter()
            .map(|s| (s.counters as f64, mib(of(s) as i64)))
            .collect()
    };
    let data = sizes(|s| s.size);
    let disk = sizes(|s| s.storage_size + s.total_index_size);
    let size_top = data.iter().chain(&disk).map(|p| p.1).fold(1.0, f64::max) * 1.4;
    let mut chart = panel(area, caption)
        .right_y_label_area_size(56)
        .build_cartesian_2d(x.clone().log_scale(), 0.0..ratio_top(rows))?
        .set_secondary_coord(x.log_scale(), 0.0..size_top);
    plot::mesh(
        &mut chart,
        "counter documents in the collection (log)",
        "docs/s over plain's",
    )
    .draw()?;
    chart
        .configure_secondary_axes()
        .y_desc("counters collection, MiB")
        .draw()?;
    ratio_lines(&mut chart, rows)?;
    let lines = [
        ("documents, MiB (right)", data, RGBColor(0x8c, 0x56, 0x4b)),
        (
            "on disk with indexes, MiB (right)",
            disk,
            RGBColor(0x7f, 0x7f, 0x7f),
        ),
    ];
    for (label, points, color) in lines {
        chart
            .draw_secondary_series(DashedLineSeries::new(
                points.clone(),
                4,
                4,
                color.stroke_width(2),
            ))?
            .label(label)
            .legend(plot::legend(color));
        chart.draw_secondary_series(points.into_iter().map(|p| Cross::new(p, 4, color)))?;
    }
    plot::labels(&mut chart)
}
