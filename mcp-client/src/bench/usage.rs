//! What a server process costs the machine, read from Linux's `/proc`: CPU time and peak
//! resident memory of the process and of every process it started (a server launched
//! through `npx`, `uv run` or a shell is several processes).
//!
//! CPU time comes from `/proc/<pid>/stat` in clock ticks (10 ms on Linux), so a phase must
//! run long enough for its CPU time to span many ticks; the report says how long each did.

use std::{path::Path, time::Duration};

/// CPU time and peak memory of a process tree at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// User plus system CPU time of the live processes of the tree.
    pub cpu: Duration,
    /// The sum of each live process's peak resident memory (`VmHWM`), in KiB.
    pub peak_rss_kib: u64,
    /// How many processes the tree has.
    pub processes: usize,
}

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    parent: u32,
    /// utime + stime in clock ticks.
    ticks: u64,
}

/// Parses the line of `/proc/<pid>/stat`. The command name sits in parentheses and may hold
/// spaces and parentheses itself, so the fields are counted after its *last* `)`.
fn parse_stat(line: &str) -> Option<Stat> {
    let fields: Vec<&str> = line
        .get(line.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    // After the name: state, ppid, …; utime and stime are fields 14 and 15 of the line.
    let parent = fields.get(1)?.parse().ok()?;
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Stat {
        parent,
        ticks: utime + stime,
    })
}

/// The `VmHWM` of `/proc/<pid>/status`, in KiB.
fn parse_peak_rss(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Every process of `/proc` as (pid, stat).
fn all_processes(proc: &Path) -> Vec<(u32, Stat)> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let line = std::fs::read_to_string(proc.join(pid.to_string()).join("stat")).ok()?;
            Some((pid, parse_stat(&line)?))
        })
        .collect()
}

/// `root` and its descendants among `processes`.
fn tree(root: u32, processes: &[(u32, Stat)]) -> Vec<(u32, Stat)> {
    let mut members: Vec<(u32, Stat)> = processes
        .iter()
        .filter(|(pid, _)| *pid == root)
        .copied()
        .collect();
    let mut next = 0;
    while let Some(&(parent, _)) = members.get(next) {
        members.extend(
            processes
                .iter()
                .filter(|(_, s)| s.parent == parent)
                .copied(),
        );
        next += 1;
    }
    members
}

/// The usage of the process `pid` and its descendants now; `None` when `/proc` has no such
/// process (it exited, or this is not Linux).
pub fn of_tree(pid: u32) -> Option<Usage> {
    let proc = Path::new("/proc");
    let members = tree(pid, &all_processes(proc));
    if members.is_empty() {
        return None;
    }
    let hz = rustix::param::clock_ticks_per_second().max(1);
    let mut usage = Usage {
        processes: members.len(),
        ..Usage::default()
    };
    for (member, stat) in members {
        usage.cpu += Duration::from_micros(stat.ticks.saturating_mul(1_000_000) / hz);
        usage.peak_rss_kib += std::fs::read_to_string(proc.join(member.to_string()).join("status"))
            .ok()
            .as_deref()
            .and_then(parse_peak_rss)
            .unwrap_or(0);
    }
    Some(usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_a_name_with_spaces_and_parentheses() {
        let line = "4242 (node (worker) 2) S 4200 4242 4200 0 -1 4194560 1200 0 3 0 \
                    731 54 0 0 20 0 11 0 123456 1234567 2345 18446744073709551615";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                parent: 4200,
                ticks: 785
            })
        );
        assert_eq!(parse_stat("4242 (truncated"), None);
        assert_eq!(parse_stat("4242 (x) S 1 2"), None);
    }

    #[test]
    fn peak_rss_is_read_from_vmhwm() {
        let status =
            "Name:\tzwave-mcp-serv\nVmPeak:\t  30000 kB\nVmHWM:\t   10452 kB\nVmRSS:\t 9000 kB\n";
        assert_eq!(parse_peak_rss(status), Some(10_452));
        assert_eq!(parse_peak_rss("Name:\tx\n"), None);
    }

    #[test]
    fn a_tree_holds_the_root_and_every_descendant_but_no_sibling() {
        let at = |parent| Stat { parent, ticks: 1 };
        let processes = [
            (1, at(0)),
            (10, at(1)),
            (11, at(10)),
            (12, at(11)),
            (20, at(1)),
            (13, at(10)),
        ];
        let mut pids: Vec<u32> = tree(10, &processes).iter().map(|(pid, _)| *pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, [10, 11, 12, 13]);
        assert!(tree(99, &processes).is_empty());
    }

    #[test]
    fn this_process_is_measured() {
        let usage = of_tree(std::process::id()).expect("this process is in /proc");
        assert!(usage.processes >= 1);
        assert!(usage.peak_rss_kib > 0, "{usage:?}");
        assert_eq!(of_tree(u32::MAX), None);
    }
}
