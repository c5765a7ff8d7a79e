//! `--verify` (seqfill, consistency): what the read-back of each verifying step found,
//! from the step's own record of the check (`run.verify`): the blocks checked, the
//! blocks not as written by class, or "all as written". Sizes in decimal units, as in
//! the rest of the report: the step is described by its typed workload
//! ([`super::workload_phrase`]), not by its name (which says "MiB" as the terminal does).

use drivelab_engine::verify::VerifyResult;

use super::{cell, Entry};
use crate::html::{Column, Row, Table};

/// The table of the bundles' verified steps; None when no step verified.
pub(crate) fn table(entries: &[Entry]) -> Option<Table> {
    let mut rows = Vec::new();
    for e in entries {
        for step in &e.doc.steps {
            let Some(v) = step.run.as_ref().and_then(|r| r.verify.as_ref()) else {
                continue;
            };
            let bs = step.config.bs.first().map_or(0, |b| u64::from(b.bytes));
            rows.push(row(e, &super::workload_phrase(&step.config), v, bs));
        }
    }
    (!rows.is_empty()).then(|| Table {
        caption: "Data verification (--verify): every block written, read back and compared".into(),
        columns: vec![
            Column::text("Drive"),
            Column::text("Step"),
            Column::number("Blocks checked", "#"),
            Column::text("Data checked"),
            Column::text("Result"),
            Column::number("Zeros", "blocks"),
            Column::number("Older", "blocks"),
            Column::number("Misdirected", "blocks"),
            Column::number("Torn", "blocks"),
            Column::number("Corrupt", "blocks"),
            Column::number("Foreign", "blocks"),
        ],
        rows,
    })
}

fn row(e: &Entry, step: &str, v: &VerifyResult, bs: u64) -> Row {
    let checked = v.blocks_checked;
    let c = &v.classes;
    // A pass that did not run has no counts: "–", not 0.
    let n = |x: u64| cell(checked.map(|_| x as f64), 0);
    Row {
        group: Some(e.group.to_string()),
        cells: vec![
            e.label.to_string(),
            step.to_string(),
            cell(checked.map(|b| b as f64), 0),
            checked.map_or("–".into(), |b| crate::fmt_bytes(b * bs)),
            result(v),
            n(c.zeros),
            n(c.older),
            n(c.misdirected),
            n(c.torn),
            n(c.corrupt),
            n(c.foreign),
        ],
    }
}

/// "all as written", "3 not as written (first at byte 1234567: corrupt)", or why the
/// check did not run.
fn result(v: &VerifyResult) -> String {
    if let Some(e) = &v.error {
        return format!("not checked: {e}");
    }
    match (v.blocks_bad, v.mismatches.first()) {
        (None, _) => "not checked (the step did not finish)".into(),
        (Some(0), _) => "all as written".into(),
        (Some(bad), Some(m)) => format!(
            "{bad} not as written (first at byte {}: {})",
            m.first_bad_byte_offset_bytes, m.class
        ),
        (Some(bad), None) => format!("{bad} not as written"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drivelab_engine::verify::{Class, Mismatch};

    #[test]
    fn the_result_says_what_the_check_found() {
        let mut v = VerifyResult::unchecked(vec![10]);
        assert_eq!(result(&v), "not checked (the step did not finish)");
        v.blocks_checked = Some(10);
        v.blocks_bad = Some(0);
        assert_eq!(result(&v), "all as written");
        v.blocks_bad = Some(2);
        v.classes.corrupt = 2;
        v.mismatches.push(Mismatch {
            offset_bytes: 4096,
            class: Class::Corrupt,
            expected_generation: 1,
            found_generation: Some(1),
            found_offset_bytes: None,
            first_bad_byte_offset_bytes: 4100,
        });
        assert_eq!(result(&v), "2 not as written (first at byte 4100: corrupt)");
        v.error = Some("reading back failed".into());
        assert_eq!(result(&v), "not checked: reading back failed");
    }
}
