//! fio's block-size options as drivelab's workload states them: `bs` (`blocksize`),
//! `bsrange` (`blocksize_range`) and `bssplit`, each given per direction as fio reads
//! them (`read,write,trim`: one value for all; `4k,64k` reads 4K, writes and trims 64K;
//! an empty part fio's default), `bssplit` over `bsrange` over `bs` for a direction
//! (fio's `options.c`: `str_split_parse`, `bssplit_ddir`). Sizes one share list
//! cannot state — reads and writes of different sizes, or a range whose shares fio does
//! not report — go to [`Workload::bs_mix`](drivelab_engine::spec::Workload::bs_mix)
//! with a note, never a guessed size.

use drivelab_engine::spec::{BsDir, BsMix, BsShare};

use super::json::{Dir, FioOptions, Job};

/// The sizes of a job: `bs` when one share list states the directions it does, else
/// `bs` empty and `mix` per direction; `notes` says what the result cannot tell.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizes {
    pub bs: Vec<BsShare>,
    pub mix: Option<BsMix>,
    pub notes: Vec<String>,
}

/// fio's default block size.
const DEFAULT_BS: u32 = 4096;

/// A per-direction option's read and write parts (fio's `str_split_parse` and its
/// `bs=a,b` lists): `a` is every direction's; `a,b` reads `a`, writes `b`; an empty
/// part is fio's default (None).
fn per_dir(s: &str) -> [Option<&str>; 2] {
    let mut it = s.split(',');
    let r = it.next().map(str::trim).filter(|p| !p.is_empty());
    match it.next() {
        None => [r, r],
        Some(w) => [r, Some(w.trim()).filter(|p| !p.is_empty())],
    }
}

/// One direction's `bssplit` as fio reads it (`bssplit_ddir`): `size/percent` entries
/// joined by ':' up to the first empty one; an entry without a percent, or of 0 %,
/// shares what the others leave (`(100 - given) / missing`, fio's integer division);
/// a percent over 100 is 100. More than 100 given with several missing is refused, as
/// fio refuses it.
fn bssplit_dir(s: &str, whole: &str) -> Result<Vec<BsShare>, String> {
    let form = || {
        format!("bssplit={whole}: fio's form is size/percent entries joined by ':', one list per direction joined by ',' (like 4k/50:64k/50,8k/100)")
    };
    let mut entries: Vec<(u32, Option<u32>)> = Vec::new();
    for e in s.split(':') {
        let e = e.trim();
        if e.is_empty() {
            break;
        }
        let (b, pct) = match e.split_once('/') {
            Some((b, p)) => {
                let p: u64 = p.trim().parse().map_err(|_| form())?;
                (b, (p > 0).then_some(p.min(100) as u32))
            }
            None => (e, None),
        };
        entries.push((block_size(b, "bssplit")?, pct));
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    let missing = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 && missing > 1 {
        return Err(format!(
            "bssplit={whole}: its percentages add up to {given} with {missing} sizes left to share the rest (fio refuses it)"
        ));
    }
    let rest = if entries.len() == 1 {
        100
    } else {
        100u32.saturating_sub(given) / missing.max(1)
    };
    Ok(entries
        .into_iter()
        .map(|(bytes, p)| BsShare {
            bytes,
            percent: p.unwrap_or(rest),
        })
        .collect())
}

/// One direction's `bsrange` (`4k-64k`; fio swaps a reversed range).
fn range_dir(s: &str) -> Result<BsDir, String> {
    let (a, b) = s.split_once('-').ok_or_else(|| {
        format!("bsrange={s}: fio's form is min-max, one range per direction joined by ',' (like 4k-64k)")
    })?;
    let (a, b) = (
        block_size(a.trim(), "bsrange")?,
        block_size(b.trim(), "bsrange")?,
    );
    let (min_bytes, max_bytes) = (a.min(b), a.max(b));
    Ok(if min_bytes == max_bytes {
        fixed(min_bytes)
    } else {
        BsDir::Range {
            min_bytes,
            max_bytes,
        }
    })
}

fn fixed(bytes: u32) -> BsDir {
    BsDir::Shares(vec![BsShare {
        bytes,
        percent: 100,
    }])
}

/// The sizes of direction `d` (0 read, 1 write): its `bssplit`, else its `bsrange`,
/// else its `bs`, else fio's 4K.
fn dir_sizes(o: &dyn Fn(&str) -> Option<String>, d: usize) -> Result<BsDir, String> {
    if let Some(s) = o("bssplit") {
        if let Some(part) = per_dir(&s)[d] {
            let v = bssplit_dir(part, &s)?;
            if !v.is_empty() {
                return Ok(BsDir::Shares(v));
            }
        }
    }
    if let Some(s) = o("bsrange").or_else(|| o("blocksize_range")) {
        if let Some(part) = per_dir(&s)[d] {
            return range_dir(part);
        }
    }
    if let Some(s) = o("bs").or_else(|| o("blocksize")) {
        if let Some(part) = per_dir(&s)[d] {
            return Ok(fixed(block_size(part, "bs")?));
        }
    }
    Ok(fixed(DEFAULT_BS))
}

/// The job's sizes for the directions it does (`read_percent` of its I/Os are reads).
pub fn of(job: &Job, global: &FioOptions, read_percent: u32) -> Result<Sizes, String> {
    let o = |k: &str| job.option(global, k).map(str::to_string);
    let does = [read_percent > 0, read_percent < 100];
    let dirs = [dir_sizes(&o, 0)?, dir_sizes(&o, 1)?];
    let done: Vec<&BsDir> = dirs.iter().zip(does).filter(|d| d.1).map(|d| d.0).collect();
    if let [BsDir::Shares(v), rest @ ..] = done.as_slice() {
        if rest.iter().all(|d| *d == done[0]) {
            return Ok(Sizes {
                bs: v.clone(),
                mix: None,
                notes: Vec::new(),
            });
        }
    }
    let [r, w] = dirs;
    let mix = BsMix {
        read: does[0].then_some(r),
        write: does[1].then_some(w),
    };
    Ok(Sizes {
        bs: Vec::new(),
        notes: notes(job, &mix),
        mix: Some(mix),
    })
}

/// What the result cannot tell of `mix`'s sizes.
fn notes(job: &Job, mix: &BsMix) -> Vec<String> {
    let mut out = Vec::new();
    for (name, d, dir) in [
        ("read", &mix.read, &job.read),
        ("write", &mix.write, &job.write),
    ] {
        if let Some(BsDir::Range {
            min_bytes,
            max_bytes,
        }) = d
        {
            out.push(format!(
                "job '{}': fio chose each {name}'s size from {} to {} (bsrange): the shares of the sizes are not in its result{}; the config states the range (bs_mix), and the result is never pooled with fixed-size ones.",
                job.jobname,
                drivelab_engine::spec::block_size_label(*min_bytes),
                drivelab_engine::spec::block_size_label(*max_bytes),
                mean_size(dir).map_or(String::new(), |m| format!(
                    " (its {name}s moved {m:.1} KiB each on average)"
                )),
            ));
        }
    }
    if let (Some(r), Some(w)) = (&mix.read, &mix.write) {
        if r != w {
            out.push(format!(
                "job '{}': its reads ran {} and its writes {} (fio's per-direction sizes): the config states each (bs_mix).",
                job.jobname,
                r.label(),
                w.label()
            ));
        }
    }
    out
}

/// KiB per I/O of a direction, from fio's totals.
fn mean_size(d: &Dir) -> Option<f64> {
    (d.total_ios > 0).then(|| d.io_bytes as f64 / d.total_ios as f64 / 1024.0)
}

/// A size as fio reads it with its default `kb_base=1024`.
pub fn fio_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let u = unit.to_ascii_lowercase();
    let mut chars = u.chars();
    let (p, rest) = match chars.next() {
        None => return Some(n),
        Some(c) => (c, chars.as_str()),
    };
    let exp = match p {
        'b' if rest.is_empty() => return Some(n),
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        'e' => 6,
        _ => return None,
    };
    // fio's compatibility rule: with kb_base=1024, "KiB" is the decimal one.
    let base: u64 = if rest == "ib" { 1000 } else { 1024 };
    n.checked_mul(base.checked_pow(exp)?)
}

/// A block size option (`bs`, one entry of `bssplit`) in drivelab's range.
pub(super) fn block_size(s: &str, k: &str) -> Result<u32, String> {
    fio_size(s)
        .filter(|&b| b >= 1 && b <= u64::from(drivelab_engine::spec::MAX_BS))
        .map(|b| b as u32)
        .ok_or_else(|| {
            format!("{k}={s}: not a block size from 1 byte to 1G (fio refuses 0; drivelab takes up to 1G)")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(kib: u32, percent: u32) -> BsShare {
        BsShare {
            bytes: kib * 1024,
            percent,
        }
    }

    /// fio's grammar (options.c): per direction by ',', entries without a percent (or
    /// of 0 %) share the rest, one entry alone is all I/Os.
    #[test]
    fn bssplit_reads_as_fio_reads_it() {
        assert_eq!(
            per_dir("4k/50:64k/50,8k/100"),
            [Some("4k/50:64k/50"), Some("8k/100")]
        );
        assert_eq!(per_dir("4k"), [Some("4k"), Some("4k")]);
        assert_eq!(per_dir(",8k"), [None, Some("8k")]);
        assert_eq!(per_dir("8k,"), [Some("8k"), None]);
        let s = "x";
        assert_eq!(
            bssplit_dir("4k/50:64k/50", s).unwrap(),
            [share(4, 50), share(64, 50)]
        );
        assert_eq!(
            bssplit_dir("4k/40:8k:16k", s).unwrap(),
            [share(4, 40), share(8, 30), share(16, 30)]
        );
        assert_eq!(
            bssplit_dir("4k/0:8k/60", s).unwrap(),
            [share(4, 40), share(8, 60)]
        );
        assert_eq!(bssplit_dir("8k", s).unwrap(), [share(8, 100)]);
        assert!(bssplit_dir("4k/90:8k:16k/20:32k", s)
            .unwrap_err()
            .contains("add up to 110"));
        assert!(bssplit_dir("4k/ab", s)
            .unwrap_err()
            .contains("size/percent"));
    }
}
