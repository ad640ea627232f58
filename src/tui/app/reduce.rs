//! The reducer: folds one `EngineEvent` into the state. The engine's stream, a journal being
//! followed, or a demo script all come through here, so every screen is reproducible from
//! events alone.

use crate::format;
use crate::vocabulary::EngineEvent;

use super::{App, HistView, HostRow, JobState, KatState, LogLevel, Overdue, RunState};
use crate::host::Status as HostStatus;

/// Lines of a worker's stderr tail copied into the log on a fault.
const STDERR_LINES: usize = 3;

impl App {
    pub fn apply(&mut self, ev: EngineEvent) {
        self.dirty = true;
        match ev {
            EngineEvent::RunStarted {
                run_dir,
                labels,
                lengths,
                cpus,
                reference_jobs,
            } => {
                self.run = RunState::Running { cancelling: false };
                self.cpu_wait = None;
                self.run_queue = Default::default();
                self.push_log(
                    LogLevel::Info,
                    format!(
                        "run: {} instance(s) × {} length(s) on CPU {} → {}",
                        labels.len(),
                        lengths.len(),
                        crate::host::format_cpu_list(&cpus.iter().copied().collect()),
                        run_dir.display()
                    ),
                );
                self.enter_run_folder(&run_dir);
                let run = self.current_run();
                self.reference_jobs
                    .extend(reference_jobs.into_iter().map(|l| (run, l)));
                self.run_announced = true;
                self.run_dir = Some(run_dir);
                self.run_labels = labels;
                self.run_lengths = lengths;
                self.current = None;
                self.hist_view = HistView::Live;
            }
            EngineEvent::CpuWaiting { cpu, holder, limit } => self.cpu_waiting(cpu, holder, limit),
            EngineEvent::CpuFree { cpu, waited } => self.cpu_free(cpu, waited),
            EngineEvent::HostReused { cpu, checked_utc } => self.push_log(
                LogLevel::Info,
                format!("host check cached from {checked_utc} (CPU {cpu}: clock probe and tools, inputs unchanged)"),
            ),
            EngineEvent::HostProblems { problems } => {
                if self.read_only {
                    // Watching: the writer's own host check is the one that counts.
                    self.host = problems
                        .iter()
                        .map(|p| HostRow {
                            check: None,
                            name: "problem".into(),
                            status: HostStatus::Fail,
                            value: p.clone(),
                            hint: Some(format!("accepted by the writing process: {p}")),
                        })
                        .collect();
                    self.host_cursor = 0;
                }
                for p in problems {
                    self.push_log(LogLevel::Warn, format!("host: {p}"));
                }
            }
            EngineEvent::KatStarted { label } => {
                self.push_log(LogLevel::Info, format!("KAT {label}: checking"));
                self.kat
                    .insert(label, KatState::Running { done: 0, total: 0 });
            }
            EngineEvent::KatProgress {
                label, done, total, ..
            } => {
                self.kat.insert(label, KatState::Running { done, total });
            }
            EngineEvent::KatFinished {
                label,
                status,
                detail,
                log,
                check,
                findings,
            } => {
                if status.is_pass() {
                    if let Some(log) = log {
                        self.kat_logs.insert(label.clone(), log);
                    }
                    match crate::conform::findings_note(&findings) {
                        None => self.push_log(LogLevel::Good, format!("KAT {label}: {status}")),
                        Some(note) => {
                            self.push_log(LogLevel::Warn, format!("KAT {label}: {status} ({note})"))
                        }
                    }
                } else {
                    let level = if status.blames_library() {
                        LogLevel::Bad
                    } else {
                        LogLevel::Warn
                    };
                    self.push_log(level, format!("KAT {label}: {status} — {detail}"));
                    // The way on, as `kat` prints it: the manifest is to fix, not the library.
                    if status == crate::kat::KatStatus::BadManifest {
                        self.push_log(LogLevel::Warn, format!("  {status}: {}", status.hint()));
                    }
                }
                self.kat.insert(
                    label,
                    KatState::Done {
                        status,
                        detail,
                        check,
                        findings,
                    },
                );
            }
            EngineEvent::JobPlanned { job, plan, t1_s } => {
                let j = self.job_mut(&job);
                j.plan = Some(plan);
                j.t1_s = Some(t1_s);
                j.state = JobState::Planned;
                j.snapshot = None;
                j.retries = 0;
            }
            EngineEvent::JobStarted { job, .. } => {
                let clock = self.clock;
                let j = self.job_mut(&job);
                let trials = j.plan.map_or(0, |p| p.trials);
                j.state = JobState::Running {
                    trial: 0,
                    trials,
                    calls_done: 0,
                    calls_total: 0,
                };
                j.snapshot = None;
                j.overdue = None;
                j.started_at = Some(clock);
                j.span = Default::default();
                self.current = Some(job);
            }
            EngineEvent::TrialProgress {
                job,
                trial,
                trials,
                calls_done,
                calls_total,
                snapshot,
            } => {
                let clock = self.clock;
                let j = self.job_mut(&job);
                j.state = JobState::Running {
                    trial,
                    trials,
                    calls_done,
                    calls_total,
                };
                j.span
                    .progress(clock, crate::measure::eta::share_done(calls_done, calls_total));
                j.snapshot = Some(snapshot);
                // A later trial is running: the overdue one has ended.
                if j.overdue.is_some_and(|o| o.trial != trial) {
                    j.overdue = None;
                }
                self.current = Some(job);
            }
            EngineEvent::TrialClock {
                job,
                effective_hz,
                in_band,
                ..
            } => self.job_mut(&job).clock_hz = Some((effective_hz, in_band)),
            EngineEvent::TrialOverdue {
                job,
                trial,
                trials,
                elapsed,
                expected,
            } => {
                let o = Overdue {
                    trial,
                    trials,
                    elapsed,
                    expected,
                };
                let j = self.job_mut(&job);
                let first = j.overdue.is_none_or(|p| p.trial != trial);
                j.overdue = Some(o);
                self.current = Some(job.clone());
                if first {
                    self.push_log(
                        LogLevel::Warn,
                        format!(
                            "{job}: {} — far past its plan",
                            format::overdue(trial, trials, elapsed, expected)
                        ),
                    );
                }
            }
            EngineEvent::TrialRetried {
                job,
                trial,
                reason,
                cpu_wait,
            } => {
                self.run_queue.add(cpu_wait.unwrap_or_default());
                let j = self.job_mut(&job);
                j.retries += 1;
                j.overdue = None;
                self.push_log(
                    LogLevel::Warn,
                    format!("{job}: trial {trial} disturbed, re-run ({reason})"),
                );
            }
            EngineEvent::JobFinished {
                job,
                summary,
                snapshot,
                ..
            } => {
                self.run_queue.add(summary.cpu_wait.unwrap_or_default());
                let n = summary.measurements;
                let figure = match summary.mean_cycles {
                    Some(c) => format!("{} cycles", format::int(Some(c))),
                    None => format::time(summary.mean_seconds),
                };
                self.push_log(LogLevel::Good, format!("{job}: {figure} (n={n})"));
                let clock = self.clock;
                let j = self.job_mut(&job);
                j.took_s = j.started_at.map(|t| clock - t);
                // `into` accepts the summary boxed or not.
                #[allow(clippy::useless_conversion)]
                let summary: Box<_> = summary.into();
                j.state = JobState::Done(summary);
                if snapshot.is_some() {
                    j.snapshot = snapshot;
                }
                self.finish_current(&job);
            }
            EngineEvent::JobFailed {
                job,
                reason,
                stderr_tail,
                ..
            } => {
                self.push_log(LogLevel::Bad, format!("{job}: FAULT {reason}"));
                let reason = reason.to_string();
                let tail: Vec<&str> = stderr_tail
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .collect();
                for line in &tail[tail.len().saturating_sub(STDERR_LINES)..] {
                    self.push_log(LogLevel::Bad, format!("  stderr│ {line}"));
                }
                let clock = self.clock;
                let j = self.job_mut(&job);
                j.took_s = j.started_at.map(|t| clock - t);
                j.state = JobState::Failed {
                    reason,
                    stderr_tail,
                };
                self.finish_current(&job);
            }
            EngineEvent::Warning { message } => self.push_log(LogLevel::Warn, message),
            EngineEvent::RunFinished {
                cancelled,
                wall,
                finished,
                failed,
            } => {
                if matches!(self.run, RunState::Refused { .. }) {
                    // The refusal already said how this run ended.
                    return;
                }
                // Jobs the run left unfinished (a cancelled trial) are not results.
                self.jobs.retain(|j| j.is_finished());
                self.note_run_end(cancelled);
                // The engine indexed every record before saying the run ended.
                self.refresh_history();
                self.current = None;
                self.run = RunState::Finished {
                    cancelled,
                    wall,
                    finished,
                    failed,
                };
                let how = if cancelled { "cancelled" } else { "finished" };
                self.push_log(
                    if cancelled || failed > 0 {
                        LogLevel::Warn
                    } else {
                        LogLevel::Good
                    },
                    format!(
                        "run {how} after {}: {finished} job(s) done, {failed} failed",
                        format::duration(wall)
                    ),
                );
                self.profile_after_run(cancelled);
            }
        }
    }

    fn finish_current(&mut self, job: &crate::vocabulary::JobKey) {
        if self.current.as_ref() == Some(job) {
            self.current = None;
        }
    }
}
