//! The plans of the checks that repeat calls: `determinism` (`DETERMINISM_CALLS`) and
//! `reentrancy` (two threads of one trial worker at once), which `tabled` runs.

use super::buffers::Sample;

/// Calls of `determinism`: more than KAT_2_12's 4097 and KAT_2_23's 3 together, so a library
/// that changes after a few thousand calls in one process changes inside this check.
pub(crate) const DETERMINISM_CALLS: usize = 6000;
/// Calls per thread of `reentrancy` (each a message of 1024 bits or more, up to 4 KiB).
const REENTRANT_CALLS: usize = 400;

/// `reentrancy`'s calls, in the order of a `--two-threads` table (the even records in one
/// thread, the odd in the other): the sample's messages of 1024 bits or more, longest first,
/// dealt to the two threads in turn, `REENTRANT_CALLS` each.
pub(crate) fn reentrant_plan(samples: &[Sample]) -> Result<Vec<Sample>, String> {
    let mut long: Vec<&Sample> = samples.iter().filter(|s| s.bits >= 1024).collect();
    long.sort_by_key(|s| std::cmp::Reverse(s.bits));
    let sets: [Vec<&Sample>; 2] = [
        long.iter().step_by(2).copied().collect(),
        long.iter().skip(1).step_by(2).copied().collect(),
    ];
    if sets.iter().any(Vec::is_empty) {
        return Err("the sample has too few messages of 1024 bits or more".into());
    }
    Ok((0..2 * REENTRANT_CALLS)
        .map(|i| {
            let set = &sets[i % 2];
            set[(i / 2) % set.len()].clone()
        })
        .collect())
}
