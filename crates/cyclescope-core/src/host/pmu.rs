//! Which PMU counts the measurement CPU's cycles. A hybrid CPU has one core PMU per core type
//! (Intel: `cpu_core` for P-cores, `cpu_atom` for E-cores; Arm big.LITTLE: one `armv8_*` PMU
//! per core design), each listing its CPUs in `/sys/bus/event_source/devices/NAME/cpus` and its
//! perf type in `type`. A generic hardware event must name the PMU of the CPU it runs on in the
//! upper 32 bits of `config` (`PERF_TYPE_HARDWARE` with an extended type), or the kernel may
//! open it on the other core type, where it never counts. Reads through a [`HostRoot`] so
//! fixture trees stand in for `/`; it never opens an event itself.

use std::collections::BTreeSet;

use super::root::{HostRoot, format_cpu_list, parse_cpu_list};

const DEVICES: &str = "sys/bus/event_source/devices";

/// A core PMU as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorePmu {
    /// The PMU's name under `event_source/devices` (`cpu`, `cpu_core`, `cpu_atom`,
    /// `armv8_cortex_a76`, …): the core type records carry.
    pub name: String,
    /// Its perf type (the `type` file).
    pub type_id: u32,
    /// True when the machine has more than one core PMU, so events must name this one.
    pub hybrid: bool,
    /// The CPUs it counts on (None: every CPU, the x86 `cpu` PMU has no `cpus` file).
    cpus: Option<BTreeSet<usize>>,
}

impl CorePmu {
    /// The extended type a generic hardware event carries in `config`'s upper 32 bits: the
    /// PMU's type on a hybrid machine, none where there is only one core PMU (older kernels,
    /// Arm before 6.4 among them, refuse an extended type they do not need).
    pub fn extended_type(&self) -> Option<u32> {
        self.hybrid.then_some(self.type_id)
    }

    /// The core type as records and rows name it: the PMU's name.
    pub fn core_type(&self) -> &str {
        &self.name
    }

    fn covers(&self, cpu: usize) -> bool {
        self.cpus.as_ref().is_none_or(|c| c.contains(&cpu))
    }
}

/// Why no PMU could be chosen for a CPU.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PmuError {
    #[error(
        "CPU {cpu} is on none of the core PMUs ({pmus}): no cycle counter can be opened for it"
    )]
    Uncovered { cpu: usize, pmus: String },
    #[error("{path} is unreadable or not a number ({text:?})")]
    BadFile { path: String, text: String },
    #[error(
        "these CPUs are of different core types, whose cycles are not comparable: {}; pick \
         CPUs of one type (one PMU) for the lanes",
        .0.join(", ")
    )]
    MixedCoreTypes(Vec<String>),
}

/// Every core PMU under the root: those with a `cpus` file, and x86's `cpu`. Sorted by name.
pub fn core_pmus(root: &HostRoot) -> Result<Vec<CorePmu>, PmuError> {
    let mut found = Vec::new();
    for name in root.entries(DEVICES) {
        let dir = format!("{DEVICES}/{name}");
        let cpus = root.read(&format!("{dir}/cpus"));
        if cpus.is_none() && name != "cpu" {
            continue;
        }
        let type_path = format!("{dir}/type");
        let text = root.read(&type_path).unwrap_or_default();
        let type_id = text.parse().map_err(|_| PmuError::BadFile {
            path: type_path,
            text: text.clone(),
        })?;
        let cpus = match cpus {
            None => None,
            Some(list) => Some(parse_cpu_list(&list).ok_or_else(|| PmuError::BadFile {
                path: format!("{dir}/cpus"),
                text: list.clone(),
            })?),
        };
        found.push(CorePmu {
            name,
            type_id,
            hybrid: false,
            cpus,
        });
    }
    let hybrid = found.len() > 1;
    for p in &mut found {
        p.hybrid = hybrid;
    }
    Ok(found)
}

/// The core PMU that counts on `cpu`; None where sysfs shows no core PMU at all (a virtual
/// machine without one: the reference counter measures there).
pub fn core_pmu(root: &HostRoot, cpu: usize) -> Result<Option<CorePmu>, PmuError> {
    let pmus = core_pmus(root)?;
    if pmus.is_empty() {
        return Ok(None);
    }
    let names = pmus
        .iter()
        .map(|p| match &p.cpus {
            Some(c) => format!("{}: {}", p.name, format_cpu_list(c)),
            None => p.name.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ");
    pmus.into_iter()
        .find(|p| p.covers(cpu))
        .map(Some)
        .ok_or(PmuError::Uncovered { cpu, pmus: names })
}

/// Refuses lanes on CPUs of more than one core type (None of them may lack a PMU either when
/// others have one).
pub fn check_one_core_type(root: &HostRoot, cpus: &[usize]) -> Result<(), PmuError> {
    let mut types: Vec<(usize, Option<String>)> = Vec::new();
    for &cpu in cpus {
        let name = core_pmu(root, cpu)?.map(|p| p.name);
        types.push((cpu, name));
    }
    let distinct: BTreeSet<&Option<String>> = types.iter().map(|(_, n)| n).collect();
    if distinct.len() <= 1 {
        return Ok(());
    }
    Err(PmuError::MixedCoreTypes(
        types
            .iter()
            .map(|(cpu, n)| format!("CPU {cpu} on {}", n.as_deref().unwrap_or("no PMU")))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(pmus: &[(&str, u32, Option<&str>)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, ty, cpus) in pmus {
            let d = dir.path().join(DEVICES).join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("type"), format!("{ty}\n")).unwrap();
            if let Some(c) = cpus {
                std::fs::write(d.join("cpus"), format!("{c}\n")).unwrap();
            }
        }
        dir
    }

    #[test]
    fn a_single_pmu_needs_no_extended_type() {
        let t = tree(&[("cpu", 4, None), ("software", 1, None), ("msr", 9, None)]);
        let p = core_pmu(&HostRoot::new(t.path()), 7).unwrap().unwrap();
        assert_eq!((p.core_type(), p.extended_type()), ("cpu", None));
        let t = tree(&[("armv8_pmuv3_0", 8, Some("0-3")), ("software", 1, None)]);
        let p = core_pmu(&HostRoot::new(t.path()), 2).unwrap().unwrap();
        assert_eq!((p.core_type(), p.extended_type()), ("armv8_pmuv3_0", None));
    }

    #[test]
    fn no_pmu_is_none_and_an_uncovered_cpu_or_bad_file_an_error() {
        let vm = tree(&[("software", 1, None), ("breakpoint", 5, None)]);
        assert_eq!(core_pmu(&HostRoot::new(vm.path()), 1), Ok(None));
        let t = tree(&[
            ("cpu_core", 4, Some("0-15")),
            ("cpu_atom", 8, Some("16-19")),
        ]);
        let err = core_pmu(&HostRoot::new(t.path()), 20).unwrap_err();
        assert_eq!(
            err.to_string(),
            "CPU 20 is on none of the core PMUs (cpu_atom: 16-19; cpu_core: 0-15): no cycle \
             counter can be opened for it"
        );
        let bad = tree(&[("cpu_core", 4, Some("(null)"))]);
        assert!(matches!(
            core_pmu(&HostRoot::new(bad.path()), 0),
            Err(PmuError::BadFile { .. })
        ));
    }
}
