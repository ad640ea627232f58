//! One journal row: a measured job as the history needs it, taken from its record (which
//! stays the evidence) and the run that wrote it. Reading it back gives the verdict's
//! [`Figure`], so `history` judges builds by the same rule as `compare`.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, Row, params};

use crate::measure::robust::Robust;
use crate::record::TimingRecord;
use crate::report::compare::Figure;

/// What measured it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter)]
pub enum Origin {
    Run,
    Workbench,
    CompareLive,
    Sweep,
}

impl Origin {
    /// The word the journal stores and `history --json` prints.
    pub fn word(self) -> &'static str {
        match self {
            Origin::Run => "run",
            Origin::Workbench => "workbench",
            Origin::CompareLive => "compare-live",
            Origin::Sweep => "sweep",
        }
    }

    fn of_word(w: &str) -> Self {
        <Self as strum::IntoEnumIterator>::iter()
            .find(|o| o.word() == w)
            .unwrap_or(Origin::Run)
    }
}

/// How many characters of a build's flags a line of the history shows.
pub const FLAGS_SHORT: usize = 40;

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub origin: Origin,
    /// The run folder (absolute where it could be resolved) and the record inside it.
    pub run_dir: PathBuf,
    pub record: PathBuf,
    pub candidate: String,
    pub label: String,
    pub library_sha256: String,
    /// The flag class (`guide`, a profile) and the compiler words.
    pub flags: String,
    pub build_flags: String,
    pub compiler: String,
    pub cpu_model: String,
    pub system_id: String,
    /// The loop counter's name (`tsc`, `perf_event:cpu-cycles:u`), empty when none.
    pub counter: String,
    pub input_bytes: u64,
    pub mean_cycles: Option<f64>,
    pub ci95_half_width: Option<f64>,
    pub process_sd_relative: Option<f64>,
    pub processes: u32,
    /// What puts ⚠ beside the figure, if anything.
    pub doubt: Option<String>,
    /// The figure preemption cannot move (`measure::robust`), when the record has one.
    pub robust: Option<Robust>,
    pub ended_utc: String,
}

fn env_text(r: &TimingRecord, key: &str) -> String {
    r.environment
        .get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

impl Entry {
    /// The entry of a complete record; None for a failed or partial one (no figure to index).
    pub fn of_record(
        origin: Origin,
        run_dir: &Path,
        record: &Path,
        system_id: &str,
        r: &TimingRecord,
    ) -> Option<Self> {
        if !r.status.is_complete() {
            return None;
        }
        let figure = Figure::of_record(r);
        let additions = r.cyclescope.as_ref();
        Some(Self {
            origin,
            run_dir: std::path::absolute(run_dir).unwrap_or_else(|_| run_dir.to_path_buf()),
            record: record.to_path_buf(),
            candidate: r.candidate.clone(),
            label: r.label.clone(),
            library_sha256: r.library_sha256.clone(),
            flags: r.flags.clone(),
            build_flags: r.build_flags.clone(),
            compiler: env_text(r, "compiler"),
            cpu_model: env_text(r, "cpu_model"),
            system_id: system_id.to_string(),
            counter: additions
                .and_then(|a| a.cycle_source)
                .map_or_else(String::new, |s| s.name().to_string()),
            input_bytes: r.input_bytes,
            mean_cycles: figure.as_ref().map(|f| f.mean_cycles),
            ci95_half_width: figure.as_ref().and_then(|f| f.ci95_half_width),
            process_sd_relative: figure.as_ref().and_then(|f| f.process_sd_relative),
            processes: r.trials.len() as u32,
            robust: figure.as_ref().and_then(|f| f.robust.clone()),
            doubt: figure.and_then(|f| f.doubt),
            ended_utc: r.ended_utc.clone(),
        })
    }

    /// The flags as one short text: the class, and the compiler words when there are any.
    pub fn flags_text(&self) -> String {
        if self.build_flags.trim().is_empty() {
            self.flags.clone()
        } else {
            format!("{}: {}", self.flags, self.build_flags)
        }
    }

    /// `flags_text` cut to [`FLAGS_SHORT`] characters, ending in `…` when cut: what a line
    /// of `history` or the workbench shows (the full text stays in JSON and CSV).
    pub fn flags_short(&self) -> String {
        let full = self.flags_text();
        if full.chars().count() <= FLAGS_SHORT {
            return full;
        }
        let mut out: String = full.chars().take(FLAGS_SHORT - 1).collect();
        out.push('…');
        out
    }

    /// The figure the verdict weighs (None without cycles).
    pub fn figure(&self) -> Option<Figure> {
        Some(Figure {
            mean_cycles: self.mean_cycles?,
            ci95_half_width: self.ci95_half_width,
            process_sd_relative: self.process_sd_relative,
            processes: self.processes,
            doubt: self.doubt.clone(),
            source: crate::counter::CycleSource::from_name(&self.counter),
            robust: self.robust.clone(),
        })
    }

    pub(super) fn insert(&self, c: &Connection) -> rusqlite::Result<()> {
        c.execute(
            "INSERT OR REPLACE INTO measurement (run_dir, record, candidate, label, \
             library_sha256, flags, build_flags, compiler, cpu_model, system_id, counter, \
             input_bytes, mean_cycles, ci95_half_width, processes, ended_utc, origin, \
             process_sd_relative, doubt, robust) VALUES \
             (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, \
             ?20)",
            params![
                self.run_dir.to_string_lossy(),
                self.record.to_string_lossy(),
                self.candidate,
                self.label,
                self.library_sha256,
                self.flags,
                self.build_flags,
                self.compiler,
                self.cpu_model,
                self.system_id,
                self.counter,
                self.input_bytes as i64,
                self.mean_cycles,
                self.ci95_half_width,
                self.processes,
                self.ended_utc,
                self.origin.word(),
                self.process_sd_relative,
                self.doubt,
                self.robust
                    .as_ref()
                    .and_then(|r| serde_json::to_string(r).ok()),
            ],
        )?;
        Ok(())
    }

    pub(super) fn select(
        c: &Connection,
        label: &str,
        length: Option<u64>,
    ) -> rusqlite::Result<Vec<Self>> {
        let mut st = c.prepare(
            "SELECT run_dir, record, candidate, label, library_sha256, flags, build_flags, \
             compiler, cpu_model, system_id, counter, input_bytes, mean_cycles, ci95_half_width, \
             processes, ended_utc, origin, process_sd_relative, doubt, robust \
             FROM measurement WHERE label = ?1 AND (?2 IS NULL OR input_bytes = ?2) \
             ORDER BY input_bytes, ended_utc, id",
        )?;
        st.query_map(params![label, length.map(|l| l as i64)], Self::of_row)?
            .collect()
    }

    fn of_row(r: &Row) -> rusqlite::Result<Self> {
        let text = |i| r.get::<_, String>(i);
        Ok(Self {
            run_dir: PathBuf::from(text(0)?),
            record: PathBuf::from(text(1)?),
            candidate: text(2)?,
            label: text(3)?,
            library_sha256: text(4)?,
            flags: text(5)?,
            build_flags: text(6)?,
            compiler: text(7)?,
            cpu_model: text(8)?,
            system_id: text(9)?,
            counter: text(10)?,
            input_bytes: r.get::<_, i64>(11)?.max(0) as u64,
            mean_cycles: r.get(12)?,
            ci95_half_width: r.get(13)?,
            processes: r.get(14)?,
            ended_utc: text(15)?,
            origin: Origin::of_word(&text(16)?),
            process_sd_relative: r.get(17)?,
            doubt: r.get(18)?,
            // A value this code cannot read is no robust figure, not a broken journal.
            robust: r
                .get::<_, Option<String>>(19)?
                .and_then(|j| serde_json::from_str(&j).ok()),
        })
    }
}
