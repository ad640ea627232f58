//! What tuning would change for one measurement CPU, read from the root: each setting with the
//! exact text it holds now (kept byte for byte for the restore) and the value it would get,
//! plus notes on what tuning leaves alone and why. Reading only: nothing here writes.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::TuneError;
use super::partition::{self, Partition};
use super::shield::{self, Shield};
use super::tasks::{self, TaskMove};
use crate::host::harness::policy_boosts;
use crate::host::{HostRoot, format_cpu_list, parse_cpu_list};

const CPU: &str = "sys/devices/system/cpu";

/// The kind of a file setting, for display and ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    Governor,
    MinFrequency,
    NoTurbo,
    Boost,
    SiblingOnline,
    IrqAffinity,
    DefaultIrqAffinity,
}

impl Setting {
    pub fn describe(self) -> &'static str {
        match self {
            Setting::Governor => "governor",
            Setting::MinFrequency => "minimum frequency = maximum",
            Setting::NoTurbo => "intel_pstate turbo off",
            Setting::Boost => "cpufreq boost off",
            Setting::SiblingOnline => "SMT sibling offline",
            Setting::IrqAffinity => "IRQ moved off",
            Setting::DefaultIrqAffinity => "new IRQs kept off",
        }
    }
}

/// One file to rewrite: `rel` under the root, its text now (exactly), and the new value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub setting: Setting,
    pub rel: String,
    pub before: String,
    pub after: String,
}

/// Everything tuning would do for `cpu` on `root`.
#[derive(Debug, Clone)]
pub struct TunePlan {
    pub root: HostRoot,
    pub cpu: usize,
    pub files: Vec<FileChange>,
    pub tasks: Vec<TaskMove>,
    /// The other tasks moved into a cpuset of their own (None: no cpuset hierarchy to use).
    pub shield: Option<Shield>,
    /// The measurement CPU made a cgroup v2 cpuset partition (instead of the v1 shield).
    pub partition: Option<Partition>,
    /// What tuning leaves alone, and why (ASLR, boot parameters, fixture roots).
    pub notes: Vec<String>,
}

impl TunePlan {
    /// Files, task affinities and tasks the shield moves.
    pub fn change_count(&self) -> usize {
        self.files.len()
            + self.tasks.len()
            + self.shield.as_ref().map_or(0, |s| s.tasks.len())
            + usize::from(self.partition.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.tasks.is_empty()
            && self.shield.is_none()
            && self.partition.is_none()
    }

    /// One line per change, then the notes (for the CLI and the TUI).
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .files
            .iter()
            .map(|f| {
                format!(
                    "{}: /{} {} → {}",
                    f.setting.describe(),
                    f.rel,
                    f.before.trim(),
                    f.after
                )
            })
            .collect();
        out.extend(self.tasks.iter().map(|t| {
            format!(
                "task moved off: {} ({}) CPUs {} → {} (sched_setaffinity)",
                t.tid, t.comm, t.before, t.after
            )
        }));
        out.extend(self.shield.iter().map(Shield::describe));
        out.extend(self.partition.iter().map(Partition::describe));
        out.extend(self.notes.iter().map(|n| format!("note: {n}")));
        out
    }
}

/// Reads `rel` exactly as stored (None when missing; an error when it is not text).
fn exact(root: &HostRoot, rel: &str) -> Result<Option<String>, TuneError> {
    match std::fs::read(root.join(rel)) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| TuneError::NotText {
                path: root.join(rel),
            }),
        Err(_) => Ok(None),
    }
}

/// The plan for `cpu`. `self_pid` (this process) is never moved.
pub fn plan(root: &HostRoot, cpu: usize, self_pid: u32) -> Result<TunePlan, TuneError> {
    let mut files = Vec::new();
    let mut notes = Vec::new();
    let mut change = |setting, rel: String, after: &str| -> Result<(), TuneError> {
        if let Some(before) = exact(root, &rel)?
            && before.trim() != after
        {
            files.push(FileChange {
                setting,
                rel,
                before,
                after: after.to_string(),
            });
        }
        Ok(())
    };
    let freq = |f: &str| format!("{CPU}/cpu{cpu}/cpufreq/{f}");
    if root.read(&freq("scaling_governor")).is_some() {
        change(Setting::Governor, freq("scaling_governor"), "performance")?;
        if let Some(max) = root.read(&freq("scaling_max_freq")) {
            change(Setting::MinFrequency, freq("scaling_min_freq"), &max)?;
        }
    } else {
        notes.push(format!(
            "no cpufreq for CPU {cpu}: firmware or the hypervisor sets its clock"
        ));
    }
    change(
        Setting::NoTurbo,
        format!("{CPU}/intel_pstate/no_turbo"),
        "1",
    )?;
    change(Setting::Boost, format!("{CPU}/cpufreq/boost"), "0")?;
    for (rel, _) in policy_boosts(root, cpu) {
        change(Setting::Boost, format!("{CPU}/{rel}"), "0")?;
    }
    let siblings: BTreeSet<usize> = root
        .read(&format!("{CPU}/cpu{cpu}/topology/thread_siblings_list"))
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_default()
        .into_iter()
        .filter(|&s| s != cpu)
        .collect();
    for s in &siblings {
        let rel = format!("{CPU}/cpu{s}/online");
        if root.exists(&rel) {
            change(Setting::SiblingOnline, rel, "0")?;
        } else {
            notes.push(format!(
                "SMT sibling CPU {s} cannot be taken offline here (no /{rel})"
            ));
        }
    }
    // Where everything else goes: the online CPUs without the measurement CPU and its siblings.
    let mut away = BTreeSet::from([cpu]);
    away.extend(&siblings);
    let housekeeping: BTreeSet<usize> = root
        .online_cpus()
        .unwrap_or_default()
        .difference(&away)
        .copied()
        .collect();
    if housekeeping.is_empty() {
        notes.push(format!(
            "no online CPU other than {} to move IRQs and tasks to",
            format_cpu_list(&away)
        ));
    } else {
        for irq in root
            .entries("proc/irq")
            .into_iter()
            .filter(|e| e.parse::<u32>().is_ok())
        {
            let rel = format!("proc/irq/{irq}/smp_affinity_list");
            let Some(now) = root.read(&rel).and_then(|t| parse_cpu_list(&t)) else {
                continue;
            };
            if now.is_disjoint(&away) {
                continue;
            }
            let kept: BTreeSet<usize> = now.difference(&away).copied().collect();
            let target = if kept.is_empty() {
                &housekeeping
            } else {
                &kept
            };
            change(Setting::IrqAffinity, rel, &format_cpu_list(target))?;
        }
        if let Some(mask) = root.read("proc/irq/default_smp_affinity")
            && let Some(cleared) = mask_without(&mask, &away)
        {
            change(
                Setting::DefaultIrqAffinity,
                "proc/irq/default_smp_affinity".into(),
                &cleared,
            )?;
        }
    }
    // A v2 partition where the v2 hierarchy enables cpuset, else the v1 cpuset shield.
    let partitioned = match partition::plan(root, &away) {
        Some(p) if !housekeeping.is_empty() => Some(p.map_err(|note| notes.push(note)).ok()),
        _ => None,
    };
    let shielded = if housekeeping.is_empty() || partitioned.is_some() {
        None
    } else {
        shield::plan(root, &housekeeping, self_pid)
            .map_err(|note| notes.push(note))
            .ok()
    };
    let partitioned = partitioned.flatten();
    let task_moves = if root.is_system() {
        // A thread the shield moves gets its CPUs from the shield's cpuset.
        let in_shield: BTreeSet<i32> = shielded
            .iter()
            .flat_map(|s| s.tasks.iter().map(|t| t.tid))
            .collect();
        tasks::plan_moves(&away, self_pid)
            .into_iter()
            .filter(|t| !in_shield.contains(&t.tid))
            .collect()
    } else {
        notes.push(
            "task affinities are live kernel state: moved with sched_setaffinity on the real \
             root (/) only, not for a fixture tree"
                .into(),
        );
        Vec::new()
    };
    notes.push(
        match root.read("proc/sys/kernel/randomize_va_space").as_deref() {
            Some("2") => "ASLR kept (randomize_va_space=2): tune never turns it off".into(),
            Some(v) => format!(
                "ASLR left as it is (randomize_va_space={v}; 2 is wanted: sudo sysctl \
             kernel.randomize_va_space=2)"
            ),
            None => "ASLR setting unreadable; left alone".into(),
        },
    );
    notes.push(format!(
        "isolcpus/nohz_full/rcu_nocbs are boot parameters: tune cannot set them (see `cyclescope \
         check --cpu {cpu}`)"
    ));
    Ok(TunePlan {
        root: root.clone(),
        cpu,
        files,
        tasks: task_moves,
        shield: shielded,
        partition: partitioned,
        notes,
    })
}

/// A hexadecimal CPU mask (`ff,ffffffff`) with the bits of `cpus` cleared, in the same layout;
/// None when malformed or nothing would change.
fn mask_without(mask: &str, cpus: &BTreeSet<usize>) -> Option<String> {
    let mut out: Vec<char> = mask.chars().collect();
    let mut bit = 0usize;
    let mut changed = false;
    for c in out.iter_mut().rev() {
        if *c == ',' {
            continue;
        }
        let mut d = c.to_digit(16)?;
        for k in 0..4 {
            if d & (1 << k) != 0 && cpus.contains(&(bit + k)) {
                d &= !(1 << k);
                changed = true;
            }
        }
        *c = char::from_digit(d, 16)?;
        bit += 4;
    }
    changed.then(|| out.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_lose_only_the_named_bits() {
        let s = |v: &[usize]| v.iter().copied().collect::<BTreeSet<_>>();
        assert_eq!(mask_without("f", &s(&[2, 3])).as_deref(), Some("3"));
        assert_eq!(
            mask_without("1,00000001", &s(&[32])).as_deref(),
            Some("0,00000001")
        );
        assert_eq!(mask_without("3", &s(&[2])), None);
        assert_eq!(mask_without("zz", &s(&[0])), None);
    }
}
