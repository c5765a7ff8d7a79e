//! How one option's value is read: the value parsers every command's options share
//! (clap's `value_parser`), each refusing a bad value in one line that names the
//! accepted form.

use drivelab_engine::size;
use drivelab_engine::spec::BsShare;

pub fn pct(s: &str) -> Result<u32, String> {
    s.trim_end_matches('%')
        .parse::<u32>()
        .ok()
        .filter(|&v| v <= 100)
        .ok_or_else(|| format!("'{s}' is not a percentage from 0 to 100"))
}

pub fn positive(s: &str) -> Result<u32, String> {
    whole(s, "a whole number of at least 1")
        .and_then(|v| u32::try_from(v).map_err(|_| too_large(s, u32::MAX.into())))
        .and_then(|v| {
            (v > 0)
                .then_some(v)
                .ok_or_else(|| format!("'{s}' is not a whole number of at least 1"))
        })
}

/// `s` as a whole number (u64); a string of digits beyond 2^64 − 1 is "too large", any
/// other text "not" `form`.
fn whole(s: &str, form: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            too_large(s, u64::MAX)
        } else {
            format!("'{s}' is not {form}")
        }
    })
}

fn too_large(s: &str, max: u64) -> String {
    format!("'{s}' is too large: at most {max}")
}

/// `--randseed`: a whole number from 0 to 2^64 − 1.
pub fn seed(s: &str) -> Result<u64, String> {
    whole(s, "a seed: a whole number from 0 to 18446744073709551615")
}

pub fn bs(s: &str) -> Result<u32, String> {
    let v = size::parse_size(s)?;
    if v == 0 || v > drivelab_engine::spec::MAX_BS as u64 {
        return Err(format!("'{s}' is not a block size from 1 byte to 1G"));
    }
    Ok(v as u32)
}

/// A parsed `--bssplit` (a newtype so clap takes it as one value).
#[derive(Debug, Clone)]
pub struct BsSplit(pub Vec<BsShare>);

pub fn bssplit(s: &str) -> Result<BsSplit, String> {
    drivelab_engine::spec::parse_bssplit(s).map(BsSplit)
}

pub fn duration(s: &str) -> Result<u64, String> {
    size::parse_duration_ns(s)
}

/// An on/off option's value: 1 or 0, as fio writes them (the flag alone is 1). One
/// form only: `yes`, `true`, `-1` are refused alike.
pub fn switch(s: &str) -> Result<bool, String> {
    match s {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(format!("'{s}' is not 0 or 1 (the option alone is 1)")),
    }
}

pub(crate) fn nonblank(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("expected a command".into())
    } else {
        Ok(s.to_string())
    }
}

pub(crate) fn sensor_choice(s: &str) -> Result<String, String> {
    drivelab_engine::sensor::parse_choice(s).map(|_| s.to_string())
}
