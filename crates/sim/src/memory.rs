//! Whether a simulated drive's tables fit in this machine's memory: a typo such as
//! `capacity=8T` must be refused with the estimate, not exhaust memory (or meet a
//! memory limit) minutes into a run.

/// Bytes of the page tables of a drive of `user_pages` logical and `physical_pages`
/// physical 4 KiB pages: a forward and a reverse map of 4 bytes per page, and about
/// 2 bits per physical page of SLC and recent-write bookkeeping.
pub fn tables_bytes(user_pages: u64, physical_pages: u64) -> u64 {
    4 * (user_pages + physical_pages) + physical_pages / 4
}

/// Memory this process may still use: the least of the kernel's estimate of available
/// memory, the cgroup's limit less its usage, and the address-space limit (`ulimit -v`)
/// less the address space already mapped. None where none is known.
pub fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| kib * 1024)
    });
    [meminfo, cgroup_room(), address_space_room()]
        .into_iter()
        .flatten()
        .min()
}

/// The soft address-space limit (`ulimit -v`, RLIMIT_AS) less this process's mapped
/// address space, if it has a limit: an allocation beyond it fails however much memory
/// the machine has.
fn address_space_room() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let soft = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max address space"))?
        .split_whitespace()
        .next()?
        .parse::<u64>()
        .ok()?; // "unlimited" is no limit
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let mapped = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024);
    Some(soft.saturating_sub(mapped))
}

/// The cgroup v2 memory limit of this process less its usage, if it has a limit.
fn cgroup_room() -> Option<u64> {
    let rel = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = rel
        .lines()
        .find_map(|l| l.strip_prefix("0::"))?
        .trim()
        .to_string();
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?;
    let used: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(used))
}

/// Most bytes a drive's tables may take, whatever the machine: a 2T drive at up to
/// about 25 % over-provisioning (a typo such as `op=400%` on it would take 11 GB).
pub const MAX_TABLES_BYTES: u64 = 5_000_000_000;

/// Refuse tables of `need` bytes over [`MAX_TABLES_BYTES`], naming the key that made
/// them so large (`op` beyond 25 % on a large drive, else `capacity`).
pub fn within_limit(need: u64, cfg: &crate::config::SimConfig) -> Result<(), String> {
    if need <= MAX_TABLES_BYTES {
        return Ok(());
    }
    let key = if cfg.op_percent > 25.0 {
        "op"
    } else {
        "capacity"
    };
    Err(format!(
        "sim: bad {key}: capacity={} with op={} needs about {:.1} GB of tables, over the model's limit of {:.1} GB; give a smaller {key}",
        crate::units::format_size(cfg.capacity_bytes),
        crate::units::format_percent(cfg.op_percent),
        need as f64 / 1e9,
        MAX_TABLES_BYTES as f64 / 1e9
    ))
}

/// Refuse tables of `need` bytes that do not fit in the memory available.
pub fn check(need: u64) -> Result<(), String> {
    match available_bytes() {
        Some(have) if need > have => Err(format!(
            "sim: bad capacity: a drive this large needs about {:.1} GB of memory for its tables, and {:.1} GB are available; give a smaller capacity",
            need as f64 / 1e9,
            have as f64 / 1e9
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_tib_needs_about_seventeen_gigabytes() {
        let user = (8u64 << 40) / 4096;
        let gb = tables_bytes(user, user * 107 / 100) as f64 / 1e9;
        assert!((17.0..19.0).contains(&gb), "{gb}");
    }

    #[test]
    fn what_does_not_fit_is_refused_with_the_estimate() {
        let have = available_bytes().expect("this machine says what memory it has");
        assert!(check(have / 2).is_ok());
        let e = check(have * 2).unwrap_err();
        assert!(e.contains("GB of memory") && e.contains("available"), "{e}");
    }
}
