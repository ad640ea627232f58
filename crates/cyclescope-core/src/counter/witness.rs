//! The clock witness of a trial: a pair of counts read around the trial's loop from which the
//! core clock during that loop follows — perf_event core cycles with the reference counter
//! beside them, or the `APERF`/`MPERF` registers through `/dev/cpu/N/msr` (APERF counts at
//! the actual clock, MPERF at the reference rate, both only while the core runs). It reads;
//! it never judges a trial (that is `measure::clock`).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// `IA32_MPERF` and `IA32_APERF`.
const MSR_MPERF: u64 = 0xE7;
const MSR_APERF: u64 = 0xE8;

/// Which pair of counters a witness reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WitnessKind {
    /// perf_event user core cycles (the loop counter) and the reference counter (TSC).
    PerfAndReference,
    /// `APERF` / `MPERF` of the measurement CPU.
    AperfMperf,
}

/// Counts over one trial: `core` at the core clock, `reference` at the reference rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockPair {
    pub kind: WitnessKind,
    pub core: u64,
    pub reference: u64,
}

/// An open `APERF`/`MPERF` reader of one CPU.
#[derive(Debug)]
pub(crate) struct AperfMperf {
    msr: File,
}

impl AperfMperf {
    /// Opens `<dev_root>/dev/cpu/<cpu>/msr` and reads both registers once (the msr driver
    /// needs root and refuses registers a CPU lacks). The error says what was missing.
    pub(crate) fn open(dev_root: &Path, cpu: usize) -> Result<Self, String> {
        let path = dev_root.join(format!("dev/cpu/{cpu}/msr"));
        let msr = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let me = Self { msr };
        me.read()
            .ok_or_else(|| format!("{}: APERF/MPERF not readable", path.display()))?;
        Ok(me)
    }

    /// (APERF, MPERF) now.
    pub(crate) fn read(&self) -> Option<(u64, u64)> {
        let reg = |at: u64| {
            let mut b = [0u8; 8];
            self.msr.read_exact_at(&mut b, at).ok()?;
            Some(u64::from_le_bytes(b))
        };
        Some((reg(MSR_APERF)?, reg(MSR_MPERF)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_msr_device_names_its_path() {
        let t = tempfile::tempdir().unwrap();
        let e = AperfMperf::open(t.path(), 3).unwrap_err();
        assert!(e.contains("dev/cpu/3/msr"), "{e}");
    }

    #[test]
    fn registers_are_read_at_their_offsets() {
        // A flat file stands in for the device: the driver answers a read at offset R with
        // register R; here APERF's 8 bytes sit at 0xE8 (MPERF's read at 0xE7 overlaps them).
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("dev/cpu/0");
        std::fs::create_dir_all(&dir).unwrap();
        let mut bytes = vec![0u8; 0xF0];
        bytes[0xE8..0xF0].copy_from_slice(&2_000u64.to_le_bytes());
        std::fs::write(dir.join("msr"), &bytes).unwrap();
        let (aperf, _) = AperfMperf::open(t.path(), 0).unwrap().read().unwrap();
        assert_eq!(aperf, 2_000);
    }
}
