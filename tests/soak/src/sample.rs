//! Resident memory and open file descriptors of a process, from /proc.

use std::path::PathBuf;

/// One reading of a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// Requests answered when it was taken.
    pub done: u64,
    /// The process.
    pub pid: u32,
    /// `VmRSS`, in KiB.
    pub rss_kib: u64,
    /// Entries in `/proc/PID/fd`.
    pub fds: u64,
    /// What they are (a path, `socket`, `pipe`, `anon_inode:[eventfd]`…), sorted.
    pub targets: Vec<String>,
}

/// Reads process `pid` (`None`: this process) after `done` requests;
/// `None` if /proc cannot tell (not Linux, or the process is gone).
pub fn sample(pid: Option<u32>, done: u64) -> Option<Sample> {
    let dir = match pid {
        Some(pid) => PathBuf::from(format!("/proc/{pid}")),
        None => PathBuf::from("/proc/self"),
    };
    let status = std::fs::read_to_string(dir.join("status")).ok()?;
    let rss_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    // Reading /proc/self/fd opens one more descriptor while it reads: the
    // same one every time, so series stay comparable.
    let mut targets: Vec<String> = std::fs::read_dir(dir.join("fd"))
        .ok()?
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .map(|target| {
            let target = target.to_string_lossy().into_owned();
            match target.split_once(":[") {
                Some((kind, _)) if kind == "socket" || kind == "pipe" => kind.to_owned(),
                _ => target,
            }
        })
        .collect();
    targets.sort();
    let fds = targets.len() as u64;
    Some(Sample {
        done,
        pid: pid.unwrap_or_else(std::process::id),
        rss_kib,
        fds,
        targets,
    })
}

/// Gives memory this process freed back to the system (glibc keeps freed
/// blocks in each thread's arena: a 17 MiB result freed on one worker can
/// stay resident for good, so without this the RSS of an embedding host
/// moves by tens of MiB from one sample to the next with nothing leaked).
pub fn trim_own_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's malloc_trim takes no pointers and may be called
        // at any time from any thread.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// What a series of samples says.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The first sample.
    pub first: Sample,
    /// The first sample after warm-up.
    pub warm: Sample,
    /// The last sample.
    pub last: Sample,
    /// The largest RSS seen, in KiB.
    pub peak_rss_kib: u64,
    /// The lowest RSS of the samples in the stretch after warm-up that is
    /// as long as the warm-up, in KiB.
    pub warm_floor_kib: u64,
    /// The lowest RSS in the last stretch as long, in KiB.
    pub end_floor_kib: u64,
}

impl Summary {
    /// Summarises `samples`, warm from `warm_from` requests on; `None`
    /// without samples.
    pub fn of(samples: &[Sample], warm_from: u64) -> Option<Summary> {
        let first = samples.first()?.clone();
        let last = samples.last()?.clone();
        let warm = (samples.iter().find(|s| s.done >= warm_from))
            .unwrap_or(&last)
            .clone();
        let peak_rss_kib = samples.iter().map(|s| s.rss_kib).max().unwrap_or(0);
        let stretch = warm_from.max(1);
        let floor = |range: std::ops::Range<u64>| {
            (samples.iter())
                .filter(|s| range.contains(&s.done))
                .map(|s| s.rss_kib)
                .min()
        };
        let warm_floor_kib = floor(warm.done..warm.done + stretch).unwrap_or(warm.rss_kib);
        let end_from = last.done.saturating_sub(stretch).max(warm.done);
        let end_floor_kib = floor(end_from..last.done + 1).unwrap_or(last.rss_kib);
        Some(Summary {
            first,
            warm,
            last,
            peak_rss_kib,
            warm_floor_kib,
            end_floor_kib,
        })
    }

    /// RSS at the end against after warm-up, in percent, of the floors of
    /// their stretches: what is judged. One sample can be tens of MiB above
    /// the floor with nothing leaked (a launcher that served a 17 MiB result
    /// keeps that heap, 41 MiB against 24; an instance whose memory a big
    /// result grew keeps it until it is replaced); a leak lifts the floor.
    pub fn rss_growth_pct(&self) -> f64 {
        let warm = self.warm_floor_kib.max(1) as f64;
        (self.end_floor_kib as f64 - warm) * 100.0 / warm
    }

    /// The same of the first sample after warm-up and the last one.
    pub fn rss_growth_sampled_pct(&self) -> f64 {
        let warm = self.warm.rss_kib.max(1) as f64;
        (self.last.rss_kib as f64 - warm) * 100.0 / warm
    }

    /// Descriptors at the end minus after warm-up.
    pub fn fd_growth(&self) -> i64 {
        self.last.fds as i64 - self.warm.fds as i64
    }

    /// Descriptors open at the end but not after warm-up (`+`), and the
    /// other way round (`-`).
    pub fn fd_changes(&self) -> Vec<String> {
        let mut left = self.warm.targets.clone();
        let mut changes = Vec::new();
        for target in &self.last.targets {
            match left.iter().position(|t| t == target) {
                Some(i) => drop(left.remove(i)),
                None => changes.push(format!("+{target}")),
            }
        }
        changes.extend(left.into_iter().map(|t| format!("-{t}")));
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_can_be_sampled() {
        if cfg!(target_os = "linux") {
            let s = sample(None, 0).expect("a sample of this process");
            assert!(s.rss_kib > 0 && s.fds >= 3, "{s:?}");
        }
    }

    #[test]
    fn growth_is_measured_from_warm_up() {
        let s = |done, rss_kib, fds: u64| Sample {
            done,
            pid: 1,
            rss_kib,
            fds,
            targets: (0..fds).map(|i| format!("/f{i}")).collect(),
        };
        let series = [s(0, 50, 3), s(10, 100, 5), s(20, 105, 5), s(30, 110, 6)];
        let summary = Summary::of(&series, 10).unwrap();
        assert_eq!(summary.warm.done, 10);
        assert!((summary.rss_growth_sampled_pct() - 10.0).abs() < 1e-9);
        // Floors of [10, 20) and [20, 30]: 100 and 105.
        assert_eq!((summary.warm_floor_kib, summary.end_floor_kib), (100, 105));
        assert!((summary.rss_growth_pct() - 5.0).abs() < 1e-9);
        assert_eq!(summary.fd_growth(), 1);
        assert_eq!(summary.fd_changes(), ["+/f5"]);
        assert_eq!(summary.peak_rss_kib, 110);
    }
}
