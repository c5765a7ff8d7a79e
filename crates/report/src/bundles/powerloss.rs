//! `powerloss`: whether each drive honoured every flush across its power cuts, said in
//! one sentence per drive, with the blocks of each class in a table.

use drivelab_suites::powerloss::{cut_sentence, Analysis, Outcome, Verdict};

use super::{cell, Entry};
use crate::html::{Column, Row, Section, Table};

/// The sentences for one drive's checks: the verdict, then whether a power cut is shown.
fn verdict(label: &str, a: &Analysis) -> String {
    format!("{} {}", verdict_only(label, a), cut_sentence(a))
}

fn verdict_only(label: &str, a: &Analysis) -> String {
    let t = &a.totals;
    let cuts = match a.cycles_checked {
        1 => "one power cut".to_string(),
        n => format!("{n} power cuts"),
    };
    match (a.verdict, t.lost_after_flush_blocks, t.misdirected_blocks) {
        (Verdict::Inconclusive, _, _) => format!(
            "{label}: inconclusive: {}.",
            a.cycles
                .iter()
                .find_map(|c| c.inconclusive.as_deref())
                .unwrap_or("no cycle was checked")
        ),
        (Verdict::Honoured, _, _) => format!(
            "{label} honoured every flush: after {cuts}, every block of the {} completed flushes held what was written.",
            a.flushes_completed
        ),
        (Verdict::NotHonoured, lost, misdirected) => format!(
            "{label} did NOT honour its flushes: after {cuts}, {lost} blocks were lost after a completed flush and {misdirected} held another block's data."
        ),
    }
}

pub(crate) fn section(entries: &[Entry]) -> Section {
    let mut s = Section::new("Flush honesty (power cut)").text(
        "Numbered blocks written in rounds, each ended by a flush (or made of FUA writes) and journalled on another drive once the flush completed; after the power was cut, every journalled block was read back. A block lost after a completed flush is the defect; a block the round in flight at the cut never reached is allowed. Whether the power was cut at all is shown by the drive's power-cycle count (it rose) or, where no count can be read, the host's boot id (it changed); an unchanged count means the drive kept its power and the check is inconclusive; a check that can tell neither says the cut is unconfirmed.",
    );
    let mut table = Table {
        caption: "Blocks after the power cuts".into(),
        columns: vec![
            Column::text("Drive"),
            Column::number("Power cuts", "#"),
            Column::text("Verdict"),
            Column::text("Power cut evidence"),
            Column::number("Flushes completed", "#"),
            Column::number("Blocks checked", "#"),
            Column::number("Lost after flush", "blocks"),
            Column::number("Torn", "blocks"),
            Column::number("Misdirected", "blocks"),
            Column::number("Unacknowledged lost", "blocks"),
        ],
        rows: Vec::new(),
    };
    for e in entries {
        let Some(a) = e.analysis::<Analysis>() else {
            // The write phase's bundle: its verdict comes with the check.
            s = s.text(format!(
                "{}: {} yet: run drivelab run powerloss --check JOURNAL TARGET.",
                e.label,
                Outcome::NotChecked.words()
            ));
            continue;
        };
        s = s.text(verdict(e.label, &a));
        let t = &a.totals;
        let n = |v: u64| cell(Some(v as f64), 0);
        table.rows.push(Row {
            group: Some(e.group.to_string()),
            cells: vec![
                e.label.to_string(),
                n(a.cycles_checked),
                Outcome::Checked(a.verdict).words().to_string(),
                a.cut_evidence.words().to_string(),
                n(a.flushes_completed),
                n(t.checked_blocks),
                n(t.lost_after_flush_blocks),
                n(t.torn_blocks),
                n(t.misdirected_blocks),
                n(t.unacknowledged_lost_blocks),
            ],
        });
    }
    s.table(table)
}
