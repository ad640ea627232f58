//! The busy-CPU row measured rather than guessed from the process list: a thread pinned to
//! the measurement CPU spins for a moment (`SAMPLE`) and reads, from its own
//! `/proc/thread-self/schedstat`, how long it waited on the CPU's run queue meanwhile — what
//! another task on that CPU would take from a trial. Only `check` on the running system asks
//! for it (never a fixture tree, never while another cyclescope holds the CPU: spinning there
//! would disturb its trials). It owns no verdict but the busy-CPU row's, and prints nothing.

use std::time::{Duration, Instant};

use super::check::{CheckResult, HostCheck, Status};

/// How long the spinning thread samples its run-queue wait.
pub const SAMPLE: Duration = Duration::from_millis(300);

/// The share of `SAMPLE` spent waiting for the CPU from which the row warns. Alone on a CPU a
/// spinning thread waits for the odd kernel thread only (well under 1 %); one busy task beside
/// it takes about half.
pub const WAIT_WARN: f64 = 0.10;

/// How long a thread pinned to a CPU waited for it while it wanted to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunQueueSample {
    pub cpu: usize,
    pub waited: Duration,
    pub over: Duration,
}

impl RunQueueSample {
    pub fn share(&self) -> f64 {
        self.waited.as_secs_f64() / self.over.as_secs_f64().max(1e-9)
    }
}

/// Spins a thread pinned to `cpu` for `over` and returns its run-queue wait meanwhile.
pub fn sample(cpu: usize, over: Duration) -> Result<RunQueueSample, String> {
    std::thread::scope(|s| {
        s.spawn(|| {
            crate::cpu::pin_current_thread(cpu)
                .map_err(|e| format!("sched_setaffinity({cpu}): {e}"))?;
            let before = waited_ns()?;
            let start = Instant::now();
            let mut spins: u64 = 0;
            while start.elapsed() < over {
                spins = std::hint::black_box(spins.wrapping_add(1));
            }
            let after = waited_ns()?;
            Ok(RunQueueSample {
                cpu,
                waited: Duration::from_nanos(after.saturating_sub(before)),
                over: start.elapsed(),
            })
        })
        .join()
        .map_err(|_| "the sampling thread panicked".to_string())?
    })
}

/// The calling thread's run-queue wait so far (the second field of its `schedstat`).
fn waited_ns() -> Result<u64, String> {
    let path = "/proc/thread-self/schedstat";
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    parse_waited_ns(&text).ok_or_else(|| format!("{path}: not `run wait slices`: {text:?}"))
}

fn parse_waited_ns(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().nth(1)?.parse().ok()
}

/// Samples the run queue of `report`'s CPU and adds what it saw to the busy-CPU row, unless
/// another cyclescope holds the CPU's lock in `cpu_locks` (its trials would pay for it).
pub fn measure_busy_cpu(report: &mut super::HostReport, cpu_locks: &std::path::Path) {
    if crate::cpu::lock::holder(cpu_locks, report.cpu).is_some() {
        return;
    }
    let sampled = sample(report.cpu, SAMPLE);
    for row in report.checks.iter_mut() {
        if row.check == HostCheck::BusyCpu {
            *row = with_sample(row, &sampled);
        }
    }
}

/// The busy-CPU row `row` with the sample's word added: a warning when the spinning thread
/// waited `WAIT_WARN` or more of its time; a row that warns already keeps its hint.
pub fn with_sample(row: &CheckResult, sample: &Result<RunQueueSample, String>) -> CheckResult {
    debug_assert_eq!(row.check, HostCheck::BusyCpu);
    let s = match sample {
        Ok(s) => s,
        Err(e) => {
            return CheckResult {
                value: format!("{}; the run-queue sample failed: {e}", row.value),
                ..row.clone()
            };
        }
    };
    let said = format!(
        "waited {:.0} % of {:.1} s on CPU {} (a spinning thread's run-queue wait; warns from {:.0} %)",
        100.0 * s.share(),
        s.over.as_secs_f64(),
        s.cpu,
        100.0 * WAIT_WARN
    );
    let value = format!("{said}; {}", row.value);
    if s.share() < WAIT_WARN || row.status != Status::Pass {
        return CheckResult {
            value,
            ..row.clone()
        };
    }
    CheckResult::warn(
        HostCheck::BusyCpu,
        value,
        format!(
            "something else runs on CPU {} (see `top -H`, or `ps -eLo pid,psr,comm` for its threads): move it (sudo taskset -acp <other CPUs> PID) or shield the CPU (`tune --apply`)",
            s.cpu
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_of(waited_ms: u64) -> Result<RunQueueSample, String> {
        Ok(RunQueueSample {
            cpu: 1,
            waited: Duration::from_millis(waited_ms),
            over: Duration::from_millis(300),
        })
    }

    #[test]
    fn the_row_warns_from_a_tenth_of_the_sample_spent_waiting() {
        let quiet = CheckResult::pass(HostCheck::BusyCpu, "no other process running on CPU 1");
        let r = with_sample(&quiet, &sample_of(3));
        assert_eq!(r.status, Status::Pass, "{r:?}");
        assert!(r.value.starts_with("waited 1 % of 0.3 s on CPU 1"), "{r:?}");
        let r = with_sample(&quiet, &sample_of(150));
        assert_eq!(r.status, Status::Warn, "{r:?}");
        assert!(
            r.value.starts_with("waited 50 % of 0.3 s on CPU 1"),
            "{r:?}"
        );
        assert!(
            r.hint
                .as_deref()
                .is_some_and(|h| h.contains("tune --apply"))
        );
        // A failed sample changes no verdict.
        let r = with_sample(&quiet, &Err("no schedstat".into()));
        assert_eq!(r.status, Status::Pass);
        assert!(
            r.value
                .ends_with("the run-queue sample failed: no schedstat")
        );
    }

    #[test]
    fn schedstat_is_run_wait_slices() {
        assert_eq!(parse_waited_ns("123 456 7\n"), Some(456));
        assert_eq!(parse_waited_ns("123"), None);
    }
}
