//! The chart of `--scale`: one panel per curve. The ratio to plain against processes and
//! against tasks, the memory held against scope values, and the ratio and the counters
//! collection's size against counters.

use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::measure::Result;
use crate::scenarios::Model;

use super::scopes::mib;
use super::{Curves, RateRow};

/// A panel of the chart.
type Panel<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Writes the four panels to `path` as an SVG.
pub fn chart(path: &Path, server: &str, curves: &Curves) -> Result<()> {
    let root = SVGBackend::new(path, (1400, 1000)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        &format!("How each mode bends as the work grows (MongoDB {server})"),
        ("sans-serif", 24),
    )?;
    let panels = root.split_evenly((2, 2));
    rate_panel(
        &panels[0],
        "ratio to plain against processes (8 tasks each)",
        "processes",
        0.0..17.0,
        &curves.processes,
    )?;
    rate_panel(
        &panels[1],
        "ratio to plain against tasks in one process",
        "tasks (log)",
        log_axis(0.7, curves.tasks.iter().map(|r| r.point)).log_scale(),
        &curves.tasks,
    )?;
    memory_panel(&panels[2], curves)?;
    counters_panel(&panels[3], curves)?;
    root.present()?;
    Ok(())
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

/// The legend's sample of a line: a short stroke of its color.
fn legend(color: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
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

/// A panel of the ratio of each mode to plain against the curve's x, over `x`.
fn rate_panel<X>(area: &Panel, caption: &str, x_desc: &str, x: X, rows: &[RateRow]) -> Result<()>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x, 0.0..ratio_top(rows))?;
    let Range { start, end } = chart.x_range();
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("docs/s over plain's")
        .light_line_style(BLACK.mix(0.04))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()?;
    for model in sequenced(rows) {
        let points = ratios(rows, model);
        chart
            .draw_series(LineSeries::new(
                points.clone(),
                color(model).stroke_width(2),
            ))?
            .label(model.name())
            .legend(legend(color(model)));
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 3, color(model).filled())),
        )?;
    }
    chart
        .draw_series(DashedLineSeries::new(
            [(start, 1.0), (end, 1.0)],
            8,
            6,
            color(Model::Plain).stroke_width(2),
        ))?
        .label("plain (1.0)")
        .legend(legend(color(Model::Plain)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// The live heap and the resident set held against scope values, with the bound of the scope
/// values a sequence remembers.
fn memory_panel(area: &Panel, curves: &Curves) -> Result<()> {
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
    let mut chart = ChartBuilder::on(area)
        .caption(
            "memory held against scope values (scoped, batch 25)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(
            log_axis(5.0, curves.scopes.iter().map(|r| r.scope_values)).log_scale(),
            bottom..top,
        )?;
    chart
        .configure_mesh()
        .x_desc("scope values (log)")
        .y_desc("MiB above the level before")
        .light_line_style(BLACK.mix(0.04))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()?;
    let lines = [
        ("live heap", heap, RGBColor(0x1f, 0x77, 0xb4)),
        ("resident set", rss, RGBColor(0x7f, 0x7f, 0x7f)),
    ];
    for (label, points, color) in lines {
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(label)
            .legend(legend(color));
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 3, color.filled())),
        )?;
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
        .legend(legend(bound));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// The ratio to plain against counters in the collection, and the collection's size on a
/// second axis.
fn counters_panel(area: &Panel, curves: &Curves) -> Result<()> {
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
    let mut chart = ChartBuilder::on(area)
        .caption(
            "ratio to plain and collection size against counters (8 tasks)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .right_y_label_area_size(56)
        .build_cartesian_2d(x.clone().log_scale(), 0.0..ratio_top(rows))?
        .set_secondary_coord(x.clone().log_scale(), 0.0..size_top);
    chart
        .configure_mesh()
        .x_desc("counter documents in the collection (log)")
        .y_desc("docs/s over plain's")
        .light_line_style(BLACK.mix(0.04))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()?;
    chart
        .configure_secondary_axes()
        .y_desc("counters collection, MiB")
        .draw()?;
    for model in sequenced(rows) {
        let points = ratios(rows, model);
        chart
            .draw_series(LineSeries::new(
                points.clone(),
                color(model).stroke_width(2),
            ))?
            .label(model.name())
            .legend(legend(color(model)));
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 3, color(model).filled())),
        )?;
    }
    chart
        .draw_series(DashedLineSeries::new(
            [(x.start, 1.0), (x.end, 1.0)],
            8,
            6,
            color(Model::Plain).stroke_width(2),
        ))?
        .label("plain (1.0)")
        .legend(legend(color(Model::Plain)));
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
            .legend(legend(color));
        chart.draw_secondary_series(points.into_iter().map(|p| Cross::new(p, 4, color)))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
