//! The pieces the charts of the bench share (the chart of the scenarios and the panels of
//! `--scale`): labelled lines, level lines, the mesh and the legend box, on SVG.

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::prelude::*;

use crate::measure::Result;

/// The legend's sample of a line: a short stroke of its color.
pub fn legend(color: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
}

/// The mesh with the axes described `x_desc` and `y_desc` and whole numbers on x, to `draw`.
pub fn mesh<'a, 'b, 'c, X, Y>(
    chart: &'b mut ChartContext<'a, SVGBackend<'c>, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
) -> MeshStyle<'a, 'b, X, Y, SVGBackend<'c>>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged + ValueFormatter<Y::ValueType>,
{
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .light_line_style(BLACK.mix(0.04))
        .x_label_formatter(&whole);
    mesh
}

/// `x` without decimals, for the x axis' labels.
fn whole(x: &f64) -> String {
    format!("{x:.0}")
}

/// A line of `color` through `points`, a circle of `radius` on each, in the legend as `label`.
pub fn line<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    label: &str,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    radius: i32,
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
        .label(label)
        .legend(legend(color));
    chart.draw_series(
        points
            .into_iter()
            .map(|p| Circle::new(p, radius, color.filled())),
    )?;
    Ok(())
}

/// A dashed line of `color` at `y` across the whole x axis, in the legend as `label`.
pub fn level<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    y: f64,
    label: &str,
    color: RGBColor,
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let x = chart.x_range();
    chart
        .draw_series(DashedLineSeries::new(
            [(x.start, y), (x.end, y)],
            8,
            6,
            color.stroke_width(2),
        ))?
        .label(label)
        .legend(legend(color));
    Ok(())
}

/// The legend box: every labelled series, in the upper left corner.
pub fn labels<'a, 'b: 'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>,
) -> Result<()> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
