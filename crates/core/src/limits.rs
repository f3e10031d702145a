//! Memory checked before it is used: how much host memory this process may still take, and a
//! check that refuses a request with the size it would need instead of letting the allocator
//! abort the process.
//!
//! The host's budget is the smallest of what the kernel says is available (`MemAvailable`), what
//! the process's cgroup still allows (`memory.max` less `memory.current`) and what its address
//! space and data limits leave (`RLIMIT_AS`, `RLIMIT_DATA`, less what it already maps), and the
//! cap the program set with [`cap_host`]. Where none of them can be read and no cap is set the
//! budget is unlimited and nothing is refused.

/// A request that would not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} would need {} of memory, but {} is available", human(*.needed), human(*.available))]
pub struct OutOfMemory {
    pub what: String,
    pub needed: u64,
    pub available: u64,
}

/// Bytes as GB / MB / KB for messages.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} KB", b / 1e3)
    }
}

/// Refuses `needed` bytes for `what` when the host cannot give them now.
///
/// The host's budget is read from the system at most every [`READING_LIFE`]; between readings
/// each request granted is taken off the last reading, as if it were already in use, so that the
/// estimate errs toward refusing. A request the estimate refuses is decided on a fresh reading.
/// (A scene of thousands of small objects made a check of each; reading four files a check,
/// they took 40 us each.)
pub fn check_host(needed: u64, what: impl FnOnce() -> String) -> Result<(), OutOfMemory> {
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    decide(&mut last, std::time::Instant::now(), needed, host_available).map_err(|available| {
        OutOfMemory {
            what: what(),
            needed,
            available,
        }
    })
}

/// [`check_host`]'s decision on `last` at `now`, with `read` for a fresh reading; the budget
/// it refused on as the error.
fn decide(
    last: &mut Option<Reading>,
    now: std::time::Instant,
    needed: u64,
    read: impl FnOnce() -> u64,
) -> Result<(), u64> {
    let estimate = match &*last {
        Some(r) if now.duration_since(r.at) < READING_LIFE => r.available.saturating_sub(r.granted),
        _ => 0, // (no recent reading: read below)
    };
    if needed > estimate {
        let available = read();
        *last = Some(Reading {
            at: now,
            available,
            granted: 0,
        });
        if needed > available {
            return Err(available);
        }
    }
    if let Some(r) = last.as_mut() {
        r.granted = r.granted.saturating_add(needed);
    }
    Ok(())
}

/// How long a reading of the host's budget stands in for the system's.
pub const READING_LIFE: std::time::Duration = std::time::Duration::from_millis(20);

/// The last reading of [`host_available`] and what was granted since.
struct Reading {
    at: std::time::Instant,
    available: u64,
    granted: u64,
}

static LAST: std::sync::Mutex<Option<Reading>> = std::sync::Mutex::new(None);

/// A cap on [`host_available`] set by the program (`u64::MAX`: none).
static CAP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Caps the host memory this process counts on at `bytes`, below what the machine has: for a
/// harness that must stay small whatever the machine (the fuzz targets, under libFuzzer's RSS
/// limit), or a user who shares the machine.
pub fn cap_host(bytes: u64) {
    CAP.store(bytes, std::sync::atomic::Ordering::Relaxed);
    // (the next check reads afresh)
    *LAST.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Host memory this process can still take, in bytes (`u64::MAX` when nothing can be read).
pub fn host_available() -> u64 {
    let mut avail = CAP.load(std::sync::atomic::Ordering::Relaxed);
    if let Some(kb) = meminfo_kb("MemAvailable:") {
        avail = avail.min(kb.saturating_mul(1024));
    }
    if let Some(c) = cgroup_left() {
        avail = avail.min(c);
    }
    if let Some(r) = rlimit_left() {
        avail = avail.min(r);
    }
    avail
}

fn meminfo_kb(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    field_kb(&text, key)
}

/// The value in kB of a `/proc` line `key  N kB`.
fn field_kb(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// cgroup v2: memory.max less memory.current, for the process's own group.
fn cgroup_left() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let max = std::fs::read_to_string(dir.join("memory.max")).ok()?;
    let max: u64 = max.trim().parse().ok()?; // "max": no limit
    let current: u64 = std::fs::read_to_string(dir.join("memory.current"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(max.saturating_sub(current))
}

/// What RLIMIT_AS and RLIMIT_DATA leave of the address space and data the process maps now.
#[cfg(unix)]
fn rlimit_left() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok();
    let mapped = |key: &str| -> u64 {
        status
            .as_deref()
            .and_then(|s| field_kb(s, key))
            .unwrap_or(0)
            .saturating_mul(1024)
    };
    let mut left: Option<u64> = None;
    for (res, key) in [(libc::RLIMIT_AS, "VmSize:"), (libc::RLIMIT_DATA, "VmData:")] {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct we pass and reads nothing else.
        if unsafe { libc::getrlimit(res, &mut r) } == 0 && r.rlim_cur != libc::RLIM_INFINITY {
            // rlim_t is u64 on Linux, not everywhere
            #[allow(clippy::unnecessary_cast)]
            let l = (r.rlim_cur as u64).saturating_sub(mapped(key));
            left = Some(left.map_or(l, |x: u64| x.min(l)));
        }
    }
    left
}

#[cfg(not(unix))]
fn rlimit_left() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_read_the_system_only_when_the_estimate_is_short() {
        let reads = std::cell::Cell::new(0);
        let read = |v: u64| {
            reads.set(reads.get() + 1);
            v
        };
        let mut last = None;
        let t = std::time::Instant::now();
        // the first check reads; eighty small ones within the reading's life do not
        assert_eq!(decide(&mut last, t, 10, || read(1000)), Ok(()));
        for _ in 0..80 {
            assert_eq!(decide(&mut last, t, 10, || read(1000)), Ok(()));
        }
        assert_eq!(reads.get(), 1);
        // 810 granted: a request of 200 exceeds the estimate (190) and reads afresh, where the
        // system says 1000: granted
        assert_eq!(decide(&mut last, t, 200, || read(1000)), Ok(()));
        assert_eq!(reads.get(), 2);
        // beyond what a fresh reading says: refused, with that reading
        assert_eq!(decide(&mut last, t, 2000, || read(1500)), Err(1500));
        // a reading past its life is renewed
        let later = t + READING_LIFE * 2;
        assert_eq!(decide(&mut last, later, 1, || read(1000)), Ok(()));
        assert_eq!(reads.get(), 4);
    }

    #[test]
    fn proc_fields_parse() {
        let t = "MemTotal:       24000000 kB\nMemAvailable:   12345 kB\n";
        assert_eq!(field_kb(t, "MemAvailable:"), Some(12345));
        assert_eq!(field_kb(t, "VmSize:"), None);
    }

    #[test]
    fn impossible_requests_are_refused_with_both_sizes() {
        let e = check_host(u64::MAX, || "everything".into()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("everything would need"), "{msg}");
        assert!(msg.contains("is available"), "{msg}");
        check_host(1024, || "a little".into()).unwrap();
    }
}
