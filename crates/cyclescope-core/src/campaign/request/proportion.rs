//! Whether a run's plan is in proportion: how many jobs (instances × lengths) and how long a
//! message it asks for, against what the guide's method needs (8 lengths, 32 B … 64 KiB). A
//! request past either limit is refused before anything is opened or written — a config with
//! 100 000 lengths must not spend minutes and megabytes of journal before anyone notices —
//! unless the operator says it is meant (`--allow-large-plan`). The refusal says how long the
//! plan would take at least: nothing is calibrated yet, so the bound is trials × the trial
//! target per job. Pure arithmetic; it never looks at a library.

use std::time::Duration;

use crate::measure::plan::{Adaptive, MIN_ADAPTIVE_TRIALS, Planning};

/// More jobs than this in one run is out of proportion.
pub(crate) const MAX_JOBS: usize = 1000;
/// A message longer than this is out of proportion (the guide's longest is 64 KiB).
pub(crate) const MAX_LENGTH_BYTES: u64 = 1 << 20;

/// What makes a plan out of proportion, with the figures the refusal names.
#[derive(Debug, Clone, PartialEq)]
pub struct LargePlan {
    pub(crate) instances: usize,
    pub(crate) lengths: usize,
    /// The longest length, when it is past `MAX_LENGTH_BYTES`.
    pub(crate) too_long: Option<u64>,
    /// The least the plan would take: every job's trials at the trial target.
    pub(crate) at_least: Duration,
}

impl std::fmt::Display for LargePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let jobs = self.instances * self.lengths;
        let mut why = Vec::new();
        if jobs > MAX_JOBS {
            why.push(format!(
                "{jobs} jobs ({} instance(s) × {} length(s)), more than {MAX_JOBS}",
                self.instances, self.lengths
            ));
        }
        if let Some(l) = self.too_long {
            why.push(format!(
                "a {} message, longer than {} (the guide's lengths are 32 B … 64 KiB)",
                crate::format::size(l),
                crate::format::size(MAX_LENGTH_BYTES)
            ));
        }
        write!(
            f,
            "the plan is out of proportion: {}; it would take at least {} (each job's trials \
             at the trial target, before any calibration); give fewer lengths or instances, \
             or pass --allow-large-plan if it is meant",
            why.join("; "),
            crate::format::duration(self.at_least)
        )
    }
}

/// `Err` when `instances` × `lengths` is more than `MAX_JOBS` jobs or a length is past
/// `MAX_LENGTH_BYTES`.
pub(crate) fn check(
    instances: usize,
    lengths: &[u64],
    planning: &Planning,
    adaptive: Option<Adaptive>,
) -> Result<(), LargePlan> {
    let jobs = instances.saturating_mul(lengths.len());
    let longest = lengths.iter().copied().max().unwrap_or(0);
    if jobs <= MAX_JOBS && longest <= MAX_LENGTH_BYTES {
        return Ok(());
    }
    let trials = match adaptive {
        Some(_) => MIN_ADAPTIVE_TRIALS,
        None => planning.trials,
    };
    let seconds = jobs as f64 * f64::from(trials) * planning.trial_target_s;
    Err(LargePlan {
        instances,
        lengths: lengths.len(),
        too_long: (longest > MAX_LENGTH_BYTES).then_some(longest),
        at_least: Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guide() -> Planning {
        Planning::new(5, 1.0, 900.0)
    }

    #[test]
    fn the_guides_plans_and_a_full_catalog_pass() {
        let guide_lengths = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];
        assert_eq!(check(12, &guide_lengths, &guide(), None), Ok(()));
        let lengths: Vec<u64> = (1..=1000).collect();
        assert_eq!(check(1, &lengths, &guide(), None), Ok(()));
        assert_eq!(check(1, &[1 << 20], &guide(), None), Ok(()));
    }

    #[test]
    fn thousands_of_jobs_are_refused_with_a_lower_bound_of_their_time() {
        let lengths: Vec<u64> = (1..=100_000).collect();
        let e = check(1, &lengths, &guide(), None).unwrap_err();
        // 100 000 jobs × 5 trials × 1 s.
        assert_eq!(e.at_least, Duration::from_secs(500_000));
        let text = e.to_string();
        assert!(
            text.contains("100000 jobs (1 instance(s) × 100000 length(s)), more than 1000"),
            "{text}"
        );
        assert!(text.contains("at least 138 h 53 min"), "{text}");
        assert!(text.contains("--allow-large-plan"), "{text}");
        // The adaptive mode's fewest trials bound it instead.
        let adaptive = Some(Adaptive {
            precision: 0.01,
            max_trials: 30,
        });
        let e = check(
            3,
            &lengths[..400],
            &Planning::new(5, 0.002, 900.0),
            adaptive,
        );
        assert_eq!(e.unwrap_err().at_least, Duration::from_secs_f64(7.2));
    }

    #[test]
    fn a_length_past_a_mebibyte_is_refused() {
        let e = check(1, &[32, 2 << 20], &guide(), None).unwrap_err();
        assert_eq!(e.too_long, Some(2 << 20));
        let text = e.to_string();
        assert!(
            text.contains("a 2048 KiB message, longer than 1024 KiB"),
            "{text}"
        );
        assert!(!text.contains("jobs"), "{text}");
    }
}
