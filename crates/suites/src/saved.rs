//! What a saved bundle's kind stands for: the suite that made it, rebuilt from its knobs
//! (for `--resume`, and to analyse an unfinished bundle again), and the type its
//! analysis must have. The one place that maps every [`SuiteKind`] to its suite's types,
//! above the bundle and the suites, which therefore do not name each other.

use crate::bundle::Summary;
use crate::kind::SuiteKind;
use crate::suite::Suite;

/// Rebuild a suite from a bundle's kind and knobs (for `--resume`, and to analyse an
/// unfinished bundle again); an import is no suite to rebuild.
pub fn from_saved(kind: SuiteKind, knobs: &serde_json::Value) -> Result<Box<dyn Suite>, String> {
    fn de<T: serde::de::DeserializeOwned>(k: &serde_json::Value) -> Result<T, String> {
        serde_json::from_value(k.clone()).map_err(|e| format!("the bundle's knobs: {e}"))
    }
    Ok(match kind {
        SuiteKind::Quick => Box::new(de::<crate::quick::Quick>(knobs)?),
        SuiteKind::Peak => Box::new(de::<crate::peak::Peak>(knobs)?),
        SuiteKind::Consistency => Box::new(de::<crate::consistency::Consistency>(knobs)?),
        SuiteKind::Seqfill => Box::new(de::<crate::seqfill::SeqFill>(knobs)?),
        SuiteKind::Iometer => Box::new(de::<crate::iometer::IoMeter>(knobs)?),
        SuiteKind::Mixed => Box::new(de::<crate::mixed::Mixed>(knobs)?),
        SuiteKind::Replay => Box::new(de::<crate::replay::Replay>(knobs)?),
        SuiteKind::Fio => {
            return Err("an imported fio result is not a suite that can be run again".into())
        }
        SuiteKind::Powerloss => {
            return Err("a powerloss run is not resumed or analysed again: check it with drivelab run powerloss --check JOURNAL TARGET".into())
        }
    })
}

/// Checks that a summary's analysis has the shape of `kind`'s typed analysis, so that a
/// bundle whose `suite` was changed (a powerloss analysis labelled "peak") is
/// refused instead of stored and shown as an empty section. The message names the
/// suite and why the analysis is not of its shape. No analysis (null: a powerloss
/// bundle before its check) fits every suite.
pub fn check_analysis(summary: &Summary, kind: SuiteKind) -> Result<(), String> {
    if summary.analysis.is_null() {
        return Ok(());
    }
    fn fits<A: serde::de::DeserializeOwned>(v: &serde_json::Value) -> Result<(), String> {
        A::deserialize(v).map(|_| ()).map_err(|e| e.to_string())
    }
    let a = &summary.analysis;
    match kind {
        SuiteKind::Quick => fits::<crate::quick::Analysis>(a),
        SuiteKind::Peak => fits::<crate::peak::Analysis>(a),
        SuiteKind::Consistency => fits::<crate::consistency::ConsistencyAnalysis>(a),
        SuiteKind::Seqfill => fits::<crate::seqfill::SeqFillAnalysis>(a),
        SuiteKind::Iometer => fits::<crate::iometer::Analysis>(a),
        SuiteKind::Mixed => fits::<crate::mixed::Analysis>(a),
        SuiteKind::Replay => fits::<crate::replay::ReplayAnalysis>(a),
        SuiteKind::Fio => fits::<crate::fio::import::FioAnalysis>(a),
        SuiteKind::Powerloss => fits::<crate::powerloss::Analysis>(a),
    }
    .map_err(|e| format!("summary.analysis is not a {kind} suite's analysis ({e}): the bundle's suite and its analysis disagree"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::SUITES;
    use crate::suite::Knobs;

    #[test]
    fn every_runnable_suite_is_rebuilt_from_its_own_knobs_and_names_its_kind() {
        for k in SUITES {
            let knobs = match k {
                SuiteKind::Replay => continue,
                _ => default_knobs(k),
            };
            let s = from_saved(k, &knobs).unwrap();
            assert_eq!(s.kind(), k);
            assert_eq!(s.name(), k.name());
        }
        assert!(from_saved(SuiteKind::Fio, &serde_json::json!({})).is_err());
        assert!(from_saved(SuiteKind::Powerloss, &serde_json::json!({})).is_err());
    }

    fn default_knobs(k: SuiteKind) -> serde_json::Value {
        match k {
            SuiteKind::Quick => crate::quick::Quick::new(true).knobs(),
            SuiteKind::Peak => crate::peak::Peak::new(true).knobs(),
            SuiteKind::Consistency => crate::consistency::Consistency::new(true).knobs(),
            SuiteKind::Seqfill => crate::seqfill::SeqFill::new(true).knobs(),
            SuiteKind::Iometer => crate::iometer::IoMeter::new(true).knobs(),
            SuiteKind::Mixed => crate::mixed::Mixed::new(true).knobs(),
            SuiteKind::Replay | SuiteKind::Fio | SuiteKind::Powerloss => serde_json::Value::Null,
        }
    }
}
