//! The run's side of the journal: indexes each record as the campaign thread announces it,
//! opening the journal at the first one. Whatever goes wrong (no folder, a damaged or locked
//! file, a full disk) is said once, as a warning the run shows and logs, and the run goes on
//! without the journal: the records it writes are the evidence, and `history --rebuild`
//! indexes them later.

use std::path::{Path, PathBuf};

use super::{Entry, Journal, JournalError, Origin};

/// Where a run indexes its jobs.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum JournalTarget {
    /// No journal (tests of the engine, `[settings] journal = "off"`).
    #[default]
    Off,
    At(PathBuf),
    /// The location could not be found: said once at the first job.
    Unavailable(String),
}

impl JournalTarget {
    /// The target the settings ask for: `"off"`, a path, or the default location.
    pub fn of_setting(setting: Option<&Path>) -> Self {
        if setting.is_some_and(|p| p == Path::new("off"))
            && std::env::var_os(super::JOURNAL_ENV).is_none()
        {
            return JournalTarget::Off;
        }
        match super::location(setting) {
            Ok(p) => JournalTarget::At(p),
            Err(e) => JournalTarget::Unavailable(e.to_string()),
        }
    }
}

enum State {
    Closed(JournalTarget),
    Open {
        journal: Journal,
        system_id: Option<String>,
    },
    /// Failed once and said so: nothing more is tried this run.
    Gone,
}

pub struct JournalWriter {
    state: State,
    origin: Origin,
}

impl JournalWriter {
    pub fn new(target: JournalTarget, origin: Origin) -> Self {
        Self {
            state: State::Closed(target),
            origin,
        }
    }

    /// Indexes the record `rel` of `run_dir`; `Some(warning)` the first time that fails
    /// (afterwards the writer is off and silent).
    pub fn add(&mut self, run_dir: &Path, rel: &Path) -> Option<String> {
        match self.try_add(run_dir, rel) {
            Ok(()) => None,
            Err(e) => {
                self.state = State::Gone;
                Some(format!(
                    "not indexed in the tuning journal (the run goes on, its records are whole): {e}"
                ))
            }
        }
    }

    fn try_add(&mut self, run_dir: &Path, rel: &Path) -> Result<(), JournalError> {
        if let State::Closed(target) = &self.state {
            let journal = match target {
                JournalTarget::Off => {
                    self.state = State::Gone;
                    return Ok(());
                }
                JournalTarget::Unavailable(why) => {
                    return Err(JournalError::Open {
                        path: PathBuf::new(),
                        detail: why.clone(),
                    });
                }
                JournalTarget::At(path) => Journal::open(path)?,
            };
            self.state = State::Open {
                journal,
                system_id: None,
            };
        }
        let State::Open { journal, system_id } = &mut self.state else {
            return Ok(());
        };
        let system_id = system_id.get_or_insert_with(|| {
            crate::record::run_dir::read_campaign(run_dir)
                .map(|c| c.system_id)
                .unwrap_or_default()
        });
        // The record as written (the parent reads back its own file, as a rebuild would).
        let Some(record) = crate::record::run_dir::read_record_at(run_dir, rel) else {
            return Ok(());
        };
        match Entry::of_record(self.origin, run_dir, rel, system_id, &record) {
            Some(entry) => journal.insert(&entry),
            None => Ok(()),
        }
    }
}
