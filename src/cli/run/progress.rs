//! The headless run's live progress on stderr: an updating status line on a terminal (bar,
//! current job, trial, calls, per-call median, the one ETA), plain lines otherwise, and
//! one permanent line per KAT result, finished or failed job.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use super::super::lanes::{Board, bar};
use crate::counter::CycleSource;
use crate::vocabulary::{EngineEvent, JobKey};

/// Live progress on stderr: an updating line on a terminal, plain lines otherwise.
pub(in crate::cli) struct Progress {
    tty: bool,
    started: Instant,
    last_line: Instant,
    /// The run's baseline and the reference jobs it added, to mark them in every line.
    baseline: crate::baseline::Baseline,
    reference_jobs: Vec<String>,
    /// Each reference job and the selected instances whose ratio needs it (the plan's line).
    reference_reasons: Vec<String>,
    /// Effective core clock of the last trial with a clock witness, Hz.
    clock: Option<f64>,
    /// The lanes of a run on several CPUs (their status replaces the single job's).
    board: Board,
    /// The overdue trial last given a line of its own, and how long it had run then.
    overdue_line: Option<(JobKey, u32, Duration)>,
    /// The passes of a sweep ended so far (None for a run): each pass is a run of its own,
    /// whose time is not the sweep's.
    sweep_passes: Option<u32>,
}

impl Progress {
    pub(in crate::cli) fn new(req: &crate::campaign::RunRequest) -> Self {
        Self {
            baseline: req.baseline.clone(),
            reference_jobs: req.reference_jobs.clone(),
            reference_reasons: crate::baseline::reference_reasons(
                &req.reference_jobs,
                &req.instances,
            ),
            tty: std::io::stderr().is_terminal(),
            started: Instant::now(),
            last_line: Instant::now() - Duration::from_secs(10),
            clock: None,
            board: Board::default(),
            overdue_line: None,
            sweep_passes: None,
        }
    }

    /// The progress of a sweep: its passes are numbered, each with its own time.
    pub(in crate::cli) fn for_sweep(req: &crate::campaign::RunRequest) -> Self {
        Self {
            sweep_passes: Some(0),
            ..Self::new(req)
        }
    }

    /// The line a finished (or cancelled) run or sweep pass ends with: how long the engine's
    /// run took (host check, KAT gate and measuring), and how long the command has been at it,
    /// each named, so the two figures never read as one that disagrees with itself.
    fn finished_line(&mut self, cancelled: bool, wall: Duration) -> String {
        let how = if cancelled { "cancelled" } else { "finished" };
        let took = crate::format::duration(wall);
        let total = crate::format::duration(self.started.elapsed());
        match &mut self.sweep_passes {
            Some(n) => {
                *n += 1;
                format!("sweep pass {n} {how}: it took {took}, the sweep {total} so far")
            }
            None => format!("run {how}: it took {took}, the command {total} in all"),
        }
    }

    /// ` (reference job)` after a job the run added for the baseline ratio.
    fn tag(&self, job: &JobKey) -> &'static str {
        if job.candidate == self.baseline.candidate && self.reference_jobs.contains(&job.label) {
            " (reference job)"
        } else {
            ""
        }
    }

    fn line(&mut self, text: &str) {
        let text = crate::sanitize::terminal_text(text);
        let mut e = std::io::stderr();
        if self.tty {
            let _ = write!(e, "\r\x1b[2K{text}\n");
        } else {
            let _ = writeln!(e, "{text}");
        }
    }

    fn status(&mut self, text: &str) {
        let text = crate::sanitize::terminal_text(text);
        if self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[2K{text}");
        } else if self.last_line.elapsed() >= Duration::from_secs(5) {
            self.last_line = Instant::now();
            let _ = writeln!(std::io::stderr(), "{text}");
        }
    }

    pub(in crate::cli) fn clear(&mut self) {
        if self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }

    /// The one ETA every view shows (`measure::eta`, folded by the lanes' board).
    fn eta(&self) -> String {
        match self.board.eta_s(self.started.elapsed().as_secs_f64()) {
            Some(left) => format!(
                "ETA {}",
                crate::format::duration(Duration::from_secs_f64(left))
            ),
            None => "ETA once a job is planned".into(),
        }
    }

    /// The lanes' status: one line on a terminal, all of them otherwise.
    fn lanes_status(&mut self) {
        let lines = self.board.lines(self.started.elapsed().as_secs_f64());
        if self.tty {
            let text = lines.join(" │ ");
            self.status(&text);
        } else if self.last_line.elapsed() >= Duration::from_secs(5) {
            self.last_line = Instant::now();
            for l in lines {
                let _ = writeln!(std::io::stderr(), "{l}");
            }
        }
    }

    pub(in crate::cli) fn show(&mut self, ev: &EngineEvent) {
        self.board.apply(ev, self.started.elapsed().as_secs_f64());
        if self.board.lane_count() > 1
            && matches!(
                ev,
                EngineEvent::TrialProgress { .. } | EngineEvent::JobStarted { .. }
            )
        {
            self.lanes_status();
            return;
        }
        match ev {
            EngineEvent::RunStarted {
                run_dir,
                labels,
                lengths,
                cpus,
                ..
            } => {
                self.line(&format!(
                    "run {}: {} instance(s) × {} length(s) on CPU {}",
                    crate::sanitize::terminal_path(run_dir),
                    labels.len(),
                    lengths.len(),
                    crate::host::format_cpu_list(&cpus.iter().copied().collect())
                ));
                if !self.reference_jobs.is_empty() {
                    self.line(&format!(
                        "reference jobs (baseline `{}`, for {}): {}",
                        self.baseline.candidate,
                        crate::baseline::COLUMN,
                        self.reference_reasons.join(", ")
                    ));
                }
            }
            EngineEvent::CpuWaiting { cpu, holder, limit } => {
                self.line(&format!(
                    "{} · up to {} s ({})",
                    crate::format::cpu_waiting(*cpu, holder, None),
                    limit.as_secs(),
                    crate::cpu::lock::LOCK_WAIT_ENV
                ));
            }
            EngineEvent::CpuFree { cpu, waited } => {
                self.line(&crate::format::cpu_free_after(*cpu, *waited))
            }
            EngineEvent::HostReused { cpu, checked_utc } => self.line(&format!(
                "host check cached from {checked_utc} (CPU {cpu}: clock probe and tool versions; \
                 their inputs unchanged)"
            )),
            EngineEvent::HostProblems { problems } => {
                for p in problems {
                    self.line(&format!("HOST: {p}"));
                }
            }
            EngineEvent::KatStarted { label } => self.status(&format!("KAT {label} …")),
            EngineEvent::KatProgress {
                label,
                file,
                done,
                total,
            } => self.status(&format!("KAT {label} {file} {done}/{total}")),
            EngineEvent::KatFinished {
                label,
                status,
                detail,
                findings,
                ..
            } => {
                // A finding that does not block stays on the verdict's line: it was measured.
                let mut text = format!("KAT {label}: {status} {detail}")
                    .trim_end()
                    .to_string();
                if let Some(note) = crate::conform::findings_note(findings) {
                    text += &format!(" ({note})");
                }
                self.line(&text);
                // A broken manifest is not the library's fault: the way on, as `kat` says it.
                if *status == crate::kat::KatStatus::BadManifest {
                    self.line(&format!("  {status}: {}", status.hint()));
                }
            }
            EngineEvent::JobPlanned { job, plan, .. } => {
                let tag = self.tag(job);
                self.status(&format!(
                    "planned {job}{tag}: {} × {} calls",
                    plan.trials, plan.iterations_per_trial
                ));
            }
            EngineEvent::TrialProgress {
                job,
                trial,
                trials,
                calls_done,
                calls_total,
                snapshot,
            } => {
                let frac = *calls_done as f64 / (*calls_total).max(1) as f64;
                let bar = bar(frac, 20);
                // Per-call samples count the per-call counter's unit: reference cycles for the
                // TSC, core cycles for perf, plain ticks for a slower reference counter.
                let unit = match snapshot.per_call_source.as_str() {
                    "tsc" => "ref. cycles",
                    s if s.starts_with("perf_event") => "cycles",
                    _ => "ticks",
                };
                let p50 = snapshot
                    .per_call
                    .map_or(String::new(), |p| format!("  p50 {} {unit}/call", p.p50));
                let eta = self.eta();
                // The effective clock of the last witnessed trial, where the hardware has one.
                let clock = self.clock.map_or(String::new(), |hz| {
                    format!("  {} GHz", crate::format::ghz(hz))
                });
                self.status(&format!("{bar} {job}  trial {trial}/{trials}  {calls_done}/{calls_total} calls{p50}{clock}  {eta}"));
            }
            EngineEvent::TrialClock {
                job,
                trial,
                effective_hz,
                in_band,
            } => {
                self.clock = Some(*effective_hz);
                if !in_band {
                    self.line(&format!(
                        "{job}: trial {trial} ran at {} GHz, outside the host's band",
                        crate::format::ghz(*effective_hz)
                    ));
                }
            }
            EngineEvent::TrialRetried {
                job, trial, reason, ..
            } => self.line(&format!("{job}: trial {trial} re-run ({reason})")),
            EngineEvent::TrialOverdue {
                job,
                trial,
                trials,
                elapsed,
                expected,
            } => {
                let text = format!(
                    "{job}: {} — far past its plan",
                    crate::format::overdue(*trial, *trials, *elapsed, *expected)
                );
                // A line of its own when the wait has doubled since the last one (a handful
                // of lines however long it runs), the status line in between.
                let again = self.overdue_line.as_ref().is_some_and(|(j, t, at)| {
                    j == job && t == trial && *elapsed < at.saturating_mul(2)
                });
                if again {
                    self.status(&text);
                } else {
                    self.overdue_line = Some((job.clone(), *trial, *elapsed));
                    self.line(&text);
                }
            }
            EngineEvent::JobFinished { job, summary, .. } => {
                let tag = self.tag(job);
                let unit = summary
                    .cycle_source
                    .map_or("cycles", |c| c.counter().unit());
                self.line(&format!(
                    "done {job}{tag}: {} {unit}/call ({}), n={}",
                    crate::format::int(summary.mean_cycles),
                    summary.cycle_source.map_or("", CycleSource::name),
                    summary.measurements
                ));
            }
            EngineEvent::JobFailed {
                job,
                reason,
                stderr_tail,
                ..
            } => {
                let tail = stderr_tail.trim();
                let tail = if tail.is_empty() {
                    String::new()
                } else {
                    let last = tail.lines().last().unwrap_or("");
                    format!(" — stderr: {}", crate::sanitize::terminal(last))
                };
                self.line(&format!("FAILED {job}: {reason}{tail}"));
            }
            EngineEvent::Warning { message } => self.line(&format!("warning: {message}")),
            EngineEvent::RunFinished {
                cancelled, wall, ..
            } => {
                let text = self.finished_line(*cancelled, *wall);
                self.line(&text)
            }
            EngineEvent::JobStarted { job, .. } => {
                let tag = self.tag(job);
                self.status(&format!("measuring {job}{tag} …"));
            }
        }
    }
}
