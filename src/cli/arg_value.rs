//! Parsers for the numbers and names the command line takes (clap `value_parser`s): each
//! refuses a value outside the range in `catalog::bounds`, or a name the naming rule refuses,
//! when the arguments are parsed — before any file or worker exists — and says the allowed
//! range. The measurement CPU is checked against the CPUs this process may run on.

use crate::catalog::bounds::{self, CountRange, SecondsRange};

fn seconds(range: SecondsRange, s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    range.check(v)
}

fn count(range: CountRange, s: &str) -> Result<u64, String> {
    let v: u64 = s.trim().parse().map_err(|_| {
        format!(
            "{s:?} is not a whole number in {} … {}",
            range.min, range.max
        )
    })?;
    range.check(v)
}

pub fn trial_target(s: &str) -> Result<f64, String> {
    seconds(bounds::TRIAL_TARGET, s)
}

pub fn op_budget(s: &str) -> Result<f64, String> {
    seconds(bounds::OP_BUDGET, s)
}

pub fn kat_timeout(s: &str) -> Result<f64, String> {
    seconds(bounds::KAT_TIMEOUT, s)
}

pub fn timeout_cap(s: &str) -> Result<f64, String> {
    seconds(bounds::TIMEOUT_CAP, s)
}

pub fn trials(s: &str) -> Result<u32, String> {
    count(bounds::TRIALS, s).map(|v| v as u32)
}

pub fn max_trials(s: &str) -> Result<u32, String> {
    count(bounds::MAX_TRIALS, s).map(|v| v as u32)
}

pub fn pairs(s: &str) -> Result<u32, String> {
    count(bounds::PAIRS, s).map(|v| v as u32)
}

pub fn address_space_mib(s: &str) -> Result<u64, String> {
    count(bounds::ADDRESS_SPACE_MIB, s)
}

pub fn cpu_seconds(s: &str) -> Result<u64, String> {
    count(bounds::CPU_SECONDS, s)
}

pub fn length(s: &str) -> Result<u64, String> {
    count(bounds::LENGTH_BYTES, s)
}

pub fn digest_bits(s: &str) -> Result<u32, String> {
    let v: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number of bits"))?;
    bounds::check_digest_bits(v)
}

pub fn fraction(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    bounds::check_fraction("precision", v)
}

/// A label or KAT name: the naming rule of file names.
pub fn name(s: &str) -> Result<String, String> {
    cyclescope_core::name::SafeName::new("name", s)
        .map(|n| n.as_str().to_string())
        .map_err(|e| e.to_string())
}

/// The longest `--flags-note` (a record's `flags` field, a table cell).
const FLAGS_NOTE_MAX_CHARS: usize = 200;

/// `--flags-note`: one line of printable text, not empty, at most 200 characters.
pub fn flags_note(s: &str) -> Result<String, String> {
    let note = s.trim();
    if note.is_empty() {
        return Err("the note is empty: say how the library was built".into());
    }
    if note.chars().any(char::is_control) {
        return Err("the note holds a control character (a newline, a tab, an escape)".into());
    }
    let chars = note.chars().count();
    if chars > FLAGS_NOTE_MAX_CHARS {
        return Err(format!(
            "the note has {chars} characters; at most {FLAGS_NOTE_MAX_CHARS}"
        ));
    }
    Ok(note.to_string())
}

/// A measurement CPU this process may run on (`sched_getaffinity`): a CPU it may not use
/// would make every worker fail to pin itself, which would be recorded against the candidate.
pub fn cpu(s: &str) -> Result<usize, String> {
    let v: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a CPU number"))?;
    crate::cpu::check_usable(v)
}

/// Several measurement CPUs, as the kernel writes lists (`2-7`, `0,2,4-5`): each one this
/// process may run on, at least one. `allowed` takes them from the allocation (the affinity
/// mask): one CPU per core, the first core left to cyclescope itself.
pub fn cpus(s: &str) -> Result<CpuList, String> {
    if s.trim() == "allowed" {
        let allowed = crate::cpu::allowed().iter().copied().collect();
        let lanes = crate::host::allocation_lanes(&crate::host::HostRoot::new("/"), &allowed);
        return if lanes.is_empty() {
            Err("this process's affinity mask is unreadable: give the CPUs as a list".into())
        } else {
            Ok(CpuList(lanes))
        };
    }
    let set = crate::host::parse_cpu_list(s)
        .filter(|c| !c.is_empty())
        .ok_or_else(|| format!("{s:?} is not a CPU list (e.g. 2-7 or 0,2,4-5)"))?;
    set.into_iter()
        .map(crate::cpu::check_usable)
        .collect::<Result<_, _>>()
        .map(CpuList)
}

/// A parsed `--cpus` list (one value to clap, not many).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// `K/N`, 1 ≤ K ≤ N.
pub fn shard(s: &str) -> Result<crate::campaign::Shard, String> {
    s.parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_and_out_of_range_numbers_are_refused_with_the_range() {
        for (f, v, needle) in [
            (
                kat_timeout as fn(&str) -> Result<f64, String>,
                "inf",
                "0.1 … 604800",
            ),
            (trial_target, "nan", "0.0001 … 3600"),
            (trial_target, "inf", "0.0001 … 3600"),
            (op_budget, "nan", "0.001 … 604800"),
            (op_budget, "-1", "0.001 … 604800"),
            (trial_target, "abc", "not a number"),
            (fraction, "nan", "between 0 and 1"),
        ] {
            let err = f(v).unwrap_err();
            assert!(err.contains(needle), "{v}: {err}");
        }
        let err = address_space_mib("17592186044416").unwrap_err();
        assert!(err.contains("64 … 17592186044415"), "{err}");
        assert!(digest_bits("4294967288").unwrap_err().contains("8 … 8192"));
        assert!(cpu_seconds("18446744073709551615").is_err());
        assert_eq!(trial_target("0.05"), Ok(0.05));
    }

    #[test]
    fn a_flags_note_is_one_printable_line_of_bounded_length() {
        assert_eq!(flags_note(" gcc -O3 "), Ok("gcc -O3".to_string()));
        for (v, needle) in [
            ("  ", "empty"),
            ("-O3\n\x1b[2J", "control character"),
            (&"x".repeat(201), "201 characters; at most 200"),
        ] {
            let err = flags_note(v).unwrap_err();
            assert!(err.contains(needle), "{v:?}: {err}");
        }
        assert!(flags_note(&"x".repeat(200)).is_ok());
    }

    #[test]
    fn a_cpu_outside_the_affinity_mask_is_refused() {
        let err = cpu("4096").unwrap_err();
        assert!(
            err.contains("not one this process may run on (allowed: "),
            "{err}"
        );
        let last = crate::cpu::last_allowed();
        assert_eq!(cpu(&last.to_string()), Ok(last));
    }
}
