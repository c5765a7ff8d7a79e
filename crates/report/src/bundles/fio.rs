//! `fio`: results imported from fio (`drivelab import fio`): each job's headline
//! numbers as fio measured them.

use super::Entry;
use crate::html::{Column, Row, Section, Table};

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut table = Table {
        caption: "fio results imported: each job's numbers as fio measured them".into(),
        columns: vec![
            Column::text("Drive"),
            Column::text("Measure"),
            Column::text("Value"),
            Column::text("Unit"),
        ],
        rows: Vec::new(),
    };
    for e in entries {
        for m in &e.summary.metrics {
            table.rows.push(Row {
                group: Some(e.group.to_string()),
                cells: vec![
                    e.label.to_string(),
                    m.name.clone(),
                    crate::ticks::fmt_number(m.value, 1),
                    m.unit.clone(),
                ],
            });
        }
    }
    Section::new("fio results")
        .text("Results of fio runs brought in with `drivelab import fio`; see each bundle's notes for what fio measured (latency from submission or completion).")
        .table(table)
}
