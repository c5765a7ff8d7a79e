//! Rendering tests: well-formed SVG, honest axes, escaping, PNG output, files.

mod common;

use common::sample;
use drivelab_report::{
    render_png, render_svg, resolve, write_pngs, write_svgs, Axis, Chart, GroupPalette, Mark,
    ReportError, Series,
};
use resvg::tiny_skia::Pixmap;

fn parse(svg: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("SVG is not well-formed XML: {e}"))
}

/// The chart's width, px.
fn svg_width(doc: &roxmltree::Document<'_>) -> f64 {
    doc.root_element()
        .attribute("width")
        .unwrap()
        .parse()
        .unwrap()
}

fn data_paths<'a>(doc: &'a roxmltree::Document<'a>) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.split(' ').any(|x| x == "dl-data"))
        })
        .collect()
}

#[test]
fn every_sample_chart_is_well_formed_and_tagged() {
    let report = sample::full_report(3, 600);
    let palette = report.palette();
    assert_eq!(palette.groups(), sample::drive_names(3).as_slice());
    for chart in report.charts() {
        let svg = render_svg(chart, &palette).unwrap();
        let doc = parse(&svg);
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert_eq!(
            root.tag_name().namespace(),
            Some("http://www.w3.org/2000/svg")
        );
        let paths = data_paths(&doc);
        assert_eq!(paths.len(), chart.series.len(), "chart {}", chart.id);
        for (p, s) in paths.iter().zip(order_drawn(chart)) {
            // Attribute values come back unescaped: the markup survived the round trip.
            assert_eq!(p.attribute("data-group"), Some(s.group.as_str()));
            let cls = format!("dl-g{}", palette.index(&s.group));
            assert!(p.attribute("class").unwrap().contains(&cls));
            let n: usize = p.attribute("data-n").unwrap().parse().unwrap();
            assert!(n > 0, "series {} of {} drew nothing", s.name, chart.id);
            assert!(!p.attribute("d").unwrap().is_empty());
        }
        // Legend: one entry per series (plus stall ticks), each tagged with its group.
        let legend = doc
            .descendants()
            .filter(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.starts_with("dl-leg "))
            })
            .count();
        assert!(legend >= chart.series.len(), "chart {}", chart.id);
        // The title and axis labels are real text elements.
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "text")
            .map(|n| {
                n.descendants()
                    .filter(|t| t.is_text())
                    .filter_map(|t| t.text())
                    .collect()
            })
            .collect();
        assert!(
            texts.contains(&chart.title),
            "{:?} not in {:?}",
            chart.title,
            texts
        );
        assert!(texts.contains(&chart.y.title()));
        // Font stack is generic: no web fonts, no url().
        assert!(!svg.contains("url(http") && !svg.contains("@font-face"));
    }
}

/// Series in drawing order: bands, bars, scatter, lines.
fn order_drawn(chart: &Chart) -> Vec<&Series> {
    use drivelab_report::SeriesKind::*;
    [Band, Bars, Scatter, Line]
        .iter()
        .flat_map(|k| chart.series.iter().filter(move |s| s.kind == *k))
        .collect()
}

#[test]
fn colours_are_consistent_across_charts() {
    let names = sample::drive_names(3);
    let palette = GroupPalette::new(names.clone());
    let a = render_svg(&sample::peak(&names), &palette).unwrap();
    let b = render_svg(&sample::mixed(&names), &palette).unwrap();
    for (i, n) in names.iter().enumerate() {
        let col = drivelab_report::COLORS[i];
        assert_eq!(palette.color(n), col);
        assert!(a.contains(&format!("stroke=\"{col}\"")));
        assert!(b.contains(&format!("stroke=\"{col}\"")));
    }
}

#[test]
fn log_axes_get_decade_and_power_of_two_ticks() {
    let names = sample::drive_names(2);
    let r = resolve(&sample::exceedance(&names)).unwrap();
    let y: Vec<f64> = r.y.major.iter().map(|t| t.value).collect();
    assert_eq!(y.len(), 7);
    for (v, k) in y.iter().zip(-6..=0) {
        assert!((v / 10f64.powi(k) - 1.0).abs() < 1e-9, "{v} vs 1e{k}");
    }
    assert_eq!(r.x.major.first().unwrap().label, "10");
    assert!(r.auto_notes.is_empty(), "{:?}", r.auto_notes);

    let r = resolve(&sample::peak(&names)).unwrap();
    let labels: Vec<&str> = r.x.major.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(
        labels,
        ["1", "2", "4", "8", "16", "32", "64", "128", "256", "512"]
    );
}

#[test]
fn bars_always_start_at_zero() {
    let bars = Chart::new(
        "bars",
        "Bars",
        Axis::categories("Workload", vec!["a".into(), "b".into()]),
        // Asking for a range that starts at 150 must not cut the bars.
        Axis::linear("Throughput", "MB/s")
            .range(Some(150.0), None)
            .tight(),
    )
    .with_series(Series::bars("d1", "d1", vec![(0.0, 180.0), (1.0, 200.0)]));
    let r = resolve(&bars).unwrap();
    assert_eq!(r.y.lo, 0.0);
    assert!(r.y.hi >= 200.0);
    assert!(r.auto_notes.is_empty());
    // The bars' path starts at the baseline, which is the bottom of the plot.
    let svg = render_svg(&bars, &GroupPalette::for_charts([&bars])).unwrap();
    let doc = parse(&svg);
    let d = data_paths(&doc)[0].attribute("d").unwrap().to_string();
    let clip = doc
        .descendants()
        .find(|n| n.tag_name().name() == "clipPath")
        .unwrap()
        .first_element_child()
        .unwrap();
    let bottom: f64 = clip.attribute("y").unwrap().parse::<f64>().unwrap()
        + clip.attribute("height").unwrap().parse::<f64>().unwrap();
    let base: f64 = d[1..].split(['V', ' ']).nth(1).unwrap().parse().unwrap();
    assert!(
        (base - bottom).abs() < 0.11,
        "baseline {base} vs bottom {bottom}"
    );

    // Bars on a log value axis cannot start at zero: refused.
    let log = Chart::new("b", "B", Axis::linear("x", "s"), Axis::log10("y", "IOPS"))
        .with_series(Series::bars("d", "d", vec![(1.0, 10.0)]));
    assert!(matches!(
        render_svg(&log, &GroupPalette::default()),
        Err(ReportError::InvalidChart { .. })
    ));
}

#[test]
fn zoomed_value_axis_says_it_does_not_start_at_zero() {
    let pts: Vec<(f64, f64)> = (0..100)
        .map(|i| (i as f64, 50_000.0 + i as f64 * 10.0))
        .collect();
    let tight = Chart::new(
        "z",
        "Zoom",
        Axis::linear("Time", "s"),
        Axis::linear("Throughput", "IOPS").tight(),
    )
    .with_series(Series::scatter("d", "d", pts.clone()));
    let r = resolve(&tight).unwrap();
    assert!(r.y.lo > 0.0);
    assert_eq!(r.auto_notes.len(), 1);
    assert!(
        r.auto_notes[0].contains("does not start at 0"),
        "{:?}",
        r.auto_notes
    );
    let svg = render_svg(&tight, &GroupPalette::default()).unwrap();
    let doc = parse(&svg);
    let note = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("dl-axis-note"))
        .expect("note element");
    assert!(note.text().unwrap().contains("does not start at 0"));
    assert!(svg.contains("dl-axis-break"));

    // The default linear axis includes zero: no note, no break.
    let honest = Chart::new(
        "h",
        "H",
        Axis::linear("Time", "s"),
        Axis::linear("Throughput", "IOPS"),
    )
    .with_series(Series::line("d", "d", pts.clone()));
    let r = resolve(&honest).unwrap();
    assert_eq!(r.y.lo, 0.0);
    assert!(r.auto_notes.is_empty());
    assert!(!render_svg(&honest, &GroupPalette::default())
        .unwrap()
        .contains("dl-axis-break"));

    // A log axis never starts at zero, and says so in its title instead.
    let log = Chart::new(
        "l",
        "L",
        Axis::linear("Time", "s"),
        Axis::log10("Throughput", "IOPS"),
    )
    .with_series(Series::line("d", "d", pts));
    assert!(resolve(&log).unwrap().auto_notes.is_empty());
    assert_eq!(log.y.title(), "Throughput (IOPS, log scale)");
}

#[test]
fn values_a_log_axis_cannot_show_are_counted_in_a_note() {
    let c = Chart::new(
        "l",
        "L",
        Axis::log10("Latency", "µs"),
        Axis::log10("Share", "fraction"),
    )
    .with_series(Series::line(
        "d",
        "d",
        vec![(10.0, 1.0), (100.0, 0.1), (1000.0, 0.0), (0.0, 0.5)],
    ));
    let r = resolve(&c).unwrap();
    assert_eq!(r.auto_notes.len(), 1);
    assert!(r.auto_notes[0].contains("2 point(s)"), "{:?}", r.auto_notes);
}

#[test]
fn invalid_charts_are_refused() {
    let no_unit = Chart::new("a", "A", Axis::linear("Time", ""), Axis::linear("y", "s"));
    let err = render_svg(&no_unit, &GroupPalette::default()).unwrap_err();
    assert!(err.to_string().contains("no unit"), "{err}");
    let bad_id = Chart::new("a b", "A", Axis::linear("x", "s"), Axis::linear("y", "s"));
    assert!(render_svg(&bad_id, &GroupPalette::default()).is_err());
    let y2 = Chart::new("a", "A", Axis::linear("x", "s"), Axis::linear("y", "s"))
        .with_series(Series::line("d", "d", vec![(0.0, 1.0)]).on_y2());
    assert!(render_svg(&y2, &GroupPalette::default()).is_err());
}

#[test]
fn big_series_are_compact() {
    // 100 000 noisy line and scatter points over ~800 px stay small: lines keep
    // at most 4 vertices per pixel column, scatter marks at most one per pixel.
    let pts: Vec<(f64, f64)> = (0..100_000)
        .map(|i| (i as f64, 1000.0 + 60.0 * ((i * 7919) % 101) as f64 / 100.0))
        .collect();
    let c = Chart::new(
        "big",
        "Big",
        Axis::linear("Time", "s"),
        Axis::linear("IOPS", "IOPS"),
    )
    .with_series(Series::line("l", "a", pts.clone()))
    .with_series(Series::scatter("s", "b", pts));
    let svg = render_svg(&c, &GroupPalette::for_charts([&c])).unwrap();
    let doc = parse(&svg);
    for p in data_paths(&doc) {
        assert_eq!(p.attribute("data-n"), Some("100000"));
        let d = p.attribute("d").unwrap();
        assert!(
            d.len() < 400_000,
            "{} path is {} bytes",
            p.attribute("data-kind").unwrap(),
            d.len()
        );
    }
}

#[test]
fn marks_are_drawn_and_grouped() {
    let c = sample::seqfill(&sample::drive_names(2));
    let palette = GroupPalette::for_charts([&c]);
    let svg = render_svg(&c, &palette).unwrap();
    let doc = parse(&svg);
    let marks: Vec<_> = doc
        .descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.starts_with("dl-mark"))
        })
        .collect();
    // Two cache points (grouped) and one drop range (not grouped).
    assert_eq!(marks.len(), 3);
    assert_eq!(
        marks
            .iter()
            .filter(|m| m.attribute("data-group").is_some())
            .count(),
        2
    );
    assert!(svg.contains("cache ≈ 80 GB"));
    // The temperature series sits on the right axis.
    assert!(svg.contains("Temperature (°C)"));
}

fn dark_pixels(p: &Pixmap, x0: u32, y0: u32, x1: u32, y1: u32) -> usize {
    let mut n = 0;
    for y in y0..y1.min(p.height()) {
        for x in x0..x1.min(p.width()) {
            let px = p.pixel(x, y).unwrap();
            if px.alpha() > 0 && (px.red() as u32 + px.green() as u32 + px.blue() as u32) < 3 * 128
            {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn png_decodes_with_data_and_text() {
    let names = sample::drive_names(3);
    let chart = sample::peak(&names);
    let palette = GroupPalette::for_charts([&chart]);
    let png = render_png(&chart, &palette, 2.0).unwrap();
    let img = Pixmap::decode_png(&png).expect("valid PNG");
    assert_eq!(
        (img.width(), img.height()),
        (chart.width * 2, chart.height * 2)
    );
    let non_white = img
        .pixels()
        .iter()
        .filter(|p| p.red() < 240 || p.green() < 240 || p.blue() < 240)
        .count();
    let total = img.pixels().len();
    assert!(
        non_white > total / 50,
        "only {non_white} of {total} pixels drawn"
    );
    // Data colours are present (blue of group 0).
    assert!(img
        .pixels()
        .iter()
        .any(|p| p.red() < 20 && (100..130).contains(&p.green()) && p.blue() > 160));

    // Text: the title band has dark glyph pixels, and none when the title is empty.
    let band = |c: &Chart| {
        let img = Pixmap::decode_png(&render_png(c, &palette, 2.0).unwrap()).unwrap();
        dark_pixels(&img, 0, 0, 1000, 2 * 32)
    };
    let titled = band(&chart.clone().size(860, 440));
    let mut untitled = chart.clone();
    untitled.title = String::new();
    assert!(titled > 500, "title rendered {titled} dark pixels");
    assert_eq!(band(&untitled), 0);
}

#[test]
fn files_are_named_after_chart_ids() {
    let names = sample::drive_names(2);
    let charts = vec![sample::mixed(&names), sample::grouped_bars(&names)];
    let dir = tempfile::tempdir().unwrap();
    let svgs = write_svgs(&charts, dir.path()).unwrap();
    let pngs = write_pngs(&charts, dir.path()).unwrap();
    assert_eq!(
        svgs,
        vec![
            dir.path().join("mixed.svg"),
            dir.path().join("workload-bars.svg")
        ]
    );
    assert_eq!(
        pngs,
        vec![
            dir.path().join("mixed.png"),
            dir.path().join("workload-bars.png")
        ]
    );
    let text = std::fs::read_to_string(&svgs[0]).unwrap();
    assert!(text.starts_with("<?xml"));
    parse(&text);
    assert!(Pixmap::decode_png(&std::fs::read(&pngs[1]).unwrap()).is_ok());

    let dup = vec![sample::mixed(&names), sample::mixed(&names)];
    assert!(matches!(
        write_svgs(&dup, dir.path()),
        Err(ReportError::InvalidReport(_))
    ));
}

#[test]
fn html_report_is_self_contained() {
    let report = sample::full_report(3, 300);
    let html = report.render().unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("Content-Security-Policy"));
    let stripped = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for bad in [
        "src=", "href=", "@import", "<link", "<img", "<iframe", "http://", "https://",
    ] {
        assert!(!stripped.contains(bad), "report contains {bad}");
    }
    // The only url() references are to clip paths inside the document.
    assert_eq!(
        html.matches("url(").count(),
        html.matches("url(#dl-clip-").count()
    );
    assert_eq!(html.matches("<svg ").count(), report.charts().len());
    assert_eq!(html.matches("class=\"dl-tog dl-g").count(), 3);
    assert!(html.contains("Charlie &lt;QLC&gt; &amp; &quot;cache&quot;"));
    assert!(!html.contains("<QLC>"));
    // Tiles: 3 tables × 4 rows × read and write.
    assert_eq!(html.matches("class=\"dl-tile ").count(), 24);
}

#[test]
fn a_mark_only_group_still_gets_a_colour() {
    let c = Chart::new("m", "M", Axis::linear("x", "s"), Axis::linear("y", "s")).with_mark(
        Mark::VLine {
            x: 1.0,
            label: Some("t".into()),
            group: Some("only-mark".into()),
        },
    );
    let p = GroupPalette::for_charts([&c]);
    assert_eq!(p.groups(), ["only-mark".to_string()]);
    assert!(render_svg(&c, &p)
        .unwrap()
        .contains("data-group=\"only-mark\""));
}

/// Widths of the bars in a bars path (`M x0 base V top H x1 V base` per bar).
fn bar_widths(d: &str) -> Vec<f64> {
    d.split('M')
        .filter(|b| !b.trim().is_empty())
        .map(|b| {
            let x0: f64 = b.split([' ', 'V']).next().unwrap().parse().unwrap();
            let x1: f64 = b
                .split('H')
                .nth(1)
                .unwrap()
                .split('V')
                .next()
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            x1 - x0
        })
        .collect()
}

#[test]
fn a_category_is_shared_among_the_bars_that_have_a_value_there() {
    // Drive B ran only the second test: drive A's bar at the first has the slot alone.
    let chart = Chart::new(
        "bars",
        "Bars",
        Axis::categories("Test", vec!["a".into(), "b".into()]),
        Axis::linear("Throughput", "MB/s"),
    )
    .with_series(Series::bars("A", "A", vec![(0.0, 10.0), (1.0, 10.0)]))
    .with_series(Series::bars("B", "B", vec![(1.0, 20.0)]));
    let svg = render_svg(&chart, &GroupPalette::for_charts([&chart])).unwrap();
    let doc = parse(&svg);
    let a = bar_widths(data_paths(&doc)[0].attribute("d").unwrap());
    assert_eq!(a.len(), 2);
    assert!((a[0] / a[1] - 2.0).abs() < 0.05, "{a:?}");
}

#[test]
fn the_callout_box_avoids_the_data() {
    // Every point in the top right, where the box used to go: it has its own band above
    // the plot now, so it covers no data wherever the data is.
    let pts: Vec<(f64, f64)> = (0..50).map(|i| (90.0 + i as f64 * 0.2, 95.0)).collect();
    let chart = Chart::new(
        "c",
        "C",
        Axis::linear("x", "s").range(Some(0.0), Some(100.0)),
        Axis::linear("y", "IOPS").range(Some(0.0), Some(100.0)),
    )
    .with_series(Series::scatter("d", "d", pts))
    .callout("a line of text in the callout box");
    let svg = render_svg(&chart, &GroupPalette::for_charts([&chart])).unwrap();
    let doc = parse(&svg);
    let rect = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("dl-callout"))
        .and_then(|g| g.first_element_child())
        .unwrap();
    let num = |n: roxmltree::Node, a: &str| -> f64 { n.attribute(a).unwrap().parse().unwrap() };
    let plot = doc
        .descendants()
        .find(|n| n.tag_name().name() == "clipPath")
        .and_then(|c| c.first_element_child())
        .unwrap();
    assert!(
        num(rect, "y") + num(rect, "height") <= num(plot, "y"),
        "the callout box reaches into the plot"
    );
}

#[test]
fn an_unlabelled_pair_of_one_drive_gets_distinct_legends_that_fit() {
    // Issue 24: a default and a 25 % OP run of one simulated drive, named by its long
    // spec: their legends were the same 100 characters, cut by the chart's edge.
    let drive = "drivelab-sim generic (sim:capacity=64G,cell=qlc,dies=2,channels=2,iface=pcie1x1,slc=dynamic,slc_min=1G,fold_every=1.5,slc_bypass=128K,thermal=off)";
    let names = [format!("{drive} · default"), format!("{drive} · 25 % OP")];
    let mut chart = Chart::new("c", "C", Axis::linear("t", "s"), Axis::linear("y", "IOPS"));
    for n in &names {
        chart = chart.with_series(Series::scatter(n, n, vec![(0.0, 1.0), (1.0, 2.0)]));
    }
    let svg = render_svg(&chart, &GroupPalette::for_charts([&chart])).unwrap();
    let doc = parse(&svg);
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.starts_with("dl-leg "))
        })
        .map(|g| g.descendants().find(|n| n.has_tag_name("text")).unwrap())
        .map(|t| t.text().unwrap().to_string())
        .collect();
    assert_eq!(texts.len(), 2);
    assert_ne!(texts[0], texts[1]);
    assert!(
        texts[0].starts_with("drivelab-sim generic (sim:") && texts[0].ends_with("… · default"),
        "{texts:?}"
    );
    assert!(texts[1].ends_with("… · 25 % OP"), "{texts:?}");
    // Each fits the chart's width (DejaVu Sans at 11 px, 0.6 em a glyph).
    let width = svg_width(&doc);
    for t in &texts {
        assert!(
            35.0 + t.chars().count() as f64 * 6.6 <= width,
            "{t} in {width}"
        );
    }
    // The group (toggle and tooltip) keeps the whole name.
    let groups: Vec<&str> = doc
        .descendants()
        .filter_map(|n| n.attribute("data-group"))
        .collect();
    assert!(groups.contains(&names[1].as_str()));
    // Short names are left alone.
    let mut short = vec!["disk A".to_string(), "disk B".to_string()];
    drivelab_report::fit_legend_texts(&mut short, 60);
    assert_eq!(short, ["disk A", "disk B"]);
}

/// Lines a long label apart (a replay's parts, each named "replay of … as fast as
/// possible at the trace's concurrency, part N of 3"): every label is drawn whole, in the
/// plot, and none over another (the review read "as fast as possi" where the next label
/// covered the rest).
#[test]
fn vertical_line_labels_never_cover_each_other_or_leave_the_plot() {
    let name = |k: u32| {
        format!(
            "replay of t2.dltrace as fast as possible at the trace's concurrency, part {k} of 3"
        )
    };
    let mut c = Chart::new("t", "T", Axis::linear("x", "s"), Axis::linear("y", "W"))
        .with_series(Series::line("d", "d", vec![(0.0, 1.0), (0.09, 2.0)]));
    for (k, x) in [(0, 0.0), (1, 0.013), (2, 0.045), (3, 0.076)] {
        c = c.with_mark(Mark::VLine {
            x,
            label: Some(if k == 0 {
                "write the span once before reading it".into()
            } else {
                name(k)
            }),
            group: None,
        });
    }
    let svg = render_svg(&c, &GroupPalette::for_charts([&c])).unwrap();
    let doc = parse(&svg);
    let width = svg_width(&doc);
    let mut spans: Vec<(f64, f64, f64, String)> = Vec::new();
    for t in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let text = t.text().unwrap_or_default().to_string();
        if !(text.starts_with("replay of") || text.starts_with("write the span")) {
            continue;
        }
        let x: f64 = t.attribute("x").unwrap().parse().unwrap();
        let y: f64 = t.attribute("y").unwrap().parse().unwrap();
        let w = text.chars().count() as f64 * 11.0 * 0.6;
        let left = if t.attribute("text-anchor") == Some("end") {
            x - w
        } else {
            x
        };
        assert!(
            left >= 0.0 && left + w <= width,
            "{text} leaves the chart: {left} + {w}"
        );
        spans.push((left, left + w, y, text));
    }
    let mut texts: Vec<&str> = spans.iter().map(|s| s.3.as_str()).collect();
    texts.sort();
    assert_eq!(
        texts,
        [
            "replay of t2.dltrace as fast as possible at the trace's concurrency, part 1 of 3",
            "replay of t2.dltrace as fast as possible at the trace's concurrency, part 2 of 3",
            "replay of t2.dltrace as fast as possible at the trace's concurrency, part 3 of 3",
            "write the span once before reading it"
        ]
    );
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            let apart = a.2 != b.2 || a.1 <= b.0 || b.1 <= a.0;
            assert!(apart, "{} covers {}", a.3, b.3);
        }
    }
}
