//! One SVG chart per table: a panel per workload, a bar per contender, the bar's length its
//! ratio to the best contender of that workload on a log scale, dod's rows in their own colour.
//! A reader sees at a glance where dod stands.

use std::path::Path;

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use crate::harness::Table;

const DOD: RGBColor = RGBColor(0xD9, 0x5F, 0x02);
const PEER: RGBColor = RGBColor(0x75, 0x70, 0xB3);
const FLOOR: RGBColor = RGBColor(0x99, 0x99, 0x99);

/// Writes the chart of `table` to `path`.
pub fn write(table: &Table, path: &Path) -> Result<(), String> {
    let panels = table.columns.len().max(1);
    let per_row = panels.min(2);
    let rows = panels.div_ceil(per_row);
    let names: Vec<&str> = table.rows.iter().map(|r| r.name.as_str()).collect();
    let panel_h = 60 + 22 * names.len() as u32;
    // Room for the longest contender name at 11 px sans-serif.
    let label_w = 16 + 6 * names.iter().map(|s| s.len()).max().unwrap_or(8) as u32;
    let size = ((420 + label_w) * per_row as u32, 40 + panel_h * rows as u32);
    let root = SVGBackend::new(path, size).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(
            &format!("{} (ratio to the best, lower is better)", table.title),
            ("sans-serif", 18),
        )
        .map_err(|e| err(&e))?;
    let areas = root.split_evenly((rows, per_row));
    for (c, area) in areas.iter().enumerate().take(panels) {
        let Some(best) = table.best(c) else { continue };
        let ratios: Vec<Option<f64>> = table
            .rows
            .iter()
            .map(|r| r.cells[c].map(|v| if best > 0.0 { v / best } else { 1.0 }))
            .collect();
        let top = ratios.iter().flatten().fold(1.0f64, |m, &r| m.max(r)) * 3.0;
        // Row i of the table is drawn at segment n - 1 - i, so the table's order reads top-down.
        let n = names.len();
        let at = move |i: usize| n - 1 - i;
        let mut chart = ChartBuilder::on(area)
            .caption(&table.columns[c], ("sans-serif", 14))
            .margin(6)
            .x_label_area_size(24)
            .y_label_area_size(label_w)
            .build_cartesian_2d((1.0f64..top).log_scale(), (0..names.len()).into_segmented())
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(names.len())
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) if *i < n => {
                    names[at(*i)].to_string()
                }
                SegmentValue::CenterOf(_) | SegmentValue::Exact(_) => String::new(),
                SegmentValue::Last => String::new(),
            })
            .x_label_formatter(&|x| format!("{x:.0}x"))
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(|e| err(&e))?;
        let bars = ratios.iter().enumerate().filter_map(|(i, r)| {
            let r = (*r)?;
            let colour = if names[i].starts_with("dod") || names[i].contains("HandleMap") {
                DOD
            } else if names[i].contains("floor") {
                FLOOR
            } else {
                PEER
            };
            let mut bar = Rectangle::new(
                [
                    (1.0, SegmentValue::Exact(at(i))),
                    (r.max(1.0001), SegmentValue::Exact(at(i) + 1)),
                ],
                colour.filled(),
            );
            bar.set_margin(3, 3, 0, 0);
            Some(bar)
        });
        chart.draw_series(bars).map_err(|e| err(&e))?;
        let labels = ratios.iter().enumerate().filter_map(|(i, r)| {
            let r = (*r)?;
            Some(Text::new(
                format!("{r:.2}x"),
                (r.max(1.0001), SegmentValue::CenterOf(at(i))),
                ("sans-serif", 10),
            ))
        });
        chart.draw_series(labels).map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}
