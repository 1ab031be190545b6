//! What a process has done so far, read from Linux's `/proc`: its threads' context switches and
//! its CPU time, and its memory (`status_mib`). On a shared 2-core machine wall times move with the neighbours; these counts
//! say what a path costs the process itself (the load bench reads them for its server).

use std::time::Duration;

/// The context switches (voluntary and not) of process `pid`'s live threads, summed, and the
/// process's CPU time (user and system, its ended threads included). `pid` is a number or
/// `"self"`. Zeros where `/proc` cannot be read.
pub fn work(pid: &str) -> (u64, Duration) {
    let switches = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("status")).ok())
        .map(|status| {
            status
                .lines()
                .filter(|line| line.contains("ctxt_switches:"))
                .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum();
    // After the command name (which may hold spaces, so read from its closing parenthesis),
    // utime and stime are the 12th and 13th fields, in clock ticks of 10 ms on Linux.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let ticks: u64 = stat
        .rsplit_once(')')
        .map(|(_, fields)| {
            fields
                .split_whitespace()
                .skip(11)
                .take(2)
                .filter_map(|field| field.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0);
    (switches, Duration::from_millis(ticks * 10))
}

/// Field `field` (a `/proc/<pid>/status` line's name with its colon, in kB: `VmRSS:`, `VmHWM:`,
/// `RssAnon:`, …) of process `pid` (a number or `"self"`), in MiB; NaN where it cannot be read.
pub fn status_mib(pid: &str, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}
