//! Results from disk, as engine events: the records of a run directory become `JobFinished`
//! / `JobFailed` (for `--run DIR`), and a `Follower` replays and then tails the run's journal
//! (for `watch`), noticing when the writing process dies without finishing. Reads only.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

use super::app::{App, RunState};
use crate::kat::KatVerdict;
use crate::measure::stats::per_call;
use crate::record::TimingRecord;
use crate::record::journal::{JournalEvent, JournalReader};
use crate::record::run_dir::list_records;
use crate::vocabulary::{EngineEvent, FailureKind, HistogramSnapshot, JobFailure, JobKey};

/// How often the journal file is read while following.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(100);

/// The per-call histogram a record carries (cyclescope's addition), if any.
fn snapshot_of(rec: &TimingRecord) -> Option<HistogramSnapshot> {
    let add = rec.cyclescope.as_ref()?;
    let h = crate::record::histogram::decode(add.histogram_v2_base64.as_deref()?)?;
    Some(HistogramSnapshot {
        per_call: per_call(&h),
        histogram: Arc::new(h),
        loop_mean_cycles: rec.mean_cycles,
        timer_overhead_ticks: add.timer_overhead_ticks,
        per_call_source: add
            .per_call_source
            .map_or_else(String::new, |s| s.name().to_string()),
    })
}

/// The KAT verdict of each instance as its records carry it (one event per label, first
/// record wins), then one event per record under `run_dir` (none when there is no such
/// directory).
pub fn load(run_dir: &Path) -> Vec<EngineEvent> {
    let records = list_records(run_dir);
    let mut kats: Vec<EngineEvent> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (_, rec) in &records {
        // A verdict only the harness writes (BUILDFAIL, PARTIAL) has no KAT state to show.
        let KatVerdict::Status(status) = &rec.kat else {
            continue;
        };
        if seen.insert(rec.label.clone()) {
            kats.push(EngineEvent::KatFinished {
                label: rec.label.clone(),
                status: *status,
                detail: "as recorded in this run".into(),
                log: rec
                    .kat_log()
                    .map(|l| run_dir.join(l))
                    .filter(|p| p.is_file()),
                check: rec
                    .cyclescope
                    .as_ref()
                    .and_then(|a| a.conformance.as_ref())
                    .and_then(|c| crate::conform::first_failure(&c.checks))
                    .map(|c| c.check),
                findings: rec
                    .cyclescope
                    .as_ref()
                    .and_then(|a| a.conformance.as_ref())
                    .map(|c| crate::conform::findings(&c.checks))
                    .unwrap_or_default(),
            });
        }
    }
    kats.extend(records.into_iter().map(|(path, rec)| {
        let job = JobKey {
            candidate: rec.candidate.clone(),
            label: rec.label.clone(),
            input_bytes: rec.input_bytes,
        };
        if rec.status.is_complete() {
            #[allow(clippy::useless_conversion)]
            let summary = rec.summary().into();
            EngineEvent::JobFinished {
                job,
                summary,
                record: path,
                snapshot: snapshot_of(&rec),
            }
        } else {
            let reason = rec
                .cyclescope
                .as_ref()
                .and_then(|a| a.failure.clone())
                .unwrap_or_else(|| {
                    JobFailure::new(FailureKind::Unexplained, rec.status.to_string())
                });
            let stderr_tail = rec
                .processes
                .last()
                .map_or_else(String::new, |p| p.stderr.clone());
            EngineEvent::JobFailed {
                job,
                reason,
                stderr_tail,
                record: Some(path),
            }
        }
    }));
    kats
}

/// Follows the journal of a run another process writes.
pub struct Follower {
    run_dir: PathBuf,
    reader: JournalReader,
    writer: Option<Pid>,
    last_read: Option<Instant>,
    seen_any: bool,
    announced: bool,
}

impl Follower {
    pub fn new(run_dir: &Path) -> Self {
        Self {
            run_dir: run_dir.to_path_buf(),
            reader: JournalReader::new(run_dir),
            writer: None,
            last_read: None,
            seen_any: false,
            announced: false,
        }
    }

    /// Events appended since the last call (the whole history on the first), each with the
    /// time it happened (seconds since the epoch, for the ETA); marks the run lost when its
    /// writer is gone without having finished it.
    pub fn poll(&mut self, app: &mut App) -> Vec<(f64, EngineEvent)> {
        if self
            .last_read
            .is_some_and(|t| t.elapsed() < FOLLOW_INTERVAL)
        {
            return vec![];
        }
        self.last_read = Some(Instant::now());
        let entries = match self.reader.poll() {
            Ok(e) => e,
            Err(e) => {
                app.writer_lost(format!(
                    "cannot read the journal of {}: {e}",
                    self.run_dir.display()
                ));
                return vec![];
            }
        };
        if !self.seen_any && entries.is_empty() && !self.announced {
            self.announced = true;
            app.push_log(
                super::app::LogLevel::Info,
                format!("waiting for {}/journal.jsonl", self.run_dir.display()),
            );
        }
        let mut events = Vec::with_capacity(entries.len());
        for entry in entries {
            self.seen_any = true;
            if let JournalEvent::RunStarted { pid, .. } = &entry.event {
                self.writer = i32::try_from(*pid).ok().map(Pid::from_raw);
            }
            let at = entry.unix_seconds().unwrap_or(app.clock);
            events.push((at, entry.event.into_event(&self.run_dir)));
        }
        if events.is_empty()
            && matches!(app.run, RunState::Running { .. })
            && let Some(pid) = self.writer
            && kill(pid, None) == Err(Errno::ESRCH)
        {
            app.writer_lost(format!("process {pid} ended without finishing the run"));
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::journal::JournalWriter;
    use crate::tui::demo;

    fn started(pid: u32) -> JournalEvent {
        JournalEvent::RunStarted {
            labels: vec!["sm3hash-256".into()],
            lengths: vec![32],
            cpu: 1,
            cpus: vec![1],
            pid,
            reference_jobs: Vec::new(),
        }
    }

    #[test]
    fn following_replays_then_tails_and_sees_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = demo::idle();
        app.read_only = true;
        let mut f = Follower::new(dir.path());
        assert!(f.poll(&mut app).is_empty());
        assert!(app.log.iter().any(|l| l.text.contains("waiting for")));
        let mut w = JournalWriter::open(dir.path()).unwrap();
        w.append(started(std::process::id())).unwrap();
        w.append(JournalEvent::KatStarted {
            label: "sm3hash-256".into(),
        })
        .unwrap();
        f.last_read = None;
        for (_, ev) in f.poll(&mut app) {
            app.apply(ev);
        }
        assert!(app.is_running());
        w.append(JournalEvent::RunFinished {
            cancelled: false,
            wall_s: 2.0,
            finished: 0,
            failed: 0,
        })
        .unwrap();
        f.last_read = None;
        for (_, ev) in f.poll(&mut app) {
            app.apply(ev);
        }
        assert_eq!(app.run_word(), "finished");
    }

    #[test]
    fn a_writer_that_died_mid_run_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        JournalWriter::open(dir.path())
            .unwrap()
            .append(started(pid))
            .unwrap();
        let mut app = demo::idle();
        let mut f = Follower::new(dir.path());
        for (_, ev) in f.poll(&mut app) {
            app.apply(ev);
        }
        f.last_read = None;
        assert!(f.poll(&mut app).is_empty());
        assert!(app.is_lost(), "{:?}", app.run);
        assert_eq!(app.run_word(), "writer gone");
    }

    /// The published arm_1 records loaded into the results table give, row for row, the §4
    /// table of the published hash-05 page.
    #[test]
    fn reloaded_records_reproduce_the_published_performance_table() {
        let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reference/harness-data");
        let events = load(&reference.join("performance/data/arm_1"));
        let jobs = events
            .iter()
            .filter(|e| matches!(e, EngineEvent::JobFinished { .. }))
            .count();
        assert_eq!(jobs, 120);
        let mut app = crate::tui::App::new(vec![], &crate::catalog::Settings::default(), 2);
        for ev in events {
            app.apply(ev);
        }
        // The records' KAT verdicts come back with them (no `·` for a recorded PASS).
        assert!(app.kat_state("uHash-512").passed(), "{:?}", app.kat);
        let table = crate::tui::panel::results::markdown(&app);
        let ours: Vec<&str> = table
            .lines()
            .filter(|l| l.starts_with("| `uHash"))
            .collect();
        let page = std::fs::read_to_string(reference.join("hash-05/perf_arm_1.tables.md"))
            .expect("the published page's tables");
        let section = page
            .split("## 4. Performance")
            .nth(1)
            .and_then(|s| s.split("## 5.").next())
            .expect("§4 of the page");
        let published: Vec<&str> = section
            .lines()
            .filter(|l| l.starts_with("| `uHash"))
            .collect();
        assert_eq!(published.len(), 24);
        // The §4 cells byte for byte; the workbench adds the × pseudoXOF cell last (this
        // dataset holds no pseudoXOF of uHash's width, so it is `–`).
        let ours_s4: Vec<String> = ours
            .iter()
            .map(|l| {
                let (s4, ratio) = l.trim_end_matches(" |").rsplit_once(" | ").expect("cells");
                assert_eq!(ratio, "–", "{l}");
                format!("{s4} |")
            })
            .collect();
        assert_eq!(ours_s4, published);
        assert!(table.starts_with(
            "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n | × pseudoXOF |\n|---|"
        ));
    }

    #[test]
    fn a_missing_run_directory_loads_nothing() {
        assert!(load(std::path::Path::new("/nonexistent/run")).is_empty());
    }
}
