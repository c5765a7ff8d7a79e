//! The config hash of a suite run: sha256 of the canonical JSON of the suite name, its
//! resolved knobs (less those that only choose an extra output, [`OUTPUT_ONLY_KNOBS`], and
//! those drivelab picks afresh per run, such as powerloss's seed: [`hashed_knobs`]) and every planned measurement's workload without its random seed and
//! without its byte spans. Two runs with equal hashes measured the same steps with the
//! same settings, so their numbers compare. The spans (`offset_bytes`, `size_bytes`,
//! `io_size_bytes`) follow from the knobs and the target's capacity: a whole-drive test
//! of a 1 TB and a 2 TB drive is the same test, and the knobs still tell a 10 GB span
//! from a whole drive. Preparation steps (fills, preconditioning) are not the test and
//! are left out: a block device gets a fill step before its reads that a test file (which
//! drivelab fills anyway) does not, and the same `run quick` on both is still the same
//! test; the knobs that shape the preparation (passes, over-provisioning) are in the
//! hash as knobs. `--resume` checks the whole plan step by step on top of the hash
//! (`runner::check_resume`).

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::plan::{PlannedStep, StepKind};

/// Canonical JSON: object keys sorted, no whitespace, numbers as serde_json writes them.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                write_canonical(&m[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Lowercase hex sha256 of `text`.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Workload fields the hash leaves out (see the module doc).
pub const SPAN_AND_SEED: [&str; 4] = ["randseed", "offset_bytes", "size_bytes", "io_size_bytes"];

/// Knobs that only choose what is written beside the results (not what is measured):
/// left out of the hash, so `--issue-log` does not make two replays unlike.
pub const OUTPUT_ONLY_KNOBS: [&str; 1] = ["issue_log"];

/// The knobs that define the test: without [`OUTPUT_ONLY_KNOBS`].
pub fn measured_knobs(knobs: &Value) -> Value {
    let mut k = knobs.clone();
    if let Value::Object(m) = &mut k {
        for o in OUTPUT_ONLY_KNOBS {
            m.remove(o);
        }
    }
    k
}

/// The knobs of a suite's test: its [`measured_knobs`] without those drivelab chooses
/// per run ([`SuiteKind::per_run_knobs`](crate::suite::SuiteKind::per_run_knobs)).
/// A suite name drivelab does not know keeps every measured knob.
pub fn hashed_knobs(suite: &str, knobs: &Value) -> Value {
    let mut k = measured_knobs(knobs);
    let per_run = suite
        .parse::<crate::suite::SuiteKind>()
        .map_or(&[][..], |kind| kind.per_run_knobs());
    if let Value::Object(m) = &mut k {
        for o in per_run {
            m.remove(*o);
        }
    }
    k
}

/// The knobs that define a bundle's test, for saying how two tests differ: an import's
/// knobs only name where its results came from (its hash is over its steps alone), so it
/// has none; every suite's are its [`hashed_knobs`].
pub fn test_knobs(kind: crate::suite::SuiteKind, knobs: &Value) -> Value {
    match kind {
        crate::suite::SuiteKind::Fio => Value::Object(Default::default()),
        _ => hashed_knobs(kind.name(), knobs),
    }
}

/// The config hash of a plan (see the module doc).
pub fn config_hash(suite: &str, knobs: &Value, plan: &[PlannedStep]) -> String {
    let measured = plan.iter().filter(|s| s.kind == StepKind::Measure);
    hash_of(suite, knobs, measured)
}

/// The config hash as bundles made before preparation steps were left out have it (every
/// planned step), so that such a bundle can still be resumed.
pub fn config_hash_with_preparation(suite: &str, knobs: &Value, plan: &[PlannedStep]) -> String {
    hash_of(suite, knobs, plan.iter())
}

fn hash_of<'a>(suite: &str, knobs: &Value, steps: impl Iterator<Item = &'a PlannedStep>) -> String {
    let steps: Vec<Value> = steps
        .map(|s| {
            let mut w = serde_json::to_value(&s.workload).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut w {
                for k in SPAN_AND_SEED {
                    m.remove(k);
                }
            }
            serde_json::json!({ "id": s.id, "workload": w })
        })
        .collect();
    let doc =
        serde_json::json!({ "suite": suite, "knobs": hashed_knobs(suite, knobs), "steps": steps });
    sha256_hex(&canonical_json(&doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_sorts_keys_at_every_level() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"d":[1,2],"c":"x"}}"#).unwrap();
        assert_eq!(canonical_json(&a), r#"{"a":{"c":"x","d":[1,2]},"b":1}"#);
    }

    #[test]
    fn a_per_run_seed_is_not_a_setting() {
        let k = |seed: u64| serde_json::json!({"seed": seed, "round_blocks": 64});
        // Powerloss picks its seed per run: two runs with the same settings are one test.
        assert_eq!(
            config_hash("powerloss", &k(1), &[]),
            config_hash("powerloss", &k(2), &[])
        );
        let kind = crate::suite::SuiteKind::Powerloss;
        assert_eq!(test_knobs(kind, &k(1)), test_knobs(kind, &k(2)));
        // Elsewhere a seed the user gave is a setting.
        assert_ne!(
            config_hash("quick", &k(1), &[]),
            config_hash("quick", &k(2), &[])
        );
    }

    #[test]
    fn sha256_known_answer() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
