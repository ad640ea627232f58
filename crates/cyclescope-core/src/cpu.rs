//! Where this process's threads run: pinning a thread to the measurement CPU (workers, the
//! clock probe, the host's pinning check) and keeping the measuring process itself off that
//! CPU (the campaign's thread, the TUI's threads), so a trial never shares its core with
//! cyclescope. The one place that calls `sched_setaffinity`; it never decides which CPU is
//! the measurement CPU.

pub mod lock;

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

/// The calling thread (pid 0 in the affinity calls means "this thread").
fn this_thread() -> Pid {
    Pid::from_raw(0)
}

/// Pins the calling thread (and so a process before it starts others) to `cpu`.
pub(crate) fn pin_current_thread(cpu: usize) -> nix::Result<()> {
    let mut set = CpuSet::new();
    set.set(cpu)?;
    sched_setaffinity(this_thread(), &set)
}

/// The CPUs this process may use: its affinity mask as it started (`sched_getaffinity`), which
/// is what `taskset`, a container's cpuset or a Slurm allocation (its cgroup cpuset, or the
/// binding `task/affinity` sets) gives it. Taken once, the first time it is asked — the binary
/// asks before anything steps off a CPU — so a thread that has since stepped off the
/// measurement CPU still sees the whole allocation. Never wider than the process was given:
/// widening a mask is refused by a cpuset but silently allowed under a plain binding, so
/// cyclescope never assumes a CPU it was not handed.
pub fn allowed() -> &'static [usize] {
    static ALLOWED: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ALLOWED.get_or_init(|| {
        CpuMask::of_this_thread()
            .map(|m| m.cpus())
            .unwrap_or_default()
    })
}

/// The highest-numbered CPU this process may use (the default measurement CPU: CPU 0 takes
/// most interrupts).
pub fn last_allowed() -> usize {
    allowed().last().copied().unwrap_or(0)
}

/// `Ok` when a thread of this process may be pinned to `cpu`, else why not, naming the CPUs it
/// may use (`allowed`).
pub fn check_usable(cpu: usize) -> Result<usize, String> {
    let allowed = allowed();
    if allowed.contains(&cpu) {
        Ok(cpu)
    } else {
        Err(format!(
            "CPU {cpu} is not one this process may run on (allowed: {}, its affinity mask: \
             a taskset, cpuset or Slurm allocation); choose one of those",
            cpu_list(allowed)
        ))
    }
}

/// `0-3,6` for a sorted list of CPUs.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        while i + 1 < cpus.len() && cpus[i + 1] == cpus[i] + 1 {
            i += 1;
        }
        parts.push(if cpus[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", cpus[i])
        });
        i += 1;
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(",")
    }
}

/// A set of CPUs a thread may run on, taken once so that stepping off one CPU can later be
/// redone for another (the TUI lets the operator change the measurement CPU).
#[derive(Debug, Clone, Copy)]
pub struct CpuMask(CpuSet);

impl CpuMask {
    /// The CPUs the calling thread may use now.
    pub fn of_this_thread() -> Option<Self> {
        sched_getaffinity(this_thread()).ok().map(CpuMask)
    }

    /// Whether `cpu` is in this mask.
    pub fn contains(&self, cpu: usize) -> bool {
        self.0.is_set(cpu).unwrap_or(false)
    }

    /// The CPUs in this mask, ascending.
    fn cpus(&self) -> Vec<usize> {
        (0..CpuSet::count()).filter(|&c| self.contains(c)).collect()
    }

    /// How many CPUs this mask holds.
    pub fn count(&self) -> usize {
        (0..CpuSet::count())
            .filter(|&c| self.0.is_set(c).unwrap_or(false))
            .count()
    }

    /// This mask without any of `cpus`, when another CPU is left in it.
    fn without_all(&self, cpus: &[usize]) -> Option<Self> {
        let mut rest = self.0;
        for &cpu in cpus {
            rest.unset(cpu).ok()?;
        }
        let rest = CpuMask(rest);
        (rest.count() > 0).then_some(rest)
    }

    /// Moves the calling thread (and every thread it spawns later, which inherit the mask) to
    /// this mask minus `cpu`. On a single-CPU mask, or where a cpuset forbids the change, the
    /// thread stays where it was: best effort, reported by the return value.
    pub fn step_off(&self, cpu: usize) -> bool {
        self.step_off_all(&[cpu])
    }

    /// `step_off` for several measurement CPUs at once.
    pub fn step_off_all(&self, cpus: &[usize]) -> bool {
        self.without_all(cpus)
            .is_some_and(|rest| sched_setaffinity(this_thread(), &rest.0).is_ok())
    }

    /// Puts the calling thread back on this mask.
    fn restore(&self) {
        // The mask was valid when taken; if a hotplug removed CPUs since, the thread keeps
        // the CPUs it has, which are still valid places to run.
        let _ = sched_setaffinity(this_thread(), &self.0);
    }
}

/// Keeps the calling thread off the measurement CPU until dropped: the campaign holds one
/// for the whole run, so the headless CLI, like the TUI, never competes with its own trials.
pub struct OffCpu {
    previous: Option<CpuMask>,
}

impl OffCpu {
    pub fn enter(cpu: usize) -> Self {
        Self::enter_all(&[cpu])
    }

    /// Off every measurement CPU of a run with several (its lanes).
    pub fn enter_all(cpus: &[usize]) -> Self {
        let previous = CpuMask::of_this_thread();
        let moved = previous.is_some_and(|m| m.step_off_all(cpus));
        Self {
            previous: previous.filter(|_| moved),
        }
    }

    /// Whether the thread did leave the measurement CPUs (false: no other CPU was left to it,
    /// or a cpuset kept it there, and it shares them with the trials).
    pub fn is_off(&self) -> bool {
        self.previous.is_some()
    }
}

impl Drop for OffCpu {
    fn drop(&mut self) {
        if let Some(m) = self.previous {
            m.restore();
        }
    }
}

/// Pins the calling thread to one CPU until dropped, then restores its mask (the clock probe
/// runs on the measurement CPU from a thread that must not stay there).
pub(crate) struct Pinned {
    previous: CpuMask,
}

impl Pinned {
    pub(crate) fn to(cpu: usize) -> nix::Result<Self> {
        let previous = sched_getaffinity(this_thread()).map(CpuMask)?;
        pin_current_thread(cpu)?;
        Ok(Pinned { previous })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        self.previous.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_stepped_off_by_this_thread_is_still_usable() {
        let last = last_allowed();
        let mask = CpuMask::of_this_thread().unwrap();
        std::thread::spawn(move || {
            mask.step_off(last);
            assert_eq!(check_usable(last), Ok(last));
            assert!(check_usable(4095).is_err());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn cpu_lists_are_written_as_ranges() {
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(cpu_list(&[]), "none");
    }

    fn on(cpu: usize) -> bool {
        CpuMask::of_this_thread().is_some_and(|m| m.contains(cpu))
    }

    #[test]
    fn stepping_off_and_pinning_are_undone_on_drop() {
        // A fresh thread, so the test harness's own threads keep their masks.
        std::thread::spawn(|| {
            let before = CpuMask::of_this_thread().expect("affinity is readable");
            let last = last_allowed();
            assert!(on(last));
            {
                let _off = OffCpu::enter(last);
                // With one CPU there is nowhere else to go, and the thread stays put.
                assert_eq!(on(last), before.count() == 1);
            }
            assert!(on(last));
            {
                let _pinned = Pinned::to(last).expect("pinning to an allowed CPU works");
                assert_eq!(CpuMask::of_this_thread().map(|m| m.count()), Some(1));
            }
            assert_eq!(
                CpuMask::of_this_thread().map(|m| m.count()),
                Some(before.count())
            );
        })
        .join()
        .expect("the affinity thread finished");
    }

    #[test]
    fn a_mask_is_never_emptied() {
        let mut one = CpuSet::new();
        one.set(0).unwrap();
        assert!(CpuMask(one).without_all(&[0]).is_none());
        let mut two = one;
        two.set(1).unwrap();
        assert_eq!(CpuMask(two).without_all(&[1]).map(|m| m.count()), Some(1));
    }
}
